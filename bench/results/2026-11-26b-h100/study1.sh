#!/bin/bash
# study1.sh [OP...]: issue 30's random-sizes study (bench/serve/random.sh) on one GPU, one op after
# another (default: add reduce matadd), all in build/random and served the shipped results of this
# build. Databases a call before brought back travel in .device/study (tuned.db, exact.db) and are
# resumed: the default tuning is then skipped and the exact tunings already stored reused. Each
# op's folder comes back in $OUT/study.tar.gz, the databases as $OUT/tuned.db and $OUT/exact.db.
cd /work/main
# this build, over what an earlier call on this machine left (build/random, the databases, stays)
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
mkdir -p build/random
for f in tuned.db exact.db; do [ -f .device/study/$f ] && cp .device/study/$f build/random/; done
ops=("$@"); [ ${#ops[@]} = 0 ] && ops=(add reduce matadd)
skip=0; [ -f build/random/tuned.db ] && skip=1
t0=$(date +%s)
for op in ${ops[@]}; do
  SKIP_TUNE=$skip OPS=$op DBDIR=build/random timeout $(( ${LIMIT:-560} - ($(date +%s) - t0) )) \
    bench/serve/random.sh /tmp/study/$op > /tmp/study-$op.log 2>&1
  echo "study $op exit $? at $(( $(date +%s) - t0 )) s"
  cp /tmp/study-$op.log /tmp/study/$op/ 2>/dev/null
  skip=1
done
tar -C /tmp -czf $OUT/study.tar.gz study
cp build/random/tuned.db build/random/exact.db $OUT/
for op in ${ops[@]}; do grep '"kind":"target"' /tmp/study/$op/random-summary.txt | cut -c1-330; done
