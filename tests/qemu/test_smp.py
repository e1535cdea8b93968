"""SMP: every CPU comes up, takes interrupts, and has its TSC measured."""
from helpers import check_all_up, smp_lines


# Plain TCG: test_boot.py's matrix boots -smp 4 on pc under SeaBIOS and
# -smp 2 on q35 under OVMF with every ktest and runs check_all_up() on them;
# test_x2apic.py boots -smp 8 on q35 (x2APIC mode) and the icount boot below
# -smp 8 in xAPIC mode. A plain-TCG -smp 8 xAPIC boot here ran the same checks
# for 23 s of the machine to itself (an exclusive boot: boot_lock.py).


def test_all_cpus_up_icount(qemu):
    # Every ktest at 8 CPUs; the tracer flip stress with one switch (nop to function: every
    # site patched live while 8 CPUs run through them). Under icount at 8 vCPUs the stress
    # costs seconds of guest time in code-change syncs (2026-12-06: 3 switches 2.94 s of the
    # boot's 4.34 s, 50 s of host time; 1 switch 1.84 s of 3.23 s); test_x2apic.py's
    # plain-TCG 8-CPU boot switches as often as 3 s allow with the vCPUs truly in parallel,
    # and test_ftrace.py runs 1000 switches at 1, 2 and 3 CPUs.
    r = qemu("run=ktest ktest.ftrace_flips=1 exit", smp=8, machine="q35", icount=True,
             timeout=400)
    cpus = check_all_up(r, 8, strict=True)
    # icount: one clock for everyone; the bound is tight (tens of cycles).
    for c in cpus.values():
        assert c["uncertainty_cycles"] < 1000, c


def test_maxcpus_limits_bringup(qemu):
    r = qemu("run=ktest ktest=smp_call_reaches_every_cpu exit maxcpus=2", smp=4,
             untimed=True)      # which CPUs start, no time: it shares (boot_lock.py)
    assert r.rc == 0, r.out
    online = r.fields(r"^smp: online=")
    assert online["online"] == "2" and online["present"] == "4"
    assert len(r.all(r"^smp: apic_id=\d+ not started \(maxcpus=2\)$")) == 2
    assert sorted(smp_lines(r)) == [0, 1]


def test_bad_maxcpus(qemu):
    r = qemu("run=ktest ktest=smp_call_reaches_every_cpu exit maxcpus=0 maxcpus=abc", smp=2,
             untimed=True)      # option errors, no time: it shares (boot_lock.py)
    assert r.rc == 0, r.out
    assert r.has(r"^cmdline: maxcpus=0: invalid value: out of range; accepted: 1\.\.256; left unchanged$")
    assert r.has(r"^cmdline: maxcpus=abc: invalid value: not a number; accepted: integer 1\.\.256; left unchanged$")
    assert r.fields(r"^smp: online=")["online"] == "2"

