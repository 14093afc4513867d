#!/bin/bash
# twins.sh: filter at the unround twins of the matrix grid (twins.txt, which twins.c prints: both
# sides odd, twice the elements of a round grid size), which the grid gained after results/ was
# tuned, on a machine of four GPUs, one type per GPU (f32, f16, bf16, f64 on GPUs 0-3), as
# grid4.sh tuned the rest (--budget 100): each border's and radius's sizes one run
# (48), carried among them, no candidate after TIME (default 75) s each, into build/twins/TYPE.db; its output to
# $OUT/tune-twins-TYPE.txt, its export to $OUT/twins-TYPE.json.gz.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
here=bench/results/2026-11-26c-h100
mkdir -p build/twins
types=(f32 f16 bf16 f64)
for d in 0 1 2 3; do
  t=${types[$d]}
  ( t0=$(date +%s)
    grep "^filter $t " $here/twins.txt | while read -r op type border sizes; do
      for r in 1 2 3; do
        build/tools/pmtune tune --op filter --dtype $t --border $border \
          $(echo $sizes | grep -o -- "--size [0-9x]*:r$r") --budget 100 --time ${TIME:-75} \
          --device $d --db build/twins/$t.db >> $OUT/tune-twins-$t.txt 2>&1
        echo "twins $t $border r=$r exit $? at $(( $(date +%s) - t0 )) s"
      done
    done
    build/tools/pmtune export /tmp/twins-$t.json --db build/twins/$t.db && gzip -9 -c /tmp/twins-$t.json > $OUT/twins-$t.json.gz
  ) &
done
wait
for t in ${types[@]}; do grep -E "^gpu [0-9]  (all|carry)" $OUT/tune-twins-$t.txt | tail -4; done
ls -la $OUT
