#!/bin/bash
# Install the Debian packages that `make run` needs (scripts/deps.sh) or that
# `make test` needs too (scripts/deps.sh --test), if any are missing: with
# apt-get when running as root, else print the command.
# Arguments name more packages wanted by one target (scripts/deps.sh PKG...);
# with --only, just those (scripts/deps.sh --only PKG...: make test-tools).
set -euo pipefail
# Building the kernel and its ISO, and booting it (make run).
run_pkgs=(gcc make binutils nasm qemu-system-x86 ovmf grub-common grub-pc-bin
	  grub-efi-amd64-bin xorriso mtools
	  console-setup-linux)	# the framebuffer console's font
# The tests on top (make test).
test_pkgs=(libcmocka-dev python3-pytest
	   python3-pytest-xdist	# make test-qemu's parallel workers
	   dosfstools fdisk	# make usb-image: mkfs.fat, sfdisk; its tests: fsck.fat
	   clang libclang-rt-14-dev babeltrace2	# make fuzz (libFuzzer); CTF output test
	   trace-cmd)		# the trace.dat output test (trace-cmd report)
if [ "${1:-}" = "--only" ]; then
	shift
	pkgs=("$@")
elif [ "${1:-}" = "--test" ]; then
	shift
	pkgs=("${run_pkgs[@]}" "${test_pkgs[@]}" "$@")
else
	pkgs=("${run_pkgs[@]}" "$@")	# more for one target: make bench-kernel asks for gnuplot-nox
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
