#!/bin/bash
# Build the USB stick's image (docs/usb.md): the hybrid GRUB image as it is
# (BIOS and UEFI boot unchanged), grown, with a fifth GPT partition named
# BARETRACE holding a FAT32 file system labelled BARETRACE and, in it, a
# contiguous TRACE.BIN of TRACE_MB MiB whose first block is the trace file's
# header.  The result is checked with the kernel's own reader before it is
# moved into place.
# Usage: mkusb-image.sh ISO KERNEL BARETRACE_USB OUT TRACE_MB VERSION [CMDLINE]
# CMDLINE, if given and not empty, goes into the partition as CMDLINE.CFG
# (scripts/usb-cmdline.sh): the stick boots with it, not the ISO's own.
set -euo pipefail
iso=$1 kernel=$2 tool=$3 out=$4 mb=$5 version=$6 cmdline=${7:-}
die() { echo "usb-image: $*" >&2; exit 2; }
case "$mb" in ''|*[!0-9]*) die "TRACE_MB='$mb' is not a whole number of MiB" ;; esac
# FAT32 files stop below 4 GiB; the header needs a block of data after it.
[ "$mb" -ge 1 ] && [ "$mb" -le 4095 ] || die "TRACE_MB=$mb is outside 1..4095"
for t in sfdisk mkfs.fat mcopy nm objdump objcopy od; do
	command -v "$t" >/dev/null || die "$t not found (make deps installs fdisk, dosfstools, mtools)"
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baretrace-usbimg.XXXXXX")
trap 'rm -rf "$tmp" "$out.tmp.$$"' EXIT

# The kernel's GNU build id: the linker script keeps the note in .rodata
# at __build_id_note (namesz, descsz, type, "GNU\0", then the 20 bytes).
note=$(nm "$kernel" | awk '$3 == "__build_id_note" { print $1 }')
ro=$(objdump -h "$kernel" | awk '$2 == ".rodata" { print $4 }')
[ -n "$note" ] && [ -n "$ro" ] || die "$kernel has no __build_id_note in .rodata"
objcopy -O binary -j .rodata "$kernel" "$tmp/rodata.bin"
build_id=$(od -An -tx1 -v -j $(( 0x$note - 0x$ro + 16 )) -N 20 "$tmp/rodata.bin" | tr -d ' \n')
[ ${#build_id} -eq 40 ] || die "$kernel has no 20-byte GNU build id"
img=$out.tmp.$$

# Layout, in 512-byte blocks: the image, then the partition on the next
# MiB, then one MiB for the backup GPT (the array is 176 entries long here).
# The partition: TRACE_MB + 1/32 for the FATs (512-byte clusters: 4 bytes
# of FAT per 512, twice) + 4 MiB, at least 36 MiB (FAT32 needs 65525
# clusters: 32 MiB of 512-byte ones).
iso_blocks=$(( ($(stat -c %s "$iso") + 511) / 512 ))
start=$(( (iso_blocks + 2047) / 2048 * 2048 ))
part_mb=$(( mb + mb / 32 + 4 ))
[ $part_mb -ge 36 ] || part_mb=36
part=$(( part_mb * 2048 ))
cp "$iso" "$img"
truncate -s $(( (start + part + 2048) * 512 )) "$img"
# (sfdisk says on stderr that the GPT does not reach the end yet: it is
# what --relocate is for.)
sfdisk -q --relocate gpt-bak-std "$img" >"$tmp/sfdisk.log" 2>&1 || { cat "$tmp/sfdisk.log" >&2; die "sfdisk --relocate failed"; }
echo "start=$start, size=$part, type=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7, name=BARETRACE" |
	sfdisk -q --append --no-reread --no-tell-kernel "$img" >/dev/null

# The file system in a file of its own, then copied in at its place.
# Cluster size: mkfs.fat's choice for the size (512 bytes up to 260 MiB).
mkfs.fat -F 32 -n BARETRACE -i "${build_id:0:8}" -C "$tmp/part.img" $(( part / 2 )) >/dev/null
"$tool" header "$tmp/TRACE.BIN" $(( mb << 20 )) "$build_id" "$version"
truncate -s $(( mb << 20 )) "$tmp/TRACE.BIN"
# On a new file system mcopy allocates the clusters in order: contiguous
# (the check below refuses the image if not).
MTOOLS_SKIP_CHECK=1 mcopy -i "$tmp/part.img" "$tmp/TRACE.BIN" ::TRACE.BIN
dd if="$tmp/part.img" of="$img" bs=1M seek=$(( start / 2048 )) conv=notrunc,sparse status=none
# After TRACE.BIN: the file takes clusters after its last.
[ -z "$cmdline" ] || "$(dirname "$0")/usb-cmdline.sh" "$img" "$cmdline"

"$tool" find "$img" > "$tmp/find.txt" || { cat "$tmp/find.txt" >&2; die "the image fails its own check"; }
mv "$img" "$out"
