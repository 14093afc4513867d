#!/usr/bin/env bash
# random.sh: the "random sizes" study on a GPU (bench/serve/random.c): makes the three
# set-ups a call may be served from, (c) "tuned" by the default `pmtune tune`, (b) "merged", a
# fresh database holding only the import of that tuning's `pmtune export` (what
# examples/slurm/merge.sbatch does with one node's export), (a) "shipped", an empty database; each
# with the shipped results beside it, as an installed pmtune has them; then runs pmtune_bench_random (which tunes its random problems exactly into
# exact.db and times what each set-up serves against that and against the default), and keeps
# everything in the folder OUT.
# Usage, from the repository root with the build in build/:
#   bench/serve/random.sh OUT
# Environment: BUILD (the build folder; default build), DBDIR (where the databases live; default
# build/random: a rerun on the same machine resumes, each tuning skipping what is stored), SEED
# (default 1), F32 (random problems per op in f32; default 20), OTHER (per op in each other type;
# default 10), OPS (default every op), RESULTS (the shipped results' folder; default
# $BUILD/share/pmtune/results), SKIP_TUNE=1 (skip phase (c) where $DBDIR/tuned.db exists),
# PM_COMMIT (the commit to name; default git's, else the one built in).
# Each phase's time is printed, and kept in OUT.
set -euo pipefail
out=${1:?usage: bench/serve/random.sh OUT}
build=${BUILD:-build}
bin=$build/tools
dir=${DBDIR:-build/random}
results=${RESULTS:-$build/share/pmtune/results}
mkdir -p "$out" "$dir"
tuned=$dir/tuned.db
merged=$dir/merged.db
empty=$dir/empty.db
exact=$dir/exact.db
commit=${PM_COMMIT:-$(git describe --always --dirty 2>/dev/null || true)}
args=(--seed "${SEED:-1}" --f32 "${F32:-20}" --other "${OTHER:-10}")
[ -n "$commit" ] && args+=(--commit "$commit")
[ -n "${OPS:-}" ] && args+=(--ops "$OPS")
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null |
      sed 's/, /, driver /' || echo "GPU unknown")
built=${commit:-"the commit built in"}
now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
[ -d "$results" ] ||
  { echo "random.sh: no shipped results in $results (build first, or set RESULTS)" >&2; exit 1; }

t0=$(now)
# (c) tuned: the default tuning, resumed where a rerun finds it stored
t=$(now)
if [ "${SKIP_TUNE:-0}" = 1 ] && [ -f "$tuned" ]; then
  echo "phase tune-default: skipped (SKIP_TUNE=1, $tuned exists)"
else
  echo "# $bin/pmtune tune --device 0 --db $tuned; $gpu; build of $built" > "$out/tune-default.txt"
  "$bin/pmtune" tune --device 0 --db "$tuned" >> "$out/tune-default.txt" \
    2> >(tee "$out/tune-default.log" >&2) ||
    { echo "random.sh: pmtune tune failed (see $out/tune-default.log)" >&2; exit 1; }
  s=$(took "$t")
  echo "# wall time: $s s" >> "$out/tune-default.txt"
  echo "phase tune-default: $s s ($out/tune-default.txt)"
fi

# (b) merged: tuned.db's export imported into a fresh database, checked
t=$(now)
rm -f "$merged" "$merged-wal" "$merged-shm"
{ # each after the one before succeeded (set -e does not reach into the left of ||)
  "$bin/pmtune" export "$dir/node.json" --db "$tuned" &&
    "$bin/pmtune" import "$dir/node.json" --db "$merged" &&
    "$bin/pmtune" db check --db "$merged"
} > "$out/merge.txt" ||
  { echo "random.sh: making $merged failed (see $out/merge.txt)" >&2; exit 1; }
echo "phase merge: $(took "$t") s ($merged from $dir/node.json, $out/merge.txt)"

# (a) shipped: no database at all (a missing file reads as an empty one), the shipped results after
rm -f "$empty" "$empty-wal" "$empty-shm"

# the study: exact tunings into exact.db (resumed), then the timings
t=$(now)
status=0
cmd=("$bin/pmtune_bench_random" "$exact" --setup "shipped=$empty:shipped"
     --setup "merged=$merged:shipped" --setup "tuned=$tuned:shipped" "${args[@]}")
PMTUNE_RESULTS=$results "${cmd[@]}" > "$out/random.json" 2> >(tee "$out/random.log" >&2) ||
  status=$?
echo "phase random: $(took "$t") s ($out/random.json, exit $status)"

{
  echo "# PMTUNE_RESULTS=$results ${cmd[*]}; $gpu; build of $built"
  echo "# per set-up: a summary by op and type, then over all; then each set-up's targets"
  echo "# (>= 95% within 0.95 of exact, every one within 0.90, none over 1.03x the default)"
  grep -E '"kind":"(run|summary|target|phase)"' "$out/random.json" || true
} > "$out/random-summary.txt"
cat "$out/random-summary.txt"
echo "total: $(took "$t0") s"
exit "$status"
