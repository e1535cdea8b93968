"""The host decoder, end to end: captures made by mkcapture (real ring
buffers on a simulated machine, see tests/host/dump_sim.c) go through
build/tools/baretrace-decode; its text must equal the kernel's text for the
same buffers, and its CTF output, read by babeltrace2, must hold the same
events at the same nanoseconds, in the same per-CPU order, with the lost
events reported as discarded where they happened.

`make test-tools` builds the two programs and runs this file.
"""
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
DECODE = os.path.join(BUILD, "tools", "baretrace-decode")
MKCAPTURE = os.path.join(BUILD, "tools", "mkcapture")
MKCAPTURE_EXTRA = os.path.join(BUILD, "tools", "mkcapture-extra")
BABELTRACE = shutil.which("babeltrace2")

EVENT_RE = re.compile(
    r"^\s*(\S+)-(\d+)\s+\[(\d{3})\] (....)\s+(-?\d+)\.(\d{9}): (\w+): ?(.*)$")
LOST_RE = re.compile(r"^CPU:(\d+) \[LOST (\d+) EVENTS\]$")
BT_RE = re.compile(
    r"^\[(-?\d+)\.(\d{9})\] \([^)]*\) baretrace (\w+): \{ cpu_id = (\d+), page_pos = \d+, "
    r"clock_trusted = (\d) \}, \{ ctx = (\d+) \}, \{ (.*) \}$")
BT_DISCARD_RE = re.compile(
    r"WARNING: Tracer discarded (\d+) events between .* within stream \"[^\"]*stream_(\d+)\"")


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, timeout=120, **kw)


@pytest.fixture(scope="module", autouse=True)
def built():
    for p in (DECODE, MKCAPTURE, MKCAPTURE_EXTRA):
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} is not built: run `make test-tools`")


def make_capture(tmp_path, *opts, name="cap", tool=MKCAPTURE):
    cap, text = tmp_path / f"{name}.bin", tmp_path / f"{name}.txt"
    r = run(tool, str(cap), str(text), *map(str, opts))
    assert r.returncode == 0, r.stderr.decode()
    return cap, text.read_bytes()


def ns_of(sec, frac):
    neg = sec.startswith("-")
    v = abs(int(sec)) * 1_000_000_000 + int(frac)
    return -v if neg else v


def parse_text(text):
    """Events as (ns, cpu, name, fields, ctx flag) and LOST counts per CPU."""
    events, lost = [], {}
    for line in text.decode().splitlines():
        if line.startswith("#"):
            continue
        m = LOST_RE.match(line)
        if m:
            lost[int(m[1])] = lost.get(int(m[1]), 0) + int(m[2])
            continue
        m = EVENT_RE.match(line)
        assert m, line
        fields = m[8]
        if m[7] == "unknown":
            fields = re.sub(r"id=(\d+) bytes=(\d+)", r"event_id=\1 bytes=\2", fields)
        events.append((ns_of(m[5], m[6]), int(m[3]), m[7], fields.split(), m[4]))
    return events, lost


def parse_babeltrace(ctf_dir):
    r = run(BABELTRACE, "--clock-seconds", str(ctf_dir))
    assert r.returncode == 0, r.stderr.decode()
    events, discarded = [], {}
    for line in (r.stdout + r.stderr).decode().splitlines():
        if "WARNING" in line:
            m = BT_DISCARD_RE.search(line)
            assert m, line
            discarded[int(m[2])] = discarded.get(int(m[2]), 0) + int(m[1])
            continue
        m = BT_RE.match(line)
        if not m:
            assert not line.strip(), line
            continue
        fields = [f.replace(" ", "") for f in m[7].split(", ")] if m[7] else []
        events.append((ns_of(m[1], m[2]), int(m[4]), m[3], fields, int(m[5]), int(m[6])))
    return events, discarded


def decode(cap, *opts):
    return run(DECODE, str(cap), *map(str, opts))


def test_help_documents_everything():
    r = decode("--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    for word in ("--text", "--ctf", "--events", "--quiet", "--last", "--cpu", "--dump", "Exit status",
                 "0 the whole dump", "1 damaged", "2 usage", "3 nothing",
                 "4 the whole dump, verified, but some CPU's clock is invalid", "clock=invalid"):
        assert word in " ".join(out.split()), word


def test_text_is_the_kernels(tmp_path):
    cap, want = make_capture(tmp_path)
    r = decode(cap)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == want
    assert b"complete (verified by END)" in r.stderr
    r = decode(cap, "--text", tmp_path / "out.txt", "--quiet")
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    assert (tmp_path / "out.txt").read_bytes() == want


def test_selections(tmp_path):
    cap, want = make_capture(tmp_path, "--events", 2000)
    full, _ = parse_text(want)
    r = decode(cap, "--last", 25)
    assert r.returncode == 0
    assert parse_text(r.stdout)[0] == full[-25:]
    assert decode(cap, "last=25").stdout == r.stdout
    r = decode(cap, "--cpu", 3)
    assert r.returncode == 0
    assert parse_text(r.stdout)[0] == [e for e in full if e[1] == 3]
    assert decode(cap, "cpu=3").stdout == r.stdout
    r = decode(cap, "cpu=3", "last=4")
    assert parse_text(r.stdout)[0] == [e for e in full if e[1] == 3][-4:]
    assert decode(cap, "--cpu", "x").returncode == 2
    r = decode(cap, "--last", 0)            # 0 is all, as the kernel's last=0
    assert r.returncode == 0 and parse_text(r.stdout)[0] == full
    assert decode(cap, "--last", -1).returncode == 2
    assert decode(cap, "last=x").returncode == 2
    assert decode(cap, "--dump", 2).returncode == 2


@pytest.mark.skipif(BABELTRACE is None, reason="babeltrace2 not installed (scripts/deps.sh)")
@pytest.mark.parametrize("opts", [(), ("--skew", -3000000000, "--events", 3000),
                                  ("--page-size", 8192, "--pages", 3, "--seed", 5)])
def test_ctf_matches_text(tmp_path, opts):
    cap, want = make_capture(tmp_path, *opts)
    r = decode(cap, "--ctf", tmp_path / "ctf", "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    text_events, text_lost = parse_text(want)
    bt_events, bt_discarded = parse_babeltrace(tmp_path / "ctf")

    assert len(bt_events) == len(text_events) > 1000
    # The same events at the same ns, in the same order on each CPU, with
    # context levels and clock trust as the flags column says.
    for cpu in range(4):
        t = [e for e in text_events if e[1] == cpu]
        b = [e for e in bt_events if e[1] == cpu]
        assert [e[0:1] + e[2:4] for e in t] == [e[0:1] + e[2:4] for e in b], f"cpu {cpu}"
        for te, be in zip(t, b):
            if te[2] != "unknown":
                assert te[4][2] == ".shz"[be[5]]
            assert (te[4][3] == "U") == (be[4] == 0)
    # Globally: the same multiset, and both in time order.
    assert sorted(e[:3] for e in text_events) == sorted(e[:3] for e in bt_events)
    assert [e[0] for e in bt_events] == sorted(e[0] for e in bt_events)
    assert [e[0] for e in text_events] == sorted(e[0] for e in text_events)
    # Loss: discarded counts where the text has LOST lines, and as many.
    assert text_lost, "the capture should have lost events"
    assert bt_discarded == text_lost


def test_damaged_capture(tmp_path):
    cap, want = make_capture(tmp_path, "--events", 3000)
    data = cap.read_bytes()
    start = data.index(b"\xbaTR\xce")

    # Truncated in the middle.
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:start + (len(data) - start) // 2])
    r = decode(cut, "--ctf", tmp_path / "ctf-cut")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "damage: capture ends inside frame seq" in err
    assert "damage: no END frame" in err
    assert "DAMAGED" in err
    assert r.stdout.startswith(b"# tracer: baretrace")
    if BABELTRACE:
        assert run(BABELTRACE, str(tmp_path / "ctf-cut")).returncode == 0

    # One bit flipped inside a page (halfway: past the description frames,
    # whose size grows with every event the kernel gains).
    flip = bytearray(data)
    flip[start + (len(data) - start) // 2] ^= 0x10
    (tmp_path / "flip.bin").write_bytes(flip)
    r = decode(tmp_path / "flip.bin")
    assert r.returncode == 1
    assert re.search(rb"damage: frame seq \d+ \((PAGE|PACK)\) at byte offset \d+: bad CRC", r.stderr)
    assert re.search(rb"damage: missing frames seq (\d+)\.\.\1\n", r.stderr)

    # Text and garbage between two frames.
    second = data.index(b"\xbaTR\xce", start + 1)
    junk = data[:second] + b"\r\nnoise\x00\xff\xba" + data[second:]
    (tmp_path / "junk.bin").write_bytes(junk)
    r = decode(tmp_path / "junk.bin")
    assert r.returncode == 1
    assert b"bytes of non-frame data inside the dump" in r.stderr
    # Every frame arrived: the same text, but not said to be intact.
    out = r.stdout.split(b"\n")
    assert out[1].startswith(b"# damaged: 1 problem in the capture (")
    assert b"\n".join(out[:1] + out[2:]) == want

    # Nothing at all, and no such file.
    (tmp_path / "text.bin").write_bytes(b"just a console\r\n" * 100)
    r = decode(tmp_path / "text.bin")
    assert r.returncode == 3
    assert b"no trace dump frame found" in r.stderr
    assert decode(tmp_path / "missing.bin").returncode == 2
    assert run(DECODE).returncode == 2


def test_two_dumps(tmp_path):
    a, want_a = make_capture(tmp_path, "--events", 500, name="a")
    b, want_b = make_capture(tmp_path, "--events", 700, "--seed", 9, name="b")
    both = tmp_path / "both.bin"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    r = decode(both)
    assert r.returncode == 0 and r.stdout == want_b
    assert b"dump 2 of 2" in r.stderr
    r = decode(both, "--dump", 1)
    assert r.returncode == 0 and r.stdout == want_a
    assert decode(both, "--dump", 3).returncode == 2


# CLOCK frames the kernel never sends, made by editing CPU 1's frame
# (mkcapture --clock), and how each must be reported.
BROKEN_CLOCKS = [
    ("1:shift=64", "shift=64 is above 63"),
    ("1:frac_overflow", "ns_frac=8589934592 is not below 2^shift (shift=33)"),
    ("1:zero,flags=1", "no conversion (all zero), yet flagged trusted"),
    ("1:mult=0", "mult=0: no conversion"),
    ("1:offset=-9223372036854775808", "offset_ns=-9223372036854775808 is more than the measured"),
    ("1:offset=9223372036854775807", "offset_ns=9223372036854775807 is more than the measured"),
    ("1:offset=50000", "offset_ns=50000 is more than the measured skew explains"),
]
STAND_IN = "its times use cpu 0's conversion without offset"


def lines_of_other_cpus(text, cpu):
    """Event and LOST lines of every CPU but cpu, in order."""
    return [l for l in text.decode().splitlines() if not l.startswith("#")
            and f"[{cpu:03d}] " not in l and not l.startswith(f"CPU:{cpu} ")]


@pytest.mark.parametrize("edit,why", BROKEN_CLOCKS)
def test_broken_clock(tmp_path, edit, why):
    good, _ = make_capture(tmp_path, "--seed", 4, name="good")
    cap, _ = make_capture(tmp_path, "--seed", 4, "--clock", edit)
    r = decode(cap, "--ctf", tmp_path / "ctf")
    err = r.stderr.decode()
    # Its own exit status, one stderr line naming the CPU and the reason,
    # and no damage: the frames are intact.
    assert r.returncode == 4, err
    clock_lines = [l for l in err.splitlines() if l.startswith("baretrace-decode: clock: ")]
    assert clock_lines == [f"baretrace-decode: clock: cpu 1: {why}" + clock_lines[0][
        len(f"baretrace-decode: clock: cpu 1: {why}"):]], err
    assert clock_lines[0].endswith(f"; {STAND_IN} and are marked untrusted (U)"), err
    assert "damage:" not in err and "complete (verified by END)" in err, err
    # The header says so, with the same reason.
    text = r.stdout.decode()
    note = clock_lines[0][len("baretrace-decode: clock: cpu 1: "):-len(
        " and are marked untrusted (U)")]
    assert re.search(r"^# cpu=1 .* clock=invalid( |$)", text, re.M), text[:1500]
    assert len(re.findall(r"^# cpu=\d+ .*clock=invalid", text, re.M)) == 1
    assert f"# U: clock=invalid: cpu 1: {note} and may be off against other CPUs'\n" in text
    # 'U' on that CPU's lines; the others as with a valid frame, byte for byte.
    events, _ = parse_text(r.stdout)
    assert {e[4][3] for e in events if e[1] == 1} == {"U"}
    assert {e[4][3] for e in events if e[1] in (0, 3)} == {"."}
    rg = decode(good)
    assert rg.returncode == 0, rg.stderr.decode()
    assert lines_of_other_cpus(r.stdout, 1) == lines_of_other_cpus(rg.stdout, 1)
    # The stand-in keeps the merge in time order, CPU 1 by its own stamps
    # (not all at 0, nor at +-2^63 ns; test_dump_clock checks the values).
    assert [e[0] for e in events] == sorted(e[0] for e in events)
    t1 = [e[0] for e in events if e[1] == 1]
    assert len(set(t1)) > 100 and 0 < min(t1) and max(t1) < 100 * 10**9
    # babeltrace2 reads the CTF trace: the same times, CPU 1 not trusted.
    if BABELTRACE:
        bt_events, _ = parse_babeltrace(tmp_path / "ctf")
        for cpu in range(4):
            assert [e[0] for e in events if e[1] == cpu] == \
                [e[0] for e in bt_events if e[1] == cpu], f"cpu {cpu}"
        assert {e[4] for e in bt_events if e[1] == 1} == {0}
        assert {e[4] for e in bt_events if e[1] == 0} == {1}
    # Damage as well: the damaged status wins, the clock is still reported.
    cut = tmp_path / "cut.bin"
    cut.write_bytes(cap.read_bytes()[:-2000])
    r = decode(cut, "--quiet")
    assert r.returncode == 1
    assert clock_lines[0].encode() in r.stderr and b"damage: no END frame" in r.stderr


def test_ctf_refused_past_int64(tmp_path):
    """Valid clocks (offsets explained by their skews) whose times span more
    than 2^63 ns: babeltrace2 cannot read such a CTF clock, so none is
    written, with a message; the text is still right."""
    cap, want = make_capture(
        tmp_path, "--clock", "0:offset=4700000000000000000,skew=-4700000000000000000",
        "--clock", "3:offset=-4700000000000000000,skew=67295446000000000")
    r = decode(cap, "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    r = decode(cap, "--ctf", tmp_path / "ctf")
    assert r.returncode == 2
    assert re.search(rb"ctf: times run from -\d+ to \d+ ns, more than one CTF clock holds "
                     rb".*; no CTF trace written", r.stderr), r.stderr
    assert not (tmp_path / "ctf").exists()
    assert r.stdout == want
    # Just inside the limit, babeltrace2 takes it.
    cap, _ = make_capture(tmp_path, "--clock",
                          "0:offset=9223372000000000000,skew=-9223372000000000000", name="in")
    r = decode(cap, "--quiet", "--ctf", tmp_path / "ctf-in")
    assert r.returncode == 0, r.stderr.decode()
    if BABELTRACE:
        assert run(BABELTRACE, str(tmp_path / "ctf-in")).returncode == 0


# The events of tests/host/events_extra.h, written out by hand from their
# definitions: what --events must list for a capture of a kernel that has
# them, from a decoder built without them.
EXTRA_SYMS = {"start": 0x200000, "main_loop": 0x200100, "idle.part.0": 0x200800}
BUILTIN_EVENTS = [
    "irq:lapic_tick id=1 fields=tick:u32", "ipi:ipi_send id=2 fields=to_cpu:u32,vector:u32",
    "ipi:ipi_recv id=3 fields=from_cpu:u32,vector:u32", "irq:nmi id=4 fields=count:u32",
    "demo:producer id=5 fields=seq:u32,value:u32",
    "test:stress id=6 fields=seq:u32,check:u32,level:u32", "demo:mark id=7 fields=id:u32",
    "bench:bench id=8 fields=seq:u32", "printk:bprint id=9 fields=ip:sym,fmt:x64,args:bprint",
    "bench:bench_u64 id=10 fields=value:u64", "bench:bench_str id=11 fields=name:str[16]",
    "ftrace:function id=12 fields=ip:sym,parent_ip:sym",
    "ftrace:funcgraph_entry id=13 fields=func:sym,depth:u32",
    "ftrace:funcgraph_exit id=14 fields=func:sym,cycles:u64,depth:u32,overrun:u32",
    "lab:hwlat_gap id=15 fields=start_ns:s64,len_ns:u64,smi_before:s64,smi_after:s64,nmis:u32,"
    "seq:u32",
    "lab:c2c id=16 fields=from:u32,to:u32,one_way_ns:s64,bound_ns:u64,rtt_half_ns:u64,samples:u32",
    "lab:timerlat id=17 fields=latency_ns:u64,seq:u32",
    "lab:hwlat_cpu id=18 fields=threshold_ns:u64,resolution_ns:u64,smi_start:s64,smi_end:s64,"
    "injected:u32,gaps:u32",
]
# The extra events come after the built-in ones: their ids follow.
EXTRA_EVENTS = [
    f"extra:ints id={len(BUILTIN_EVENTS) + 1} fields=a:u8,b:s8,c:u16,d:s16,e:x32,f:s32,g:u64,h:s64",
    f"extra:mixed id={len(BUILTIN_EVENTS) + 2} fields=flag:bool,addr:x64,fn:sym,state:enum,tag:char[6],"
    "path:str[16],note:str[40],small:x8",
]


def test_events_the_decoder_never_saw(tmp_path):
    """A capture from a kernel with events of every field kind that this
    decoder was not built with: read from the capture's EVENTS frames, the
    text is byte for byte what the kernel's formatter (built with them)
    prints. Kills: a decoder that formats with its built-in table (they
    print as unknown), a description frame that loses a field."""
    cap, want = make_capture(tmp_path, "--extra", "--seed", 3, tool=MKCAPTURE_EXTRA)
    r = decode(cap, "--events")
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout.decode().splitlines() == BUILTIN_EVENTS + EXTRA_EVENTS
    r = decode(cap)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == want
    events, _ = parse_text(want)
    names = [e[2] for e in events]
    assert names.count("ints") > 50 and names.count("mixed") > 50 and "unknown" in names
    mixed = [dict(f.split("=", 1) for f in e[3]) for e in events if e[2] == "mixed"]
    # A string over its bound is cut and marked; one within it is whole.
    assert any(m["path"] == "/a/path/much/lo..." for m in mixed), mixed[:5]
    assert any(m["note"] == "/a/path/much/longer/than/sixteen" for m in mixed)
    assert {m["state"] for m in mixed} >= {"idle", "busy", "gone", "3"}
    assert {m["tag"] for m in mixed} == {"tagged", "t6789a"}   # char[6]: cut, no mark
    ints = [dict(f.split("=", 1) for f in e[3]) for e in events if e[2] == "ints"]
    assert any(int(i["b"]) < 0 for i in ints) and any(int(i["h"]) < 0 for i in ints)
    assert all(0 <= int(i["a"]) < 256 and -128 <= int(i["b"]) < 128 for i in ints)
    assert all(i["e"].startswith("0x") for i in ints)
    # Code addresses by the capture's SYMS frames (mkcapture's made-up table):
    # inside a symbol as name+offset, past the table's end as a number.
    fns = {m["fn"] for m in mixed}
    for name in EXTRA_SYMS:
        assert any(f.startswith(name + "+0x") for f in fns), (name, sorted(fns)[:10])
    assert all(int(f.split("+")[1], 16) < 0x800 for f in fns if "+" in f)
    assert any(f.startswith("0x") and int(f, 16) >= 0x200f00 for f in fns)


@pytest.mark.skipif(BABELTRACE is None, reason="babeltrace2 not installed (scripts/deps.sh)")
def test_typed_fields_in_babeltrace(tmp_path):
    """CTF declares each field as described: babeltrace2 prints the same
    values as the text, field by field (hex as hex, signed as signed,
    strings, enums by name). Kills: every field declared u32 again."""
    cap, want = make_capture(tmp_path, "--extra", "--seed", 3, tool=MKCAPTURE_EXTRA)
    r = decode(cap, "--ctf", tmp_path / "ctf", "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    text_events, _ = parse_text(want)
    bt_events, _ = parse_babeltrace(tmp_path / "ctf")
    # Each CPU's events in buffer order (both outputs keep it).
    text_by = [e for c in range(4) for e in text_events if e[1] == c and e[2] in ("ints", "mixed")]
    bt_by = [e for c in range(4) for e in bt_events if e[1] == c and e[2] in ("ints", "mixed")]
    assert len(text_by) == len(bt_by) > 100

    def bt_value(v):
        m = re.match(r'^\("(\w+)":container=(\d+)\)$', v)   # a named enum value
        if m:
            return m[1]
        m = re.match(r"^\(<unknown>:container=(\d+)\)$", v)
        if m:
            return m[1]
        if v.startswith('"'):   # babeltrace2 escapes what the text shows as '?'
            return re.sub(r"\\[tnr]", "?", v[1:-1])
        return v.lower() if v.startswith("0x") or v.startswith("0X") else v

    for t, b in zip(text_by, bt_by):
        assert t[:3] == b[:3], (t, b)
        tf = dict(f.split("=", 1) for f in t[3])
        bf = {k: bt_value(v) for k, v in (f.split("=", 1) for f in b[3])}
        if "+" in tf.get("fn", ""):   # CTF has the address, the text its symbol
            name, off = tf["fn"].split("+")
            tf["fn_sym"] = tf["fn"]     # and the symbol alongside (ctf.c)
            tf["fn"] = hex(EXTRA_SYMS[name] + int(off, 16))
        else:                           # no symbol: "" (babeltrace2 2.0.4 may garble it)
            bf.pop("fn_sym", None)
        # babeltrace2
        # 2.0.4 sometimes prints an empty string field as another value
        # (seen: note = "/" where the stream holds a lone NUL, checked byte
        # by byte), so an empty text string is not compared with it.
        for k in [k for k, v in tf.items() if v == "" and k in ("path", "note")]:
            del tf[k], bf[k]
        assert tf == bf, (t, b)


def test_capture_without_descriptions_uses_the_builtin_list(tmp_path):
    """A dump from a kernel before EVENTS frames decodes with the built-in
    list, as before. Kills: a reader that needs the frames."""
    cap, want = make_capture(tmp_path, "--no-events-frames")
    r = decode(cap)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == want
    assert decode(cap, "--events").stdout.decode().splitlines() == BUILTIN_EVENTS


@pytest.mark.skipif(BABELTRACE is None, reason="babeltrace2 not installed (scripts/deps.sh)")
def test_ctf_into_a_directory_of_an_earlier_trace(tmp_path):
    """A 1-CPU trace written where a 4-CPU one was: the earlier streams are
    removed (and said so), so babeltrace2 reads exactly the new trace.
    Catches: stale stream_1..3 left in place (babeltrace2 fails or merges)."""
    big, _ = make_capture(tmp_path, "--cpus", 4, name="big")
    small, want = make_capture(tmp_path, "--cpus", 1, name="small")
    assert decode(big, "--ctf", tmp_path / "ctf", "--quiet").returncode == 0
    assert sorted(os.listdir(tmp_path / "ctf")) == ["metadata"] + [f"stream_{c}" for c in range(4)]
    r = decode(small, "--ctf", tmp_path / "ctf", "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    assert sorted(os.listdir(tmp_path / "ctf")) == ["metadata", "stream_0"]
    for c in (1, 2, 3):
        assert f"ctf: {tmp_path / 'ctf'}/stream_{c}: removed, a stream of an earlier trace" \
            in r.stderr.decode()
    text_events, _ = parse_text(want)
    bt_events, _ = parse_babeltrace(tmp_path / "ctf")
    assert [e[0] for e in bt_events] == [e[0] for e in text_events]


CAPTURES = os.path.join(ROOT, "tests", "tools", "captures")
GRAPH_RE = re.compile(r"^\s*\d+\.\d{9} \|\s+(\d+)\)\s+\S+\s+\| [-+!#*@$ ] (?:\d+(?:\.\d+)? us)?\s*"
                      r"\|  (\s*)(\w[\w.]*)\(\)")
FUNC_RE = re.compile(r"^\s*\S+-\d+\s+\[(\d{3})\] \S{4}\s+\d+\.\d{9}: (\w[\w.]*) <-(\S+)$")


@pytest.mark.skipif(BABELTRACE is None, reason="babeltrace2 not installed (scripts/deps.sh)")
def test_ftrace_symbols_in_babeltrace(tmp_path):
    """A real capture with ftrace events (make-captures.sh: ftrace.bin):
    in babeltrace2 every code address has its name alongside, the names
    and callers the decoder's text prints, in the same order: function's
    ip_sym/parent_ip_sym are the text's "func <-caller+0xoff", each
    funcgraph_entry's func_sym the graph's "func() {" or "func();" line,
    at offset 0 (a site is its function's first byte). Kills: no symbol
    fields, symbols from the wrong field or table, a wrong offset."""
    cap = os.path.join(CAPTURES, "ftrace.bin")
    r = decode(cap, "--ctf", tmp_path / "ctf", "--quiet")
    assert r.returncode == 0, r.stderr.decode()
    text = decode(cap).stdout.decode()
    bt_events, _ = parse_babeltrace(tmp_path / "ctf")
    calls = [(int(m[1]), m[2], m[3]) for m in map(FUNC_RE.match, text.splitlines()) if m]
    entries = [(int(m[1]), m[3]) for m in map(GRAPH_RE.match, text.splitlines()) if m]

    def fields(e):
        return {k: v.strip('"') for k, v in (f.split("=", 1) for f in e[3])}

    bt_calls = [(e[1], fields(e)) for e in bt_events if e[2] == "function"]
    bt_entries = [(e[1], fields(e)) for e in bt_events if e[2] == "funcgraph_entry"]
    bt_exits = [fields(e) for e in bt_events if e[2] == "funcgraph_exit"]
    assert len(calls) >= 4 and len(entries) >= 10, text
    assert [(c, f["ip_sym"], f["parent_ip_sym"]) for c, f in bt_calls] == \
        [(c, n + "+0x0", p) for c, n, p in calls]
    assert [(c, f["func_sym"]) for c, f in bt_entries] == [(c, n + "+0x0") for c, n in entries]
    assert {f["func_sym"] for f in bt_exits} <= {n + "+0x0" for _, n in entries}
    assert any(n == "smp_init" for _, n in entries)


def one_error_line(r, *words):
    """A rejected command line: status 2, no output, one stderr line that is
    an error and points at --help."""
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("baretrace-decode: error: "), err
    for w in words:
        assert w in err, (w, err)


def test_options_long_short_and_errors(tmp_path):
    """getopt_long: --opt=VALUE, --opt VALUE and the short forms give the same
    output; every rejected command line is one 'error:' line with the try
    --help hint (not the whole usage); a CPU the dump does not have is an
    error, not an empty trace. Kills: the hand-made parser (--text=FILE
    'unknown option' and the usage's ~50 lines after it), --cpu 7 on a
    4-CPU dump printing only the header and exiting 0."""
    cap, want = make_capture(tmp_path, "--events", 2000)
    for opts in (["--text=" + str(tmp_path / "a.txt"), "--quiet"],
                 ["-o", tmp_path / "a.txt", "-q"], ["-qo", tmp_path / "a.txt"]):
        (tmp_path / "a.txt").unlink(missing_ok=True)
        r = decode(cap, *opts)
        assert r.returncode == 0 and r.stdout == b"" and r.stderr == b"", (opts, r.stderr)
        assert (tmp_path / "a.txt").read_bytes() == want
    sel = decode(cap, "--cpu", 2, "--last", 7).stdout
    assert sel.count(b"[002]") == 7
    for opts in (["--cpu=2", "--last=7"], ["-c", 2, "-n", 7], ["-c2", "-n7"], ["cpu=2", "last=7"]):
        assert decode(cap, *opts).stdout == sel, opts
    assert decode(cap, "-e").stdout == decode(cap, "--events").stdout != b""
    assert decode(cap, "-m").stdout == decode(cap, "--mark-order").stdout
    r = decode(cap, "-q", "-C", tmp_path / "ctf", "-T", tmp_path / "t.dat")
    assert r.returncode == 0 and (tmp_path / "ctf" / "metadata").exists() \
        and (tmp_path / "t.dat").exists()
    assert decode(cap, "-d", 1).stdout == decode(cap, "--dump=1").stdout == want
    assert decode("-h").stdout == decode("--help").stdout

    one_error_line(decode(cap, "--bogus"), "unknown option: --bogus", "try 'baretrace-decode --help'")
    one_error_line(decode(cap, "-x"), "unknown option: -x", "--help")
    one_error_line(decode(cap, "--text"), "missing value for: --text", "--help")
    one_error_line(decode(cap, "-o"), "missing value for: -o", "--help")
    one_error_line(decode(cap, "--cpu", "x"), "--cpu needs a CPU number: x", "--help")
    one_error_line(decode(cap, "--last=-1"), "--last needs a number", "--help")
    one_error_line(decode(cap, "last=x"), "bad selection: last=x", "--help")
    one_error_line(decode(cap, cap), "more than one capture", "--help")
    one_error_line(decode("--quiet"), "no capture given", "--help")
    one_error_line(decode(cap, "--dump", 2), "holds 1 dumps; there is no dump 2")
    for opts in (["--cpu", 7], ["cpu=4"], ["-c4", "--ctf", tmp_path / "ctf4"]):
        one_error_line(decode(cap, *opts), f"no cpu {opts[0][-1] if opts[0] != '--cpu' else 7}: "
                       "dump id ", "has 4 CPUs")
    assert not (tmp_path / "ctf4").exists()


def bt_trace_header(ctf_dir):
    r = run(BABELTRACE, "-c", "sink.text.details", "--params", "with-data=false", str(ctf_dir))
    assert r.returncode == 0, r.stderr.decode()
    r = run(BABELTRACE, "-c", "sink.text.details", str(ctf_dir))
    out = r.stdout.decode()
    name = re.search(r"^  Trace `([^`]*)`:", out, re.M)
    uuid = re.search(r"^    UUID: ([0-9a-f-]{36})$", out, re.M)
    return name and name[1], uuid and uuid[1]


@pytest.mark.skipif(BABELTRACE is None, reason="babeltrace2 not installed (scripts/deps.sh)")
def test_ctf_has_uuid_and_name(tmp_path):
    """babeltrace2 shows the trace's name and UUID (not `` and '(no UUID)'):
    the same dump decoded twice gets the same UUID, another dump another;
    a dump without negative times has offset_s = 0, never '-0'. Kills: no
    uuid or hostname in the metadata, a UUID from the time of decoding, the
    '-%llu' of the offset."""
    a, _ = make_capture(tmp_path, name="a")
    b, _ = make_capture(tmp_path, "--seed", 9, name="b")
    seen = []
    for cap, d in ((a, "a1"), (a, "a2"), (b, "b")):
        assert decode(cap, "--quiet", "--ctf", tmp_path / d).returncode == 0
        name, uuid = bt_trace_header(tmp_path / d)
        assert name == "baretrace" and uuid, (name, uuid)
        assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                        uuid), uuid
        assert "\ttrace_name = \"baretrace-dump-" in (tmp_path / d / "metadata").read_text()
        seen.append(uuid)
    assert seen[0] == seen[1] != seen[2]
    cap = os.path.join(CAPTURES, "ftrace.bin")
    assert decode(cap, "--quiet", "--ctf", tmp_path / "f").returncode == 0
    meta = (tmp_path / "f" / "metadata").read_text()
    assert "\toffset_s = 0;\n" in meta and "-0;" not in meta


def drop_a_page_frame(tmp_path, data):
    """The capture without one PAGE frame from the middle of a CPU's pages
    (the decoder can then prove the events it held), and what stderr says."""
    offs = [m.start() for m in re.finditer(re.escape(b"\xbaTR\xce"), data)]
    for i in range(len(offs) - 2, 0, -1):
        cut = tmp_path / "drop.bin"
        cut.write_bytes(data[:offs[i]] + data[offs[i + 1]:])
        r = decode(cut, "--quiet")
        m = re.search(rb"damage: cpu (\d+): (\d+) events between pages pos \d+ and \d+ are "
                      rb"missing from the capture", r.stderr)
        if m:
            return cut, int(m[1]), int(m[2])
    pytest.fail("no PAGE frame whose loss the decoder can count")


def test_damage_is_in_every_output(tmp_path):
    """A damaged capture does not look intact: the text's second line is
    '# damaged: ...', events a missing frame held print as 'CPU:<n> [LOST
    <m> EVENTS IN TRANSIT]' apart from the ring's '[LOST <m> EVENTS]' (the
    same ring losses as the intact capture's), and the CTF metadata and the
    trace.dat (uname, --stat) say the same. Kills: damage only on stderr,
    transit losses added into the ring's LOST lines."""
    cap, want = make_capture(tmp_path, "--events", 3000)
    assert b"# damaged" not in want and b"IN TRANSIT" not in want
    cut, cpu, n = drop_a_page_frame(tmp_path, cap.read_bytes())
    r = decode(cut, "--ctf", tmp_path / "ctf", "--trace-dat", tmp_path / "t.dat")
    assert r.returncode == 1
    text = r.stdout.decode().splitlines()
    assert text[0] == "# tracer: baretrace"
    assert re.match(r"^# damaged: \d+ problems in the capture \(the decoder's stderr: one line "
                    rf"each, with byte offsets\); {n} events of 1 CPU lost in transit", text[1]), text[1]
    assert text.count(f"CPU:{cpu} [LOST {n} EVENTS IN TRANSIT]") == 1
    ring = sorted(l for l in text if LOST_RE.match(l))
    assert ring == sorted(l for l in want.decode().splitlines() if LOST_RE.match(l))
    meta = (tmp_path / "ctf" / "metadata").read_text()
    assert f"\tdamaged = \"{text[1][len('# damaged: '):]}\";" in meta
    assert f"\tcpu{cpu}_lost_in_transit = {n};" in meta
    if shutil.which("trace-cmd"):
        tc = run("trace-cmd", "report", "--uname", "-i", str(tmp_path / "t.dat")).stdout.decode()
        assert "damaged: " + text[1][len("# damaged: "):] in tc, tc
        st = run("trace-cmd", "report", "--stat", "-i", str(tmp_path / "t.dat")).stdout.decode()
        assert re.search(rf"^CPU: {cpu}\n(.*\n)*?lost in transit: {n}$", st, re.M), st
    # Truncated: no END frame, said in the header too; intact: no such line.
    trunc = tmp_path / "trunc.bin"
    data = cap.read_bytes()
    trunc.write_bytes(data[:len(data) * 3 // 4])
    line = decode(trunc).stdout.decode().splitlines()[1]
    assert line.startswith("# damaged: ") and "; no END frame: the capture ends early" in line
    assert b"# damaged" not in decode(cap).stdout


def test_task_pid_and_flag_columns(tmp_path):
    """One naming for a CPU's context in every output: '<context>/<cpu>-<pid>',
    pid = 1 + 4 * cpu + level, as the trace.dat's saved cmdlines (test_trace_dat
    checks trace-cmd's lines); the header's legend names the four flag
    columns as ftrace's does, the fourth the 'U' of an untrusted clock, and its
    '||||' stand over the flags of every event line. Kills: 'task-<cpu>' (the
    CPU number as a pid), a legend off by a column or without 'U'."""
    _, text = make_capture(tmp_path, "--events", 2000)
    lines = text.decode().splitlines()
    col = next(l for l in lines if l.startswith("#      TASK-PID "))
    f = col.index("||||")
    legend = lines[lines.index(col) - 5:lines.index(col)]
    assert [l.index("_") for l in legend[:4]] == [f + 2, f + 3, f + 4, f + 5], legend
    assert "'U' clock untrusted" in legend[3] and "'h' irq" in legend[2], legend
    assert lines[lines.index(col) - 6].startswith("# TASK-PID: <context>/<cpu>-<pid>, pid = 1 + 4 * cpu")
    levels = ["task", "softirq", "irq", "nmi"]
    n = 0
    for l in lines:
        m = re.match(r"^\s*(task|softirq|irq|nmi)/(\d+)-(\d+)\s+\[(\d{3})\] ", l)
        if l.startswith("#") or l.startswith("CPU:"):
            continue
        assert m, l
        assert int(m[2]) == int(m[4]) and int(m[3]) == 1 + 4 * int(m[2]) + levels.index(m[1]), l
        assert re.match(r"^\.\.[.shz][.U]$", l[f:f + 4]) and l[f + 2] == ".shz"[levels.index(m[1])], l
        n += 1
    assert n > 1000


def frame_offsets(data):
    """Where each frame of the first dump in data starts, walked by the headers' lengths
    (not by searching for the magic, which a payload may hold), and where the last ends."""
    offs, at = [], data.index(b"\xbaTR\xce")
    while at + 16 <= len(data) and data[at:at + 4] == b"\xbaTR\xce":
        offs.append(at)
        at += 20 + int.from_bytes(data[at + 8:at + 12], "little")
    return offs, at


def insert(data, where):
    """data with where's {offset: bytes} inserted (offsets into the original)."""
    out, last = [], 0
    for off in sorted(where):
        out += [data[last:off], where[off]]
        last = off
    return b"".join(out + [data[last:]])


# Lines as a stream's console carries them: printk's with "\r\n", a shell
# reply, several lines in one gap, a line of one character.
CONSOLE = [b"[    1.234567] demo: cpu=1 says hello\r\n",
           b"trace: recording=on pages=4\r\n[    1.300000] clock: check cpu=1 ok\r\n",
           b"x\n"]


def test_console_text_between_frames(tmp_path):
    """A stream's capture (trace.record=serial) with console lines between its frames,
    as the kernel's console lock lets them out: exit 0, the same text, each line on
    stderr as console text with its byte offset, no damage, the dump's bytes= its
    frames' alone. Kills: every gap inside a dump taken as damage (the reader before
    streams), lines lost or misplaced, the text counted in bytes=."""
    cap, want = make_capture(tmp_path, "--events", 3000)
    data = cap.read_bytes()
    offs, end = frame_offsets(data)
    assert len(offs) > 10 and data[end:end + 4] != b"\xbaTR\xce"
    at = {offs[1]: CONSOLE[0], offs[len(offs) // 2]: CONSOLE[1], offs[-1]: CONSOLE[2]}
    text = tmp_path / "text.bin"
    text.write_bytes(insert(data, at))
    r = decode(text)
    err = r.stderr.decode()
    assert r.returncode == 0, err
    assert r.stdout == want
    assert "damage" not in err and "complete (verified by END)" in err, err
    lines, shift = [], 0
    for off in sorted(at):
        pos = off + shift
        for l in at[off].split(b"\n")[:-1]:
            shown = l.rstrip(b"\r").decode()
            lines.append(f"baretrace-decode: console text at byte offset {pos}: {shown}")
            pos += len(l) + 1
        shift += len(at[off])
    assert [l for l in err.splitlines() if "console text at" in l] == lines, err
    assert "console: 4 lines of console text between the dump's frames" in err, err
    # The dump's own bytes (the kernel's bytes=), console text inside not counted.
    own = re.search(r" bytes=(\d+):", decode(cap).stderr.decode())[1]
    assert f" bytes={own}:" in err, err
    assert decode(text, "--quiet").stderr == b""


def test_console_text_hides_no_damage(tmp_path):
    """Console text next to real damage leaves the damage reported (exit 1): a frame
    torn by a line printed inside it (what the console lock prevents), a bit flipped
    in the frame after a line, a frame lost whole with a line where it was, a line
    cut short (no newline) or holding a byte that is no text. Kills: gaps taken as
    console text whatever they hold, or wherever they lie."""
    cap, want = make_capture(tmp_path, "--events", 3000)
    data = cap.read_bytes()
    offs, _ = frame_offsets(data)
    k = len(offs) // 2
    line = CONSOLE[0]

    def damaged(capture, *patterns):
        p = tmp_path / "d.bin"
        p.write_bytes(capture)
        r = decode(p)
        err = r.stderr.decode()
        assert r.returncode == 1, err
        assert "DAMAGED (see above)" in err, err
        for pat in patterns:
            assert re.search(pat, err), (pat, err)
        return r

    # Torn: the line inside frame k's bytes (past its header).
    damaged(insert(data, {offs[k] + 30: line}), rf"damage: frame seq {k} \(\w+\) at byte "
            rf"offset {offs[k]}: bad CRC", rf"damage: missing frames seq {k}\.\.{k}\n")
    # A bit flipped in the frame right after a line.
    flip = bytearray(insert(data, {offs[k]: line}))
    flip[offs[k] + len(line) + 40] ^= 0x04
    damaged(bytes(flip), rf"damage: frame seq {k} \(\w+\) at byte offset "
            rf"{offs[k] + len(line)}: bad CRC", rf"damage: missing frames seq {k}\.\.{k}\n")
    # Frame k lost, a line in its place: the line is text, the seq still missing.
    r = damaged(data[:offs[k]] + line + data[offs[k + 1]:],
                rf"damage: missing frames seq {k}\.\.{k}\n")
    assert "console text at byte offset" in r.stderr.decode()
    # No newline at its end; a control byte inside.
    for bad in (line[:-2], line[:5] + b"\x1b" + line[6:]):
        damaged(insert(data, {offs[k]: bad}), rf"damage: {len(bad)} bytes of non-frame "
                rf"data inside the dump at byte offsets {offs[k]}\.\.{offs[k] + len(bad) - 1} "
                rf"\(after frame seq {k - 1}\)")
