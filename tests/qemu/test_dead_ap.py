"""An AP the MADT lists that never answers its INIT and SIPI (a dead or
missing CPU on a real machine), reached under QEMU by inject.ap_silent=:
its start times out after the documented 2000 ms and it is skipped, the
next AP takes its logical id (and the buffer memory readied for it), the
memory readied for a CPU that no AP took is given back, and tracing runs
on exactly the CPUs that came up.

What is checked is which CPUs came up and what they recorded, not when: the
2000 ms bound is the kernel's, and no clock is compared, so the boots share
the machine (untimed=True, tests/qemu/boot_lock.py)."""
import re

import pytest

AP_TIMEOUT_MS = 2000        # arch/x86/smp.c


@pytest.mark.parametrize("smp,silent,uefi", [
    (2, 1, True),           # the only AP, under OVMF: nothing takes its slot, given back
    (3, 1, False),          # the first AP: the second takes logical id 1
    (4, 3, False),          # the last AP: id 3 given back
])
def test_silent_ap_is_skipped(qemu, smp, silent, uefi):
    """Kills: the failed AP left in cpus[] or cpu_count (trace cpus=smp, a
    dump line or a hang for a CPU that never ran), the next AP not reusing
    the logical id (a gap in the smp: cpu= lines), the readied memory not
    given back when no AP took it (no trace: line), or given back though an
    AP built its buffer there (the line, and a crash or lost events)."""
    r = qemu(f"inject.ap_silent={silent} run=demo,dump demo.ms=50 exit dump=text "
             "dump.last=0", smp=smp, uefi=uefi, timeout=180, untimed=True)
    assert r.rc == 0, r.out
    assert r.has(rf"^smp: apic_id={silent} did not answer within {AP_TIMEOUT_MS} ms; "
                 r"skipped$"), r.out
    online = smp - 1
    assert r.has(rf"^smp: online={online} present={smp} "), r.out
    # The APs that answered, in MADT order, on logical ids 1.. with no gap.
    aps = [int(a) for a in range(1, smp) if a != silent]
    got = [(int(c), int(a)) for c, a in
           re.findall(r"^smp: cpu=(\d+) apic_id=(\d+) tsc_skew", "\n".join(r.lines), re.M)]
    assert got == [(0, 0)] + list(zip(range(1, online), aps)), got
    assert r.has(rf"^trace: cpus={online} "), r.out
    given_back = re.findall(r"^trace: cpu=(\d+) did not start; the memory readied for its "
                            r"buffer \(\d+ pages\) is given back$", "\n".join(r.lines), re.M)
    assert given_back == ([str(online)] if silent == smp - 1 else []), given_back
    # Every CPU that came up traced the demo, and only those; nothing lost
    # that its buffer did not count.
    summary = {int(c): (int(rd), int(dr), int(lost)) for c, dr, rd, lost in re.findall(
        r"^# cpu=(\d+) entries=\d+ overrun=\d+ dropped=(\d+) commit_overrun=\d+ "
        r"read=(\d+) lost=(\d+)", "\n".join(r.lines), re.M)}
    assert sorted(summary) == list(range(online)), summary
    assert all(rd > 0 and lost == dr for rd, dr, lost in summary.values()), summary
    assert r.has(r"^run: done result=pass"), r.out
