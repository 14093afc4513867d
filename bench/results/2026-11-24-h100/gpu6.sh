#!/bin/bash
# gpu6.sh: at the --dtype of pmtune bench: matadd at 10000x10000 and 8192x8192 and add at 2^28 in
# every type, tuned exactly, then benched against a device-to-device copy of each type's own
# bytes in one run (issue 16's matadd target: at least 97% of the copy); pmtune explain of a
# bf16 size; test_gpu_ops' largest add (its count of runs mended).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/t.db
timeout 200 build/tools/pmtune tune --device 0 --op matadd --size 10000x10000 --size 8192x8192 --dtype all --db /tmp/t.db > $OUT/tune-matadd.txt 2>&1; echo "tune exit $?"
timeout 60 build/tools/pmtune tune --device 0 --op add --size 268435456 --dtype all --db /tmp/t.db > $OUT/tune-add.txt 2>&1; echo "tune exit $?"
grep "^gpu" $OUT/tune-matadd.txt $OUT/tune-add.txt | cut -c1-150
timeout 120 build/tools/pmtune bench --op matadd --size 10000x10000 --size 8192x8192 --dtype all --db /tmp/t.db > $OUT/bench-matadd.txt 2>&1; echo "bench exit $?"; cat $OUT/bench-matadd.txt
timeout 60 build/tools/pmtune bench --op add --size 268435456 --dtype all --db /tmp/t.db > $OUT/bench-add.txt 2>&1; echo "bench exit $?"; cat $OUT/bench-add.txt
build/tools/pmtune explain --op matadd --size 9000x9000 --dtype bf16 --db /tmp/t.db > $OUT/explain-bf16.txt 2>&1; cat $OUT/explain-bf16.txt
timeout 120 build/tests/test_gpu_ops --verbose --filter 'gpu_ops/add_every_variant_at_the_largest_n' > $OUT/test-gpu-ops-largest-add.log 2>&1; echo "largest add exit $?"; grep -E "runs|Synthesis" $OUT/test-gpu-ops-largest-add.log
