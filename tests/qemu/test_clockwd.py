"""The clock watchdog (clock.watchdog_ms=): drift and skew re-measure while tracing.

Every run is under icount, where the truth is known independently of the
kernel: the TSC counts exactly 10^9 per virtual second and the HPET and
PM timer count at their nominal rates, so the TSC's true rate against a
reference is 1 GHz (times 1 + p for an injected drift of p ppm).  The
watchdog's drift figure is (measured - calibrated) / calibrated, so the
test predicts it from the calibration line alone, (truth - base) / base,
and asks the kernel's figure to lie within the kernel's own bound of that.

Mutations each test was seen to fail on (the bound's arithmetic itself is
tested on the host, tests/host/test_clockwd.c, with a model at the worst
read placements; under icount every figure is far inside it, so these
tests cannot tell a bound a little too tight from a right one):
- a drift marks only the boot CPU: test_drift_above_bound ({0: 'no', 1: 'yes'});
- the drift's sign flipped: test_drift_above_bound (-49.811 ppm printed,
  +50.0 predicted);
- the step applied to every AP: test_step_on_one_ap (two reports);
- the reference's state not asked (the code before inject.hpet_fault=):
  test_hpet_fault_* (no line, checks=0 skipped=3, trusted=yes);
- no switch to the other reference: test_hpet_fault_switches_to_the_pm_timer
  (ref=none, the drift unreported);
- rate_watched=yes with no reference left: test_hpet_fault_with_no_reference_left;
- the tracer not registering as the watchdog's client: test_normal_reads_zero
  (checks=0);
"""
import re
import subprocess

import pytest

from conftest import DECODE, make_locked
from helpers import ppb

ICOUNT_HZ = 10**9
# One demo of 200 ms, checked every 40 ms: four or five intervals.
BASE = "run=demo exit demo.ms=200 clock.watchdog_ms=40"
SHORT = "run=demo exit demo.ms=130 clock.watchdog_ms=40"


def base_figure(r, ref):
    """The TSC's rate against ref at calibration, and its bound (ppb)."""
    f = r.fields(rf"^tsc: ref={ref} freq_hz=")
    return int(f["freq_hz"]), ppb(f["err_ppm"])


def predicted_ppb(base_hz, drift_ppm=0):
    """The figure an exact watchdog would print: (truth - base) / base."""
    truth = ICOUNT_HZ * (10**6 + drift_ppm) / 10**6
    return (truth - base_hz) / base_hz * 1e9


def summary(r):
    s = r.fields(r"^clock: watchdog: ref=")
    return s, {int(c["cpu"]): c for c in
               (dict(re.findall(r"(\w+)=(\S+)", l)) for l in r.all(r"^clock: watchdog: cpu=\d+ skew_checks="))}


def trusted(r):
    """{cpu: 'yes'|'no'} from the clock command's lines after the demo."""
    return {int(c): t for c, t in re.findall(r"^clock: cpu=(\d+) mult=.* trusted=(\w+)$", r.out, re.M)}


def header_untrusted(text):
    """CPUs the text dump's header marks clock=untrusted."""
    return {int(c) for c in re.findall(r"^# cpu=(\d+) .*clock=untrusted", text, re.M)}


@pytest.mark.parametrize("n,extra", [
    (1, ""),
    # Below the 10 ms minimum: said, and 10 ms used (more intervals, wider bounds).
    (2, "clock.watchdog_ms=5"),
    (3, ""),
])
def test_normal_reads_zero_within_bound(qemu, n, extra):
    r = qemu(f"{BASE} clock=hpet dump=text dump.last=4 {extra}", smp=n, icount=True, timeout=240)
    assert r.rc == 0, r.out
    on = r.fields(r"^clock: watchdog: on: ")
    assert on["ref"] == "hpet"
    interval = 10 if extra else 40
    if extra:
        assert r.has(r"^clock: watchdog: clock\.watchdog_ms=5 is below 10 ms, .*; using 10$"), r.out
    assert int(on["interval_ms"]) == interval
    base_hz, base_err = base_figure(r, "hpet")
    s, cpus = summary(r)
    # The demo lasts 200 ms: an interval ends every `interval` ms after the first read.
    assert 200 // interval - 2 <= int(s["checks"]) <= 200 // interval, s
    assert int(s["skipped"]) == 0 and int(s["exceeded"]) == 0, s
    bound = ppb(s["bound_ppm"])
    # The bound holds the calibration's own, and is a few tenths of a ppm here.
    assert base_err < bound < base_err + 2000 * 40 // interval, s
    for fig in (ppb(s["drift_ppm"]), ppb(s["max_drift_ppm"])):
        assert abs(fig) <= bound, s
        # The kernel's figure against the one icount's truth predicts.
        assert abs(fig - predicted_ppb(base_hz)) <= bound, (s, base_hz)
    assert not r.has(r"exceeds bound"), r.out
    # Each AP re-measured at every check, answered, no change beyond its bound.
    assert sorted(cpus) == list(range(1, n))
    for c, f in cpus.items():
        assert f["skew_checks"] == s["checks"] and f["missed"] == "0", f
        assert f["changed"] == "no", f
        assert abs(int(f["max_change_cycles"])) <= int(f["bound_cycles"]), f
    assert trusted(r) == {c: "yes" for c in range(n)}, r.out
    assert r.has(r"^# cpu=0 entries="), r.out
    assert header_untrusted(r.out) == set()


def test_drift_above_bound_marks_every_cpu(qemu, tmp_path):
    """50 ppm injected: reported once with a figure within the bound of 50 ppm
    (plus the calibration's offset from the truth), every CPU untrusted in
    the kernel's text dump and in the decoded binary dump; no skew change
    (all CPUs drift alike)."""
    cap = tmp_path / "serial.bin"
    # Every TSC read traps with the option: a shorter demo (three reads, two intervals).
    r = qemu(f"{SHORT} clock=hpet inject.tsc_drift_ppm=50 dump=text,bin dump.last=4", smp=2,
             icount=True, timeout=240, serial=cap)
    assert r.rc == 0, r.out
    rep = r.all(r"^clock: watchdog: tsc drift ")
    assert len(rep) == 1, r.out
    m = re.fullmatch(r"clock: watchdog: tsc drift (-?\d+\.\d{3}) ppm against hpet over (\d+) ms "
                     r"exceeds bound (\d+\.\d{3}) ppm: clocks marked untrusted", rep[0])
    assert m, rep[0]
    fig, ms, bound = ppb(m[1]), int(m[2]), ppb(m[3])
    base_hz, _ = base_figure(r, "hpet")
    assert abs(fig - predicted_ppb(base_hz, 50)) <= bound, (rep[0], base_hz)
    assert fig > bound and 38 <= ms <= 42
    s, cpus = summary(r)
    assert int(s["exceeded"]) == int(s["checks"]) >= 2, s
    assert cpus[1]["changed"] == "no", cpus
    assert not r.has(r"tsc skew changed"), r.out
    assert trusted(r) == {0: "no", 1: "no"}, r.out
    raw = cap.read_bytes().replace(b"\r\n", b"\n")
    start = raw.index(b"# tracer: baretrace")
    ktext = raw[start:raw.index(b"\xbaTR\xce", start)].decode()
    assert header_untrusted(ktext) == {0, 1}, ktext[:1500]
    assert "# U: clock=untrusted: " in ktext and "clock watchdog saw it drift" in ktext
    make_locked("tools")
    d = subprocess.run([str(DECODE), str(cap), "--text", str(tmp_path / "dec.txt")],
                       capture_output=True, timeout=120)
    assert d.returncode == 0, d.stderr
    dec = (tmp_path / "dec.txt").read_text()
    assert header_untrusted(dec) == {0, 1}, dec[:1500]
    # The U flag on the events of both CPUs.
    flags = re.findall(r"^\s*\S+-\d+\s+\[(\d{3})\] (\S{4}) ", dec, re.M)
    assert {int(c) for c, f in flags if "U" in f} == {0, 1}, flags[:8]


def test_drift_below_bound_is_not_reported(qemu):
    """3 ppm injected against the PM timer (calibration bound some ppm): the
    figure follows the drift but stays inside the bound, nothing reported."""
    r = qemu("run=demo exit demo.ms=130 clock.watchdog_ms=60 clock=pmtimer "
             "inject.tsc_drift_ppm=3 dump=none", smp=1, icount=True, timeout=240)
    assert r.rc == 0, r.out
    assert r.fields(r"^clock: watchdog: on: ")["ref"] == "pmtimer"
    base_hz, base_err = base_figure(r, "pmtimer")
    s, _ = summary(r)
    bound = ppb(s["bound_ppm"])
    want = predicted_ppb(base_hz, 3)
    # The premise: an exact watchdog would see less than the bound.
    assert abs(want) < bound, (want, s)
    assert int(s["checks"]) >= 2 and int(s["exceeded"]) == 0, s
    for fig in (ppb(s["drift_ppm"]), ppb(s["max_drift_ppm"])):
        assert abs(fig - want) <= bound, (s, base_hz)
    assert not r.has(r"exceeds bound"), r.out
    assert trusted(r) == {0: "yes"}


def test_step_on_one_ap(qemu):
    """A 10^6-cycle step on cpu 2 once the watchdog starts: cpu 2's change is
    reported, within its bound of 10^6, and it alone is untrusted."""
    step = 10**6
    r = qemu(f"{SHORT} clock=hpet inject.tsc_step={step} inject.tsc_step_cpu=2 dump=none",
             smp=3, icount=True, timeout=240)
    assert r.rc == 0, r.out
    assert r.has(rf"^tsc: inject\.tsc_step={step}: cpu=2's TSC jumped"), r.out
    rep = r.all(r"tsc skew changed")
    assert len(rep) == 1, r.out
    m = re.fullmatch(r"clock: watchdog: cpu=2 tsc skew changed by (-?\d+) cycles \(from (-?\d+) "
                     r"to (-?\d+)\) exceeds bound (\d+) cycles: clock marked untrusted", rep[0])
    assert m, rep[0]
    change, old, new, bound = map(int, m.groups())
    assert new - old == change and abs(change - step) <= bound, rep[0]
    smp2 = r.fields(r"^smp: cpu=2 apic_id=")
    assert int(smp2["tsc_skew_cycles"]) == old
    s, cpus = summary(r)
    assert cpus[2]["changed"] == "yes" and cpus[1]["changed"] == "no", cpus
    assert abs(int(cpus[1]["max_change_cycles"])) <= int(cpus[1]["bound_cycles"])
    assert int(s["exceeded"]) == 0 and not r.has(r"tsc drift"), s
    assert trusted(r) == {0: "yes", 1: "yes", 2: "no"}, r.out


def test_bad_values(qemu):
    """Each bad value named, with what is accepted; the last good one used.
    No icount, no demo: the options are read before anything runs."""
    r = qemu("clock.watchdog_ms=abc clock.watchdog_ms=60001 clock.watchdog_ref=pit "
             "inject.tsc_drift_ppm=500001 inject.tsc_step_cpu=256 inject.pm_timer_bits=25 "
             "inject.pmtimer_ppm=500001 inject.cpuid_hz=5 exit", smp=1, timeout=60)
    assert r.rc == 0, r.out
    for opt, val, why in [
        ("clock.watchdog_ms", "abc", r""),
        ("clock.watchdog_ms", "60001", r".*0\.\.60000"),
        ("clock.watchdog_ref", "pit", r".*auto.*hpet.*pmtimer"),
        ("inject.tsc_drift_ppm", "500001", r".*-500000\.\.500000"),
        ("inject.tsc_step_cpu", "256", r".*0\.\.255"),
        ("inject.pm_timer_bits", "25", r".*fadt.*24.*32"),
        ("inject.pmtimer_ppm", "500001", r".*-500000\.\.500000"),
        ("inject.cpuid_hz", "5", r""),
    ]:
        assert r.has(rf"^cmdline: {re.escape(opt)}={val}: invalid value: {why}.*; left unchanged$"), \
            (opt, r.out)
    assert not r.has(r"inject\.tsc_drift_ppm=.*rewritten"), r.out
    assert not r.has(r"^(tsc|pmtimer): inject\.(cpuid_hz|pmtimer_ppm|pm_timer_bits)="), r.out


@pytest.mark.parametrize("claim", [24, 32])
def test_pm_timer_width_claim(shell, claim):
    """QEMU's PM timer has 24 bits; inject.pm_timer_bits= makes the FADT claim
    24 or 32.  Whatever the claim, the kernel counts 24 bits (as Linux does,
    ACPI_PM_MASK): a 32-bit claim must not let an interval span a wrap of
    the real 24-bit counter (4.69 s).  clock.watchdog_ms=6000 is longer than
    that wrap: the kernel must cap it to a quarter of the 24-bit wrap (1171
    ms) and every interval must then read the truth within its bound.
    Before the fix, the 32-bit claim kept 6000 ms and reported a false
    'tsc drift 3566904.709 ppm' with every clock untrusted.

    A shell at icount (sleep=off): its idle hlt lets virtual time run on at
    no cost, and the test waits for intervals, counted by the kernel, not
    for wall-clock time.  Mutations: the mask taken from the claim (the old
    code) fails claim=32 (seen: no cap, the false drift report)."""
    s = shell(f"run=shell clock=pmtimer clock.watchdog_ms=6000 inject.pm_timer_bits={claim}",
              smp=1, timeout=300, boot_timeout=200, opts=("--icount",))
    out = ""
    for _ in range(400):            # each command lets virtual time run on
        out = s.cmd("clock")
        m = re.search(r"^clock: watchdog: ref=\S+ .*checks=(\d+) skipped=(\d+)", out, re.M)
        assert m, out
        if int(m.group(1)) + int(m.group(2)) >= 6:  # > 4.69 s of intervals: a wrap crossed
            break
    s.send(b"poweroff\r")
    s.close()
    text = s.text()
    stamp = r"^\[ *\d+\.\d+\] "
    assert re.search(rf"{stamp}pmtimer: inject\.pm_timer_bits={claim}: taking the FADT to claim "
                     rf"{claim} bits", text, re.M), text[-3000:]
    assert re.search(stamp + r"clock: watchdog: clock\.watchdog_ms=6000 is too long for the pmtimer's "
                     r"24-bit counter; using 1171$", text, re.M), text[-3000:]
    assert not re.search(r"exceeds bound", text), text[-3000:]
    f = dict(re.findall(r"(\w+)=(\S+)", re.search(stamp + r"tsc: ref=pmtimer freq_hz=.*$", text,
                                                   re.M).group(0)))
    base_hz = int(f["freq_hz"])
    sm = dict(re.findall(r"(\w+)=(\S+)", re.findall(r"^clock: watchdog: ref=.*$", out, re.M)[-1]))
    assert sm["interval_ms"] == "1171" and int(sm["skipped"]) == 0, sm
    assert int(sm["checks"]) >= 6 and int(sm["exceeded"]) == 0, sm
    want = predicted_ppb(base_hz)
    for fig in (ppb(sm["drift_ppm"]), ppb(sm["max_drift_ppm"])):
        assert abs(fig - want) <= ppb(sm["bound_ppm"]), (sm, base_hz)
    assert re.findall(r"^clock: cpu=0 .* trusted=(\w+)$", out, re.M) == ["yes"], out


HPET_HZ = 10**8    # QEMU's HPET: period 10,000,000 fs


def ref_fault_line(r):
    """The one line saying the watchdog's reference failed, parsed."""
    lines = r.all(r"^clock: watchdog: \S+ (stopped|went backwards):")
    assert len(lines) == 1, r.out
    m = re.fullmatch(r"clock: watchdog: (\S+) (stopped|went backwards): (-?\d+) ticks in "
                     r"(\d+) ms by the TSC, at least (\d+) expected; (.*)", lines[0])
    assert m, lines[0]
    return m[1], m[2], int(m[3]), int(m[4]), int(m[5]), m[6]


@pytest.mark.parametrize("fault", ["stop", "backwards"])
def test_hpet_fault_switches_to_the_pm_timer(qemu, fault):
    """The HPET, the watchdog's reference, freezes or counts down as the
    watchdog starts, while every TSC runs 1000 ppm fast.  Before: every
    interval skipped (checks=0), not a word, the drift unreported and
    every clock trusted=yes.  Now: one line naming the HPET and what it
    did, at the first check; the watchdog goes on against the PM timer
    (calibrated too: clock=auto), where the drift is reported within its
    bound of the figure icount's truth predicts, and every CPU is untrusted."""
    r = qemu(f"{SHORT} clock.watchdog_ref=hpet inject.hpet_fault={fault} "
             "inject.tsc_drift_ppm=1000 dump=none", smp=2, icount=True, timeout=240)
    assert r.rc == 0, r.out
    assert r.fields(r"^clock: watchdog: on: ")["ref"] == "hpet"
    assert r.has(rf"^hpet: inject\.hpet_fault={fault}: the counter "), r.out
    ref, what, ticks, ms, expected, then = ref_fault_line(r)
    assert ref == "hpet" and then == "switching to pmtimer", r.out
    # The first check, one interval after the first read.
    assert 38 <= ms <= 42, ms
    # Half the HPET's ticks in that time (the TSC at most twice fast), ms rounded.
    assert abs(expected - ms * HPET_HZ // 2000) <= HPET_HZ // 2000, (expected, ms)
    if fault == "stop":
        assert what == "stopped" and ticks == 0, r.out
    else:
        # Counting down at its own rate: minus the interval's ticks (1 ms of rounding).
        assert what == "went backwards" and abs(ticks + ms * HPET_HZ // 1000) <= HPET_HZ // 1000, \
            (ticks, ms)
    rep = r.all(r"^clock: watchdog: tsc drift ")
    assert len(rep) == 1, r.out
    m = re.fullmatch(r"clock: watchdog: tsc drift (-?\d+\.\d{3}) ppm against pmtimer over (\d+) "
                     r"ms exceeds bound (\d+\.\d{3}) ppm: clocks marked untrusted", rep[0])
    assert m, rep[0]
    base_hz, _ = base_figure(r, "pmtimer")
    assert abs(ppb(m[1]) - predicted_ppb(base_hz, 1000)) <= ppb(m[3]), (rep[0], base_hz)
    s, cpus = summary(r)
    assert s["ref"] == "pmtimer" and s["rate_watched"] == "yes", s
    assert int(s["checks"]) >= 1 and int(s["exceeded"]) == int(s["checks"]), s
    assert int(s["skipped"]) == 1, s          # the interval the HPET failed in
    assert cpus[1]["changed"] == "no", cpus
    assert trusted(r) == {0: "no", 1: "no"}, r.out


def test_hpet_fault_with_no_reference_left(qemu):
    """clock=hpet: the PM timer did not calibrate the TSC, so when the HPET
    stops there is nothing left to compare the TSC's rate with.  The
    watchdog says so at once, and from then on its summary shows no
    reference and the rate unwatched; the skews are still re-measured."""
    r = qemu(f"{SHORT} clock=hpet inject.hpet_fault=stop inject.tsc_drift_ppm=1000 dump=none",
             smp=2, icount=True, timeout=240)
    assert r.rc == 0, r.out
    assert not r.has(r"^tsc: ref=pmtimer freq_hz="), r.out
    ref, what, ticks, _, _, then = ref_fault_line(r)
    assert (ref, what, ticks) == ("hpet", "stopped", 0), r.out
    assert then == "no other reference calibrated the TSC: its rate is not watched from here on"
    assert not r.has(r"tsc drift"), r.out
    s, cpus = summary(r)
    assert s["ref"] == "none" and s["rate_watched"] == "no", s
    assert int(s["checks"]) == 0 and int(s["skipped"]) == 1, s
    # Skews need no reference: re-measured at every check after the first read.
    assert int(cpus[1]["skew_checks"]) >= 2 and cpus[1]["changed"] == "no", cpus
