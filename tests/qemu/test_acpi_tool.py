"""baretrace-acpi end to end on QEMU's own tables: the kernel prints them with
acpi.dump (acpidump's format), the tool reads that capture, and its cpus= must
equal the CPUs the kernel started in the same boot, its acpi: lines the
kernel's own, its hpet=/pm_timer=/ecam= what QEMU's machine has."""
import os
import subprocess

import pytest

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
             timeout=120)
    assert r.rc == 0, r.out
    capture = tmp_path / "capture.txt"
    capture.write_text(r.out)
    t = subprocess.run([TOOL, str(capture)], capture_output=True, text=True, timeout=60)
    assert t.returncode == 0, t.stdout + t.stderr
    out = t.stdout.splitlines()
    # The tool runs the kernel's parser on the dump: the same acpi: lines.
    kernel_acpi = [l for l in r.lines if l.startswith("acpi: ") and "RSDP found" not in l]
    assert [l for l in out if l.startswith("acpi: ")] == kernel_acpi, t.stdout
    m = dict(kv.split("=", 1) for kv in out[-2].split()[1:])
    online = r.fields(r"^smp: online=")["online"]
    assert m["cpus"] == online == str(smp), (m, online)
    assert m["hpet"] == ("no" if no_hpet else "yes")
    assert m["pm_timer"] == pm_timer and m["ecam"] == ecam and m["hw_reduced"] == "no"
    assert m["apic"] == "xapic" and m["max_apic_id"] == str(smp - 1)
    assert out[-1].startswith("verdict: boots: the calibration can vote with PIT, "
                              + ("PM timer" if no_hpet else "HPET, PM timer")), out[-1]
