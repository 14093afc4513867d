#!/bin/bash
# study4.sh: issue 30's random-sizes study (bench/serve/random.sh) on a machine of four GPUs, one
# op per GPU (add, reduce, matadd, filter on GPUs 0-3), each with its own databases in
# build/random-OP, all served the shipped results of this build (build/share/pmtune/results);
# each study's folder comes back as $OUT/study-OP.tar.gz, and the summaries are printed.
cd /work/main
[ -d build/tools ] || cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
# results not yet in the repository travel compressed: .device/h100-results.json.gz
[ -f .device/h100-results.json.gz ] &&
  zcat .device/h100-results.json.gz > build/share/pmtune/results/nvidia-h100-80gb-hbm3.json
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L; ls -la build/share/pmtune/results
ops=(add reduce matadd filter)
for d in 0 1 2 3; do
  op=${ops[$d]}
  ( CUDA_VISIBLE_DEVICES=$d OPS=$op DBDIR=build/random-$op timeout ${LIMIT:-560} \
      bench/serve/random.sh /tmp/study-$op > /tmp/study-$op.log 2>&1
    echo "study $op exit $?"
    cp /tmp/study-$op.log /tmp/study-$op/
    tar -C /tmp -czf $OUT/study-$op.tar.gz study-$op ) &
done
wait
for op in ${ops[@]}; do grep '"kind":"target"' /tmp/study-$op/*summary* 2>/dev/null | cut -c1-400; done
