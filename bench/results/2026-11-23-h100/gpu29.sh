#!/bin/bash
# gpu29.sh: on the device: how far the shipped-vs-fresh ratio of the small reduces moves from one
# comparison to the next on one H100 (gpu28 measured reduce n = 65,536 at 1.0375, gpu23 the same
# two configurations at 0.986): the reduce sizes tuned fresh once, then compared with the shipped
# results three times with 5 rounds (the default) and twice with 40.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
rm -f /tmp/m.db /tmp/s.db; build/tools/pmtune db init --db /tmp/m.db
for r in 5 5 5 40 40; do
  PMTUNE_RESULTS=$PWD/results timeout 200 build/tools/pmtune_bench_between /tmp/m.db /tmp/s.db --tune-sizes \
    --ops reduce --rounds $r --commit $(cat .device/COMMIT) >> $OUT/reduce-repeats.json 2>> $OUT/reduce-repeats.log
  echo "rounds $r exit $?"
done
python3 - $OUT/reduce-repeats.json <<'PY'
import json, sys, collections
rows, rounds = collections.defaultdict(list), None
for d in map(json.loads, open(sys.argv[1])):
    if d["kind"] == "run": rounds = d["rounds"]
    if d["kind"] == "tune_size": rows[d["problem"]].append("%.3f(%d)" % (d["ratio"], rounds))
for p, rs in rows.items(): print("%-14s %s" % (p, " ".join(rs)))
PY
