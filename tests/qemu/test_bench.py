"""Write-path benchmarks: the icount instruction budget, and bad input (bench= and the shell command)."""
import re

# Under -icount shift=0 one cycle is one instruction: these are instruction
# counts per event.  The whole write path is cycles_per_event (net of the
# loop with recording off) plus off_cycles (the off check, net of a loop
# around a null tracepoint): rdtsc, reservation, header, payload, commit.
# The goal is 28 (issue 14; 40 in issue 7); it measured 26.1 when this was
# set (30.0 before the guard word), so a change that adds two instructions
# to the fast path fails here.
WRITE_BUDGET = 28
OFF_BUDGET = 5      # recording off: level bit, guard compare, branch, gate compare, branch


def bench_line(r, **want):
    for l in r.all(r"^bench: test="):
        f = dict(re.findall(r"(\w+)=(\S+)", l))
        if all(f.get(k) == v for k, v in want.items()):
            return f
    raise AssertionError(f"no bench line with {want}\n{r.out}")


def test_icount_instruction_budget(qemu):
    r = qemu("run=bench bench=ring exit", smp=2, icount=True, timeout=300)
    assert r.rc == 0, r.out
    f = bench_line(r, test="ring", reserve="xadd", stamp="rdtsc", convert="no", payload="8",
                   reader="none")
    whole = float(f["cycles_per_event"]) + float(f["off_cycles"])
    assert whole <= WRITE_BUDGET, f
    assert float(f["off_cycles"]) <= OFF_BUDGET, f
    # Not vacuous: the path does take its clock read, xadd and stores.
    assert whole >= 15, f
    assert int(f["events"]) > 100000
    # icount: the TSC is 1 GHz, so ns and cycles agree.
    assert f["cycles_per_event"] == f["ns_per_event"]
    # The buffer's line: events kept are "stored" (ftrace's "entries" are the unread ones).
    m = re.search(r"^bench ring: cpu=\d+ events=(\d+) stored=(\d+) overrun=\d+ dropped=(\d+) "
                  r"read=\d+ reader_pages=\d+ events_per_ms=\d+ ", r.out, re.M)
    assert m and int(m[2]) + int(m[3]) >= int(m[1]) > 0, r.out[-2000:]


# The kernel's own writers in bench all (event=): the record each writes.
WRITER_RECORDS = {"u32": 8, "u64": 12, "str16": 8 + 16, "printk": 24 + 2 * 8}


def test_writer_bench_lines(qemu):
    """bench all ends with one ring line per writer of the kernel: a u32
    field (trace_bench), a u64 field, a 16-byte string and trace_printk
    with two integers, in the documented format, each with its record's
    size, net of the same loop with recording off and with its off cost.
    Figures are held to relations every correct path keeps (copying a
    string or encoding arguments cannot cost less than storing one word),
    trace_printk's recording-off cost to under 100 (its encoding alone is
    about 440) and the string event's to under 30 (its walk is about 85). Catches: a writer left out of bench all, a line without
    event= or with the raw loop's payload, a loop whose writes all fail
    (events counted but no cost), the str16 string cut (a 16-byte record
    slot reported for a longer string), trace_printk encoding its arguments
    while recording is off."""
    r = qemu("run=bench bench=all exit", smp=2, icount=True, timeout=900)
    assert r.rc == 0, r.out
    whole = {}
    for ev, size in WRITER_RECORDS.items():
        f = bench_line(r, test="ring", event=ev)
        assert set(f) >= {"reserve", "stamp", "convert", "payload", "reader", "events",
                          "cycles_per_event", "ns_per_event", "loop_cycles", "off_cycles",
                          "write_interval"}, f
        assert f["reserve"] == "xadd" and f["stamp"] == "rdtsc" and f["convert"] == "no", f
        assert int(f["payload"]) == size, f
        assert int(f["events"]) > 1000, f
        assert f["cycles_per_event"] == f["ns_per_event"], f     # icount: 1 GHz
        whole[ev] = float(f["cycles_per_event"]) + float(f["off_cycles"])
        assert float(f["cycles_per_event"]) > 0, f
    assert r.has(r"^bench: test=ring .* event=raw$"), r.out
    assert whole["str16"] > whole["u32"] and whole["printk"] > whole["u32"], whole
    # Recording off, trace_printk answers before it encodes (about 440 of its
    # ~610) and a string event before it measures (about 85): their off costs
    # stay their calls' own. Catches the encoding (451) or the walk (90) first.
    f = bench_line(r, test="ring", event="printk")
    assert float(f["off_cycles"]) < 100 < float(f["cycles_per_event"]), f
    f = bench_line(r, test="ring", event="str16")
    assert float(f["off_cycles"]) < 30 < float(f["cycles_per_event"]), f


def test_bad_bench_option_is_refused_at_boot(qemu):
    """bench= is checked when the command line is parsed, like every other
    enumerated option: a bad value gets the cmdline: line naming it and what
    is accepted, and leaves the choice made before it in place, so run=bench
    still runs the event benchmark. Catches: bench= unchecked again (no
    cmdline: line, and run=bench fails later with the shell's usage line), a
    bad value that resets the choice to all."""
    r = qemu("run=bench bench=event bench=foo exit", timeout=120)
    assert r.rc == 0, r.out
    assert r.has(r"^cmdline: bench=foo: invalid value: accepted: all\|ring\|event\|tracepoint; left unchanged$"), r.out
    assert not r.has(r"^error: "), r.out
    f = bench_line(r, test="event")
    assert int(f["events"]) == 10000, f
    assert not r.has(r"^bench: test=ring ") and not r.has(r"^bench all: "), r.out


def test_bench_bad_input_keeps_the_shell(shell):
    # Error lines, and short benches that must merely run: no figure is
    # compared, so it shares the machine (untimed=True, boot_lock.py).
    s = shell(untimed=True)
    assert s.cmd("bench").startswith("error: usage: bench ring|event|tracepoint|all")
    assert s.cmd("bench fast").startswith("error: usage: bench ring|event|tracepoint|all")
    assert s.cmd("bench tracepoint x=1") == "error: bench tracepoint takes no options\n"
    assert s.cmd("bench ring payload=5000").startswith("error: bench payload=5000: not accepted")
    assert s.cmd("bench ring duration_ms=0").startswith("error: bench duration_ms=0: not accepted")
    assert s.cmd("bench ring cpu=9").startswith("error: bench cpu=9: not accepted")
    assert s.cmd("bench ring reserve=lock").startswith("error: bench reserve=lock: not accepted")
    assert s.cmd("bench ring cpu=0 reader=page").startswith("error: reader=page reads on this CPU")
    assert s.cmd("bench all now") == "error: bench all takes no options\n"
    assert s.cmd("bench ring event=u128").startswith("error: bench event=u128: not accepted")
    assert s.cmd("bench ring event=u64 reserve=cmpxchg").startswith(
        "error: event=u64 is the kernel's writer: xadd, rdtsc, raw cycles only")
    assert s.cmd("bench event event=str16").startswith("error: event= is for bench ring")
    out = s.cmd("bench ring duration_ms=20 reader=page", timeout=120)
    f = dict(re.findall(r"(\w+)=(\S+)", out.splitlines()[-1]))
    assert f["test"] == "ring" and f["reader"] == "page" and int(f["events"]) > 0, out
    out = s.cmd("bench ring duration_ms=20 event=printk", timeout=120)
    f = dict(re.findall(r"(\w+)=(\S+)", out.splitlines()[-1]))
    assert f["event"] == "printk" and f["payload"] == "40" and int(f["events"]) > 0, out
    out = s.cmd("bench event events=2000", timeout=120)
    assert re.search(r"^bench event: cycles first=\d+ last=\d+ min=\d+ max=\d+ avg=[\d.]+ std=[\d.]+", out, re.M), out
    assert re.search(r"^bench: test=event .* events=2000 ", out, re.M), out
    assert s.cmd("status").startswith("trace: recording=on ")   # benchmarks leave tracing as they found it
    s.send(b"poweroff\r")
    assert s.close() == 0


def test_tracepoint_costs_under_icount(qemu):
    """A disabled event's call site costs exactly its one NOP; enabled, the
    whole generated writer runs (reported, not bounded: it is a figure).
    Catches: a site that is not one instruction (a 2+3-byte NOP pair), a
    writer that evaluates its arguments before its key."""
    r = qemu("run=bench bench=tracepoint exit", smp=2, icount=True, timeout=300)
    assert r.rc == 0, r.out
    for event in ("bench:bench", "printk:bprint"):
        off = bench_line(r, test="tracepoint", event=event, state="disabled")
        on = bench_line(r, test="tracepoint", event=event, state="enabled")
        assert off["cycles_per_event"] == "1.000", off
        assert float(on["cycles_per_event"]) > 10, on
        assert off["loop_cycles"] == on["loop_cycles"]
