#!/usr/bin/env python3
"""merge.py OUT EXPORT...: a shipped document with exports merged in, made with no GPU: the
measurements of results/nvidia-h200.json.gz as committed at HEAD and of each EXPORT (a `pmtune
export` document, .json.gz), every row of each kept (a pmtune import and export would keep of
each size only what export selects), then made compact (results/compact.py: of a configuration
measured at a size on several GPUs, the fastest). Run from the repository root; OUT ends in
.json.gz. ../2026-11-28i-h200/merge.py is the same step for the 16-bit twins."""
import gzip
import json
import os
import subprocess
import sys

out, exports = sys.argv[1], sys.argv[2:]
shipped = subprocess.run(["git", "show", "HEAD:results/nvidia-h200.json.gz"], check=True,
                         capture_output=True).stdout
doc = json.loads(gzip.decompress(shipped))
gpus = {g["uuid"]: g for g in doc["gpus"]}
before = len(doc["measurements"])
for path in exports:
    x = json.load(gzip.open(path))
    doc["measurements"] += x["measurements"]
    for g in x["gpus"]:
        gpus.setdefault(g["uuid"], g)
doc["gpus"] = list(gpus.values())
with gzip.open(out, "wt") as f:
    json.dump(doc, f)
print(f"{before} + {len(exports)} exports = {len(doc['measurements'])} measurements")
subprocess.run([sys.executable, "results/compact.py", out], check=True)
os.system(f"ls -l {out}")
