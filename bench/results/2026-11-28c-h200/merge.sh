#!/bin/bash
# merge.sh [OUT]: the H200 document with this folder's search merged in, made here with no GPU: the
# shipped results/nvidia-h200.json.gz (of 2f6730d) and the four h200-search-TYPE-2f6730d.json.gz
# imported into one database, exported, and made compact (results/compact.py) to OUT (default
# /tmp/nvidia-h200.json.gz). Not shipped: kept for the random-sizes study on an H200 to decide.
set -e
cd "$(dirname "$0")/../../.."
out=${1:-/tmp/nvidia-h200.json.gz} here=bench/results/2026-11-28c-h200 tmp=$(mktemp -d)
git show 2f6730d:results/nvidia-h200.json.gz > $tmp/shipped.json.gz
build/tools/pmtune import $tmp/shipped.json.gz --db $tmp/m.db
for t in f32 f16 bf16 f64; do build/tools/pmtune import $here/h200-search-$t-2f6730d.json.gz --db $tmp/m.db; done
build/tools/pmtune export $tmp/new.json --db $tmp/m.db
python3 results/compact.py $tmp/new.json
gzip -9 -n -c $tmp/new.json > "$out"
rm -rf $tmp
ls -l "$out"
