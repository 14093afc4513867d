#!/usr/bin/env python3
# h100_winners_on_h200.py H100_DOC H200_DOC: with no GPU, how the H100's winner at each size the H200's document has runs on the H200 (what the sibling rule served an H200 before), against the fastest the H200 measured there.
"""At each size (op, type, variant, radius, rows, cols, n) of both documents: the H100's fastest
measured configuration (its exact winner, which an H200 was served under the sibling rule), and,
where the H200 measured that configuration there too, the H200's fastest over its time: 1.0 where
the H100's winner is the H200's too. A line an op and type, then one for all, then the sizes under
0.9. The H200's fastest of many timings is biased low (the least of several noisy medians), so a
ratio a little under 1 is partly noise."""
import collections
import gzip
import json
import statistics
import sys


def fastest(path):
    best = collections.defaultdict(dict)
    for m in json.load(gzip.open(path))["measurements"]:
        if m["status"] != "ok":
            continue
        size = (m["op"], m["dtype"], m["variant"], m["radius"], m["rows"], m["cols"], m["n"])
        cfg = (m["template_sha256"], m["config"])
        if cfg not in best[size] or m["median_ms"] < best[size][cfg]:
            best[size][cfg] = m["median_ms"]
    return best


def main():
    h100, h200 = fastest(sys.argv[1]), fastest(sys.argv[2])
    ratios, low, unmeasured = collections.defaultdict(list), [], 0
    for size, cfgs in h200.items():
        if size not in h100:
            continue
        won = min(h100[size], key=h100[size].get)
        if won not in cfgs:
            unmeasured += 1
            continue
        r = min(cfgs.values()) / cfgs[won]
        ratios[size[:2]].append(r)
        if r < 0.9:
            low.append((round(r, 3), size, won[1], cfgs[won], min(cfgs, key=cfgs.get)[1],
                        min(cfgs.values())))
    line = "%-14s %5d sizes: >= 0.95 %5d, >= 0.90 %5d, worst %.3f, median %.3f"
    everything = []
    for key in sorted(ratios):
        v = ratios[key]
        everything += v
        print(line % (" ".join(key), len(v), sum(x >= 0.95 for x in v), sum(x >= 0.9 for x in v),
                      min(v), statistics.median(v)))
    v = everything
    print(line % ("all", len(v), sum(x >= 0.95 for x in v), sum(x >= 0.9 for x in v), min(v),
                  statistics.median(v)))
    print(f"{unmeasured} sizes where the H200 did not measure the H100's winner")
    for x in sorted(low):
        print("under 0.9:", x)


if __name__ == "__main__":
    main()
