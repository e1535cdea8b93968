#!/bin/bash
# Check that the host build tracks header dependencies: touching a header
# must leave every host program that includes it out of date.  For each
# header below, the programs expected to include it are asked `make -q`
# after the header's time moved forward; then the old time is put back, so
# nothing is rebuilt.  Usage: scripts/check-deps.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
MAKE=${MAKE:-make}

# header: programs that include it (directly or not)
checks=(
	"include/trace/dump_format.h: $B/tools/baretrace-decode $B/tools/mkcapture $B/fuzz/fuzz_dump $B/host/test_dump $B/host/test_dump_damage"
	"include/trace/ring_format.h: $B/tools/baretrace-decode $B/tools/mkcapture $B/fuzz/fuzz_dump $B/host/test_ring $B/host/test_ring_stress $B/host/test_ring_stress.tsan $B/host/test_dump"
	"include/trace/ring_buffer.h: $B/tools/mkcapture $B/host/test_ring $B/host/test_ring_stress $B/host/test_ring_stress.tsan $B/host/test_dump $B/host/test_dump_damage"
	"tests/host/include/arch/trace_arch.h: $B/host/test_ring $B/host/test_ring_stress $B/host/test_ring_stress.tsan $B/host/test_dump"
	"include/trace/clock.h: $B/tools/baretrace-decode $B/host/test_clock $B/host/test_dump"
	"include/kernel/cmdline.h: $B/host/test_cmdline"
	"arch/x86/include/arch/local_ops.h: $B/host/test_ring $B/host/test_ring_stress $B/host/test_ring_inject"
	"include/lib/format.h: $B/tools/baretrace-decode $B/host/test_kprintf $B/host/test_cmdline"
)

ref=$(mktemp)
trap 'rm -f "$ref"' EXIT
fail=0
for c in "${checks[@]}"; do
	hdr=${c%%:*}
	progs=${c#*:}
	[ -f "$hdr" ] || { echo "check-deps: $hdr is missing (update scripts/check-deps.sh)"; exit 1; }
	for p in $progs; do
		"$MAKE" -q "$p" 2>/dev/null || {
			echo "check-deps: $p is out of date before the test; build it first"; exit 1; }
	done
	touch -r "$hdr" "$ref"
	touch "$hdr"
	for p in $progs; do
		if "$MAKE" -q "$p" 2>/dev/null; then
			echo "check-deps: FAIL: $p is up to date after $hdr changed: its" \
			     "dependency files miss that header"
			fail=1
		fi
	done
	touch -r "$ref" "$hdr"
done
[ $fail = 0 ] && echo "check-deps: ok (${#checks[@]} headers)"
exit $fail
