#!/usr/bin/env python3
"""alloc_probe.py: the host cost of the torch calls an output-making pmtune call can be built from
(ways to make a tensor, the attribute reads of an input, the current stream), each alone in a
loop of CALLS calls, median of ROUNDS rounds; beside them torch.add and pmtune.add with and
without out=. One JSON line per call. Usage: python3 bench/python/alloc_probe.py (BUILD as in
host_cost.py)."""
import json
import os
import statistics
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, os.environ.get("BUILD", "build"), "python"))
import pmtune  # noqa: E402

ROUNDS, CALLS = 15, 4000


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


a = torch.rand(1000, device="cuda")
b = torch.rand(1000, device="cuda")
o = torch.empty_like(a)
s = torch.empty((), device="cuda")
f32, dev = torch.float32, a.device
raw = torch._C._cuda_getCurrentRawStream
es = torch.empty_strided
calls = {
    "nothing (loop)": lambda: None,
    "torch.empty_strided(size, stride, dtype=, device=int)": lambda: es((1000,), (1,), dtype=f32, device=0),
    "torch.empty_strided(size, stride, dtype=, device=torch.device)": lambda: es((1000,), (1,), dtype=f32, device=dev),
    "a.new_empty_strided(size, stride)": lambda: a.new_empty_strided((1000,), (1,)),
    "a.new_empty(size)": lambda: a.new_empty((1000,)),
    "torch.empty(size, dtype=, device=)": lambda: torch.empty((1000,), dtype=f32, device=0),
    "torch.empty_like(a)": lambda: torch.empty_like(a),
    "a.get_device()": lambda: a.get_device(),
    "a.data_ptr()": lambda: a.data_ptr(),
    "a.stride()": lambda: a.stride(),
    "a.shape": lambda: a.shape,
    "a.dtype": lambda: a.dtype,
    "a.is_cuda": lambda: a.is_cuda,
    "a.device": lambda: a.device,
    "_cuda_getCurrentRawStream(0)": lambda: raw(0),
    "a.is_contiguous()": lambda: a.is_contiguous(),
    "torch._C._to_dlpack(a)": lambda: torch._C._to_dlpack(a),
    "five reads (get_device, dtype, data_ptr, shape, stride)": lambda: (a.get_device(), a.dtype, a.data_ptr(), a.shape, a.stride()),
    "pmtune._ext.view(a, 'a') (the extension's read of a tensor, from Python)": lambda: pmtune._ext.view(a, "a"),
    "torch.add(a, b)": lambda: torch.add(a, b),
    "torch.add(a, b, out=o)": lambda: torch.add(a, b, out=o),
    "pmtune.add(a, b)": lambda: pmtune.add(a, b),
    "pmtune.add(a, b, out=o)": lambda: pmtune.add(a, b, out=o),
    "pmtune.add(a, b, out=torch.empty_strided(...))": lambda: pmtune.add(a, b, out=es((1000,), (1,), dtype=f32, device=0)),
    "pmtune.add(a, b, out=torch.empty_like(a))": lambda: pmtune.add(a, b, out=torch.empty_like(a)),
    "torch.empty_strided(...).data_ptr()": lambda: es((1000,), (1,), dtype=f32, device=0).data_ptr(),
    "pmtune.reduce_sum(a)": lambda: pmtune.reduce_sum(a),
    "pmtune.reduce_sum(a, out=s)": lambda: pmtune.reduce_sum(a, out=s),
    "torch.sum(a)": lambda: torch.sum(a),
}
print(json.dumps({"kind": "run", "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                  "python": sys.version.split()[0], "rounds": ROUNDS, "calls": CALLS}))
for name, f in calls.items():
    print(json.dumps({"call": name, "us": round(us(f), 3)}), flush=True)
