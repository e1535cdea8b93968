"""Dump on panic: a fault on any CPU stops recording everywhere, stops the
other CPUs by NMI (one line each), dumps the trace and fails the run.

run=fault records fault.marks (16) bench events with seq 1..16 on the CPU
that faults, just before it faults; every other CPU records bench events
with seq ((cpu + 1) << 24) + 1, 2, ... until it is stopped. The dump must end, on
the faulting CPU, with exactly those 16 marks in order.

A report, its stop lines and the events dumped are checked, never a time:
the faulting CPU waits for the others to record before it faults, so these
boots share the machine (untimed=True, tests/qemu/boot_lock.py). Not the
one where every CPU faults at once: it needs them running at the same moment.
"""
import re
import subprocess

import pytest


EVENT = re.compile(r"^\s*(task|softirq|irq|nmi)/(\d+)-\d+\s+\[(\d{3})\] (\S{4})\s+(\d+)\.(\d{9}): "
                   r"(\w+): (.*)$")
MARKS = list(range(1, 17))
STOP = re.compile(r"^panic: stopped cpu=(\d+) rip=(\S+)\+0x[0-9a-f]+ in_tracer=(yes|no)"
                  r"( panicked=yes)? flush=-?\d+$")


def dumped_events(text_lines):
    """(cpu, name, fields) of each event line of a text dump, in order."""
    out = []
    for l in text_lines:
        m = EVENT.match(l)
        if m:
            out.append((int(m.group(3)), m.group(7), m.group(8)))
    return out


def bench_seqs(events, cpu):
    return [int(f.split("=")[1]) for c, n, f in events if c == cpu and n == "bench"]


def kernel_dump(r):
    """The text dump's lines: from its header to the panic's last line."""
    start = r.lines.index("# tracer: baretrace")
    end = next(i for i, l in enumerate(r.lines) if l.startswith("panic: end action="))
    assert start < end, r.out
    return r.lines[start:end]


def check_report(r, faulter, n):
    """One report from faulter; every other CPU stopped once, with its line."""
    assert r.rc == 1, r.out
    assert len(r.all(r"^PANIC: unhandled exception: vector=14 ")) == 1, r.out
    assert len(r.all(r"^PANIC: end of report$")) == 1, r.out
    assert r.has(rf"^panic: cpu={faulter} in_tracer=(yes|no) recording=off stopping={n - 1}$"), r.out
    stops = [STOP.match(l) for l in r.all(r"^panic: stopped cpu=")]
    assert all(stops), r.all(r"^panic: stopped cpu=")
    assert sorted(int(m.group(1)) for m in stops) == sorted(set(range(n)) - {faulter}), r.out
    assert r.has(rf"^panic: stopped={n - 1}/{n - 1} flush=0 dump=")
    return {int(m.group(1)): m for m in stops}


@pytest.mark.parametrize("smp", [1, 2, 3])
def test_fault_on_the_boot_cpu_dumps_the_last_events(qemu, smp):
    r = qemu("run=fault exit", smp=smp, timeout=60, untimed=True)
    stops = check_report(r, 0, smp)
    for m in stops.values():
        assert m.group(2) == "background" and not m.group(4), m.group(0)
    assert r.has(r"^panic: end action=exit$")
    ev = dumped_events(kernel_dump(r))
    # The default: the last 100 events, merged; here fewer were recorded.
    entries = int(re.search(r"entries-in-buffer/entries-written: (\d+)/",
                            "\n".join(kernel_dump(r))).group(1))
    assert len(ev) == min(100, entries), r.out
    # The faulting CPU's last events are its marks, in order, all of them.
    assert bench_seqs(ev, 0)[-len(MARKS):] == MARKS, r.out
    assert [n for c, n, f in ev if c == 0][-1] == "bench"
    # Each stopped CPU's events are its own background sequence, none missing.
    for cpu in range(1, smp):
        seqs = bench_seqs(ev, cpu)
        assert seqs, r.out
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[0] >> 24 == cpu + 1


@pytest.mark.parametrize("smp,uefi", [(2, False), (3, False), (2, True)])
def test_fault_on_an_ap_stops_the_boot_cpu(qemu, smp, uefi):
    r = qemu("run=fault fault.cpu=1 exit panic.dump.last=0", smp=smp, uefi=uefi, timeout=90,
             untimed=True)
    stops = check_report(r, 1, smp)
    assert stops[0].group(2) == "background"
    assert r.has(r"^RIP: 0x[0-9a-f]{16} job_fault_read\+0x"), r.out
    ev = dumped_events(kernel_dump(r))
    assert bench_seqs(ev, 1) == MARKS, r.out
    assert bench_seqs(ev, 0) and bench_seqs(ev, 0)[0] == (1 << 24) + 1


def test_fault_cpu_that_is_not_online_fails_without_a_panic(qemu):
    r = qemu("run=fault fault.cpu=1 exit", smp=1)
    assert r.rc == 1, r.out
    assert r.has(r"^fault: fault.cpu=1 is not an online CPU$")
    assert not r.has(r"^PANIC")


@pytest.mark.parametrize("smp", [2, 3])
def test_every_cpu_faulting_at_once_gives_one_report(qemu, smp):
    # cpu 0 faults first; each AP faults as soon as it sees recording stop,
    # that is while cpu 0's panic begins: whichever wins, one report.
    r = qemu("run=fault fault.cpu=all exit", smp=smp, timeout=60)
    owner = int(r.fields(r"^panic: cpu=\d+ in_tracer=")["cpu"])
    stops = check_report(r, owner, smp)
    # The others faulted too, while the owner reported: they say so, at their
    # fault. One whose vCPU the host did not run for the owner's whole
    # register report (milliseconds) may take its NMI on the way to its
    # fault instead; at least one other CPU must have panicked.
    for m in stops.values():
        assert (m.group(2), bool(m.group(4))) in {("job_fault_read", True),
                                                  ("fault_after", False)}, m.group(0)
    assert any(m.group(4) for m in stops.values()), r.out
    assert len(r.all(r"^panic: end action=exit$")) == 1
    # Recording stopped at cpu 0's fault, after all its marks.
    assert bench_seqs(dumped_events(kernel_dump(r)), 0) == MARKS, r.out


def test_binary_panic_dump_decodes(qemu, decoder, tmp_path):
    cap = tmp_path / "serial.bin"
    r = qemu("run=fault fault.cpu=1 exit panic.dump=bin", smp=2, serial=cap, timeout=60,
             untimed=True)
    check_report(r, 1, 2)
    assert not r.has(r"^# tracer: baretrace$")
    assert r.has(r"^dump: bin id=1 frames=\d+ pages=\d+ events=\d+ bytes=\d+ encoding=pack$"), r.out
    d = subprocess.run([str(decoder), str(cap), "--text", str(tmp_path / "dec.txt")],
                       capture_output=True, timeout=120, text=True)
    assert d.returncode == 0, d.stderr
    assert "complete (verified by END)" in d.stderr, d.stderr
    ev = dumped_events((tmp_path / "dec.txt").read_text().split("\n"))
    assert bench_seqs(ev, 1) == MARKS
    assert bench_seqs(ev, 0)


def test_panic_dump_none_dumps_nothing(qemu):
    r = qemu("run=fault exit panic.dump=none", smp=2, timeout=60, untimed=True)
    check_report(r, 0, 2)
    assert not r.has(r"^# tracer:") and not r.has(r"^dump: ")
    assert r.has(r"^panic: end action=exit$")


def test_fault_inside_the_dump_prints_one_line_and_fails(qemu):
    r = qemu("run=fault exit panic.inject=dump", smp=2, timeout=60, untimed=True)
    assert r.rc == 1, r.out
    assert len(r.all(r"^PANIC: ")) == 2, r.out   # the first report's header and end, no more
    line = r.all(r"^panic: cpu=0 fault during the panic report: ")
    assert line == ["panic: cpu=0 fault during the panic report: vector=14 "
                    "rip=" + line[0].split("rip=")[1]], r.out
    assert re.search(r"rip=inject_fault\+0x[0-9a-f]+; ending$", line[0])
    assert not r.has(r"^panic: end action=")
    assert not r.has(r"^# tracer:")


def test_panic_action_halt_keeps_the_machine(qemu):
    r = qemu("run=fault exit panic.dump=none panic.action=halt", smp=2, timeout=10,
             untimed=True)
    assert r.rc == 124, r.out   # run-qemu.sh's timeout: nothing exited
    assert r.has(r"^panic: end action=halt$") and r.has(r"^panic: halted \(panic.action=halt\)$")


def test_panic_action_reboot_resets(qemu):
    r = qemu("run=fault exit panic.dump=none panic.action=reboot", smp=2, timeout=20,
             untimed=True)
    # -no-reboot: the reset ends QEMU without the kernel's verdict, still a failure.
    assert r.rc == 3, r.out
    assert r.has(r"^panic: end action=reboot$") and r.has(r"^exit: resetting through ")
    assert not r.has(r"^exit: result=")
