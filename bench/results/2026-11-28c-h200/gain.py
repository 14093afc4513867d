#!/usr/bin/env python3
# gain.py OLD NEW: two results documents (gzip), reduce and filter: per op and type, at each size of OLD, the fastest measured there in NEW over the fastest in OLD (how often NEW found something faster, by how much)
import gzip, json, sys, collections, statistics
def best(path):
    b = {}
    for m in json.load(gzip.open(path))["measurements"]:
        if m["status"] != "ok" or m["median_ms"] is None: continue
        k = (m["op"], m["dtype"], m["variant"], m["rows"], m["cols"], m["n"], m["radius"])
        b[k] = min(b.get(k, 1e9), m["median_ms"])
    return b
old, new = best(sys.argv[1]), best(sys.argv[2])
g = collections.defaultdict(list)
for k, t in old.items():
    if k[0] in ("reduce", "filter") and k in new: g[(k[0], k[1])].append((new[k] / t, k))
for key in sorted(g):
    r = sorted(g[key])
    print(key, len(r), "sizes; faster found at", sum(x < 0.99 for x, _ in r), "by >1%,", sum(x < 0.95 for x, _ in r), "by >5%; best gain", round(1 / r[0][0], 3), r[0][1])
