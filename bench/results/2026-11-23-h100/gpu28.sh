#!/bin/bash
# gpu28.sh: on the device, with the templates of 705c7ea and the results shipped from them: the
# whole GPU suite, then gpu23.sh's comparison again (the shipped results, tuned on GPU-cc769276,
# against a fresh tuning on this H100, in alternating rounds in one run).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu.log | head -30
rm -f /tmp/m.db /tmp/s.db; build/tools/pmtune db init --db /tmp/m.db
PMTUNE_RESULTS=$PWD/results timeout 250 build/tools/pmtune_bench_between /tmp/m.db /tmp/s.db --tune-sizes \
  --commit $(cat .device/COMMIT) > $OUT/shipped-vs-fresh.json 2> $OUT/shipped-vs-fresh.log; echo "between exit $?"
grep -E '"kind":"(summary|phase)"' $OUT/shipped-vs-fresh.json
python3 - $OUT/shipped-vs-fresh.json <<'PY'
import json, sys
r = []
for d in map(json.loads, open(sys.argv[1])):
    if d["kind"] == "tune_size":
        r.append(d.get("ratio", 9))
        if not d.get("within") or not d["served_shipped"]: print("NOT WITHIN OR NOT SHIPPED:", d)
r.sort(); print("problems %d, within 3%%: %d, median %.4f, worst %.4f" % (len(r), sum(x <= 1.03 for x in r), r[len(r)//2], r[-1]))
PY
