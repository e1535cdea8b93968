"""baretrace-acpi end to end on QEMU's own tables: the kernel prints them with
acpi.dump (acpidump's format), the tool reads that capture, and its cpus= must
equal the CPUs the kernel started in the same boot, its acpi: lines the
kernel's own, its hpet=/pm_timer=/ecam= what QEMU's machine has. Tables that
QEMU never writes (hardware-reduced, x2APIC-only, OEM entries, a bad checksum)
are QEMU's rewritten by the kernel's inject.acpi= and dumped as read; a
machine without a PIT is QEMU's -machine pit=off. test_x2apic.py runs the tool on
QEMU 10's x2APIC entries (APIC id 256).

The tables and the CPUs started are checked, not time: the boots share the
machine (untimed=True, tests/qemu/boot_lock.py), except the one whose TSC
must calibrate against the HPET alone."""
import os

import pytest

from helpers import acpi_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "build", "tools", "baretrace-acpi-asan")


# QEMU 7.2's PM timer: at 0x608 on pc (PIIX4) and q35 (ICH9), 24 bits on both
# (no TMR_VAL_EXT); MCFG only on q35 (FACTS.md).
@pytest.mark.parametrize("machine,uefi,smp,no_hpet,pm_timer,ecam", [
    ("pc", False, 2, True, "io:0x608/24", "0"),
    ("q35", True, 3, False, "io:0x608/24", "1"),
], ids=["pc-seabios-smp2-nohpet", "q35-ovmf-smp3"])
def test_tool_on_qemu_tables(qemu, tmp_path, machine, uefi, smp, no_hpet, pm_timer, ecam):
    if not os.path.exists(TOOL):
        pytest.fail("build/tools/baretrace-acpi-asan is missing: run 'make test-tools'")
    r = qemu("acpi.dump exit", smp=smp, machine=machine, uefi=uefi, no_hpet=no_hpet,
             timeout=120, untimed=True)
    assert r.rc == 0, r.out
    rc, out, m = acpi_tool(r, tmp_path, TOOL)
    assert rc == 0, out
    online = r.fields(r"^smp: online=")["online"]
    assert m["cpus"] == online == str(smp), (m, online)
    assert m["hpet"] == ("no" if no_hpet else "yes")
    assert m["pm_timer"] == pm_timer and m["ecam"] == ecam and m["hw_reduced"] == "no"
    assert m["apic"] == "xapic" and m["max_apic_id"] == str(smp - 1)
    assert out[-1].startswith("verdict: boots: the calibration can vote with PIT, "
                              + ("PM timer" if no_hpet else "HPET, PM timer")), out[-1]
    assert ("; without the HPET (no usable HPET table)" in out[-1]) == no_hpet, out[-1]


def test_hw_reduced_x2apic_only_no_pit_bad_hpet(qemu, tmp_path):
    # What 7 of 650 real machines' tables show, and more, in one boot: the
    # FADT hardware-reduced (no PM timer), every CPU an x2APIC entry, a
    # reserved (127) and an OEM (255) MADT entry that would read as an
    # enabled CPU 0x77 if misparsed, a local APIC address override, the HPET
    # table's checksum bad, and no PIT: the calibration has no reference
    # left, says which it lacks and why, and the kernel still boots and
    # starts every CPU from the x2APIC entries.
    if not os.path.exists(TOOL):
        pytest.fail("build/tools/baretrace-acpi-asan is missing: run 'make test-tools'")
    r = qemu("inject.acpi=hw_reduced,x2apic,oem,lapic_addr,bad_hpet acpi.dump exit", smp=4,
             machine="q35", timeout=120, extra=["-machine", "pit=off"], untimed=True)
    assert r.rc == 0, r.out
    for line in [r"^acpi: table=HPET addr=0x[0-9a-f]+ len=56 bad checksum; skipped$",
                 r"^acpi: madt lapic=0xfee00000 cpus=4 enabled=4 skipped=0 ioapics=1 "
                 r"overrides=5 nmis=1 other=2$",
                 r"^tsc: ref=pit absent: channel 2 reads 0xFFFF and does not count "
                 r"\(no legacy PIT\)$",
                 r"^tsc: ref=hpet absent: no valid ACPI HPET table$",
                 r"^tsc: ref=pmtimer absent: hardware-reduced ACPI ",
                 r"^tsc: no reference gave a usable frequency; trace stamps stay raw"]:
        assert r.has(line), (line, r.out)
    assert not r.has(r"^tsc: pit method="), r.out   # probed, never polled for windows
    online = r.fields(r"^smp: online=")
    assert online["online"] == online["present"] == "4", online
    rc, out, m = acpi_tool(r, tmp_path, TOOL)
    assert rc == 1, out
    assert m == {"cpus": "4", "apic": "x2apic", "max_apic_id": "3", "hpet": "no",
                 "pm_timer": "none", "hw_reduced": "yes", "serial": "none", "ecam": "1"}, m
    assert out[-1].startswith("verdict: no: no timer to calibrate the TSC against"), out[-1]
    assert any(l.startswith("warning: table HPET at ") for l in out), out


def test_hw_reduced_no_pit_hpet_alone(qemu, tmp_path):
    # The usual hardware-reduced machine: an HPET, no PM timer, no PIT. The
    # HPET alone calibrates the TSC and the tool's verdict names it alone.
    # Under OVMF: the tables rewritten through the XSDT's 64-bit entries.
    r = qemu("inject.acpi=hw_reduced acpi.dump exit", smp=2, machine="q35", uefi=True,
             timeout=120, extra=["-machine", "pit=off"])
    assert r.rc == 0, r.out
    assert r.fields(r"^acpi: rsdp ")["xsdt"] != "0x0", r.out
    assert r.has(r"^acpi: inject.acpi=hw_reduced: the FADT at 0x[0-9a-f]+ read with "), r.out
    assert r.has(r"^tsc: ref=pit absent: "), r.out
    assert r.has(r"^tsc: ref=pmtimer absent: hardware-reduced ACPI "), r.out
    s = r.fields(r"^tsc: freq_hz=")
    assert s["ref"] == "hpet" and int(s["freq_hz"]) > 0, s
    rc, out, m = acpi_tool(r, tmp_path, TOOL)
    assert rc == 0 and m["cpus"] == r.fields(r"^smp: online=")["online"] == "2", out
    assert m["hw_reduced"] == "yes" and m["hpet"] == "yes" and m["pm_timer"] == "none", m
    assert out[-1].startswith("verdict: boots: the calibration can vote with HPET; 2 CPUs "
                              "start; without the PIT if this machine has none"), out[-1]
