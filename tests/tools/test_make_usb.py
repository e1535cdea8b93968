"""`make usb DEV=...` writes the image only to a whole, unmounted block device,
after showing it and reading "yes"; anything else is refused, unwritten.
No QEMU here: it runs with the host tools' tests (make test-tools)."""
import hashlib
import os
import re
import shutil
import stat
import subprocess

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def make_usb(dev, answer="", env=None):
    # TRACE_MB=1: the smallest stick image (its FAT32 partition is 36 MiB).
    p = subprocess.run(["make", "-s", "usb", f"DEV={dev}", "TRACE_MB=1"], input=answer.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                       timeout=120, env={**os.environ, **(env or {})})
    return p.returncode, p.stdout.decode("utf-8", "replace")


def digest(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_refuses_a_regular_file(tmp_path):
    f = tmp_path / "not-a-stick.img"
    f.write_bytes(b"precious" * 4096)
    before = digest(f)
    rc, out = make_usb(f, "yes\n")
    assert rc != 0, out
    assert re.search(rf"usb: {re.escape(str(f))} is not a block device .*; nothing written", out), out
    assert digest(f) == before


def test_refuses_dev_null():
    rc, out = make_usb("/dev/null", "yes\n")
    assert rc != 0 and "usb: /dev/null is not a block device" in out, out


def test_refuses_no_device():
    rc, out = make_usb("")
    assert rc != 0 and "usb: no device given: make usb DEV=/dev/sdX" in out, out


def test_refuses_a_partition(tmp_path):
    # A block node whose sysfs entry (a stand-in tree, through
    # BARETRACE_SYSFS) says "partition", as /sys does for /dev/sdb1.
    node = tmp_path / "sdz1"
    os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(8, 241))
    part = tmp_path / "sys/devices/pci0000:00/usb1/block/sdz/sdz1"
    part.mkdir(parents=True)
    (part / "partition").write_text("1\n")
    (part / "size").write_text("1000000\n")
    (tmp_path / "sys/dev/block").mkdir(parents=True)
    (tmp_path / "sys/dev/block/8:241").symlink_to(part)
    rc, out = make_usb(node, "yes\n", env={"BARETRACE_SYSFS": str(tmp_path / "sys")})
    assert rc != 0, out
    assert "is a partition (sdz1); give the whole disk, e.g. /dev/sdz; nothing written" in out, out


def test_refuses_a_mounted_disk():
    mounted = [l.split()[0] for l in open("/proc/mounts") if l.startswith("/dev/")]
    disks = [d for d in mounted if os.path.exists(d) and stat.S_ISBLK(os.stat(d).st_mode)
             and not os.path.exists(f"/sys/dev/block/{os.major(os.stat(d).st_rdev)}:"
                                    f"{os.minor(os.stat(d).st_rdev)}/partition")]
    if not disks:
        pytest.skip("no whole disk is mounted on this machine")
    rc, out = make_usb(disks[0], "yes\n")
    assert rc != 0 and re.search(r"is in use: .* is mounted on .*; nothing written", out), out


@pytest.fixture
def loop_disk(tmp_path):
    """A 64 MiB block device (a loop device over a file), like an empty stick."""
    if not shutil.which("losetup") or os.geteuid() != 0:
        pytest.skip("needs root and losetup")
    backing = tmp_path / "stick.img"
    backing.write_bytes(b"\xee" * (64 << 20))
    p = subprocess.run(["losetup", "-f", "--show", str(backing)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    if p.returncode != 0:
        pytest.skip(f"losetup failed: {p.stdout.decode()}")
    dev = p.stdout.decode().strip()
    yield dev, backing
    subprocess.run(["losetup", "-d", dev], timeout=30)


def test_asks_and_writes_only_after_yes(loop_disk):
    dev, backing = loop_disk
    before = digest(backing)
    rc, out = make_usb(dev, "no\n")
    assert rc != 0, out
    assert re.search(rf"usb: device {dev} \(loop\d+\): 67 MB, model 'unknown'", out), out
    assert "usb: answer was 'no', not 'yes'; nothing written" in out
    assert digest(backing) == before

    rc, out = make_usb(dev, "yes\n")
    assert rc == 0, out
    img = (ROOT / "build" / "baretrace-usb.img").read_bytes()
    assert backing.read_bytes()[:len(img)] == img
