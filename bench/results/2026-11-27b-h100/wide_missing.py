#!/usr/bin/env python3
# wide_missing.py TYPE DOC...: the grid's aspect-64 sizes (tuner/space.c) of matadd and filter that no measurement of the export documents DOC (those that exist) other than a seed has in type TYPE (a size of its seed alone is a search stopped: not tuned), for wide2.sh and fill.sh.
"""Prints one line a run: "OP VARIANT --size S --size S ..." (VARIANT "order row", "border zero";
filter's sizes with their radius, S:rR), the sizes in the grid's order, for the runs of wide.sh
whose time limit came first."""
import gzip
import json
import os
import sys


def odd(j):
    v = int(2 ** j * 2 ** 0.5)
    return v if v % 2 else v + 1


def sizes():
    out = []
    for k in range(6, 14):
        out += [(2 ** (k - 3), 2 ** (k + 3)), (2 ** (k + 3), 2 ** (k - 3)),
                (odd(k - 3), odd(k + 3)), (odd(k + 3), odd(k - 3))]
    return out


def main():
    t, docs = sys.argv[1], [d for d in sys.argv[2:] if os.path.exists(d)]
    have = set()
    for d in docs:
        for m in json.load(gzip.open(d) if d.endswith(".gz") else open(d))["measurements"]:
            if m["dtype"] == t and m["status"] == "ok" and not m["is_seed"]:  # tuned, not a seed alone
                have.add((m["op"], m["variant"], m["radius"] or 0, m["rows"], m["cols"]))
    runs = [("matadd", "order=" + o, 0) for o in ("row", "col")]
    runs += [("filter", "border=" + b, r) for b in ("clamp", "zero") for r in (1, 2, 3)]
    for op, variant, r in runs:
        miss = [(a, b) for a, b in sizes() if (op, variant, r, a, b) not in have]
        name, value = variant.split("=")
        print(op, name, value, " ".join(f"--size {a}x{b}" + (f":r{r}" if r else "")
                                          for a, b in miss))


if __name__ == "__main__":
    main()
