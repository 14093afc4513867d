#!/usr/bin/env python3
# fill_merge.py OUT OLD DOC...: fill.sh's exports (DOC) as one export document OUT, less every measurement the document OLD (the H100 document they were made over) holds already: what fill.sh added, for `pmtune import` over OLD.
"""A measurement is the same where its GPU, op, type, problem (rows, cols, n, radius, variant),
template and configuration are; of one measured in several exports (the group's rows each job
imported), the first is kept. GPUs that no kept measurement names are left out."""
import gzip
import json
import sys


def key(m):
    return (m["gpu"], m["op"], m["dtype"], m["rows"], m["cols"], m["n"], m["radius"], m["variant"],
            m["template_sha256"], m["config"])


def main():
    out, old, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
    seen = {key(m) for m in json.load(gzip.open(old))["measurements"]}
    merged, gpus = None, {}
    for path in docs:
        doc = json.load(gzip.open(path))
        if merged is None:
            merged = dict(doc, measurements=[])
        gpus.update({g["uuid"]: g for g in doc["gpus"]})
        for m in doc["measurements"]:
            if key(m) not in seen:
                seen.add(key(m))
                merged["measurements"].append(m)
    names = {m["gpu"] for m in merged["measurements"]}
    merged["gpus"] = [g for u, g in sorted(gpus.items()) if u in names]
    with gzip.GzipFile(out, "wb", 9, mtime=0) as f:
        f.write(json.dumps(merged).encode())
    print(f"{len(merged['measurements'])} measurements of {len(merged['gpus'])} GPUs from {len(docs)} exports")


main()
