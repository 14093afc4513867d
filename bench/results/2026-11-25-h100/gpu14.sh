#!/bin/bash
# gpu14.sh: on one H100: test_gpu_kernel_file (7 cases, the transpose example served among them);
# then pmtune tune --kernel with a source that does not compile at its seed, and with a size
# whose buffers overflow: each refused before the database exists.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 200 build/tests/test_gpu_kernel_file --verbose > $OUT/test-gpu-kernel-file.log 2>&1; echo "test_gpu_kernel_file exit $?"
grep -E "PASS|FAIL|Synthesis|Assert" $OUT/test-gpu-kernel-file.log
rm -rf /tmp/bad && mkdir /tmp/bad && cp examples/kernels/matadd.json examples/kernels/matadd.cu /tmp/bad/
printf '#if BLOCK == 256\nthis is not C++;\n#endif\n' >> /tmp/bad/matadd.cu
{ build/tools/pmtune tune --kernel /tmp/bad/matadd.json --size 100x100 --db /tmp/bad/t.db; echo "exit $?"
  ls /tmp/bad/t.db 2>&1
  sed 's/"count": ":rows \* :cols", "dir": "out"/"count": ":rows * :cols * 1000000", "dir": "out"/' examples/kernels/matadd.json > /tmp/bad/big.json
  cp examples/kernels/matadd.cu /tmp/bad/big.cu; sed -i 's/"source": "matadd.cu"/"source": "big.cu"/' /tmp/bad/big.json
  build/tools/pmtune tune --kernel /tmp/bad/big.json --size 2000x1000 --db /tmp/bad/t.db; echo "exit $?"
  ls /tmp/bad/t.db 2>&1; } > $OUT/tune-refused.txt 2>&1
cat $OUT/tune-refused.txt
