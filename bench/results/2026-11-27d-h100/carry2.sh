#!/bin/bash
# carry2.sh [STEP]: the four filter groups of wide3.sh carried to the end on one H100. For each
# group (f16:zero:3 bf16:zero:2 f16:zero:2 bf16:zero:3): the shipped H100 document, wide.sh's and
# wide2.sh's exports and this folder's export of the group (carry-*.json.gz where carry1.sh made
# one, else wide3-*.json.gz) imported, then `pmtune tune --carry` (the group's kernels compiled in
# one batch first, since 0600c14), stopped STEP (default 80) s after its start; the group's rows
# exported to $OUT/carry2-TYPE-BORDER-rRADIUS.json.gz and build/carry2/ (for the next call on the
# same machine), the log to $OUT/carry2-log.txt. Then, in a second call, the set-up (a) study of
# f16 and bf16 on the merge: MERGE="bench/results/2026-11-27c-h100/wide2-carried.json.gz
# $(ls build/carry2/*.json.gz)" bash bench/results/2026-11-27d-h100/study1a.sh f16 bf16
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
before=bench/results/2026-11-27b-h100 wide2=bench/results/2026-11-27c-h100/wide2-carried.json.gz
here=bench/results/2026-11-27d-h100 log=$OUT/carry2-log.txt t0=$(date +%s)
mkdir -p build/carry build/carry2
for job in f16:zero:3 bf16:zero:2 f16:zero:2 bf16:zero:3; do
  IFS=: read -r t b r <<< "$job"
  name=$t-$b-r$r db=build/carry/$name.db mine=$here/carry-$name.json.gz
  [ -f $mine ] || mine=$here/wide3-$name.json.gz
  rm -f $db
  for doc in results/nvidia-h100-80gb-hbm3.json.gz $before/wide-4types.json.gz $wide2 $mine; do
    PMTUNE_RESULTS=none build/tools/pmtune import $doc --db $db >> $log 2>&1
  done
  PMTUNE_RESULTS=none timeout -s INT ${1:-80} build/tools/pmtune tune --carry --op filter \
    --border $b --size 8x512:r$r --dtype $t --device 0 --db $db >> $log 2>&1
  echo "carry $name exit $? at $(( $(date +%s) - t0 )) s" | tee -a $log
  PMTUNE_RESULTS=none build/tools/pmtune export /tmp/$name.json --db $db >> $log 2>&1 &&
    python3 - /tmp/$name.json $t border=$b $r <<'PY' && gzip -9 -n -c /tmp/$name.json > $OUT/carry2-$name.json.gz
import json, sys
path, t, variant, r = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
doc = json.load(open(path))
doc["measurements"] = [m for m in doc["measurements"] if m["op"] == "filter" and m["dtype"] == t
                       and m["variant"] == variant and m["radius"] == r]
json.dump(doc, open(path, "w"))
PY
  cp $OUT/carry2-$name.json.gz build/carry2/ 2>/dev/null
done
grep "carry  \|  all  " $log
