#!/usr/bin/env bash
# load.sh: load on one tuning database on the GPU (tests/RELIABILITY.md, "Load on the database"): 16
# tuning processes (each `pmtune tune` of one small problem of its own, again and again) and 16
# serving processes (each pmtune_reliability_threads for a few seconds with 2 threads, again and
# again: every run opens the database, calls every op, checks each result, stores the cubins it
# compiles) for SECONDS. Then counts: runs and failures of each kind, "database is locked" (or busy)
# lines that reached a user (must be 0), lost rows (the measurements each finished tuning run says
# it stored, against the rows of its problem in the database: must be 0), and `pmtune db check`
# (must pass).
# Usage, from the repository root with the build in build/ (BUILD=DIR for another; PM_COMMIT names
# the commit built where git's would be wrong, as on a device given a copy of the tree):
#   bench/reliability/load.sh OUT [SECONDS]     (default 60; OUT receives every log and summary.txt)
# Exit status 0 only where every run succeeded, nothing was lost or locked, and the check passed.
set -uo pipefail
out=${1:?usage: bench/reliability/load.sh OUT [SECONDS]}
secs=${2:-60}
bin=${BUILD:-build}/tools
tuners=${TUNERS:-16}
servers=${SERVERS:-16}
for b in pmtune pmtune_reliability_threads; do
  [ -x "$bin/$b" ] || { echo "load.sh: $bin/$b is not built" >&2; exit 1; }
done
mkdir -p "$out/tune" "$out/serve"
db=$out/load.db
rm -f "$db" "$db-wal" "$db-shm"
end=$(( $(date +%s) + secs ))

# Tuner i, run k: add or reduce at an n no other run has.
tuner() {
  local i=$1 k=0 op n
  while [ "$(date +%s)" -lt "$end" ]; do
    op=$([ $((k % 2)) -eq 0 ] && echo add || echo reduce)
    n=$((100003 + i * 7919 + k * 131071))
    "$bin/pmtune" tune --device 0 --op "$op" --size "$n" --strategy random --budget 6 --samples 3 \
      --db "$db" > "$out/tune/$i-$k.txt" 2>&1
    echo "$op $n $? $i-$k" >> "$out/tune/$i.runs"
    k=$((k + 1))
  done
}

server() {
  local i=$1 k=0
  while [ "$(date +%s)" -lt "$end" ]; do
    "$bin/pmtune_reliability_threads" --seconds 3 --threads 2 --seed $((i * 1000 + k)) \
      --db "$db" > "$out/serve/$i-$k.txt" 2>&1
    echo "$k $?" >> "$out/serve/$i.runs"
    k=$((k + 1))
  done
}

SECONDS=0
for i in $(seq 0 $((tuners - 1))); do tuner "$i" & done
for i in $(seq 0 $((servers - 1))); do server "$i" & done
wait
took=$SECONDS

tune_runs=$(cat "$out"/tune/*.runs | wc -l)
tune_failed=$(awk '$3 != 0' "$out"/tune/*.runs | wc -l)
serve_runs=$(cat "$out"/serve/*.runs | wc -l)
serve_failed=$(awk '$2 != 0' "$out"/serve/*.runs | wc -l)
locked=$(cat "$out"/tune/*.txt "$out"/serve/*.txt | grep -ciE 'locked|SQLITE_BUSY')
wrong=$(cat "$out"/serve/*.txt | grep -c '^WRONG')

# Lost rows: each finished run's "M measured, W wrong, F failed" (its problem new: 0 stored
# before) against its problem's rows in an export of every measurement.
"$bin/pmtune" export "$out/all.json" --all --db "$db" > "$out/export.txt" 2>&1
written=0 present=0 lost=0
while read -r op n status run; do
  [ "$status" = 0 ] || continue
  # the run's total line (its last): the problem's own line says the same numbers again
  w=$(grep -oE '[0-9]+ measured, [0-9]+ wrong, [0-9]+ failed' "$out/tune/$run.txt" | tail -1 |
      awk '{ s += $1 + $3 + $5 } END { print s + 0 }')
  p=$(grep -c "\"op\":\"$op\".*\"n\":$n," "$out/all.json")
  written=$((written + w)) present=$((present + p))
  if [ "$p" -lt "$w" ]; then
    lost=$((lost + w - p))
    echo "lost: $op n=$n (tune/$run.txt): $w written, $p present" >> "$out/lost.txt"
  fi
done < <(cat "$out"/tune/*.runs)
"$bin/pmtune" db check --db "$db" > "$out/check.txt" 2>&1
check=$?

{
  echo "# bench/reliability/load.sh $out $secs; $tuners tuners, $servers servers;" \
       "$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null);" \
       "commit ${PM_COMMIT:-$(git describe --always --dirty 2>/dev/null)}"
  echo "$took s: tuning runs $tune_runs ($tune_failed failed), serving runs $serve_runs" \
       "($serve_failed failed, $wrong wrong results)"
  echo "measurements written $written, present $present, lost $lost;" \
       "'database is locked' lines reaching a user: $locked"
  echo "db check: $(tail -1 "$out/check.txt") (status $check)"
  # why runs failed, where some did: the end of the first failed run's output of each kind
  first=$(awk '$3 != 0 { print $4; exit }' "$out"/tune/*.runs)
  [ -n "$first" ] && echo "first failed tuning run ($first):" && tail -5 "$out/tune/$first.txt"
  first=$(for f in "$out"/serve/*.runs; do
            awk -v i="$(basename "$f" .runs)" '$2 != 0 { print i "-" $1 " (exit " $2 ")"; exit }' "$f"
          done | head -1)
  [ -n "$first" ] && echo "first failed serving run $first:" &&
    tail -8 "$out/serve/${first%% *}.txt"
} | tee "$out/summary.txt"
[ "$tune_failed" = 0 ] && [ "$serve_failed" = 0 ] && [ "$wrong" = 0 ] && [ "$lost" = 0 ] &&
  [ "$locked" = 0 ] && [ "$check" = 0 ] && [ "$tune_runs" -gt 0 ]
