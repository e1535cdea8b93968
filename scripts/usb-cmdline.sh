#!/bin/bash
# Put a kernel command line on a USB stick's image (docs/usb.md): the file
# CMDLINE.CFG in its BARETRACE partition, which the stick's own GRUB runs at
# boot in place of its built-in command line. The file is one GRUB line,
#   set cmdline='run=demo dump=usb exit'
# after a comment; anyone may edit it on any computer.
#
# The partition is the first in the image's partition table whose FAT32 boot
# sector carries the label BARETRACE: the kernel's rule for the trace file,
# and GRUB's on the disk it booted from. mtools writes the file's own
# clusters, the FATs and the root directory; TRACE.BIN's clusters and
# directory entry stay as they were (the kernel checks that the file is
# contiguous and its header intact), and fsck.fat -n stays clean.
# Usage: usb-cmdline.sh IMAGE "CMDLINE"
set -euo pipefail
img=$1 cmdline=$2
die() { echo "usb-cmdline: $*" >&2; exit 2; }
# The value goes in GRUB single quotes; GRUB would pass a double quote or a
# backslash on to the kernel escaped (as mkiso.sh's built-in line).
case "$cmdline" in
*[\"\'\\]*|*$'\n'*) die "the command line may not contain ' \" \\ or a newline" ;;
esac
[ -f "$img" ] || [ -b "$img" ] || die "no image '$img'"
for t in sfdisk mcopy od; do
	command -v "$t" >/dev/null || die "$t not found (make deps installs fdisk, mtools)"
done

# Bytes of the image at a byte offset, as text (NULs dropped).
bytes_at() { dd if="$img" iflag=skip_bytes,count_bytes skip="$1" count="$2" status=none | tr -d '\0'; }

# sfdisk --dump: one line per partition, "IMG1 : start=  64, size= 224, ...".
starts=$(sfdisk --dump "$img" 2>/dev/null | sed -n 's/^.* : start= *\([0-9]*\),.*/\1/p') ||
	die "$img has no partition table sfdisk can read"
offset=""
for start in $starts; do
	# FAT32 boot sector: BS_VolLab (11 bytes) at 71, BS_FilSysType at 82.
	if [ "$(bytes_at $(( start * 512 + 71 )) 11)" = "BARETRACE  " ] &&
	   [ "$(bytes_at $(( start * 512 + 82 )) 8)" = "FAT32   " ]; then
		offset=$(( start * 512 ))
		break
	fi
done
[ -n "$offset" ] || die "$img has no FAT32 partition labelled BARETRACE (make usb-image makes one)"

tmp=$(mktemp "${TMPDIR:-/tmp}/baretrace-cmdline.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cat > "$tmp" <<CFG
# baretrace's kernel command line on this stick (docs/usb.md, docs/options.md).
# GRUB boots the kernel with the text between the single quotes instead of
# its built-in one; delete this file to go back to that.
set cmdline='$cmdline'
CFG
# -o: replace an earlier CMDLINE.CFG.
mcopy -o -i "$img@@$offset" "$tmp" ::CMDLINE.CFG ||
	die "mcopy could not write CMDLINE.CFG into $img"
