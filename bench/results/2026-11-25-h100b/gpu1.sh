#!/bin/bash
# gpu1.sh: reduce's L2 prefetch and early launch before its wait, bf16 (bench/experiments/pf_reduce.cu)
set -x
nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader
cd bench/experiments && sed "/pm_waits_prior = 1/d" ../../templates/pm_common.cuh > pm_common_nvcc.cuh &&
  nvcc -O3 -std=c++17 -arch=sm_90 pf_reduce.cu -o pf_reduce && ./pf_reduce | tee $OUT/pf-reduce.txt
