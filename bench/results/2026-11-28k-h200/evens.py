#!/usr/bin/env python3
"""evens.py TYPE ORDER: matadd's "even twins" in TYPE and ORDER (row or col), an experiment
(bench/experiments/even_lines.patch): of each round grid size 2^r x 2^c (tuner/space.c:
pm__op_grid), the twin of the same elements and aspect as the grid's own (pm__grid_odd: about
2^(k+1/2)), its contiguous side (cols row-major, rows col-major) made 2 mod 4 instead of odd, the
other side odd; smallest first, as ROWSxCOLS words for `pmtune tune --size`."""
import math
import sys

t, order = sys.argv[1:3]
esize = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}[t]
odd = lambda k: int(math.ldexp(math.sqrt(2.0), k)) | 1
even = lambda k: (int(math.ldexp(math.sqrt(2.0), k)) | 2) & ~1  # 2 mod 4
grid = []
for k in range(4, 15):  # PM__GRID_LOG2_SIDE_MIN .. _MAX
    sides = [(k, k)] + [(k + s * a, k - s * a) for a in (1, 2, 3) for s in (-1, 1)
                        if k < 14 and k - a >= 3]
    for r, c in sides:
        size = (odd(r), even(c)) if order == "row" else (even(r), odd(c))
        if esize * size[0] * size[1] <= 2 ** 31:
            grid.append(size)
print(" ".join("%dx%d" % s for s in sorted(set(grid), key=lambda s: (s[0] * s[1], s))))
