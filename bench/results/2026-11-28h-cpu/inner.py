#!/usr/bin/env python3
"""inner.py SEEDS_DIR JSON...: with no GPU, how the problems of the random-sizes study's draws that
bench/experiments/known_inner.patch decides otherwise would have run, judged from what the study
timed there. SEEDS_DIR holds fS-0.txt and fS-1.txt, `pmtune_same_decisions results results --gpu
"NVIDIA H200" --sms 132 --count 20 --seed S --print` filter lines, PM_EXP_INNER unset and set;
the JSONs are the studies' outputs. The patch only ever serves the default instead, and the study
timed the default at every size: exact_ms / default_ms is what the patch serves."""
import glob
import json
import re
import sys

changed = {}
for a in sorted(glob.glob(sys.argv[1] + "/f*-0.txt")):
    before = open(a).read().split("\n")
    after = open(a[:-6] + "-1.txt").read().split("\n")
    for x, y in zip(before, after):
        if x != y:
            changed[x.split(":")[0][len("filter "):]] = (a.split("/")[-1][1:-6], x, y)
print("%d problems of the draws (--count 20, seeds 1-5) decided otherwise" % len(changed))
seen = set()
for path in sys.argv[2:]:
    for line in open(path):
        r = json.loads(line)
        p = r.get("problem")
        if r.get("setup") != "shipped" or p not in changed or p in seen:
            continue
        seen.add(p)
        print("seed %s %s: served %.3f of exact (%.3f the default's time) -> the default, %.3f"
              % (changed[p][0], p, r["exact_over_served"], r["served_over_default"],
                 r["exact_ms"] / r["default_ms"]))
print("%d of them timed by a study; the rest are beyond the 20 (f32) or 10 (other types) it drew"
      % len(seen))
