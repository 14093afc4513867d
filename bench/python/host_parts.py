#!/usr/bin/env python3
"""host_parts.py: where a warm pmtune call's host time goes, beside torch's: each part a call is
made of (a torch accessor the extension calls, the factory that makes an output, the stream, the
whole calls with and without out=) timed alone from Python, us a call, median of ROUNDS rounds of
CALLS calls, the GPU synchronised after each round; an empty lambda's time (the loop's own) is
printed and not subtracted. One JSON line per part.

Usage: python3 bench/python/host_parts.py   (BUILD: the build folder whose staged package is
imported, build)"""
import json
import os
import statistics
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, os.environ.get("BUILD", "build"), "python"))
import pmtune  # noqa: E402

ROUNDS, CALLS = 15, 5000


def us(f):
    for _ in range(CALLS):
        f()
    torch.cuda.synchronize()
    t = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            f()
        torch.cuda.synchronize()
        t.append((time.perf_counter() - t0) * 1e6 / CALLS)
    return statistics.median(t)


def main():
    dev = torch.device("cuda")
    a, b, c = (torch.rand(1000, device=dev) for _ in range(3))
    raw = torch._C._cuda_getCurrentRawStream
    parts = [
        ("loop (an empty lambda)", lambda: None),
        ("a.get_device()", lambda: a.get_device()),
        ("a.dtype", lambda: a.dtype),
        ("a.data_ptr()", lambda: a.data_ptr()),
        ("a.shape", lambda: a.shape),
        ("a.stride()", lambda: a.stride()),
        ("a.is_contiguous()", lambda: a.is_contiguous()),
        ("torch._C._cuda_getCurrentRawStream(0)", lambda: raw(0)),
        ("torch.empty_like(a)", lambda: torch.empty_like(a)),
        ("a.new_empty((1000,))", lambda: a.new_empty((1000,))),
        ("torch.empty_strided((1000,), (1,), dtype, device)",
         lambda: torch.empty_strided((1000,), (1,), dtype=torch.float32, device=0)),
        ("pmtune._ext.view(a, 'a')", lambda: pmtune._ext.view(a, "a")),
        ("pmtune.add(a, b, out=c)", lambda: pmtune.add(a, b, out=c)),
        ("pmtune.add(a, b)", lambda: pmtune.add(a, b)),
        ("torch.add(a, b, out=c)", lambda: torch.add(a, b, out=c)),
        ("torch.add(a, b)", lambda: torch.add(a, b)),
    ]
    print(json.dumps({"kind": "run", "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                      "python": sys.version.split()[0], "commit": os.environ.get("PM_COMMIT"),
                      "rounds": ROUNDS, "calls": CALLS}), flush=True)
    for name, f in parts:
        print(json.dumps({"part": name, "us": round(us(f), 3)}), flush=True)


if __name__ == "__main__":
    main()
