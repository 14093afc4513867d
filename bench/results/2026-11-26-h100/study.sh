#!/bin/bash
# study.sh OPS: issue 30's random-sizes study (bench/serve/random.sh) for the ops OPS (a,b) on
# this machine, with the shipped results of this commit (build/share/pmtune/results); the
# databases stay in build/random for the next call (SKIP_TUNE=1 there reuses the default
# tuning). Where TESTS is set, those GPU tests first.
set -o pipefail
cd /work/main
[ -d build/tools ] || cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
if [ -n "${TESTS:-}" ]; then
  PMTUNE_RESULTS=none timeout 120 ctest --test-dir build -R "$TESTS" -j2 --output-on-failure > $OUT/ctest-gpu.log 2>&1
  echo "ctest exit $?"; grep -E "Test +#|tests passed|FAIL" $OUT/ctest-gpu.log | head -12
fi
name=${1//,/-}
OPS=$1 timeout ${LIMIT:-540} bench/serve/random.sh $OUT/study-$name > $OUT/study-$name.log 2>&1
echo "study exit $?"
tail -40 $OUT/study-$name.log
[ -f build/random/node.json ] && gzip -9 -c build/random/node.json > $OUT/node.json.gz

rm -f $OUT/study-$name/*.log
mv $OUT/study-$name/* $OUT/ 2>/dev/null; rmdir $OUT/study-$name 2>/dev/null
ls -la $OUT
