#!/usr/bin/env python3
# compact.py: shipped results without what no decision reads (a configuration measured twice at a size, digits below a timing's) or should (a size of its seed alone), so a document stays a few MB and serves tuned sizes only.
"""Usage: results/compact.py FILE...

Writes each pmtune export document (a .gz one inflated and compressed again with `gzip -9 -n`)
with, of a configuration measured at one size on several GPUs of the model (a size's own search
and the carrying step, on different machines), the fastest measurement alone, as serving takes
it; and every measurement's median_ms, min_ms and max_ms rounded to 5 significant digits, gbps to
4 and max_error to 3. A size whose one measurement that worked is its seed (a search stopped by
its time limit before its first candidate: the tuner times the seed first) is left out whole: it
is no tuned size, and kept it would serve its seed there and, as the one configuration measured
at both, between it and the sizes beside it. Nothing else changes; a GPU no measurement names any
more is left out. The
digits dropped are below what a timing resolves (CUDA events tick at about 0.5 us; the medians of
one configuration measured twice differ by 1% and more), and rounding keeps min <= median <= max,
so `pmtune import` takes the document as before. `pmtune_same_decisions OLD_DIR NEW_DIR`
(bench/serve/same_decisions.c) checks that the documents decide alike. The H100 document of
150,706 measurements became 112,176 and shrank from 6.8 MB to 2.8 MB compressed.
"""
import json
import sys

import exportdoc

DIGITS = {"median_ms": 5, "min_ms": 5, "max_ms": 5, "gbps": 4, "max_error": 3}


def rounded(v, digits):
    return float(f"{v:.{digits}g}") if isinstance(v, float) else v


def size_of(m):
    """A measurement's size: its problem and template (a configuration's key adds the config)."""
    return tuple(m.get(k) for k in ("op", "dtype", "variant", "radius", "rows", "cols", "n",
                                    "template_sha256"))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        text, raw = exportdoc.read(path)
        doc = json.loads(text)
        fastest = {}  # a failed or unverified row is kept as it is
        for i, m in enumerate(doc["measurements"]):
            key = size_of(m) + (m.get("config"),)
            if m["status"] != "ok" or not m["verified"]:
                key += (i,)
            if key not in fastest or m["median_ms"] < fastest[key]["median_ms"]:
                fastest[key] = m
        ms = list(fastest.values())
        tried = {}  # per size: whether a configuration other than its seed worked there
        for m in ms:
            z = size_of(m)
            tried[z] = tried.get(z, False) or (m["status"] == "ok" and not m["is_seed"])
        untuned = sum(not t for t in tried.values())
        ms = [m for m in ms if tried[size_of(m)]]
        named = {m["gpu"] for m in ms}
        doc["gpus"] = [g for g in doc["gpus"] if g["uuid"] in named]
        for m in ms:
            for key, digits in DIGITS.items():
                if key in m:
                    m[key] = rounded(m[key], digits)
        head = {k: v for k, v in doc.items() if k not in ("gpus", "measurements")}
        line = lambda x: json.dumps(x, separators=(",", ":"))
        # as pmtune export writes it: the head, then one GPU a line, then one measurement a line
        text = line(head)[:-1] + ',\n"gpus": [\n' + ",\n".join(line(g) for g in doc["gpus"])
        text += '\n],\n"measurements": [\n' + ",\n".join(line(m) for m in ms) + "\n]}\n"
        data = exportdoc.write(path, text)
        print(f"{path}: {len(doc['measurements'])} -> {len(ms)} measurements, "
              f"{len(raw)} -> {len(data)} bytes; {untuned} sizes of their seed alone left out")


if __name__ == "__main__":
    main()
