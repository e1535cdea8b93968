"""baretrace-acpi on hand-made acpidump text: each table's content chosen
here, the tool's machine:/verdict: lines compared with it (docs/output.md)."""
import os
import re
import subprocess

import pytest

from acpidump_gen import (fadt, hpet, lapic, lapic_addr, madt, other, spcr, table, text,
                          x2apic)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
TOOL = os.path.join(BUILD, "tools", "baretrace-acpi-asan")   # ASan/UBSan build
FIXTURES = os.path.join(ROOT, "tests", "tools", "acpi")

MACHINE = re.compile(r"^machine: cpus=(\d+) apic=(xapic|x2apic) max_apic_id=(\d+) hpet=(yes|no) "
                     r"pm_timer=(none|io:0x[0-9a-f]+/(?:24|32)) hw_reduced=(yes|no) "
                     r"serial=(none|spcr:\S+) ecam=(\d+)$")
VERDICT = re.compile(r"^verdict: (boots|no): .+$")


def run_tool(tmp_path, dump, name="m.txt"):
    p = tmp_path / name
    p.write_text(dump) if isinstance(dump, str) else p.write_bytes(dump)
    r = subprocess.run([TOOL, str(p)], capture_output=True, text=True, timeout=30)
    assert "runtime error" not in r.stderr and "Sanitizer" not in r.stderr, r.stderr
    return r


def summary(r):
    lines = r.stdout.splitlines()
    assert len(lines) >= 2, r.stdout + r.stderr
    m = MACHINE.match(lines[-2])
    assert m, lines[-2]
    assert VERDICT.match(lines[-1]), lines[-1]
    keys = ["cpus", "apic", "max_apic_id", "hpet", "pm_timer", "hw_reduced", "serial", "ecam"]
    return dict(zip(keys, m.groups())), lines[-1]


def test_x2apic_only_hw_reduced_no_hpet(tmp_path):
    ids = [0, 2, 4, 6, 0x100, 0x102, 143]
    cpus = [x2apic(i, 100 + n) for n, i in enumerate(ids)] + [x2apic(0x200, 9, flags=0)]
    d = text([(0x7F000000, madt(cpus)), (0x7F001000, fadt(pm_tmr_blk=0x608, hw_reduced=True))])
    r = run_tool(tmp_path, d)
    s, verdict = summary(r)
    assert r.returncode == 1, r.stdout
    assert s == {"cpus": "7", "apic": "x2apic", "max_apic_id": str(0x102), "hpet": "no",
                 "pm_timer": "none", "hw_reduced": "yes", "serial": "none", "ecam": "0"}
    assert verdict.startswith("verdict: no: no timer to calibrate the TSC against"), verdict
    assert "warning: hardware-reduced ACPI" in r.stdout
    assert "warning: no usable HPET table" in r.stdout
    # The kernel's own lines come first, at the dump's addresses.
    assert "acpi: table=APIC addr=0x7f000000 " in r.stdout
    assert "acpi: fadt hardware-reduced ACPI: no PM timer, no fixed hardware" in r.stdout


def test_legacy_machine_32bit_pm_timer_hpet(tmp_path):
    cpus = [lapic(i, i * 2) for i in range(6)] + [lapic(6, 0xFF, flags=0)]
    d = text([(0xBFFE0000, fadt(pm_tmr_blk=0x1808, tmr_32=True)),
              (0xBFFE1000, madt(cpus, flags=1)), (0xBFFE2000, hpet())])
    r = run_tool(tmp_path, d)
    s, verdict = summary(r)
    assert r.returncode == 0, r.stdout
    assert s == {"cpus": "6", "apic": "xapic", "max_apic_id": "10", "hpet": "yes",
                 "pm_timer": "io:0x1808/32", "hw_reduced": "no", "serial": "none", "ecam": "0"}
    assert verdict == ("verdict: boots: the calibration can vote with PIT, HPET, PM timer; 6 CPUs "
                       "start; without the ACPI reset (exit resets through the keyboard "
                       "controller)")


def test_unknown_madt_types_skipped_by_length(tmp_path):
    # OEM and reserved entries whose bytes would read as CPUs if misparsed.
    ents = [lapic(0, 0), other(127, 4), lapic(1, 1), other(255, 10), other(0x80, 2),
            x2apic(0x300, 2), lapic(3, 3)]
    r = run_tool(tmp_path, text([(0x1000, madt(ents)), (0x2000, fadt())]))
    s, _ = summary(r)
    assert s["cpus"] == "4" and s["max_apic_id"] == str(0x300) and s["apic"] == "x2apic"
    assert "other=3" in r.stdout


@pytest.mark.parametrize("n", [1, 80, 256, 300])
def test_cpu_counts(tmp_path, n):
    r = run_tool(tmp_path, text([(0x100000, madt([x2apic(i, i) for i in range(n)]))]))
    s, verdict = summary(r)
    assert s["cpus"] == str(min(n, 256))
    assert ("beyond the 256 kept" in r.stdout) == (n > 256)
    assert ("warning: %d enabled CPUs, baretrace starts at most 256" % n in r.stdout) == (n > 256)


def test_placeholders_before_enabled_cpus(tmp_path):
    # 260 disabled hot-plug placeholders listed first, then 6 enabled CPUs:
    # all 6 are counted (and started by the kernel), none lost to the limit.
    ents = [x2apic(0x1000 + i, i, flags=0) for i in range(260)]
    ents += [x2apic(i * 2, 1000 + i) for i in range(6)]
    r = run_tool(tmp_path, text([(0x100000, madt(ents)), (0x200000, fadt())]))
    s, verdict = summary(r)
    assert s["cpus"] == "6" and s["max_apic_id"] == "10", r.stdout
    assert "madt lists 10 CPUs beyond the 256 kept (0 of them enabled)" in r.stdout
    assert "baretrace starts at most" not in r.stdout
    assert "; 6 CPUs start; without the HPET (no usable HPET table)," in verdict, verdict


@pytest.mark.parametrize("table,serial,line", [
    (spcr(), "spcr:io:0x3f8/115200",
     "acpi: spcr type=0x0 addr=io:0x3f8 width=8 baud=115200 clock_hz=0"),
    (spcr(iface=0x12, space=0, addr=0xFE032000, width=32, baud_code=0, rev=4,
          clock=48000000, precise=1500000), "spcr:mem:0xfe032000/1500000",
     "acpi: spcr type=0x12 addr=mem:0xfe032000 width=32 baud=1500000 clock_hz=48000000"),
    (spcr(baud_code=3, rev=3, clock=1843200), "spcr:io:0x3f8/9600",
     "acpi: spcr type=0x0 addr=io:0x3f8 width=8 baud=9600 clock_hz=1843200"),
    (spcr(iface=3), "none", "acpi: spcr interface type 0x3 is not a 16550; ignored"),
    (spcr(space=2), "none", "acpi: spcr address space 2 addr=0x3f8 is not usable; ignored"),
    (spcr(addr=0), "none", "acpi: spcr address space 1 addr=0x0 is not usable; ignored"),
    (spcr(length=58), "none", "acpi: spcr table too short; ignored"),
], ids=["io-16550", "mmio-rev4-precise", "rev3-9600", "pl011", "pci-space", "addr0", "short"])
def test_spcr_serial_console(tmp_path, table, serial, line):
    # 9 of 650 machines declare a serial console; the kernel's SPCR parser,
    # run here on each form: 16550 by I/O or MMIO, the rev 3 clock and rev 4
    # precise rate, and the ones it refuses, each with its line.
    r = run_tool(tmp_path, text([(0x1000, madt([lapic(0, 0)])), (0x2000, fadt()),
                                 (0x3000, table)]))
    s, _ = summary(r)
    assert s["serial"] == serial, r.stdout
    assert line in r.stdout.splitlines(), r.stdout


@pytest.mark.parametrize("base,hpet_yes", [(0xFED00000, True), (0, False), (0xFED00200, False)])
def test_hpet_address(tmp_path, base, hpet_yes):
    # A table at 0 (firmware whose setup turned the HPET off) or misaligned:
    # what hpet_init() would refuse, the parser refuses with a line.
    r = run_tool(tmp_path, text([(0x1000, madt([lapic(0, 0)])), (0x2000, fadt()),
                                 (0x3000, hpet(base))]))
    s, verdict = summary(r)
    assert s["hpet"] == ("yes" if hpet_yes else "no"), r.stdout
    said = "acpi: hpet base=0x%x is missing or misaligned; ignored" % base
    assert (said in r.stdout.splitlines()) == (not hpet_yes), r.stdout
    assert ("HPET" in verdict.split(";")[0]) == hpet_yes, verdict
    assert ("without the HPET (no usable HPET table)" in verdict) == (not hpet_yes), verdict


def test_lapic_address_override(tmp_path):
    r = run_tool(tmp_path, text([(0x1000, madt([lapic_addr(0xFEE10000), lapic(0, 0)]))]))
    assert "acpi: madt lapic=0xfee10000 " in r.stdout


def test_bad_checksum_refused_with_a_line(tmp_path):
    bad = bytearray(hpet())
    bad[40] ^= 1
    r = run_tool(tmp_path, text([(0x1000, madt([lapic(0, 0)])), (0x2000, bytes(bad))]))
    s, _ = summary(r)
    assert "acpi: table=HPET addr=0x2000 len=56 bad checksum; skipped" in r.stdout
    assert "warning: table HPET at 0x2000 failed its checks" in r.stdout
    assert s["hpet"] == "no"


def test_bad_length_refused(tmp_path):
    t = bytearray(hpet())
    t[4] = 200   # says 200 bytes, the dump holds 56
    t[9] = 0
    t[9] = (-sum(t)) & 0xFF
    r = run_tool(tmp_path, text([(0x1000, madt([lapic(0, 0)])), (0x2000, bytes(t))]))
    assert "acpi: table=HPET addr=0x2000 len=200 runs outside mapped memory; skipped" in r.stdout


def test_kernel_capture_with_timestamps_reads(tmp_path):
    d = text([(0x1000, madt([lapic(0, 0), lapic(1, 1)]))])
    log = "".join("[    1.000000] " + ln + "\n" for ln in d.splitlines())
    s, _ = summary(run_tool(tmp_path, "boot: noise\n" + log))
    assert s["cpus"] == "2"


def test_not_an_acpidump_and_unreadable(tmp_path):
    r = run_tool(tmp_path, "hello\nworld\n")
    assert r.returncode == 2 and "not the text acpidump writes" in r.stderr
    assert r.stdout == ""
    r = subprocess.run([TOOL, str(tmp_path / "missing")], capture_output=True, text=True)
    assert r.returncode == 3 and "missing" in r.stderr


def test_damaged_dumps_never_crash(tmp_path):
    good = text([(0x1000, madt([lapic(0, 0), x2apic(5, 1)])), (0x2000, fadt()),
                 (0x3000, table("SSDT", b"\x00" * 30))])
    lines = good.splitlines()
    for cut in range(0, len(lines), 3):
        r = run_tool(tmp_path, "\n".join(lines[:cut]) + "\n")
        assert r.returncode in (0, 1, 2), r.stderr
    # An offset out of order: that block stops there, with a line.
    bad = good.replace("    0010:", "    0020:", 1)
    r = run_tool(tmp_path, bad)
    assert "offset 0x20 where 0x10 was expected" in r.stdout


def test_real_vm_dump_firecracker():
    # This development machine's own tables (a Firecracker VM, `acpidump`):
    # hardware-reduced, no HPET, 2 CPUs (its /proc/cpuinfo has 2 processors).
    r = subprocess.run([TOOL, os.path.join(FIXTURES, "firecracker-vm.dump")],
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    assert lines[-2] == ("machine: cpus=2 apic=xapic max_apic_id=1 hpet=no pm_timer=none "
                         "hw_reduced=yes serial=none ecam=1"), r.stdout
    assert r.returncode == 1


def test_short_known_entries_said_and_warned(tmp_path):
    # A local APIC entry 4 bytes long and an x2APIC one 8 long: read as they
    # are they would be CPUs read past their ends; each gets a line, the
    # tool one warning, and only the whole entries count.
    ents = [lapic(0, 0), other(0, 4), other(9, 8), lapic(1, 1)]
    r = run_tool(tmp_path, text([(0x1000, madt(ents)), (0x2000, fadt())]))
    s, _ = summary(r)
    assert s["cpus"] == "2", r.stdout
    assert "acpi: madt entry type 0 at offset 52 is 4 bytes, shorter than its fields' 8; " \
        "skipped" in r.stdout
    assert "acpi: madt entry type 9 at offset 56 is 8 bytes" in r.stdout
    assert "warning: 2 MADT entries are shorter than their type's fields" in r.stdout
    assert "other=0" in r.stdout


def test_qemu_tables_rewritten_by_inject_acpi():
    # The tables the kernel read under inject.acpi=hw_reduced,x2apic,oem,
    # lapic_addr,bad_hpet on q35 -smp 4, as its acpi.dump printed them
    # (tests/qemu/test_acpi_tool.py boots that and compares live): an
    # x2APIC-only MADT with a reserved and an OEM entry, a hardware-reduced
    # FADT, an HPET table with a bad checksum.
    r = subprocess.run([TOOL, os.path.join(FIXTURES, "qemu-q35-inject-hwreduced-x2apic.dump")],
                       capture_output=True, text=True)
    s, verdict = summary(r)
    assert r.returncode == 1, r.stdout
    assert s == {"cpus": "4", "apic": "x2apic", "max_apic_id": "3", "hpet": "no",
                 "pm_timer": "none", "hw_reduced": "yes", "serial": "none", "ecam": "1"}, s
    assert "acpi: madt lapic=0xfee00000 cpus=4 enabled=4 skipped=0 ioapics=1 overrides=5 " \
        "nmis=1 other=2" in r.stdout
    assert re.search(r"^acpi: table=HPET addr=0x[0-9a-f]+ len=56 bad checksum; skipped$",
                     r.stdout, re.M), r.stdout
    assert verdict.startswith("verdict: no: no timer to calibrate the TSC against"), verdict
