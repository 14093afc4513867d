#!/bin/bash
# mstudy.sh: after msearch.sh, on the same warm machine: the random-sizes study's matadd problems
# (pmtune_bench_random --ops matadd: 20 in f32 and 10 in each other type a draw) at seeds SEEDS
# (default 4 5 6 7, one a GPU: GPU i the i-th), each tuned exactly into build/ms/xS.db (kept: a
# later call times alone), then timed served in three set-ups in one run: "shipped" (an empty
# database and the shipped results alone), "twins" (a database of the shipped H200 document and
# msearch.sh's twins exports, build/ms/ms-exports.tar) and "search" (those and its rounds exports too). Output to
# $OUT/mstudy-seedS.json and $OUT/mstudy-log-seedS.txt. Stopped at LIMIT (default 560) s.
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
t0=$(date +%s)
cp results/*.json.gz build/share/pmtune/results/
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
x=$(mktemp -d) && tar -C $x -xf build/ms/ms-exports.tar
ls $x
if [ ! -f build/ms/c2.db ]; then
  rm -f build/ms/c1.db
  build/tools/pmtune import results/nvidia-h200.json.gz --db build/ms/c1.db
  for f in $x/h200-twins-*.json.gz; do build/tools/pmtune import $f --db build/ms/c1.db; done
  cp build/ms/c1.db build/ms/c2.db.part
  for f in $x/h200-rounds-*.json.gz; do build/tools/pmtune import $f --db build/ms/c2.db.part; done
  mv build/ms/c2.db.part build/ms/c2.db
fi
d=0
for s in ${SEEDS:-4 5 6 7}; do
  ( cp build/ms/c1.db build/ms/c1-$s.db; cp build/ms/c2.db build/ms/c2-$s.db; rm -f build/ms/e$s.db
    PMTUNE_RESULTS=build/share/pmtune/results timeout $(( t0 + ${LIMIT:-560} - $(date +%s) )) \
      build/tools/pmtune_bench_random build/ms/x$s.db --setup shipped=build/ms/e$s.db:shipped \
      --setup twins=build/ms/c1-$s.db --setup search=build/ms/c2-$s.db --seed $s --ops matadd \
      --device $d --commit "$(cat .device/COMMIT)+msearch" > $OUT/mstudy-seed$s.json 2> $OUT/mstudy-log-seed$s.txt
    echo "seed $s exit $?" ) &
  d=$(( d + 1 ))
done
wait
grep -h '"kind":"target"' $OUT/mstudy-seed*.json | cut -c1-330
ls -la $OUT
