#!/bin/bash
# Write the bootable image to a USB stick, carefully: `make usb DEV=/dev/sdX`.
# Usage: usb-write.sh IMAGE DEVICE
# Refuses (writing nothing) anything but a whole, unmounted block device;
# shows its size and model and asks for "yes" before writing.
# BARETRACE_SYSFS replaces /sys (tests only: to pose as a partition).
set -uo pipefail
image=${1:-} dev=${2:-}
sysfs=${BARETRACE_SYSFS:-/sys}
refuse() { echo "usb: $*; nothing written" >&2; exit 1; }

[ -n "$dev" ] || refuse "no device given: make usb DEV=/dev/sdX (the whole stick, see lsblk)"
[ -f "$image" ] || refuse "no image at '$image' (make iso)"
[ -e "$dev" ] || refuse "$dev does not exist (lsblk lists the disks)"
[ -b "$dev" ] || refuse "$dev is not a block device (a regular file or /dev/null is not a USB stick)"

real=$(readlink -f "$dev")
majmin=$(stat -L -c '%t:%T' "$real") || refuse "cannot stat $dev"
majmin=$((16#${majmin%:*})):$((16#${majmin#*:}))
node="$sysfs/dev/block/$majmin"
[ -e "$node" ] || refuse "$dev ($majmin) is unknown to $sysfs/dev/block"
name=$(basename "$(readlink -f "$node")")
if [ -e "$node/partition" ]; then
	parent=$(basename "$(dirname "$(readlink -f "$node")")")
	refuse "$dev is a partition ($name); give the whole disk, e.g. /dev/$parent"
fi

# Mounted or swapped on: the device itself or any of its partitions.
while read -r src mnt _; do
	[ -b "$src" ] || continue
	s=$(readlink -f "$src")
	case "$s" in "$real"|"$real"[0-9]*|"$real"p[0-9]*)
		refuse "$dev is in use: $s is mounted on $mnt (unmount it first)" ;;
	esac
done < /proc/mounts
while read -r src _; do
	case "$src" in "$real"|"$real"[0-9]*|"$real"p[0-9]*)
		refuse "$dev is in use as swap ($src)" ;;
	esac
done < <(tail -n +2 /proc/swaps)

sectors=$(cat "$node/size" 2>/dev/null || echo 0)
bytes=$((sectors * 512))
model=$(cat "$node/device/vendor" "$node/device/model" 2>/dev/null | tr -s ' \n' ' ' | sed 's/ $//')
removable=$(cat "$node/removable" 2>/dev/null || echo '?')
img_bytes=$(stat -c %s "$image")
[ "$bytes" -ge "$img_bytes" ] || refuse "$dev holds $bytes bytes, less than the image ($img_bytes)"

echo "usb: device $dev ($name): $((bytes / 1000000)) MB, model '${model:-unknown}', removable=$removable"
echo "usb: everything on it will be replaced by $image ($((img_bytes / 1000000)) MB)"
printf 'usb: type yes to write: '
read -r answer || answer=""
[ "$answer" = yes ] || refuse "answer was '${answer}', not 'yes'"
dd if="$image" of="$real" bs=4M conv=fsync status=progress || { echo "usb: dd failed" >&2; exit 1; }
sync
echo "usb: done; boot the stick with Secure Boot off (docs/real-hardware.md)"
