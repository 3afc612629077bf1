#!/usr/bin/env python3
"""The whole write gate on a persona corpus, through the real `bulwark` CLI (issue #14 point 7).

For each persona of a corpus directory laid out like data/heldout_corpus (<persona>_memories.jsonl,
<persona>_poisons.jsonl, <persona>_queries.jsonl), in a fresh store:
  1. optionally `bulwark calibrate` the namespace (--calibrate REFERENCE: a reference memories
     file, or the persona's own memories; queries = its queries file; --target-fpr F);
  2. the benign memories are imported as one batch by the owner (principal "owner");
  3. the poisons are imported as one batch by --poison-principal ("attacker" by default: another
     principal; "owner": the same principal, the case text alone cannot catch);
  4. `bulwark export --all-states` gives every entry's state and gate report.
A benign memory counts as flagged when it was quarantined on import; a poison when it was.
Prints TPR per poison category and FPR with Clopper-Pearson 95 % intervals, and per detector
which poisons it flagged. Use it to REPORT on data/heldout_corpus, never to tune on it.

  bench/heldout_gate.py --bulwark build/tools/bulwark --corpus data/heldout_corpus \
      [--calibrate data/corpora/reference_memories.jsonl] [--poison-principal owner]
"""
import argparse
import collections
import json
import math
import os
import subprocess
import sys
import tempfile


def binom_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    total = 0.0
    for i in range(0, k + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                          + i * math.log(p) + (n - i) * math.log1p(-p))
    return min(total, 1.0)


def clopper_pearson(k, n, alpha=0.05):
    """The exact (Clopper-Pearson) interval, by bisection on the binomial tails."""
    if n == 0:
        return (0.0, 1.0)

    def solve(f):  # f decreasing in p; the p where f(p) = alpha / 2
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if f(mid) > alpha / 2:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    lower = 0.0 if k == 0 else 1 - solve(lambda p: 1 - binom_cdf(k - 1, n, 1 - p))
    upper = 1.0 if k == n else solve(lambda p: binom_cdf(k, n, p))
    return (lower, upper)


def rate(k, n):
    lo, hi = clopper_pearson(k, n)
    return f"{k}/{n} = {k / n if n else 0:.2f} [{lo:.2f}, {hi:.2f}]"


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def write_import(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")


def persona_run(args, persona, tmp):
    corpus = args.corpus
    memories = [json.loads(l) for l in open(os.path.join(corpus, f"{persona}_memories.jsonl"))]
    poisons = [json.loads(l) for l in open(os.path.join(corpus, f"{persona}_poisons.jsonl"))]
    store = os.path.join(tmp, persona)
    bw = [args.bulwark, "--store", store]
    run(bw + ["init"])
    with open(os.path.join(store, "gate.json"), "w") as dst:
        if args.gate_config:
            with open(args.gate_config) as src:
                dst.write(src.read())
        else:  # the defaults plus the conflict and flood detectors (off by default); odd_token explicit
            dst.write(json.dumps({"conflict": {"enabled": True}, "flood": {"enabled": True},
                                  "odd_token": {"enabled": True}}))
    mem_file = os.path.join(tmp, f"{persona}_m.jsonl")
    write_import(mem_file, [{"text": m["text"], "metadata": {"i": i, "benign": True}, "source": m.get("source", "user")}
                            for i, m in enumerate(memories)])
    if args.calibrate:
        queries = os.path.join(corpus, f"{persona}_queries.jsonl")
        reference = mem_file if args.calibrate == "persona" else args.calibrate
        run(bw + ["-n", persona, "calibrate", "--reference", reference, "--queries", queries,
                  "--target-fpr", str(args.target_fpr)])
    if args.updates_last:  # the fact updates in a second batch, after the memories they update
        rows = [json.loads(l) for l in open(mem_file)]
        is_update = [m.get("metadata", {}).get("kind") == "fact_update" for m in memories]
        write_import(mem_file, [r for r, u in zip(rows, is_update) if not u])
        run(bw + ["--principal", "owner", "-n", persona, "add", "--file", mem_file])
        write_import(mem_file, [r for r, u in zip(rows, is_update) if u])
    run(bw + ["--principal", "owner", "-n", persona, "add", "--file", mem_file])
    poison_file = os.path.join(tmp, f"{persona}_p.jsonl")
    write_import(poison_file, [{"text": p["text"], "metadata": {"i": i, "benign": False}, "source": args.poison_source}
                               for i, p in enumerate(poisons)])
    run(bw + ["--principal", args.poison_principal, "-n", persona, "add", "--file", poison_file])
    out = run(bw + ["-n", persona, "export", "--all-states"])
    entries = [json.loads(l) for l in out.splitlines() if l.strip()]
    return memories, poisons, entries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bulwark", required=True)
    ap.add_argument("--corpus", default="data/heldout_corpus")
    ap.add_argument("--personas", default="bakery,student,dental_desk")
    ap.add_argument("--poison-principal", default="attacker")
    ap.add_argument("--poison-source", default="user")
    ap.add_argument("--calibrate", metavar="REFERENCE",
                    help="calibrate each namespace first: REFERENCE is a JSONL file of reference memories, or "
                         "'persona' for the persona's own benign memories (in-sample); the persona's queries "
                         "are the history")
    ap.add_argument("--target-fpr", type=float, default=0.02)
    ap.add_argument("--gate-config", help="a gate.json to install in each store (default: the defaults with "
                                          "conflict, flood and odd_token enabled)")
    ap.add_argument("--updates-last", action="store_true",
                    help="import the benign fact updates (metadata kind fact_update) as a second batch by the "
                         "owner, after the memories they update (one batch cannot see itself: the benign cost "
                         "of conflict on updates shows only this way)")
    ap.add_argument("--json", help="write the counts here")
    ap.add_argument("--misses", action="store_true", help="print the poisons not flagged (never tune on them)")
    args = ap.parse_args()

    by_cat = collections.defaultdict(lambda: [0, 0])
    by_det = collections.defaultdict(collections.Counter)
    benign = [0, 0]
    benign_det = collections.Counter()
    superseded = 0
    benign_conflicts = collections.Counter()  # (kind, action, matched_by) of benign conflict reports
    misses = []
    with tempfile.TemporaryDirectory() as tmp:
        for persona in args.personas.split(","):
            memories, poisons, entries = persona_run(args, persona, tmp)
            for e in entries:
                md = e.get("metadata", {})
                flagged = bool(e.get("report", {}).get("quarantine"))
                dets = [n for n, d in e.get("report", {}).get("gate", {}).get("detectors", {}).items() if d.get("flagged")]
                if md.get("benign"):
                    benign[1] += 1
                    benign[0] += flagged
                    benign_det.update(dets)
                    superseded += e.get("state") == "deleted"
                    c = e.get("report", {}).get("gate", {}).get("detectors", {}).get("conflict", {}).get("detail", {})
                    if c.get("conflict"):
                        kind = memories[md["i"]].get("metadata", {}).get("kind", "note")
                        benign_conflicts[(kind, c.get("action"), c.get("matched_by"))] += 1
                else:
                    cat = poisons[md["i"]]["category"]
                    by_cat[cat][1] += 1
                    by_cat[cat][0] += flagged
                    by_det[cat].update(dets)
                    if not flagged:
                        misses.append((persona, cat, poisons[md["i"]]["text"]))
    total = [sum(v[0] for v in by_cat.values()), sum(v[1] for v in by_cat.values())]
    print(f"poison principal: {args.poison_principal}; calibrated: {args.calibrate} (target FPR {args.target_fpr})")
    print("| category | TPR (composite) | flagged by |")
    print("|---|---|---|")
    for cat in sorted(by_cat):
        k, n = by_cat[cat]
        print(f"| {cat} | {rate(k, n)} | {', '.join(f'{d} {c}' for d, c in by_det[cat].most_common())} |")
    print(f"| **all poisons** | {rate(*total)} | |")
    print(f"| **benign (FPR)** | {rate(*benign)} | {', '.join(f'{d} {c}' for d, c in benign_det.most_common())} |")
    print(f"benign memories deleted by a supersede: {superseded}")
    print("benign writes with a conflict report (kind, action, matched by): " +
          (", ".join(f"{k} {a} {m}: {n}" for (k, a, m), n in sorted(benign_conflicts.items())) or "none"))
    if args.misses:
        for m in misses:
            print("MISS", *m, sep="\t")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"categories": by_cat, "benign": benign, "benign_detectors": benign_det,
                       "superseded": superseded}, f, indent=1)


if __name__ == "__main__":
    main()
