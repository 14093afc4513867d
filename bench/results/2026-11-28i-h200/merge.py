#!/usr/bin/env python3
"""merge.py OUT: the H200 document with matadd's 16-bit twins merged in, made with no GPU: the
measurements of results/nvidia-h200.json.gz of c4e26f8 and of twins.sh's four exports
(h200-twins-TYPE-ORDER-c4e26f8.json.gz), every row of each kept (a pmtune import and export
would keep of each size only what export selects, and drop 2,524 reduce and filter rows the
shipped document holds), then made compact (results/compact.py: of a configuration measured at a
size on several GPUs, the fastest). Run from the repository root; OUT ends in .json.gz."""
import gzip
import json
import os
import subprocess
import sys

here = "bench/results/2026-11-28i-h200"
out = sys.argv[1]
shipped = subprocess.run(["git", "show", "c4e26f8:results/nvidia-h200.json.gz"], check=True,
                         capture_output=True).stdout
doc = json.loads(gzip.decompress(shipped))
gpus = {g["uuid"]: g for g in doc["gpus"]}
before = len(doc["measurements"])
for g in ("f16-row", "f16-col", "bf16-row", "bf16-col"):
    twins = json.load(gzip.open(f"{here}/h200-twins-{g}-c4e26f8.json.gz"))
    doc["measurements"] += twins["measurements"]
    for x in twins["gpus"]:
        gpus.setdefault(x["uuid"], x)
doc["gpus"] = list(gpus.values())
with gzip.open(out, "wt") as f:
    json.dump(doc, f)
print(f"{before} + twins = {len(doc['measurements'])} measurements")
subprocess.run([sys.executable, "results/compact.py", out], check=True)
os.system(f"ls -l {out}")
