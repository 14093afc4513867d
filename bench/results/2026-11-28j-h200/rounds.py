#!/usr/bin/env python3
"""rounds.py TYPE: matadd's round grid sizes in TYPE (tuner/space.c: pm__op_grid: squares 2^k x
2^k from 16x16 and, below the largest, lines 4, 16 and 64 times as wide as tall and as tall as
wide, no side under 8, no buffer over 2 GiB), smallest first, as ROWSxCOLS words for `pmtune tune
--size`; ../2026-11-28i-h200/twins.py lists their twins."""
import sys

esize = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8}[sys.argv[1]]
grid = []
for k in range(4, 15):  # PM__GRID_LOG2_SIDE_MIN .. _MAX
    sides = [(k, k)] + [(k + s * a, k - s * a) for a in (1, 2, 3) for s in (-1, 1)
                        if k < 14 and k - a >= 3]
    grid += [(2 ** r, 2 ** c) for r, c in sides if esize * 2 ** (r + c) <= 2 ** 31]
print(" ".join("%dx%d" % s for s in sorted(set(grid), key=lambda s: (s[0] * s[1], s))))
