#!/usr/bin/python3
"""The clocks of one boot as a picture: the TSC calibration against each
reference with its bound, and each CPU's TSC skew with its uncertainty.

    scripts/clock-plot.py LOG [PNG] [--truth-hz HZ]
    scripts/clock-plot.py --boot [PNG] [--truth-hz HZ] [-- run-qemu.sh options]

LOG is what the serial line carried: a console log, or a serial capture
(run-qemu.sh --serial FILE) with binary dump frames among the lines. The
figures are the kernel's own console lines (docs/output.md), of the last
boot in LOG:

  tsc: ref=<r> freq_hz=<f> err_ppm=<e> tol_ppm=<t> rounds=<n>[ (not used)]
  tsc: freq_hz=<f> ref=<r> err_ppm=<e> tol_ppm=<t> ...    the figure used
  smp: cpu=<n> apic_id=<a> tsc_skew_cycles=<s> uncertainty_cycles=<u> warps=<w>
  smp: cpu=<n> WARNING: ...                               that CPU untrusted
  clock: watchdog: cpu=<n> ... tsc_skew_cycles=<s> uncertainty_cycles=<u> ...
  boot: cmdline="..."                                     inject.tsc_skew*=

The dump's frames do not carry the per-reference figures, so the console is
the one source of both panels. The left panel puts each reference's figure
in ppm from the one used (the consensus of docs/clock.md), with its err_ppm
as a thick bar and err + tol as a thin one; the band is the stated err_ppm
of the figure used (which covers every reference when the vote was
disputed). The right panel puts each CPU's skew against CPU 0 in cycles
(and ns on the right axis) with its uncertainty, beside what was injected
(inject.tsc_skew=, the expected skew) and what the clock watchdog measured
again later. --truth-hz draws the true TSC rate (1 GHz under icount).

--boot boots once (plain TCG, 4 CPUs, skews injected: CPU 2 3000 cycles
ahead, the other APs 1500 behind; a 1 s demo with the watchdog checking
every 100 ms; run-qemu.sh options after `--`, e.g. `-- --icount`) and
keeps the log in build/clock-plot/boot.log.
PNG defaults to build/clock-plot/clock.png. The parsed figures are printed
as `clock-plot:` lines. gnuplot draws the picture; without it the figures
are still printed.
"""
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "clock-plot"
BOOT_CMDLINE = ("run=demo exit demo.ms=1000 clock.watchdog_ms=100 dump=none inject.tsc_skew_cpu=2 "
                "inject.tsc_skew=3000 inject.tsc_skew_others=-1500")

# A console line is "[sssss.uuuuuu] text" (the shell's `clock` lines have no
# stamp); a capture may hold frame bytes before the stamp on the same line,
# so the stamp is searched, not matched.
STAMP = re.compile(r"\[\s*\d+\.\d{6}\] (.*)$")
REF = re.compile(r"^tsc: ref=(\w+) freq_hz=(\d+) err_ppm=([\d.]+) tol_ppm=([\d.]+) "
                 r"rounds=(\d+)( \(not used\))?$")
USED = re.compile(r"^tsc: freq_hz=(\d+) ref=(\w+) err_ppm=([\d.]+) tol_ppm=([\d.]+)")
SKEW = re.compile(r"^smp: cpu=(\d+) apic_id=(\d+) tsc_skew_cycles=(-?\d+) "
                  r"uncertainty_cycles=(-?\d+) warps=(\d+)$")
WARN = re.compile(r"^smp: cpu=(\d+) WARNING: ")
AGAIN = re.compile(r"^clock: watchdog: cpu=(\d+) skew_checks=(\d+) missed=\d+ "
                   r"tsc_skew_cycles=(-?\d+) uncertainty_cycles=(-?\d+) ")
DISPUTED = re.compile(r"^tsc: vote disputed .* used=(\S+) left_out=(\S+)")
MISSING = re.compile(r"^tsc: ref=(\w+) (failed|absent|gives an impossible)\b")
CMDLINE = re.compile(r'^boot: cmdline="(.*)"$')


def console_lines(data):
    """The kernel's lines (stamp removed) in a log or capture's bytes."""
    out = []
    for raw in data.split(b"\n"):
        line = raw.decode("latin-1").rstrip("\r")
        m = STAMP.search(line)
        out.append(m.group(1) if m else line)   # the shell's `clock` prints no stamp
    return out


def injected_skews(cmdline):
    """cpu -> cycles, a function of the CPU number, from inject.tsc_skew*=
    (docs/clock.md): every AP gets tsc_skew, or with tsc_skew_cpu=n AP n
    gets it and the others tsc_skew_others. None when nothing is injected."""
    opt = dict(t.split("=", 1) for t in cmdline.split() if t.startswith("inject.tsc_skew")
               and "=" in t)
    if "inject.tsc_skew" not in opt:
        return None
    skew = int(opt["inject.tsc_skew"], 0)
    if "inject.tsc_skew_cpu" not in opt:
        return lambda cpu: 0 if cpu == 0 else skew
    only = int(opt["inject.tsc_skew_cpu"], 0)
    others = int(opt.get("inject.tsc_skew_others", "0"), 0)
    return lambda cpu: 0 if cpu == 0 else skew if cpu == only else others


def parse(data):
    """The clock figures of the last boot in a log's bytes: a dict with
    refs [{name, hz, err_ppm, tol_ppm, rounds, used}], missing {name: failed|absent|
    impossible} (references without a figure), used {ref, hz,
    err_ppm, tol_ppm} or None, disputed (used, left_out) or None, cpus
    [{cpu, apic_id, skew, unc, warps, trusted, injected, again}], cmdline."""
    st = None
    for line in console_lines(data):
        m = CMDLINE.match(line)
        if m or st is None:         # a new boot starts everything again
            st = {"cmdline": m.group(1) if m else "", "refs": [], "used": None,
                  "disputed": None, "cpus": {}, "warned": set(), "again": {},
                  "missing": {}}
        if m:
            continue
        if m := REF.match(line):
            st["missing"].pop(m.group(1), None)
            st["refs"] = [r for r in st["refs"] if r["name"] != m.group(1)]
            st["refs"].append({"name": m.group(1), "hz": int(m.group(2)),
                               "err_ppm": float(m.group(3)), "tol_ppm": float(m.group(4)),
                               "rounds": int(m.group(5)), "used": not m.group(6)})
        elif m := USED.match(line):
            st["used"] = {"hz": int(m.group(1)), "ref": m.group(2),
                          "err_ppm": float(m.group(3)), "tol_ppm": float(m.group(4))}
        elif m := DISPUTED.match(line):
            st["disputed"] = (m.group(1), m.group(2))
        elif m := SKEW.match(line):
            st["cpus"][int(m.group(1))] = {
                "cpu": int(m.group(1)), "apic_id": int(m.group(2)), "skew": int(m.group(3)),
                "unc": int(m.group(4)), "warps": int(m.group(5))}
        elif m := MISSING.match(line):
            st["missing"][m.group(1)] = "impossible" if m.group(2).startswith("gives") \
                else m.group(2)
        elif m := WARN.match(line):
            st["warned"].add(int(m.group(1)))
        elif (m := AGAIN.match(line)) and int(m.group(2)):
            # the shell's summary: the last re-measure (none: skew_checks=0)
            st["again"][int(m.group(1))] = (int(m.group(3)), int(m.group(4)))
    if st is None:
        st = {"cmdline": "", "refs": [], "used": None, "disputed": None, "cpus": {},
              "warned": set(), "again": {}, "missing": {}}
    inj = injected_skews(st["cmdline"])
    cpus = []
    for n in sorted(st["cpus"]):
        c = st["cpus"][n]
        c["trusted"] = n not in st["warned"] and c["warps"] == 0
        c["injected"] = inj(n) if inj else None
        c["again"] = st["again"].get(n)
        cpus.append(c)
    return {"cmdline": st["cmdline"], "refs": st["refs"], "used": st["used"],
            "disputed": st["disputed"], "cpus": cpus, "missing": st["missing"]}


def ppm_from(hz, base):
    return (hz - base) * 1e6 / base


def report(fig):
    """The parsed figures, one line each: what the picture draws."""
    out = []
    u = fig["used"]
    if u:
        out.append(f"clock-plot: used ref={u['ref']} freq_hz={u['hz']} err_ppm={u['err_ppm']:.3f}"
                   f" tol_ppm={u['tol_ppm']:.3f}")
    for r in fig["refs"]:
        d = f"{ppm_from(r['hz'], u['hz']):.3f}" if u and u["hz"] else "na"
        out.append(f"clock-plot: ref={r['name']} freq_hz={r['hz']} ppm_from_used={d} "
                   f"err_ppm={r['err_ppm']:.3f} tol_ppm={r['tol_ppm']:.3f} "
                   f"used={'yes' if r['used'] else 'no'}")
    for name, why in fig["missing"].items():
        out.append(f"clock-plot: ref={name} {why}")
    for c in fig["cpus"]:
        inj = "na" if c["injected"] is None else c["injected"]
        again = "na" if c["again"] is None else "%d+-%d" % c["again"]
        out.append(f"clock-plot: cpu={c['cpu']} skew_cycles={c['skew']} "
                   f"uncertainty_cycles={c['unc']} injected={inj} "
                   f"trusted={'yes' if c['trusted'] else 'no'} again={again}")
    return out


def lim_calib(refs, base, err_used, truth_hz=None):
    """Half the left panel's height, in ppm."""
    dots = [abs(ppm_from(r["hz"], base)) for r in refs if r["used"]]
    if truth_hz:
        dots.append(abs(ppm_from(truth_hz, base)))
    k = max(dots + [err_used])
    bars = [abs(ppm_from(r["hz"], base)) + r["err_ppm"] for r in refs if r["used"]]
    lim = max([b for b in bars if b <= 20 * k] + [k])
    return lim * 1.3 if lim > 0 else 1.0


def lim_skews(cpus):
    """The right panel's cycle range: every bar and mark, with room above
    for nothing to hide behind the frame."""
    ys = [0]
    for c in cpus:
        ys += [c["skew"] - c["unc"], c["skew"] + c["unc"]]
        if c["injected"] is not None:
            ys.append(c["injected"])
        if c["again"]:
            ys += [c["again"][0] - c["again"][1], c["again"][0] + c["again"][1]]
    lo, hi = min(ys), max(ys)
    pad = (hi - lo) * 0.12 or 1
    return lo - pad, hi + pad


def ref_label(r, base):
    """A reference's tick label, in gnuplot's enhanced text: its name, and
    small, where it lies when left out (off the frame, likely), err and tol."""
    nl = "\\n"
    small = [f"err {r['err_ppm']:g}", f"tol {r['tol_ppm']:g}"]
    name = r["name"]
    if not r["used"]:
        name += nl + "(not used)"
        small.insert(0, f"at {ppm_from(r['hz'], base):+.1f}")
    return f'"{name}{nl}{nl.join(small)}"'


def plot_script(fig, png, dat, truth_hz=None):
    """Write the picture's data into dat (two blocks); the gnuplot script."""
    u = fig["used"]
    base = u["hz"]
    refs = fig["refs"]
    with open(dat, "w") as f:
        f.write("# i ppm_from_used err_ppm tol_ppm colour\n")
        for i, r in enumerate(refs):
            colour = "0x3366aa" if r["used"] else "0xcc3311"
            f.write(f"{i} {ppm_from(r['hz'], base):.6f} {r['err_ppm']} {r['tol_ppm']} {colour}\n")
        f.write("\n\n# cpu skew_cycles uncertainty_cycles injected again again_unc colour\n")
        for c in fig["cpus"]:
            inj = "NaN" if c["injected"] is None else c["injected"]
            again = c["again"] or ("NaN", "NaN")
            colour = "0x3366aa" if c["trusted"] else "0xcc3311"
            f.write(f"{c['cpu']} {c['skew']} {c['unc']} {inj} {again[0]} {again[1]} {colour}\n")
    # The left panel zooms to the figures: every used reference's dot and
    # the used figure's band, and each bar that is not far wider than
    # those (20 times). A wider err (a PM timer bounded to 6% under a
    # loaded host), a tolerance of 100 or 500 ppm, a reference left out
    # (a misreported HPET period: a factor off) run off the frame; the
    # tick labels give their figures.
    lim = lim_calib(refs, base, u["err_ppm"], truth_hz)
    title = f"TSC calibration: {len(refs)} references against the figure used"
    sub = [f"used: ref={u['ref']}, {base} Hz, err {u['err_ppm']:g} ppm, tol {u['tol_ppm']:g} ppm"]
    if fig["disputed"]:
        sub.append(f"vote disputed: {fig['disputed'][1]} left out, err covers it")
    if fig["missing"]:
        sub.append("no figure: " + ", ".join(f"{n} ({w})" for n, w in fig["missing"].items()))
    sub = "\\n".join("{/*0.85 " + x + "}" for x in sub)
    truth = ""
    if truth_hz:
        truth = (f", {ppm_from(truth_hz, base):.6f} with lines dt 2 lw 2 lc rgb '#228833' "
                 f"title 'the true rate, {truth_hz} Hz'")
    xtics = ", ".join(f"{ref_label(r, base)} {i}" for i, r in enumerate(refs))
    cpus = fig["cpus"]
    ns = 1e9 / base
    ylo, yhi = lim_skews(cpus)
    inject = any(c["injected"] is not None for c in cpus)
    again = any(c["again"] for c in cpus)
    skew_plot = [f"'{dat}' index 1 using 1:2:($2-$3):($2+$3):7 with yerrorbars lw 2.5 pt 7 "
                 "ps 1.3 lc rgb variable title 'at bring-up: skew ± uncertainty'"]
    if inject:
        skew_plot.append(f"'{dat}' index 1 using ($1-0.2):4 with points pt 4 ps 1.6 lw 2 "
                         "lc rgb '#228833' title 'injected (inject.tsc\\_skew=)'")
    if again:
        skew_plot.append(f"'{dat}' index 1 using ($1+0.2):5:($5-$6):($5+$6) with yerrorbars "
                         "lw 1.5 pt 6 ps 1.2 lc rgb '#777777' title 'the clock watchdog, later'")
    return f"""
set terminal pngcairo size 1100,700 font ',11'
set encoding utf8
set output '{png}'
set multiplot layout 1,2 title 'Clocks of one boot (red: not used / not trusted)'
set title "{title}\\n{sub}"
set ylabel 'ppm from the figure used (labels: ppm)'
set xrange [-0.6:{len(refs) - 0.4}]
set yrange [{-lim}:{lim}]
set xtics ({xtics}) font ',9'
set grid ytics
set bmargin 12
set key at graph 0.5, graph -0.25 center top vertical maxcols 1 font ',10' samplen 3
set object 1 rect from graph 0, first {-u['err_ppm']} to graph 1, first {u['err_ppm']} \\
    fc rgb '#dde6f2' fs solid noborder behind
plot 0 with lines lc rgb '#3366aa' lw 1 title 'the figure used, ± its err (band)', \\
     '{dat}' index 0 using 1:2:($2-$3-$4):($2+$3+$4) with yerrorbars lw 1 pt 0 \\
        lc rgb '#999999' title '± (err + tol): thin, may leave the frame', \\
     '{dat}' index 0 using 1:2:($2-$3):($2+$3):5 with yerrorbars lw 3 pt 7 ps 1.3 \\
        lc rgb variable title 'each reference: figure ± err'{truth}
unset object 1
set title "TSC skew of each CPU against CPU 0\\n\\
{{/*0.85 cycles on the left, ns at the figure used on the right}}"
set ylabel 'TSC cycles'
set y2label 'ns'
set xlabel 'CPU'
set xrange [-0.6:{max([c['cpu'] for c in cpus] + [0]) + 0.6}]
set yrange [{ylo}:{yhi}]
set y2range [{ylo * ns!r}:{yhi * ns!r}]
set xtics 1 format '%g' font ',11'
set ytics nomirror
set y2tics
set grid xtics ytics
set key at graph 0.5, graph -0.25 center top vertical maxcols 1 font ',10' samplen 3
plot 0 with lines lc rgb '#cccccc' notitle, \\
     {", ".join(skew_plot)}
unset multiplot
"""


def plot(fig, png, truth_hz=None, dat=None):
    """Draw the picture; returns a line saying what was done. Its data go
    to dat (default build/clock-plot/<png's stem>.dat: never beside a
    picture drawn into docs/)."""
    if not fig["used"] or not fig["used"]["hz"] or not fig["refs"] or not fig["cpus"]:
        return "clock-plot: no picture: the log lacks the tsc: or smp: lines"
    if not shutil.which("gnuplot"):
        return "clock-plot: no picture: gnuplot not found (apt-get install gnuplot-nox)"
    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    dat = Path(dat) if dat else OUT / (png.stem + ".dat")
    dat.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["gnuplot"], input=plot_script(fig, png, dat, truth_hz), text=True,
                       capture_output=True, timeout=60)
    if r.returncode:
        return "clock-plot: gnuplot failed: " + r.stderr.strip()
    return f"clock-plot: wrote {png}"


def boot(extra):
    """One boot with skews injected; the log's path."""
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / "boot.log"
    subprocess.run(["make", "-C", str(ROOT), "-s", "-j2", "all"], check=True)
    cmd = [str(ROOT / "run-qemu.sh"), "--timeout", "300", "--smp", "4", *extra,
           "--cmdline", BOOT_CMDLINE]
    print("clock-plot: " + " ".join(cmd), flush=True)
    with open(log, "wb") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        sys.exit(f"clock-plot: the boot failed (exit {r.returncode}); its console: {log}")
    return log


def main(argv):
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    truth = None
    if "--truth-hz" in argv:
        i = argv.index("--truth-hz")
        truth = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] == "--boot":
        log, rest = boot(extra), argv[1:]
    else:
        log, rest = Path(argv[0]), argv[1:]
    png = Path(rest[0]) if rest else OUT / "clock.png"
    fig = parse(log.read_bytes())
    print("\n".join(report(fig)))
    msg = plot(fig, png, truth)
    print(msg)
    return 0 if msg.startswith("clock-plot: wrote") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
