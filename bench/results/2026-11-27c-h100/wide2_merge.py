#!/usr/bin/env python3
# wide2_merge.py OUT DOC...: the part of wide2.sh's exports (DOC: wide2-TYPE.json.gz) that was carried, as one export document OUT for `pmtune import`.
"""Keeps filter's measurements alone (matadd's aspect-64 sizes were carried in f32 alone, so
matadd ships as before), and of each type only the (border, radius) groups whose carrying
finished: every group in f32; zero r=2 and r=3 in f16, bf16 and f64 (wide2-log-TYPE.txt says
which: the later groups were cut at the deadline). A group tuned at its aspect-64 sizes but not
carried would serve those sizes from their winner and seed alone."""
import gzip
import json
import sys

CARRIED = {"f32": None, "f16": {("border=zero", 2), ("border=zero", 3)},
           "bf16": {("border=zero", 2), ("border=zero", 3)},
           "f64": {("border=zero", 2), ("border=zero", 3)}}


def keep(m):
    groups = CARRIED.get(m["dtype"], set())
    return m["op"] == "filter" and (groups is None or (m["variant"], m["radius"]) in groups)


def main():
    out, docs = sys.argv[1], sys.argv[2:]
    merged, seen = None, set()
    for path in docs:
        doc = json.load(gzip.open(path))
        if merged is None:
            merged = dict(doc, measurements=[])
        for g in doc["gpus"]:
            if g["uuid"] not in {x["uuid"] for x in merged["gpus"]}:
                merged["gpus"].append(g)
        # each export holds the shipped document too: keep its own type's rows alone
        t = path.rsplit("wide2-", 1)[1].split(".")[0]
        rows = [m for m in doc["measurements"] if m["dtype"] == t and keep(m)]
        merged["measurements"] += rows
        print(f"{path}: {len(rows)} of {len(doc['measurements'])} measurements", file=sys.stderr)
    merged["all"] = False
    with open(out, "w") as f:
        json.dump(merged, f)


if __name__ == "__main__":
    main()
