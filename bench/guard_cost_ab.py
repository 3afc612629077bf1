#!/usr/bin/env python3
"""The honeypot monitor's added cost per search from a `gbench_ab.py --raw` file of
honeypot_guard_bench (bench/honeypot_guard_bench.cc).

For each binary (base, new) and each configuration (memories, ranking, query text), the added CPU
time of monitor mode and of monitor mode with the intent table is taken within each run (on minus
off of the same binary in the same round, so both saw the same host conditions); printed are the
median over rounds and the range, with the median no-guard time. For BM_GuardAddedCost (the
paired measurement: each search without and with the guard back to back) its counters likewise.

    bench/gbench_ab.py BASE NEW --filter 'BM_DefendedSearch|BM_GuardAddedCost' --raw ab.json
    bench/guard_cost_ab.py ab.json
"""
import json
import re
import statistics
import sys

NAME = re.compile(r"BM_DefendedSearch/(\d+)/([012])/([01])(?:/([01]))?$")
PAIRED = re.compile(r"BM_GuardAddedCost/(\d+)/([12])/([01])/([01])$")


def configurations(run):
    """{(memories, ranking, text): {guard: ns}} of one run."""
    out = {}
    for name, ns in run.items():
        m = NAME.match(name)
        if not m:
            continue
        memories, guard, ranking, text = m.groups()
        key = (int(memories), "hybrid" if ranking == "1" else "vector", "novel" if text == "1" else "cycled")
        out.setdefault(key, {})[int(guard)] = ns / 1e3
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        raw = json.load(f)
    print(f"{'binary':6s} {'memories':>8s} {'ranking':7s} {'text':6s} {'off us':>8s} "
          f"{'monitor +us (range)':>22s} {'+intent +us (range)':>22s}")
    for label in ("base", "new"):
        runs = [configurations(run) for run in raw[label]]
        for key in sorted(set().union(*runs)):
            rounds = [run[key] for run in runs if key in run and len(run[key]) == 3]
            if not rounds:
                continue
            off = statistics.median(r[0] for r in rounds)
            cells = []
            for guard in (1, 2):
                added = [r[guard] - r[0] for r in rounds]
                cells.append(f"{statistics.median(added):+6.2f} ({min(added):+.1f}..{max(added):+.1f})")
            print(f"{label:6s} {key[0]:8d} {key[1]:7s} {key[2]:6s} {off:8.1f} {cells[0]:>22s} {cells[1]:>22s}")
    paired(raw)
    return 0


def paired(raw):
    """BM_GuardAddedCost: each run's paired added cost (added_us: mean of the per-search
    differences; added_median_us: their median over pairs of opposite order), median over rounds
    and range."""
    if not raw.get("base_counters"):
        return
    print()
    print(f"{'binary':6s} {'memories':>8s} {'ranking':7s} {'guard':7s} {'text':6s} {'off us':>8s} "
          f"{'added us, mean (range)':>24s} {'added us, median (range)':>26s}")
    for label in ("base", "new"):
        runs = raw[f"{label}_counters"]
        names = sorted({n for run in runs for n in run if PAIRED.match(n)},
                       key=lambda n: tuple(int(x) for x in PAIRED.match(n).groups()))
        for name in names:
            memories, guard, ranking, text = PAIRED.match(name).groups()
            rounds = [run[name] for run in runs if name in run and "added_us" in run[name]]
            if not rounds:
                continue
            cells = []
            for counter in ("added_us", "added_median_us"):
                values = [r[counter] for r in rounds]
                cells.append(f"{statistics.median(values):+6.2f} ({min(values):+.1f}..{max(values):+.1f})")
            off = statistics.median(r["off_us"] for r in rounds)
            print(f"{label:6s} {int(memories):8d} {'hybrid' if ranking == '1' else 'vector':7s} "
                  f"{'monitor' if guard == '1' else '+intent':7s} {'novel' if text == '1' else 'cycled':6s} "
                  f"{off:8.1f} {cells[0]:>24s} {cells[1]:>26s}")


if __name__ == "__main__":
    sys.exit(main())
