#!/bin/bash
# carry1.sh: what wide3.sh's run on one H100 (SEQ=1) left undone, the carrying, then filter's
# set-up (a) study of f16 and bf16 with the result merged, on one GPU in one call. For each
# group (JOBS, default f16:zero:3 bf16:zero:2 f16:zero:2 bf16:zero:3, in that order): the shipped H100
# document, wide.sh's and wide2.sh's exports and wide3's export of the group (brought in
# .device/wide3) imported, then `pmtune tune --carry` (each step stopped STEP, default 40, s
# after its start), the group's rows exported to $OUT/carry-TYPE-BORDER-rRADIUS.json.gz. Then
# study1a.sh f16 bf16 with MERGE= wide2's export and these, on the exact tunings study1a.sh made
# the call before (.device/study/exact-TYPE.db.gz): timing alone.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
before=bench/results/2026-11-27b-h100 wide2=bench/results/2026-11-27c-h100/wide2-carried.json.gz
t0=$(date +%s); mkdir -p build/carry build/random
for t in f16 bf16; do gzip -dc .device/study/exact-$t.db.gz > build/random/exact-$t.db; done
for job in ${JOBS:-f16:zero:3 bf16:zero:2 f16:zero:2 bf16:zero:3}; do
  IFS=: read -r t b r <<< "$job"
  name=$t-$b-r$r db=build/carry/$name.db log=$OUT/carry-log.txt
  for doc in results/nvidia-h100-80gb-hbm3.json.gz $before/wide-4types.json.gz $wide2 .device/wide3/wide3-$name.json.gz; do
    PMTUNE_RESULTS=none build/tools/pmtune import $doc --db $db >> $log 2>&1
  done
  PMTUNE_RESULTS=none timeout -s INT ${STEP:-40} build/tools/pmtune tune --carry --op filter \
    --border $b --size 8x512:r$r --dtype $t --device 0 --db $db >> $log 2>&1
  echo "carry $name exit $? at $(( $(date +%s) - t0 )) s" | tee -a $log
  PMTUNE_RESULTS=none build/tools/pmtune export /tmp/$name.json --db $db >> $log 2>&1 &&
    python3 - /tmp/$name.json $t border=$b $r <<'PY' && gzip -9 -n -c /tmp/$name.json > $OUT/carry-$name.json.gz
import json, sys
path, t, variant, r = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
doc = json.load(open(path))
doc["measurements"] = [m for m in doc["measurements"] if m["op"] == "filter" and m["dtype"] == t
                       and m["variant"] == variant and m["radius"] == r]
json.dump(doc, open(path, "w"))
PY
done
grep "carry  " $OUT/carry-log.txt
MERGE="$wide2 $(ls $OUT/carry-*.json.gz | tr '\n' ' ')" bash bench/results/2026-11-27d-h100/study1a.sh f16 bf16
