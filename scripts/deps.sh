#!/bin/bash
# Install the Debian packages that `make run` and `make test` need, if any
# are missing: with apt-get when running as root, else print the command.
set -euo pipefail
pkgs=(gcc make binutils nasm qemu-system-x86 ovmf grub-common grub-pc-bin
      grub-efi-amd64-bin xorriso mtools libcmocka-dev python3-pytest
      console-setup-linux	# console-setup-linux: the framebuffer console's font
      clang libclang-rt-14-dev babeltrace2)	# make fuzz (libFuzzer); CTF output test
missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: run as root:  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "deps: installing with apt-get (this takes a minute or two)"
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: installed ${missing[*]}"
