#!/bin/bash
# msearch.sh: matadd on H200s (issue 30): its unround twins in f32 and f64 (the grid's, which the
# shipped documents held at the aspect-64 lines alone; f16 and bf16's came in
# ../2026-11-28i-h200), and the H200's own search at the round grid sizes in every type (the H200
# document held there the H100's best configurations timed on the H200, no search of its own).
# Each (type, order) a group, in its own database under build/ms that imported the shipped H200
# document first (a database a call before left on this warm machine is resumed: what it measured
# is not measured again, and a twins export it made is kept); the groups dealt to the machine's GPUs, f32 and f64 first. In a group of
# f32 or f64: `pmtune tune --op matadd --size TWINS --budget 100` (../2026-11-28i-h200/twins.py,
# smallest first), the group carried (`pmtune tune --carry`), exported, the measurements since the
# call began alone (../2026-11-28c-h200/new_rows.py), to h200-twins-TYPE-ORDER.json.gz; then
# in every group the round sizes (rounds.py) the same way, carried again, exported, the
# measurements since its round search began alone, to h200-rounds-TYPE-ORDER.json.gz. Each
# step stopped (Ctrl-C: what is measured is stored) at its share of LIMIT (default 560) s; the
# output to ms-TYPE-ORDER.txt; $OUT gets them in two tar files (ms-logs.tgz, ms-exports.tar).
# Not shipped by itself: a merge and the random-sizes study (mstudy.sh) decide.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} ))
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
here=bench/results/2026-11-28j-h200 n=$(nvidia-smi -L | wc -l) C=${CARRY:-35}
groups=(f32-row f32-col f64-row f64-col f16-row f16-col bf16-row bf16-col)
mkdir -p build/ms $OUT/w; W=$OUT/w
[ -f build/ms/since ] || date -u +%Y-%m-%dT%H:%M:%S > build/ms/since
since=$(cat build/ms/since)
step() { # step LOG UNTIL COMMAND...: COMMAND, stopped (Ctrl-C: what is measured is stored) at UNTIL
  local log=$1 lim=$(( $2 - $(date +%s) )); shift 2
  [ $lim -gt 5 ] || { echo "skipped (no time left): ${*:1:8}" >> $log; return 124; }
  timeout -s INT $lim "$@" >> $log 2>&1
  echo "exit $? at $(( $(date +%s) - t0 )) s: ${*:1:8} ..." >> $log
}
phase() { # phase GROUP KIND SIZES UNTIL SINCE: KIND's sizes tuned, the group carried and exported
  local t=${1%-*} o=${1#*-} d=$GPU db=build/ms/$1.db log=$W/ms-$1.txt sizes=($3)
  if [ -f build/ms/h200-$2-$1.json.gz ]; then # exported by a call before: as it was
    cp build/ms/h200-$2-$1.json.gz $W/ && echo "== $2: exported by a call before" >> $log; return
  fi
  echo "== $2: ${#sizes[@]} sizes" >> $log
  for i in $(seq 0 60 $(( ${#sizes[@]} - 1 ))); do # pmtune tune takes at most 64 --size
    local args=(); for s in ${sizes[@]:$i:60}; do args+=(--size $s); done
    step $log $(( $4 - C )) build/tools/pmtune tune --op matadd --dtype $t --order $o \
      "${args[@]}" --budget 100 --device $d --db $db
  done
  step $log $(( $4 - 8 )) build/tools/pmtune tune --carry --op matadd --dtype $t --order $o \
    --size 1024x1024 --device $d --db $db
  build/tools/pmtune export /tmp/ms-$1-$2.json --db $db >> $log 2>&1 &&
    python3 bench/results/2026-11-28c-h200/new_rows.py /tmp/ms-$1-$2.json $5 >> $log &&
    gzip -9 -n -c /tmp/ms-$1-$2.json > $W/h200-$2-$1.json.gz &&
    { [ $2 = rounds ] || cp $W/h200-$2-$1.json.gz build/ms/; }
  echo "export exit $? at $(( $(date +%s) - t0 )) s" >> $log
}
one() { # one GROUP START END: its phases, none past END
  local t=${1%-*} o=${1#*-} db=build/ms/$1.db log=$W/ms-$1.txt
  [ -f $db ] || build/tools/pmtune import results/nvidia-h200.json.gz --db $db >> $log 2>&1
  local mid=$2
  if [ $t = f32 ] || [ $t = f64 ]; then
    mid=$(( $2 + ($3 - $2) * 45 / 100 ))
    phase $1 twins "$(python3 bench/results/2026-11-28i-h200/twins.py $t $o results/nvidia-h200.json.gz)" $mid $since
  fi
  [ -f build/ms/$1.rsince ] || date -u +%Y-%m-%dT%H:%M:%S > build/ms/$1.rsince
  phase $1 rounds "$(python3 $here/rounds.py $t)" $3 $(cat build/ms/$1.rsince)
}
k=$(( (${#groups[@]} + n - 1) / n )) # groups a GPU tunes, one after the other
for d in $(seq 0 $(( n - 1 ))); do
  ( export GPU=$d; s=$t0 j=1
    for i in $(seq $d $n $(( ${#groups[@]} - 1 ))); do
      # the first group (f32 or f64, two phases) two thirds of the time where a GPU has two
      e=$(( k == 2 && j == 1 ? t0 + (end - t0) * 2 / 3 : t0 + (end - t0) * j / k ))
      one ${groups[$i]} $s $e; s=$(date +%s) j=$(( j + 1 ))
    done ) &
done
wait
for g in ${groups[@]}; do
  echo "== $g"; grep -hE "^==|^exit|^export|skipped|^gpu [0-9]  (all|carry)|kept" $W/ms-$g.txt
done
(cd $W && tar -czf ../ms-logs.tgz ms-*.txt && tar -cf ../ms-exports.tar h200-*.json.gz) && rm -rf $W &&
  cp $OUT/ms-exports.tar build/ms/ # for mstudy.sh
ls -la $OUT
