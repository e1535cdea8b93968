"""The trace saved to the USB stick (docs/usb.md): xHCI, mass storage, TRACE.BIN.

The stick is a raw image made by scripts/mkusb-image.sh, booted itself with
run-qemu.sh --usb-image as a real machine boots it: no CD, the firmware
(SeaBIOS or OVMF) boots the stick's own GRUB, which boots the kernel with
the command line run-qemu.sh wrote into the stick's CMDLINE.CFG.  Every such
boot checks that it did: QEMU's `info block` (asked while it runs) shows the
image as the only medium, and the kernel's `boot: cmdline=` line is the
file's, not the stick's built-in one (STICK_BUILTIN), which the foreign
header's boot gets (no --cmdline: no file).  The boots:
  - USB 3 (qemu-xhci's default: super speed on port 1), TRACE.BIN of 1 MiB:
    four dumps, each sent over serial (dump=bin) and saved (dump=usb); three
    fit, the fourth is refused as full.  TRACE.BIN taken out with mtools and
    decoded: each save is its serial twin, text for text, and the counts
    the kernel printed.  fsck.fat -n clean.  The bytes of the saves are
    unchanged by the refused one.
  - USB 2 (p3=0: no USB 3 port, the stick at high speed after a port reset)
    under OVMF (the xHCI's BAR above 512 GiB) on a second image: run=demo,fault, the demo's save (the same comparison)
    and then the panic's (panic.dump=usb): the fault's 16 marks are the last
    events of the second save, fsck clean.
  - a foreign TRACE.BIN header: the refusal line, and the image's bytes
    unchanged (sha256), booted with the stick's built-in command line.
  - trace.record=usb, two CPUs, rings of 4 pages, run=record twice on a
    1 MiB file: the first stream holds every bench event each CPU's writer
    says it stored, present or counted in a LOST marker exactly where it
    is missing, over 4 times the ring; cpu 0 (which drains between its
    events) loses none.  The second fills the file: one line, the stream
    still ends whole (END), what it holds consistent the same way.
  - a usb-kbd beside a stick, run=shell: lines typed with the monitor's
    sendkey run (Ctrl-C drops the line typed so far, shift types capitals).
  - two sticks: the baretrace one and a plain FAT32 disk (MBR, label
    PHOTOS), the plain one on the lower port and then on the higher, so
    that "the first stick found" is not what passes: run=demo dump=bin,usb
    saves on the baretrace stick (its save equals its serial twin), the
    other gets its one refusal line naming its port and its sha256 is
    unchanged.  The two boots also cover the firmware x speed pairs the
    boots above leave out: SeaBIOS with the stick as USB 2, OVMF as USB 3.
  - the shell with trace.record=usb, then =serial: `start` opens a stream,
    the shell sits idle for 10 s recording irq:lapic_tick 1000 times a
    second into rings of 4 pages, `stop` ends it: the stream holds every
    tick from its first to its last (the tick counter is a sequence
    number), none lost, several times what the rings hold: the shell's idle
    loop drained it.  Over serial, the shell's own bytes between frames are
    the decoder's only damage, and the frames' bytes the kernel's count.
    On the stick, the stream is ended by `reset` typed on a usb-kbd (a
    command that rebuilds the buffers ends it first, whole), not `stop`.
"""
import hashlib
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import ROOT, make_locked
from qemu_shell import monitor_cmd

BUILD = ROOT / "build"
USB_TOOL = BUILD / "tools" / "baretrace-usb"


# The command line built into the sticks' GRUB (what they boot with when their
# BARETRACE partition holds no CMDLINE.CFG): none of the other tests' lines.
STICK_BUILTIN = "run=dump dump=usb exit"


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    """The tools, and the GRUB image the sticks are made of (STICK_BUILTIN built in)."""
    make_locked("iso", "tools", str(USB_TOOL.relative_to(ROOT)))
    iso = tmp_path_factory.mktemp("stick-iso") / "stick.iso"
    subprocess.run([ROOT / "scripts/mkiso.sh", BUILD / "kernel.elf", iso, STICK_BUILTIN],
                   check=True)
    return iso


def make_stick(iso, path, mb):
    subprocess.run([ROOT / "scripts/mkusb-image.sh", iso, BUILD / "kernel.elf", USB_TOOL, path,
                    str(mb), "test-usb"], check=True)
    out = subprocess.run([USB_TOOL, "find", path], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    m = re.search(r"blocks (\d+)\+(\d+), file at (\d+), data at (\d+), (\d+) blocks", out)
    assert m, out
    part = {k: int(v) for k, v in zip(("start", "blocks", "file", "data", "ndata"), m.groups())}
    part["img"] = path
    return part


def cmdline_cfg(part):
    """The stick's CMDLINE.CFG, read by mtools (None if there is none)."""
    p = subprocess.run(["mtype", "-i", f"{part['img']}@@{part['start'] * 512}",
                        "::CMDLINE.CFG"], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


def check_stick_boot(blocks, part, text, cmdline):
    """The kernel was booted from the stick, with cmdline: blocks is QEMU's
    `info block` while it ran (the image the only medium: no CD, no disk but
    the sticks), text its console.  cmdline came from the stick's
    CMDLINE.CFG, unless it is the stick's built-in line (then no file)."""
    assert blocks, f"no answer from the monitor to `info block`\n{text[-3000:]}"
    media = dict(re.findall(r"^(\S+) \(#block\d+\): (\S+)", blocks, re.M))
    assert media.get("stick") == str(part["img"]) and set(media) <= {"stick", "stick2"}, blocks
    assert re.search(r"^ide2-cd0: \[not inserted\]", blocks, re.M), blocks
    assert re.search(rf'^(\[[ .\d]+\] )?boot: cmdline="{re.escape(cmdline)}"$', text, re.M), \
        text[-3000:]
    cfg = cmdline_cfg(part)
    if cmdline == STICK_BUILTIN:
        assert cfg is None, cfg
    else:
        assert cfg is not None and cfg.strip().split("\n")[-1] == f"set cmdline='{cmdline}'", cfg


def boot_stick(qemu, cmdline, part, tmp_path, opts=(), **kw):
    """qemu(cmdline, ...) booting the stick part was made on (run-qemu.sh
    --usb-image; cmdline None: the stick's own), checked by check_stick_boot():
    `info block` is asked on a --monitor socket as soon as QEMU listens (the
    guest takes seconds to end; the boot's lock may be waited for first)."""
    sock, answer, done = tmp_path / "mon.sock", {}, threading.Event()

    def ask():
        while not sock.exists():
            if done.wait(0.05):
                return
        answer["blocks"] = monitor_cmd(sock, "info block", timeout=30)

    t = threading.Thread(target=ask, daemon=True)
    t.start()
    try:
        r = qemu(cmdline, opts=["--usb-image", str(part["img"]), "--monitor", str(sock), *opts],
                 **kw)
    finally:
        done.set()
        t.join(40)
    check_stick_boot(answer.get("blocks"), part, r.out,
                     STICK_BUILTIN if cmdline is None else cmdline)
    return r


def take_out(img, part, tmp_path):
    """The BARETRACE partition (fsck.fat -n must find it clean) and TRACE.BIN, by mtools."""
    p = tmp_path / "part.img"
    with open(img, "rb") as f:
        f.seek(part["start"] * 512)
        p.write_bytes(f.read(part["blocks"] * 512))
    fsck = subprocess.run(["fsck.fat", "-n", p], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    assert fsck.returncode == 0, fsck.stdout
    out = tmp_path / "TRACE.BIN"
    out.unlink(missing_ok=True)
    subprocess.run(["mcopy", "-n", "-i", p, "::TRACE.BIN", out], check=True,
                   env={"MTOOLS_SKIP_CHECK": "1", "PATH": "/usr/bin:/bin"})
    return out


def decode(decoder, path, k, tmp_path, complete=False):
    text = tmp_path / f"dump{k}.txt"
    p = subprocess.run([decoder, path, "--dump", str(k), "--text", text],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr
    assert not complete or "complete (verified by END)" in p.stderr, p.stderr
    m = re.search(r"dump \d+ of (\d+) .*?(\d+) events", p.stderr)
    assert m, p.stderr
    return text.read_text(), int(m.group(1)), int(m.group(2))


def compare_saves(r, decoder, serial, trace_bin, saves, tmp_path, in_file=None):
    """Save k of TRACE.BIN against dump k of the serial capture and the kernel's counts
    (the first saves; in_file: the saves the file holds, saves if None)."""
    usb_lines = r.all(r"^dump: usb id=")
    bin_lines = r.all(r"^dump: bin id=")
    assert len(usb_lines) == (in_file or saves), r.out
    for k in range(1, saves + 1):
        got, n_file, ev_file = decode(decoder, trace_bin, k, tmp_path / "f")
        want, _, ev_serial = decode(decoder, serial, k, tmp_path / "s")
        assert n_file == (in_file or saves)
        assert got == want, f"save {k} differs from serial dump {k}"
        ev_kernel = int(re.search(r"events=(\d+)", usb_lines[k - 1]).group(1))
        assert ev_file == ev_kernel == ev_serial == \
            int(re.search(r"events=(\d+)", bin_lines[k - 1]).group(1))
        assert ev_file > 1000


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_usb3_saves_until_full(qemu, decoder, tools, tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "s").mkdir()
    img, serial = tmp_path / "stick.img", tmp_path / "serial.log"
    part = make_stick(tools, img, 1)
    # Plain frames: sized so that the fourth save does not fit (PACK frames take a
    # third: test_usb2_save_and_panic saves those).
    r = boot_stick(qemu, "run=demo,dump,dump,dump dump=bin,usb dump.encoding=plain exit", part,
                   tmp_path, timeout=240, serial=serial)
    # The fourth save does not fit: its job fails, the others pass.
    assert r.rc == 1, r.out
    assert r.all(r"^run: job=\w+ result=") == [
        "run: job=demo result=pass", "run: job=dump result=pass", "run: job=dump result=pass",
        "run: job=dump result=fail"]
    assert r.has(r"^usb: xhci \S+ port 1: connected usb3 speed=super$"), r.out
    assert r.has(r"^usb: device=.* speed=super"), r.out
    f = r.fields(r"^usb: storage=")
    assert f["block_size"] == "512" and int(f["blocks"]) == img.stat().st_size // 512
    assert r.has(rf"^usb: trace file: partition 5 \(gpt\) blocks {part['start']}\+"), r.out
    saved = r.all(r"^usb: saved ")
    assert [int(re.search(r"seq=(\d+)", l).group(1)) for l in saved] == [1, 2, 3], r.out
    # Each save starts where the previous one ended: the mark's block, then its blocks.
    lba = part["data"]
    for l in saved:
        f = dict(re.findall(r"(\w+)=(\d+)", l))
        assert int(f["lba"]) == lba
        lba += int(f["blocks"])
    assert r.has(r"^usb: save: TRACE\.BIN is full: this save needs \d+ blocks, \d+ are free "
                 r"after 3 saves; nothing written$"), r.out
    trace_bin = take_out(img, part, tmp_path)
    compare_saves(r, decoder, serial, trace_bin, 3, tmp_path)
    # The header is the one mkusb-image.sh wrote, and the frames end where the saves say.
    data = trace_bin.read_bytes()
    assert data[:8] == b"BTRACEF1"
    end = (lba - part["file"]) * 512
    assert not data[end:].strip(b"\0") or data[end:end + 512] == bytes(512)


def test_usb2_save_and_panic(qemu, decoder, tools, tmp_path):
    (tmp_path / "f").mkdir()
    (tmp_path / "s").mkdir()
    img, serial = tmp_path / "stick.img", tmp_path / "serial.log"
    part = make_stick(tools, img, 8)
    # Under OVMF, which leaves its own xHCI driver's state behind (it booted
    # from the stick on that controller) and puts the controller's 64-bit BAR
    # above the identity map (0xe000000000: 896 GiB).
    r = boot_stick(qemu, "run=demo,fault dump=bin,usb panic.dump=usb exit", part, tmp_path,
                   timeout=180, serial=serial, uefi=True, opts=["--usb-xhci", "p3=0"])
    assert r.rc == 1, r.out                 # the fault fails the run
    assert r.all(r"^run: job=\w+ result=") == ["run: job=demo result=pass"], r.out
    assert r.has(r"^PANIC: unhandled exception: vector=14 "), r.out
    assert r.has(r"^usb: xhci \S+ port 1: connected usb2 speed=high$"), r.out
    assert r.has(r"^usb: device=.* speed=high"), r.out
    assert [l.split()[2] for l in r.all(r"^usb: saved ")] == ["seq=1", "seq=2"], r.out
    trace_bin = take_out(img, part, tmp_path)
    compare_saves(r, decoder, serial, trace_bin, 1, tmp_path, in_file=2)
    # The panic's save: the marks run=fault recorded just before it faulted
    # (fault.marks=16 by default: seq 1..16) are its last events, all of them.
    text, n, events = decode(decoder, trace_bin, 2, tmp_path / "f")
    assert n == 2
    assert events == int(re.search(r"events=(\d+)", r.all(r"^dump: usb id=")[1]).group(1))
    seqs = [int(s) for s in re.findall(r"^\s*task/0-1\s+\[000\] .* bench: seq=(\d+)$", text,
                                       re.M)]
    assert seqs[-16:] == list(range(1, 17)), text[-2000:]
    assert re.findall(r": (\w+): ", text)[-1] == "bench"


def test_foreign_header_is_never_written(qemu, tools, tmp_path):
    img = tmp_path / "stick.img"
    part = make_stick(tools, img, 1)
    with open(img, "r+b") as f:
        f.seek(part["file"] * 512)
        f.write(b"NOTOURS!" + bytes(504))
    before = sha(img)
    # No --cmdline: nothing written before the boot either; the stick boots
    # with its built-in line, which is this test's (STICK_BUILTIN).
    r = boot_stick(qemu, None, part, tmp_path, timeout=120)
    assert r.has(r"^usb: storage="), r.out
    assert r.has(r"^usb: refused: TRACE\.BIN has no baretrace header \(foreign file\); "
                 r"storage=\"xhci \S+ port 1\" is never written$"), r.out
    assert r.has(r"^usb: no stick with a baretrace trace file \(1 storage device\); "
                 r"nothing will be written$"), r.out
    assert r.has(r"^usb: save: no trace file to save into$"), r.out
    assert not r.has(r"^usb: saved"), r.out
    assert sha(img) == before


RECORD_EVENT = re.compile(r"^\s*task/\d+-\d+\s+\[(\d{3})\] .* bench: seq=(\d+)$")
RECORD_LOST = re.compile(r"^CPU:(\d+) \[LOST (\d+) EVENTS\]$")


def record_check(text, stored, whole):
    """Per CPU, in buffer order: every bench seq from the writer's first on
    is present or counted by the LOST marker just before the next one
    present; whole: nothing missing at the end (the writer's last is there)
    and seen + lost = stored.  Returns {cpu: (seen, lost)}."""
    nxt, pending, seen, lost = {}, {}, {}, {}
    for line in text.split("\n"):
        m = RECORD_LOST.match(line)
        if m:
            c = int(m.group(1))
            pending[c] = pending.get(c, 0) + int(m.group(2))
            continue
        m = RECORD_EVENT.match(line)
        if not m:
            continue
        c, seq = int(m.group(1)), int(m.group(2))
        want = nxt.get(c, stored[c]["first"])
        assert seq - want == pending.get(c, 0), (c, seq, want, pending.get(c))
        lost[c] = lost.get(c, 0) + pending.pop(c, 0)
        seen[c] = seen.get(c, 0) + 1
        nxt[c] = seq + 1
    for c, st in stored.items():
        if whole:
            assert nxt[c] == st["last"] + 1 and not pending.get(c), (c, nxt.get(c), st)
            assert seen[c] + lost.get(c, 0) == st["stored"], (c, seen[c], lost.get(c), st)
        else:
            assert nxt[c] <= st["last"] + 1
    return {c: (seen.get(c, 0), lost.get(c, 0)) for c in stored}


def test_record_streams_a_trace_longer_than_the_ring(qemu, decoder, tools, tmp_path):
    img = tmp_path / "stick.img"
    part = make_stick(tools, img, 1)
    count, pages = 45000, 4
    # Plain frames: sized so that the second stream fills TRACE.BIN.
    r = boot_stick(qemu, f"run=record,record trace.record=usb trace.pages={pages} "
                   f"dump.encoding=plain trace.events=-*,bench:bench record.count={count} "
                   "record.rate=0 exit", part, tmp_path, smp=2, timeout=240)
    assert r.rc == 1, r.out                 # the second stream did not fit whole
    assert r.all(r"^run: job=\w+ result=") == ["run: job=record result=pass",
                                               "run: job=record result=fail"], r.out
    assert len(r.all(r"^record: TRACE\.BIN is full after \d+ pages; recording to the "
                     r"stick stops, the in-memory trace goes on$")) == 1, r.out
    # The writers' own counts, per run: {cpu: {stored, dropped, first, last}}.
    runs = [{}, {}]
    for i, l in enumerate(r.all(r"^record: cpu=\d+ stored=")):
        f = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", l)}
        assert f["stored"] == count and f["dropped"] == 0, l
        runs[i // 2][f["cpu"]] = f
    ends = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in r.all(r"^record: saved dump_id=")]
    assert len(ends) == 2, r.out
    trace_bin = take_out(img, part, tmp_path)
    (tmp_path / "f").mkdir()
    for k, whole in ((1, True), (2, False)):
        text, n, events = decode(decoder, trace_bin, k, tmp_path / "f", complete=True)
        assert n == 2 and events == int(ends[k - 1]["events"])
        got = record_check(text, runs[k - 1], whole)
        assert sum(l for _, l in got.values()) == int(ends[k - 1]["lost"])
        if whole:
            # Longer than the ring: 4 pages hold at most 4 * 4096 / 12 events.
            assert count >= 4 * pages * 4096 // 12
            assert got[0] == (count, 0), got     # the draining CPU keeps up with itself


def one_stream(r, count):
    """A run=record of one stream: the writers' own counts {cpu: {stored, ...}}, each
    count events stored and none dropped, and the stream's `record: saved` fields."""
    runs = {}
    for l in r.all(r"^record: cpu=\d+ stored="):
        f = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", l)}
        assert f["stored"] == count and f["dropped"] == 0, l
        runs[f["cpu"]] = f
    return runs, dict(re.findall(r"(\w+)=(\d+)", r.all(r"^record: saved dump_id=")[0]))


def test_record_streams_packed(qemu, decoder, tools, tmp_path):
    """trace.record=usb in PACK frames (the default): a stream 4x the ring's size, every
    sequence number present or counted lost, the events the kernel says it saved."""
    img = tmp_path / "stick.img"
    part = make_stick(tools, img, 1)
    count, pages = 45000, 4
    r = boot_stick(qemu, f"run=record trace.record=usb trace.pages={pages} "
                   f"trace.events=-*,bench:bench record.count={count} record.rate=0 exit",
                   part, tmp_path, smp=2, timeout=240)
    assert r.rc == 0, r.out
    runs, end = one_stream(r, count)
    trace_bin = take_out(img, part, tmp_path)
    (tmp_path / "f").mkdir()
    text, n, events = decode(decoder, trace_bin, 1, tmp_path / "f", complete=True)
    assert n == 1 and events == int(end["events"])
    got = record_check(text, runs, True)
    assert sum(l for _, l in got.values()) == int(end["lost"])
    assert count >= 4 * pages * 4096 // 12
    assert got[0] == (count, 0), got
    assert int(end["bytes"]) * 2 < events * 12      # packed: under half the plain records


def test_record_streams_over_serial(qemu, decoder, tmp_path):
    """trace.record=serial: the same recorder, its frames over the console while the
    writers go on (no stick): a stream 4x the ring's size decodes as one complete dump,
    every sequence number present or counted lost, nothing else inside the dump."""
    cap = tmp_path / "serial.bin"
    count, pages = 45000, 4
    r = qemu(f"run=record trace.record=serial trace.pages={pages} "
             f"trace.events=-*,bench:bench record.count={count} record.rate=0 exit",
             smp=2, timeout=240, serial=cap)
    assert r.rc == 0, r.out
    assert r.has(r"^record: serial stream dump_id=\d+$"), r.out
    runs, end = one_stream(r, count)
    (tmp_path / "f").mkdir()
    text, n, events = decode(decoder, cap, 1, tmp_path / "f", complete=True)
    assert n == 1 and events == int(end["events"])
    got = record_check(text, runs, True)
    assert sum(l for _, l in got.values()) == int(end["lost"])
    assert sum(s + l for s, l in got.values()) == 2 * count
    assert count >= 4 * pages * 4096 // 12
    assert got[0] == (count, 0), got
    p = subprocess.run([decoder, cap], capture_output=True, text=True)
    assert f"bytes={end['bytes']}:" in p.stderr, p.stderr   # the kernel's count, as sent


def test_demo_streams_over_serial(qemu, decoder, tmp_path):
    """run=demo with trace.record=serial: 4 CPUs' events and their lines (the demo's
    own before the stream opens) leave the stream one complete dump, no damage."""
    cap = tmp_path / "serial.bin"
    r = qemu("run=demo trace.record=serial demo.ms=200 dump=none exit", smp=4, timeout=240,
             serial=cap)
    assert r.rc == 0, r.out
    end = dict(re.findall(r"(\w+)=(\d+)", r.all(r"^record: saved dump_id=")[0]))
    p = subprocess.run([decoder, cap], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "damage" not in p.stderr and "complete (verified by END)" in p.stderr, p.stderr
    assert f"bytes={end['bytes']}:" in p.stderr and f" {end['events']} events" in p.stderr
    assert int(end["events"]) > 10000


def test_other_cpus_print_during_a_serial_stream(qemu, decoder, tmp_path):
    """trace.record=serial while the other CPUs print (demo.print_ms): the console lock
    lets each line out whole between two frames, and the decoder reads one complete dump
    (exit 0, no damage) and shows every line as console text inside it, each CPU's lines
    all there once, as many as the CPU counted itself. Kills: the stream's frames written
    without the console lock (lines inside frames: bad CRCs, exit 1); console text taken
    as damage by the decoder."""
    cap = tmp_path / "serial.bin"
    r = qemu("run=demo trace.record=serial demo.ms=300 demo.print_ms=20 dump=none exit",
             smp=4, timeout=240, serial=cap)
    assert r.rc == 0, r.out
    end = dict(re.findall(r"(\w+)=(\d+)", r.all(r"^record: saved dump_id=")[0]))
    printed = {int(c): int(n) for l in r.all(r"^demo: cpu=\d+ printed=\d+$")
               for c, n in [re.findall(r"\d+", l)]}
    assert sorted(printed) == [1, 2, 3] and min(printed.values()) >= 5, r.out
    p = subprocess.run([decoder, cap], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "damage" not in p.stderr and "complete (verified by END)" in p.stderr, p.stderr
    assert f"bytes={end['bytes']}:" in p.stderr and f" {end['events']} events" in p.stderr
    a, b = map(int, re.search(r"at byte offsets (\d+)\.\.(\d+) bytes=", p.stderr).groups())
    shown = [(int(o), int(c), int(k)) for o, c, k in re.findall(
        r"^baretrace-decode: console text at byte offset (\d+): \[[ .\d]+\] "
        r"demo: cpu=(\d+) line=(\d+)$", p.stderr, re.M)]
    assert sorted((c, k) for _, c, k in shown) == sorted(
        (c, k) for c, n in printed.items() for k in range(1, n + 1)), p.stderr
    assert all(a < o < b for o, _, _ in shown), (a, b, shown)


def keys(text):
    """The monitor's sendkey lines that type text on a US keyboard (letters, digits, '!')."""
    names = {" ": "spc", "\n": "ret", "\x03": "ctrl-c", "!": "shift-1"}
    return ["sendkey " + names.get(c, f"shift-{c.lower()}" if c.isupper() else c) for c in text]


def test_usb_keyboard_types_into_the_shell(shell, tools, tmp_path):
    """A usb-kbd beside the stick (two devices, two slots) types shell lines
    through the monitor's sendkey: a line cut by Ctrl-C is dropped, the next
    runs; shift gives capitals and '!' (the shell names the unknown word)."""
    img = tmp_path / "stick.img"
    part = make_stick(tools, img, 1)
    sock = tmp_path / "mon.sock"
    s = shell("run=shell", smp=2, timeout=240, boot_timeout=150,
              opts=["--usb-image", str(img), "--usb-kbd", "--monitor", str(sock)])
    boot = s.text()
    check_stick_boot(monitor_cmd(sock, "info block", timeout=30), part, boot, "run=shell")
    slots = re.findall(r"^\[[ .\d]+\] usb: device=\"[^\"]+\" id=\S+ speed=\S+ slot=(\d+)$",
                       boot, re.M)
    assert len(set(slots)) == 2, boot
    assert re.search(r"^\[[ .\d]+\] usb: keyboard device=\"xhci [0-9a-f:.]+ port \d+\" "
                     r"id=0627:0001 interface=0 endpoint=0x81 interval=\d+$", boot, re.M), boot
    monitor_cmd(sock, keys("x\x03status\n"), timeout=60)
    out = s.wait_prompt(90)                 # the line Ctrl-C dropped ends at a prompt
    out += s.wait_prompt(90)
    assert re.search(r"^trace: recording=on ", out, re.M), out
    assert "unknown command" not in out, out
    monitor_cmd(sock, keys("aA!\n"), timeout=60)
    out = s.wait_prompt(90)
    assert "error: unknown command 'aA!'" in out, out
    s.send(b"poweroff\r")
    assert s.close(60) == 0, s.text()


def make_plain_disk(tmp_path):
    """A 40 MiB disk that is not a baretrace stick: an MBR with one FAT32
    partition (type 0x0c) labelled PHOTOS holding a file, made by sfdisk,
    mkfs.fat and mtools as a camera's card or a data stick would be."""
    disk, part = tmp_path / "plain.img", tmp_path / "plain-part.img"
    with open(disk, "wb") as f:
        f.truncate(40 << 20)
    subprocess.run(["sfdisk", "-q", disk], input=b"label: dos\nstart=2048, type=c\n",
                   check=True)
    blocks = (40 << 20) // 512 - 2048
    subprocess.run(["mkfs.fat", "-F", "32", "-n", "PHOTOS", "-C", part, str(blocks // 2)],
                   check=True, stdout=subprocess.DEVNULL)
    photo = tmp_path / "IMG_0001.JPG"
    photo.write_bytes(os.urandom(300000))
    subprocess.run(["mcopy", "-i", part, photo, "::IMG_0001.JPG"], check=True,
                   env={"MTOOLS_SKIP_CHECK": "1", "PATH": "/usr/bin:/bin"})
    subprocess.run(["dd", f"if={part}", f"of={disk}", "bs=1M", f"seek={2048 * 512}",
                    "oflag=seek_bytes", "conv=notrunc", "status=none"], check=True)
    return disk


@pytest.mark.parametrize("plain_port,uefi,usb2", [(1, False, True), (2, True, False)],
                         ids=["plain-first-seabios-usb2", "plain-second-ovmf-usb3"])
def test_second_stick_without_baretrace(qemu, decoder, tools, tmp_path, plain_port, uefi,
                                        usb2):
    (tmp_path / "f").mkdir()
    (tmp_path / "s").mkdir()
    img, serial = tmp_path / "stick.img", tmp_path / "serial.log"
    part = make_stick(tools, img, 8)
    plain = make_plain_disk(tmp_path)
    plain_sha, stick_port = sha(plain), 3 - plain_port
    opts = ["--usb-port", str(stick_port), "--usb-image2", str(plain), "--usb-port2",
            str(plain_port)]
    if usb2:
        opts += ["--usb-xhci", "p3=0"]
    # The firmware boots the stick (bootindex), whichever port the plain disk is on.
    r = boot_stick(qemu, "run=demo dump=bin,usb exit", part, tmp_path, timeout=240,
                   serial=serial, uefi=uefi, opts=opts)
    assert sha(plain) == plain_sha, r.out    # first: never written, whatever else happened
    assert r.rc == 0, r.out
    usb, speed = ("usb2", "high") if usb2 else ("usb3", "super")
    for port in (1, 2):
        assert r.has(rf"^usb: xhci \S+ port {port}: connected {usb} speed={speed}$"), r.out
    assert len(r.all(r"^usb: storage=")) == 2, r.out
    # One line for the plain disk, naming its port; the stick is the other one.
    assert r.all(r"^usb: (refused|not used): ") == [
        "usb: refused: no FAT32 partition labelled BARETRACE; storage=\"xhci "
        + re.search(r"xhci (\S+) port", r.out).group(1) + f" port {plain_port}\" is never "
        "written"], r.out
    assert r.has(rf"^usb: trace file: partition 5 \(gpt\) blocks {part['start']}\+"), r.out
    assert [l.split()[2] for l in r.all(r"^usb: saved ")] == ["seq=1"], r.out
    trace_bin = take_out(img, part, tmp_path)
    compare_saves(r, decoder, serial, trace_bin, 1, tmp_path)


TICK = re.compile(r"^\s*\S+\s+\[(\d{3})\] .* lapic_tick: tick=(\d+)$")


@pytest.mark.parametrize("sink", ["usb", "serial"])
def test_shell_streams_while_idle(shell, decoder, tools, tmp_path, sink):
    pages, opts = 4, []
    cmdline = f"run=shell trace.record={sink} trace.pages={pages} trace.events=-*,irq:lapic_tick"
    if sink == "usb":
        img, sock = tmp_path / "stick.img", tmp_path / "mon.sock"
        part = make_stick(tools, img, 8)
        # A usb-kbd beside the stick: the command that ends the stream is typed on it.
        opts = ["--usb-image", str(img), "--usb-kbd", "--monitor", str(sock)]
    s = shell(cmdline, smp=1, timeout=240, boot_timeout=150, opts=opts)
    if sink == "usb":
        check_stick_boot(monitor_cmd(sock, "info block", timeout=30), part, s.text(), cmdline)
    assert "trace: buffers emptied" in s.cmd("reset")
    out = s.cmd("start")
    assert re.search(r"^trace: recording=on$", out, re.M), out
    assert re.search(r"record: usb stream dump_id=\d+ lba=\d+ free_bytes=\d+$" if sink == "usb"
                     else r"record: serial stream dump_id=\d+$", out, re.M), out
    time.sleep(10)                          # idle: the shell's wait drains the ticks
    out = s.cmd("dump text")
    assert "error: dump: the stream of trace.record= is reading the buffers; 'stop' ends it" \
        in out, out
    if sink == "usb":
        # A command that rebuilds the buffers, typed on the USB keyboard while
        # the stream is open: the stream ends first, whole (its END: decoded
        # as complete below), then the buffers are rebuilt; recording goes on
        # in memory, and `stop` after it has no stream left to end.
        monitor_cmd(sock, keys("reset\n"), timeout=60)
        out = s.wait_prompt(120)
        order = [out.find(t) for t in ("record: the buffers are rebuilt: the stream ends first\n",
                                       "record: saved dump_id=",
                                       "trace: buffers emptied; recording=on\n")]
        assert 0 <= order[0] < order[1] < order[2], out
        stop = s.cmd("stop", timeout=120)
        assert re.search(r"^trace: recording=off$", stop, re.M), stop
        assert "record:" not in stop, stop
    else:
        out = s.cmd("stop", timeout=120)
        assert re.search(r"^trace: recording=off$", out, re.M), out
    m = re.search(r"record: saved dump_id=\d+ pages=(\d+) events=(\d+) lost=(\d+) bytes=(\d+) "
                  r"ms=(\d+)$", out, re.M)
    assert m, out
    npages, events, lost, nbytes, ms = map(int, m.groups())
    s.send(b"poweroff\r")
    assert s.close(60) == 0, s.text()
    (tmp_path / "f").mkdir()
    if sink == "usb":
        trace_bin = take_out(img, part, tmp_path)
        text, n, decoded = decode(decoder, trace_bin, 1, tmp_path / "f", complete=True)
        assert n == 1 and decoded == events
    else:
        # The shell's own bytes while the stream was open (its prompts, the
        # echo of what was typed, the refusal) come out between frames: the
        # decoder names them as non-frame data, its only damage; the frames'
        # bytes are the kernel's count exactly.
        cap, txt = tmp_path / "serial.bin", tmp_path / "f" / "dump.txt"
        cap.write_bytes(s.buf)
        p = subprocess.run([decoder, cap, "--text", txt], capture_output=True, text=True)
        gaps = [int(g) for g in re.findall(r"damage: (\d+) bytes of non-frame data inside the "
                                           r"dump", p.stderr)]
        assert len(gaps) == len(re.findall(r"damage:", p.stderr)) >= 1, p.stderr
        d = re.search(r"dump 1 of 1 .* bytes=(\d+): 1 CPUs, \d+ pages, (\d+) events, (\d+) lost",
                      p.stderr)
        assert d and int(d.group(1)) - sum(gaps) == nbytes, p.stderr
        assert int(d.group(2)) == events and int(d.group(3)) == lost, p.stderr
        text = txt.read_text()
    # The shell's CPU's ticks, in order: each the one before plus one (the
    # LAPIC counts every interrupt it takes), a gap only where a LOST marker
    # counts it exactly; none here.
    ticks = []
    for line in text.split("\n"):
        lm = RECORD_LOST.match(line)
        assert not lm, line
        tm = TICK.match(line)
        if tm:
            assert tm.group(1) == "000", line
            ticks.append(int(tm.group(2)))
    assert len(ticks) == events and lost == 0, (len(ticks), events, lost)
    assert ticks == list(range(ticks[0], ticks[0] + len(ticks))), "a tick is missing"
    # Many times what the rings hold (a record is at least 8 bytes): drained while idle.
    assert events > 4 * pages * 4096 // 8, (events, npages, ms)
