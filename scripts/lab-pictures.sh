#!/bin/bash
# The lab's pictures in docs/ (docs/lab.md shows them): one QEMU boot runs
# run=hwlat, run=c2c and run=timerlat with their events recorded and dumped
# in binary on the serial line; baretrace-decode --lab summarises the capture
# and --lab-plot draws it.
#
#   scripts/lab-pictures.sh [OUTDIR] [-- run-qemu.sh options]
#
# OUTDIR (default docs/lab-pictures) receives hwlat_gaps.svg, timerlat.svg,
# c2c.svg and summary.txt (the decoder's lines, then the kernel's summary
# lines of the same boot, for comparison). The capture stays in
# build/lab-pictures/capture.bin. Default machine: plain TCG (no icount),
# 2 vCPUs, so that the figures are the emulated machine's, host noise and
# all; pass e.g. "-- --icount" for the exact, reproducible ones.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/docs/lab-pictures}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
cap=$here/build/lab-pictures/capture.bin
mkdir -p "$(dirname "$cap")" "$out"
make -C "$here" -s -j2 all tools
"$here/run-qemu.sh" --timeout 300 --smp 2 --serial "$cap" "$@" --cmdline \
	"run=hwlat,c2c,timerlat,dump exit trace.events=-*,lab:* dump=bin" > "$cap.console" 2>&1 ||
	{ echo "lab-pictures: the boot failed; its console: $cap.console" >&2; exit 1; }
{
	"$here/build/tools/baretrace-decode" "$cap" --lab-plot "$out"
	echo "# the kernel's lines of the same boot:"
	tr -d '\r' < "$cap.console" | sed -n 's/^\[[ 0-9.]*\] //p' |
		grep -aE '^(hwlat: (cpu=[0-9]+ (gaps|hist)|machine)|c2c: from=[0-9]+ to=[0-9]+ one|timerlat: (cpu|samples))'
} > "$out/summary.txt"
cat "$out/summary.txt"
