#!/usr/bin/env python3
"""twins.py TYPE ORDER DOC: matadd's grid twins (tuner/space.c: pm__op_grid, each round size's
pm__grid_odd(r) x pm__grid_odd(c)) in TYPE that the document DOC has no measurement of in ORDER
(row or col), smallest first, as ROWSxCOLS words for `pmtune tune --size`."""
import gzip
import json
import math
import sys

t, order, path = sys.argv[1:4]
esize = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}[t]
odd = lambda k: int(math.ldexp(math.sqrt(2.0), k)) | 1
grid = []
for k in range(4, 15):  # PM__GRID_LOG2_SIDE_MIN .. _MAX
    if esize * 2.0 ** (2 * k) > 2.0 ** 31:
        break
    sides = [(k, k)] + [(k + s * a, k - s * a) for a in (1, 2, 3) for s in (-1, 1)
                        if k < 14 and k - a >= 3]  # the thin lines, no side under 2^3
    for r, c in sides:
        if esize * odd(r) * odd(c) <= 2.0 ** 31:
            grid.append((odd(r), odd(c)))
have = {(m["rows"], m["cols"]) for m in json.load(gzip.open(path))["measurements"]
        if m["op"] == "matadd" and m["dtype"] == t and m["variant"] == "order=" + order}
print(" ".join("%dx%d" % s for s in sorted(set(grid) - have, key=lambda s: (s[0] * s[1], s))))
