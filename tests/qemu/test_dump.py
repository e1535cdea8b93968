"""The reader: text and binary dumps of the same run, decoded on the host."""
import re
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, make_locked

EVENT = re.compile(rb"^\s*(task|softirq|irq|nmi)/(\d+)-\d+\s+\[(\d{3})\] (\S{4})\s+(\d+)\.(\d{9}): (\w+): (.*)$")


def kernel_text(capture: bytes) -> bytes:
    t = capture.replace(b"\r\n", b"\n")
    start = t.index(b"# tracer: ")     # baretrace, or function_graph with graph lines
    end = t.index(b"\xbaTR\xce", start)
    return t[start:end]


def test_text_and_binary_dumps_agree(qemu, decoder, tmp_path):
    # 100 ms: about 2,000 events a CPU, 8 pages or so each, every kind of
    # activity many times over; the serial line carries the two dumps at
    # about 120 KB/s (300 ms, 2.4 MB, held the machine for 20 s).
    cap = tmp_path / "serial.bin"
    r = qemu("run=demo exit demo.ms=100 dump=text,bin dump.last=0", smp=4, serial=cap)
    assert r.rc == 0, r.out
    raw = cap.read_bytes()
    ktext = kernel_text(raw)
    d = subprocess.run([str(decoder), str(cap), "--text", str(tmp_path / "dec.txt"),
                        "--ctf", str(tmp_path / "ctf")], capture_output=True, timeout=120)
    assert d.returncode == 0, d.stderr
    assert (tmp_path / "dec.txt").read_bytes() == ktext
    lines = [EVENT.match(l) for l in ktext.split(b"\n")]
    events = [m for m in lines if m]
    assert len(events) > 1000
    # Every kind of activity the demo makes is there, from every CPU.
    names = {m.group(7) for m in events}
    assert {b"producer", b"lapic_tick", b"ipi_send", b"ipi_recv"} <= names, names
    assert {int(m.group(3)) for m in events} == {0, 1, 2, 3}
    # Merged order: time never goes backwards.
    ts = [int(m.group(5)) * 10**9 + int(m.group(6)) for m in events]
    assert ts == sorted(ts)
    # babeltrace2 reads the CTF trace: same count, same ns stamps, same per-CPU order.
    if shutil.which("babeltrace2"):
        bt = subprocess.run(["babeltrace2", "--clock-seconds", str(tmp_path / "ctf")],
                            capture_output=True, timeout=120, text=True)
        assert bt.returncode == 0, bt.stderr
        bt_lines = [l for l in bt.stdout.splitlines() if l.startswith("[")]
        assert len(bt_lines) == len(events)
        bt_ts = sorted(round(float(l[1:l.index("]")]) * 1e9) for l in bt_lines)
        assert all(abs(a - b) <= 1 for a, b in zip(bt_ts, sorted(ts)))


def test_pack_and_plain_dumps_agree(qemu, decoder, tmp_path):
    """The same snapshot dumped in PACK frames and in plain ones (dump.encoding=
    pack,plain: two dumps) decodes to the same text, byte for byte, from under
    half the bytes; the kernel's bytes= and the decoder's agree, and
    dump.measure=1 counted the same bytes for each without sending them."""
    cap = tmp_path / "serial.bin"
    r = qemu("run=demo exit demo.ms=100 dump=bin dump.last=0 dump.encoding=pack,plain "
             "dump.measure=1", smp=4, serial=cap)
    assert r.rc == 0, r.out
    sent = {m[1]: int(m[0]) for m in re.findall(
        r"^dump: bin id=\d+ frames=\d+ pages=\d+ events=\d+ bytes=(\d+) encoding=(\w+)$",
        r.out, re.M)}
    measured = {m[0]: int(m[1]) for m in re.findall(
        r"^dump: measure encoding=(\w+) bytes=(\d+) events=\d+ ", r.out, re.M)}
    assert set(sent) == {"pack", "plain"} and measured == sent, r.out
    texts, sizes = [], []
    for k in (1, 2):
        d = subprocess.run([str(decoder), str(cap), "--dump", str(k)], capture_output=True,
                           timeout=120)
        assert d.returncode == 0, d.stderr
        texts.append(d.stdout)
        sizes.append(int(re.search(rb"bytes=(\d+):", d.stderr).group(1)))
    assert sizes == [sent["pack"], sent["plain"]]
    assert texts[0] == texts[1]
    assert texts[0].count(b"producer:") > 1000
    assert sizes[0] * 2 < sizes[1]
    raw = cap.read_bytes()
    first_plain = raw.index(b"\xbaTR\xce\x01", raw.index(b"\xbaTR\xce\x05"))
    assert b"\xbaTR\xce\x03" not in raw[:first_plain]     # no PAGE frame in the packed one
    assert b"\xbaTR\xce\x0b" not in raw[first_plain:]     # no PACK frame in the plain one


def test_overwrite_loss_is_reported(qemu, decoder, tmp_path):
    cap = tmp_path / "serial.bin"
    r = qemu("run=demo exit demo.ms=300 trace.pages=4 dump=text,bin dump.last=0", smp=2,
             serial=cap)
    assert r.rc == 0, r.out
    ktext = kernel_text(cap.read_bytes()).decode()
    per_cpu = {int(c): (int(o), int(d)) for c, o, d in
               re.findall(r"^# cpu=(\d+) entries=\d+ overrun=(\d+) dropped=(\d+) ", ktext, re.M)}
    lost = {}
    for c, m in re.findall(r"^CPU:(\d+) \[LOST (\d+) EVENTS\]$", ktext, re.M):
        lost[int(c)] = lost.get(int(c), 0) + int(m)
    assert lost, ktext[:2000]
    for c, (overrun, dropped) in per_cpu.items():
        assert lost.get(c, 0) == overrun + dropped, (c, lost, per_cpu)
    d = subprocess.run([str(decoder), str(cap), "--quiet"], capture_output=True, timeout=120)
    assert d.returncode == 0, d.stderr


def test_pages_before_an_integrity_stop_are_dumped(qemu, decoder, tmp_path):
    """A CPU whose buffer stopped halfway (inject.ring_stop=1) still has every
    page completed before the stop in both dumps, and the dump says why."""
    cap = tmp_path / "serial.bin"
    # 100 ms: CPU 1 stops at 50 ms with about 1,000 events on several pages.
    r = qemu("run=demo exit demo.ms=100 inject.ring_stop=1 dump=text,bin dump.last=0",
             smp=3, serial=cap)
    assert r.rc == 0, r.out
    assert r.has(r"trace: cpu=1 recording stopped: stopped by inject.ring_stop")
    ktext = kernel_text(cap.read_bytes())
    stats = {int(c): (int(e), int(rd), rest) for c, e, rd, rest in re.findall(
        r"^# cpu=(\d+) entries=(\d+) overrun=\d+ dropped=\d+ commit_overrun=\d+ "
        r"read=(\d+) lost=\d+(.*)$", ktext.decode(), re.M)}
    assert set(stats) == {0, 1, 2}, ktext[:1000]
    assert 'state=stopped reason="stopped by inject.ring_stop"' in stats[1][2]
    assert "state=stopped" not in stats[0][2] + stats[2][2]
    events = [m for m in map(EVENT.match, ktext.split(b"\n")) if m]
    per_cpu = {c: [m for m in events if int(m.group(3)) == c] for c in range(3)}
    # The stopped CPU's pages are all there: as many events as its reader took.
    assert len(per_cpu[1]) == stats[1][1] > 100, (len(per_cpu[1]), stats[1])
    # ... and they end at the stop, while the others traced to the end.
    ts = {c: [int(m.group(5)) * 10**9 + int(m.group(6)) for m in per_cpu[c]] for c in range(3)}
    first = min(min(t) for t in ts.values())
    assert max(ts[1]) - first < 0.75 * (max(ts[0]) - first), (first, max(ts[1]), max(ts[0]))
    # The binary dump carries the same pages: the decoder prints the same text.
    d = subprocess.run([str(decoder), str(cap), "--text", str(tmp_path / "dec.txt")],
                       capture_output=True, timeout=120)
    assert d.returncode == 0, d.stderr
    assert (tmp_path / "dec.txt").read_bytes() == ktext


def test_damaged_capture_is_reported(qemu, decoder, tmp_path):
    cap = tmp_path / "serial.bin"
    r = qemu("run=demo exit demo.ms=100 dump=bin", smp=2, serial=cap)
    assert r.rc == 0, r.out
    raw = bytearray(cap.read_bytes())
    start = raw.index(b"\xbaTR\xce")
    raw[start + 5000] ^= 0x40                       # one flipped bit in a page frame
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(raw[: len(raw) - 300]))   # and the end cut off
    d = subprocess.run([str(decoder), str(bad), "--quiet"], capture_output=True, timeout=120, text=True)
    assert d.returncode == 1, (d.returncode, d.stderr)
    assert "bad CRC" in d.stderr or "CRC" in d.stderr, d.stderr
    assert "END" in d.stderr or "ends inside" in d.stderr, d.stderr


def ctrl_c_during(s, command, needle, timeout=300):
    """Type command, and Ctrl-C once its output shows needle; return the reply
    and the console's byte offset where the command began."""
    start = len(s.buf)
    s.send(command.encode() + b"\r")
    deadline = time.time() + timeout
    while s.buf.find(needle, start) < 0:
        assert s.p.poll() is None and time.time() < deadline, s.text()[-2000:]
        time.sleep(0.02)
    s.send(b"\x03")
    return s.wait_prompt(timeout), start


def test_shell_dump_commands(shell, decoder, tmp_path):
    # A full buffer: 2 CPUs x 256 pages of marks, about 170,000 events (12 MB as
    # text, minutes on a serial line); recording stopped, so every dump below
    # shows the same snapshot. Counts, not time (marks.count= bounds the work,
    # trace.pages= what is kept): the session shares the machine (boot_lock.py).
    s = shell("run=marks,shell marks.count=200000 trace.pages=256", timeout=600, untimed=True)
    s.cmd("stop")
    out = s.cmd("dump text last=5")
    assert out.startswith("# tracer: baretrace\n"), out
    assert len([l for l in out.splitlines() if EVENT.match(l.encode())]) == 5
    out = s.cmd("dump text cpu=1 last=3")
    ev = [EVENT.match(l.encode()) for l in out.splitlines()]
    assert [int(m.group(3)) for m in ev if m] == [1, 1, 1] or \
        len([m for m in ev if m]) <= 3, out
    assert s.cmd("dump") == "error: usage: dump text|bin|usb [cpu=N] [last=N]\n"
    assert s.cmd("dump pdf") == "error: usage: dump text|bin|usb [cpu=N] [last=N]\n"
    assert s.cmd("dump text cpu=9").startswith("error: dump: 'cpu=9' is not accepted")
    assert s.cmd("dump bin last=4") == "error: dump bin carries whole pages: last= is for dump text\n"

    # Without last=: dump.last= (200) events, and a line saying how many were left out.
    out = s.cmd("dump text")
    total = int(re.search(r"^# entries-in-buffer/entries-written: (\d+)/", out, re.M).group(1))
    assert total > 100000, out[:1000]
    assert len([l for l in out.splitlines() if EVENT.match(l.encode())]) == 200
    assert out.endswith(f"dump: showed the last 200 of {total} events; {total - 200} left out "
                        "(last=0 shows all)\n"), out[-500:]

    # Ctrl-C (byte 0x03 on the serial line) cuts a whole dump short; the shell goes on.
    out, _ = ctrl_c_during(s, "dump text last=0", b": bench: seq=")
    m = re.search(r"^dump: cut by Ctrl-C after (\d+) of (\d+) events\n\Z", out, re.M)
    assert m, out[-500:]
    printed = len([l for l in out.splitlines() if EVENT.match(l.encode())])
    assert printed == int(m.group(1)) < int(m.group(2)) == total, (printed, m.groups(), total)

    # The binary dump: cut at a page, the stream still ended (STATS, END), decodable.
    out, start = ctrl_c_during(s, "dump bin", b"\xbaTR\xce")
    m = re.search(r"^dump: cut by Ctrl-C after (\d+) of (\d+) pages$", out, re.M)
    assert m and int(m.group(1)) < int(m.group(2)), out[-500:]
    cap = tmp_path / "cut.bin"
    with s.lock:
        cap.write_bytes(s.buf[start:])
    d = subprocess.run([str(decoder), str(cap), "--quiet"], capture_output=True, timeout=120,
                       text=True)
    assert d.returncode == 0, d.stderr
    assert re.search(rf"was cut short in the kernel \(Ctrl-C\): it ends after {m.group(1)} "
                     r"pages", d.stderr), d.stderr
    assert "damaged" not in d.stderr.lower(), d.stderr
    assert re.search(r"^cpus: online=2 ", s.cmd("cpus"), re.M)
    s.send(b"poweroff\r")
    assert s.close() == 0


def ktest_dump(qemu, decoder, tmp_path, ktest, opts=()):
    """Run one ktest that dumps (text and binary); the decoder's text of the
    binary dump must be the kernel's text. Returns the capture and that text."""
    cap = tmp_path / "serial.bin"
    r = qemu(f"run=ktest,dump ktest={ktest} exit dump=text,bin dump.last=0", serial=cap,
             opts=opts)
    assert r.rc == 0, r.out
    return cap, decoded_is_kernel_text(decoder, cap, tmp_path)


def decoded_is_kernel_text(decoder, cap, tmp_path):
    """The decoder's text of the capture's binary dump is the kernel's text
    dump before it, byte for byte; returns that text."""
    ktext = kernel_text(cap.read_bytes())
    d = subprocess.run([str(decoder), str(cap), "--text", str(tmp_path / "dec.txt")],
                       capture_output=True, timeout=120)
    assert d.returncode == 0, d.stderr
    assert (tmp_path / "dec.txt").read_bytes() == ktext
    return ktext


EXTRA_BUILD = "build/events-extra"
EXTRA_STATES = {0: "idle", 1: "busy", 7: "gone"}
EXTRA_PATHS = ["/", "/boot/grub", "/a/path/much/lo..."]   # the third cut at its 16-byte bound


@pytest.fixture(scope="module")
def extra_kernel():
    """The kernel built with tests/host/events_extra.h (every field kind);
    the decoder is never built with them."""
    make_locked("kernel", f"BUILD={EXTRA_BUILD}", "EVENTS_EXTRA=tests/host/events_extra.h",
                timeout=900)
    return ROOT / EXTRA_BUILD / "kernel.elf"


def test_kernel_events_the_decoder_never_saw(qemu, decoder, extra_kernel, tmp_path):
    """A kernel with events the decoder has no table for: the decoder reads
    them from the dump's EVENTS (and SYMS) frames, prints exactly the
    kernel's text, and every value is the one the ktest recorded (recomputed
    here from its loop index). Kills: a decoder that needs its own table,
    a writer that stores a field at the wrong offset or width, a string not
    cut at its bound, a code address not named."""
    cap, ktext = ktest_dump(qemu, decoder, tmp_path, "extra_events", ("--kernel", str(extra_kernel)))
    ev = subprocess.run([str(decoder), str(cap), "--events"], capture_output=True, timeout=60)
    listed = ev.stdout.decode().splitlines()
    # The extra events come after the built-in ones, whose ids run 1..n.
    n = len(listed) - 2
    assert [int(re.search(r" id=(\d+) ", l).group(1)) for l in listed] == list(range(1, n + 3))
    assert listed[-2:] == [
        f"extra:ints id={n + 1} fields=a:u8,b:s8,c:u16,d:s16,e:x32,f:s32,g:u64,h:s64",
        f"extra:mixed id={n + 2} fields=flag:bool,addr:x64,fn:sym,state:enum,tag:char[6],"
        "path:str[16],note:str[40],small:x8"]
    got = {b"ints": [], b"mixed": []}
    for m in filter(None, (EVENT.match(l) for l in ktext.split(b"\n"))):
        if m.group(7) in got:
            got[m.group(7)].append(m.group(8).decode())
    want_ints = [f"a={i} b={-i} c={i * 1000} d={-300 * i} e={hex(0xdead0000 + i)} "
                 f"f={-i * 100000} g={i << 40} h={-(i << 40)}" for i in range(40)]
    want_mixed = [f"flag={i & 1} addr={hex(0xffff800000000000 + i)} "
                  f"fn=ktest_fn_extra_events+0x0 "
                  f"state={EXTRA_STATES[(1 if i % 3 == 1 else 7) if i % 3 else 0]} "
                  f"tag={'tagged' if i & 1 else 't6789a'} path={EXTRA_PATHS[i % 3]} "
                  f"note={'' if i % 2 else 'note'} small={hex(i)}" for i in range(40)]
    assert got[b"ints"] == want_ints
    assert got[b"mixed"] == want_mixed


def test_trace_printk_lines(qemu, decoder, tmp_path):
    """trace_printk records the format's address and the arguments in
    binary; the kernel's text and the decoder's (formats from the dump's
    PRINTK frames, the function from SYMS) print "<function>: <message>",
    every value as printf would (recomputed here with Python's %). Kills: a
    format read from the decoder's memory, an argument encoded at the wrong
    width, the caller's name lost, the line's newline kept."""
    _, ktext = ktest_dump(qemu, decoder, tmp_path, "trace_printk_lines")
    lines = [m.group(7) + b": " + m.group(8) for m in
             filter(None, (EVENT.match(l) for l in ktext.split(b"\n")))]
    want = [("ktest_fn_trace_printk_lines: round %d of %u: hex=%#06x neg=%d str=%-6s| %c %u%%"
             % (i, 5, 0xbeef + i, -(1 << 40) - i, "odd" if i & 1 else "even", chr(97 + i),
                i * 1000)).encode() for i in range(5)]
    want.append(b"ktest_fn_trace_printk_lines: a plain string")
    assert [l for l in lines if l.startswith(b"ktest_fn_trace_printk_lines")] == want
