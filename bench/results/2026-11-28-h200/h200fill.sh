#!/bin/bash
# h200fill.sh: on one H200, the sizes of the H100's document the H200's lacks (no working
# measurement but a seed there) tuned (--budget 100), then their groups carried (`pmtune tune
# --carry`), in build/h200/fill.db, which imports the shipped H200 document first (a database a
# call before left on this warm machine is resumed). Then exported, the H200's rows alone,
# through results/compact.py: $OUT/nvidia-h200.json.gz, kept as build/h200/nvidia-h200.json.gz
# for study200.sh on the same machine. A step stops at its time limit, and none starts within
# 40 s of the call's end, LIMIT (default 560) s after its start; the output to
# $OUT/h200fill-log.txt. Of the 28 sizes it listed first, 5611d94's call (LIMIT=165) tuned the 15
# of filter clamp r=3 in f16 and bf16 and a second call the two of clamp r=2 92681x1449, none
# carried over its whole group (so not shipped: a size beside them was decided from the default);
# their measurements, h200-fill-part-5611d94.json.gz, are imported after the shipped document:
# `groups` lists the 11 sizes left (f64), `carried` the six groups.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} )) db=build/h200/fill.db log=$OUT/h200fill-log.txt
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
say() { echo "h200fill $* at $(( $(date +%s) - t0 )) s" | tee -a $log; }
step() { # step SECONDS COMMAND...: COMMAND, stopped (Ctrl-C: what is measured is stored) at its limit
  local lim=$1 left=$(( end - 40 - $(date +%s) )); shift
  [ $left -lt $lim ] && lim=$left
  [ $lim -gt 5 ] || { say "skipped (the call's end is near): $*"; return 124; }
  timeout -s INT $lim "$@" >> $log 2>&1
}
mkdir -p build/h200
if [ -f $db ]; then say "resumed"; else
  for doc in results/nvidia-h200.json.gz bench/results/2026-11-28-h200/h200-fill-part-5611d94.json.gz; do
    build/tools/pmtune import $doc --db $db >> $log 2>&1; say "imported $doc exit $?"
  done
fi
# TYPE BORDER RADIUS SIZE...: of the 28 sizes the two documents compared listed, the 11 left
groups=(
  "f64 clamp 3 1024x65536 1449x92681 46341x725 65536x1024 92681x1449"
  "f64 zero 2 1449x92681 5793x23171 11585x11585 23171x5793 65536x1024 92681x1449"
)
carried=("f16 clamp 3" "bf16 clamp 3" "f64 clamp 3" "f64 zero 2" "f16 clamp 2" "bf16 clamp 2")
for g in "${groups[@]}"; do
  set -- $g; t=$1 b=$2 r=$3; shift 3
  sizes=(); for s in "$@"; do sizes+=(--size $s:r$r); done
  step 150 build/tools/pmtune tune --op filter --dtype $t --border $b "${sizes[@]}" --budget 100 \
    --time ${TIME:-100} --device 0 --db $db
  say "tune $t $b r=$r, $# sizes, exit $?"
done
for g in "${carried[@]}"; do
  set -- $g
  step 90 build/tools/pmtune tune --carry --op filter --dtype $1 --border $2 --size 8x512:r$3 \
    --device 0 --db $db
  say "carry $1 $2 r=$3 exit $?"
done
build/tools/pmtune export /tmp/h200fill.json --db $db >> $log 2>&1 &&
  python3 bench/results/2026-11-27c-h100/h200_rows.py /tmp/h200fill.json &&
  python3 results/compact.py /tmp/h200fill.json >> $log &&
  gzip -9 -n -c /tmp/h200fill.json > build/h200/nvidia-h200.json.gz &&
  cp build/h200/nvidia-h200.json.gz $OUT/
say "export exit $?"
grep -h "^h200fill \|carry  \|^all \|kept" $log | tail -40
