#!/usr/bin/env python3
# compact.py: rounds the timings of shipped results to the digits a decision uses, so that a document stays a few MB.
"""Usage: results/compact.py FILE...

Writes each pmtune export document (a .gz one inflated and compressed again with `gzip -9 -n`)
with every measurement's median_ms, min_ms and max_ms rounded to 5 significant digits, gbps to 4
and max_error to 3; nothing else changes. The digits dropped are below what a timing resolves
(CUDA events tick at about 0.5 us; the medians of one configuration measured twice differ by 1%
and more), and rounding keeps min <= median <= max, so `pmtune import` takes the document as
before; `pmtune_same_decisions OLD_DIR NEW_DIR` (bench/serve/same_decisions.c) checks that the
documents decide alike. The digits carry most of a document's entropy: the H100 document of
150,706 measurements shrank from 6.8 MB to 3.7 MB compressed.
"""
import gzip
import json
import subprocess
import sys

DIGITS = {"median_ms": 5, "min_ms": 5, "max_ms": 5, "gbps": 4, "max_error": 3}


def rounded(v, digits):
    return float(f"{v:.{digits}g}") if isinstance(v, float) else v


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        gz = path.endswith(".gz")
        with open(path, "rb") as f:
            raw = f.read()
        doc = json.loads(gzip.decompress(raw) if gz else raw)
        ms = doc["measurements"]
        for m in ms:
            for key, digits in DIGITS.items():
                if key in m:
                    m[key] = rounded(m[key], digits)
        head = {k: v for k, v in doc.items() if k not in ("gpus", "measurements")}
        line = lambda x: json.dumps(x, separators=(",", ":"))
        # as pmtune export writes it: the head, then one GPU a line, then one measurement a line
        text = line(head)[:-1] + ',\n"gpus": [\n' + ",\n".join(line(g) for g in doc["gpus"])
        text += '\n],\n"measurements": [\n' + ",\n".join(line(m) for m in ms) + "\n]}\n"
        data = text.encode("utf-8")
        if gz:
            data = subprocess.run(["gzip", "-9", "-n", "-c"], input=data, check=True,
                                  capture_output=True).stdout
        with open(path, "wb") as f:
            f.write(data)
        print(f"{path}: {len(ms)} measurements, {len(raw)} -> {len(data)} bytes")


if __name__ == "__main__":
    main()
