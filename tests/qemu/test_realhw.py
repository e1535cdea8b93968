"""Machines that are not QEMU's defaults: no COM1, a serial console described
by ACPI SPCR or on a PCI card, no isa-debug-exit, a framebuffer instead of VGA
text, a PS/2 keyboard for input, RAM above 4 GiB, booting from a USB stick.
Each test builds such a machine out of QEMU options and checks what the
kernel printed on the one console it has."""
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import boot_lock
from conftest import PREFIX, ROOT, Run

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fbrender  # noqa: E402


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
    r = qemu("run=ktest,demo exit demo.ms=100 dump.last=5", machine=machine,
             opts=["--serial-port", "pci"])
    check_ktests(r)
    # A trace dump arrives on the card, too.
    assert "# tracer: baretrace" in r.lines, r.out
    assert len(r.all(r"^\s+(task|irq|nmi)/\d+-\d+\s+\[\d{3}\] ")) == 5, r.out
    assert r.has(rf"^pci: config={config}\b"), r.out
    pci = r.fields(r"^console: found=pci ")
    assert pci["id"] == "1b36:0002" and pci["io"].startswith("0x")
    assert not r.has(r"^console: found=ttyS0 ")
    assert r.fields(r"^console: using=")["using"].split(",")[0] == "pci"


def test_spcr_points_at_com2(qemu, tmp_path):
    table = tmp_path / "spcr.bin"
    table.write_bytes(spcr_table(0x2F8, 6))
    # console=ttyS1 names the same UART as spcr: it selects that one device.
    r = qemu("run=ktest exit console=ttyS1", opts=["--serial-port", "com2"],
             extra=["-acpitable", f"file={table}"])
    check_ktests(r)
    assert r.has(r"^acpi: table=SPCR .* ok$"), r.out
    assert r.has(r"^acpi: spcr type=0x0 addr=io:0x2f8 width=8 baud=57600 "), r.out
    assert r.has(r"^console: found=spcr io=0x2f8 baud=57600$"), r.out
    # Legacy probing meets the same UART again and says so.
    assert r.has(r"^console: found=ttyS1 io=0x2f8 same_as=spcr$"), r.out
    assert r.fields(r"^console: using=")["using"] == "spcr"


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
    assert r.fields(r"^console: using=")["using"] == "ttyS0,vga,kbd"


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


class LiveQemu:
    """run-qemu.sh in the background with a monitor socket, for tests that
    act while the guest runs (screendump, sendkey). The serial console is
    collected by a thread; everything is bounded by timeouts."""

    def __init__(self, tmp_path, cmdline, *, uefi=False, timeout=90, opts=(), extra=()):
        self.sock_path = str(tmp_path / "monitor.sock")
        args = [str(ROOT / "run-qemu.sh"), "--timeout", str(timeout), "--cmdline", cmdline,
                *(["--uefi"] if uefi else []), *opts,
                "--", "-monitor", f"unix:{self.sock_path},server,nowait", *extra]
        lock = boot_lock.acquire(args)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=ROOT,
                                     pass_fds=() if lock is None else (lock,))
        boot_lock.started(lock, self.proc)
        self.buf = bytearray()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.mon = None

    def _read(self):
        for chunk in iter(lambda: self.proc.stdout.read1(4096), b""):
            self.buf += chunk

    def text(self):
        return bytes(self.buf).replace(b"\r", b"")

    def wait_for(self, pattern, timeout):
        rx = re.compile(pattern.encode(), re.M)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if rx.search(self.text()):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"no {pattern!r} within {timeout}s\n" +
                             self.text().decode("utf-8", "replace"))

    def monitor(self, command, timeout=20):
        """One HMP command; returns what the monitor answered."""
        if self.mon is None:
            self.mon = socket.socket(socket.AF_UNIX)
            self.mon.settimeout(timeout)
            self.mon.connect(self.sock_path)
            self._until_prompt()
        self.mon.sendall(command.encode() + b"\n")
        return self._until_prompt()

    def _until_prompt(self):
        got = b""
        while not got.endswith(b"(qemu) "):
            part = self.mon.recv(4096)
            if not part:
                break
            got += part
        return got.decode("utf-8", "replace")

    def finish(self, timeout=60):
        """Wait for the guest to end by itself; returns (status, Run)."""
        try:
            rc = self.proc.wait(timeout)
        finally:
            self.close()
        out = self.text().decode("utf-8", "replace")
        return rc, Run(rc, out, [PREFIX.sub("", l) for l in out.split("\n")])

    def close(self):
        if self.mon is not None:
            self.mon.close()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.reader.join(5)


def test_framebuffer_console_matches_host_rendering(tmp_path):
    """OVMF and -vga std: GRUB sets the mode the kernel asks for, the kernel
    draws its log with the PSF font; the screenshot equals the same bytes
    rendered on the host from the same font file."""
    font = fbrender.Font((ROOT / "build" / "gen" / "font-path.txt").read_text().strip())
    ppm = tmp_path / "screen.ppm"
    q = LiveQemu(tmp_path, "", uefi=True, timeout=150, extra=["-vga", "std"])
    try:
        q.wait_for(r"^\[[ 0-9.]+\] run: no jobs given", 60)
        # The screen follows the serial line: beside other load a screenshot
        # taken at once caught it mid-scroll, a row half moved up. The kernel
        # is idle now; take one until it equals the log rendered, 60 s at most.
        deadline = time.time() + 60
        while True:
            q.monitor(f"screendump {ppm}")
            text = q.text()
            # What went to the framebuffer: the log from the kernel's first line
            # on (the firmware and GRUB wrote to the serial line before it).
            start = text.index(b"[    0.000000] baretrace ")
            w, h, shot = fbrender.read_ppm(ppm)
            assert (w, h) == (1024, 768)
            want, grid = fbrender.render(font, text[start:], w, h)
            if shot == want or time.time() > deadline:
                break
            time.sleep(0.5)
        q.monitor("quit")
    finally:
        q.close()
    out = text.decode("utf-8", "replace")
    fb = dict(re.findall(r"(\w+)=(\S+)", re.search(r"console: found=fb (.*)", out).group(1)))
    assert fb["mode"] == "1024x768x32" and fb["text"] == "128x48" and fb["font"] == "8x16", fb
    assert re.search(r"console: using=ttyS0,fb,kbd$", out, re.M), out
    fbrender.write_png(ROOT / "build" / "fbcon.png", w, h, shot)
    if shot != want:
        bad = [(y, x) for y in range(h) for x in range(0, w * 3, 3)
               if shot[y * w * 3 + x:y * w * 3 + x + 3] != want[y * w * 3 + x:y * w * 3 + x + 3]]
        y, x = bad[0]
        r, c = y // font.height, x // 3 // font.width
        pytest.fail(f"{len(bad)} pixels differ; first at x={x // 3} y={y}, cell row={r} col={c} "
                    f"expected {chr(grid[r][c])!r}; screenshot in build/fbcon.png")
    # The screen is not trivially blank: the last log line is on it.
    assert any(b"run: no jobs given" in bytes(row) for row in grid)


def type_keys(q, keys):
    """QEMU monitor sendkey, one key at a time (the PS/2 queue is short)."""
    for k in keys:
        q.monitor(f"sendkey {k}")
        time.sleep(0.15)


@pytest.mark.parametrize("scancodes", ["auto", "set2"])
def test_ps2_keyboard_typing_reaches_echo(tmp_path, scancodes):
    """run=echo reads a line typed on the emulated PS/2 keyboard. set2 turns
    the controller's translation off, so the kernel decodes set 2 itself."""
    q = LiveQemu(tmp_path, f"run=echo exit kbd.scancodes={scancodes}", timeout=60)
    try:
        q.wait_for(r"echo: type a line and press Enter", 30)
        # Shift, space, digits and Backspace: "Hi 42" after a correction.
        type_keys(q, ["shift-h", "i", "spc", "4", "x", "backspace", "2", "ret"])
        rc, r = q.finish(30)
    finally:
        q.close()
    assert rc == 0, r.out
    kbd = r.fields(r"^console: found=kbd ")
    assert kbd["scancodes"] == ("set2" if scancodes == "set2" else "set1")
    assert r.has(r"^echo: Hi 42$"), r.out
    assert r.has(r"^run: job=echo result=pass$")


def test_echo_without_input_times_out(qemu):
    r = qemu("run=echo exit echo.wait_s=1", timeout=60)
    assert r.rc == 1, r.out
    assert r.has(r"^echo: no complete line within 1 s; giving up$"), r.out
    assert r.has(r"^run: job=echo result=fail$")


def test_ram_above_4gib(qemu):
    """-m 6G on q35 puts 4 GiB above the 4 GiB line: the allocator counts it,
    the identity map covers it, and every in-kernel test still passes."""
    r = qemu("run=ktest exit", memory="6G", timeout=120)
    check_ktests(r)
    mem = r.fields(r"^mem: available=")
    max_phys, mapped = int(mem["max_phys"], 16), int(mem["mapped"], 16)
    assert int(mem["available"]) > 5 * 1024, mem
    assert max_phys > 1 << 32 and mapped >= max_phys, mem
    assert r.has(r"^mem: base=0x0000000100000000 len=0x[0-9a-f]{16} type=available$"), r.out
    assert r.ktap()["mem_above_4g"] is True
    assert not r.has(r"^ok \d+ mem_above_4g # SKIP")


@pytest.mark.parametrize("firmware", ["bios", "uefi"])
def test_boots_from_usb_stick(tmp_path, firmware):
    """The hybrid image as a USB mass-storage device on xHCI, no CD drive:
    SeaBIOS boots its MBR, OVMF its EFI partition."""
    q = LiveQemu(tmp_path, "run=ktest", uefi=firmware == "uefi", timeout=90, opts=["--usb"])
    try:
        q.wait_for(r"run: jobs done; idle", 80)
        blocks = q.monitor("info block")
        usb = q.monitor("info usb")
        q.monitor("quit")
        rc, r = q.finish(20)
    finally:
        q.close()
    # The image is on the stick (a snapshot overlay keeps it unchanged), the
    # stick on the USB bus, and the CD drive is empty.
    assert re.search(r"^stick \(#block\d+\): .*build/iso-cache/\w+\.iso", blocks, re.M), blocks
    assert re.search(r"^ide2-cd0: \[not inserted\]", blocks, re.M), blocks
    assert "Product QEMU USB MSD" in usb, usb
    assert r.fields(r"^boot: loader=")["firmware"] == firmware
    assert all(r.ktap().values()), r.out


def test_madt_lists_cpus_that_are_not_there(qemu):
    # -smp 4,maxcpus=8: the MADT has 8 processor entries, 4 of them not present.
    r = qemu("run=ktest ktest=smp_call_reaches_every_cpu exit", smp="4,maxcpus=8",
             untimed=True)      # which CPUs start, no time: it shares (boot_lock.py)
    assert r.rc == 0, r.out
    madt = r.fields(r"^acpi: madt ")
    assert madt["cpus"] == "8" and madt["enabled"] == "4", madt
    online = r.fields(r"^smp: online=")
    assert online["online"] == "4" and online["present"] == "4", online
    assert not r.has(r"did not answer")


def test_32_cpus(qemu):
    r = qemu("run=ktest ktest=smp_call_reaches_every_cpu,nmi_ipi_reaches_every_cpu exit",
             smp=32, memory="1G", timeout=400)
    assert r.rc == 0, r.out
    online = r.fields(r"^smp: online=")
    assert online["online"] == "32" and online["present"] == "32", online
    assert len(r.all(r"^smp: cpu=\d+ apic_id=\d+ tsc_skew_cycles=")) == 32
    assert all(r.ktap().values()), r.out
