#!/usr/bin/python3
"""make bench: the kernel's write-path benchmarks under QEMU, with a results file and plots.

Boots the kernel twice at its shell (-smp 2): once under -icount shift=0, where a
cycle is an instruction and the figures are exact, and once under plain TCG,
where they are the emulator's speed. In each it runs `bench all` and
`bench ring write_interval=N` for a range of N, then writes
build/bench/kernel-results.txt (machine, date, commit, every `bench:` line) and,
with gnuplot, build/bench/kernel-latency.png (the per-event latency histogram
of each variant) and build/bench/kernel-interval.png (cycles per entry against
write_interval, two panels: instructions under icount, TSC cycles under
TCG). `scripts/bench-kernel.py --plot [RESULTS]` draws the plots again from a
results file, beside it, without booting anything. Last, the boot cost of the function tracer's sites: the kernel
with sites and the FTRACE=0 kernel booted to their end (`run=` nothing, `exit`),
once under icount (exact) and BOOT_TCG_RUNS times under TCG (medians).
"""
import datetime
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "qemu"))
from qemu_shell import NoPrompt, Shell  # noqa: E402  (the QEMU tests' shell driver)

OUT = ROOT / "build" / "bench"
INTERVALS = [1, 10, 100, 1000, 10000]
BOOT_TCG_RUNS = 5
STAMP = re.compile(r"^\[\s*(\d+)\.(\d{6})\] (.*)$")


def run(mode, cmds=None, kernel=None):
    """Boot at the shell, run the benchmarks, power off; their output.
    A prompt that does not come ends make bench with the console's tail."""
    print(f"bench-kernel: booting ({mode}{', ' + kernel if kernel else ''})", flush=True)
    if cmds is None:
        cmds = ["bench all"] + [f"bench ring write_interval={n} duration_ms=50" for n in INTERVALS]
        cmds.append("ftrace bench")   # the function tracer: off, function, function_graph
    opts = ["--icount"] if mode == "icount" else []
    if kernel:
        opts += ["--kernel", kernel]
    try:
        sh = Shell(timeout=1800, boot_timeout=180, opts=opts)
        out = ""
        for line in cmds:
            print(f"bench-kernel:   {line}", flush=True)
            out += sh.cmd(line, timeout=900)
    except NoPrompt as e:
        sys.exit(f"bench-kernel: no prompt within {e.timeout} s; last output:\n"
                 + e.output[-2000:].decode("utf-8", "replace"))
    sh.send(b"poweroff\r")
    sh.close(60)
    return out


def boot_once(kernel, icount):
    """One boot to `exit` at -smp 2: (ftrace_init_us, to_run_us, host_s).
    ftrace_init_us: from the `text:` line to the `ftrace:` line (the sites
    checked and made NOPs); to_run_us: the kernel's clock at `run: done`
    (it starts at calibration's end, so this is the boot from there); host_s:
    QEMU's whole run, launch to exit."""
    args = [str(ROOT / "run-qemu.sh"), "--smp", "2", "--timeout", "300", "--kernel", kernel,
            "--cmdline", "exit"] + (["--icount"] if icount else [])
    t0 = time.monotonic()
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT)
    host_s = time.monotonic() - t0
    stamps = {}
    for l in p.stdout.decode("utf-8", "replace").replace("\r", "").splitlines():
        m = STAMP.match(l)
        if m:
            for key in ("text:", "ftrace:", "run: done"):
                if m.group(3).startswith(key):
                    stamps.setdefault(key, int(m.group(1)) * 1000000 + int(m.group(2)))
    if p.returncode or len(stamps) != 3:
        sys.exit(f"bench-kernel: boot of {kernel} failed (status {p.returncode}): "
                 f"lines seen {sorted(stamps)}")
    return stamps["ftrace:"] - stamps["text:"], stamps["run: done"], host_s


def boot_cost():
    """The sites' boot cost: lines for the results file."""
    out = []
    for name, kernel in (("sites", "build/kernel.elf"), ("nosites", "build/nosites/kernel.elf")):
        print(f"bench-kernel: boot cost ({name}): 1 icount boot, {BOOT_TCG_RUNS} TCG boots",
              flush=True)
        init, run_us, host = boot_once(kernel, True)
        out.append(f"bench boot: kernel={name} mode=icount ftrace_init_us={init} "
                   f"run_done_us={run_us} host_s={host:.2f}")
        tcg = [boot_once(kernel, False) for _ in range(BOOT_TCG_RUNS)]
        med = [statistics.median(c) for c in zip(*tcg)]
        out.append(f"bench boot: kernel={name} mode=tcg runs={BOOT_TCG_RUNS} "
                   f"ftrace_init_us={med[0]:.0f} run_done_us={med[1]:.0f} host_s={med[2]:.2f}")
    return out


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def variant(f):
    """A bench: line's variant; the kernel's writers (event=u32 ...) by their event."""
    if f.get("event", "raw") != "raw":
        return f"writer event={f['event']} ({f['payload']}-byte record)"
    return f"{f['reserve']}/{f['stamp']}/convert={f['convert']}/reader={f['reader']}"


def main():
    if subprocess.run(["make", "-s", "kernel"], cwd=ROOT).returncode:
        sys.exit("bench-kernel: the kernel does not build")
    OUT.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), platform.processor())
    results = {m: run(m) for m in ("icount", "tcg")}
    # The function tracer's reference: the same kernel built without sites (FTRACE=0).
    if subprocess.run(["make", "-s", "kernel", "BUILD=build/nosites", "FTRACE=0"], cwd=ROOT).returncode:
        sys.exit("bench-kernel: the FTRACE=0 kernel does not build")
    results["icount-nosites"] = run("icount", ["ftrace bench"], "build/nosites/kernel.elf")
    boot = boot_cost()
    lines = [f"# baretrace kernel benchmarks", f"date: {datetime.datetime.now().isoformat()}",
             f"commit: {commit}", f"machine: {cpu}, {os.cpu_count()} cores, {platform.platform()}",
             f"qemu: {subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}",
             "icount: -icount shift=0, a cycle is an instruction; tcg: plain TCG, the emulator's speed", ""]
    for m, out in results.items():
        lines.append(f"## {m}")
        lines += [f"{m} {l}" for l in out.splitlines() if l.startswith(("bench:", "bench ring:", "bench event:"))]
        lines.append("")
    lines += ["## boot (the function tracer's sites: with them and FTRACE=0)"] + boot + [""]
    (OUT / "kernel-results.txt").write_text("\n".join(lines) + "\n")
    print(f"bench-kernel: wrote {OUT / 'kernel-results.txt'}")
    print("\n".join(boot))

    # Table: one row per ring variant, icount instructions and TCG ns.
    table = {}
    for m, out in results.items():
        for l in out.splitlines():
            f = fields(l)
            # bench all's own line: the first at the default interval.
            if l.startswith("bench: test=ring") and f.get("write_interval") == "1000":
                table.setdefault(variant(f), {}).setdefault(m, f)
    # icount: net of the loop with recording off, and the off check itself
    # (their sum is the whole write path in instructions).
    print(f"{'variant (ring; raw: 8-byte payload)':44} {'icount instr/event':>18} "
          f"{'icount off check':>16} {'tcg ns/event':>14}")
    for v, d in table.items():
        print(f"{v:44} {d.get('icount', {}).get('cycles_per_event', '-'):>18} "
              f"{d.get('icount', {}).get('off_cycles', '-'):>16} "
              f"{d.get('tcg', {}).get('ns_per_event', '-'):>14}")

    plot(results)


def parse_results(path):
    """kernel-results.txt back into {mode: its bench lines}: each is written '<mode> <line>'."""
    results = {}
    for l in Path(path).read_text().splitlines():
        mode, _, rest = l.partition(" ")
        if rest.startswith(("bench:", "bench ring:", "bench event:")):
            results[mode] = results.get(mode, "") + rest + "\n"
    return results


def short_label(v):
    """A variant as a legend says it: 'xadd rdtsc', 'cmpxchg lfence conv', 'reader=page', 'u64'."""
    if v.startswith("writer event="):
        return v.split("=", 1)[1].split(" ")[0]
    reserve, stamp, convert, reader = v.split("/")
    words = [reserve, stamp] + (["conv"] if convert == "convert=yes" else [])
    return " ".join(words + ([reader] if reader != "reader=none" else []))


def latency_hist(tcg_out):
    """bench event's histograms under TCG: {short label: {bucket's lower bound: count}}."""
    hist, cur = {}, None
    for l in tcg_out.splitlines():
        if l.startswith("bench event: cycles"):
            cur = {}
        elif l.startswith("bench event: hist") and cur is not None:
            f = fields(l)
            cur[int(f["cycles"].strip("[").split(",")[0])] = int(f["count"])
        elif l.startswith("bench: test=event") and cur is not None:
            hist[short_label(variant(fields(l)))] = cur
            cur = None
    return hist


def plot_script(results, out):
    """Write the plots' data into out; the gnuplot script that draws them.
    Latency: a power-of-two histogram as bars, one cluster per bucket and
    every bucket present (an empty one is no bar, never a line across it).
    Interval: instructions (icount) and TSC cycles (TCG) are different units,
    so two panels side by side, each with its own axis."""
    hist = latency_hist(results.get("tcg", ""))
    buckets = sorted({b for h in hist.values() for b in h})
    if buckets:     # every power of two from the first to the last: gaps stay gaps
        first, last = buckets[0], buckets[-1]
        buckets = [first << k for k in range((last // first).bit_length())]
    dat = out / "kernel-latency.dat"
    with open(dat, "w") as fp:
        fp.write("bucket " + " ".join(f'"{v}"' for v in hist) + "\n")
        for b in buckets:
            fp.write(f"{b} " + " ".join(str(h.get(b, 0)) for h in hist.values()) + "\n")
    interval = out / "kernel-interval.dat"
    with open(interval, "w") as fp:
        for m in ("icount", "tcg"):
            fp.write(f'"{m}"\n')
            sweep = {}      # the write_interval sweep runs last: its lines win
            for l in results.get(m, "").splitlines():
                if l.startswith("bench: test=ring") and "reader=none" in l and "reserve=xadd" in l \
                        and "stamp=rdtsc" in l and "convert=no" in l and "event=raw" in l:
                    f = fields(l)
                    sweep[int(f["write_interval"])] = f["cycles_per_event"]
            fp.write("".join(f"{k} {v}\n" for k, v in sorted(sweep.items())) + "\n\n")
    return f"""
set terminal pngcairo size 1000,650 noenhanced font ',11'
set output '{out / "kernel-latency.png"}'
set title 'bench event under plain TCG: TSC cycles one stamped write takes'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -45
set xlabel 'TSC cycles per write (power-of-two bucket, from)'
set ylabel 'writes (of 10,000; log scale)'
set logscale y 10
set yrange [0.8:*]
set grid ytics
set key inside top right vertical box opaque
plot for [i=2:{len(hist) + 1}] '{dat}' using i:xtic(1) title columnheader(i)
reset
set terminal pngcairo size 1000,500 noenhanced font ',11'
set output '{out / "kernel-interval.png"}'
set multiplot layout 1,2 title 'bench ring: net cost per entry against how often the loop reads the clock'
set logscale x 10
set yrange [0:*]
set grid
set xlabel 'write_interval (writes per clock read)'
set title 'icount: exact'
set ylabel 'instructions per entry'
plot '{interval}' index 0 using 1:2 with linespoints lw 2 pt 7 notitle
set title 'plain TCG: the emulator'
set ylabel 'TSC cycles per entry'
plot '{interval}' index 1 using 1:2 with linespoints lw 2 pt 7 notitle
unset multiplot
"""


def plot(results, out=OUT):
    """Draw build/bench's two plots from the runs' output (gnuplot)."""
    if not shutil.which("gnuplot"):
        print("bench-kernel: gnuplot not found: no plots (apt-get install gnuplot-nox)")
        return
    r = subprocess.run(["gnuplot"], input=plot_script(results, out), text=True,
                       capture_output=True)
    if r.returncode:
        print("bench-kernel: gnuplot failed:", r.stderr)
    else:
        print(f"bench-kernel: wrote {out / 'kernel-latency.png'} and {out / 'kernel-interval.png'}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--plot"]:     # the plots again, beside a results file, no QEMU
        path = Path(sys.argv[2] if len(sys.argv) > 2 else OUT / "kernel-results.txt")
        plot(parse_results(path), path.parent)
    else:
        main()
