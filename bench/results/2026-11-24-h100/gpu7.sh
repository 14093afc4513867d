#!/bin/bash
# gpu7.sh: at cf04e63 (matadd and add on float16, bfloat16, float64 arrays): the Python package's tests (python/tests) with the device's own python3
# (PyTorch, CuPy, JAX, pytest), from the source tree, on the libpmtune.so built here; the bundled
# libstdc++ left out (the device's python needs its own).
set -o pipefail
cd /work/main
mkdir -p /tmp/pylib && cp -a .device/lib/. /tmp/pylib/ && rm -f /tmp/pylib/libstdc++* /tmp/pylib/libgcc_s*
export LD_LIBRARY_PATH=/tmp/pylib PMTUNE_LIBRARY=$PWD/build/libpmtune.so PMTUNE_DB=/tmp/py.db PYTHONPATH=$PWD/python XLA_PYTHON_CLIENT_PREALLOCATE=false
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L; python3 --version
timeout 300 python3 -m pytest -v -rs -p no:cacheprovider python/tests 2>&1 | tee $OUT/pytest-gpu.txt | tail -40
