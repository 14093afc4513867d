#!/bin/bash
# gpu21.sh: on the device: tuned out of the box (issue 17). With an empty database, pmtune bench
# of the default sizes served from the shipped results (results/); then a fresh default tuning and
# the same bench served from it, with no shipped results; the two compared problem by problem.
# Then the serving GPU tests again (serving's decision chain changed).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
PMTUNE_RESULTS=$PWD/results build/tools/pmtune explain --op reduce --size 1048576 --db /tmp/empty.db
PMTUNE_RESULTS=$PWD/results build/tools/pmtune explain --op matadd --size 3000x3000 --json --db /tmp/empty.db
PMTUNE_RESULTS=$PWD/results timeout 120 build/tools/pmtune bench --json --db /tmp/empty.db > $OUT/bench-shipped.json 2> $OUT/bench-shipped.err; echo "bench shipped exit $?"
timeout 300 build/tools/pmtune tune --device 0 --db /tmp/fresh.db > $OUT/tune-fresh.txt 2>&1; echo "tune exit $?"; tail -1 $OUT/tune-fresh.txt
PMTUNE_RESULTS=none timeout 120 build/tools/pmtune bench --json --db /tmp/fresh.db > $OUT/bench-fresh.json 2> $OUT/bench-fresh.err; echo "bench fresh exit $?"
python3 - $OUT/bench-shipped.json $OUT/bench-fresh.json <<'PY' | tee $OUT/compare.txt
import json, sys
load = lambda f: {(d["op"], d["problem"]): d for d in map(json.loads, open(f)) if d.get("op")}
a, b = load(sys.argv[1]), load(sys.argv[2])
rs = []
print("# shipped results (empty database) against a fresh tuning, pmtune bench's tuned_ms, one run")
for k in sorted(a):
    if k not in b: continue
    r = a[k]["tuned_ms"] / b[k]["tuned_ms"]; rs.append(r)
    print("%-7s %-26s %-8s shipped=%-5s %9.4f ms  fresh %9.4f ms  ratio %.3f" % (k[0], k[1], a[k]["source"], a[k]["shipped"], a[k]["tuned_ms"], b[k]["tuned_ms"], r))
rs.sort()
print("problems %d; within 3%%: %d; median ratio %.3f; worst %.3f" % (len(rs), sum(r <= 1.03 for r in rs), rs[len(rs)//2], rs[-1]))
PY
timeout 150 ctest --test-dir build -R "test_gpu_serve|test_gpu_graphs|test_gpu_streams" -j3 --output-on-failure > $OUT/ctest-serving.log 2>&1; echo "ctest exit $?"; grep -E "Test +#|tests passed" $OUT/ctest-serving.log
