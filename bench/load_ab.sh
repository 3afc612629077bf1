#!/usr/bin/env bash
# A/B of two load_bench binaries on a noisy machine: alternates short runs of one phase of BASE and
# NEW (base, new, base, new, ...) so that both see the same host conditions, and prints each pair
# and the median ratios of req/s and of CPU time per request.
#
#   bench/load_ab.sh BASE NEW [PAIRS=8] [load_bench flags, e.g. --connections 4 or --phase add]
#
# NEW_ARGS (environment) holds flags for NEW only, e.g. NEW_ARGS='--ranking vector' to compare a
# base that predates hybrid ranking with the same ranking.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: bench/load_ab.sh BASE_LOAD_BENCH NEW_LOAD_BENCH [PAIRS] [load_bench flags]" >&2
  exit 2
fi
base=$1 new=$2
pairs=${3:-8}
shift $(($# < 3 ? $# : 3))
phase=search  # or the one given with --phase
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do
  if [ "${args[i]}" = --phase ]; then phase=${args[i + 1]}; fi
done
run() { "$1" --connections 2 --seconds 2 --phase "$phase" "${@:2}" | awk -v p="$phase" '$1 == p { print $3, $8 }'; }
for _ in $(seq "$pairs"); do
  # shellcheck disable=SC2086  # NEW_ARGS is a list of flags
  echo "$(run "$base" "$@") $(run "$new" ${NEW_ARGS:-} "$@")"
done | python3 -c '
import statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin if line.strip()]
for b, bc, n, nc in rows:
    print(f"base {b:7.0f} req/s {bc:6.1f} us/req   new {n:7.0f} req/s {nc:6.1f} us/req")
print("median ratio new/base: req/s %.3f, cpu/req %.3f" % (
    statistics.median(n / b for b, _, n, _ in rows), statistics.median(nc / bc for _, bc, _, nc in rows)))
'
