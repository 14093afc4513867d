#!/bin/bash
# gpu23.sh: on the device: tuned out of the box (issue 17), measured in one run. With an empty
# database, what a call is served at each default tune size (the shipped results) against a fresh
# tuning of that size on this H100, the two timed in alternating rounds in one process
# (pmtune_bench_between --tune-sizes); gpu21 compared two benches minutes apart instead.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
rm -f /tmp/m.db /tmp/s.db; build/tools/pmtune db init --db /tmp/m.db
PMTUNE_RESULTS=$PWD/results timeout 500 build/tools/pmtune_bench_between /tmp/m.db /tmp/s.db --tune-sizes \
  --commit $(cat .device/COMMIT) > $OUT/shipped-vs-fresh.json 2> $OUT/shipped-vs-fresh.log; echo "between exit $?"
grep -E '"kind":"(summary|phase)"' $OUT/shipped-vs-fresh.json
python3 - $OUT/shipped-vs-fresh.json <<'PY'
import json, sys
for d in map(json.loads, open(sys.argv[1])):
    if d["kind"] == "tune_size":
        print("%-7s %-34s shipped=%-5s same=%-5s %8.4f / %8.4f ms  %.3f" % (d["op"], d["problem"], d["served_shipped"], d["same_config"], d.get("served_ms", 0), d.get("exact_ms", 0), d.get("ratio", 0)))
PY
