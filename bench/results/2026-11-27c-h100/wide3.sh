#!/bin/bash
# wide3.sh JOB...: the aspect-64 lines of some filter groups completed, one group a GPU, each job
# TYPE:BORDER:RADIUS (f16:zero:3) on GPU 0, 1, ... in order: the shipped results, wide.sh's and
# wide2.sh's carried exports imported into build/wide3/JOB.db; the group's aspect-64 sizes that
# none of them has tuned (wide_missing.py; --budget 100, no candidate after TIME, default 90, s);
# then the group carried (`pmtune tune --carry`: what no H100 measured at a size). Every step
# stops LIMIT (default 300) s after the start. Each job's rows (its type, border and radius) as
# an export document $OUT/wide3-TYPE-BORDER-rRADIUS.json.gz, its output in
# $OUT/wide3-log-TYPE-BORDER-rRADIUS.txt; the exports also in build/wide3 for the next call on
# the same machine: MERGE="bench/results/2026-11-27c-h100/wide2-carried.json.gz
# $(ls build/wide3/*.json.gz)" bench/results/2026-11-27b-h100/study4.sh filter.
# With SEQ=1, the jobs run one after another, all on GPU 0, each with its own LIMIT (a machine
# of one GPU).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
before=bench/results/2026-11-27b-h100 here=bench/results/2026-11-27c-h100
mkdir -p build/wide3
d=0
for job in "$@"; do
  IFS=: read -r t b r <<< "$job"
  name=$t-$b-r$r
  ( db=build/wide3/$name.db log=$OUT/wide3-log-$name.txt t0=$(date +%s); rm -f $db
    say() { echo "wide3 $name $* at $(( $(date +%s) - t0 )) s" | tee -a $log; }
    step() { # step COMMAND...: COMMAND, interrupted at the deadline; skipped past it
      local left=$(( t0 + ${LIMIT:-300} - $(date +%s) ))
      [ $left -gt 5 ] || { echo "skipped (deadline): $*" >> $log; return 124; }
      timeout -s INT $left "$@"
    }
    for doc in results/nvidia-h100-80gb-hbm3.json.gz $before/wide-4types.json.gz $here/wide2-carried.json.gz; do
      build/tools/pmtune import $doc --db $db >> $log 2>&1
    done
    say "imported"
    sizes=$(python3 $before/wide_missing.py $t $before/wide-4types.json.gz $here/wide2-carried.json.gz |
            awk -v b=$b -v r=":r$r" '$1 == "filter" && $3 == b && index($0, r) { $1 = $2 = $3 = ""; print }')
    if [ -n "${sizes// /}" ]; then
      step build/tools/pmtune tune --op filter --dtype $t --border $b $sizes --budget 100 \
        --time ${TIME:-90} --device $d --db $db >> $log 2>&1
      say "tune $(echo $sizes | wc -w | awk '{print $1 / 2}') sizes exit $?"
    fi
    step build/tools/pmtune tune --carry --op filter --border $b --size 8x512:r$r --dtype $t \
      --device $d --db $db >> $log 2>&1
    say "carry exit $?"
    build/tools/pmtune export /tmp/wide3-$name.json --db $db >> $log 2>&1 &&
      python3 - /tmp/wide3-$name.json $t border=$b $r <<'PY' && gzip -9 -n -c /tmp/wide3-$name.json > $OUT/wide3-$name.json.gz
import json, sys
path, t, variant, r = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
doc = json.load(open(path))
doc["measurements"] = [m for m in doc["measurements"] if m["op"] == "filter" and m["dtype"] == t
                       and m["variant"] == variant and m["radius"] == r]
json.dump(doc, open(path, "w"))
PY
    rc=$?; cp $OUT/wide3-$name.json.gz build/wide3/ 2>/dev/null # for MERGE on this machine
    say "export exit $rc"
  ) &
  if [ -n "$SEQ" ]; then wait; else d=$((d + 1)); fi
done
wait
grep -h "^wide3 \|carry  " $OUT/wide3-log-*.txt
