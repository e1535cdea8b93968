"""Hard-lockup watchdog: run=hang spins one CPU with interrupts off; the
watchdog (each watched CPU's LAPIC timer as an NMI deadline, arch/x86/watchdog.c)
reports it, the panic path stops the other CPUs, dumps the trace and fails
the run.

run=hang records hang.marks (16) bench events with seq 1..16 on the CPU that
hangs, just before it disables interrupts: the dump must end, on that CPU,
with exactly those marks.

The bound on the reported time, under icount (one instruction = 1 ns, the
TSC and the LAPIC timer both on virtual time):
  - the report comes at the second deadline sample after the last sign of
    life (arch/x86/include/arch/watchdog_rule.h: a probe at the first, the report
    at the second), each sample P = watchdog.ms / 2 of LAPIC time after the
    previous; the LAPIC timer's rate is measured against the TSC to a few
    ppm, and P is rounded down to whole ticks, so 2P reads watchdog.ms - 1
    or watchdog.ms once converted to whole ms;
  - the last sign of life is the job runner's touch just before the job,
    microseconds before the hang;
  - the NMI is taken when the hung vCPU next runs. icount runs the vCPUs in
    turn, up to about 100 ms of virtual time each: in the worst case each
    other vCPU has a whole slice first. Here the others halt (idle APs) or
    wait with pause, which hands over at once, so the measured delay is 0;
    the bound allows the worst case: (smp - 1) * 100 ms, plus 1 ms.
So: watchdog.ms - 1 <= reported <= watchdog.ms + (smp - 1) * 100 + 1.
Measured: 399 ms for 400 at -smp 1, 2 and 3 with the TSC calibrated by
consensus (the PIT won), 400 at -smp 2 with clock=hpet, as the tests here run.
A report one sample late (599 ms for 400, which an off-by-one in the rule
once gave) fails the bound.

Under TCG the timer and TSC run on host time and the host may deschedule a
vCPU: only watchdog.ms - 1 <= reported, and a report well within the run.
"""
import re

import pytest

from test_persist import PREV, boots

EVENT = re.compile(r"^\s*(task|softirq|irq|nmi)/(\d+)-\d+\s+\[(\d{3})\] (\S{4})\s+(\d+)\.(\d{9}): "
                   r"(\w+): (.*)$")
MARKS = list(range(1, 17))
REPORT = re.compile(r"^watchdog: cpu=(\d+) stuck for (\d+) ms at (\S+)\+0x[0-9a-f]+$")
STOP = re.compile(r"^panic: stopped cpu=(\d+) rip=(\S+)\+0x[0-9a-f]+ in_tracer=(yes|no)"
                  r"( panicked=yes)? flush=-?\d+$")
SLICE_MS = 100      # icount's round-robin slice (docs: ../shared/FACTS.md)
WD_MS = 400         # short, to keep the runs short; the default is tested under TCG
# icount boots calibrate the TSC against the HPET alone: the bound above does
# not depend on the reference (every one gives 1 GHz within 1 ppm there), and
# measuring the PIT and PM timer too took about 4 s of each boot.
ICOUNT_CLOCK = "clock=hpet"


def bench_seqs(r, cpu):
    """The bench seqs of cpu in the panic's text dump, in order."""
    start = r.lines.index("# tracer: baretrace")
    end = next(i for i, l in enumerate(r.lines) if l.startswith("panic: end action="))
    out = []
    for l in r.lines[start:end]:
        m = EVENT.match(l)
        if m and int(m.group(3)) == cpu and m.group(7) == "bench":
            out.append(int(m.group(8).split("=")[1]))
    return out


def check_report(r, cpu, smp, wd_ms):
    """One watchdog report from cpu, its backtrace, the others stopped, the
    dump ending with cpu's marks, failure; returns the reported ms."""
    assert r.rc == 1, r.out
    reports = [REPORT.match(l) for l in r.lines if l.startswith("watchdog: cpu=")]
    assert len(reports) == 1 and reports[0], r.out
    m = reports[0]
    assert int(m.group(1)) == cpu and m.group(3) == "job_hang_spin", m.group(0)
    # The backtrace follows the line and starts where the CPU spins.
    i = r.lines.index(m.group(0))
    assert r.lines[i + 1] == "Backtrace:", r.out
    assert re.match(r"^\s+0x[0-9a-f]{16} job_hang_spin\+0x", r.lines[i + 2]), r.out
    assert r.has(r"^watchdog: end of report$")
    assert not r.has(r"^PANIC"), r.out     # a watchdog report, not a fault's
    assert r.has(rf"^panic: cpu={cpu} in_tracer=no recording=off stopping={smp - 1}$"), r.out
    stops = [STOP.match(l) for l in r.all(r"^panic: stopped cpu=")]
    assert all(stops) and sorted(int(s.group(1)) for s in stops) == \
        sorted(set(range(smp)) - {cpu}), r.out
    assert r.has(rf"^panic: stopped={smp - 1}/{smp - 1} flush=0 dump=text"), r.out
    assert r.has(r"^panic: end action=exit$")
    # The trace ends, on the hung CPU, with every mark it recorded, in order.
    assert bench_seqs(r, cpu)[-len(MARKS):] == MARKS, r.out
    return int(m.group(2))


@pytest.mark.parametrize("smp,cpu", [(1, 0), (2, 1), (3, 2)])
def test_hang_under_icount_is_reported_within_the_bound(qemu, smp, cpu):
    r = qemu(f"run=hang hang.cpu={cpu} watchdog.ms={WD_MS} exit {ICOUNT_CLOCK}", smp=smp,
             icount=True, timeout=120)
    assert r.has(rf"^watchdog: ms={WD_MS} sample_ms=\d+ source=lapic_timer_nmi "
                 r"watched=jobs,calls$"), r.out
    ms = check_report(r, cpu, smp, WD_MS)
    assert WD_MS - 1 <= ms <= WD_MS + (smp - 1) * SLICE_MS + 1, ms


def test_hang_under_ovmf_is_reported_within_the_bound(qemu):
    """The same under OVMF (UEFI firmware hands over a different machine
    state: LAPIC, interrupt controllers, memory map). Plain TCG: OVMF boots
    in about 45 s of test time under icount (../shared/FACTS.md), and the
    exact bound is icount's, tested above. Here the deadline comes from the
    LAPIC timer and the report's figure from the TSC, and with 2 vCPUs
    under plain TCG QEMU's TSC runs up to 3.5% off its timers
    (docs/clock.md: 2200..34551 ppm measured): a report may read up to 5%
    early (396 ms for 400 seen once), never more."""
    r = qemu(f"run=hang hang.cpu=1 watchdog.ms={WD_MS} exit", smp=2, uefi=True, timeout=120)
    assert r.has(r"^boot: loader=.* firmware=uefi "), r.out
    ms = check_report(r, 1, 2, WD_MS)
    assert WD_MS * 95 // 100 <= ms <= WD_MS + 10000, ms


def test_hang_in_x2apic_mode_is_reported_within_the_bound(qemu10):
    """The same with every LAPIC in x2APIC mode (MSRs, not MMIO: the timer's
    NMI delivery, its count and the self-probe IPI take other paths); QEMU 10,
    as in test_x2apic.py."""
    r = qemu10(f"lapic=x2apic run=hang hang.cpu=2 watchdog.ms={WD_MS} exit {ICOUNT_CLOCK}",
               smp=3, cpu="max,+x2apic", icount=True, timeout=180)
    assert r.fields(r"^lapic: mode=")["mode"] == "x2apic", r.out
    ms = check_report(r, 2, 3, WD_MS)
    assert WD_MS - 1 <= ms <= WD_MS + 2 * SLICE_MS + 1, ms


def test_hang_on_the_boot_cpu_under_tcg_with_the_default(qemu):
    r = qemu("run=hang exit", smp=3, timeout=60)
    assert r.has(r"^watchdog: ms=2000 sample_ms=\d+ source=lapic_timer_nmi "), r.out
    ms = check_report(r, 0, 3, 2000)
    # Plain TCG, 3 vCPUs: the TSC may run a few % off the LAPIC timer (as above).
    assert 2000 * 95 // 100 <= ms <= 2000 + 10000, ms


def test_watchdog_off_does_not_report_a_hang(qemu):
    """watchdog.ms=0: a 1.5 s hang on an AP ends by itself, unreported. The
    same hang with the watchdog on is reported (the tests above), so this
    fails if the watchdog cannot be turned off."""
    r = qemu("run=hang hang.cpu=1 hang.ms=1500 watchdog.ms=0 exit", smp=2, timeout=60)
    assert r.has(r"^watchdog: off \(watchdog.ms=0\)$"), r.out
    assert r.has(r"^hang: cpu=1 ended its hang; the watchdog did not report it$"), r.out
    assert not r.has(r"^watchdog: cpu="), r.out
    assert r.rc == 0, r.out


def test_bad_values_are_named(qemu):
    r = qemu("watchdog.ms=abc watchdog.ms=60001 hang.cpu=x run=hang hang.cpu=5 exit", smp=1,
             timeout=60)
    assert r.has(r"^cmdline: watchdog.ms=abc: invalid value: not a number; accepted: "
                 r"integer 0..60000; left unchanged$"), r.out
    assert r.has(r"^cmdline: watchdog.ms=60001: invalid value: out of range; "
                 r"accepted: 0..60000; left unchanged$"), r.out
    assert r.has(r"^cmdline: hang.cpu=x: invalid value: not a number; "), r.out
    assert r.has(r"^watchdog: ms=2000 "), r.out      # the default kept
    assert r.has(r"^hang: hang.cpu=5 is not an online CPU$"), r.out
    assert r.rc == 1 and not r.has(r"^watchdog: cpu="), r.out


def test_persist_says_end_watchdog_after_a_reboot(shell):
    """trace.persist=auto panic.action=reboot: the next boot reads end=watchdog
    and the hung CPU's marks at the end of its trace."""
    s = shell(f"trace.persist=auto run=hang hang.cpu=1 watchdog.ms={WD_MS} "
              "panic.action=reboot panic.dump=none persist.dump.last=0", smp=2, timeout=120,
              boot_timeout=60, opts=["--reboot"], prompt=False)
    s.wait_for(r"persist: this_boot=2 ", 90)
    s.kill()
    b = boots(s.text())
    assert len(b) >= 2, s.text()
    assert re.search(r"persist: end=watchdog sealed this_boot=1$", b[0], re.M), b[0]
    m = PREV.search(b[1])
    assert m and m.group(5) == "watchdog", b[1]
    seqs = [int(x) for x in re.findall(r"\[001\] \S{4}\s+\d+\.\d{9}: bench: seq=(\d+)$", b[1],
                                       re.M)]
    assert seqs[-len(MARKS):] == MARKS, b[1]


def test_hang_asking_syncs_that_expire_is_reported(qemu):
    """hang.sync=1: the hung AP asks a code-change sync at every turn, and the
    boot CPU, waiting with interrupts off, answers none: each sync expires
    after 10 s. Each sync is a watchdog pause; an expired one counts (R5 in
    arch/x86/include/arch/watchdog_rule.h), so the AP is reported soon after the
    first expiry, within the 30 s hang (before the fix the pause's end
    restarted the deadline: 30 s and no report). Plain TCG: bounds loose."""
    r = qemu(f"run=hang hang.cpu=1 hang.sync=1 hang.ms=30000 watchdog.ms={WD_MS} exit", smp=2,
             timeout=120)
    expired = r.out.count("text: cpu=0 did not answer a code-change sync")
    m = [REPORT.match(l) for l in r.lines if REPORT.match(l)]
    assert len(m) == 1 and m[0].group(1) == "1", r.out
    # the sample lands in text_sync() or in text_sync_answer(), which its wait
    # loop calls; either way the sync's wait is the innermost text_sync frame
    assert m[0].group(3) in ("text_sync", "text_sync_answer"), r.out
    assert r.has(r"^\s*0x[0-9a-f]+ text_sync\+0x[0-9a-f]+$"), r.out
    assert 1 <= expired <= 2, r.out      # reported after the first expiry (the second: slack)
    assert 10000 <= int(m[0].group(2)) < 30000, r.out
    assert not r.has(r"^hang: cpu=1 ended its hang"), r.out
    assert r.rc != 0, r.out
