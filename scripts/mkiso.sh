#!/bin/bash
# Build a hybrid GRUB image (BIOS El Torito + UEFI efi.img, writable to a USB
# stick with dd) that boots KERNEL with the given command line.
# Usage: mkiso.sh KERNEL OUTPUT.iso "CMDLINE" ["GRUB COMMANDS"]
# GRUB COMMANDS (newline-separated) run before the kernel is loaded; the
# tests use them to damage firmware tables on purpose (memrw's write_byte).
#
# CMDLINE is the built-in command line. Booted from a disk that also has a
# FAT partition labelled BARETRACE holding CMDLINE.CFG (a stick made by
# mkusb-image.sh; docs/usb.md), GRUB runs that file instead, a GRUB script
# that sets the command line (scripts/usb-cmdline.sh writes it).
set -euo pipefail
kernel=$1 out=$2 cmdline=${3:-} grub_cmds=${4:-}
# GRUB gets the line in single quotes (nothing inside is special to it);
# a double quote or backslash would reach the kernel escaped by GRUB.
case "$cmdline" in
*[\"\'\\]*|*$'\n'*)
	echo "mkiso: the command line may not contain ' \" \\ or a newline" >&2; exit 2 ;;
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
	# The command line: the built-in one, unless the disk GRUB booted from
	# (\$root without its partition: hd0 of hd0,gpt2) has a partition
	# labelled BARETRACE holding CMDLINE.CFG, which sets cmdline. Only that
	# disk's: a stick plugged in beside the boot medium configures nothing.
	# Each partition is tried by name with [ -f ], which fails silently
	# (search --label would print "no such device" on every other boot).
	set cmdline='$cmdline'
	insmod part_gpt
	insmod part_msdos
	insmod fat
	insmod probe
	insmod regexp
	regexp --set=1:bt_disk '^([^,]*)' "\$root"
	# Loaded, regexp would also expand wildcards in unquoted words, such
	# as the * of trace.events=-* in the command line below.
	rmmod regexp
	for bt_part in gpt1 gpt2 gpt3 gpt4 gpt5 gpt6 gpt7 gpt8 msdos1 msdos2 msdos3 msdos4; do
		if [ -f "(\$bt_disk,\$bt_part)/CMDLINE.CFG" ]; then
			probe --set=bt_label --label "(\$bt_disk,\$bt_part)"
			if [ "\$bt_label" = "BARETRACE" ]; then
				source "(\$bt_disk,\$bt_part)/CMDLINE.CFG"
				break
			fi
		fi
	done
	multiboot2 /boot/kernel.elf \$cmdline
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
