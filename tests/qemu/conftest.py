"""QEMU system tests: boot the kernel with run-qemu.sh and read what it printed.

Every run has a timeout; under TCG nothing here depends on wall-clock speed.
"""
import fcntl
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import boot_lock
import boot_times
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


def make_locked(*args, **kw):
    """make ARGS in the tree, one worker at a time: the workers share build/,
    and two makes of one target at once would write the same files."""
    (ROOT / "build").mkdir(exist_ok=True)
    with open(ROOT / "build" / "make-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", *args], cwd=ROOT, check=True, **kw)


@pytest.fixture(scope="session")
def decoder():
    """The host decoder (tools/baretrace-decode), built once a session."""
    make_locked("tools")
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


# The order the tests start in. `make test-qemu` hands them out one at a
# time (xdist's loadgroup; a test marked xdist_group goes with its group) to
# whichever worker is free. An exclusive boot (boot_lock.py) waits for the
# other worker's boot to end, and that worker idles meanwhile: behind a 40 s
# shared boot, for 40 s. So every test with an exclusive boot goes first,
# both workers taking turns at the machine, then the rest, two at a time with
# nothing to wait for; longest first in each part, so that neither worker is
# left alone with a long test at the end. boot_costs.txt gives each test's
# seconds from a quiet run (`make test-qemu-costs` rewrites it from the last
# run's log); a test not in it counts as shared, 10 s. Only the order
# depends on it. Against the whole files in turn it replaced (2026-12-06,
# quiet, `make test-qemu`): 240 tests in 906 s instead of 1006 s, the boots'
# waits for the lock 281 s instead of 509 s.


# Files whose tests share something a module keeps (test_lab.py: one boot per
# CPU count, which several tests read) go to one worker whole.
GROUPED_FILES = {"test_lab.py"}


@pytest.hookimpl(tryfirst=True)     # before xdist's, which reads the groups
def pytest_collection_modifyitems(session, config, items):
    """Tests with an exclusive boot first, then the others; longest first in each."""
    costs = boot_times.listed_costs()
    for item in items:
        if item.path.name in GROUPED_FILES:
            item.add_marker(pytest.mark.xdist_group(item.path.name))

    def key(item):
        test = item.path.name + "::" + item.nodeid.partition("::")[2]
        ex, sh = costs.get(test, (0.0, 10.0))
        return (0 if ex > 0 else 1, -(ex + sh))
    items.sort(key=key)
