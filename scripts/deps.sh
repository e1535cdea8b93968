#!/bin/bash
# Install the Debian packages that `make run` and `make test` need, if any
# are missing: with apt-get when running as root, else print the command.
# Arguments name more packages wanted by one target (scripts/deps.sh PKG...);
# with --only, just those (scripts/deps.sh --only PKG...: make test-tools).
set -euo pipefail
if [ "${1:-}" = "--only" ]; then
	shift
	pkgs=("$@")
else
	pkgs=(gcc make binutils nasm qemu-system-x86 ovmf grub-common grub-pc-bin
	      grub-efi-amd64-bin xorriso mtools libcmocka-dev python3-pytest
	      python3-pytest-xdist	# make test-qemu's parallel workers
	      console-setup-linux	# console-setup-linux: the framebuffer console's font
	      dosfstools fdisk	# make usb-image: mkfs.fat, sfdisk; its tests: fsck.fat
	      clang libclang-rt-14-dev babeltrace2	# make fuzz (libFuzzer); CTF output test
	      trace-cmd		# the trace.dat output test (trace-cmd report)
	      "$@")	# more for one target: make bench-kernel asks for gnuplot-nox
fi
. "$(dirname "$0")/debian-pkgs.sh"
read -r -a missing <<< "$(missing_pkgs "${pkgs[@]}")"
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: run as root:  $(install_cmd "${missing[@]}")" >&2
	exit 1
fi
echo "deps: installing with apt-get (this takes a minute or two)"
install_pkgs "${missing[@]}"
echo "deps: installed ${missing[*]}"
