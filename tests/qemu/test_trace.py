"""Per-CPU ring buffers in the kernel: stress with nested IRQ/NMI writers, options, shell."""
import re

import pytest


# Under icount the TSC is calibrated against the HPET alone (clock=hpet):
# nothing here depends on the reference, and measuring the PIT and PM timer
# too took about 4 s of each icount boot (port reads are slow there).
ICOUNT_CLOCK = " clock=hpet"


def stress_lines(r):
    rows = []
    for l in r.all(r"^ktest: stress mode=\w+ cpu=\d+ "):
        f = dict(re.findall(r"(\w+)=(\w+)", l))
        rows.append({k: (v if k == "mode" else int(v)) for k, v in f.items()})
    return rows


# The stress ktest is bounded by work done (every writer's quotas), so it must
# hold for any CPU count in either mode. -smp 2 under icount is where a
# time-bounded version starved the writer; an odd and an even count each way.
@pytest.mark.parametrize("icount,smp", [(False, 4), (True, 4), (True, 2), (True, 3), (False, 5)],
                         ids=["tcg-smp4", "icount-smp4", "icount-smp2", "icount-smp3",
                              "tcg-smp5"])
def test_ring_buffer_stress(qemu, icount, smp):
    r = qemu("run=ktest ktest=ring_buffer_stress,ring_buffer_refuses_bad_input exit" +
             (ICOUNT_CLOCK if icount else ""), smp=smp, icount=icount, timeout=240)
    assert r.rc == 0, r.out
    assert r.ktap() == {"ring_buffer_stress": True, "ring_buffer_refuses_bad_input": True}
    rows = stress_lines(r)
    assert sorted((x["mode"], x["cpu"]) for x in rows) == \
        sorted((m, c) for m in ("overwrite", "discard") for c in range(1, smp))
    for x in rows:
        # The accounting identity, as the kernel printed it.
        assert x["written"] == x["read"] + x["overrun"] + x["dropped"], x
        assert x["in_buffer"] == 0 and x["errors"] == 0
        assert x["lost_reported"] == x["overrun"] + x["dropped"]
        # Small buffers: loss really happened, of the kind each mode has.
        if x["mode"] == "overwrite":
            assert x["overrun"] > 0
        else:
            assert x["overrun"] == 0 and x["dropped"] > 0
        # Writers at every level (task, LAPIC timer IRQ, NMI) up to the
        # kernel's quotas, and a reader that took pages while they wrote.
        assert x["task"] > 0 and x["irq"] >= 20 and x["nmi"] >= 10, x
        assert x["live_pages"] > 0, x


# tracing_reconfigure() while every other CPU writes at task level, holding
# each reservation open: the old buffers must not be freed until each CPU
# has confirmed it left them (the kernel counts what the writers saw).
@pytest.mark.parametrize("icount,smp", [(True, 2), (True, 3), (False, 3)],
                         ids=["icount-smp2", "icount-smp3", "tcg-smp3"])
def test_reconfigure_under_writers(qemu, icount, smp):
    r = qemu("run=ktest ktest=tracing_reconfigure_under_writers exit" +
             (ICOUNT_CLOCK if icount else ""), smp=smp, icount=icount, timeout=180)
    assert r.rc == 0, r.out
    assert r.ktap() == {"tracing_reconfigure_under_writers": True}
    assert r.fields(r"^ktest: reconfigure rounds=")["rounds"] == "100"
    rows = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in r.all(r"^ktest: reconfigure cpu=")]
    assert sorted(int(x["cpu"]) for x in rows) == list(range(1, smp))
    for x in rows:
        # Switches landed inside reservations, and none of those found its
        # buffer freed, nor did a reconfiguration return with one open.
        assert int(x["switched"]) > 0, x
        assert x["corrupted"] == "0" and x["returned_inside"] == "0", x
        assert x["buffer_refused"] == "0", x
    assert not r.has(r"^trace: cpu=\d+ did not confirm")


def test_reconfigure_refuses_when_a_cpu_stays_inside(qemu):
    r = qemu("run=ktest ktest=tracing_reconfigure_refuses_when_stuck exit", smp=2, timeout=60)
    assert r.rc == 0, r.out
    assert r.ktap() == {"tracing_reconfigure_refuses_when_stuck": True}
    assert r.has(r"^trace: cpu=1 did not confirm within 50 ms that it left its buffer "
                 r"\(busy at task level without tracing_quiescent\(\), or stuck inside a "
                 r"reservation\); reconfiguration refused, buffers kept$"), r.out


# Discard mode, a reader that never reads: 200,000 reservations on the full
# ring must all be dropped and counted, without the closed page's write
# offset growing with them (issue 12, defect 1); then everything reads back.
def test_ring_buffer_discard_stalled(qemu):
    r = qemu("run=ktest ktest=ring_buffer_discard_stalled exit", smp=1, timeout=60)
    assert r.ktap() == {"ring_buffer_discard_stalled": True}, r.out
    assert r.rc == 0, r.out
    f = {k: int(v) for k, v in r.fields(r"^ktest: discard_stalled stored=").items()}
    assert f["drops"] == 200000 and f["dropped"] == f["drops"] and f["not_full"] == 0, f
    assert f["max_offset"] <= f["limit"] == f["cap"] + 8 * (12 + 8 + 1024), f
    g = {k: int(v) for k, v in r.fields(r"^ktest: discard_stalled later=").items()}
    assert g["later"] > 0 and g["decoded"] == f["stored"] + g["later"] == g["entries"], g
    assert g["read"] == g["entries"] and g["in_buffer"] == 0 and g["overrun"] == 0, g
    # Drops: the one that found the ring full, the 200,000, the one that ended
    # the second fill; the pages' loss reports each of them.
    assert g["dropped"] == f["drops"] + 2 == g["lost"], g


def test_trace_options(qemu):
    r = qemu("run=ktest ktest=ring_buffer_refuses_bad_input exit trace.pages=0 trace.pages=abc "
             "trace.mode=fast", smp=2, untimed=True)     # option errors: it shares
    assert r.rc == 0, r.out
    assert r.has(r"^cmdline: trace\.pages=0: invalid value: out of range; accepted: 2\.\.65535; left unchanged$")
    assert r.has(r"^cmdline: trace\.pages=abc: invalid value: not a number; accepted: integer 2\.\.65535; left unchanged$")
    assert r.has(r"^cmdline: trace\.mode=fast: invalid value: accepted: overwrite\|discard; left unchanged$")
    f = r.fields(r"^trace: cpus=")
    assert f == {"cpus": "2", "pages_per_cpu": "64", "page_size": "4096", "mode": "overwrite",
                 "reserve": "xadd", "recording": "on"}


def test_trace_pages_larger_than_memory_falls_back(qemu):
    r = qemu("run=ktest ktest=ring_buffer_refuses_bad_input exit trace.pages=65535 trace.mode=discard",
             smp=4, untimed=True)        # a fallback, no time: it shares (boot_lock.py)
    assert r.rc == 0, r.out
    m = r.has(r"^trace: trace\.pages=65535 needs \d+ MiB for 4 CPUs but only \d+ MiB are free; "
              r"using trace\.pages=(\d+)$")
    assert m, r.out
    fit = int(re.search(r"using trace\.pages=(\d+)", m).group(1))
    f = r.fields(r"^trace: cpus=")
    assert int(f["pages_per_cpu"]) == fit and f["mode"] == "discard"


def test_shell_trace_commands(shell):
    s = shell(untimed=True)     # answers and counts, no time: it shares (boot_lock.py)
    out = s.cmd("status")
    assert re.search(r"^trace: recording=on mode=overwrite pages_per_cpu=64 page_size=4096 cpus=2$", out, re.M), out
    rows = re.findall(r"^cpu=(\d+) entries=(\d+) overrun=(\d+) dropped=(\d+) commit_overrun=(\d+) "
                      r"read=(\d+) bytes=(\d+) stored=(\d+) written=(\d+) ", out, re.M)
    assert [int(x[0]) for x in rows] == [0, 1]
    # The shell's own timer ticks are being recorded on CPU 0.
    assert int(rows[0][1]) > 0
    # entries are ftrace's: stored, not read, not overwritten; stored is what was ever kept.
    for x in rows:
        assert int(x[1]) == int(x[7]) - int(x[5]) - int(x[2]), x
        assert int(x[8]) == int(x[7]) + int(x[3]), x
    assert s.cmd("stop") == "trace: recording=off\n"
    assert "recording=off" in s.cmd("status")
    # A dump reads what it prints (as trace_pipe): after it, status and the dump's own
    # header (its counters after the dump) give the same entries, read and written.
    before = sum(int(e) for e in re.findall(r"^cpu=\d+ entries=(\d+) ", s.cmd("status"), re.M))
    dump = s.cmd("dump text last=1", timeout=60)
    header = re.findall(r"^# cpu=(\d+) entries=(\d+) overrun=\d+ dropped=\d+ commit_overrun=\d+ "
                        r"read=(\d+) ", dump, re.M)
    status = re.findall(r"^cpu=(\d+) entries=(\d+) .* read=(\d+) ", s.cmd("status"), re.M)
    assert header == status and len(status) == 2, (header, status)
    assert re.search(rf"^# entries-in-buffer/entries-written: {before}/", dump, re.M), (before, dump)
    assert s.cmd("start") == "trace: recording=on\n"
    assert s.cmd("mode discard") == "trace: mode=discard (buffers emptied)\n"
    assert "mode=discard" in s.cmd("status")
    assert s.cmd("mode fast") == "error: mode 'fast' is not known; accepted: overwrite|discard\n"
    assert s.cmd("mode") == "error: usage: mode overwrite|discard\n"
    assert s.cmd("reset") == "trace: buffers emptied; recording=on\n"
    assert s.cmd("status x") == "error: status takes no arguments\n"
    s.send(b"poweroff\r")
    assert s.close() == 0
