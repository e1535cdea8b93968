"""The USB stick's image (`make usb-image`) and the kernel's reader of it
(drivers/block/, run as build/tools/baretrace-usb-asan under ASan/UBSan).

What the reader says is compared with what independent tools say of the
same bytes: sfdisk (the partition table), mkfs.fat/mtools/fsck.fat (the
file system), a FAT reader written here, zlib's CRC-32.  Images are made
with the real tools, then damaged; each damage is refused with its own
line.  No QEMU here (make test-tools)."""
import hashlib
import json
import mmap
import os
import re
import struct
import subprocess
import zlib

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BUILD", ROOT / "build"))
TOOL = BUILD / "tools" / "baretrace-usb-asan"
IMAGE = BUILD / "baretrace-usb.img"
ISO = BUILD / "baretrace.iso"
BS = 512
FIND_RE = re.compile(r"usb: trace file: partition (\d+) \((gpt|mbr)\) blocks (\d+)\+(\d+), "
                     r"file at (\d+), data at (\d+), (\d+) blocks of (\d+), image (\S*)")


def run(*cmd, ok=True, timeout=120, **kw):
    p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, **kw)
    out = p.stdout.decode("utf-8", "replace")
    if ok:
        assert p.returncode == 0, f"{cmd}: {out}"
    return p.returncode, out


def view(path):
    """The file's bytes, mapped (sparse images: unread zeros cost nothing)."""
    with open(path, "rb") as f:
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def digest(path):
    return hashlib.sha256(view(path)).hexdigest()


def find(img, *writes):
    args = [TOOL, "find", img]
    for lba, n in writes:
        args += ["--write", lba, n]
    return run(*args, ok=False)


@pytest.fixture(scope="module")
def image():
    """make usb-image with the default TRACE_MB (64)."""
    # Builds the kernel and the GRUB image too if they are out of date.
    run("make", "-s", "usb-image", "TRACE_MB=64", f"BUILD={BUILD}", cwd=ROOT, timeout=900)
    run("make", "-s", str(TOOL), f"BUILD={BUILD}", cwd=ROOT)
    return IMAGE


def sfdisk_json(path):
    return json.loads(run("sfdisk", "-J", path)[1])["partitiontable"]


# ---- an independent FAT32 reader (fatgen103), for the comparison ----------

def fat_trace_bin(img_bytes, part_start):
    """(first block of TRACE.BIN, its size, its cluster list), read here."""
    b = part_start * BS
    bps, spc, rsvd, nfats = struct.unpack_from("<HBHB", img_bytes, b + 11)
    fatsz, = struct.unpack_from("<I", img_bytes, b + 36)
    root, = struct.unpack_from("<I", img_bytes, b + 44)
    fat = b + rsvd * bps
    data = b + (rsvd + nfats * fatsz) * bps

    def chain(c):
        out = []
        while c < 0x0FFFFFF8:
            out.append(c)
            assert len(out) < 1 << 22
            c = struct.unpack_from("<I", img_bytes, fat + 4 * c)[0] & 0x0FFFFFFF
        return out

    hit = None
    for c in chain(root):
        base = data + (c - 2) * spc * bps
        for off in range(0, spc * bps, 32):
            e = img_bytes[base + off:base + off + 32]
            if e[0] == 0:
                break
            if e[:11] == b"TRACE   BIN" and not e[11] & 0x18:
                hi, lo, size = struct.unpack_from("<H4xHI", e, 20)
                hit = ((hi << 16) | lo, size)
    first, size = hit
    clusters = chain(first)
    return (data + (first - 2) * spc * bps) // BS, size, clusters


# ---- the image ---------------------------------------------------------------

def test_layout_keeps_the_boot_image(image):
    """The GRUB image's four partitions, its boot code and its ISO blocks
    are as make iso made them; a fifth GPT partition is BARETRACE."""
    iso, img = ISO.read_bytes(), image.read_bytes()
    t_iso, t_img = sfdisk_json(ISO), sfdisk_json(image)
    assert t_img["label"] == "gpt"
    strip = lambda p: {k: v for k, v in p.items() if k != "node"}
    assert [strip(p) for p in t_img["partitions"][:4]] == [strip(p) for p in t_iso["partitions"]]
    assert len(t_img["partitions"]) == 5
    p5 = t_img["partitions"][4]
    assert p5["name"] == "BARETRACE" and p5["start"] % 2048 == 0
    assert p5["start"] * BS >= len(iso)
    assert img[:446] == iso[:446]                       # MBR boot code (BIOS)
    lo, hi = t_iso["firstlba"] * BS, (t_iso["lastlba"] + 1) * BS
    assert img[lo:hi] == iso[lo:hi]                     # ISO 9660, EFI image, GRUB


def test_reader_agrees_with_sfdisk_and_a_fat_reader(image):
    rc, out = find(image)
    assert rc == 0, out
    m = FIND_RE.fullmatch(out.strip())
    assert m, out
    index, label, start, blocks, file_lba, data_lba, ndata, bs, version = m.groups()
    p5 = sfdisk_json(image)["partitions"][4]
    assert (int(index), label, int(start), int(blocks)) == (5, "gpt", p5["start"], p5["size"])
    img = image.read_bytes()
    first, size, clusters = fat_trace_bin(img, p5["start"])
    assert clusters == list(range(clusters[0], clusters[0] + len(clusters)))
    assert (int(file_lba), size) == (first, 64 << 20)
    assert int(data_lba) == first + 4096 // BS
    assert int(ndata) == (size - 4096) // BS and int(bs) == BS
    described = run("git", "describe", "--always", "--dirty", cwd=ROOT)[1].strip()
    assert version == described


def test_header_read_with_zlib(image):
    """The header's fields and CRC, read with struct and zlib, and the build
    id against the kernel's GNU note found here by its own bytes."""
    img = image.read_bytes()
    m = FIND_RE.fullmatch(find(image)[1].strip())
    h = img[int(m.group(5)) * BS:][:4096]
    magic, ver, off, size = struct.unpack_from("<8sIIQ", h)
    assert (magic, ver, off, size) == (b"BTRACEF1", 1, 4096, 64 << 20)
    assert struct.unpack_from("<I", h, 508)[0] == zlib.crc32(h[:508])
    assert h[512:] == bytes(4096 - 512)
    kernel = (BUILD / "kernel.elf").read_bytes()
    note = kernel.index(struct.pack("<III4s", 4, 20, 3, b"GNU\0"))
    assert h[24:44] == kernel[note + 16:note + 36]


def test_mtools_and_fsck_see_the_same_file(image, tmp_path):
    """Fill the data area the reader found with a pattern of block numbers:
    mcopy must read TRACE.BIN back as the header followed by exactly that
    pattern (so the extent is the file, no more, no less), and fsck.fat -n
    must find the file system clean after it (writes there are saves)."""
    m = FIND_RE.fullmatch(find(image)[1].strip())
    start, blocks = int(m.group(3)), int(m.group(4))
    data, n = int(m.group(6)), int(m.group(7))
    img = bytearray(image.read_bytes())
    pattern = b"".join(struct.pack("<Q", i) * (BS // 8) for i in range(n))
    header = bytes(img[int(m.group(5)) * BS:data * BS])
    img[data * BS:(data + n) * BS] = pattern
    part = tmp_path / "part.img"
    part.write_bytes(img[start * BS:(start + blocks) * BS])
    rc, out = run("fsck.fat", "-n", part, ok=False)
    assert rc == 0 and "differ" not in out and "Free cluster summary" not in out, out
    _, out = run("mdir", "-i", part, "::", env={**os.environ, "MTOOLS_SKIP_CHECK": "1"})
    assert re.search(r"TRACE\s+BIN\s+67108864", out), out
    assert re.search(r"Volume in drive : is BARETRACE", out), out
    run("mcopy", "-i", part, "::TRACE.BIN", tmp_path / "out.bin",
        env={**os.environ, "MTOOLS_SKIP_CHECK": "1"})
    assert (tmp_path / "out.bin").read_bytes() == header + pattern


def test_write_decisions_on_the_image(image):
    m = FIND_RE.fullmatch(find(image)[1].strip())
    start, file_lba, data, n = (int(m.group(i)) for i in (3, 5, 6, 7))
    cases = {(data, 1): "allowed", (data, n): "allowed", (data + n - 1, 1): "allowed",
             (file_lba, 1): "refused", (data - 1, 1): "refused", (data + n, 1): "refused",
             (data, n + 1): "refused", (0, 1): "refused", (start, 1): "refused",
             (data, 0): "refused", (data + 1, 2**64 - 1): "refused"}
    before = digest(image)
    rc, out = find(image, *cases)
    assert rc == 0, out
    for (lba, cnt), want in cases.items():
        assert f"write {lba} {cnt}: {want}\n" in out, (lba, cnt, out)
    assert digest(image) == before


def test_trace_mb_sets_the_size(tmp_path):
    out = tmp_path / "small.img"
    run(ROOT / "scripts/mkusb-image.sh", ISO, BUILD / "kernel.elf", BUILD / "tools/baretrace-usb",
        out, "3", "v-test")
    m = FIND_RE.fullmatch(find(out)[1].strip())
    assert m and int(m.group(7)) == (3 << 20) // BS - 8 and m.group(9) == "v-test"
    for bad, line in (("0", "TRACE_MB=0 is outside 1..4095"), ("x", "TRACE_MB='x' is not a whole")):
        rc, o = run(ROOT / "scripts/mkusb-image.sh", ISO, BUILD / "kernel.elf",
                    BUILD / "tools/baretrace-usb", tmp_path / "bad.img", bad, "v", ok=False)
        assert rc != 0 and line in o and not (tmp_path / "bad.img").exists(), o


def test_cmdline_file_leaves_trace_bin_alone(tmp_path):
    """The command line on the stick (CMDLINE.CFG, docs/usb.md): made by
    mkusb-image.sh's CMDLINE, replaced by scripts/usb-cmdline.sh (what
    run-qemu.sh --usb-image --cmdline runs). TRACE.BIN keeps its extent and
    every byte, the reader still finds it, fsck.fat -n is clean, mtools
    reads the line back; a line GRUB cannot carry and an image without a
    BARETRACE partition are refused with the image unchanged."""
    img = tmp_path / "stick.img"
    run(ROOT / "scripts/mkusb-image.sh", ISO, BUILD / "kernel.elf", BUILD / "tools/baretrace-usb",
        img, "3", "v-test", "run=demo exit")
    found = find(img)[1]
    m = FIND_RE.fullmatch(found.strip())
    start, blocks, file_lba, data, n = (int(m.group(i)) for i in (3, 4, 5, 6, 7))
    trace = bytes(view(img)[file_lba * BS:(data + n) * BS])
    env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}
    at = f"{img}@@{start * BS}"
    for line in ("run=demo exit", "run=record trace.events=-*,bench:bench record.count=9 exit"):
        if line != "run=demo exit":
            run(ROOT / "scripts/usb-cmdline.sh", img, line)
        assert find(img)[1] == found
        assert bytes(view(img)[file_lba * BS:(data + n) * BS]) == trace
        _, cfg = run("mtype", "-i", at, "::CMDLINE.CFG", env=env)
        assert cfg.strip().split("\n")[-1] == f"set cmdline='{line}'", cfg
        _, listing = run("mdir", "-b", "-i", at, "::", env=env)
        assert sorted(listing.split()) == ["::/CMDLINE.CFG", "::/TRACE.BIN"], listing
        part = tmp_path / "part.img"
        part.write_bytes(view(img)[start * BS:(start + blocks) * BS])
        rc, out = run("fsck.fat", "-n", part, ok=False)
        assert rc == 0 and "differ" not in out and "Free cluster summary" not in out, out
    before = digest(img)
    for bad in ("run=demo a'b", 'a="b c"', "a\\b", "a\nb"):
        rc, out = run(ROOT / "scripts/usb-cmdline.sh", img, bad, ok=False)
        assert rc == 2 and "may not contain" in out, out
    assert digest(img) == before
    rc, out = run(ROOT / "scripts/usb-cmdline.sh", ISO, "exit", ok=False)
    assert rc == 2 and "no FAT32 partition labelled BARETRACE" in out, out


# ---- sticks made with the real tools, then damaged ---------------------------

def make_stick(tmp_path, label="BARETRACE", table="gpt", files=(), trace=1 << 20,
               header_size=None):
    """A 40 MiB disk, one partition at 1 MiB with FAT32 (mkfs.fat), the
    files (name, bytes) copied in order with mcopy, then TRACE.BIN (unless
    trace is None) with a header saying header_size bytes."""
    disk, part = tmp_path / "disk.img", tmp_path / "part.img"
    part.unlink(missing_ok=True)
    with open(disk, "wb") as f:
        f.truncate(40 << 20)
    run("sfdisk", "-q", disk, input=f"label: {table}\nstart=2048, type="
        f"{'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7' if table == 'gpt' else 'c'}\n".encode())
    blocks = sfdisk_json(disk)["partitions"][0]["size"]
    run("mkfs.fat", "-F", "32", "-n", label, "-C", part, str(blocks // 2))
    env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}
    for name, data in files:
        (tmp_path / name).write_bytes(data)
        run("mcopy", "-i", part, tmp_path / name, f"::{name}", env=env)
    if trace is not None:
        tb = tmp_path / "TRACE.BIN"
        run(BUILD / "tools/baretrace-usb", "header", tb, str(header_size or trace), "ab" * 20, "t")
        with open(tb, "r+b") as f:
            f.truncate(trace)
        run("mcopy", "-i", part, tb, "::TRACE.BIN", env=env)
    put_part(disk, part)
    return disk


def put_part(disk, part):
    run("dd", f"if={part}", f"of={disk}", "bs=1M", f"seek={2048 * BS}", "oflag=seek_bytes",
        "conv=notrunc,sparse", "status=none")


def refused(disk, reason):
    before = digest(disk)
    rc, out = find(disk, (0, 1))
    assert rc == 1 and out == f"usb: refused: {reason}\nwrite 0 1: refused\n", out
    assert digest(disk) == before


def patch(disk, off, data):
    with open(disk, "r+b") as f:
        f.seek(off)
        f.write(data)


def test_made_sticks_gpt_and_mbr(tmp_path):
    for table, label in (("gpt", "gpt"), ("dos", "mbr")):
        disk = make_stick(tmp_path, table=table)
        rc, out = find(disk)
        m = FIND_RE.fullmatch(out.strip())
        assert rc == 0 and m and m.group(1) == "1" and m.group(2) == label, out
        first, size, _ = fat_trace_bin(view(disk), 2048)
        assert (int(m.group(5)), size) == (first, 1 << 20)


def test_fragmented_trace_bin_is_refused(tmp_path):
    """A.TXT and B.TXT copied, A deleted, the FSInfo sector's next-free
    hint cleared (0xFFFFFFFF: unknown), then TRACE.BIN: mtools puts its
    first cluster in A's hole, the rest after B.  A legal file system
    (fsck.fat -n clean), but not one to write into."""
    disk = make_stick(tmp_path, files=(("A.TXT", b"a" * 512), ("B.TXT", b"b" * 512)), trace=None)
    part = tmp_path / "part.img"
    env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}
    run("mdel", "-i", part, "::A.TXT", env=env)
    fsinfo = bytearray(part.read_bytes()[BS:2 * BS])
    assert fsinfo[:4] == b"RRaA"
    fsinfo[492:496] = b"\xff" * 4
    with open(part, "r+b") as f:
        f.seek(BS)
        f.write(fsinfo)
    tb = tmp_path / "TRACE.BIN"
    run(BUILD / "tools/baretrace-usb", "header", tb, str(1 << 20), "ab" * 20, "t")
    with open(tb, "r+b") as f:
        f.truncate(1 << 20)
    run("mcopy", "-i", part, tb, "::TRACE.BIN", env=env)
    rc, out = run("fsck.fat", "-n", part, ok=False)
    assert rc == 0, out
    put_part(disk, part)
    _, _, clusters = fat_trace_bin(view(disk), 2048)
    assert clusters[1] != clusters[0] + 1          # fragmented, by the reader here
    refused(disk, "TRACE.BIN is fragmented (its clusters are not consecutive)")


def test_label_without_file(tmp_path):
    refused(make_stick(tmp_path, trace=None), "no TRACE.BIN in the BARETRACE partition")


def test_other_label(tmp_path):
    refused(make_stick(tmp_path, label="MYSTICK"), "no FAT32 partition labelled BARETRACE")


def test_foreign_trace_bin(tmp_path):
    """A TRACE.BIN that is some other program's file: never written."""
    disk = make_stick(tmp_path)
    first, _, _ = fat_trace_bin(view(disk), 2048)
    patch(disk, first * BS, os.urandom(4096))
    refused(disk, "TRACE.BIN has no baretrace header (foreign file)")


def test_file_smaller_than_its_header_says(tmp_path):
    refused(make_stick(tmp_path, header_size=2 << 20),
            "TRACE.BIN's size differs from the size its header says")


def test_header_crc(tmp_path):
    disk = make_stick(tmp_path)
    first, _, _ = fat_trace_bin(view(disk), 2048)
    patch(disk, first * BS + 60, b"X")
    refused(disk, "TRACE.BIN's header CRC is wrong")


def fat_off(disk, cluster):
    img = view(disk)
    b = 2048 * BS
    rsvd, = struct.unpack_from("<H", img, b + 14)
    return b + rsvd * BS + 4 * cluster


def test_root_chain_loops(tmp_path):
    """The root directory full (no end entry in its cluster), its cluster
    pointing at itself."""
    disk = make_stick(tmp_path, files=[(f"F{i}.TXT", b"x") for i in range(16)])
    patch(disk, fat_off(disk, 2), struct.pack("<I", 2))
    refused(disk, "the root directory's cluster chain loops")


def test_file_chain_leaves_the_partition(tmp_path):
    disk = make_stick(tmp_path)
    _, _, clusters = fat_trace_bin(view(disk), 2048)
    patch(disk, fat_off(disk, clusters[3]), struct.pack("<I", 0x0FFFFFF0))
    refused(disk, "TRACE.BIN's cluster chain leaves the file system or hits a free or bad cluster")


def test_gpt_crc(tmp_path):
    disk = make_stick(tmp_path)
    patch(disk, BS + 40, b"\x07")                  # FirstUsableLBA, CRC not fixed
    refused(disk, "the GPT header's CRC is wrong")


def test_no_partition_table(tmp_path):
    disk = tmp_path / "zero.img"
    with open(disk, "wb") as f:
        f.truncate(1 << 20)
    refused(disk, "no partition table (no 0x55AA signature in block 0)")


def test_fat16_labelled_baretrace(tmp_path):
    disk, part = tmp_path / "disk.img", tmp_path / "part.img"
    with open(disk, "wb") as f:
        f.truncate(40 << 20)
    run("sfdisk", "-q", disk, input=b"label: dos\nstart=2048, type=e\n")
    run("mkfs.fat", "-F", "16", "-n", "BARETRACE", "-C", part, str(38 << 10))
    put_part(disk, part)
    refused(disk, "the BARETRACE partition is FAT12/16, not FAT32")
