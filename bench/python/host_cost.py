#!/usr/bin/env python3
"""host_cost.py: what a warm call costs the host, pmtune's Python package against the torch op
it replaces, in one run: each pair called CALLS times in a loop on small tensors (a few us of GPU
work a call, less than the host's cost, so the loop's wall time is the host's), ROUNDS rounds
alternating the two after a warm-up, every round ending in a synchronisation; the median round's
time per call, and pmtune's over torch's. Beside it, the loop split in two (split_us): BURST calls
queued behind a kernel that holds the stream (torch.cuda._sleep) give the host's time alone (its
clock while queueing) and the GPU's alone (CUDA events around the burst, run back to back once the
stream is let go), median of ROUNDS; where the GPU's exceeds the host's, the loop measures the GPU.
One JSON line per pair, then a summary line.

Usage: python3 bench/python/host_cost.py   (BUILD: the build folder whose staged package
(BUILD/python) is imported, build)"""
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, os.environ.get("BUILD", "build"), "python"))
import pmtune  # noqa: E402

ROUNDS, CALLS = 21, 2000
BURST, HOLD_CYCLES = 200, 50_000_000  # 200 calls queued behind ~30 ms of a held stream


def per_call_us(fns):
    for f in fns:
        for _ in range(CALLS):
            f()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for r in range(ROUNDS):
        for i in (range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))):
            f = fns[i]
            t0 = time.perf_counter()
            for _ in range(CALLS):
                f()
            torch.cuda.synchronize()
            times[i].append((time.perf_counter() - t0) * 1e6 / CALLS)
    return [statistics.median(t) for t in times]


def split_us(f):
    """(host, gpu): us per call of f queueing behind a held stream, and of the GPU running them."""
    host, gpu = [], []
    for _ in range(ROUNDS):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(HOLD_CYCLES)
        e0.record()
        t0 = time.perf_counter()
        for _ in range(BURST):
            f()
        t1 = time.perf_counter()
        e1.record()
        held = not e0.query()  # the stream was still held when the last call was queued
        torch.cuda.synchronize()
        if held:
            host.append((t1 - t0) * 1e6 / BURST)
            gpu.append(e0.elapsed_time(e1) * 1e3 / BURST)
    if not host:
        return float("nan"), float("nan")
    return statistics.median(host), statistics.median(gpu)


def calls():
    """The calls timed here and in host_ab.py, on small tensors made once: (name, a function of m
    giving the call through m (the package, or a build of its extension: the same calls), torch's
    call)."""
    dev = torch.device("cuda")
    torch.manual_seed(1)
    a, b, c = (torch.rand(1000, device=dev) for _ in range(3))
    m1, m2 = torch.rand(100, 137, device=dev), torch.rand(100, 137, device=dev)
    h1, h2 = a.bfloat16(), b.bfloat16()
    img = torch.rand(32, 32, device=dev)
    w = [[0.0, 0.25, 0.0], [0.25, 0.0, 0.25], [0.0, 0.25, 0.0]]
    wt = torch.tensor(w, device=dev)[None, None]
    s = torch.empty((), device=dev)
    return [
        ("add f32 1000", lambda m: lambda: m.add(a, b), lambda: torch.add(a, b)),
        ("add f32 1000 out=", lambda m: lambda: m.add(a, b, out=c), lambda: torch.add(a, b, out=c)),
        ("add bf16 1000", lambda m: lambda: m.add(h1, h2), lambda: torch.add(h1, h2)),
        ("matadd f32 100x137", lambda m: lambda: m.matadd(m1, m2), lambda: torch.add(m1, m2)),
        ("matadd f32 100x137 transposed", lambda m: lambda: m.matadd(m1.t(), m2.t()),
         lambda: torch.add(m1.t(), m2.t())),
        ("reduce_sum f32 1000", lambda m: lambda: m.reduce_sum(a), lambda: torch.sum(a)),
        ("reduce_sum f32 1000 out=", lambda m: lambda: m.reduce_sum(a, out=s),
         lambda: torch.sum(a, dim=0, out=s)),
        ("filter f32 32x32 r1 zero", lambda m: lambda: m.filter(img, w, "zero"),
         lambda: F.conv2d(img[None, None], wt, padding=1)),
    ]


def main():
    print(json.dumps({"kind": "run", "gpu": torch.cuda.get_device_name(0),
                      "torch": torch.__version__, "python": sys.version.split()[0],
                      "pmtune": pmtune.__version__, "library": pmtune.library_path,
                      "commit": os.environ.get("PM_COMMIT"), "rounds": ROUNDS, "calls": CALLS}),
          flush=True)
    pairs = [(name, pm(pmtune), th) for name, pm, th in calls()]
    n = 1000
    axpy = pmtune.Kernel(os.path.join(ROOT, "examples", "kernels", "axpy.json"))
    a, y, y2 = (torch.rand(n, device="cuda") for _ in range(3))
    pairs.append(("kernel axpy f32 1000", lambda: axpy([n], [y, a], [0.5, None]),
                  lambda: y2.add_(a, alpha=0.5)))
    if hasattr(torch.ops, "pmtune") and hasattr(torch.ops.pmtune, "add"):
        c, d = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
        pairs.append(("torch.ops.pmtune.add f32 1000 (custom op)",
                      lambda: torch.ops.pmtune.add(c, d), lambda: torch.add(c, d)))
    ratios = []
    for name, pm, th in pairs:
        pm_us, th_us = per_call_us([pm, th])
        (pm_host, pm_gpu), (th_host, th_gpu) = split_us(pm), split_us(th)
        line = {"call": name, "pmtune_us": round(pm_us, 2), "torch_us": round(th_us, 2),
                "pmtune_over_torch": round(pm_us / th_us, 3),
                "pmtune_host_us": round(pm_host, 2), "torch_host_us": round(th_host, 2),
                "pmtune_gpu_us": round(pm_gpu, 2), "torch_gpu_us": round(th_gpu, 2)}
        if "custom op" not in name:
            ratios.append(pm_us / th_us)
        print(json.dumps(line), flush=True)
    print(json.dumps({"kind": "summary", "pairs": len(ratios),
                      "worst_pmtune_over_torch": round(max(ratios), 3),
                      "at_most_torch": sum(r <= 1.0 for r in ratios)}), flush=True)


if __name__ == "__main__":
    main()
