#!/bin/bash
# wide2.sh [TYPE...]: the step after wide.sh (not yet run when written): on a machine of four GPUs,
# one type per GPU (f32, f16, bf16, f64 on GPUs 0-3, or the types given), the shipped results and
# wide.sh's exports (wide-4types.json.gz) imported into build/wide2/TYPE.db; the aspect-64 sizes
# wide.sh's runs did not reach tuned (--budget 100, no candidate after TIME, default 45, s a run);
# then every group of matadd and filter carried (`pmtune tune --carry`: what no H100 measured at a
# size alone, so the shipped sizes' pairs are not timed again), no candidate after CARRY (default
# 30) s a group. Every step stops (SIGINT: what was measured is stored) LIMIT (default 400) s
# after the start, so the export follows in time. Its first run (f32 f16 bf16 f64, TIME=45
# CARRY=25, no LIMIT yet) passed the device's 600 s: f32's export alone came back. Each type's
# export, made compact (results/compact.py), to $OUT/wide2-TYPE.json.gz, its output to
# $OUT/wide2-log-TYPE.txt as it runs. A type whose export a call before brought back
# (.device/wide2/TYPE.json.gz) resumes from it.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
here=bench/results/2026-11-27b-h100
types=("$@"); [ ${#types[@]} = 0 ] && types=(f32 f16 bf16 f64)
mkdir -p build/wide2
for d in "${!types[@]}"; do
  t=${types[$d]}
  ( db=build/wide2/$t.db log=$OUT/wide2-log-$t.txt t0=$(date +%s); rm -f $db
    say() { echo "wide2 $t $* at $(( $(date +%s) - t0 )) s" | tee -a $log; }
    step() { # step COMMAND...: COMMAND, interrupted at the deadline; skipped past it
      local left=$(( t0 + ${LIMIT:-400} - $(date +%s) ))
      [ $left -gt 5 ] || { echo "skipped (deadline): $*" >> $log; return 124; }
      timeout -s INT $left "$@"
    }
    for doc in results/nvidia-h100-80gb-hbm3.json.gz $here/wide-4types.json.gz .device/wide2/$t.json.gz; do
      [ -f $doc ] && build/tools/pmtune import $doc --db $db >> $log 2>&1
    done
    say "imported"
    # the sizes of each run wide.sh did not reach: "OP VARIANT --size S ..." a line
    python3 $here/wide_missing.py $t $here/wide-4types.json.gz .device/wide2/$t.json.gz > /tmp/missing-$t.txt
    while read -r op key value sizes; do
      [ -n "$sizes" ] || continue
      step build/tools/pmtune tune --op $op --dtype $t --$key $value $sizes --budget 100 \
        --time ${TIME:-45} --device $d --db $db >> $log 2>&1
      rc=$?; say "tune $op $value $(echo $sizes | wc -w | awk '{print $1 / 2}') sizes exit $rc"
    done < /tmp/missing-$t.txt
    for g in "filter --border zero --size 8x512:r3" "filter --border zero --size 8x512:r2" \
             "filter --border clamp --size 8x512:r3" "filter --border clamp --size 8x512:r2" \
             "filter --border zero --size 8x512:r1" "filter --border clamp --size 8x512:r1" \
             "matadd --order row --size 8x512" "matadd --order col --size 8x512"; do
      step build/tools/pmtune tune --carry --op $g --dtype $t --time ${CARRY:-30} --device $d --db $db >> $log 2>&1
      say "carry $g exit $?"
    done
    build/tools/pmtune export /tmp/wide2-$t.json --db $db >> $log 2>&1 &&
      python3 results/compact.py /tmp/wide2-$t.json >> $log && gzip -9 -n -c /tmp/wide2-$t.json > $OUT/wide2-$t.json.gz
    say "export exit $?"
  ) &
done
wait
grep -h "^wide2 \|carry  " $OUT/wide2-log-*.txt
ls -la $OUT
