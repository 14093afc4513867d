#!/bin/sh
# bench_import.sh: times `pmtune import` of documents of 20,000 and 200,000 measurements
# (make_doc.py: the shipped H100 results repeated under fabricated GPU UUIDs) into an empty
# database, into a full one (holding one such document; the new one names other GPUs), and the
# same document again into that (every row kept). Prints the wall time and rows a second for
# each, and the CPU time (user + sys), which another process on the machine disturbs less.
# usage: [ROWS='20000 200000'] [BUILD=commit] bench/import/bench_import.sh PMTUNE [WORKDIR]
# (from the repository root; PMTUNE a Release build)
set -eu
PMTUNE=${1:?usage: bench_import.sh PMTUNE [WORKDIR]}
W=${2:-/tmp/pmtune-bench-import}
SRC=results/nvidia-h100-80gb-hbm3.json
mkdir -p "$W"
# BUILD names the commit PMTUNE was built from where it is not this checkout's (a baseline).
BUILD=${BUILD:-$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench' || echo ' (with uncommitted changes)')}
echo "# bench/import/bench_import.sh $PMTUNE; $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; build of $BUILD"
now() { date +%s.%N; }
for rows in ${ROWS:-20000 200000}; do
  python3 bench/import/make_doc.py "$SRC" "$rows" "$W/doc-$rows.json" 0
  python3 bench/import/make_doc.py "$SRC" "$rows" "$W/doc-$rows-other.json" 1
  for case in empty full again; do  # again: the same document into the full database
    case $case in
      empty) rm -f "$W/db-$rows.db" "$W/db-$rows.db-wal" "$W/db-$rows.db-shm"; doc=doc-$rows.json ;;
      full) doc=doc-$rows-other.json ;;
      again) doc=doc-$rows.json ;;
    esac
    t0=$(now)
    out=$(/usr/bin/time -f '%U %S' -o "$W/cpu" "$PMTUNE" import "$W/$doc" --db "$W/db-$rows.db" 2>&1) || { echo "$out"; exit 1; }
    t1=$(now)
    cpu=$(awk '{print $1 + $2}' "$W/cpu")
    echo "$rows rows, $case: $(echo "$t1 - $t0" | bc -l | xargs printf '%.2f') s, $(echo "$rows / ($t1 - $t0)" | bc -l | xargs printf '%.0f') rows/s; CPU (user + sys) $cpu s, $(echo "$rows / $cpu" | bc -l | xargs printf '%.0f') rows/s of CPU ($out)"
  done
done
