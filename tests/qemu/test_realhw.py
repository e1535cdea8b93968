"""Machines that are not QEMU's defaults: no COM1, a serial console described
by ACPI SPCR or on a PCI card, no isa-debug-exit, a framebuffer instead of VGA
text, a PS/2 keyboard for input, RAM above 4 GiB, booting from a USB stick.
Each test builds such a machine out of QEMU options and checks what the
kernel printed on the one console it has."""
import struct

import pytest


def spcr_table(port, baud_code):
    """An ACPI SPCR table (revision 2, 80 bytes) for a 16550 at an I/O port.
    baud_code is SPCR's encoding: 3 = 9600, 4 = 19200, 6 = 57600, 7 = 115200."""
    body = struct.pack("<B3x", 0)                          # interface: full 16550
    body += struct.pack("<BBBBQ", 1, 8, 0, 1, port)        # GAS: I/O, 8 bits, byte access
    body += struct.pack("<BBI", 1, 3, 0)                   # 8259 interrupt, IRQ 3, GSI
    body += struct.pack("<BBBBBB", baud_code, 0, 1, 0, 0, 0)  # baud, 8N1, no flow, VT100
    body += struct.pack("<HHBBBIB", 0xFFFF, 0xFFFF, 0, 0, 0, 0, 0)  # not a PCI device
    body += struct.pack("<I", 0)
    hdr = struct.pack("<4sIBB6s8sI4sI", b"SPCR", 36 + len(body), 2, 0, b"BTRACE",
                      b"SPCRTEST", 1, b"BTRC", 1)
    table = bytearray(hdr + body)
    table[9] = -sum(table) & 0xFF                          # all bytes sum to 0
    assert len(table) == 80
    return bytes(table)


def check_ktests(r):
    assert r.rc == 0, r.out
    # The first lines, printed before the console was found, were replayed.
    assert r.has(r"^baretrace \S+: trace recording laboratory"), r.out
    assert all(r.ktap().values()), r.out
    assert r.has(r"^run: done result=pass; exiting$")


@pytest.mark.parametrize("machine,config", [("q35", "ecam"), ("pc", "port")])
def test_pci_serial_card_without_com1(qemu, machine, config):
    r = qemu("run=ktest exit", machine=machine, opts=["--serial-port", "pci"])
    check_ktests(r)
    assert r.has(rf"^pci: config={config}\b"), r.out
    pci = r.fields(r"^console: found=pci ")
    assert pci["id"] == "1b36:0002" and pci["io"].startswith("0x")
    assert not r.has(r"^console: found=ttyS0 ")
    assert r.fields(r"^console: using=")["using"].split(",")[0] == "pci"


def test_spcr_points_at_com2(qemu, tmp_path):
    table = tmp_path / "spcr.bin"
    table.write_bytes(spcr_table(0x2F8, 6))
    r = qemu("run=ktest exit", opts=["--serial-port", "com2"],
             extra=["-acpitable", f"file={table}"])
    check_ktests(r)
    assert r.has(r"^acpi: table=SPCR .* ok$"), r.out
    assert r.has(r"^acpi: spcr type=0x0 addr=io:0x2f8 width=8 baud=57600 "), r.out
    assert r.has(r"^console: found=spcr io=0x2f8 baud=57600$"), r.out
    # Legacy probing meets the same UART again and says so.
    assert r.has(r"^console: found=ttyS1 io=0x2f8 same_as=spcr$"), r.out
    assert r.fields(r"^console: using=")["using"] == "spcr,vga"


def test_console_selects_and_sets_baud(qemu):
    r = qemu("run=ktest ktest=pmm_alloc_free exit console=ttyS0,57600")
    check_ktests(r)
    assert r.has(r"^console: ttyS0 baud=57600$"), r.out
    assert r.fields(r"^console: using=")["using"] == "ttyS0"


@pytest.mark.parametrize("value,why", [
    ("pci", r"pci was not found"),
    ("ttyS0,fast", r"'fast' is not a console name; accepted: ttyS0\|ttyS1\|ttyS2\|ttyS3\|spcr\|pci\|fb\|vga\|kbd"),
])
def test_console_naming_something_absent_falls_back(qemu, value, why):
    r = qemu(f"run=ktest ktest=pmm_alloc_free exit console={value}")
    check_ktests(r)
    assert r.has(rf"^console: console={value}: {why}.*; using the default \(every console found\)$"), r.out
    assert r.fields(r"^console: using=")["using"] == "ttyS0,vga"


@pytest.mark.parametrize("method,rc,says", [
    ("auto", 3, r"^exit: resetting through the ACPI reset register io:0xcf9 value=0x[0-9a-f]+$"),
    ("kbc", 3, r"^exit: resetting through the keyboard controller \(0x64 <- 0xfe\)$"),
    ("halt", 124, r"^exit: halting; power the machine off by hand$"),
])
def test_exit_without_isa_debug_exit(qemu, method, rc, says):
    # QEMU with -no-reboot ends on a reset with status 0 (run-qemu.sh: 3,
    # "no verdict"); a halt runs into the timeout.
    r = qemu(f"exit exit.delay_s=0 exit.method={method}", timeout=8 if method == "halt" else 60,
             opts=["--no-debug-exit"])
    assert r.rc == rc, r.out
    assert r.has(r"^exit: result=pass; no isa-debug-exit device$"), r.out
    assert r.has(says), r.out
    if method != "halt":
        assert not r.has(r"^exit: halting")
