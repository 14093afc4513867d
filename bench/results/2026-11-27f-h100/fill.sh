#!/bin/bash
# fill.sh JOB...: the H100 document's missing grid lines (issue 30 item 4) tuned and carried on
# every GPU of the machine, a GPU taking the next job of a shared queue, longest first as given:
# TYPE:BORDER:RADIUS (f16:clamp:1), filter's group: the aspect-64 sizes that neither the shipped
# document nor wide-4types.json.gz has (wide_missing.py) tuned, --budget 100, no candidate after
# TIME (default 90) s, then the group carried (`pmtune tune --carry`); matadd:TYPE, the same for
# both of matadd's orders; default, the default `pmtune tune` into build/random/tuned.db (study3's
# set-up c) and its export imported into build/random/merged.db (set-up b), kept for study.sh on
# this warm machine. Each job in a database of its own that imports the shipped document and
# wide-4types.json.gz; stopped LIMIT (default 240) s after it starts, and no job is started
# within 60 s of the call's own end, BUDGET (default 560) s after its start: those are printed as
# "left" for the next call. Exports (the job's rows alone) to build/fill/*.json.gz, all of this
# call's in $OUT/fill-exports.tar; every job's output in $OUT/fill-log.txt. Where the GPUs are
# H200s, ../2026-11-27c-h100/h200.sh runs instead (LIMIT=BUDGET-40).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
t0=$(date +%s) end=$(( $(date +%s) + ${BUDGET:-560} ))
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
if nvidia-smi -L | grep -q H200; then # H200s came: item 4's H200 document instead
  LIMIT=$(( ${BUDGET:-560} - 40 )) exec bench/results/2026-11-27c-h100/h200.sh
fi
wide=bench/results/2026-11-27b-h100 shipped=results/nvidia-h100-80gb-hbm3.json.gz
mkdir -p build/fill/logs build/random && rm -f build/fill/queue build/fill/logs/* build/fill/done build/fill/left
printf '%s\n' "$@" > build/fill/queue
pop() { flock build/fill/queue.lock sh -c 'head -1 build/fill/queue; sed -i 1d build/fill/queue'; }

filter_job() { # filter_job TYPE BORDER RADIUS GPU DB LOG
  local t=$1 b=$2 r=$3 d=$4 db=$5 log=$6 sizes rc
  sizes=$(python3 $wide/wide_missing.py $t $shipped $wide/wide-4types.json.gz |
          awk -v b=$b -v r=":r$r" '$1 == "filter" && $3 == b && index($0, r) { $1 = $2 = $3 = ""; print }')
  if [ -n "${sizes// /}" ]; then
    step build/tools/pmtune tune --op filter --dtype $t --border $b $sizes --budget 100 \
      --time ${TIME:-90} --device $d --db $db >> $log 2>&1
    rc=$?; say "tune $(echo $sizes | wc -w | awk '{print $1 / 2}') sizes exit $rc"
  fi
  step build/tools/pmtune tune --carry --op filter --border $b --size 8x512:r$r --dtype $t \
    --device $d --db $db >> $log 2>&1
  say "carry exit $?"
}
matadd_job() { # matadd_job TYPE GPU DB LOG
  local t=$1 d=$2 db=$3 log=$4 o sizes rc
  for o in row col; do
    sizes=$(python3 $wide/wide_missing.py $t $shipped $wide/wide-4types.json.gz |
            awk -v o=$o '$1 == "matadd" && $3 == o { $1 = $2 = $3 = ""; print }')
    if [ -n "${sizes// /}" ]; then
      step build/tools/pmtune tune --op matadd --dtype $t --order $o $sizes --budget 100 \
        --time ${TIME:-90} --device $d --db $db >> $log 2>&1
      rc=$?; say "tune $o $(echo $sizes | wc -w | awk '{print $1 / 2}') sizes exit $rc"
    fi
    step build/tools/pmtune tune --carry --op matadd --order $o --size 8x512 --dtype $t \
      --device $d --db $db >> $log 2>&1
    say "carry $o exit $?"
  done
}
worker() { # worker GPU: jobs from the queue until it is empty or the call's end is near
  local d=$1 job
  while job=$(pop) && [ -n "$job" ]; do
    if [ $(( end - $(date +%s) )) -lt 60 ]; then echo "$job" >> build/fill/left; continue; fi
    local name=${job//:/-} js=$(date +%s)
    local db=build/fill/$name.db log=build/fill/logs/$name.txt
    say() { echo "fill $name (GPU $d) $* at $(( $(date +%s) - js )) s" | tee -a $log; }
    step() { # step COMMAND...: COMMAND, interrupted at the job's or the call's deadline
      local left=$(( js + ${LIMIT:-240} - $(date +%s) )) cl=$(( end - 20 - $(date +%s) ))
      [ $cl -lt $left ] && left=$cl
      [ $left -gt 5 ] || { echo "skipped (deadline): $*" >> $log; return 124; }
      timeout -s INT $left "$@"
    }
    if [ "$job" = default ]; then
      rm -f build/random/tuned.db.part
      step env -u PMTUNE_RESULTS build/tools/pmtune tune --device $d --db build/random/tuned.db.part \
        > $log 2>&1 &&
        mv build/random/tuned.db.part build/random/tuned.db
      say "tune-default exit $?"
      rm -f build/random/merged.db && build/tools/pmtune export build/random/node.json \
        --db build/random/tuned.db > /dev/null && build/tools/pmtune import build/random/node.json \
        --db build/random/merged.db > /dev/null
      say "merged.db exit $?"
      echo "$job" >> build/fill/done; continue
    fi
    if [ -f $db ]; then say "resumed (a call before's database on this warm machine)"; else
      for doc in $shipped $wide/wide-4types.json.gz; do
        build/tools/pmtune import $doc --db $db >> $log 2>&1
      done
      say "imported"
    fi
    IFS=: read -r a b c <<< "$job"
    if [ $a = matadd ]; then matadd_job $b $d $db $log; else filter_job $a $b $c $d $db $log; fi
    build/tools/pmtune export /tmp/$name.json --db $db >> $log 2>&1 &&
      python3 - /tmp/$name.json $job <<'PY' && gzip -9 -n -c /tmp/$name.json > build/fill/$name.json.gz
import json, sys
path, job = sys.argv[1], sys.argv[2].split(":")
doc = json.load(open(path))
if job[0] == "matadd":
    keep = lambda m: m["op"] == "matadd" and m["dtype"] == job[1]
else:
    keep = lambda m: (m["op"] == "filter" and m["dtype"] == job[0] and m["variant"] == "border=" + job[1]
                      and m["radius"] == int(job[2]))
doc["measurements"] = [m for m in doc["measurements"] if keep(m)]
json.dump(doc, open(path, "w"))
print(len(doc["measurements"]), "measurements kept")
PY
    say "export exit $?"; echo "$job" >> build/fill/done
  done
}
n=$(nvidia-smi -L | wc -l)
for d in $(seq 0 $((n - 1))); do worker $d & done
wait
(cd build/fill && tar cf $OUT/fill-exports.tar $(for j in $(cat done); do [ -f ${j//:/-}.json.gz ] && echo ${j//:/-}.json.gz; done))
cat build/fill/logs/*.txt > $OUT/fill-log.txt
grep -h "^fill \|carry  \|^all " build/fill/logs/*.txt | tail -80
echo "done: $(cat build/fill/done | tr '\n' ' ')"
echo "left: $(cat build/fill/left 2>/dev/null | tr '\n' ' ')"
echo "fill.sh at $(( $(date +%s) - t0 )) s"
