#!/bin/bash
# carry.sh: issue 30's carrying step for filter, on a machine of four GPUs, one type per GPU (f32,
# f16, bf16, f64 on GPUs 0-3): the shipped H100 results and the unround twins' exports
# (../2026-11-26c-h100/twins-TYPE.json.gz, their filter template hash re-keyed to today's as
# results/README.md says: the cubins are the same) imported into build/carry/TYPE.db, then `pmtune
# tune --carry` for filter in each border and radius (one size of the group names it), which times
# each size's best 3 at every size within 16x of it, round grid and twins alike. Each type's output
# goes to $OUT/carry-logs.txt (headed #####), its export to $OUT/carried-TYPE.json.gz. No candidate
# starts after TIME (default 75) s a group.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
twins=bench/results/2026-11-26c-h100
old=a0c8a158da0bc58ee37c9368109448510f8b86478f23b4503e40eb4ed6d464b2
new=7c835acb6b2e20d624e13255841730b55a3800ba52b21d87b0fc30c0bc7eb019
mkdir -p build/carry
types=(f32 f16 bf16 f64)
for d in 0 1 2 3; do
  t=${types[$d]}
  ( db=build/carry/$t.db log=/tmp/carry-$t.txt t0=$(date +%s)
    rm -f $db; zcat $twins/twins-$t.json.gz | sed "s/$old/$new/g" > /tmp/twins-$t.json
    { build/tools/pmtune import results/nvidia-h100-80gb-hbm3.json.gz --db $db &&
      build/tools/pmtune import /tmp/twins-$t.json --db $db; } > $log 2>&1
    for border in clamp zero; do
      for r in 1 2 3; do
        build/tools/pmtune tune --carry --op filter --dtype $t --border $border --size 1448x1448:r$r \
          --time ${TIME:-75} --device $d --db $db >> $log 2>&1
        echo "carry $t $border r=$r exit $? at $(( $(date +%s) - t0 )) s" | tee -a $log
      done
    done
    build/tools/pmtune export /tmp/carried-$t.json --db $db >> $log 2>&1 &&
      gzip -9 -n -c /tmp/carried-$t.json > $OUT/carried-$t.json.gz
  ) &
done
wait
for t in ${types[@]}; do echo "##### $t"; cat /tmp/carry-$t.txt; done > $OUT/carry-logs.txt
for t in ${types[@]}; do grep -E "carry  " /tmp/carry-$t.txt; done
ls -la $OUT
