"""The foundation: boots under each firmware and machine, reports the hardware,
runs the in-kernel tests, fails loudly."""
import re

import pytest

from helpers import check_all_up

# The multi-CPU rows run every ktest with the smallest rings trace.pages=
# allows, once in each mode (docs/options.md): every ktest must pass, or
# skip saying why, under every valid ring size and mode. The one-CPU rows
# keep the default size; other files' full-suite boots do too.
TINY = 2
MATRIX = [
    # firmware, machine, smp, trace.mode= with trace.pages=TINY (None: defaults)
    ("bios", "q35", 1, None),
    ("bios", "pc", 4, "discard"),
    ("uefi", "q35", 2, "overwrite"),
    ("uefi", "pc", 1, None),
]


@pytest.mark.parametrize("firmware,machine,smp,mode", MATRIX,
                         ids=[f"{f}-{m}-smp{s}" + (f"-pages{TINY}-{o}" if o else "")
                              for f, m, s, o in MATRIX])
def test_boot_and_ktests(qemu, firmware, machine, smp, mode):
    cmdline = "run=ktest exit" + (f" trace.pages={TINY} trace.mode={mode}" if mode else "")
    r = qemu(cmdline, uefi=firmware == "uefi", machine=machine, smp=smp, timeout=180)
    assert r.rc == 0, r.out
    rings = r.fields(r"^trace: cpus=")
    assert (int(rings["pages_per_cpu"]), rings["mode"]) == \
        ((TINY, mode) if mode else (64, "overwrite")), rings
    if smp > 1:
        # The SMP checks (helpers.check_all_up) of plain TCG in xAPIC mode:
        # -smp 4 on pc under SeaBIOS and -smp 2 on q35 under OVMF boot here
        # only, each once (test_smp.py).
        check_all_up(r, smp, strict=False)
        assert int(r.fields(r"^smp: online=")["bringup_ms"]) > 0
    assert r.has(r"^baretrace \S+: trace recording laboratory"), r.out
    boot = r.fields(r"^boot: loader=")
    assert boot["firmware"] == firmware
    assert r.has(rf'^boot: cmdline="{cmdline}"$')
    # The memory map and the allocator's summary.
    assert r.all(r"^mem: base=0x[0-9a-f]{16} len=0x[0-9a-f]{16} type=available$")
    mem = r.fields(r"^mem: available=")
    assert int(mem["available"]) > 400   # MiB of the 512 MiB guest
    # ACPI: the root table the firmware gives, and the tables every QEMU has.
    root = "XSDT" if firmware == "uefi" else "RSDT"
    assert r.has(rf"^acpi: table={root} addr=0x[0-9a-f]+ len=\d+ .* ok$"), r.out
    for sig in ("FACP", "APIC", "HPET"):
        assert r.has(rf"^acpi: table={sig} addr=0x[0-9a-f]+ len=\d+ rev=\d+ oem=.* ok$"), sig
    if machine == "q35":
        assert r.has(r"^acpi: table=MCFG .* ok$")
    madt = r.fields(r"^acpi: madt ")
    assert madt["lapic"] == "0xfee00000"
    assert int(madt["cpus"]) == smp and int(madt["enabled"]) == smp
    assert r.fields(r"^acpi: hpet ")["base"] == "0xfed00000"
    assert int(r.fields(r"^acpi: fadt ")["pm_timer"], 16) != 0
    results = r.ktap()
    assert all(results.values()), r.out
    assert r.has(r"^run: done result=pass; exiting$")


def test_fault_prints_register_dump_and_fails(qemu):
    r = qemu("run=fault exit", timeout=60)
    assert r.rc == 1, r.out
    assert r.has(r"^PANIC: unhandled exception: vector=14 \(page fault \(#PF\)\) error_code=0x0$"), r.out
    assert r.has(r"^RIP: 0x[0-9a-f]{16} job_fault\+0x[0-9a-f]+$"), r.out
    assert r.has(r"^CR2: 0x00007f0000000000 "), r.out
    for reg in ("RAX", "RBX", "RCX", "RDX", "RSI", "RDI", "RBP", "R8", "R15"):
        assert r.has(rf"\b{reg}: +0x[0-9a-f]{{16}}"), reg
    # The backtrace walks from the faulting function back to kernel_main.
    trace = r.out[r.out.index("Backtrace:"):]
    assert re.search(r"job_fault\+0x", trace) and re.search(r"jobs_run\+0x", trace)
    assert re.search(r"kernel_main\+0x", trace)
    assert r.has(r"^PANIC: end of report$")


def test_hang_is_caught_by_timeout(qemu):
    # No jobs and no "exit": the kernel idles forever, by design.
    r = qemu("", timeout=8)
    assert r.rc == 124, r.out
    assert r.has(r"^run: no jobs given \(run=\); idle")


def test_bad_command_line_is_reported_and_boot_continues(qemu):
    r = qemu("run=ktest bogus ktest=pmm_alloc_free run=ktest,nope exit=maybe exit")
    assert r.rc == 0, r.out
    assert r.has(r"^cmdline: unknown option 'bogus'; ignored")
    assert r.has(r"^cmdline: run=ktest,nope: 'nope' is not known; accepted: comma-separated "
                 r"ktest\|fault\|shell\|echo\|demo\|bench\|dump\|marks\|record\|record_bench\|"
                 r"triple\|hang\|hwlat\|c2c\|timerlat; "
                 r"left out: using run=ktest$"), r.out
    assert r.has(r"^cmdline: exit=maybe: invalid value: accepted: exit, exit=yes\|no; left unchanged$")
    assert r.ktap() == {"pmm_alloc_free": True}


def test_unknown_ktest_name_fails_the_run(qemu):
    r = qemu("run=ktest ktest=no_such_test exit")
    assert r.rc == 1, r.out
    assert r.has(r"^ktest: no test named 'no_such_test'$")
    assert r.has(r"^run: done result=fail; exiting$")


def test_corrupted_acpi_table_is_skipped(qemu):
    # First boot: where does this configuration's firmware put the HPET table?
    r = qemu("run=ktest ktest=acpi_tables_valid exit", machine="pc")
    assert r.rc == 0, r.out
    addr = int(r.fields(r"^acpi: table=HPET ")["addr"], 16)
    # Second boot: GRUB overwrites one OEM-id byte of it before the kernel
    # runs, so its checksum no longer holds.
    r = qemu("run=ktest ktest=acpi_tables_valid exit", machine="pc",
             grub_cmds=f"insmod memrw\nwrite_byte {addr + 10:#x} 0x58")
    assert r.rc == 0, r.out
    assert r.has(rf"^acpi: table=HPET addr={addr:#x} len=56 bad checksum; skipped$"), r.out
    assert not r.has(r"^acpi: hpet base=")
    for sig in ("FACP", "APIC"):
        assert r.has(rf"^acpi: table={sig} .* ok$")
    assert r.ktap() == {"acpi_tables_valid": True}
