#!/bin/bash
# Build a hybrid GRUB image (BIOS El Torito + UEFI efi.img, writable to a USB
# stick with dd) that boots KERNEL with the given command line.
# Usage: mkiso.sh KERNEL OUTPUT.iso "CMDLINE" ["GRUB COMMANDS"]
# GRUB COMMANDS (newline-separated) run before the kernel is loaded; the
# tests use them to damage firmware tables on purpose (memrw's write_byte).
set -euo pipefail
kernel=$1 out=$2 cmdline=${3:-} grub_cmds=${4:-}
case "$cmdline" in
*[\"\$\\\;\{\}]*) echo "mkiso: the command line may not contain \" \$ \\ ; { or }" >&2; exit 2 ;;
esac
stage=$(mktemp -d "${TMPDIR:-/tmp}/baretrace-iso.XXXXXX")
log=$(mktemp "${TMPDIR:-/tmp}/baretrace-iso-log.XXXXXX")
trap 'rm -rf "$stage" "$log"' EXIT
mkdir -p "$stage/boot/grub"
cp "$kernel" "$stage/boot/kernel.elf"
cat > "$stage/boot/grub/grub.cfg" <<CFG
set timeout=0
set default=0
menuentry "baretrace" {
	# Video drivers, for the framebuffer the kernel asks for (UEFI: GOP).
	insmod all_video
$grub_cmds
	multiboot2 /boot/kernel.elf $cmdline
	# multiboot2 turned the kernel's request into gfxpayload=1024x768x32,...;
	# under BIOS put text mode first, for the VGA text console.
	if [ "\$grub_platform" = "pc" ]; then set gfxpayload=text; fi
	boot
}
CFG
mkdir -p "$(dirname "$out")"
if ! grub-mkrescue -o "$out.tmp.$$" "$stage" >"$log" 2>&1; then
	cat "$log" >&2
	echo "mkiso: grub-mkrescue failed (needs grub-pc-bin, grub-efi-amd64-bin, xorriso, mtools)" >&2
	rm -f "$out.tmp.$$"
	exit 1
fi
mv "$out.tmp.$$" "$out"
