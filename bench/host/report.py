#!/usr/bin/python3
"""Summarise a `make bench-host` run: table on stdout, results file, plots.

Input: the raw file scripts/bench-host.sh collected, one fact a line:
  meta: KEY=VALUE                        machine, options, versions
  bench-host-rep: round=R peer=P ...     one per thread and round (bench_main.c)
  bench-host-check: round=R peer=P ...   the peer's own checks
  instr: peer=P events=N ir=I            callgrind totals (N = 0 and N = M)
  instr-na: peer=P why=TEXT              instructions not counted
  lttng: KEY=VALUE ...                   the LTTng session's facts
  lttng-na: TEXT                         why LTTng was not measured

Per round, a peer's figure is the mean over its threads of loop time /
events; the table gives the median over rounds and the spread (min, max).
Ratios are of medians; the paired ratios (same round) show their spread.

Usage: report.py RAW RESULTS PLOT_PREFIX
"""
import os
import shutil
import statistics
import subprocess
import sys

PEERS = ["floor", "baretrace", "lttng-ust"]
GOAL_FLOOR = 1.3    # baretrace / floor at most this
GOAL_LTTNG = 4.0    # lttng-ust / baretrace at least this


def kv(fields):
    out = {}
    for f in fields:
        if "=" in f:
            k, v = f.split("=", 1)
            out[k] = v
    return out


def parse(path):
    meta, reps, checks, instr, instr_na, lttng = {}, [], [], {}, {}, []
    lttng_na = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            tag, _, rest = line.partition(" ")
            if tag == "meta:":
                k, _, v = rest.partition("=")
                meta[k] = v
            elif tag == "bench-host-rep:":
                reps.append(kv(rest.split()))
            elif tag == "bench-host-check:":
                checks.append(rest)
            elif tag == "instr:":
                d = kv(rest.split())
                instr.setdefault(d["peer"], {})[int(d["events"])] = int(d["ir"])
            elif tag == "instr-na:":
                d = rest.split(" ", 1)
                instr_na[d[0].split("=", 1)[1]] = d[1].split("=", 1)[1] if len(d) > 1 else "?"
            elif tag == "lttng:":
                lttng.append(rest)
            elif tag == "lttng-na:":
                lttng_na = rest
    return meta, reps, checks, instr, instr_na, lttng, lttng_na


def per_round(reps, peer, key):
    """{round: mean over threads of key} for one peer."""
    acc = {}
    for r in reps:
        if r.get("peer") == peer:
            acc.setdefault(int(r["round"]), []).append(float(r[key]))
    return {k: sum(v) / len(v) for k, v in sorted(acc.items())}


def instr_per_event(instr, peer):
    d = instr.get(peer, {})
    full = [n for n in d if n > 0]
    if 0 not in d or not full:
        return None
    n = max(full)
    return (d[n] - d[0]) / n


def fmt(x, nd=1):
    return "na" if x is None else f"{x:.{nd}f}"


def plot(results, prefix, machine):
    """Bar chart of ns/event per peer with min..max error bars."""
    peers = [p for p in PEERS if p in results]
    if not peers:
        return "plots: nothing measured"
    png = prefix + "-ns.png"
    dat = prefix + "-ns.dat"
    with open(dat, "w") as f:
        for i, p in enumerate(peers):
            r = results[p]
            f.write(f"{i} {p} {r['median']:.3f} {r['min']:.3f} {r['max']:.3f} "
                    f"{fmt(r['instr'])}\n")
    title = f"bench-host: ns per event (median, min..max), {machine}"
    if shutil.which("gnuplot"):
        gp = f"""
set terminal pngcairo size 900,560 font ",11"
set output "{png}"
set title "{title}" noenhanced
set ylabel "ns per event (log scale)"
set logscale y
set yrange [1:*]
set style fill solid 0.6 border -1
set boxwidth 0.6
set xrange [-0.6:{len(peers) - 0.4}]
set grid ytics mytics
unset key
plot "{dat}" using 1:3:xtic(2) with boxes lc rgb "#4477aa", \\
     "" using 1:3:4:5 with yerrorbars lc rgb "black" pt 0 lw 1.5, \\
     "" using 1:($5*1.25):(sprintf("%.1f ns", $3)) with labels noenhanced
"""
        res = subprocess.run(["gnuplot"], input=gp, text=True, capture_output=True,
                             timeout=60)
        if res.returncode != 0:
            return "plots: gnuplot failed: " + res.stderr.strip().splitlines()[-1]
        return f"plots: {png} (gnuplot)"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("plots: not made: neither gnuplot nor matplotlib is installed "
                "(apt-get install gnuplot-nox)")
    med = [results[p]["median"] for p in peers]
    err = [[m - results[p]["min"] for p, m in zip(peers, med)],
           [results[p]["max"] - m for p, m in zip(peers, med)]]
    fig, ax = plt.subplots(figsize=(9, 5.6))
    ax.bar(peers, med, yerr=err, capsize=6, color="#4477aa")
    ax.set_yscale("log")
    ax.set_ylabel("ns per event (log scale)")
    ax.set_title(title)
    for i, m in enumerate(med):
        ax.text(i, m * 1.1, f"{m:.1f} ns", ha="center")
    fig.savefig(png, dpi=100)
    return f"plots: {png} (matplotlib)"


def main():
    raw, out_path, prefix = sys.argv[1:4]
    meta, reps, checks, instr, instr_na, lttng, lttng_na = parse(raw)
    machine = meta.get("machine", "?")
    results = {}
    for p in PEERS:
        wall = per_round(reps, p, "ns_per_event")
        if not wall:
            continue
        cpu = per_round(reps, p, "cpu_ns_per_event")
        v = list(wall.values())
        results[p] = {
            "rounds": wall, "cpu": cpu,
            "median": statistics.median(v), "min": min(v), "max": max(v),
            "cpu_median": statistics.median(cpu.values()),
            "instr": instr_per_event(instr, p),
            "nivcsw": sum(int(r["nivcsw"]) for r in reps if r["peer"] == p),
            "minflt": sum(int(r["minflt"]) for r in reps if r["peer"] == p),
            "threads": max(int(r["thread"]) for r in reps if r["peer"] == p) + 1,
            "events": int(next(r["events"] for r in reps if r["peer"] == p)),
        }

    def ratio(a, b):
        if a not in results or b not in results:
            return None, None, None
        med = results[a]["median"] / results[b]["median"]
        paired = [results[a]["rounds"][k] / results[b]["rounds"][k]
                  for k in results[a]["rounds"] if k in results[b]["rounds"]]
        return med, min(paired), max(paired)

    bf, bf_lo, bf_hi = ratio("baretrace", "floor")
    lb, lb_lo, lb_hi = ratio("lttng-ust", "baretrace")
    bf_cpu = (results["baretrace"]["cpu_median"] / results["floor"]["cpu_median"]
              if "baretrace" in results and "floor" in results else None)
    lb_cpu = (results["lttng-ust"]["cpu_median"] / results["baretrace"]["cpu_median"]
              if "lttng-ust" in results and "baretrace" in results else None)
    goal_floor = "na" if bf is None else ("met" if bf <= GOAL_FLOOR else "missed")
    goal_lttng = "na" if lb is None else ("met" if lb >= GOAL_LTTNG else "missed")

    lines = []
    say = lines.append
    th = next(iter(results.values()))["threads"] if results else 0
    ev = next(iter(results.values()))["events"] if results else 0
    say(f"host benchmark: {machine}; {th} threads x {ev} events, "
        f"{meta.get('reps', '?')} rounds (median, min..max over rounds)")
    say("")
    say(f"{'peer':<11} {'ns/event':>9} {'min':>8} {'max':>8} {'cpu-ns/ev':>10} "
        f"{'instr/ev':>9}")
    for p in PEERS:
        if p in results:
            r = results[p]
            say(f"{p:<11} {r['median']:9.2f} {r['min']:8.2f} {r['max']:8.2f} "
                f"{r['cpu_median']:10.2f} {fmt(r['instr']):>9}")
        elif p == "lttng-ust":
            say(f"{p:<11} {'not measured':>9}")
    say("")
    if bf is not None:
        say(f"baretrace / floor     = {bf:.2f}  (paired by round {bf_lo:.2f}..{bf_hi:.2f}; "
            f"CPU time {bf_cpu:.2f})  goal <= {GOAL_FLOOR}: {goal_floor}")
    if lb is not None:
        say(f"lttng-ust / baretrace = {lb:.2f}  (paired by round {lb_lo:.2f}..{lb_hi:.2f}; "
            f"CPU time {lb_cpu:.2f})  goal >= {GOAL_LTTNG}: {goal_lttng}")
    if lttng_na:
        say(f"LTTng: not measured: {lttng_na}")
    elif lttng:
        say("LTTng: " + "; ".join(lttng))
    for p, why in instr_na.items():
        say(f"instructions: {p}: not counted: {why}")
    busy = [p for p in results
            if results[p]["median"] > 1.10 * results[p]["cpu_median"]]
    if busy:
        say(f"note: wall time exceeds CPU time by >10% for {', '.join(busy)}: another "
            f"process shared the writers' CPUs (load before: {meta.get('load_before', '?')})")
    plots = plot(results, prefix, machine)
    say(plots)
    table = "\n".join(lines)
    print(table)

    with open(out_path, "w") as f:
        f.write("# bench-host results (make bench-host; method in docs/bench-host.md)\n")
        for k in ("machine", "cpu_model", "cores", "kernel", "clocksource", "date",
                  "commit", "compiler", "cflags", "sched", "lttng_tools", "lttng_ust",
                  "valgrind", "threads", "events", "warmup", "reps", "buf_bytes",
                  "vg_events", "load_before", "load_after"):
            f.write(f"{k}: {meta.get(k, '?')}\n")
        f.write("\n" + table + "\n\n")
        f.write("# per round: mean over threads of ns per event (wall; CPU time)\n")
        for p in PEERS:
            if p in results:
                r = results[p]
                f.write(f"round-figures: peer={p} wall=" +
                        ",".join(f"{v:.3f}" for v in r["rounds"].values()) + " cpu=" +
                        ",".join(f"{v:.3f}" for v in r["cpu"].values()) +
                        f" nivcsw_total={r['nivcsw']} minflt_total={r['minflt']}\n")
        f.write("\n# per thread and round, as measured\n")
        with open(raw) as rf:
            for line in rf:
                if line.startswith(("bench-host-rep:", "bench-host-check:", "instr:",
                                    "instr-na:", "lttng:", "lttng-na:")):
                    f.write(line)
        f.write("\n# machine-readable summary\n")
        for p in PEERS:
            if p in results:
                r = results[p]
                f.write(f"bench-host: peer={p} threads={r['threads']} events={r['events']} "
                        f"ns_per_event={r['median']:.3f} ns_min={r['min']:.3f} "
                        f"ns_max={r['max']:.3f} instr_per_event={fmt(r['instr'])}\n")
        f.write(f"bench-host-ratio: baretrace_over_floor={fmt(bf, 3)} "
                f"lttng_over_baretrace={fmt(lb, 3)} goal_floor_1.3x={goal_floor} "
                f"goal_lttng_4x={goal_lttng}\n")
        if lttng_na:
            f.write(f"LTTng: not measured: {lttng_na}\n")
    print(f"results: {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
