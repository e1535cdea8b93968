"""scripts/bench-kernel.py's plots, from a small results file (no QEMU):
the latency histogram as bars with every power-of-two bucket present and
short legends, the write_interval chart as two panels (instructions under
icount, TSC cycles under TCG, never one axis for both), and `--plot`
drawing them again from a results file. gnuplot draws them when installed.
"""
import importlib.util
import os
import shutil
import subprocess

from test_decode import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "bench-kernel.py")
RING = ("bench: test=ring reserve=xadd stamp=rdtsc convert=no payload=8 reader=none events=100 "
        "cycles_per_event={} ns_per_event=1 loop_cycles=1 off_cycles=2 write_interval={} event=raw")
EVENT = ("bench: test=event reserve={} stamp={} convert={} payload=8 reader={} events=10000 "
         "cycles_per_event=50 ns_per_event=25 loop_cycles=1 event=raw")
RESULTS = "\n".join([
    "# baretrace kernel benchmarks", "commit: x",
    "icount " + RING.format("26.000", 1), "icount " + RING.format("20.500", 1000),
    "tcg " + RING.format("90.100", 1), "tcg " + RING.format("60.200", 1000),
    "tcg bench event: cycles first=1 last=2 min=3 max=4 avg=5 std=6",
    "tcg bench event: hist cycles=[32,64) count=9000",
    "tcg bench event: hist cycles=[1024,2048) count=1000",
    "tcg " + EVENT.format("xadd", "rdtsc", "no", "none"),
    "tcg bench event: cycles first=1 last=2 min=3 max=4 avg=5 std=6",
    "tcg bench event: hist cycles=[64,128) count=10000",
    "tcg " + EVENT.format("cmpxchg", "lfence", "yes", "page"), ""])


def load():
    spec = importlib.util.spec_from_file_location("bench_kernel", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_plots_are_bars_and_two_panels(tmp_path):
    """Kills: linespoints across empty buckets, a bucket left out (32 to 1024
    must list 64..512 with zeros), the variants' long names as legends,
    instructions and cycles on one axis."""
    bk = load()
    (tmp_path / "results.txt").write_text(RESULTS)
    res = bk.parse_results(tmp_path / "results.txt")
    assert set(res) == {"icount", "tcg"}
    script = bk.plot_script(res, tmp_path)
    lat, interval = script.split("reset\n")
    assert "set style data histograms" in lat and "linespoints" not in lat
    rows = (tmp_path / "kernel-latency.dat").read_text().splitlines()
    assert rows[0] == 'bucket "xadd rdtsc" "cmpxchg lfence conv reader=page"'
    assert [r.split() for r in rows[1:]] == [
        ["32", "9000", "0"], ["64", "0", "10000"], ["128", "0", "0"], ["256", "0", "0"],
        ["512", "0", "0"], ["1024", "1000", "0"]]
    assert "set multiplot layout 1,2" in interval and interval.count("\nplot ") == 2
    assert "set yrange [0:*]" in interval      # from zero: no zoom into a 0.002 wobble
    assert "'instructions per entry'" in interval and "'TSC cycles per entry'" in interval
    blocks = (tmp_path / "kernel-interval.dat").read_text().split("\n\n\n")
    assert blocks[0].split("\n")[1:] == ["1 26.000", "1000 20.500"], blocks
    assert blocks[1].split("\n")[1:] == ["1 90.100", "1000 60.200"], blocks


def test_plot_again_from_a_results_file(tmp_path):
    if not shutil.which("gnuplot"):
        return      # the script says so and draws nothing; make bench-kernel installs it
    (tmp_path / "results.txt").write_text(RESULTS)
    bk = load()
    bk.plot(bk.parse_results(tmp_path / "results.txt"), tmp_path)
    for name in ("kernel-latency.png", "kernel-interval.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    r = subprocess.run(["/usr/bin/python3", SCRIPT, "--plot", str(tmp_path / "results.txt")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "bench-kernel: wrote " in r.stdout, r.stdout + r.stderr
