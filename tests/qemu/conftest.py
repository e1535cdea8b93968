"""QEMU system tests: boot the kernel with run-qemu.sh and read what it printed.

Every run has a timeout; under TCG nothing here depends on wall-clock speed.
"""
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import boot_lock
from qemu_shell import Shell

ROOT = Path(__file__).resolve().parents[2]
# QEMU 10 from bookworm-backports (scripts/qemu10.sh): the system's QEMU 7.2
# has no x2APIC under TCG. Only the x2APIC tests use it.
QEMU10 = ROOT / "build" / "qemu10" / "usr" / "bin" / "qemu-system-x86_64"
PREFIX = re.compile(r"^\[\s*\d+\.\d{6}\] ")
DECODE = ROOT / "build" / "tools" / "baretrace-decode"


@dataclass
class Run:
    rc: int                     # run-qemu.sh exit status
    out: str                    # everything on the serial console (and stderr)
    lines: list = field(default_factory=list)  # console lines, printk prefix removed

    def has(self, pattern):
        """First line matching the regex, or None."""
        rx = re.compile(pattern)
        return next((l for l in self.lines if rx.search(l)), None)

    def all(self, pattern):
        rx = re.compile(pattern)
        return [l for l in self.lines if rx.search(l)]

    def ktap(self):
        """Check the KTAP block: version, plan, one result per planned test.
        Returns {name: ok}."""
        assert "KTAP version 1" in self.lines, self.out
        plan = self.has(r"^1\.\.\d+$")
        assert plan, self.out
        n = int(plan.split("..")[1])
        results = {}
        for l in self.lines:
            m = re.match(r"^(ok|not ok) (\d+) (\S+)", l)
            if m:
                results[m.group(3)] = m.group(1) == "ok"
        assert len(results) == n, f"plan says {n}, saw {len(results)}\n{self.out}"
        return results

    def fields(self, pattern):
        """key=value pairs of the first line matching pattern."""
        line = self.has(pattern)
        assert line, f"no line matching {pattern!r}\n{self.out}"
        return dict(re.findall(r"(\w+)=(\"[^\"]*\"|\S+)", line))


def run_qemu(cmdline="", *, uefi=False, smp=1, machine="q35", icount=False,
             no_hpet=False, memory=None, timeout=90, grub_cmds=None, opts=(), extra=(),
             serial=None, cpu=None, qemu_bin=None, untimed=False):
    """Boot once. opts: further run-qemu.sh options; extra: QEMU arguments;
    qemu_bin: another QEMU than the system's; cmdline None: no --cmdline (a
    --usb-image stick then boots with the command line it carries); untimed:
    the test asserts nothing about time and needs no vCPUs running at once,
    so a multi-CPU boot may share the machine (boot_lock.py)."""
    args = [str(ROOT / "run-qemu.sh"), "--timeout", str(timeout), "--smp", str(smp),
            "--machine", machine]
    if cmdline is not None:
        args += ["--cmdline", cmdline]
    if cpu:
        args += ["--cpu", cpu]
    if qemu_bin:
        args += ["--qemu", str(qemu_bin)]
    if uefi:
        args.append("--uefi")
    if icount:
        args.append("--icount")
    if no_hpet:
        args.append("--no-hpet")
    if memory:
        args += ["--memory", memory]
    if grub_cmds:
        args += ["--grub-cmds", grub_cmds]
    if serial:
        args += ["--serial", str(serial)]
    args += list(opts)
    if extra:
        args += ["--", *extra]
    lock = boot_lock.acquire(args, untimed)     # before the timeouts start
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout + 60, cwd=ROOT,
                           pass_fds=() if lock is None else (lock,))
    finally:
        if lock is not None:
            os.close(lock)
        boot_lock.log("end")
    out = p.stdout.decode("utf-8", "replace").replace("\r", "")
    lines = [PREFIX.sub("", l) for l in out.split("\n")]
    return Run(p.returncode, out, lines)


@pytest.fixture(scope="session")
def decoder():
    """The host decoder (tools/baretrace-decode), built once a session."""
    subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    assert DECODE.exists()
    return DECODE


@pytest.fixture(scope="session")
def qemu():
    if not (ROOT / "build" / "kernel.elf").exists():
        pytest.fail("build/kernel.elf is missing: run 'make' first")
    return run_qemu


@pytest.fixture(scope="session")
def qemu10(qemu):
    """run_qemu under QEMU 10."""
    if not QEMU10.exists():
        pytest.fail(f"{QEMU10.relative_to(ROOT)} is missing: run 'make deps-qemu10' "
                    "(make test and make test-qemu do)")

    def run(*a, **kw):
        return qemu(*a, qemu_bin=QEMU10, **kw)
    return run


@pytest.fixture
def shell():
    """shell(...) boots a qemu_shell.Shell; any still running when the test ends is killed."""
    sessions = []

    def start(*a, **kw):
        s = Shell(*a, **kw)
        sessions.append(s)
        return s
    yield start
    for s in sessions:
        if s.p.poll() is None:
            s.kill()


# Seconds of boots each file holds the machine alone for (exclusive, in
# boot_lock.py's sense) and shares it (icount, one-CPU and untimed boots),
# from the last quiet fresh-clone run's BOOT_LOG (2026-12-06, 238 boots;
# `make test-qemu-times` sums a log up), and for the files whose boots were
# since declared untimed, a quiet run of those files alone, -n 2, the same
# day. Only the order matters.
# With --dist loadfile a worker takes a whole file at a time; an exclusive
# boot waits for the other worker's shared boot to end, and that worker
# idles meanwhile. So the files made mostly of exclusive boots go first,
# both workers taking turns at the machine; then the mixed ones; then those made of shared boots, two at a
# time with nothing to wait for, the longest first so that neither worker is
# left alone with a long file at the end. A file not listed counts as mixed.
FILE_COST = {
    "test_x2apic.py": (67, 15), "test_boot.py": (24, 14), "test_events.py": (35, 0),
    "test_dump.py": (16, 2), "test_static_keys.py": (11, 7), "test_trace_dat_qemu.py": (4, 0),
    "test_ftrace.py": (36, 32), "test_watchdog.py": (29, 33), "test_realhw.py": (19, 30),
    "test_acpi_tool.py": (6, 9), "test_boot_lock.py": (1, 3), "test_persist.py": (0, 192),
    "test_clock.py": (5, 134), "test_lab.py": (0, 95), "test_clockwd.py": (0, 91),
    "test_skew.py": (9, 77), "test_trace.py": (13, 55), "test_usb.py": (12, 48),
    "test_bench.py": (0, 58), "test_smp.py": (0, 54), "test_panic.py": (5, 40),
    "test_clock_faults.py": (0, 39), "test_dead_ap.py": (0, 35), "test_shell.py": (0, 14),
    "test_ftrace_backtrace.py": (0, 6),
}


def file_order(name):
    """Sort key of a file: exclusive first, mixed, shared; longest first."""
    ex, sh = FILE_COST.get(name, (30, 30))
    frac = ex / max(ex + sh, 1)
    return (0 if frac >= 0.6 else 1 if frac >= 0.25 else 2, -(ex + sh))


def pytest_collection_modifyitems(session, config, items):
    """Files in file_order(); the order within a file is kept."""
    first = {}
    for i, item in enumerate(items):
        first.setdefault(item.path.name, i)
    items.sort(key=lambda it: (file_order(it.path.name), first[it.path.name]))
