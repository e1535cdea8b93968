#!/bin/bash
# Remake the real captures in this folder: serial-console captures of
# QEMU runs (4 s each under TCG), read by tests/tools/test_trace_dat.py.
#   demo-overwrite.bin  run=demo, 4 CPUs, overwrite mode: overwritten pages, LOST
#   demo-discard.bin    run=demo, 4 CPUs, discard mode: dropped events
#   trace-printk.bin    the trace_printk ktest: bprint events, PRINTK frames
#   extra-events.bin    the kernel built with tests/host/events_extra.h: every
#                       field kind, from a real kernel's EVENTS and SYMS frames
#   ftrace.bin          boot tracing (ftrace=function_graph ftrace.filter=smp_*:
#                       the SMP bring-up's graph), then the ftrace_chain ktest:
#                       function and funcgraph events, 2 CPUs (test_decode.py,
#                       test_trace_dat.py)
# Run from the top of the tree, after `make kernel`.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=tests/tools/captures
make -s kernel
make -s kernel BUILD=build/events-extra EVENTS_EXTRA=tests/host/events_extra.h
run() {	# FILE ARGS...: boot once, the console into FILE
	local f=$1
	shift
	./run-qemu.sh --timeout 90 --machine q35 "$@" --serial "$out/$f" > /dev/null
}
run demo-overwrite.bin --smp 4 \
	--cmdline "run=demo exit demo.ms=100 trace.pages=4 dump=bin dump.last=0"
run demo-discard.bin --smp 4 \
	--cmdline "run=demo exit demo.ms=100 trace.pages=4 trace.mode=discard dump=bin dump.last=0"
run trace-printk.bin --smp 2 \
	--cmdline "run=ktest,dump ktest=trace_printk_lines exit dump=bin dump.last=0"
run extra-events.bin --smp 2 --kernel build/events-extra/kernel.elf \
	--cmdline "run=ktest,dump ktest=extra_events exit dump=bin dump.last=0"
run ftrace.bin --smp 2 --cmdline "ftrace=function_graph ftrace.filter=smp_* \
run=ktest,dump ktest=ftrace_chain exit dump=bin dump.last=0"
ls -l "$out"/*.bin
