"""Resets that the next boot sees: run-qemu.sh --reboot (no -no-reboot), the
shell's reboot, the monitor's system_reset over --monitor, and RAM backed by
a host file (--mem-file) that outlives the run.

Each test counts the kernel's banner: one per boot, so two banners in one
QEMU run mean the guest reset and booted the same image again.
"""
import socket
import time

import pytest

BANNER = "trace recording laboratory, x86-64"


def monitor_cmd(path, line, timeout=10):
    """One HMP command over the --monitor Unix socket."""
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
    with s:
        s.settimeout(timeout)
        s.recv(4096)                        # the monitor's greeting and prompt
        s.sendall(line.encode() + b"\n")
        time.sleep(0.5)


@pytest.mark.parametrize("uefi", [False, True])
def test_shell_reboot_boots_again_with_reboot(shell, uefi):
    opts = ["--reboot"] + (["--uefi"] if uefi else [])
    s = shell("run=shell", smp=2, timeout=180, boot_timeout=120, opts=opts)
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
    s = shell("run=shell", smp=2, timeout=120, opts=["--reboot", "--monitor", str(sock)])
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
