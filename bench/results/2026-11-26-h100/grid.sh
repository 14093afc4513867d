#!/bin/bash
# grid.sh OP:TYPES...: the grid of sizes results/ ships (pmtune tune --grid), one database per
# OP:TYPES (types comma-separated, "all" for every type) in /tmp, each exported (what is carried
# of each size) to $OUT/grid-OP-TYPES.json with its tuning's output; LIMIT seconds each (default
# 280). First, where TESTS is set, those GPU tests (a ctest -R expression).
set -o pipefail
cd /work/main
[ -d build/tools ] || cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
if [ -n "${TESTS:-}" ]; then
  timeout 200 ctest --test-dir build -R "$TESTS" -j2 --output-on-failure > $OUT/ctest-gpu.log 2>&1
  echo "ctest exit $?"; grep -E "Test +#|tests passed|FAIL" $OUT/ctest-gpu.log | head -12
fi
for job in "$@"; do
  op=${job%%:*}; types=${job#*:}; name=${op}-${types//,/-}
  dt=(); [ "$types" = all ] || dt=(--dtype "$types")
  db=/tmp/grid-$name.db
  t0=$(date +%s)
  timeout ${LIMIT:-280} build/tools/pmtune tune --grid --op "$op" "${dt[@]}" --device 0 --db "$db" \
    > $OUT/tune-grid-$name.txt 2>&1
  echo "grid $name exit $? in $(( $(date +%s) - t0 )) s"; grep -E "^wall|all  " $OUT/tune-grid-$name.txt | tail -2
  build/tools/pmtune export $OUT/grid-$name.json --db "$db"
done
ls -la $OUT
