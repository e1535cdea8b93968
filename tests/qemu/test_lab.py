"""The lab's experiments (docs/lab.md): run=hwlat under icount, where the TSC
is exactly the guest's instruction count and every figure is reproducible.

What the method guarantees and the tests hold it to, against counts made
independently of the kernel (the stalls the command line asked for):
  - every injected stall is found, on every CPU it was injected on, with its
    length: stall <= gap <= stall + SLACK_TURNS turns of the loop (the turn
    before the stall, the stall's own last check, the turn after, each
    interleaved with the other CPUs' turns under icount);
  - nothing else is found: each CPU's gaps equal its stalls (the threshold,
    auto, is 1000 ns: ten turns or more);
  - a stall on every CPU at once is one machine gap, coincident, seen by all
    CPUs; a stall on one CPU is a machine gap of its own, not coincident;
  - the hwlat_gap events the dump holds are the gaps the summary counts.
The SMI boot raises one real SMI (APM port 0xB2, SeaBIOS's handler) on a CPU
model that says Intel, where QEMU's TCG implements MSR_SMI_COUNT: the count
goes up by exactly one across exactly the gap it made.

Mutations seen to fail here: the stall's busy wait skipped (no gap found),
the loop's compare made `>= thresh` with thresh 0 (gaps invented), the skew
widening left out of the merge at 5 CPUs is caught by the host test
(test_lab) not here, since icount's skew bounds are tens of ns.

run=c2c and run=timerlat share the same boots. c2c's bound is checked
against the uncertainties the smp: lines printed at bring-up (not against
the job's own arithmetic). Mutations seen to fail: bound_ns from the
receiver's CPU alone (bound 0 < 39), the receiver's stamps left
unconverted (one_way ~1e9 ns), timerlat's histogram not counted (sum 0),
timerlat's latency counted from the arming, not the deadline (50136 ns).
"""
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from helpers import per_cpu_fields

EVENT = re.compile(r"^\s*\S+-\d+\s+\[(\d{3})\] \S{4}\s+\d+\.\d{9}: hwlat_gap: start_ns=(-?\d+) "
                   r"len_ns=(\d+) smi_before=(-?\d+) smi_after=(-?\d+) nmis=(\d+) seq=(\d+)")
ALL_US, ONE_US = 100, 40        # the all-CPU stall and the one-CPU stall
SLACK_TURNS = 4
SHAPE = "hwlat.duration_ms=20 hwlat.width_ms=8 hwlat.window_ms=10"


C2C_N, TL_N = 64, 64
_boots = {}
_captures = Path(tempfile.mkdtemp(prefix="baretrace-lab-"))


def lab_boot(qemu, smp):
    """One icount boot per CPU count runs all three jobs (hwlat, then c2c, then timerlat);
    the tests of each share it. The dump is both text (the events the tests read) and
    binary (the serial capture, r.capture, for baretrace-decode --lab)."""
    if smp not in _boots:
        cap = _captures / f"smp{smp}-{len(list(_captures.iterdir()))}.bin"
        _boots[smp] = qemu(
            f"run=hwlat,c2c,timerlat,dump exit {SHAPE} "
            f"inject.stall={ALL_US}@3,{ONE_US}@14:{smp - 1} c2c.samples={C2C_N} "
            f"timerlat.samples={TL_N} timerlat.period_us=50 trace.events=-*,lab:* "
            "dump=text,bin dump.last=0", smp=smp, icount=True, timeout=240, serial=cap)
        _boots[smp].capture = cap
    return _boots[smp]


def gaps(r):
    """{cpu: [(start_ns, len_ns, smi_before, smi_after, nmis)]} from the dump's events."""
    out = {}
    for l in r.lines:
        m = EVENT.match(l)
        if m:
            out.setdefault(int(m.group(1)), []).append(tuple(int(x) for x in m.groups()[1:6]))
    return out


@pytest.mark.parametrize("smp", [1, 2, 3, 5])
def test_hwlat_injected_stalls_icount(qemu, smp):
    one = smp - 1               # the CPU of the one-CPU stall
    r = lab_boot(qemu, smp)
    assert r.rc == 0, r.out
    cpus = per_cpu_fields(r, r"^hwlat: cpu=\d+ gaps=")
    assert sorted(cpus) == list(range(smp)), r.out
    ev = gaps(r)
    for c, f in cpus.items():
        want = sorted([ALL_US * 1000] + ([ONE_US * 1000] if c == one else []))
        assert f["injected"] == len(want), (c, f)
        assert f["gaps"] == len(want), (c, f, r.out)           # none invented, none missed
        assert f["threshold_ns"] == 1000 and 0 < f["resolution_ns"] < 100, f
        got = sorted(g[1] for g in ev.get(c, []))
        assert len(got) == len(want), (c, got)
        for g, w in zip(got, want):
            assert w <= g <= w + SLACK_TURNS * f["resolution_ns"], (c, got, want, f)
        assert f["max_ns"] == got[-1], (c, f, got)
    m = r.fields(r"^hwlat: machine ")
    assert int(m["gaps"]) == 2, m         # one all-CPU stall, one one-CPU stall
    assert int(m["coincident"]) == (1 if smp > 1 else 0), m
    assert int(m["all_cpus"]) == (1 if smp > 1 else 0), m
    assert int(m["cpus"]) == smp and m["smi"] == "unknown", m
    assert ALL_US * 1000 <= int(m["max_ns"]) <= ALL_US * 1000 + 10 * smp * max(
        f["resolution_ns"] for f in cpus.values()), m
    # The all-CPU stall's gaps overlap on the corrected timeline; the one-CPU one is 11 ms on.
    starts = sorted(g[0] for c in ev for g in ev[c] if g[1] < ALL_US * 1000 * 2 and
                    g[1] >= ALL_US * 1000)
    assert starts[-1] - starts[0] < 1000, starts


def test_hwlat_real_smi_icount(qemu, decoder, tmp_path):
    """One SMI through port 0xB2 (inject.smi=10): a gap whose SMI count went up by one. The
    decoder finds it in the binary dump of the same boot: smi=1 (the CPU's counts at the
    run's ends) and smi_in_gaps=1 (summed over the recorded gaps, counted independently)."""
    cap = tmp_path / "smi.bin"
    r = qemu(f"run=hwlat,dump exit {SHAPE} inject.smi=13 hwlat.threshold_ns=40 "
             "trace.events=-*,lab:* dump=text,bin dump.last=0", smp=1, icount=True,
             cpu="Skylake-Client", timeout=240, serial=cap)
    assert r.rc == 0, r.out
    d = subprocess.run([str(decoder), str(cap), "--lab"], capture_output=True, text=True,
                       timeout=60)
    assert d.returncode == 0, d.stderr
    f = kv(next(l for l in d.stdout.splitlines() if l.startswith("hwlat: cpu=0 gaps=")))
    assert f["smi"] == "1" and f["smi_in_gaps"] == "1", f
    assert kv(next(l for l in d.stdout.splitlines() if l.startswith("hwlat: machine")))[
        "smi"] == "1", d.stdout
    assert r.has(r"^hwlat: cpus=all .* smi_count=msr$"), r.out
    m = r.fields(r"^hwlat: machine ")
    assert m["smi"] == "1", m
    ev = gaps(r)[0]
    smi = [g for g in ev if g[3] - g[2] == 1]
    assert len(smi) == 1, ev
    assert all(g[3] == g[2] for g in ev if g not in smi), ev
    assert 0 < smi[0][1] < 10000, smi       # SeaBIOS's handler: tens of instructions


def test_hwlat_bad_options(qemu):
    """Each bad value: one line naming it and what is accepted; the run goes on with defaults."""
    r = qemu("run=hwlat exit hwlat.cpus=3-1 inject.stall=5@5x hwlat.width_ms=0 "
             "hwlat.threshold_ns=x hwlat.duration_ms=20 inject.stall=7@1:0,", smp=1, timeout=120)
    assert r.rc == 0, r.out
    bad = r.all(r"^cmdline: .*invalid value")
    assert len(bad) == 5, bad
    assert any("hwlat.cpus=3-1" in l and "0,2-4" in l for l in bad), bad
    assert any("inject.stall=5@5x" in l and "<us>@<ms>" in l for l in bad), bad
    assert any("inject.stall=7@1:0," in l and "after the last comma" in l for l in bad), bad
    assert any("hwlat.width_ms=0" in l and "1..1000" in l for l in bad), bad
    assert r.has(r"^hwlat: cpus=all width_ms=50 window_ms=100 duration_ms=20 threshold_ns=auto"), \
        r.out
    f = r.fields(r"^hwlat: cpu=0 gaps=")
    assert f["injected"] == "0", f


# ---- run=c2c and run=timerlat (one boot runs both) ----

C2C_EVENT = re.compile(r"^\s*\S+-\d+\s+\[(\d{3})\] \S{4}\s+\d+\.\d{9}: c2c: from=(\d+) to=(\d+) "
                       r"one_way_ns=(-?\d+) bound_ns=(\d+) rtt_half_ns=(\d+) samples=(\d+)")
TL_EVENT = re.compile(r"^\s*\S+-\d+\s+\[(\d{3})\] \S{4}\s+\d+\.\d{9}: timerlat: latency_ns=(\d+) "
                      r"seq=(\d+)")


def lat_figures(r):
    """The c2c and timerlat summary lines, the figures only (for run-to-run comparison)."""
    return [l for l in r.lines if re.match(r"^(c2c|timerlat): (from|cpu)=", l)]


@pytest.mark.parametrize("smp", [1, 2, 3, 5])
def test_c2c_timerlat_icount(qemu, smp):
    """Per ordered pair one c2c line, figures consistent with the skew bounds the smp: lines
    gave at bring-up (counted independently of the job); per CPU one timerlat line whose
    samples, histogram and events agree."""
    r = lab_boot(qemu, smp)
    assert r.rc == 0, r.out
    uncert = {c: f["uncertainty_cycles"] for c, f in
              per_cpu_fields(r, r"^smp: cpu=\d+ apic_id=").items()}
    assert sorted(uncert) == list(range(smp)), r.out
    lines = [dict((k, int(v)) if k != "meaningful" else (k, v) for k, v in
                  re.findall(r"(\w+)=(-?\w+)", l)) for l in r.all(r"^c2c: from=")]
    assert r.has(rf"^c2c: cpus={smp} pairs={smp * (smp - 1)} samples={C2C_N}$"), r.out
    if smp == 1:
        assert r.has(r"^c2c: no pairs: one CPU online$"), r.out
    pairs = sorted((f["from"], f["to"]) for f in lines)
    assert pairs == [(i, j) for i in range(smp) for j in range(smp) if i != j], pairs
    for f in lines:
        i, j = f["from"], f["to"]
        assert f["samples"] == C2C_N, f
        # icount: TSC = 1 GHz, so a bound of u cycles is u ns (rounded up: +1 at most).
        assert uncert[i] + uncert[j] <= f["bound_ns"] <= uncert[i] + uncert[j] + 2, (f, uncert)
        # The store precedes the arrival in true time: the corrected figure is off by the bound.
        assert -f["bound_ns"] <= f["one_way_ns"] <= 1000000, f
        assert 0 < f["rtt_half_ns"] <= 1000000, f
        assert f["min_ns"] <= f["one_way_ns"] and f["spread_ns"] >= 0, f
        assert f["meaningful"] == ("yes" if f["bound_ns"] < abs(f["one_way_ns"]) else "no"), f
    ev = [tuple(int(x) for x in m.groups()) for m in map(C2C_EVENT.match, r.lines) if m]
    assert sorted((e[1], e[2]) for e in ev) == pairs, ev
    for e in ev:
        f = next(f for f in lines if (f["from"], f["to"]) == (e[1], e[2]))
        assert (e[3], e[4], e[5], e[6]) == (f["one_way_ns"], f["bound_ns"], f["rtt_half_ns"],
                                            f["samples"]), (e, f)
    assert r.has(rf"^c2c: done pairs={smp * (smp - 1)} failed=0$") or smp == 1, r.out

    tl = per_cpu_fields(r, r"^timerlat: cpu=\d+ samples=")
    assert sorted(tl) == list(range(smp)), r.out
    tev = {}
    for m in map(TL_EVENT.match, r.lines):
        if m:
            tev.setdefault(int(m.group(1)), []).append((int(m.group(2)), int(m.group(3))))
    for c, f in tl.items():
        assert f["samples"] == TL_N and f["missed"] == 0, f
        assert f["max_ns"] >= f["p99_ns"] >= f["p50_ns"] >= 0, f
        # icount: the interrupt is taken within a translation block of the deadline, far
        # inside the 50 us period; a latency counted from the arming would be >= 50 us.
        assert f["max_ns"] < 50000 and f["early"] == 0, f
        hist = dict(map(int, kv.split(":")) for kv in
                    r.has(rf"^timerlat: cpu={c} hist").split("hist")[1].split())
        assert sum(hist.values()) == TL_N, hist
        assert max(hist) == f["max_ns"].bit_length() - 1 if f["max_ns"] > 1 else True, (hist, f)
        lat = [x for x, _ in tev.get(c, [])]
        assert [s for _, s in tev[c]] == list(range(1, TL_N + 1)), tev[c]
        assert max(lat) == f["max_ns"], (lat, f)
        assert sorted(lat)[(TL_N * 99 + 99) // 100 - 1] == f["p99_ns"], (lat, f)


def test_c2c_timerlat_reproducible_icount(qemu):
    """icount is deterministic: a second 2-CPU boot prints the same c2c and timerlat figures."""
    first = lab_boot(qemu, 2)
    assert first.rc == 0, first.out
    _boots.pop(2)
    r = lab_boot(qemu, 2)
    assert r.rc == 0, r.out
    assert lat_figures(r) == lat_figures(first), (lat_figures(r), lat_figures(first))


def test_c2c_timerlat_bad_options_and_the_timer_given_back(qemu):
    """Each bad value: the standard line; the jobs run with their defaults. And after
    run=timerlat the boot CPU is watched again: run=hang right after it is reported by the
    watchdog (whose deadline is the LAPIC timer timerlat borrowed). Mutation seen to fail:
    lapic_timer_stop() left out (the watchdog never fired; QEMU ran to its timeout)."""
    r = qemu("run=c2c,timerlat,hang exit c2c.samples=0 timerlat.samples=x timerlat.period_us=0 "
             "c2c.samples=100001 hang.cpu=0 watchdog.ms=400", smp=1, timeout=120)
    bad = r.all(r"^cmdline: .*invalid value")
    assert len(bad) == 4, bad
    assert any("c2c.samples=0" in l and "1..100000" in l for l in bad), bad
    assert any("c2c.samples=100001" in l for l in bad), bad
    assert any("timerlat.samples=x" in l for l in bad), bad
    assert any("timerlat.period_us=0" in l and "1..1000000" in l for l in bad), bad
    assert r.has(r"^c2c: cpus=1 pairs=0 samples=1000$"), r.out
    assert r.has(r"^timerlat: samples=1000 period_us=100 mode="), r.out
    assert r.has(r"^timerlat: cpu=0 samples=1000 "), r.out
    assert r.rc == 1, r.out
    assert r.has(r"^watchdog: cpu=0 stuck for \d+ ms at job_hang_spin\+0x"), r.out


# ---- baretrace-decode --lab: the same figures, computed on the host from the events ----

def kv(line):
    """A summary line's key=value pairs (values as strings)."""
    return dict(re.findall(r"(\w+)=(\S+)", line))


@pytest.mark.parametrize("smp", [1, 2, 3, 5])
def test_decode_lab_agrees_with_the_kernel_icount(qemu, decoder, smp):
    """The decoder's summary of the boot's binary dump (lab events only, and the CLOCK
    frames' skew bounds) gives every figure the kernel's lines give: hwlat per CPU and
    machine-wide (its own merge of the recorded gaps), each c2c pair with the bound
    recomputed from the capture's clocks, timerlat's count, max, p99, p50 and histogram
    (its own sort). No new boot: the boots of the tests above, their serial capture.
    Mutations seen to fail (smp=2): lab:hwlat_cpu recorded before the widths (injected=0
    against 1), the decoder's c2c bound from one CPU's CLOCK frame twice (clock_bound_ns 0
    against 40), timerlat events all taken as CPU 0's (one line, not two). The merge's
    widening and the percentiles' rank are mutated in test_lab_summary (host), since
    under icount the all-CPU stall's gaps overlap outright and 64 equal-ish latencies
    hide a rank off by one."""
    r = lab_boot(qemu, smp)
    assert r.rc == 0, r.out
    d = subprocess.run([str(decoder), str(r.capture), "--lab"], capture_output=True,
                       text=True, timeout=120)
    assert d.returncode == 0, d.stderr
    dec = d.stdout.splitlines()
    assert dec[0].startswith("lab: dump=1 ") and kv(dec[0])["skipped"] == "0", dec[0]

    def lines(src, pat):
        return [l for l in src if re.match(pat, l)]
    # hwlat: per CPU, the figures the kernel printed; the histograms alike.
    kcpu = {kv(l)["cpu"]: kv(l) for l in lines(r.lines, r"^hwlat: cpu=\d+ gaps=")}
    dcpu = {kv(l)["cpu"]: kv(l) for l in lines(dec, r"^hwlat: cpu=\d+ gaps=")}
    assert sorted(dcpu) == sorted(kcpu) and len(kcpu) == smp, (dcpu, kcpu)
    for c, k in kcpu.items():
        for f in ("gaps", "max_ns", "threshold_ns", "resolution_ns", "injected"):
            assert dcpu[c][f] == k[f], (c, f, dcpu[c], k)
    assert lines(dec, r"^hwlat: cpu=\d+ hist") == lines(r.lines, r"^hwlat: cpu=\d+ hist")
    km, dm = kv(r.has(r"^hwlat: machine ")), kv(lines(dec, r"^hwlat: machine ")[0])
    assert dm == km, (dm, km)
    # c2c: every pair's figures; the bound again from the capture's CLOCK frames.
    kp = {(f["from"], f["to"]): f for f in map(kv, lines(r.lines, r"^c2c: from=\d+ to="))}
    dp = {(f["from"], f["to"]): f for f in map(kv, lines(dec, r"^c2c: from=\d+ to="))}
    assert sorted(dp) == sorted(kp) and len(kp) == smp * (smp - 1), (dp, kp)
    for p, k in kp.items():
        for f in ("one_way_ns", "bound_ns", "rtt_half_ns", "samples", "meaningful"):
            assert dp[p][f] == k[f], (p, f, dp[p], k)
        assert dp[p]["clock_bound_ns"] == k["bound_ns"], (p, dp[p], k)
    assert len(lines(dec, r"^c2c: matrix from=")) == (smp if smp > 1 else 0), dec
    # timerlat: per CPU.
    kt = {kv(l)["cpu"]: kv(l) for l in lines(r.lines, r"^timerlat: cpu=\d+ samples=")}
    dt = {kv(l)["cpu"]: kv(l) for l in lines(dec, r"^timerlat: cpu=\d+ samples=")}
    assert sorted(dt) == sorted(kt) and len(kt) == smp, (dt, kt)
    for c, k in kt.items():
        for f in ("samples", "max_ns", "p99_ns", "p50_ns"):
            assert dt[c][f] == k[f], (c, f, dt[c], k)
    assert lines(dec, r"^timerlat: cpu=\d+ hist") == lines(r.lines, r"^timerlat: cpu=\d+ hist")


def test_decode_lab_bad_input(qemu, decoder, tmp_path):
    """A cut capture, a foreign file, a capture with no lab events: one line each on stderr
    naming the problem, a nonzero status, no crash (a signal would be a negative status)."""
    r = lab_boot(qemu, 2)
    raw = r.capture.read_bytes()
    cases = {
        "cut": (raw[: raw.index(b"\xbaTR\xce") + (len(raw) - raw.index(b"\xbaTR\xce")) // 2],
                "damaged or cut short"),
        "foreign": (bytes(range(256)) * 64, "no trace dump frame"),
    }
    for name, (data, want) in cases.items():
        f = tmp_path / f"{name}.bin"
        f.write_bytes(data)
        d = subprocess.run([str(decoder), str(f), "--lab"], capture_output=True, text=True,
                           timeout=60)
        assert d.returncode > 0 and want in d.stderr, (name, d.returncode, d.stderr)
        assert "Traceback" not in d.stderr and "Sanitizer" not in d.stderr, d.stderr
    # A capture without lab events: the tool tests' (tests/tools/captures/), no boot.
    demo = Path(__file__).parents[1] / "tools" / "captures" / "demo-discard.bin"
    d = subprocess.run([str(decoder), str(demo), "--lab"], capture_output=True, text=True,
                       timeout=60)
    assert d.returncode == 3 and "no lab events" in d.stderr, (d.returncode, d.stderr)
    assert len(d.stderr.strip().splitlines()) == 1 and d.stdout == "", (d.stderr, d.stdout)
