#!/bin/bash
# wide.sh: the grid's lines of aspect 64 and 1/64 (2^(k-3) x 2^(k+3), k = 6..13, their
# transposes and unround twins: tuner/space.c), which the grid gained after results/ was tuned,
# for matadd (each order) and filter (each border and radius), on a machine of four GPUs, one
# type per GPU (f32, f16, bf16, f64 on GPUs 0-3), as the grid was tuned (--budget 100), each run
# carried among its sizes, no candidate after TIME (default 40) s a run, into build/wide/TYPE.db.
# Output to $OUT/wide-logs.txt (each type headed #####), exports to $OUT/wide-TYPE.json.gz.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
sizes=$(awk 'function odd(j,  v) { v = int(2 ^ j * sqrt(2)); return v % 2 ? v : v + 1 }
  BEGIN { for (k = 6; k <= 13; k++) {
    printf "%dx%d %dx%d %dx%d %dx%d ", 2^(k-3), 2^(k+3), 2^(k+3), 2^(k-3),
      odd(k-3), odd(k+3), odd(k+3), odd(k-3) } }')
echo "sizes: $sizes"
mkdir -p build/wide
types=(f32 f16 bf16 f64)
for d in 0 1 2 3; do
  t=${types[$d]}
  ( db=build/wide/$t.db log=/tmp/wide-$t.txt t0=$(date +%s); rm -f $db
    tune() { build/tools/pmtune tune --dtype $t --budget 100 --time ${TIME:-40} --device $d --db $db "$@" >> $log 2>&1
             echo "wide $t $* exit $? at $(( $(date +%s) - t0 )) s" | cut -c1-120 | tee -a $log; }
    for o in row col; do tune --op matadd --order $o $(for s in $sizes; do echo "--size $s"; done); done
    for b in clamp zero; do
      for r in 1 2 3; do tune --op filter --border $b $(for s in $sizes; do echo "--size $s:r$r"; done); done
    done
    build/tools/pmtune export /tmp/wide-$t.json --db $db >> $log 2>&1 &&
      gzip -9 -n -c /tmp/wide-$t.json > $OUT/wide-$t.json.gz
  ) &
done
wait
for t in ${types[@]}; do echo "##### $t"; cat /tmp/wide-$t.txt; done > $OUT/wide-logs.txt
for t in ${types[@]}; do grep -E "^gpu [0-9]  (all|carry)" /tmp/wide-$t.txt; done
ls -la $OUT
