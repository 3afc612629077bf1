#!/usr/bin/env python3
"""A/B of two builds of one Google Benchmark binary on a noisy machine.

Runs BASE and NEW alternately (base, new, base, new, ...) so that both see the same host
conditions, collects each benchmark's CPU time per iteration from the JSON output, and prints,
for every benchmark both binaries have, the median CPU time of each and the median of the
per-round ratios new/base (below 1: NEW is faster). Benchmarks only one binary has are listed
as such, not compared.

    bench/gbench_ab.py BASE NEW [--rounds 5] [--filter REGEX] [--min-time 0.2] [--raw FILE]

--raw FILE also writes every run's CPU times (ns per iteration, by benchmark name) as JSON,
{"base": [run, ...], "new": [run, ...], "base_counters": [...], "new_counters": [...]} in round
order (the counters: each benchmark's user counters), for differences within one run (e.g. a
guard's added cost: on minus off of the same binary in the same round).

Exit status 0 when every run succeeded, 1 otherwise.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile


def run_once(binary, bench_filter, min_time, counters=None):
    """One run of `binary`; returns {benchmark name: cpu time per iteration in ns}. `counters`, if
    given, receives {benchmark name: {counter: value}} of the benchmarks' user counters."""
    # The JSON goes to a file of its own: what the benchmarked code logs to stdout cannot corrupt it.
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [binary, f"--benchmark_out={out.name}", "--benchmark_out_format=json",
                   f"--benchmark_min_time={min_time}"]
        if bench_filter:
            command.append(f"--benchmark_filter={bench_filter}")
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{binary} exited {done.returncode}: {done.stderr[-2000:]}")
        report = json.load(out)
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    times = {}
    for bench in report["benchmarks"]:
        if bench.get("run_type", "iteration") != "iteration":
            continue
        times[bench["name"]] = bench["cpu_time"] * scale[bench.get("time_unit", "ns")]
        if counters is not None:
            standard = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
                        "iterations", "real_time", "cpu_time", "time_unit", "family_index",
                        "per_family_instance_index", "label", "error_occurred", "error_message",
                        "aggregate_name", "aggregate_unit"}
            counters[bench["name"]] = {key: value for key, value in bench.items()
                                       if key not in standard and isinstance(value, (int, float))}
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--filter", default="")
    parser.add_argument("--min-time", default="0.2")
    parser.add_argument("--raw", default="")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    base_runs, new_runs = [], []
    base_counters, new_counters = [], []
    try:
        for round_index in range(args.rounds):
            base_counters.append({})
            base_runs.append(run_once(args.base, args.filter, args.min_time, base_counters[-1]))
            new_counters.append({})
            new_runs.append(run_once(args.new, args.filter, args.min_time, new_counters[-1]))
            print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr)
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1

    if args.raw:
        with open(args.raw, "w", encoding="utf-8") as out:
            json.dump({"base": base_runs, "new": new_runs, "base_counters": base_counters,
                       "new_counters": new_counters}, out, indent=1)

    common = [name for name in base_runs[0] if all(name in run for run in base_runs + new_runs)]
    print(f"{'benchmark':60s} {'base cpu':>12s} {'new cpu':>12s} {'ratio':>7s}")
    for name in common:
        base = statistics.median(run[name] for run in base_runs)
        new = statistics.median(run[name] for run in new_runs)
        ratio = statistics.median(n[name] / b[name] for b, n in zip(base_runs, new_runs))
        print(f"{name:60s} {base / 1e3:10.2f}us {new / 1e3:10.2f}us {ratio:7.3f}")
    for label, runs in (("base", base_runs), ("new", new_runs)):
        only = sorted(set(runs[0]) - set(common))
        if only:
            print(f"only in {label}: {', '.join(only)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
