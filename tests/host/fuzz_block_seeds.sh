#!/bin/bash
# Seeds for fuzz_block: sticks made by sfdisk, mkfs.fat and mtools (GPT and
# MBR, a 1 MiB TRACE.BIN; one without the file), as sparse disks (see
# tests/host/fuzz_block.c: flags 3, the block count, the non-zero blocks).
# Usage: fuzz_block_seeds.sh BARETRACE_USB OUTDIR
set -euo pipefail
tool=$1 out=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/baretrace-fuzzseed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export MTOOLS_SKIP_CHECK=1
"$tool" header "$tmp/TRACE.BIN" $((1 << 20)) "$(printf 'ab%.0s' {1..20})" seed
truncate -s $((1 << 20)) "$tmp/TRACE.BIN"
for table in gpt dos nofile; do
	disk=$tmp/$table.img part=$tmp/$table.part
	truncate -s 40M "$disk"
	if [ $table = gpt ]; then t=EBD0A0A2-B9E5-4433-87C0-68B6B72699C7; l=gpt; else t=c; l=dos; fi
	printf 'label: %s\nstart=2048, type=%s\n' $l $t | sfdisk -q "$disk"
	mkfs.fat -F 32 -n BARETRACE -C "$part" $((36 << 10)) >/dev/null	# fits either table
	[ $table = nofile ] || mcopy -i "$part" "$tmp/TRACE.BIN" ::TRACE.BIN
	dd if="$part" of="$disk" bs=512 seek=2048 conv=notrunc,sparse status=none
	/usr/bin/python3 - "$disk" "$out/$table.seed" <<'PY'
import struct, sys
img = open(sys.argv[1], "rb").read()
out = [struct.pack("<BI", 3, len(img) // 512)]
for lba in range(len(img) // 512):
    b = img[lba * 512:(lba + 1) * 512]
    if any(b):
        out.append(struct.pack("<I", lba) + b)
open(sys.argv[2], "wb").write(b"".join(out))
PY
done
