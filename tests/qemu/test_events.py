"""Per-event enable and disable: trace.events=, the shell's `events`, the
dump header's and the binary dump's record of it, flipping under load, and
the image's disabled sites.

Which events a pattern list leaves on is computed here independently of the
kernel (fnmatch over the events the capture describes, applied in order), and
compared with the event lines the kernel actually printed.
"""
import fnmatch
import re
import subprocess

import pytest

from test_dump import EVENT, decoded_is_kernel_text
from test_static_keys import ELF, check_elf_sites, owner, read_at, elf_loads

DEMO_EVENTS = {"irq:lapic_tick", "ipi:ipi_send", "ipi:ipi_recv", "demo:producer"}
SUMMARY = re.compile(r"^enabled=(\d+)/(\d+) ?(.*)$")


def described(decoder, cap):
    """[system:name] in id order, from the capture's own description."""
    d = subprocess.run([str(decoder), str(cap), "--events"], capture_output=True,
                       text=True, timeout=60)
    assert d.returncode == 0, d.stderr
    out = []
    for line in d.stdout.splitlines():
        m = re.match(r"^(\w+:\w+) id=(\d+) fields=", line)
        assert m, line
        out.append((int(m.group(2)), m.group(1)))
    return [n for _, n in sorted(out)]


def expect(events, patterns):
    """The enabled set after applying patterns in order, from all enabled."""
    on = set(events)
    for p in patterns.split(","):
        neg = p.startswith("-")
        p = p[1:] if neg else p
        hit = {e for e in events if (p == "*" or
               (":" in p and fnmatch.fnmatchcase(e.split(":")[0], p.split(":", 1)[0]) and
                fnmatch.fnmatchcase(e.split(":")[1], p.split(":", 1)[1])))}
        assert hit, f"test bug: {p} names no event"
        on = on - hit if neg else on | hit
    return on


def summary(events, on):
    listed = [e for e in events if e in on]
    tail = "all" if len(on) == len(events) else "none" if not on else ",".join(listed)
    return f"enabled={len(on)}/{len(events)} {tail}"


def names_printed(text):
    """{event name: count} of the event lines of a text dump."""
    out = {}
    for line in text.split(b"\n"):
        m = EVENT.match(line)
        if m:
            out[m.group(7).decode()] = out.get(m.group(7).decode(), 0) + 1
    return out


def demo(qemu, decoder, tmp_path, events_opt):
    # 50 ms: every CPU's 1 kHz ticks, its IPIs (every 2 ms) and its producer
    # (every 50 us) many times over. The two dumps of everything go out at
    # about 120 KB/s: with the producer on, 120 ms held the machine ~10 s.
    cap = tmp_path / "serial.bin"
    opt = f"trace.events={events_opt} " if events_opt is not None else ""
    r = qemu(f"{opt}run=demo exit demo.ms=50 dump=text,bin dump.last=0", smp=3, serial=cap)
    assert r.rc == 0, r.out
    # The binary dump carries the state: the decoder's header says the same.
    return r, cap, decoded_is_kernel_text(decoder, cap, tmp_path)


@pytest.mark.parametrize("patterns", ["-ipi:*", "-*,irq:*", "demo:prod*,-irq:lapic_tick",
                                      "-*,ipi:ipi_?e??,demo:*"])
def test_patterns_choose_the_events_recorded(qemu, decoder, tmp_path, patterns):
    """Mutations this catches: '-' ignored (every event stays), patterns applied
    in the wrong order (-*,irq:* leaves nothing), the '?' glob unsupported."""
    r, cap, ktext = demo(qemu, decoder, tmp_path, patterns)
    events = described(decoder, cap)
    on = expect(events, patterns)
    want = summary(events, on)
    assert r.all(r"^events: ") == [f"events: {want}"], r.out
    assert f"# events: {want}\n".encode() in ktext
    printed = names_printed(ktext)
    seen = {e for e in events if e.split(":")[1] in printed}
    assert seen == DEMO_EVENTS & on, (patterns, printed)


def test_default_is_every_event(qemu, decoder, tmp_path):
    r, cap, ktext = demo(qemu, decoder, tmp_path, None)
    events = described(decoder, cap)
    assert r.all(r"^events: ") == [f"events: enabled={len(events)}/{len(events)} all"]
    assert {e for e in events if e.split(":")[1] in names_printed(ktext)} == DEMO_EVENTS


@pytest.mark.parametrize("bad, why", [
    ("irq:*,nosuch:*", "'nosuch:*' names no event"),
    ("-ipi:ipi_sendx", "'ipi:ipi_sendx' names no event"),
    ("irq:*,,demo:*", "an empty pattern in the list"),
    ("lapic_tick", "'lapic_tick' names no event"),
])
def test_a_bad_list_is_named_and_changes_nothing(qemu, bad, why):
    r = qemu(f"trace.events={bad} run=ktest ktest=trace_event_flip_stress exit", smp=1)
    assert r.rc == 0, r.out
    lines = r.all(r"^events: ")
    assert lines[0] == f"events: error: trace.events={bad}: {why}; every event stays enabled"
    assert re.match(r"^events: enabled=(\d+)/\1 all$", lines[1]), lines
    assert len(lines) == 2, lines


def test_shell_events(shell):
    s = shell(untimed=True)     # answers and counts, no time: it shares (boot_lock.py)
    listing = s.cmd("events").splitlines()
    rows = [re.match(r"^event: (\w+:\w+) id=(\d+) (enabled|disabled)$", l) for l in listing[:-1]]
    assert all(rows), listing
    names = [m.group(1) for m in rows]
    assert [int(m.group(2)) for m in rows] == list(range(1, len(rows) + 1))
    assert all(m.group(3) == "enabled" for m in rows)
    assert listing[-1] == f"events: enabled={len(rows)}/{len(rows)} all"

    out = s.cmd("events disable ipi:*,irq:*")
    on = [n for n in names if not n.startswith(("ipi:", "irq:"))]
    assert out == f"events: changed=4 enabled={len(on)}/{len(names)} {','.join(on)}\n", out
    assert "event: ipi:ipi_send id=2 disabled" in s.cmd("events")
    st = s.cmd("status").splitlines()
    assert [l for l in st if l.startswith("events: ")] == \
        [f"events: enabled={len(on)}/{len(names)} {','.join(on)}"]
    # The LAPIC ticks stop: after a reset the dump has none, and says why.
    s.cmd("reset")
    time_ticks = s.cmd("dump text last=0")
    assert "lapic_tick" not in names_printed(time_ticks.encode()), time_ticks
    assert f"# events: enabled={len(on)}/{len(names)} " in time_ticks

    assert s.cmd("events enable nosuch:*") == \
        "error: events enable nosuch:*: 'nosuch:*' names no event; nothing changed\n"
    assert s.cmd("events enable irq:lapic_tick,bogus") == \
        "error: events enable irq:lapic_tick,bogus: 'bogus' names no event; nothing changed\n"
    assert "event: irq:lapic_tick id=1 disabled" in s.cmd("events")
    assert s.cmd("events toggle irq:*") == \
        "error: usage: events [enable|disable PATTERN[,PATTERN...]]\n"

    out = s.cmd("events enable irq:lapic_tick")
    assert out.startswith("events: changed=1 "), out
    # Enabling again changes nothing and says so.
    assert s.cmd("events enable irq:lapic_tick").startswith("events: changed=0 ")
    s.cmd("reset")
    ticks = 0
    for _ in range(50):
        ticks = names_printed(s.cmd("dump text last=0").encode()).get("lapic_tick", 0)
        if ticks:
            break
    assert ticks > 0
    out = s.cmd("events enable *")
    assert out == f"events: changed=3 enabled={len(names)}/{len(names)} all\n", out
    s.send(b"poweroff\r")
    assert s.close() == 0


FLIP = re.compile(r"^ktest: trace_event_flip_stress cpu=(\d+) ok=(\d+) off=(\d+) full=(\d+) "
                  r"other=(\d+) epochs=(\d+) ring_written=(\d+)$")


@pytest.mark.parametrize("smp", [1, 2, 3], ids=lambda n: f"smp{n}")
def test_flipping_an_event_under_load_keeps_the_accounting(qemu, tmp_path, smp):
    """Every CPU writes demo:mark while the boot CPU flips its key 2000 times.
    The writers' own count of successful writes must equal, per CPU, the mark
    lines in the dump (the reader's count) and the ring's written counter."""
    cap = tmp_path / "serial.bin"
    r = qemu("run=ktest,dump ktest=trace_event_flip_stress exit dump=text dump.last=0",
             smp=smp, serial=cap, timeout=300)
    assert r.rc == 0, r.out
    assert r.ktap() == {"trace_event_flip_stress": True}, r.out
    per = {}
    for line in r.lines:
        m = FLIP.match(line)
        if m:
            per[int(m.group(1))] = [int(x) for x in m.groups()[1:]]
    assert sorted(per) == list(range(smp)), r.out
    total = r.fields(r"^ktest: trace_event_flip_stress cpus=")
    assert int(total["flips"]) == 2000 and int(total["bsp_wrong"]) == 0
    raw = cap.read_bytes().replace(b"\r\n", b"\n")
    start = raw.index(b"# tracer: baretrace")
    ktext = raw[start:raw.index(b"] run: job=dump result=pass", start)]
    marks = {}
    for line in ktext.split(b"\n"):
        m = EVENT.match(line)
        if m and m.group(7) == b"mark":
            marks[int(m.group(3))] = marks.get(int(m.group(3)), 0) + 1
    for cpu, (ok, off, full, other, epochs, written) in per.items():
        assert full == 0 and other == 0, per
        assert marks.get(cpu, 0) == ok == written, (cpu, per[cpu], marks)
        assert off > 0 and ok > 0, per
        if cpu:
            assert epochs > 0
    # The boot CPU wrote once after each flip: half the flips left it enabled.
    assert per[0][0] == 1000 and per[0][1] == 1000
    # And nothing is lost or unaccounted in the dump header.
    assert b" overrun=0 dropped=0 " in ktext


def test_every_event_site_is_one_nop_in_the_elf():
    """Each call of an event writer in the kernel is a __jump_table site of
    that event's key, built as the 5-byte NOP. Mutation caught: a writer
    that tests a plain flag instead of its key (no sites for that event)."""
    entries, sym = check_elf_sites(ELF)
    keys = sym["trace_event_keys"]
    nm = subprocess.run(["nm", "-S", str(ELF)], check=True, capture_output=True,
                        text=True).stdout
    size = int(next(l.split()[1] for l in nm.splitlines() if l.endswith(" trace_event_keys")), 16)
    ids = {}
    for code, _target, key in entries:
        if keys <= key < keys + size:
            ids.setdefault((key - keys) // 4, []).append(owner(sym, code))
    # The events the kernel writes from its own code (ids 1..4: lapic_tick,
    # ipi_send, ipi_recv, nmi), the demo's and the tests' have sites.
    for tev in range(1, size // 4):
        assert ids.get(tev), f"event id {tev} has no site: {sorted(ids)}"
    data = ELF.read_bytes()
    loads = elf_loads(data)
    for code, _t, key in entries:
        if keys <= key < keys + size:
            assert read_at(data, loads, code, 5) == bytes.fromhex("0f1f440000")
