"""The decoder's trace.dat, read by Debian's trace-cmd: `trace-cmd report`
must list exactly the events of the decoder's text, in the same order, at
the same nanoseconds, with the same field values, the lost events as
"[N EVENTS DROPPED]" with baretrace's counts, on real captures (QEMU runs
in tests/tools/captures/, remade by make-captures.sh there) and synthetic
ones (mkcapture: every field kind, damage, broken clocks). The two outputs
are compared field by field, never by eye.

`make test-tools` installs trace-cmd (scripts/deps.sh --only trace-cmd).
"""
import os
import re
import shutil
import struct
import zlib

import pytest

from test_decode import BUILD, DECODE, MKCAPTURE, MKCAPTURE_EXTRA, ROOT, make_capture, ns_of, run

TRACE_CMD = shutil.which("trace-cmd")
CAPTURES = os.path.join(ROOT, "tests", "tools", "captures")
REAL = ["demo-overwrite.bin", "demo-discard.bin", "trace-printk.bin", "extra-events.bin"]

# The decoder's text (trace/text.h) and trace-cmd report -t's lines.
TEXT_EVENT = re.compile(
    r"^\s*(task|softirq|irq|nmi|\?)/(\d+)-(\d+)\s+\[(\d{3})\] (....)\s+(-?\d+)\.(\d{9}): (\w+): ?(.*)$")
# The ring's losses and the capture's (IN TRANSIT): trace.dat's DROPPED counts both.
TEXT_LOST = re.compile(r"^CPU:(\d+) \[LOST (\d+) EVENTS(?: IN TRANSIT)?\]$")
TEXT_BAD = re.compile(r"^CPU:(\d+) \[MALFORMED PAGE pos=(\d+) at offset (\d+)\]$")
TC_EVENT = re.compile(r"^\s*(\w+)/(\d+)-(\d+)\s+\[(\d{3})\]\s+(\d+)\.(\d{9}): (\w+):\s*(.*)$")
TC_DROPPED = re.compile(r"^CPU:(\d+) \[(\d+) EVENTS DROPPED\]$")
CONTEXTS = ["task", "softirq", "irq", "nmi"]
EXTRA_SYMS_END = 0x200f00   # mkcapture-extra's symbol table ends there


@pytest.fixture(scope="module", autouse=True)
def have_trace_cmd():
    if TRACE_CMD is None:
        pytest.fail("trace-cmd is not installed: `make test-tools` installs it "
                    "(scripts/deps.sh --only trace-cmd)")


def parse_text(text):
    """Items of the decoder's text in order: ("ev", cpu, ns, name, fields, ctx),
    ("lost", cpu, n), ("bad", cpu, "pos=P offset=O")."""
    items = []
    for line in text.decode().splitlines():
        if line.startswith("#"):
            continue
        m = TEXT_LOST.match(line)
        if m:
            items.append(("lost", int(m[1]), int(m[2])))
            continue
        m = TEXT_BAD.match(line)
        if m:
            items.append(("bad", int(m[1]), f"pos={m[2]} offset={m[3]}"))
            continue
        m = TEXT_EVENT.match(line)
        assert m, line
        # The task as trace-cmd names it (parse_report): <context>/<cpu>-<pid>.
        cpu = int(m[4])
        assert int(m[2]) == cpu and int(m[3]) == 1 + 4 * cpu + CONTEXTS.index(m[1]), line
        items.append(("ev", cpu, ns_of(m[6], m[7]), m[8], m[9], m[1]))
    return items


def parse_report(out):
    """trace-cmd report -t's lines as the same items; bprint lines
    ("bprint: <function>: <message>") as the text prints them."""
    items = []
    lines = out.decode().splitlines()
    assert lines[0].startswith("cpus="), lines[:3]
    for line in lines[1:]:
        m = TC_DROPPED.match(line)
        if m:
            items.append(("lost", int(m[1]), int(m[2])))
            continue
        m = TC_EVENT.match(line)
        assert m, line
        ctx, cpu, pid, name, fields = m[1], int(m[2]), int(m[3]), m[7], m[8]
        assert int(m[4]) == cpu and pid == 1 + 4 * cpu + CONTEXTS.index(ctx), line
        if name == "bprint":
            name, fields = fields.split(": ", 1)
        if name == "malformed_page":
            items.append(("bad", cpu, fields))
            continue
        items.append(("ev", cpu, ns_of(m[5], m[6]), name, fields, ctx))
    return items


def report(dat, *opts):
    r = run(TRACE_CMD, "report", "-t", *opts, str(dat))
    assert r.returncode == 0, r.stderr.decode()
    assert b"error" not in r.stderr.lower() and b"fail" not in r.stderr.lower(), r.stderr
    return r.stdout


def write_dat(cap, dat, want_rc=0):
    r = run(DECODE, str(cap), "--quiet", "--trace-dat", str(dat))
    assert r.returncode == want_rc, r.stderr.decode()
    m = re.search(rb"every time in .* is shifted by \+(\d+) s", r.stderr)
    return r, int(m[1]) * 10**9 if m else 0


def lost_per_cpu(items, cpu):
    """One CPU's items with the losses as trace-cmd can show them: summed
    until the next event, dropped if no event follows on that CPU."""
    out, pending = [], 0
    for it in items:
        if it[1] != cpu:
            continue
        if it[0] == "lost":
            pending += it[2]
            continue
        if it[0] == "ev" and pending:
            out.append(("lost", cpu, pending))
            pending = 0
        out.append(it)
    return out


def compare(text_items, tc_items, bias, nr_cpus, end=None):
    """Field by field: every event and marker in the same global order,
    the same ns (plus the file's shift), the same fields; losses per CPU."""
    text_items = [it[:2] + (it[2] + bias,) + it[3:] if it[0] == "ev" else it
                  for it in text_items]
    if end is not None:
        # The one address libtraceevent names differently: the table's
        # end, kallsyms' last line (tools/trace_dat.c, put_kallsyms()).
        text_items = [it[:4] + (re.sub(rf"=0x{end:x}( |$)", r"=__text_end+0x0\1", it[4]),) +
                      it[5:] if it[0] == "ev" else it for it in text_items]
    shifted = [it for it in text_items if it[0] != "lost"]
    c_ev = [it for it in tc_items if it[0] != "lost"]
    assert len(c_ev) == len(shifted)
    for i, (a, b) in enumerate(zip(shifted, c_ev)):
        if a[0] == "ev" and a[3] == "unknown":   # its context may be out of range
            a = a[:5] + (b[5] if a[5] == "?" else a[5],)
        assert a == b, f"item {i}: text {a} != trace-cmd {b}"
    for cpu in range(nr_cpus):
        assert lost_per_cpu(text_items, cpu) == lost_per_cpu(tc_items, cpu), f"cpu {cpu}"
    return len(c_ev)


def check_capture(tmp_path, cap, text=None, want_rc=0, end=None):
    """The decoder's text of cap against trace-cmd's report of its trace.dat."""
    dat = tmp_path / "t.dat"
    _, bias = write_dat(cap, dat, want_rc)
    if text is None:
        r = run(DECODE, str(cap))
        assert r.returncode == want_rc, r.stderr.decode()
        text = r.stdout
    ti = parse_text(text)
    nr_cpus = int(re.search(rb"#P:(\d+)", text)[1])
    n = compare(ti, parse_report(report(dat)), bias, nr_cpus, end)
    return dat, ti, bias, n


@pytest.mark.parametrize("name", REAL)
def test_real_capture_matches_text(tmp_path, name):
    dat, ti, _, n = check_capture(tmp_path, os.path.join(CAPTURES, name))
    assert n == len([i for i in ti if i[0] == "ev"]) > 5
    print(f"{name}: {n} events compared, 0 mismatches")
    if name == "demo-overwrite.bin":
        assert sum(i[0] == "lost" for i in ti) >= 4   # lost events, several CPUs
        assert {i[1] for i in ti} == {0, 1, 2, 3}
    if name == "trace-printk.bin":
        assert sum(i[3] == "ktest_fn_trace_printk_lines" for i in ti if i[0] == "ev") == 6
    if name == "extra-events.bin":
        assert {i[3] for i in ti if i[0] == "ev"} >= {"ints", "mixed"}


@pytest.mark.parametrize("opts", [(), ("--skew", -5000000000, "--events", 3000),
                                  ("--page-size", 8192, "--pages", 3, "--seed", 5),
                                  ("--page-size", 2048, "--cpus", 3, "--seed", 7)])
def test_synthetic_capture_matches_text(tmp_path, opts):
    cap, want = make_capture(tmp_path, *opts)
    _, ti, bias, n = check_capture(tmp_path, cap, want)
    assert n > 1000
    assert any(i[0] == "lost" for i in ti)
    if "--skew" in opts:   # negative times: shifted by whole seconds, said so
        assert min(i[2] for i in ti if i[0] == "ev") < 0 and bias > 0


def test_every_field_kind(tmp_path):
    """mkcapture-extra's events (u8..s64, hex, bool, symbol, enum, char[N],
    strings cut and whole) from the capture's own descriptions: each value
    as the text prints it, negative ones, names of the enum and numbers not
    in its table, symbols inside the table and past its end."""
    cap, want = make_capture(tmp_path, "--extra", "--seed", 3, tool=MKCAPTURE_EXTRA)
    _, ti, _, n = check_capture(tmp_path, cap, want, end=EXTRA_SYMS_END)
    fields = {}
    for i in ti:
        if i[0] == "ev" and i[3] in ("ints", "mixed"):
            for f in i[4].split(" "):
                k, v = f.split("=", 1)
                fields.setdefault(k, set()).add(v)
    assert any(v.startswith("-") for v in fields["b"]) and any(v.startswith("-") for v in fields["d"])
    assert any(v.startswith("-") for v in fields["f"]) and any(v.startswith("-") for v in fields["h"])
    assert {"idle", "busy", "gone"} <= fields["state"] and any(v.isdigit() for v in fields["state"])
    assert any("+0x" in v for v in fields["fn"]) and any(v.startswith("0x") for v in fields["fn"])
    assert any(v.startswith("idle.part.0+") for v in fields["fn"])   # the last symbol
    assert "/a/path/much/lo..." in fields["path"] and fields["tag"] == {"tagged", "t6789a"}
    assert any("?" in v for v in fields["note"])   # a byte outside printable ASCII


def test_cpu_selection(tmp_path):
    cap = os.path.join(CAPTURES, "demo-overwrite.bin")
    dat = tmp_path / "t.dat"
    write_dat(cap, dat)
    for cpu in range(4):
        text = run(DECODE, cap, "--cpu", str(cpu)).stdout
        ti = parse_text(text)
        tc = parse_report(report(dat, "--cpu", str(cpu)))
        assert {i[1] for i in tc} == {cpu}
        assert compare(ti, tc, 0, 4) == len([i for i in ti if i[0] == "ev"]) > 100


def test_filter_on_fields(tmp_path):
    """-F on a number, a string and an enum: exactly the text's events whose
    field has that value."""
    cap = os.path.join(CAPTURES, "demo-overwrite.bin")
    dat = tmp_path / "t.dat"
    write_dat(cap, dat)
    ti = [i for i in parse_text(run(DECODE, cap).stdout) if i[0] == "ev"]
    seqs = sorted(int(i[4].split()[0].split("=")[1]) for i in ti if i[3] == "producer")
    mid = seqs[len(seqs) // 2]   # half of them pass
    tc = [i for i in parse_report(report(dat, "-F", f"producer: seq > {mid}")) if i[0] == "ev"]
    want = [i for i in ti if i[3] == "producer" and int(i[4].split()[0].split("=")[1]) > mid]
    assert tc == want and len(want) > 100

    cap, want_text = make_capture(tmp_path, "--extra", "--seed", 3, tool=MKCAPTURE_EXTRA)
    write_dat(cap, dat)
    _, bias = write_dat(cap, dat)
    ti = [i[:2] + (i[2] + bias,) + i[3:] for i in parse_text(want_text) if i[0] == "ev"]
    for flt, key, val in (('mixed: path == "/"', "path", "/"), ("mixed: state == 7", "state", "gone"),
                          ("ints: a == 5", "a", "5")):
        tc = [i for i in parse_report(report(dat, "-F", flt)) if i[0] == "ev"]
        want = [i for i in ti if i[3] == flt.split(":")[0] and
                dict(f.split("=", 1) for f in i[4].split(" "))[key] == val]
        assert tc == want and want, flt


def test_lost_events_are_dropped_lines(tmp_path):
    """The LOST counts of the text, CPU by CPU, as DROPPED lines: kills a
    writer that drops the missed-events count or flags the wrong page."""
    cap = os.path.join(CAPTURES, "demo-overwrite.bin")
    dat = tmp_path / "t.dat"
    write_dat(cap, dat)
    ti = parse_text(run(DECODE, cap).stdout)
    tc = parse_report(report(dat))
    for cpu in range(4):
        want = [i[2] for i in lost_per_cpu(ti, cpu) if i[0] == "lost"]
        got = [i[2] for i in tc if i[0] == "lost" and i[1] == cpu]
        assert got == want and sum(want) > 0, cpu


def test_untrusted_and_invalid_clocks_are_noted(tmp_path):
    """A CPU whose clock is not trusted: one stderr line, and the file says
    so where trace-cmd report --stat shows it; the times still match."""
    cap, want = make_capture(tmp_path, "--seed", 4, "--clock", "1:mult=0")
    dat = tmp_path / "t.dat"
    r, _ = write_dat(cap, dat, want_rc=4)
    assert re.search(rb"^trace-dat: cpu 1: clock invalid: its times may be off", r.stderr, re.M)
    stat = run(TRACE_CMD, "report", "--stat", str(dat)).stdout.decode()
    assert re.search(r"^CPU: 1\n(.*\n)*?clock: invalid: mult=0: no conversion", stat, re.M), stat
    assert re.search(r"^CPU: 0\n(.*\n)*?clock: trusted$", stat, re.M), stat
    check_capture(tmp_path, cap, want_rc=4)
    # mkcapture-extra's CPU 2 is flagged untrusted by its kernel.
    cap, want = make_capture(tmp_path, "--extra", "--seed", 3, tool=MKCAPTURE_EXTRA, name="ex")
    r, _ = write_dat(cap, dat)
    assert b"trace-dat: cpu 2: clock untrusted" in r.stderr
    stat = run(TRACE_CMD, "report", "--stat", str(dat)).stdout.decode()
    assert re.search(r"^CPU: 2\n(.*\n)*?clock: untrusted$", stat, re.M), stat
    uname = run(TRACE_CMD, "report", "--uname", str(dat)).stdout.decode()
    assert "baretrace dump 1 of 1 (id 42): 4 CPUs" in uname and "complete" in uname


def test_damaged_captures_still_make_a_file_trace_cmd_reads(tmp_path):
    """Truncated, bit-flipped (a page with bad records or a bad header) and
    noisy captures: the decoder says damaged (1) and still writes a trace.dat
    of what it decoded, which trace-cmd reports without error and equal to
    the decoder's text of the same capture."""
    cap, _ = make_capture(tmp_path, "--events", 3000)
    data = cap.read_bytes()
    start = data.index(b"\xbaTR\xce")
    cases = {"cut": data[:start + (len(data) - start) // 2]}
    for k, off in enumerate((2000, 2100, 5000, 9000, 15000)):
        flip = bytearray(data)
        flip[start + off] ^= 0x10
        cases[f"flip{k}"] = bytes(flip)
    second = data.index(b"\xbaTR\xce", start + 1)
    cases["junk"] = data[:second] + b"\r\nnoise\x00\xff\xba" + data[second:]
    for name, d in cases.items():
        bad = tmp_path / f"{name}.bin"
        bad.write_bytes(d)
        check_capture(tmp_path, bad, want_rc=1)


def test_malformed_pages_are_events(tmp_path):
    """A page whose records stop making sense (a CRC-valid PAGE frame with
    a bad record, made by rewriting one and fixing the CRC) shows as
    baretrace:malformed_page where the text prints its MALFORMED line."""
    cap, _ = make_capture(tmp_path, "--events", 2000, "--seed", 2, "--no-pack")
    data = bytearray(cap.read_bytes())
    pos, done = 0, 0
    while done < 2:
        pos = data.index(b"\xbaTR\xce", pos + 1)
        ftype, flen = data[pos + 4], struct.unpack_from("<I", data, pos + 8)[0]
        if ftype != 3:   # PAGE
            continue
        page = pos + 16 + 32   # after dump_page_info
        # An invalid record (kind 31): after the page's first event, then first.
        struct.pack_into("<I", data, page + 48 + (12 if done == 0 else 0), 31 << 27)
        crc = zlib.crc32(bytes(data[pos:pos + 16 + flen]))
        struct.pack_into("<I", data, pos + 16 + flen, crc)
        done += 1
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(data))
    r = run(DECODE, str(bad))
    assert b"MALFORMED PAGE" in r.stdout, r.stderr.decode()
    _, ti, _, _ = check_capture(tmp_path, bad, want_rc=r.returncode)
    assert sum(i[0] == "bad" for i in ti) == 2


def test_help_and_errors(tmp_path):
    r = run(DECODE, "--help")
    assert b"--trace-dat FILE" in r.stdout and b"trace-cmd" in r.stdout
    cap, _ = make_capture(tmp_path, "--events", 200)
    assert run(DECODE, str(cap), "--trace-dat").returncode == 2
    r = run(DECODE, str(cap), "--quiet", "--trace-dat", str(tmp_path / "no" / "such" / "t.dat"))
    assert r.returncode == 2 and b"trace-dat: " in r.stderr


def grow_bprint(capture, text_len):
    """The capture with a copy of its first trace_printk record whose %s
    argument is text_len bytes, inserted after it (same stamp): the page,
    its frame's lengths and CRC rewritten (END no longer matches: damaged)."""
    data = bytearray(capture)
    pos = 0
    while True:
        pos = data.index(b"\xbaTR\xce", pos + 1)
        flen = struct.unpack_from("<I", data, pos + 8)[0]
        if data[pos + 4] != 3:   # PAGE frames only
            continue
        page = pos + 16 + 32
        commit = struct.unpack_from("<I", data, page + 32)[0]
        off = 0
        while off < commit:   # the records (<trace/ring_format.h>)
            word = struct.unpack_from("<I", data, page + 48 + off)[0]
            kind, arg = word >> 27, word & ((1 << 27) - 1)
            if kind == 28:
                off += arg
                continue
            if kind in (29, 30):
                off += 4 if kind == 29 else 12
                continue
            hsize, plen = (8, struct.unpack_from("<I", data, page + 52 + off)[0]) if kind == 0 \
                else (4, 4 * kind)
            p = page + 48 + off + hsize
            hdr, loc = struct.unpack_from("<I", data, p)[0], struct.unpack_from("<I", data, p + 20)[0]
            args = bytes(data[p + (loc & 0xffff):p + (loc & 0xffff) + ((loc >> 16) & 0x7fff)])
            if hdr >> 24 == 5 and len(args) > 40:   # bprint: ip, fmt, args; the round format
                break
            off += hsize + plen
        else:
            continue
        # The round format's arguments: %d %u %#06x %d, then %s (u16 length + bytes), %c %u.
        n = struct.unpack_from("<H", args, 32)[0] & 0x7fff
        new_args = args[:32] + struct.pack("<H", text_len) + b"x" * text_len + args[34 + n:]
        payload = bytearray(data[p:p + 24]) + new_args
        struct.pack_into("<I", payload, 20, 24 | len(new_args) << 16)
        payload += b"\0" * (-len(payload) % 4)
        assert len(payload) > 108   # the long form, here and in the trace.dat
        rec = struct.pack("<II", arg, len(payload)) + payload
        at = page + 48 + off + hsize + plen
        data[at:at] = rec
        struct.pack_into("<I", data, page + 32, commit + len(rec))    # commit
        struct.pack_into("<I", data, page + 36, struct.unpack_from("<I", data, page + 36)[0] + 1)
        struct.pack_into("<I", data, pos + 16 + 4, struct.unpack_from("<I", data, pos + 20)[0] + len(rec))
        struct.pack_into("<I", data, pos + 8, flen + len(rec))          # the frame's len
        end = pos + 16 + flen + len(rec)
        struct.pack_into("<I", data, end, zlib.crc32(bytes(data[pos:end])))
        return bytes(data)


def test_long_records(tmp_path):
    """A record longer than ftrace's inline form (a 120-byte %s in a
    trace_printk message): written with its length word, read back whole."""
    cap = tmp_path / "long.bin"
    cap.write_bytes(grow_bprint(open(os.path.join(CAPTURES, "trace-printk.bin"), "rb").read(), 120))
    text = run(DECODE, str(cap)).stdout
    assert b"str=" + b"x" * 120 + b"|" in text, text.decode()
    _, ti, _, _ = check_capture(tmp_path, cap, want_rc=1)
    assert sum(i[3] == "ktest_fn_trace_printk_lines" for i in ti if i[0] == "ev") == 7


# Linux's function_graph line (funcgraph-abstime, funcgraph-proc): time | cpu) task | mark
# duration | indent call; the duration with the ns digits that fit 7 digits.
TEXT_GRAPH = re.compile(r"^\s*(\d+)\.(\d{9}) \|\s+(\d+)\)\s+(\S+)\s+\| ([-+!#*@$ ]) "
                        r"(?:(\d+(?:\.\d+)?) us)?\s*\|  ( *)(\S.*)$")
TC_GRAPH = re.compile(r"^funcgraph_(?:entry|exit):\s+(?:([-+!#*@$]) )?\s*(?:(\d+\.\d{3}) us)?\s*"
                      r"\|  ( *)(\S.*)$")


def linux_us(ns):
    """A duration in ns as Linux's trace_print_graph_duration() prints it."""
    us = str(ns // 1000)
    return us if len(us) >= 7 else f"{us}.{ns % 1000:03d}"[:8]


def tc_mark(ns):
    """trace-cmd 3.1's marks: Linux's up to '#' (over 1 ms), no '*', '@', '$'."""
    return "#" if ns > 1000000 else "!" if ns > 100000 else "+" if ns > 10000 else None
TEXT_FUNC = re.compile(
    r"^\s*\S+-\d+\s+\[(\d{3})\] \S{4}\s+(\d+)\.(\d{9}): (\w[\w.]*) <-([\w.]+)\+0x[0-9a-f]+$")


def test_function_events_as_ftrace_s(tmp_path):
    """A real capture with the function tracer's events (ftrace.bin: the
    SMP bring-up's graph, then ftrace_chain's function and function_graph
    passes): trace-cmd prints them with its own function and
    function_graph handlers, as Linux's, and says what the decoder's text
    says: each graph line at the same CPU, nanosecond, nesting (depth),
    function and duration to the ns (rettime - calltime against the
    text's cycles converted), each function line the same function and
    caller. Kills: the events left in the baretrace formats (trace-cmd
    prints "func=0x... depth=..."), a wrong layout (no names or durations),
    calltime from the wrong stamp or clock, a depth off by one."""
    cap = os.path.join(CAPTURES, "ftrace.bin")
    text = run(DECODE, cap).stdout.decode()
    dat = tmp_path / "t.dat"
    write_dat(cap, dat)
    tc = report(dat, "-O", "parent=1").decode().splitlines()
    want_graph, want_func, got_graph, got_func = [], [], [], []
    marks = {}
    for line in text.splitlines():
        m = TEXT_GRAPH.match(line)
        if m:
            cpu, ns = int(m[3]), ns_of(m[1], m[2])
            assert m[4].endswith(f"/{cpu}-{1 + 4 * cpu + CONTEXTS.index(m[4].split('/')[0])}")
            want_graph.append((cpu, ns, m[6], len(m[7]), m[8]))
            marks[(cpu, ns)] = m[5]
            continue
        f = TEXT_FUNC.match(line)
        if f:
            want_func.append((int(f[1]), ns_of(f[2], f[3]), f[4], f[5]))
    for line in tc[1:]:
        m = TC_EVENT.match(line)
        assert m, line
        cpu, ns, name, rest = int(m[4]), ns_of(m[5], m[6]), m[7], m[8]
        if name == "function":
            f = re.match(r"^\s*(\S+) <-- (\S+)$", rest)
            assert f, line
            got_func.append((cpu, ns, f[1], f[2]))
        elif name.startswith("funcgraph_"):
            g = TC_GRAPH.match(f"{name}: {rest}")
            assert g, line
            d = round(float(g[2]) * 1000) if g[2] else None
            # Linux's mark and digits from trace-cmd's ns (trace-cmd 3.1 stops at '#').
            if d is not None:
                want_mark = " " if d <= 10000 else "+" if d <= 100000 else "!" if d <= 1000000 \
                    else "#" if d <= 10000000 else "*" if d <= 100000000 else "@" \
                    if d <= 1000000000 else "$"
                assert tc_mark(d) == (g[1] or None), line
                assert marks.get((cpu, ns)) == want_mark, (line, marks.get((cpu, ns)))
            got_graph.append((cpu, ns, linux_us(d) if g[2] else None, len(g[3]), g[4]))
    assert len(want_graph) >= 20 and len(want_func) >= 8, text
    assert any(x[4] == "smp_init() {" for x in want_graph)
    assert any(x[4] == "}" for x in want_graph) and not any("/*" in x[4] for x in want_graph)
    # ftrace's header for a function_graph trace, with its columns.
    assert text.startswith("# tracer: function_graph\n"), text[:200]
    assert re.search(r"^#\s+TIME\s+CPU\s+TASK/PID\s+DURATION\s+FUNCTION CALLS$", text, re.M)
    assert set(marks.values()) >= {" ", "+", "!", "*", "@"}, marks
    # CPU by CPU (Linux's graph is per CPU): the same lines, nesting and durations.
    for c in {x[0] for x in want_graph}:
        assert [x for x in got_graph if x[0] == c] == [x for x in want_graph if x[0] == c], c
    assert got_graph == want_graph
    assert got_func == want_func
    # Printed by trace-cmd's handlers, not from a baretrace print fmt.
    assert not any("func=" in l or "depth=" in l for l in tc), tc


def test_entries_are_ftraces_unread_events(tmp_path):
    """'entries' means what ftrace's per_cpu stats and trace-cmd mean: events
    still unread in the buffer (after the dump read its pages), the same in
    the text's '# cpu=' lines and in trace-cmd report --stat, where trace-cmd
    notes they "should all be zero": so they are for a dump that read every
    page (overwrite mode), and a discard-mode ring's unreadable tail page for
    the other. Kills: entries as events stored (the old 1014, 2072, ...)."""
    dat = tmp_path / "t.dat"
    for name, zero in (("demo-overwrite.bin", True), ("demo-discard.bin", False)):
        cap = os.path.join(CAPTURES, name)
        text = run(DECODE, cap).stdout.decode()
        head = {int(c): (int(e), int(rd)) for c, e, rd in re.findall(
            r"^# cpu=(\d+) entries=(\d+) overrun=\d+ dropped=\d+ commit_overrun=\d+ read=(\d+) ",
            text, re.M)}
        write_dat(cap, dat)
        stat = run(TRACE_CMD, "report", "--stat", str(dat)).stdout.decode()
        tc = {int(c): (int(e), int(rd)) for c, e, rd in re.findall(
            r"^CPU: (\d+)\nentries: (\d+)\n(?:.*\n)*?read events: (\d+)\n", stat, re.M)}
        assert head == tc and len(head) == 4, (name, head, tc)
        total = int(re.search(r"^# entries-in-buffer/entries-written: (\d+)/", text, re.M)[1])
        assert total == sum(rd for _, rd in head.values()), (name, total, head)
        assert all((e == 0) == zero and e < 4096 // 8 for e, _ in head.values()), (name, head)


KSHARK_GUI = "/lib/x86_64-linux-gnu/libkshark-gui.so.2.2.1"


def test_docs_say_what_kernelshark_does_as_root():
    """docs/trace-dat.md warns that KernelShark run as root stops at a dialog,
    quotes it, and says how to run it without root as the screenshot script
    does; where KernelShark is installed, the quoted text is its own. Kills:
    the section without the root dialog, a quote KernelShark does not print."""
    doc = " ".join(open(os.path.join(ROOT, "docs", "trace-dat.md")).read().split())
    quotes = ["KernelShark is running with Root privileges.", "Continue at your own risk.",
              "Don't show this message again."]
    for q in quotes:
        assert q in doc, q
    assert "setpriv --reuid=nobody" in doc and "scripts/kernelshark-shot.sh" in doc
    script = open(os.path.join(ROOT, "scripts", "kernelshark-shot.sh")).read()
    assert "setpriv --reuid=nobody --regid=nogroup --clear-groups" in script
    if os.path.exists(KSHARK_GUI):
        gui = open(KSHARK_GUI, "rb").read()
        for q in quotes:
            assert q.encode() in gui, q
