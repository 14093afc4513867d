#!/bin/bash
# h200.sh [TYPE...]: item 4's H200 document, made by carrying alone (run at 179fda7, one type a call on one H200: ../2026-11-27g-h200): on a machine of
# H200s, one type a GPU (f32, f16, bf16, f64 on GPUs 0-3, or the types given), the shipped H100
# document imported into build/h200/TYPE.db, then `pmtune tune --carry --grid --dtype TYPE`: in
# each group the H200 measured none of, the H100's sizes, the H100's best configurations of each
# size's neighbourhood timed on the H200 (tuner/session.c, carry_group). Every step stops LIMIT
# (default 480) s after the start, so the export follows in time; a run stopped resumes from
# build/h200/TYPE.db (a call before's, on the same warm machine) or .device/h200/TYPE.json.gz (a
# call before's export) and times only what is left. Each type's
# export, the H200's rows alone (the H100's are the shipped document already), made compact
# (results/compact.py), to $OUT/h200-TYPE.json.gz; the output to $OUT/h200-log-TYPE.txt.
# Merged after (import the four, export, compact.py) they are results/nvidia-h200.json.gz.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
types=("$@"); [ ${#types[@]} = 0 ] && types=(f32 f16 bf16 f64)
mkdir -p build/h200
for d in "${!types[@]}"; do
  t=${types[$d]}
  ( db=build/h200/$t.db log=$OUT/h200-log-$t.txt t0=$(date +%s)
    say() { echo "h200 $t $* at $(( $(date +%s) - t0 )) s" | tee -a $log; }
    if [ -f $db ]; then say "resumed (a call before's database on this warm machine)"; else
      for doc in results/nvidia-h100-80gb-hbm3.json.gz .device/h200/$t.json.gz; do
        [ -f $doc ] && build/tools/pmtune import $doc --db $db >> $log 2>&1
      done
      say "imported"
    fi
    timeout -s INT $(( t0 + ${LIMIT:-480} - $(date +%s) )) \
      build/tools/pmtune tune --carry --grid --dtype $t --device $d --db $db >> $log 2>&1
    say "carry exit $?"
    build/tools/pmtune export /tmp/h200-$t.json --db $db >> $log 2>&1 &&
      python3 bench/results/2026-11-27c-h100/h200_rows.py /tmp/h200-$t.json &&
      python3 results/compact.py /tmp/h200-$t.json >> $log &&
      gzip -9 -n -c /tmp/h200-$t.json > $OUT/h200-$t.json.gz
    say "export exit $?"
  ) &
done
wait
grep -h "^h200 \|carry  " $OUT/h200-log-*.txt | tail -60
