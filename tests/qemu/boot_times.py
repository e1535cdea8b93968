"""Sums up a boot log (BOOT_LOG=FILE in the environment of a QEMU test run;
boot_lock.py writes it): per file, the seconds its boots held the machine
alone (exclusive) and shared it, the time boots waited for their lock, and
the longest boots. The figures for conftest.FILE_COST.

A boot's hold ends at the next line of its worker: its end, or for a shell
session the logs of which before 2026-12-06 have no end line, the moment the
worker asked for its next boot's lock (not when it got it: the wait for an
exclusive boot's lock is the other worker's hold, and was counted twice).
Usage: boot_times.py LOG [N]  (N: how many of the longest boots to list;
-1: the totals line only)
"""
import collections
import sys


def holds(path):
    """(seconds, exclusive, waited, test) for each boot of the log."""
    by_worker = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3:
                continue
            kv = dict(x.split("=", 1) for x in p[3:] if "=" in x)
            by_worker[p[1]].append((float(p[0]), p[2], kv))
    for events in by_worker.values():
        for i, (ts, what, kv) in enumerate(events):
            if what == "lock":
                end = ts
                if i + 1 < len(events):
                    nts, nwhat, nkv = events[i + 1]
                    end = nts - float(nkv["wait"]) if nwhat == "lock" else nts
                end = max(end, ts)
                yield end - ts, kv["ex"] == "1", float(kv["wait"]), kv.get("test", "?")


def main():
    rows = list(holds(sys.argv[1]))
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    ex = sum(r[0] for r in rows if r[1])
    sh = sum(r[0] for r in rows if not r[1])
    print(f"boots={len(rows)} exclusive_s={ex:.0f} shared_s={sh:.0f} "
          f"waited_s={sum(r[2] for r in rows):.0f} best_wall_s={ex + sh / 2:.0f}")
    if n < 0:
        return          # the totals only
    per = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for d, e, _, test in rows:
        f = per[test.split("::")[0].rsplit("/", 1)[-1]]
        f[0 if e else 1] += d
        f[2] += 1
    for name, (e, s, k) in sorted(per.items(), key=lambda x: -(x[1][0] + x[1][1])):
        print(f"{name:28s} boots={k:3d} exclusive_s={e:5.0f} shared_s={s:5.0f}")
    for d, e, w, test in sorted(rows, reverse=True)[:n]:
        print(f"{d:6.1f} s {'exclusive' if e else 'shared   '} waited={w:5.1f} {test}")


if __name__ == "__main__":
    main()
