"""Backtraces under function_graph: the panic report's (run=fault) and the
hard-lockup watchdog's (run=hang) must name the same frames as the same
boot with the tracer off.

function_graph replaces each traced function's return slot with the
address of its return trampoline (ftrace_return_to_handler) and keeps the
real one on the shadow stack of the context level the call was made at;
the frame-pointer walk maps such a slot back through that stack
(ftrace_graph_ret_addr(), docs/ftrace.md). The reference is the tracer-off
boot of the same kernel image: its return slots were never touched, so the
addresses it prints are the real ones, found without the shadow stack. The
walk's lines after the first (the trap's RIP) are return addresses and must
be equal address for address; the first must name the same function (the
watchdog's NMI lands anywhere in the spin loop).

Mutations these catch: ftrace_graph_ret_addr() returning its argument (the
trampoline's name printed); matching frame sp against the slot's address
instead of slot + 8 (nothing found); taking the frame below the match (a
caller's caller printed); the walk starting at the NMI's level for the
watchdog (nothing found there).

On the boot CPU only: on an AP the jobs run from the AP's call queue and
the chain above job_fault_read (a frameless leaf) holds no traced caller.
"""
import re

import pytest

FRAME = re.compile(r"^\s+(0x[0-9a-f]{16}) (\S+)\+0x[0-9a-f]+$")
TRAMPOLINE = "ftrace_return_to_handler"


def backtrace(r, end):
    """The (address, function) pairs of the one backtrace, which ends with end."""
    assert r.lines.count("Backtrace:") == 1, r.out
    i = r.lines.index("Backtrace:") + 1
    frames = []
    while r.lines[i] != end:
        m = FRAME.match(r.lines[i])
        assert m, f"not a frame line: {r.lines[i]!r}\n{r.out}"
        frames.append((m.group(1), m.group(2)))
        i += 1
    return frames


def check_same(traced, reference):
    assert not any(f == TRAMPOLINE for _, f in traced), traced
    # The reference is a real chain, as deep as the job runner's caller.
    assert len(reference) >= 3 and not any(f == TRAMPOLINE for _, f in reference), reference
    assert traced[0][1] == reference[0][1], (traced, reference)
    assert traced[1:] == reference[1:], (traced, reference)


def test_fault_backtrace_under_function_graph(qemu):
    runs = {}
    for tracer in ("nop", "function_graph"):
        r = qemu(f"ftrace={tracer} run=fault exit panic.dump=none", smp=1, timeout=90)
        assert r.rc == 1 and r.has(r"^PANIC: unhandled exception: vector=14 "), r.out
        assert r.has(r"^fault: cpu=0 reading unmapped address"), r.out
        runs[tracer] = backtrace(r, "PANIC: end of report")
    ref = runs["nop"]
    assert ref[0][1] == "job_fault" and ref[1][1] == "jobs_run", ref
    check_same(runs["function_graph"], ref)


def test_watchdog_backtrace_under_function_graph(qemu):
    """run=hang reported by the watchdog's NMI: the interrupted task level's
    stack, not the NMI's own."""
    runs = {}
    for tracer in ("nop", "function_graph"):
        r = qemu(f"ftrace={tracer} run=hang watchdog.ms=400 exit panic.dump=none", smp=1,
                 timeout=90)
        assert r.rc == 1 and r.has(r"^watchdog: cpu=0 stuck for \d+ ms at job_hang_spin\+"), \
            r.out
        runs[tracer] = backtrace(r, "watchdog: end of report")
    ref = runs["nop"]
    assert ref[0][1] == "job_hang_spin" and "jobs_run" in [f for _, f in ref], ref
    check_same(runs["function_graph"], ref)
