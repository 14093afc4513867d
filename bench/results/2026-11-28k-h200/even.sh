#!/bin/bash
# even.sh: an experiment (bench/experiments/even_lines.patch, built in; PM_EXP_EVEN set turns it
# on): matadd's "even twins" (evens.py: the grid twins' elements and aspect, the contiguous side 2
# mod 4) of TYPES (default f16 bf16) in both orders tuned on H200s and carried, then the
# random-sizes study's matadd problems of those types at seeds SEEDS (default 4 5 6 7) timed served
# from the shipped results alone ("shipped") and from a database of the shipped H200 document and
# the even twins ("even"), once as the library decides and once with the experiment's rule.
# Tuning: each (type, order) a group in its own database under build/ev that imported the shipped
# H200 document first, the groups dealt to the GPUs, `pmtune tune --op matadd --size ... --budget
# 100` then `--carry`, all by TUNE (default 240) s; each exported, the measurements since the call
# began alone (../2026-11-28c-h200/new_rows.py). Study: the seeds dealt to the GPUs, each tuned
# exactly into build/ev/xS.db by its first run; every step stopped at LIMIT (default 540) s. $OUT
# gets even.tar: the exports (h200-even-TYPE-ORDER.json.gz), the logs, the study's JSON lines
# (even-study-seedS-{library,exp}.json) and their logs.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
unset PM_EXP_EVEN
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-540} )) tend=$(( $(date +%s) + ${TUNE:-240} ))
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
cp results/*.json.gz build/share/pmtune/results/
here=bench/results/2026-11-28k-h200 n=$(nvidia-smi -L | wc -l) W=$OUT/w
mkdir -p build/ev $W
groups=(); for t in ${TYPES:-f16 bf16}; do for o in row col; do groups+=($t-$o); done; done
since=$(date -u +%Y-%m-%dT%H:%M:%S)
step() { # step LOG UNTIL COMMAND...: COMMAND, stopped (Ctrl-C: what is measured is stored) at UNTIL
  local log=$1 lim=$(( $2 - $(date +%s) )); shift 2
  [ $lim -gt 5 ] || { echo "skipped (no time left): ${*:1:8}" >> $log; return 124; }
  timeout -s INT $lim "$@" >> $log 2>&1
  echo "exit $? at $(( $(date +%s) - t0 )) s: ${*:1:8} ..." >> $log
}
one() { # one GROUP GPU END
  local t=${1%-*} o=${1#*-} d=$2 db=build/ev/$1.db log=$W/even-$1.txt
  [ -f $db ] || build/tools/pmtune import results/nvidia-h200.json.gz --db $db >> $log 2>&1
  local sizes=($(python3 $here/evens.py $t $o))
  for i in $(seq 0 60 $(( ${#sizes[@]} - 1 ))); do # pmtune tune takes at most 64 --size
    local args=(); for s in ${sizes[@]:$i:60}; do args+=(--size $s); done
    step $log $(( $3 - ${CARRY:-35} )) build/tools/pmtune tune --op matadd --dtype $t --order $o \
      "${args[@]}" --budget 100 --device $d --db $db
  done
  step $log $(( $3 - 8 )) build/tools/pmtune tune --carry --op matadd --dtype $t --order $o \
    --size 1024x1024 --device $d --db $db
  build/tools/pmtune export /tmp/ev-$1.json --db $db >> $log 2>&1 &&
    python3 bench/results/2026-11-28c-h200/new_rows.py /tmp/ev-$1.json $since >> $log &&
    gzip -9 -n -c /tmp/ev-$1.json > $W/h200-even-$1.json.gz
  echo "export exit $? at $(( $(date +%s) - t0 )) s" >> $log
}
k=$(( (${#groups[@]} + n - 1) / n ))
for d in $(seq 0 $(( n - 1 ))); do
  ( j=1; for i in $(seq $d $n $(( ${#groups[@]} - 1 ))); do
      one ${groups[$i]} $d $(( t0 + (tend - t0) * j / k )); j=$(( j + 1 )); done ) &
done
wait
for g in ${groups[@]}; do echo "== $g"; grep -hE "^exit|^export|kept" $W/even-$g.txt; done
rm -f build/ev/even.db
build/tools/pmtune import results/nvidia-h200.json.gz --db build/ev/even.db > $W/even-db.txt
for f in $W/h200-even-*.json.gz; do build/tools/pmtune import $f --db build/ev/even.db >> $W/even-db.txt; done
cat $W/even-db.txt
seeds=(${SEEDS:-4 5 6 7}) dts=$(echo ${TYPES:-f16 bf16} | tr ' ' ,)
for d in $(seq 0 $(( n - 1 ))); do
  ( for i in $(seq $d $n $(( ${#seeds[@]} - 1 ))); do
      s=${seeds[$i]}
      for way in library exp; do
        cp build/ev/even.db build/ev/even-$s.db; rm -f build/ev/e$s.db
        [ $way = exp ] && export PM_EXP_EVEN=1
        lim=$(( end - $(date +%s) )); [ $lim -gt 5 ] || continue
        PMTUNE_RESULTS=build/share/pmtune/results timeout $lim \
          build/tools/pmtune_bench_random build/ev/x$s.db --setup shipped=build/ev/e$s.db:shipped \
          --setup even=build/ev/even-$s.db --seed $s --ops matadd --dtypes $dts --other 10 \
          --device $d --commit "$(cat .device/COMMIT)+even-$way" > $W/even-study-seed$s-$way.json \
          2> $W/even-study-log-seed$s-$way.txt
        echo "seed $s $way exit $? at $(( $(date +%s) - t0 )) s"
      done
      unset PM_EXP_EVEN
    done ) &
done
wait
grep -h '"kind":"target"' $W/even-study-seed*.json | cut -c1-300
(cd $W && tar -cf ../even.tar *) && rm -rf $W
ls -la $OUT
