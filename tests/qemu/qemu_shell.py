"""The kernel's serial shell (run=shell) under QEMU, driven like a terminal.

One driver for everything that talks to the shell: the QEMU tests (conftest.py's
`shell` fixture) and `make bench` (scripts/bench-kernel.py). It lives here,
beside conftest.py and fbrender.py, because it is test machinery for the kernel
under QEMU: pytest already puts this folder on sys.path, and the one script that
needs it adds this folder once. scripts/ holds what make runs, not modules.

Every wait is bounded. A prompt that does not come raises NoPrompt, an
AssertionError (a test fails on it) that carries the timeout and the whole
console output, so that a caller that is not a test can report it its own way.
Standard library only.
"""
import os
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import boot_lock

ROOT = Path(__file__).resolve().parents[2]
PROMPT = b"baretrace> "


def monitor_cmd(path, line, timeout=10):
    """One HMP command (or a list of them, in order) over the --monitor Unix
    socket; returns once the monitor has carried it out (its next prompt: stop has stopped the vCPUs,
    system_reset is queued for the main loop, which takes it before it reads
    another command), with what it answered (a list for a list: text up to
    each next prompt, the command's echo first)."""
    deadline = time.time() + timeout
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(path))
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)

    def until_prompt():
        got = b""
        while not got.endswith(b"(qemu) "):
            part = s.recv(4096)
            assert part, f"monitor closed before its prompt: {got!r}"
            got += part
        return got

    answers = []
    with s:
        s.settimeout(timeout)
        until_prompt()                      # the monitor's greeting and prompt
        for one in [line] if isinstance(line, str) else line:
            s.sendall(one.encode() + b"\n")
            # The command's echo, its output, the next prompt.
            answers.append(until_prompt().decode("utf-8", "replace").replace("\r", ""))
    return answers[0] if isinstance(line, str) else answers


class NoPrompt(AssertionError):
    """No prompt within timeout seconds (or QEMU exited first)."""

    def __init__(self, timeout, output):
        self.timeout = timeout
        self.output = output        # bytes: everything QEMU printed
        tail = output.decode("utf-8", "replace").replace("\r", "")[-3000:]
        super().__init__(f"no prompt within {timeout}s:\n{tail}")


class Shell:
    """A kernel booted with run=shell, driven through its serial console.

    timeout: run-qemu.sh's own limit for the whole session; boot_timeout: how
    long to wait for the first prompt; opts: further run-qemu.sh options;
    untimed: as for conftest.run_qemu (boot_lock.py)."""

    PROMPT = PROMPT.decode()

    def __init__(self, cmdline="run=shell", smp=2, timeout=120, boot_timeout=90, opts=(),
                 prompt=True, untimed=False):
        args = [str(ROOT / "run-qemu.sh"), "--timeout", str(timeout), "--smp", str(smp),
                "--cmdline", cmdline, *opts]
        lock = boot_lock.acquire(args, untimed)     # before boot_timeout starts
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True,
                                  pass_fds=() if lock is None else (lock,))
        boot_lock.started(lock, self.p)
        self.buf = b""
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.seen = 0               # bytes of buf already returned
        if prompt:                  # False: a run with no shell, read with wait_for()
            self.wait_prompt(boot_timeout)

    def _read(self):
        while chunk := self.p.stdout.read1(4096):
            with self.lock:
                self.buf += chunk

    def text(self):
        """Everything on the console so far, carriage returns removed."""
        with self.lock:
            return self.buf.decode("utf-8", "replace").replace("\r", "")

    def wait_prompt(self, timeout=60):
        """Wait for the next prompt after what was already consumed; return the text before it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                buf = self.buf
            i = buf.find(PROMPT, self.seen)
            if i >= 0:
                out = buf[self.seen:i]
                self.seen = i + len(PROMPT)
                return out.decode("utf-8", "replace").replace("\r", "")
            if self.p.poll() is not None:
                break
            time.sleep(0.05)
        with self.lock:
            raise NoPrompt(timeout, self.buf)

    def wait_for(self, pattern, timeout=60):
        """Wait until a line matching the regex pattern appears (in all the output
        so far); return the match.  NoPrompt if QEMU ends or time runs out first."""
        rx = re.compile(pattern, re.M)
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = rx.search(self.text())
            if m:
                return m
            if self.p.poll() is not None:
                break
            time.sleep(0.1)
        with self.lock:
            raise NoPrompt(timeout, self.buf)

    def kill(self):
        """End QEMU now (a run that would reset forever); its exit status."""
        try:
            os.killpg(self.p.pid, signal.SIGKILL)   # run-qemu.sh, timeout and QEMU
        except ProcessLookupError:
            pass
        return self._ended(self.p.wait())

    def _ended(self, rc):
        """QEMU has ended: the boot log says so (boot_times.py); rc passed on."""
        boot_lock.log("end")
        return rc

    def send(self, data: bytes):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def cmd(self, line, timeout=60):
        """Type a line and Enter; return the reply (the echo line removed)."""
        self.send(line.encode() + b"\r")
        out = self.wait_prompt(timeout)
        return out.split("\n", 1)[1] if "\n" in out else ""

    def close(self, timeout=30):
        """End the input and wait for QEMU (killed after timeout); its exit status."""
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self._ended(self.p.wait(timeout))
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self._ended(self.p.wait())
