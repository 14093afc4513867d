#!/bin/bash
# reference.sh: filter's tiled CPU reference (ac3ccaf) on one H100, in one call: (1) carry2.sh's
# bf16 r=2 zero group carried again from the same imports (the H100 document of 7d86070, brought
# in .device/h100-7d86070.json.gz, then wide's, wide2's and carry1's exports), to set beside
# carry2's 68.6 s (verify 37.8 s); (2) the default `pmtune tune` into a fresh database (159.8 s
# at 7d86070, verify 22.7 s); (3) test_gpu_ops' filter cases, every variant of every type
# against the new reference bit for bit, as time allows. Logs to $OUT. The build travels in
# .device.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
t0=$(date +%s) log=$OUT/carry3-log.txt db=build/carry3.db
rm -f $db build/tuned3.db
for doc in .device/h100-7d86070.json.gz bench/results/2026-11-27b-h100/wide-4types.json.gz \
           bench/results/2026-11-27c-h100/wide2-carried.json.gz \
           bench/results/2026-11-27d-h100/carry-bf16-zero-r2.json.gz; do
  build/tools/pmtune import $doc --db $db >> $log 2>&1 || exit 1
done
timeout -s INT 120 build/tools/pmtune tune --carry --op filter --border zero --size 8x512:r2 \
  --dtype bf16 --device 0 --db $db >> $log 2>&1
echo "carry exit $? at $(( $(date +%s) - t0 )) s"; grep "carry  \|  all  " $log
timeout -s INT 230 build/tools/pmtune tune --device 0 --db build/tuned3.db > $OUT/tune-default.txt 2>&1
echo "tune exit $? at $(( $(date +%s) - t0 )) s"; tail -2 $OUT/tune-default.txt
left=$(( t0 + 540 - $(date +%s) ))
(cd build/tests && timeout $left ./test_gpu_ops --verbose --filter 'gpu_ops/filter*' &&
 timeout $(( t0 + 545 - $(date +%s) )) ./test_gpu_ops --verbose --filter 'gpu_types/filter*') \
  > $OUT/gpu-ops-filter.log 2>&1
echo "filter tests exit $? at $(( $(date +%s) - t0 )) s"; grep -E "Synthesis|runs in|FAIL" $OUT/gpu-ops-filter.log
