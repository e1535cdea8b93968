"""The serial shell: every command, errors, editing, long lines, garbage, Ctrl-C.

The shell's answers are checked, never how long they took: the two-CPU
sessions share the machine (untimed=True, tests/qemu/boot_lock.py)."""
import fcntl
import os
import pty
import random
import re
import select
import signal
import subprocess
import termios
import time

import boot_lock
from conftest import ROOT


def test_commands_and_errors(shell):
    s = shell(untimed=True)
    out = s.cmd("help")
    for name in ("help", "clock", "cpus", "ktest", "poweroff"):
        assert re.search(rf"^  {name} ", out, re.M), out
    out = s.cmd("clock")
    assert re.search(r"^tsc: freq_hz=\d+ ref=\w+ err_ppm=\d+\.\d{3} tol_ppm=\d+\.\d{3} invariant=(yes|no)$", out, re.M), out
    assert len(re.findall(r"^clock: cpu=\d+ mult=\d+ shift=\d+ offset_ns=-?\d+ .*trusted=(yes|no)$", out, re.M)) == 2
    out = s.cmd("cpus")
    assert len(re.findall(r"^cpu: cpu=\d+ apic_id=\d+ online=yes ", out, re.M)) == 2
    assert re.search(r"^cpus: online=2 lapic=\w+ timer_hz=\d+$", out, re.M)
    out = s.cmd("ktest smp_call_reaches_every_cpu")
    assert "KTAP version 1" in out and re.search(r"^ok 1 smp_call_reaches_every_cpu$", out, re.M), out
    assert s.cmd("nosuch") == "error: unknown command 'nosuch'; 'help' lists the commands\n"
    assert s.cmd("cpus now") == "error: cpus takes no arguments\n"
    assert s.cmd("ktest a b") == "error: usage: ktest [name[,name...]]\n"
    assert s.cmd("a b c d e f g h i") == "error: too many arguments (at most 7)\n"
    assert s.cmd("") == ""
    s.send(b"poweroff\r")
    assert s.close() == 0
    assert "poweroff: bye" in s.text()


def test_editing_long_lines_and_garbage(shell):
    s = shell(untimed=True)
    # Backspace and DEL erase; Ctrl-U clears; Left/Right's escape sequences are swallowed.
    out = s.cmd("cpuz\x7f\x08us")
    assert "cpus: online=2" in out, out
    out = s.cmd("garbage\x15\x1b[C\x1bODcpus")
    assert "cpus: online=2" in out, out
    # Ctrl-C drops the line and gives a fresh prompt.
    s.send(b"poweroff\x03")
    s.wait_prompt()
    # A line over the limit is refused as a whole.
    assert s.cmd("x" * 300) == "error: line too long (at most 127 characters)\n"
    # Random bytes, Enter included: the shell answers each line and survives.
    rng = random.Random(1234)
    s.send(bytes(rng.randrange(256) for _ in range(4000)))
    s.send(b"\x03\rhelp\r")
    t0 = len(s.text())
    import time
    deadline = time.time() + 60
    while time.time() < deadline and "poweroff" not in s.text()[t0:]:
        time.sleep(0.1)
    assert re.search(r"^  poweroff ", s.text()[t0:], re.M), s.text()[-2000:]
    s.send(b"poweroff\r")
    assert s.close() == 0


def test_help_history_and_the_idle_loop(shell):
    """help: one line per command, their texts in one column, and 'help CMD'
    gives that command's forms; Up and Down walk the lines run; ftrace's
    graph depth is set at run time; an idle shell records nothing of its own
    loop but the 1 kHz lapic_tick event, which one command stops, so that a
    short dump shows the work. Kills: help's fixed %-8s %-28s columns, arrows
    swallowed, no graph_depth form, clock_watchdog_poll traced 1000 times a
    second. The clock watchdog is off: its checks are work of their own."""
    s = shell("run=shell clock.watchdog_ms=0", untimed=True)
    out = s.cmd("help").splitlines()
    rows = [l for l in out if l.startswith("  ")]
    names = [l.split()[0] for l in rows]
    assert {"help", "dump", "ftrace", "status", "poweroff"} <= set(names), out
    assert len({len(l) - len(l[2:].split(None, 1)[1]) for l in rows}) == 1, out  # one column
    assert out[-1] == "'help <command>' gives its usage; Up and Down recall earlier lines", out
    out = s.cmd("help ftrace")
    assert out.startswith("ftrace: function tracer: "), out
    forms = re.findall(r"^  ftrace (graph_depth N|filter LIST\|-|work)\s{2,}\S", out, re.M)
    assert forms == ["filter LIST|-", "graph_depth N", "work"], out
    assert s.cmd("help nosuch") == "error: help: no command 'nosuch'; 'help' lists the commands\n"
    # History: Up twice is the line before the last; Up, Down, Down is an empty line again.
    s.cmd("cpus")
    s.cmd("status")
    s.send(b"\x1b[A\x1b[A\r")
    assert "cpus: online=2" in s.wait_prompt()
    s.send(b"\x1b[A\x1bOB\x1b[Bstop\r")
    assert s.wait_prompt().endswith("trace: recording=off\n")
    s.cmd("start")
    # graph_depth at run time: 1 records ftrace_work_a alone, as a leaf; 0 all levels.
    assert "ftrace.graph_depth=1" in s.cmd("ftrace graph_depth 1")
    assert s.cmd("ftrace graph_depth 64") == \
        "error: ftrace graph_depth 64: not a number from 0 to 63 (0: all 63 levels)\n"
    s.cmd("events disable irq:lapic_tick")
    s.cmd("ftrace filter ftrace_work_*")
    s.cmd("tracer function_graph")
    s.cmd("ftrace work")
    out = s.cmd("dump text last=0")
    assert re.search(r"\|  ftrace_work_a\(\);$", out, re.M) and "ftrace_work_b" not in out, out
    assert "ftrace.graph_depth=63" in s.cmd("ftrace graph_depth 0")
    # The idle loop: every function traced, 0.3 s idle between two commands.
    s.cmd("ftrace filter -")
    s.cmd("tracer function")
    s.cmd("dump text last=1")
    time.sleep(0.3)
    s.cmd("ftrace work")
    time.sleep(0.3)
    out = s.cmd("dump text last=12")
    assert re.search(r": ftrace_work_c <-ftrace_work_b", out), out
    assert "clock_watchdog_poll" not in out and "lapic_tick" not in out, out
    s.send(b"poweroff\r")
    assert s.close() == 0


def test_every_refusal_is_one_error_line(shell):
    """Bad input says one specific line and loses nothing, at boot and in the
    shell, in one boot: a bad job among good ones is named and the good ones
    run; a negative number is out of range; a filter that matches nothing is
    refused and the tracer not started (never every function traced instead);
    a shell command refused answers one `error:` line and changes nothing."""
    s = shell("run=demo,nope,shell demo.ms=50 dump.last=-1 ftrace=function "
              "ftrace.filter=lapic_*", timeout=300, untimed=True)
    boot = s.text()
    assert re.search(r"^\[[ \d.]+\] cmdline: run=demo,nope,shell: 'nope' is not known; "
                     r"accepted: comma-separated .*; left out: using run=demo,shell$", boot,
                     re.M), boot
    assert re.search(r"run: job=demo result=pass$", boot, re.M), boot
    assert re.search(r"\] cmdline: dump\.last=-1: invalid value: out of range; "
                     r"accepted: 0\.\.100000000; left unchanged$", boot, re.M), boot
    assert re.search(r"^dump: showed the last 200 of (\d+) events; \d+ left out", boot, re.M)
    assert re.search(r"\] ftrace: ftrace\.filter=lapic_\*: no traceable function matches "
                     r"lapic_\*; not changed$", boot, re.M), boot
    assert re.search(r"\] ftrace: ftrace=function not started: ", boot, re.M), boot
    assert re.search(r"^ftrace: tracer=nop sites=\d+ enabled=0 ", s.cmd("tracer"), re.M)

    assert s.cmd("tracer bogus") == \
        "error: tracer: unknown tracer 'bogus'; tracers are nop, function, function_graph\n"
    assert s.cmd("ftrace filter nosuch") == \
        "error: ftrace filter nosuch: no traceable function matches nosuch; not changed\n"
    assert s.cmd("ktest nosuch,smp_call_reaches_every_cpu") == \
        "error: ktest: no test named 'nosuch'; nothing run\n"
    out = s.cmd("ftrace filter smp_*,lapic_*")
    assert out.startswith("ftrace: filter: no traceable function matches lapic_*; left out "
                          "(applied: smp_*)\n"), out
    assert "\nftrace.filter=smp_*\n" in out, out
    enabled = int(re.search(r"^ftrace: tracer=function sites=\d+ enabled=(\d+) ",
                            s.cmd("tracer function"), re.M).group(1))
    # Counted apart: the functions the glob names, and those marked traced.
    named = int(re.search(r"^functions: (\d+) of ", s.cmd("functions smp_*"), re.M).group(1))
    on = re.findall(r"^(\S+) \[on\]$", s.cmd("functions"), re.M)
    assert 0 < enabled == named == len(on), (enabled, named, on)
    assert all(f.startswith("smp_") for f in on), on
    s.send(b"poweroff\r")
    assert s.close() == 0


def test_ctrl_c_on_a_terminal_reaches_the_kernel():
    """`make run` on a terminal: Ctrl-C is a byte for the kernel (run-qemu.sh's
    signal=off), not SIGINT for QEMU: it drops the shell's line and QEMU lives
    on. Ctrl-A X still ends QEMU, and make with it, without an error."""
    master, slave = pty.openpty()
    args = ["make", "run", "CPUS=1", "CMDLINE=run=shell"]

    def own_terminal():             # the pty is make's controlling terminal, as a shell's is
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    lock = boot_lock.acquire(args)
    p = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=ROOT,
                         preexec_fn=own_terminal, pass_fds=() if lock is None else (lock,))
    boot_lock.started(lock, p)
    os.close(slave)
    out = bytearray()

    def read_until(needle, timeout=300):
        deadline = time.time() + timeout
        while out.replace(b"\r", b"").find(needle) < 0:   # the pty adds \r too
            assert time.time() < deadline and p.poll() is None, out.decode("utf-8", "replace")
            if select.select([master], [], [], 0.1)[0]:
                try:
                    out.extend(os.read(master, 4096))
                except OSError:         # the other side closed
                    pass
    try:
        read_until(b"baretrace> ")
        os.write(master, b"cpuz\x03")
        read_until(b"cpuz^C\nbaretrace> ")
        os.write(master, b"cpus\r")
        read_until(b"cpus: online=1 ")
        os.write(master, b"\x01x")
        assert p.wait(60) == 0, out.decode("utf-8", "replace")
        assert b"Error" not in out, out.decode("utf-8", "replace")
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)    # make, run-qemu.sh and QEMU
            p.wait()
        os.close(master)
