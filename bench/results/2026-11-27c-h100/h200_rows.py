#!/usr/bin/env python3
# h200_rows.py FILE: an export document (JSON) rewritten with the rows of GPUs other than the H100 alone (an H200's own, the H100's being the shipped document already), for h200.sh and ../2026-11-28-h200/h200fill.sh.
import json
import sys

doc = json.load(open(sys.argv[1]))
mine = {g["uuid"] for g in doc["gpus"] if g["name"] != "NVIDIA H100 80GB HBM3"}
doc["gpus"] = [g for g in doc["gpus"] if g["uuid"] in mine]
doc["measurements"] = [m for m in doc["measurements"] if m["gpu"] in mine]
json.dump(doc, open(sys.argv[1], "w"))
print(f"{len(doc['measurements'])} measurements of {len(mine)} GPUs kept")
