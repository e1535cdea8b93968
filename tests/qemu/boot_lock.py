"""Which QEMU boots may run at the same time, when the tests run in parallel.

`make test-qemu` runs the tests in two pytest-xdist workers (QEMU_TEST_JOBS),
on machines with two cores. Two boots may share the machine only if neither
can be hurt by the other:

- an icount boot runs on one host thread and its guest time does not depend
  on the host at all (FACTS.md): it can share;
- a plain-TCG boot with one CPU and no in-kernel tests, or only ones that
  time nothing (UNTIMED_KTESTS), uses one host thread and asserts nothing
  about time: it can share;
- a plain-TCG boot with several CPUs and no in-kernel tests (or only
  untimed ones) whose test declares itself untimed (run_qemu's and Shell's
  `untimed=True`: it asserts nothing about time, skew or trust, and checks
  nothing that needs the vCPUs to run at the same moment, such as a race)
  can share: what a descheduled vCPU thread can do to it (a bring-up skew
  bound marked untrusted, a demo that records less in its span) is not
  what it checks, and it must pass beside other load anyway;
- every other plain-TCG boot needs the machine to itself: with several vCPUs
  (MTTCG: one host thread each) the bring-up's skew measurement and the
  cross-CPU tests want the cores, and the in-kernel tests compare the TSC
  against the PIT and PM timer over windows that a descheduled vCPU thread
  stretches (seen in CI: tsc_matches_other_reference failed when two boots
  ran at once by hand).

So a shared boot takes a shared lock and an exclusive boot an exclusive one,
on build/qemu-tests.lock, through a turnstile (build/qemu-tests.gate) so that
a waiting exclusive boot is not starved by a stream of shared ones: every
boot passes the gate, and an exclusive one keeps the gate until it holds the
lock. The lock's descriptor is handed to run-qemu.sh (pass_fds), so it is
held exactly as long as the QEMU process tree lives, however the test ends.
Waiting happens before the boot's own timeouts start.

Within one worker a test may hold a live QEMU while it boots another (a shell
session and a one-shot run): the second boot then takes no lock of its own
(it would wait for itself), and counts as part of the first.

A boot's GRUB image (one per command line, cached by run-qemu.sh) is built
here, before the wait, not by run-qemu.sh under the lock: grub-mkrescue takes
about 1 s, mostly writing the 22 MB image, and a fresh build directory needs
about 130 of them, which under the lock lengthened every first boot of a
command line, exclusive ones included. (Its 0.4 s of CPU alongside another
worker's boot is less than the test's own parsing there.)
"""
import fcntl
import hashlib
import os
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "build" / "qemu-tests.lock"
GATE = ROOT / "build" / "qemu-tests.gate"

_live = []      # this process's running QEMUs that hold the lock (Popen objects)
# Only between xdist workers: a serial run has nobody to share with. (A
# test's killpg() of run-qemu.sh must reach QEMU, or a killed boot would hold
# the lock until its --timeout: run-qemu.sh runs it under timeout --foreground,
# which keeps it in run-qemu.sh's process group.)
ENABLED = "PYTEST_XDIST_WORKER" in os.environ


# In-kernel tests that time nothing: a one-CPU boot that runs only these
# shares the machine like one that runs none (the others compare clocks).
# smp_call_reaches_every_cpu counts calls run; its 10 s is a hang bound.
UNTIMED_KTESTS = {"pmm_alloc_free", "acpi_tables_valid", "ring_buffer_refuses_bad_input",
                  "smp_call_reaches_every_cpu"}


def exclusive(args, untimed=False):
    """Whether a run-qemu.sh argument list needs the machine to itself.
    untimed: the test's word that it times nothing and needs no vCPUs
    running at once (the module's docstring); it lets several CPUs share,
    never a timed in-kernel test."""
    if "--icount" in args:
        return False
    smp = args[args.index("--smp") + 1] if "--smp" in args else "1"
    cmdline = args[args.index("--cmdline") + 1] if "--cmdline" in args else ""
    if "ktest" in cmdline:
        named = [w.split("=", 1)[1] for w in cmdline.split() if w.startswith("ktest=")]
        if not named or not set(",".join(named).split(",")) <= UNTIMED_KTESTS:
            return True
    return smp.split(",")[0] != "1" and not untimed


def _option(args, name, default):
    """The value of a run-qemu.sh option (before any "--"), or default."""
    own = args[:args.index("--")] if "--" in args else args
    return own[own.index(name) + 1] if name in own else default


def image(args):
    """The cached image run-qemu.sh boots for these arguments, by its rule:
    build/iso-cache/<first 16 hex digits of the SHA-1 of the kernel's real
    path, the command line and the GRUB commands, one a line>.iso."""
    kernel = os.path.realpath(ROOT / _option(args, "--kernel", "build/kernel.elf"))
    key = "\n".join([kernel, _option(args, "--cmdline", ""), _option(args, "--grub-cmds", "")])
    return Path(kernel), ROOT / "build" / "iso-cache" / \
        (hashlib.sha1(key.encode()).hexdigest()[:16] + ".iso")


def build_image(args):
    """Build the image run-qemu.sh would build for these arguments, where it
    would: when it is missing or older than the kernel or mkiso.sh. (If the rule here
    drifted from run-qemu.sh's, run-qemu.sh would build its own: slower, never
    wrong; test_boot_lock.py checks that they agree.)"""
    if "--usb-image" in args:
        return                  # the stick boots its own GRUB image: none is built
    kernel, iso = image(args)
    if not kernel.exists():
        return                  # run-qemu.sh says so
    mkiso = ROOT / "scripts" / "mkiso.sh"
    if iso.exists() and iso.stat().st_mtime_ns >= max(kernel.stat().st_mtime_ns,
                                                      mkiso.stat().st_mtime_ns):
        return
    subprocess.run([str(ROOT / "scripts" / "mkiso.sh"), str(kernel), str(iso),
                    _option(args, "--cmdline", ""), _option(args, "--grub-cmds", "")],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)    # a failure: run-qemu.sh tries again and says why


def acquire(args, untimed=False):
    """Take the lock a boot with these run-qemu.sh arguments needs (untimed:
    as for exclusive()); the descriptor to pass to it (pass_fds), or None
    when this process already holds one for a live QEMU. The boot's image is
    built first."""
    _live[:] = [p for p in _live if p.poll() is None]
    if args and args[0] == str(ROOT / "run-qemu.sh"):
        build_image(args)
    if not ENABLED or _live:
        return None
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    ex = exclusive(args, untimed)
    t0 = time.time()
    gate = os.open(GATE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX if ex else fcntl.LOCK_SH)
    finally:
        os.close(gate)          # releases the gate
    log("lock", ex=int(ex), wait=f"{time.time() - t0:.1f}")
    return fd


def log(what, **kw):
    """One line to $BOOT_LOG (if set): when each boot got its lock and ended,
    which test, on which worker; `make test-qemu-times` sums it up."""
    path = os.environ.get("BOOT_LOG")
    if not path:
        return
    # "<node id> (<phase>)": the id may hold spaces (parameter ids); it ends the line.
    test = os.environ.get("PYTEST_CURRENT_TEST", "? ()").rsplit(" ", 1)[0]
    fields = " ".join(f"{k}={v}" for k, v in kw.items())
    with open(path, "a") as f:
        f.write(f"{time.time():.1f} {os.environ.get('PYTEST_XDIST_WORKER', '-')} {what} "
                f"{fields} test={test}\n")


def started(fd, proc):
    """The QEMU holding fd is running: the child keeps the lock, not us."""
    if fd is not None:
        _live.append(proc)
        os.close(fd)
