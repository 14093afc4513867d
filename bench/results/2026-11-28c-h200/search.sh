#!/bin/bash
# search.sh: an H200's own search at the grid's sizes of reduce and filter (issue 30: the H200's
# document held only configurations the H100 found), on every GPU of the machine, one type per
# GPU in turn (f32, f16, bf16, f64 over GPUs 0..N-1), each into its own database under build/h200s
# that imported the shipped H200 document first (what it measured is not measured again); a
# database a call before left on this warm machine is resumed. In each type: `pmtune tune --grid
# --op reduce`, then `--op filter` (--budget 100; the grid's order: round sizes from the smallest,
# then their twins) until CARRY (default 230) s before the call's end, LIMIT (default 570) s after
# its start (a GPU of several types gives each its share of both); then reduce's group and
# filter's six carried (`pmtune tune --carry`); then exported,
# the measurements made since the first call began alone (new_rows.py), to
# $OUT/h200-search-TYPE.json.gz; the output to $OUT/search-TYPE.txt.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-570} ))
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
n=$(nvidia-smi -L | wc -l) types=(f32 f16 bf16 f64) here=bench/results/2026-11-28c-h200
mkdir -p build/h200s
if [ ! -f build/h200s/since ]; then
  date -u +%Y-%m-%dT%H:%M:%S > build/h200s/since
  build/tools/pmtune import results/nvidia-h200.json.gz --db build/h200s/base.db
  for t in ${types[@]}; do cp build/h200s/base.db build/h200s/$t.db; done
fi
since=$(cat build/h200s/since)
step() { # step LOG UNTIL COMMAND...: COMMAND, stopped (Ctrl-C: what is measured is stored) at UNTIL
  local log=$1 lim=$(( $2 - $(date +%s) )); shift 2
  [ $lim -gt 5 ] || { echo "skipped (no time left): $*" >> $log; return 124; }
  timeout -s INT $lim "$@" >> $log 2>&1
  echo "exit $? at $(( $(date +%s) - t0 )) s: $*" >> $log
}
one() { # one TYPE GPU END: this type's steps, none past END
  local t=$1 d=$2 db=build/h200s/$1.db log=$OUT/search-$1.txt now=$(date +%s)
  local search=$(( $3 - ${CARRY:-230} * ($3 - now) / (end - t0) )) carry=$(( $3 - 35 ))
  step $log $(( search < now + 60 ? search : now + 60 )) build/tools/pmtune tune --grid --op reduce \
    --dtype $t --budget 100 --device $d --db $db
  step $log $search build/tools/pmtune tune --grid --op filter --dtype $t --budget 100 --device $d --db $db
  step $log $carry build/tools/pmtune tune --carry --op reduce --dtype $t --size 1024 --device $d --db $db
  for b in clamp zero; do for r in 1 2 3; do
    step $log $carry build/tools/pmtune tune --carry --op filter --dtype $t --border $b \
      --size 8x512:r$r --device $d --db $db
  done; done
  build/tools/pmtune export /tmp/s-$t.json --db $db >> $log 2>&1 &&
    python3 $here/new_rows.py /tmp/s-$t.json $since >> $log &&
    gzip -9 -n -c /tmp/s-$t.json > $OUT/h200-search-$t.json.gz
  echo "export exit $? at $(( $(date +%s) - t0 )) s" >> $log
}
k=$(( (4 + n - 1) / n ))  # types a GPU tunes, one after the other, each in its share of the time
for d in $(seq 0 $(( n - 1 ))); do
  ( j=1; for i in $(seq $d $n 3); do one ${types[$i]} $d $(( t0 + (end - t0) * j / k )); j=$(( j + 1 )); done ) &
done
wait
for t in ${types[@]}; do
  echo "== $t"; grep -hE "^exit|^export|skipped|^gpu [0-9]  (all|carry)|kept" $OUT/search-$t.txt
done
ls -la $OUT
