"""TSC calibration against the PIT, HPET and PM timer, and the clock built on it."""
import re

import pytest

ICOUNT_HZ = 1_000_000_000   # under -icount shift=0 the TSC is exactly 1 GHz


def ppm(a, b):
    return abs(a - b) / b * 1e6


def tsc_lines(r):
    return {f["ref"]: f for f in (r.fields(re.escape(l)) for l in r.all(r"^tsc: ref=\w+ freq_hz="))}


def check_summary(r):
    s = r.fields(r"^tsc: freq_hz=")
    assert re.fullmatch(r"\d+\.\d{3}", s["err_ppm"]), s
    assert s["invariant"] in ("yes", "no")
    return s


def test_icount_calibration_is_exact_and_deterministic(qemu):
    runs = [qemu("run=ktest exit", icount=True, timeout=240) for _ in range(2)]
    for r in runs:
        assert r.rc == 0, r.out
        check_summary(r)
        refs = tsc_lines(r)
        for name in ("pit", "hpet"):
            hz = int(refs[name]["freq_hz"])
            assert ppm(hz, ICOUNT_HZ) < 2.0, (name, hz)
            # The stated bound covers the true error.
            assert ppm(hz, ICOUNT_HZ) <= float(refs[name]["err_ppm"]), refs[name]
        clock = r.fields(r"^clock: cpu=0 ")
        assert int(clock["shift"]) > 0 and int(clock["offset_ns"]) == 0
        # mult / 2^shift is ns per cycle: 1.0 at 1 GHz.
        assert abs(int(clock["mult"]) / 2 ** int(clock["shift"]) - 1.0) < 2e-6
        assert r.ktap()["tsc_matches_hpet_100ms"]
    # icount runs are bit-for-bit reproducible: the same calibration lines.
    calib = [[l for l in r.lines if l.startswith("tsc:") or l.startswith("clock:")] for r in runs]
    assert calib[0] == calib[1]


def test_tcg_pit_and_hpet_agree(qemu):
    r = qemu("run=ktest exit")
    assert r.rc == 0, r.out
    s = check_summary(r)
    assert s["ref"] in ("pit", "hpet", "pmtimer")
    refs = tsc_lines(r)
    pit, hpet = int(refs["pit"]["freq_hz"]), int(refs["hpet"]["freq_hz"])
    assert ppm(pit, hpet) < 1000, (pit, hpet)          # within 0.1%
    # The winner is the reference with the smallest bound.
    best = min(refs.values(), key=lambda f: float(f["err_ppm"]))
    assert best["ref"] == s["ref"]
    assert r.has(r"^tsc: invariant=no tsc_adjust=\w+ hypervisor=\"TCGTCGTCGTCG\"$")
    assert r.has(r"^tsc: warning: the TSC is not known to be invariant")
    # printk's clock runs once calibrated.
    assert re.search(r"^\[\s*0\.0*[1-9]\d*\] run: done", r.out, re.M) or \
        re.search(r"^\[\s*[1-9]\d*\.\d{6}\] run: done", r.out, re.M), r.out
    assert r.ktap()["tsc_matches_hpet_100ms"]


def test_no_hpet_falls_back(qemu):
    r = qemu("run=ktest exit", no_hpet=True)
    assert r.rc == 0, r.out
    assert r.has(r"^tsc: ref=hpet absent: no valid ACPI HPET table$")
    s = check_summary(r)
    assert s["ref"] in ("pit", "pmtimer")
    assert "hpet" not in tsc_lines(r)
    assert r.has(r"^ok \d+ tsc_matches_hpet_100ms # SKIP no HPET$")


def test_clock_hpet_without_hpet_says_why_and_falls_back(qemu):
    r = qemu("run=ktest ktest=tsc_matches_hpet_100ms exit clock=hpet", no_hpet=True)
    assert r.rc == 0, r.out
    assert r.has(r"^tsc: clock=hpet: no valid ACPI HPET table; falling back to clock=auto$")
    assert check_summary(r)["ref"] in ("pit", "pmtimer")


def test_clock_pit_measures_only_the_pit(qemu):
    r = qemu("run=ktest ktest=tsc_matches_hpet_100ms exit clock=pit")
    assert r.rc == 0, r.out
    assert check_summary(r)["ref"] == "pit"
    assert set(tsc_lines(r)) == {"pit"}


def test_user_frequency_skips_calibration(qemu):
    r = qemu("run=ktest ktest=tsc_matches_hpet_100ms exit tsc_hz=2000000000")
    assert r.has(r"^tsc: freq_hz=2000000000 ref=user err_ppm=0\.000 invariant=no$"), r.out
    assert not tsc_lines(r)
    clock = r.fields(r"^clock: cpu=0 ")
    assert abs(int(clock["mult"]) / 2 ** int(clock["shift"]) - 0.5) < 1e-6


def test_refinement_window(qemu):
    r = qemu("run=ktest ktest=tsc_matches_hpet_100ms exit clock=hpet tsc.refine_ms=300")
    assert r.rc == 0, r.out
    f = r.fields(r"^tsc: refine ref=hpet window_ms=300 ")
    assert int(f["freq_hz"]) > 0
    # The refined result is used only when its bound is the better one.
    s = check_summary(r)
    assert float(s["err_ppm"]) <= float(f["err_ppm"])
    assert ppm(int(f["freq_hz"]), int(s["freq_hz"])) < 1000


def test_bad_clock_options(qemu):
    r = qemu("run=ktest ktest=tsc_matches_hpet_100ms exit tsc_hz=abc tsc_hz=0 clock=foo tsc.refine_ms=-5")
    assert r.rc == 0, r.out
    assert r.has(r"^cmdline: tsc_hz=abc: invalid value: not a number; accepted: integer 1000000\.\.20000000000; left unchanged$")
    assert r.has(r"^cmdline: tsc_hz=0: invalid value: out of range; accepted: 1000000\.\.20000000000; left unchanged$")
    assert r.has(r"^cmdline: clock=foo: invalid value: accepted: auto\|pit\|hpet\|pmtimer\|cpuid; left unchanged$")
    assert r.has(r"^cmdline: tsc\.refine_ms=-5: invalid value: .*accepted: integer 0\.\.10000; left unchanged$")
    # Defaults: calibration runs in auto mode.
    assert check_summary(r)["ref"] in ("pit", "hpet", "pmtimer")
