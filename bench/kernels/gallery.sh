#!/usr/bin/env bash
# gallery.sh DB: tunes the gallery of examples/kernels at a few sizes each (none of them a size
# gallery_vs_torch.py calls at) into DB, then runs gallery_vs_torch.py against PyTorch, from the
# repository root with the build in build/ (BUILD to change). Output: the tuning's lines, then
# the comparison's JSON lines.
set -euo pipefail
db=${1:?usage: bench/kernels/gallery.sh DB}
bin=${BUILD:-build}/tools/pmtune
export PMTUNE_RESULTS=${PMTUNE_RESULTS:-none}
k=examples/kernels
"$bin" tune --kernel $k/axpy.json --size 1048576 --size 16777216 --size 134217728 --db "$db"
for s in softmax layernorm; do
  "$bin" tune --kernel $k/$s.json --size 4096x1024 --size 16384x768 --size 2048x4096 --db "$db"
done
"$bin" tune --kernel $k/matadd.json --size 4096x4096 --size 16384x8192 --db "$db"
"$bin" tune --kernel $k/transpose.json --size 4096x4096 --size 16384x8192 --db "$db"
"$bin" tune --kernel $k/batched_transpose.json --size 8x1024x1024 --size 32x512x768 \
  --size 128x256x256 --db "$db"
PMTUNE_DB="$db" python3 "$(dirname "$0")/gallery_vs_torch.py"
