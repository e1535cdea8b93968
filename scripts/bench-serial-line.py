#!/usr/bin/python3
"""trace.record=serial on a serial line of a given baud rate, measured under QEMU.

QEMU's 16550 sends a byte as soon as its chardev takes it: it models no baud
rate. But when the chardev cannot take a byte (its file descriptor would
block), the UART keeps the byte and its transmit holding register stays full
(LSR.THRE clear) until the descriptor is writable again, and the kernel's
polled driver waits for THRE before each byte. So a line of b baud is made
here: the console chardev is QEMU's stdout, a pipe shrunk to one page (4096
bytes, the least Linux allows), and this script drains it at b / 10 bytes a
second (8N1: a start and a stop bit a byte), at most BURST bytes ahead after
an idle moment, as a line's time cannot be saved up. Everything read is kept
in a capture file, which the decoder then reads.

  scripts/bench-serial-line.py --check     # is the guest paced? (a stream's bytes/ms)
  scripts/bench-serial-line.py             # run=record_bench through the line

--check streams one run=record with and without the line and prints the
kernel's own rate (its `record: saved ... bytes= ms=` line) and the
reader's. The benchmark runs run=record_bench (docs/benchmarks.md): trials of
record.ms at rates doubled from 10,000 events/s, then halved five times
between the last clean and the first lossy one; it prints the kernel's trial
lines and one result line. Figures, not assertions: the rate is the line's.

The host wakes the writer a unit of buffer at a time (a socket's ~200
bytes, 18 ms at 115,200; a pipe's page, 355 ms); the kernel's UART driver
waits up to 2^31 TSC cycles for THRE: the socket paces it (measured; the
pipe's 355 ms is inside that bound, not measured here; docs/benchmarks.md
has the measurements).
"""
import argparse
import fcntl
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
BURST = 64      # bytes a line may send at once after an idle moment (5.6 ms at 115,200)


def run_paced(cmdline, smp, baud, cap, timeout, how):
    """Boot with the console on a pipe or a Unix socket drained at baud / 10 bytes a
    second (0: as fast as QEMU writes). Returns (run-qemu.sh's status, the bytes)."""
    args = [str(ROOT / "run-qemu.sh"), "--timeout", str(timeout), "--smp", str(smp),
            "--machine", "q35", "--cmdline", cmdline]
    if how == "pipe":
        r, w = os.pipe()
        if baud:
            fcntl.fcntl(r, F_SETPIPE_SZ, 4096)
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=w,
                             stderr=subprocess.PIPE, cwd=ROOT)
        os.close(w)
    else:       # COM1 on a socket QEMU connects to; the console chardev moves to COM2
        path = str(cap) + ".sock"
        if os.path.exists(path):
            os.unlink(path)
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(path)
        ls.listen(1)
        args += ["--serial-port", "com2", "--", "-chardev",
                 f"socket,id=line,path={path},server=off", "-device",
                 "isa-serial,chardev=line,iobase=0x3f8,irq=4,index=0"]
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, cwd=ROOT)
        conn, _ = ls.accept()
        ls.close()
        os.unlink(path)
        r = os.dup(conn.fileno())
        conn.close()
    rate = baud / 10
    got, credit, t = [], 0.0, time.monotonic()
    while True:
        if baud:
            time.sleep(0.0005)
            now = time.monotonic()
            credit = min(credit + (now - t) * rate, max(BURST, rate * 0.005))
            t = now
            n = int(credit)
            if not n:
                continue
        else:
            n = 65536
        data = os.read(r, n)
        if not data:
            break
        got.append(data)
        credit -= len(data)
    os.close(r)
    err = p.stderr.read().decode(errors="replace")
    rc = p.wait()
    data = b"".join(got)
    cap.write_bytes(data)
    if err.strip():
        print(err.strip(), file=sys.stderr)
    return rc, data


def lines(data):
    return [re.sub(r"^\[[ .\d]+\] ", "", l) for l in
            data.decode("ascii", "replace").replace("\r", "").split("\n")]


def check(args):
    """One stream, unpaced and paced: the kernel's bytes/ms tell whether the line paces it."""
    cmd = ("run=record trace.record=serial trace.pages=64 trace.events=-*,bench:bench "
           f"record.count={args.count} record.rate=0 exit")
    for baud in (0, args.baud):
        rc, data = run_paced(cmd, 2, baud, Path(args.out), args.timeout, args.via)
        saved = [l for l in lines(data) if l.startswith("record: saved dump_id=")]
        if rc != 0 or not saved:
            print(f"serial-line: check baud={baud or 'unpaced'} via={args.via} status={rc}: "
                  f"no 'record: saved' line; the capture ends after {len(data)} bytes "
                  "(the kernel's UART gave up waiting for THRE: see docs/benchmarks.md)")
            continue
        f = dict(re.findall(r"(\w+)=(\d+)", saved[0]))
        print(f"serial-line: check baud={baud or 'unpaced'} via={args.via} events={f['events']} "
              f"lost={f['lost']} bytes={f['bytes']} ms={f['ms']} "
              f"kernel_bytes_per_s={int(f['bytes']) * 1000 // max(int(f['ms']), 1)} "
              f"capture_bytes={len(data)}")


def bench(args):
    cmd = (f"run=record_bench trace.record=serial trace.pages={args.pages} "
           f"record.ms={args.ms} trace.events=-*,bench:bench exit")
    t0 = time.monotonic()
    rc, data = run_paced(cmd, 2, args.baud, Path(args.out), args.timeout, args.via)
    for l in lines(data):
        if l.startswith("bench: record") or l.startswith("record: ") and "saved" not in l:
            print(l)
    res = [l for l in lines(data) if l.startswith("bench: record sustained_events_per_s=")]
    print(f"serial-line: baud={args.baud} via={args.via} status={rc} capture_bytes={len(data)} "
          f"wall_s={time.monotonic() - t0:.0f} capture={args.out} "
          f"result: {res[0] if res else 'none (see the lines above)'}")
    print(f"serial-line: command: {' '.join(sys.argv)} (kernel: {cmd})")
    return 0 if res else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baud", type=int, default=115200)
    ap.add_argument("--check", action="store_true", help="is the guest paced? (see above)")
    ap.add_argument("--count", type=int, default=20000, help="--check: events a CPU")
    ap.add_argument("--pages", type=int, default=16, help="trace.pages= (ring per CPU)")
    ap.add_argument("--ms", type=int, default=20000, help="record.ms= (one trial)")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--via", choices=("socket", "pipe"), default="socket",
                    help="the line: a Unix socket on COM1 (default) or QEMU's stdout pipe")
    ap.add_argument("--out", default=str(ROOT / "build" / "serial-line.bin"))
    args = ap.parse_args()
    if args.check:
        check(args)
        return 0
    return bench(args)


if __name__ == "__main__":
    sys.exit(main())
