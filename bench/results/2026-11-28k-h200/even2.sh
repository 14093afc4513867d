#!/bin/bash
# even2.sh: even.sh's study again with the experiment's rule as it now is (an EVEN bracket up to
# ln 4.1 wide: even.sh's even twins lie 4.04x apart, and ln 4 sent every one to the odd twins):
# the matadd problems of TYPES (default f16 bf16) at seeds SEEDS (default 4 5 6 7), tuned exactly
# again, timed served from the shipped results alone ("shipped": decided as the library decides,
# with no even size) and from a database of the shipped H200 document and even.sh's exports
# (h200-even-*-519606d.json.gz here) ("even"), PM_EXP_EVEN set. $OUT gets even2.tar.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none PM_EXP_EVEN=1
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-240} ))
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
cp results/*.json.gz build/share/pmtune/results/
here=bench/results/2026-11-28k-h200 n=$(nvidia-smi -L | wc -l) W=$OUT/w
mkdir -p build/ev $W
rm -f build/ev/even.db
build/tools/pmtune import results/nvidia-h200.json.gz --db build/ev/even.db > $W/even-db.txt
for f in $here/h200-even-*-519606d.json.gz; do build/tools/pmtune import $f --db build/ev/even.db >> $W/even-db.txt; done
seeds=(${SEEDS:-4 5 6 7}) dts=$(echo ${TYPES:-f16 bf16} | tr ' ' ,)
for d in $(seq 0 $(( n - 1 ))); do
  ( for i in $(seq $d $n $(( ${#seeds[@]} - 1 ))); do
      s=${seeds[$i]} lim=$(( end - $(date +%s) )); [ $lim -gt 5 ] || continue
      cp build/ev/even.db build/ev/even-$s.db; rm -f build/ev/e$s.db
      PMTUNE_RESULTS=build/share/pmtune/results timeout $lim \
        build/tools/pmtune_bench_random build/ev/x$s.db --setup shipped=build/ev/e$s.db:shipped \
        --setup even=build/ev/even-$s.db --seed $s --ops matadd --dtypes $dts --other 10 \
        --device $d --commit "$(cat .device/COMMIT)+even2" > $W/even2-study-seed$s.json \
        2> $W/even2-study-log-seed$s.txt
      echo "seed $s exit $? at $(( $(date +%s) - t0 )) s"
    done ) &
done
wait
grep -h '"kind":"target"' $W/even2-study-seed*.json | cut -c1-300
(cd $W && tar -cf ../even2.tar *) && rm -rf $W
ls -la $OUT
