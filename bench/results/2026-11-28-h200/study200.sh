#!/bin/bash
# study200.sh [OP...]: issue 30's random-sizes study on one H200 (bench/serve/random.sh: seed 1,
# 20 sizes an op in f32 and 10 in each other type, each tuned exactly on this H200, served in the
# three set-ups and timed in one run), one op after another (default: add reduce matadd filter),
# served the shipped results of this build, with h200fill.sh's document in place of the H200's
# where a call before made one on this warm machine (build/h200/nvidia-h200.json.gz).
# Everything in build/random, resumed by a call after on the same machine: the default tuning
# (set-up c, and b its export imported) is then skipped and the exact tunings stored reused; an op
# whose summary a call before wrote is not run again. Stopped LIMIT (default 560) s after the
# start. Each op's folder in $OUT/study.tar.gz, the exact tunings as $OUT/exact.db.gz.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
doc=build/h200/nvidia-h200.json.gz
if [ -f $doc ]; then cp $doc build/share/pmtune/results/nvidia-h200.json.gz; PM_COMMIT+=+h200fill
else echo "no $doc (h200fill.sh not run on this machine): the shipped H200 document"; fi
mkdir -p build/random build/study
ops=("$@"); [ ${#ops[@]} = 0 ] && ops=(add reduce matadd filter)
skip=0; [ -f build/random/tuned.ok ] && skip=1 # the default tuning finished
t0=$(date +%s)
for op in ${ops[@]}; do
  [ -f build/study/$op/random-summary.txt ] && grep -q '"kind":"target"' build/study/$op/random-summary.txt &&
    { echo "study $op: done a call before"; continue; }
  left=$(( ${LIMIT:-560} - ($(date +%s) - t0) ))
  [ $left -gt 20 ] || { echo "study $op: left for the next call"; continue; }
  SKIP_TUNE=$skip OPS=$op DBDIR=build/random timeout $left \
    bench/serve/random.sh build/study/$op > /tmp/study-$op.log 2>&1
  echo "study $op exit $? at $(( $(date +%s) - t0 )) s"
  cp /tmp/study-$op.log build/study/$op/ 2>/dev/null
  grep -q "^phase tune-default: [0-9]" /tmp/study-$op.log && touch build/random/tuned.ok
  [ -f build/random/tuned.ok ] && skip=1
done
tar -C build -czf $OUT/study.tar.gz study
gzip -1 -c build/random/exact.db > $OUT/exact.db.gz
for op in ${ops[@]}; do grep -h '"kind":"target"' build/study/$op/random-summary.txt 2>/dev/null | cut -c1-330; done
