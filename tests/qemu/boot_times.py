"""Sums up a boot log (BOOT_LOG=FILE in the environment of a QEMU test run;
boot_lock.py writes it): per file, the seconds its boots held the machine
alone (exclusive) and shared it, the time boots waited for their lock, and
the longest boots. With --costs, the seconds per test instead, in the form
of tests/qemu/boot_costs.txt, which orders the tests (conftest.py).

A boot's hold ends at the next line of its worker: its end, or for a shell
session the logs of which before 2026-12-06 have no end line, the moment the
worker asked for its next boot's lock (not when it got it: the wait for an
exclusive boot's lock is the other worker's hold, and was counted twice).
Usage: boot_times.py LOG [N]  (N: how many of the longest boots to list;
-1: the totals line only)
       boot_times.py --costs LOG  (per test: exclusive and shared seconds)
"""
import collections
import sys
from pathlib import Path


def holds(path):
    """(seconds, exclusive, waited, test) for each boot of the log."""
    by_worker = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            line, _, test = line.rstrip("\n").partition(" test=")  # the id ends the line
            p = line.split()
            if len(p) < 3:
                continue
            kv = dict(x.split("=", 1) for x in p[3:] if "=" in x)
            kv["test"] = test or "?"
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


def costs(path):
    """Per test id: [exclusive seconds, shared seconds] of its boots."""
    per = collections.defaultdict(lambda: [0.0, 0.0])
    for d, e, _, test in holds(path):
        per[short_id(test)][0 if e else 1] += d
    return per


def short_id(test):
    """A node id without its file's directory, nor the "@group" xdist's
    loadgroup appends (after the parameters): test_x.py::test_y[params]."""
    if test.rfind("@") > test.rfind("]"):
        test = test[:test.rfind("@")]
    f, sep, rest = test.partition("::")
    return f.rsplit("/", 1)[-1] + sep + rest


COSTS_FILE = Path(__file__).resolve().parent / "boot_costs.txt"


def listed_costs():
    """{test_x.py::test_y[params]: (exclusive_s, shared_s)} from boot_costs.txt
    (conftest.py orders the tests by it)."""
    listed = {}
    for line in COSTS_FILE.read_text().splitlines():
        if line and not line.startswith("#"):
            ex, sh, test = line.split(" ", 2)
            listed[test] = (float(ex), float(sh))
    return listed


def misplaced(path):
    """Tests whose boots were exclusive but which boot_costs.txt lists as
    shared or not at all: conftest.py starts them too late."""
    listed = listed_costs()
    return sorted(t for t, (e, _) in costs(path).items()
                  if e > 0 and listed.get(t, (0.0, 0.0))[0] == 0)


def main():
    if sys.argv[1] == "--costs":
        print("# exclusive_s shared_s test: the seconds a test's boots held the machine alone")
        print("# and shared it, in one quiet run of make test-qemu (BOOT_LOG)")
        for test, (e, s) in sorted(costs(sys.argv[2]).items()):
            print(f"{e:.1f} {s:.1f} {test}")
        return
    rows = list(holds(sys.argv[1]))
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    ex = sum(r[0] for r in rows if r[1])
    sh = sum(r[0] for r in rows if not r[1])
    print(f"boots={len(rows)} exclusive_s={ex:.0f} shared_s={sh:.0f} "
          f"waited_s={sum(r[2] for r in rows):.0f} best_wall_s={ex + sh / 2:.0f}")
    if n < 0:
        stale = misplaced(sys.argv[1])
        if stale:
            print(f"qemu boots: {len(stale)} test(s) with an exclusive boot start among the "
                  f"shared ones (not so in tests/qemu/boot_costs.txt; `make test-qemu-costs` "
                  f"after a quiet run): {', '.join(stale[:3])}{' ...' if len(stale) > 3 else ''}")
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
