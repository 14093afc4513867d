#!/usr/bin/env python3
"""make_doc.py: an export document of ROWS measurements for the import benchmark, made from a
shipped results file (results/nvidia-h100-80gb-hbm3.json, 9,002 rows) repeated under fabricated
GPU UUIDs (copy k of GPU GPU-xxxxxxxx-... becomes GPU-xxxxxxxx-...-kkkk, in the last group).

usage: make_doc.py SOURCE ROWS OUT [SALT]
SALT (default 0) makes another set of UUIDs: a document of other GPUs, for importing into a
database that already holds one (the "full" case)."""
import json
import sys


def main():
    src, rows, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    salt = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    with open(src) as f:
        doc = json.load(f)
    base_gpus, base_rows = doc["gpus"], doc["measurements"]
    gpus, meas, copy = [], [], 0
    while len(meas) < rows:
        rename = {}
        for g in base_gpus:
            u = g["uuid"]
            fake = "%s%04x%04x" % (u[:-8], salt & 0xffff, copy & 0xffff)
            rename[u] = fake
            gpus.append(dict(g, uuid=fake))
        for m in base_rows:
            if len(meas) == rows:
                break
            meas.append(dict(m, gpu=rename[m["gpu"]]))
        copy += 1
    used = {m["gpu"] for m in meas}
    doc["gpus"] = [g for g in gpus if g["uuid"] in used]
    doc["measurements"] = meas
    with open(out, "w") as f:
        head = {k: doc[k] for k in doc if k not in ("gpus", "measurements")}
        f.write(json.dumps(head, separators=(",", ":"))[:-1] + ',\n"gpus": [')
        f.write(",\n  ".join(json.dumps(g, separators=(",", ":")) for g in doc["gpus"]))
        f.write('],\n"measurements": [\n  ')
        f.write(",\n  ".join(json.dumps(m, separators=(",", ":")) for m in meas))
        f.write("]}\n")


if __name__ == "__main__":
    main()
