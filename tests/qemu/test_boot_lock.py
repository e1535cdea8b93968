"""boot_lock: which boots share the machine when the QEMU tests run in
parallel. No QEMU here but in the last test: `sleep` children stand in for run-qemu.sh, holding
the lock's descriptor as it would. Bugs caught: a classification that lets a
multi-CPU or ktest TCG boot share (flaky timing tests under load) unless its
test declared itself untimed, or lets a timed ktest share anyway, a lock
that is not held by the child (released while QEMU still runs), an
exclusive boot starved by shared ones (no turnstile), a worker waiting for
its own live QEMU, a killed boot whose QEMU lives on, an image built before
the wait that is not the one run-qemu.sh boots (built again under the lock)."""
import fcntl
import os
import subprocess
import threading
import time

import boot_lock
from conftest import ROOT


def args(cmdline="exit", smp="1", icount=False):
    return ["run-qemu.sh", "--timeout", "9", "--smp", smp, "--cmdline", cmdline] + \
        (["--icount"] if icount else [])


def test_classification():
    assert not boot_lock.exclusive(args(icount=True, smp="8", cmdline="run=ktest exit"))
    assert not boot_lock.exclusive(args(cmdline="run=demo exit"))
    assert boot_lock.exclusive(args(smp="2"))
    assert boot_lock.exclusive(args(smp="4,maxcpus=8"))
    assert boot_lock.exclusive(args(cmdline="run=ktest exit"))     # the whole suite
    assert boot_lock.exclusive(args(cmdline="run=ktest ktest=tsc_matches_other_reference exit"))
    assert boot_lock.exclusive(args(cmdline="run=ktest ktest=pmm_alloc_free,cross_cpu_order"))
    # Only tests that time nothing, on one CPU: shared.
    assert not boot_lock.exclusive(args(cmdline="run=ktest ktest=pmm_alloc_free exit"))
    assert not boot_lock.exclusive(args(cmdline="run=ktest ktest=acpi_tables_valid "
                                             "ktest=ring_buffer_refuses_bad_input exit"))
    assert boot_lock.exclusive(args(smp="2", cmdline="run=ktest ktest=pmm_alloc_free exit"))
    assert not boot_lock.exclusive(["run-qemu.sh", "--cmdline", "exit"])    # -smp 1 default
    # A test that says it times nothing: several CPUs share, a timed ktest never.
    assert not boot_lock.exclusive(args(smp="2", cmdline="run=shell"), untimed=True)
    assert not boot_lock.exclusive(args(smp="4,maxcpus=8", cmdline="run=ktest "
                                        "ktest=pmm_alloc_free exit"), untimed=True)
    assert boot_lock.exclusive(args(smp="2", cmdline="run=ktest exit"), untimed=True)
    assert boot_lock.exclusive(args(cmdline="run=ktest ktest=cross_cpu_order"), untimed=True)


def held(fd, seconds):
    """A child holding fd for seconds, as run-qemu.sh would."""
    p = subprocess.Popen(["sleep", str(seconds)], pass_fds=(fd,))
    boot_lock.started(fd, p)
    return p


def can_take(mode):
    """Whether another process could take the lock in mode right now."""
    code = ("import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR)\n"
            "try:\n    fcntl.flock(fd, int(sys.argv[2]) | fcntl.LOCK_NB)\n"
            "except BlockingIOError:\n    sys.exit(1)\n")
    return subprocess.run(["/usr/bin/python3", "-c", code, str(boot_lock.LOCK),
                           str(mode)]).returncode == 0


def test_the_child_holds_the_lock_and_reentry_takes_none(monkeypatch, tmp_path):
    monkeypatch.setattr(boot_lock, "LOCK", tmp_path / "lock")
    monkeypatch.setattr(boot_lock, "GATE", tmp_path / "gate")
    monkeypatch.setattr(boot_lock, "_live", [])
    monkeypatch.setattr(boot_lock, "ENABLED", True)
    fd = boot_lock.acquire(args(icount=True))
    p = held(fd, 2)                 # our own descriptor is closed now
    assert can_take(fcntl.LOCK_SH) and not can_take(fcntl.LOCK_EX)
    # A second boot from this process while the first lives takes no lock
    # (an exclusive one would otherwise wait for its own shared holder).
    assert boot_lock.acquire(args(smp="3")) is None
    p.wait()
    assert can_take(fcntl.LOCK_EX)  # released with the child
    fd = boot_lock.acquire(args(smp="3"))
    p = held(fd, 1)
    assert not can_take(fcntl.LOCK_SH)
    p.wait()


def test_an_exclusive_boot_is_not_starved(monkeypatch, tmp_path):
    """Shared holders come and go; an exclusive boot that waits blocks new
    shared ones at the gate and gets the lock when the current ones end."""
    monkeypatch.setattr(boot_lock, "LOCK", tmp_path / "lock")
    monkeypatch.setattr(boot_lock, "GATE", tmp_path / "gate")
    monkeypatch.setattr(boot_lock, "_live", [])
    monkeypatch.setattr(boot_lock, "ENABLED", True)
    first = held(boot_lock.acquire(args(icount=True)), 1.5)
    boot_lock._live.clear()         # act as another worker from here on
    got = {}

    def exclusive_boot():
        got["ex"] = time.monotonic()
        fd = boot_lock.acquire(args(smp="2"))
        got["ex"] = time.monotonic()
        os.close(fd)

    t = threading.Thread(target=exclusive_boot)
    t.start()
    time.sleep(0.3)                 # the exclusive one now waits at the lock, holding the gate
    start = time.monotonic()
    fd = boot_lock.acquire(args(icount=True))   # a new shared boot: must wait its turn
    after = time.monotonic()
    os.close(fd)
    t.join()
    first.wait()
    assert got["ex"] <= after, "the shared boot went ahead of the waiting exclusive one"
    assert after - start >= 0.8, "the shared boot did not wait at the gate"


def group_members(pgid):
    """(pid, comm) of every process in process group pgid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid:          # field 5, pgrp
            out.append((int(d), comm))
    return out


def test_kill_ends_qemu_at_once(shell):
    """The one test here that boots. Shell.kill() signals run-qemu.sh's
    process group: QEMU must be in it (run-qemu.sh runs it under timeout
    --foreground), or a killed boot lives on, holding its boot lock, until
    its --timeout. Caught: plain `timeout`, which gives QEMU a group of its own."""
    s = shell("run=shell", smp=1, timeout=300)
    qemus = [pid for pid, comm in group_members(s.p.pid) if comm.startswith("qemu-system")]
    assert len(qemus) == 1, group_members(s.p.pid)
    s.kill()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{qemus[0]}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{qemus[0]}"), "QEMU outlived Shell.kill()"


def test_the_image_built_before_the_wait_is_the_one_run_qemu_boots(tmp_path):
    """boot_lock builds a boot's image where run-qemu.sh looks for it. Here
    run-qemu.sh cannot build one (TMPDIR is not there: mkiso.sh's mktemp
    fails) and its QEMU is /bin/false: it gets as far as QEMU only if it
    found the image. (GRUB commands of two lines, never run: the key's
    layout.)"""
    argv = [str(ROOT / "run-qemu.sh"), "--cmdline", "exit test_boot_lock=image",
            "--grub-cmds", "insmod memrw\ninsmod wrmsr"]
    _, iso = boot_lock.image(argv)
    iso.unlink(missing_ok=True)
    try:
        boot_lock.build_image(argv)
        assert iso.exists()
        built = iso.stat().st_mtime_ns
        r = subprocess.run(argv + ["--qemu", "/bin/false"], capture_output=True, text=True,
                           env={**os.environ, "TMPDIR": str(tmp_path / "absent")}, timeout=60)
        assert r.returncode == 2 and "QEMU failed (status 1)" in r.stderr, r.stderr
        assert iso.stat().st_mtime_ns == built
    finally:
        iso.unlink(missing_ok=True)
