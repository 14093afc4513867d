#!/usr/bin/env python3
"""decided.py OLD.json NEW.json: of two pmtune_bench_random outputs of one draw (the same seed, op
and set-ups), each problem and set-up served a configuration otherwise in NEW, with exact/served in
each (each its own run's timing), then how many of each set-up were within 95% of exact in each
(exact_ms / served_ms, as the study counts them: a ratio printed to 4 digits may round up to
0.9500)."""
import json
import sys


def load(path):
    rows = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("kind") == "random":
            rows[(r["setup"], r["op"], r["dtype"], r["problem"])] = r
    return rows


old, new = load(sys.argv[1]), load(sys.argv[2])
changed = 0
for k in sorted(old):
    a, b = old[k], new.get(k)
    if b is None or a["served_config"] == b["served_config"]:
        continue
    changed += 1
    print("%-8s %-6s %-5s %-22s %.3f -> %.3f  %s -> %s" % (
        k[0], k[1], k[2], k[3], a["exact_over_served"], b["exact_over_served"],
        a["served_config"], b["served_config"]))
print("%d of %d problem-set-ups served otherwise" % (changed, len(old)))
for name, rows in (("old", old), ("new", new)):
    for s in sorted({k[0] for k in rows}):
        xs = [r["exact_ms"] / r["served_ms"] for k, r in rows.items() if k[0] == s]
        print("%s %-8s within 95%%: %d/%d, worst %.3f" % (
            name, s, sum(x >= 0.95 for x in xs), len(xs), min(xs)))
