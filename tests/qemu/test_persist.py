"""Resets that the next boot sees: run-qemu.sh --reboot (no -no-reboot), the
shell's reboot, the monitor's system_reset over --monitor, and RAM backed by
a host file (--mem-file) that outlives the run.

Each test counts the kernel's banner: one per boot, so two banners in one
QEMU run mean the guest reset and booted the same image again.

What is checked is what survives a reset: banners, marks, event lines, the
verdicts on the range; never a time, a skew or a race. So the multi-CPU
boots share the machine (untimed=True, tests/qemu/boot_lock.py); the one
that tests the clock watchdog runs under icount.
"""
import random
import re
import time
import zlib

import pytest

from conftest import ROOT
from qemu_shell import monitor_cmd

BANNER = "trace recording laboratory, x86-64"


@pytest.mark.parametrize("uefi", [False, True])
def test_shell_reboot_boots_again_with_reboot(shell, uefi):
    opts = ["--reboot"] + (["--uefi"] if uefi else [])
    s = shell("run=shell", smp=2, timeout=180, boot_timeout=120, opts=opts, untimed=True)
    s.send(b"reboot\r")
    s.wait_prompt(120)                      # the second boot's shell
    out = s.text()
    assert "reboot: recording stopped; resetting the machine" in out, out
    assert out.count(BANNER) == 2, out
    s.send(b"poweroff\r")
    assert s.close() == 0, s.text()


def test_shell_reboot_without_reboot_ends_qemu(shell):
    s = shell("run=shell", smp=1, timeout=60)
    s.send(b"reboot\r")
    rc = s.close()
    # -no-reboot: the reset ends QEMU without the kernel's verdict.
    assert rc == 3, s.text()
    assert s.text().count(BANNER) == 1


def test_monitor_system_reset_boots_again(shell, tmp_path):
    sock = tmp_path / "mon.sock"
    s = shell("run=shell", smp=2, timeout=120, opts=["--reboot", "--monitor", str(sock)],
              untimed=True)
    monitor_cmd(sock, "system_reset")
    s.wait_prompt(90)
    assert s.text().count(BANNER) == 2, s.text()
    s.send(b"poweroff\r")
    assert s.close() == 0, s.text()


def test_mem_file_keeps_guest_ram(qemu, tmp_path):
    f = tmp_path / "ram"
    r = qemu("exit", memory="128M", opts=["--mem-file", str(f)], timeout=60)
    assert r.rc == 0, r.out
    assert f.stat().st_size == 128 << 20
    # The kernel image (at 2 MiB) is in the file the guest's RAM was.
    data = f.read_bytes()
    assert BANNER.encode() in data[2 << 20:8 << 20]


# ---- trace.persist=: the previous boot's trace, read at the next boot ----

EVENT = re.compile(r"^\s*(task|softirq|irq|nmi)/(\d+)-\d+\s+\[(\d{3})\] (\S{4})\s+(\d+)\.(\d{9}): "
                   r"(\w+): (.*)$")
PREV = re.compile(r"^\[[ \d.]+\] persist: previous_boot=(\d+) cpus=(\d+) events=(\d+) lost=(\d+) "
                  r"end=(unknown|panic|watchdog|reset)$", re.M)
PREV_END = re.compile(r"^\[[ \d.]+\] persist: previous boot: end_cpu=(\d+) sealed=(yes|no) "
                      r"cpus_read=(\d+)/(\d+) pages_refused=(\d+)$", re.M)
THIS = re.compile(r"^\[[ \d.]+\] persist: this_boot=(\d+) range=0x([0-9a-f]+)-0x([0-9a-f]+) "
                  r"cpus=(\d+) pages_per_cpu=(\d+)$", re.M)
MARKS = re.compile(r"^\[[ \d.]+\] marks: cpu=(\d+) stored=(\d+) dropped=(\d+) first=(\d+) "
                   r"last=(\d+)$", re.M)
REFUSED = re.compile(r"^\[[ \d.]+\] persist: cpu=(\d+) previous buffer: (\d+) page\(s\) "
                     r"refused \((\d+) events lost\): (.*)$", re.M)
MID_EVENT = "a writer was mid-event on the tail page"
VERDICT = re.compile(r"^\[[ \d.]+\] persist: (previous_boot=|previous boot's buffer rejected: "
                     r"\S|no previous boot's buffer at 0x|previous boot's buffer written by "
                     r"another kernel image: )", re.M)


def boots(text):
    """The output split at each banner: one string per boot."""
    parts = text.split(BANNER)
    return parts[1:]


def previous_trace(boot):
    """Event lines (cpu, name, fields, line) of the previous boot's trace printed in boot."""
    start = boot.index("persist: previous boot's trace follows")
    end = boot.index("persist: end of previous boot's trace", start)
    out = []
    for l in boot[start:end].split("\n"):
        m = EVENT.match(l)
        if m:
            out.append((int(m.group(3)), m.group(7), m.group(8), l.strip()))
    return out


def marks_of(boot):
    return {int(m.group(1)): (int(m.group(2)), int(m.group(4)), int(m.group(5)))
            for m in MARKS.finditer(boot)}


def check_marks(events, marks):
    """Every CPU's bench events are exactly the marks it stored, in order."""
    for cpu, (stored, first, last) in marks.items():
        seqs = [int(f.split("=")[1]) for c, n, f, _ in events if c == cpu and n == "bench"]
        assert seqs == list(range(first, last + 1)), (cpu, seqs[:5], seqs[-5:])
        assert len(seqs) == stored


def run_two_boots(shell, cmdline, smp, second, opts=(), how=None, timeout=300, untimed=True):
    """Boot with trace.persist=auto, end the first boot (how(s)), read the second's lines."""
    s = shell(cmdline, smp=smp, timeout=timeout, boot_timeout=180,
              opts=["--reboot", *opts], prompt=how is not None, untimed=untimed)
    if how:
        how(s)
    s.wait_for(second, 240)
    rc = s.kill()
    b = boots(s.text())
    assert len(b) >= 2, s.text()
    return b[0], b[1], rc


@pytest.mark.parametrize("opts", [[], ["--uefi"], ["--uefi", "--usb"]],
                         ids=["bios-cd", "uefi-cd", "uefi-usb"])
def test_shell_reboot_the_next_boot_prints_the_trace(shell, opts):
    """ACPI reset through the shell's reboot: sealed, every mark read back;
    from a CD and, as on a real machine, from a USB stick (xHCI)."""
    def reboot(s):
        s.send(b"reboot\r")
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto run=marks,shell marks.count=500 persist.dump.last=0", 2,
        r"persist: this_boot=2 ", opts=opts, how=reboot)
    assert "persist: no previous boot's buffer at 0x2000000" in first, first
    assert re.search(r"persist: end=reset sealed this_boot=1$", first, re.M), first
    m = PREV.search(second)
    assert m and m.group(1) == "1" and m.group(2) == "2" and m.group(4) == "0", second
    assert m.group(5) == "reset"
    e = PREV_END.search(second)
    assert e and e.group(2) == "yes" and e.group(3) == e.group(4) == "2" and e.group(5) == "0"
    events = previous_trace(second)
    assert len(events) == int(m.group(3))
    check_marks(events, marks_of(first))
    assert THIS.search(second).group(1) == "2"


STATUS_CPU = re.compile(r"^cpu=(\d+) entries=(\d+) ", re.M)


def test_rebuilt_buffers_are_kept_too(shell):
    """run=demo rebuilds the buffers (in the range) before it traces; what status
    counts in them at the prompt is what the next boot reads, CPU by CPU."""
    counted = {}

    def reboot(s):
        counted.update({int(c): int(n) for c, n in STATUS_CPU.findall(s.cmd("status"))})
        s.send(b"reboot\r")
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto run=demo,shell demo.ms=50 dump=none persist.dump.last=0", 2,
        r"persist: this_boot=2 ", how=reboot)
    assert sorted(counted) == [0, 1] and all(counted.values()), counted
    m = PREV.search(second)
    assert m and int(m.group(3)) == sum(counted.values()), (m and m.group(0), counted)
    events = previous_trace(second)
    for cpu, n in counted.items():
        mine = [f for c, name, f, _ in events if c == cpu]
        assert len(mine) == n, (cpu, len(mine), n)
        seqs = [int(f.split()[0].split("=")[1]) for c, name, f, _ in events
                if c == cpu and name == "producer"]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), cpu


@pytest.mark.parametrize("smp", [1, 3])
def test_triple_fault_unsealed_trace_read_back(shell, smp):
    """A triple fault the kernel never reports: no end record, no seal; all marks there."""
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto run=marks,triple marks.count=300 persist.dump.last=0", smp,
        r"persist: this_boot=2 ")
    assert "triple: resetting through a triple fault" in first
    m = PREV.search(second)
    assert m and m.group(2) == str(smp) and m.group(5) == "unknown", second
    assert PREV_END.search(second).group(2) == "no"
    events = previous_trace(second)
    assert len(events) == int(m.group(3))
    check_marks(events, marks_of(first))


def check_marks_or_tail_refused(second, events, marks):
    """Every CPU's stored marks read back, except on a CPU whose tail page the
    next boot refused because a writer was mid-event there (a reset landing
    inside one of the idle shell's lapic_tick events: ring_walk.h): there the
    marks read are the oldest, in order, and every missing one is among the
    events that CPU's refused line counts as lost."""
    refused = {int(c): (int(k), int(m), why) for c, k, m, why in REFUSED.findall(second)}
    for cpu, (stored, first, last) in marks.items():
        seqs = [int(f.split("=")[1]) for c, n, f, _ in events if c == cpu and n == "bench"]
        assert seqs == list(range(first, first + len(seqs))), (cpu, seqs[:5], seqs[-5:])
        if cpu in refused:
            k, m, why = refused[cpu]
            assert (k, why) == (1, MID_EVENT), second
            assert stored - len(seqs) <= m, (cpu, stored, len(seqs), m)
        else:
            assert len(seqs) == stored, (cpu, len(seqs), stored)
    return refused


def test_monitor_system_reset_while_recording(shell, tmp_path):
    """A reset from outside while recording is on (the idle shell records
    lapic_tick 1000 times a second): every stored mark read back, or counted
    on a tail page caught mid-event."""
    sock = tmp_path / "mon.sock"

    def reset(s):
        monitor_cmd(sock, "system_reset")
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto run=marks,shell marks.count=2000 persist.dump.last=0", 2,
        r"persist: this_boot=2 ", opts=["--monitor", str(sock)], how=reset)
    m = PREV.search(second)
    assert m and m.group(5) == "unknown", second
    events = previous_trace(second)
    assert len(events) == int(m.group(3))
    check_marks_or_tail_refused(second, events, marks_of(first))


def test_reset_mid_event_costs_only_the_tail_page(shell):
    """Fault injection for a reset at the wrong instant: cpu 0 resets between
    an event's reserve and its commit.  The next boot refuses that tail page
    alone, counts its events (its marks and the open event) as lost, and reads
    every mark before it and every mark of cpu 1."""
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto trace.events=-*,bench:bench run=marks,triple "
        "triple.in_event marks.count=2000 persist.dump.last=0", 2, r"persist: this_boot=2 ")
    assert "triple: inside a bench event on cpu=0" in first, first
    assert "the reserve was refused" not in first, first
    m = PREV.search(second)
    assert m and m.group(5) == "unknown", second
    events = previous_trace(second)
    assert len(events) == int(m.group(3))
    marks = marks_of(first)
    refused = check_marks_or_tail_refused(second, events, marks)
    assert list(refused) == [0], second
    stored, first_seq, _ = marks[0]
    read = sum(1 for c, n, _, _ in events if c == 0 and n == "bench")
    # Only bench events record (trace.events): the tail page held the marks not
    # read and the open event, nothing else.
    assert refused[0][1] == stored - read + 1, (refused[0], stored, read)
    assert int(m.group(4)) == refused[0][1], second


def test_lapped_ring_keeps_the_newest_marks(shell):
    """More marks than the ring holds: the newest, contiguous, the rest counted as lost."""
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto trace.pages=4 run=marks,triple marks.count=5000 "
        "persist.dump.last=0", 1, r"persist: this_boot=2 ")
    m = PREV.search(second)
    events = previous_trace(second)
    seqs = [int(f.split("=")[1]) for c, n, f, _ in events if n == "bench"]
    stored, first_seq, last_seq = marks_of(first)[0]
    assert stored == 5000 and seqs[-1] == last_seq, seqs[-3:]
    assert seqs == list(range(seqs[0], last_seq + 1))
    assert 0 < len(seqs) < 5000
    # Everything written and not shown is counted: events + lost = written.
    assert int(m.group(3)) + int(m.group(4)) >= 5000, m.group(0)
    assert "LOST" in second


@pytest.mark.parametrize("uefi", [False, True])
def test_panic_reboot_next_boot_shows_what_the_panic_dump_showed(shell, uefi):
    """panic.action=reboot: the panic dump takes nothing; the next boot prints the same lines."""
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto run=fault panic.action=reboot panic.dump.last=0 "
        "persist.dump.last=0", 2, r"persist: this_boot=2 ", opts=["--uefi"] if uefi else [])
    assert "persist: end=panic sealed this_boot=1" in first
    start = first.index("# tracer: baretrace")
    panic_lines = [l.strip() for l in first[start:first.index("panic: end action=")].split("\n")
                   if EVENT.match(l)]
    m = PREV.search(second)
    assert m and m.group(5) == "panic" and PREV_END.search(second).group(2) == "yes", second
    again = [l for _, _, _, l in previous_trace(second)]
    assert again == panic_lines
    assert [int(f.split("=")[1]) for c, n, f, _ in previous_trace(second)
            if c == 0 and n == "bench"][-16:] == list(range(1, 17))


@pytest.mark.parametrize("stall", [1, 2, 3], ids=["before-cpu0", "before-cpu1", "before-header"])
def test_reset_during_the_seal_reads_the_unsealed_range(shell, tmp_path, stall):
    """A reset at a point inside the panic's seal (inject.seal_stall=: before
    CPU 0's page CRCs, between the CPUs, after every page CRC and before the
    sealed header): the next boot reads the range as unsealed, end=panic
    (recorded before the seal), every CPU, every mark the first boot stored."""
    sock = tmp_path / "mon.sock"
    s = shell("trace.persist=auto run=marks,fault marks.count=400 panic.action=reboot "
              f"persist.dump.last=0 inject.seal_stall={stall}", smp=2, timeout=300,
              boot_timeout=180, opts=["--reboot", "--monitor", str(sock)], prompt=False,
              untimed=True)
    s.wait_for(r"persist: seal stalled before", 120)
    monitor_cmd(sock, "system_reset")
    s.wait_for(r"persist: this_boot=2 ", 240)
    s.kill()
    b = boots(s.text())
    assert len(b) >= 2, s.text()
    first, second = b[0], b[1]
    assert "sealed this_boot=1" not in first, first
    m = PREV.search(second)
    assert m and m.group(5) == "panic" and m.group(4) == "0", second
    e = PREV_END.search(second)
    assert e and e.group(2) == "no" and e.group(3) == e.group(4) == "2" and e.group(5) == "0", \
        second
    marks = marks_of(first)
    assert sorted(marks) == [0, 1], first
    events = previous_trace(second)
    # run=fault's own bench events (1..16 on cpu 0) come after the marks.
    assert [int(f.split("=")[1]) for c, n, f, _ in events if c == 0 and n == "bench"][-16:] \
        == list(range(1, 17))
    # Every mark each CPU stored is there (the events the unsealed read keeps).
    for cpu, (stored, lo, hi) in marks.items():
        seqs = {int(f.split("=")[1]) for c, n, f, _ in events if c == cpu and n == "bench"}
        assert set(range(lo, hi + 1)) <= seqs, (cpu, lo, hi, sorted(seqs)[:3])


def test_untrusted_clock_kept_for_the_next_boot(shell):
    """The clock watchdog untrusts cpu 1 (a TSC step), then a panic with
    panic.action=reboot: the next boot prints exactly the panic dump's event
    lines, U flags included (the range's clock records follow the kernel's)."""
    first, second, _ = run_two_boots(
        shell, "trace.persist=auto run=demo,fault demo.ms=130 clock.watchdog_ms=40 clock=hpet "
        "inject.tsc_step=1000000 inject.tsc_step_cpu=1 dump=none panic.action=reboot "
        "panic.dump.last=0 persist.dump.last=0", 2, r"persist: this_boot=2 ",
        opts=["--icount"], timeout=400, untimed=False)
    assert re.search(r"clock: watchdog: cpu=1 .*clock marked untrusted", first), first
    assert "persist: end=panic sealed this_boot=1" in first
    start = first.index("# tracer: baretrace")
    panic_lines = [l.strip() for l in first[start:first.index("panic: end action=")].split("\n")
                   if EVENT.match(l)]
    flags = {EVENT.match(l).group(4) for l in panic_lines if EVENT.match(l).group(3) == "001"}
    assert any("U" in f for f in flags), flags
    again = [l for _, _, _, l in previous_trace(second)]
    assert again == panic_lines


def test_option_errors_are_named(qemu):
    for bad, why in [("12345", "expected off, auto or ADDR,SIZE"),
                     ("0x4000001,16M", "multiples of 4 KiB"),
                     ("0x200000,1M", "overlaps the kernel")]:
        r = qemu(f"trace.persist={bad} exit", timeout=60)
        assert r.rc == 0, r.out
        assert r.has(rf"^persist: trace.persist={re.escape(bad)} refused: .*{why}"), r.out
        assert not r.has(r"^persist: this_boot="), r.out


# The image's build id note (ld --build-id=sha1, kept by linker.ld in the image, so not in
# readelf -n): namesz 4, descsz 20, type NT_GNU_BUILD_ID, "GNU", then the 20 bytes.
BUILD_ID_NOTE = bytes.fromhex("040000001400000003000000474e5500")
FOREIGN = re.compile(r"^persist: previous boot's buffer written by another kernel image: "
                     r"build_id=([0-9a-f]+) boot=(\d+) end=(\w+) "
                     r"\(this image: build_id=([0-9a-f]+)\)$", re.M)
RANGE = (0x6000000, 0x6040000)


def rebuilt_image(src, dst):
    """A copy of the kernel ELF whose build id differs in one byte: what a rebuild is to
    trace.persist= (the header names the image by build id alone). Returns (theirs, ours) hex."""
    data = bytearray(src.read_bytes())
    assert data.count(BUILD_ID_NOTE) == 1
    at = data.index(BUILD_ID_NOTE) + len(BUILD_ID_NOTE)
    old = bytes(data[at:at + 20])
    data[at] ^= 0xFF
    dst.write_bytes(bytes(data))
    return old.hex(), bytes(data[at:at + 20]).hex()


def range_bytes(path):
    with open(path, "rb") as fh:
        fh.seek(RANGE[0])
        return fh.read(RANGE[1] - RANGE[0])


def test_explicit_range_and_a_rebuilt_image(qemu, tmp_path):
    """ADDR,SIZE: the buffers fit it. A rebuilt image (B) finds the range image A left: it
    names A, keeps the range byte for byte (default, and persist.foreign=decode, which prints
    A's trace: every mark A stored), and records over it only with persist.foreign=reuse."""
    f = tmp_path / "ram"
    a_id, b_id = rebuilt_image(ROOT / "build" / "kernel.elf", tmp_path / "b.elf")
    opts = ["--mem-file", str(f)]
    b_opts = opts + ["--kernel", str(tmp_path / "b.elf")]
    cmd = "trace.persist=0x6000000,256K"
    a = qemu(f"{cmd} run=marks marks.count=300 persist.dump.last=0 exit", smp=2, opts=opts,
             timeout=90, untimed=True)
    assert a.rc == 0, a.out
    m = re.search(r"^persist: this_boot=1 range=0x6000000-0x6040000 cpus=2 pages_per_cpu=(\d+)$",
                  "\n".join(a.lines), re.M)
    assert m and int(m.group(1)) < 64, a.out
    assert a.has(r"^persist: trace.pages=64 does not fit 256 KiB for 2 CPUs; using \d+$")
    marks = marks_of(a.out.replace("\r", ""))
    assert sorted(marks) == [0, 1], a.out
    left = range_bytes(f)

    for how in ("", " persist.foreign=decode persist.dump.last=0"):
        b = qemu(f"{cmd}{how} exit", smp=2, opts=b_opts, timeout=90, untimed=True)
        assert b.rc == 0, b.out
        named = FOREIGN.search("\n".join(b.lines))
        assert named and named.groups() == (a_id, "1", "unknown", b_id), b.out
        assert not b.has(r"^persist: this_boot="), b.out
        assert b.has(r"^persist: this boot's buffers are not kept across a reset \(another "
                     r"image's range at 0x6000000-0x6040000 kept\)$"), b.out
        assert range_bytes(f) == left, how       # not a byte of A's range changed
        assert ("persist: previous boot's trace follows" in b.out) == bool(how), b.out
    assert b.has(r"^persist: another image's range kept \(persist.foreign=decode; "), b.out
    check_marks(previous_trace(b.out), marks)

    b = qemu(f"{cmd} persist.foreign=reuse persist.dump.last=0 exit", smp=2, opts=b_opts,
             timeout=90, untimed=True)
    assert b.rc == 0, b.out
    assert b.has(r"^persist: another image's range reused \(persist.foreign=reuse\)$"), b.out
    check_marks(previous_trace(b.out), marks)   # printed before it is recorded over
    assert b.has(r"^persist: this_boot=2 range=0x6000000-0x6040000 "), b.out
    now = range_bytes(f)
    assert now[16:36] == bytes.fromhex(b_id) or \
        now[PERSIST_SLOT_BYTES + 16:PERSIST_SLOT_BYTES + 36] == bytes.fromhex(b_id)


DAMAGE_ROUNDS = 12
HALTED = "panic: halted (panic.action=halt)"
# include/trace/persist.h: two header slots of PERSIST_SLOT_BYTES, each a 128-byte header
# and 88-byte CPU records; CPU 0's area (its buffer state first) right after them.
PERSIST_MAGIC = (0x5453525045524254).to_bytes(8, "little")
PERSIST_SLOTS, PERSIST_SLOT_BYTES, PERSIST_HEADER = 2, 24576, 128


def damage(path, start, end, rnd):
    """Overwrite 1..16 random bytes of [start, end) in the RAM file: a quarter of the
    rounds in the headers' bytes (one slot or both: one damaged slot leaves the other,
    an earlier version, to be read), a quarter in CPU 0's buffer state (the page after
    the header slots), the rest anywhere in the range."""
    n = rnd.randint(1, 16)
    where = rnd.random()
    cpu0 = start + PERSIST_SLOTS * PERSIST_SLOT_BYTES
    if where < 0.25:
        slots = range(PERSIST_SLOTS) if rnd.random() < 0.5 else [rnd.randrange(PERSIST_SLOTS)]
        for k in slots:
            slot = start + k * PERSIST_SLOT_BYTES
            damage_at(path, slot, slot + 320, n, rnd)
        return n
    lo, hi = (cpu0, cpu0 + 512) if where < 0.5 else (start, end)
    damage_at(path, lo, hi, n, rnd)
    return n


def damage_at(path, lo, hi, n, rnd):
    """n random bytes of [lo, hi): a burst or scattered."""
    burst = rnd.random() < 0.5
    at = rnd.randrange(lo, hi - 16)
    with open(path, "r+b") as fh:
        for i in range(n):
            fh.seek(at + i if burst else rnd.randrange(lo, hi))
            fh.write(bytes([rnd.randrange(256)]))
    return n


def test_damaged_range_is_rejected_or_partly_read_never_invented(shell, tmp_path):
    """Sealed by a panic (panic.action=halt), then random bytes of the range
    overwritten while QEMU is stopped, then reset, DAMAGE_ROUNDS times in one run:
    each boot says what it rejected, never crashes before its own job, and never
    prints an event line the panic dump before the damage did not print."""
    rnd = random.Random(16)
    ram, sock = tmp_path / "ram", tmp_path / "mon.sock"
    s = shell("trace.persist=auto run=fault panic.action=halt panic.dump.last=0 "
              "persist.dump.last=0", smp=2, timeout=1500, prompt=False, untimed=True,
              opts=["--reboot", "--mem-file", str(ram), "--monitor", str(sock)])
    outcomes = {"valid": 0, "partial": 0, "rejected": 0}
    for i in range(DAMAGE_ROUNDS + 1):
        deadline = time.time() + 120
        while s.text().count(HALTED) <= i:
            assert time.time() < deadline and s.p.poll() is None, s.text()[-3000:]
            time.sleep(0.2)
        b = boots(s.text())[i]
        if i > 0:
            # What this boot read of the previous one.
            assert len(VERDICT.findall(b)) == 1, b
            assert b.index("run: job=fault") < b.index("PANIC: unhandled exception"), b
            if PREV.search(b):
                got = [l for _, _, _, l in previous_trace(b)]
                assert set(got) <= before, sorted(set(got) - before)[:5]
                refused = re.search(r"persist: cpu=\d+ previous buffer(?: refused|: \d+ page)", b)
                # Nothing refused: nothing may be missing either (lost silently).
                assert refused or got == before_list, b
                assert i > 1 or not refused, b      # round 0 damaged nothing
                outcomes["partial" if refused else "valid"] += 1
            else:
                assert re.search(r"persist: previous boot's buffer rejected: \S", b), b
                outcomes["rejected"] += 1
        if i == DAMAGE_ROUNDS:
            break
        start = b.index("# tracer: baretrace", b.index("PANIC: end of report"))
        before_list = [l.strip() for l in b[start:b.index("panic: end action=")].split("\n")
                       if EVENT.match(l)]
        before = set(before_list)
        m = THIS.search(b)
        monitor_cmd(sock, "stop")
        if i > 0:
            n = damage(ram, int(m.group(2), 16), int(m.group(3), 16), rnd)
            print(f"round {i}: {n} bytes damaged")
        if i > 0:
            print("\n".join(re.findall(r"persist: (?:previous|cpu=).*", b)))
        monitor_cmd(sock, "system_reset")
        monitor_cmd(sock, "cont")
    s.kill()
    print("damage outcomes:", outcomes)
    assert outcomes["rejected"] + outcomes["partial"] > 0, outcomes
