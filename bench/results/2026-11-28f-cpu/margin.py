#!/usr/bin/env python3
"""margin.py DOC LOO...: with no GPU, what a larger margin before a filter is served other than the
default would do, from pmtune_loo --list outputs of DOC (from a "# new:" line on where one has it,
as ../2026-11-28c-h200's does, which lists two documents; gzip or not: each filter size left out
and decided from the rest, with the time predicted for what it chose and for the default, and what
the chosen one measured there): each size decided again, the default where it was predicted less
than MARGIN slower than the choice, and judged at the size by what DOC measured there (the
default is measured at every size; filter's default is one configuration in every type).
Prints, per margin, the sizes within 95% and 90% of the fastest measured there, the worst, and
those served over 1.03x the default's time there. 0.03 is serving's rule (db/known.c)."""
import gzip
import json
import re
import sys

DEFAULT = "bx=32 by=4 tile=0 pad=0 ox=4 oy=4 vload=1 align=256"
LINE = re.compile(r"^filter (\d+)x(\d+) r=(\d) (\w+)(?: (f16|bf16|f64))?: \w+( \(default\))? .*"
                  r"predicted ([0-9.e-]+) ms \(default ([0-9.e-]+)\), measured ([0-9.e-]+) "
                  r"\(fastest ([0-9.e-]+)\)")

doc = json.load(gzip.open(sys.argv[1]))
default_ms = {}
for m in doc["measurements"]:
    if m["op"] == "filter" and m["config"] == DEFAULT and m["status"] == "ok":
        k = (m["dtype"], m["rows"], m["cols"], m["radius"], m["variant"].split("=")[1])
        default_ms[k] = min(default_ms.get(k, float("inf")), m["median_ms"])
text = []
for path in sys.argv[2:]:
    lines = (gzip.open if path.endswith(".gz") else open)(path, "rt").read().split("\n")
    text += lines[lines.index("# new:"):] if "# new:" in lines else lines
sizes = []
for line in text:
    m = LINE.match(line)
    if m:
        r, c, rad, var, dt, was_default, pred, pdef, ms, fast = m.groups()
        k = (dt or "f32", int(r), int(c), int(rad), var)
        sizes.append((float(pred), float(pdef), float(ms), default_ms[k], float(fast),
                      was_default is not None))
print("%d filter sizes left out and decided from the rest" % len(sizes))
for margin in (0.03, 0.05, 0.08, 0.10, 0.15):
    w95 = w90 = over = 0
    worst = 1.0
    for pred, pdef, ms, dms, fast, was_default in sizes:
        t = dms if was_default or pdef < pred * (1 + margin) else ms
        q = fast / t
        w95, w90, over = w95 + (q >= 0.95), w90 + (q >= 0.90), over + (t / dms > 1.03)
        worst = min(worst, q)
    print("margin %.2f: within 95%% %d, within 90%% %d, worst %.3f, over 1.03x the default %d"
          % (margin, w95, w90, worst, over))
