#!/bin/bash
# twins.sh: matadd's unround twins on H200s (issue 30). The grid (tuner/op.h: pm__op_grid) has,
# for each round matrix size, a twin of odd sides (pm__grid_odd: twice the elements, the same
# aspect), which db/known.c decides unround sizes from; the shipped matadd documents hold only the
# aspect-64 lines' twins (16 of ~64 a type and order). Here those missing, of TYPES (default f16
# bf16) in both orders: each (type, order) a group, the groups dealt to the machine's GPUs, one
# after another on each; each group in its own database under build/tw that imported the shipped
# H200 document first: `pmtune tune --op matadd --size ... --budget 100` (the sizes smallest
# first) until its share of the call less CARRY (default 70) s, then `pmtune tune --carry` of
# its group until 15 s before its share's end, then exported, the measurements made since the
# call began alone (../2026-11-28c-h200/new_rows.py), to $OUT/h200-twins-TYPE-ORDER.json.gz; the
# output to $OUT/twins-TYPE-ORDER.txt. Stopped at LIMIT (default 380) s. Not shipped by itself:
# a merge and the random-sizes study decide.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-380} ))
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
here=bench/results/2026-11-28i-h200 n=$(nvidia-smi -L | wc -l)
groups=(); for t in ${TYPES:-f16 bf16}; do for o in row col; do groups+=($t-$o); done; done
since=$(date -u +%Y-%m-%dT%H:%M:%S)
mkdir -p build/tw
step() { # step LOG UNTIL COMMAND...: COMMAND, stopped (Ctrl-C: what is measured is stored) at UNTIL
  local log=$1 lim=$(( $2 - $(date +%s) )); shift 2
  [ $lim -gt 5 ] || { echo "skipped (no time left): $*" >> $log; return 124; }
  timeout -s INT $lim "$@" >> $log 2>&1
  echo "exit $? at $(( $(date +%s) - t0 )) s: ${*:1:6} ..." >> $log
}
one() { # one TYPE-ORDER GPU END
  local t=${1%-*} o=${1#*-} d=$2 db=build/tw/$1.db log=$OUT/twins-$1.txt
  build/tools/pmtune import results/nvidia-h200.json.gz --db $db > $log 2>&1
  local sizes=$(python3 $here/twins.py $t $o results/nvidia-h200.json.gz)
  echo "sizes: $sizes" >> $log
  local args=(); for s in $sizes; do args+=(--size $s); done
  step $log $(( $3 - ${CARRY:-70} )) build/tools/pmtune tune --op matadd --dtype $t --order $o \
    "${args[@]}" --budget 100 --device $d --db $db
  step $log $(( $3 - 15 )) build/tools/pmtune tune --carry --op matadd --dtype $t --order $o \
    --size 1024x1024 --device $d --db $db
  build/tools/pmtune export /tmp/tw-$1.json --db $db >> $log 2>&1 &&
    python3 bench/results/2026-11-28c-h200/new_rows.py /tmp/tw-$1.json $since >> $log &&
    gzip -9 -n -c /tmp/tw-$1.json > $OUT/h200-twins-$1.json.gz
  echo "export exit $? at $(( $(date +%s) - t0 )) s" >> $log
}
k=$(( (${#groups[@]} + n - 1) / n )) # groups a GPU tunes, one after the other
for d in $(seq 0 $(( n - 1 ))); do
  ( j=1; for i in $(seq $d $n $(( ${#groups[@]} - 1 ))); do
      one ${groups[$i]} $d $(( t0 + (end - t0) * j / k )); j=$(( j + 1 )); done ) &
done
wait
for g in ${groups[@]}; do
  echo "== $g"; grep -hE "^exit|^export|skipped|^gpu [0-9]  (all|carry)|kept" $OUT/twins-$g.txt
done
ls -la $OUT
