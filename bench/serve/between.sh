#!/usr/bin/env bash
# between.sh: the "between tuned sizes" study on a GPU (bench/serve/between.c): tunes
# MAIN_DB with `pmtune tune` at the default sizes, then runs pmtune_bench_between (which tunes
# its random sizes into SCRATCH_DB and times both), and keeps everything in the folder OUT.
# Usage, from the repository root with the build in build/:
#   bench/serve/between.sh OUT [SIZES]     SIZES: random sizes per op (default 20)
# Environment: PM_COMMIT (the commit to name; default git's, else the one built in),
# DBDIR (where the two databases live; default build/between: a rerun on the same machine
# resumes both tunings), SEED (default 1), OPS (default every op).
# On an H100 it takes about 7-8 minutes with SIZES 20; each phase's time is printed.
set -euo pipefail
out=${1:?usage: bench/serve/between.sh OUT [SIZES]}
sizes=${2:-20}
bin=${BUILD:-build}/tools
dir=${DBDIR:-build/between}
mkdir -p "$out" "$dir"
main=$dir/main.db
scratch=$dir/scratch.db
commit=${PM_COMMIT:-$(git describe --always --dirty 2>/dev/null || true)}
args=(--sizes "$sizes" --seed "${SEED:-1}")
[ -n "$commit" ] && args+=(--commit "$commit")
[ -n "${OPS:-}" ] && args+=(--ops "$OPS")
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null |
      sed 's/, /, driver /' || echo "GPU unknown")
built=${commit:-"the commit built in"}
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

t0=$(now)
t=$(now)
echo "# $bin/pmtune tune --device 0 --db $main; $gpu; build of $built" > "$out/tune-main.txt"
"$bin/pmtune" tune --device 0 --db "$main" >> "$out/tune-main.txt" 2> >(tee "$out/tune-main.log" >&2) ||
  { echo "between.sh: pmtune tune failed (see $out/tune-main.log)" >&2; exit 1; }
echo "phase tune-main: $(took "$t") s ($out/tune-main.txt)"

t=$(now)
status=0
"$bin/pmtune_bench_between" "$main" "$scratch" "${args[@]}" > "$out/between.json" \
  2> >(tee "$out/between.log" >&2) || status=$?
echo "phase between: $(took "$t") s ($out/between.json, exit $status)"

{
  echo "# $bin/pmtune_bench_between $main $scratch ${args[*]}; $gpu; build of $built"
  echo "# the per-op summaries of the served / exact ratios, then the default / exact ratios"
  grep -E '"kind":"(run|summary|default|phase)"' "$out/between.json" || true
} > "$out/between-summary.txt"
cat "$out/between-summary.txt"
echo "total: $(took "$t0") s"
exit "$status"
