#!/usr/bin/env bash
# random.sh KERNEL OUT: the random-sizes study ("every size, every type, out of the box") for a
# kernel of one's own, as bench/serve/random.sh makes it for the built-in ops: KERNEL (a description
# of one or two dims) is tuned at a grid of sizes into DBDIR/tuned.db (for a matrix: squares 2^k x
# 2^k, 64 to 16384, and lines 4 and 16 times as wide as tall and as tall as wide, each below 2^28
# elements with its twin of odd sides;
# for a vector: n = 2^k and the odd 2^(k+1/2), 2^8 to 2^28), every run carried; its export (with
# --kernel) is the results folder DBDIR/results that set-up "shipped" reads beside an empty
# database, imported alone into "merged"; then pmtune_bench_random --kernel tunes F32 random
# sizes exactly into DBDIR/exact.db and times what each set-up serves against that and the seed.
# From the repository root with the build in build/ (BUILD to change); DBDIR default
# build/krandom/NAME (a rerun resumes); SEED (1), F32 (20). Output in OUT.
set -euo pipefail
kernel=${1:?usage: bench/kernels/random.sh KERNEL OUT}
out=${2:?usage: bench/kernels/random.sh KERNEL OUT}
bin=${BUILD:-build}/tools
name=$(basename "$kernel" .json)
dir=${DBDIR:-build/krandom/$name}
mkdir -p "$out" "$dir/results"
dims=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["dims"]))' "$kernel")
sizes=()
if [ "$dims" = 1 ]; then
  for k in $(seq 8 28); do
    sizes+=("$((1 << k))")
    odd=$(awk -v k=$k 'BEGIN { n = int(2 ^ (k + 0.5)); if (n % 2 == 0) n++; print n }')
    [ "$k" -lt 28 ] && sizes+=("$odd")
  done
else
  for k in $(seq 6 14); do
    for a in 0 1 2; do # aspect 1, 4, 16, both ways
      for way in 1 -1; do
        [ "$a" = 0 ] && [ "$way" = -1 ] && continue
        r=$((k + way * a)) c=$((k - way * a))
        [ "$c" -ge 3 ] && [ "$r" -ge 3 ] || continue
        sizes+=("$((1 << r))x$((1 << c))")
        [ $((r + c)) -lt 28 ] || continue # a twin of 2^28 elements would pass 2 GiB
        sizes+=("$(awk -v r=$r -v c=$c 'BEGIN { o = int(2 ^ (r + 0.5)); if (o % 2 == 0) o++;
                    p = int(2 ^ (c + 0.5)); if (p % 2 == 0) p++; printf "%dx%d", o, p }')")
      done
    done
  done
fi
t0=$(date +%s)
: > "$out/tune-grid.txt"
for ((i = 0; i < ${#sizes[@]}; i += 60)); do # at most 64 --size a run; each run carried
  args=()
  for s in "${sizes[@]:i:60}"; do args+=(--size "$s"); done
  "$bin/pmtune" tune --kernel "$kernel" "${args[@]}" --device 0 --db "$dir/tuned.db" \
    >> "$out/tune-grid.txt"
done
echo "phase tune-grid: $(( $(date +%s) - t0 )) s, ${#sizes[@]} sizes ($out/tune-grid.txt)"
"$bin/pmtune" export "$dir/results/$name.json" --kernel "$kernel" --db "$dir/tuned.db"
rm -f "$dir/merged.db" "$dir/merged.db-wal" "$dir/merged.db-shm"
"$bin/pmtune" import "$dir/results/$name.json" --kernel "$kernel" --db "$dir/merged.db" \
  > "$out/merge.txt"
PMTUNE_RESULTS=$dir/results "$bin/pmtune_bench_random" "$dir/exact.db" --kernel "$kernel" \
  --setup "shipped=$dir/empty.db:shipped" --setup "merged=$dir/merged.db:shipped" \
  --setup "tuned=$dir/tuned.db:shipped" --seed "${SEED:-1}" --f32 "${F32:-20}" --other 0 \
  ${PM_COMMIT:+--commit "$PM_COMMIT"} > "$out/random.json" 2> "$out/random.log"
grep '"kind":"target"' "$out/random.json"
