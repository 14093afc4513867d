#!/usr/bin/env python3
"""gallery_vs_torch.py: the kernels of examples/kernels served by pmtune (pm_kernel_launch_with,
through ctypes) against their PyTorch equivalents, in one run, at sizes given here (gallery.sh
tunes others): each result checked against torch's first, then each call timed with CUDA events
on the current stream (warm-up, then the median of ROUNDS rounds of CALLS calls, the two
alternating), on fresh random data; then each again as CALLS calls captured in a CUDA graph and
replayed, which times the kernels without Python's cost of each call (what issue 33 is about).
One JSON line per kernel and size, then a summary line.

Usage: PMTUNE_LIBRARY=build/libpmtune.so PMTUNE_DB=DB python3 bench/kernels/gallery_vs_torch.py
"""
import ctypes
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from pmtune import _lib  # noqa: E402  (finds libpmtune.so as the package does)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
ROUNDS, CALLS = 30, 20

lib, lib_path = _lib.load()
lib.pm_open.restype, lib.pm_open.argtypes = ctypes.c_int, [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
lib.pm_errmsg.restype, lib.pm_errmsg.argtypes = ctypes.c_char_p, [ctypes.c_void_p]
lib.pm_kernel_open.restype = ctypes.c_int
lib.pm_kernel_open.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
lib.pm_kernel_launch_with.restype = ctypes.c_int
lib.pm_kernel_launch_with.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                                      ctypes.POINTER(ctypes.c_void_p),
                                      ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                      ctypes.c_void_p]

ctx = ctypes.c_void_p()
if lib.pm_open(ctypes.byref(ctx), None) != 0:
    sys.exit("pm_open: %s" % lib.pm_errmsg(ctx).decode())


def kernel(name):
    k = ctypes.c_void_p()
    path = os.path.join(ROOT, "examples", "kernels", name + ".json").encode()
    if lib.pm_kernel_open(ctx, path, ctypes.byref(k)) != 0:
        sys.exit("pm_kernel_open %s: %s" % (name, lib.pm_errmsg(ctx).decode()))
    return k


def launcher(k, dims, tensors, scalars):
    """A call of k on dims over tensors with scalars (ctypes values or None), as a closure."""
    d = (ctypes.c_size_t * len(dims))(*dims)
    b = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    keep = [s for s in scalars if s is not None]
    s = (ctypes.c_void_p * len(scalars))(
        *[None if v is None else ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in scalars])

    def call():
        rc = lib.pm_kernel_launch_with(k, d, b, s, len(scalars),
                                       ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc != 0:
            raise RuntimeError(lib.pm_errmsg(ctx).decode())
    call.keep = keep  # the scalars live as long as the call
    return call


def rounds_us(fns, calls, per):
    """Each of fns timed: ROUNDS rounds of calls calls between events, alternating; the medians
    of each round's time over per."""
    for f in fns:
        for _ in range(3 * calls):
            f()
    times = [[] for _ in fns]
    for r in range(ROUNDS):
        order = list(range(len(fns))) if r % 2 == 0 else list(reversed(range(len(fns))))
        for i in order:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(calls):
                fns[i]()
            b.record()
            b.synchronize()
            times[i].append(a.elapsed_time(b) * 1e3 / per)
    return [statistics.median(t) for t in times]


def graphed(f):
    """CALLS calls of f captured in a CUDA graph (after a call on a side stream, as torch asks):
    its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        f()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(CALLS):
            f()
    return g.replay


def median_us(fns):
    """Each of fns per call, called (Python's cost in it) and replayed from a graph (the kernels
    alone): [called...], [replayed...]."""
    return rounds_us(fns, CALLS, CALLS), rounds_us([graphed(f) for f in fns], 1, CALLS)


def report(name, size, nbytes, us, tol_ok, err):
    (pm, th), (gpm, gth) = us
    line = {"kernel": name, "size": size, "mbytes": round(nbytes / 1e6, 2), "pmtune_us": round(pm, 2),
            "torch_us": round(th, 2), "torch_over_pmtune": round(th / pm, 3),
            "graph_pmtune_us": round(gpm, 2), "graph_torch_us": round(gth, 2),
            "graph_torch_over_pmtune": round(gth / gpm, 3), "checked": tol_ok, "max_abs_error": err}
    print(json.dumps(line), flush=True)
    return line


def main():
    torch.manual_seed(1)
    dev = torch.device("cuda")
    gpu = torch.cuda.get_device_name(0)
    print(json.dumps({"kind": "run", "gpu": gpu, "torch": torch.__version__, "library": lib_path,
                      "db": os.environ.get("PMTUNE_DB"), "commit": os.environ.get("PM_COMMIT")}))
    lines = []
    axpy, softmax, layernorm = kernel("axpy"), kernel("softmax"), kernel("layernorm")
    matadd, transpose = kernel("matadd"), kernel("transpose")
    batched = kernel("batched_transpose")
    for n in (3_000_017, 50_000_021):
        x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
        alpha = 0.75
        want = y + alpha * x
        got = y.clone()
        f = launcher(axpy, [n], [got, x], [ctypes.c_float(alpha), None])
        f()
        torch.cuda.synchronize()
        err = (got - want).abs().max().item()
        y2 = y.clone()
        us = median_us([f, lambda: y2.add_(x, alpha=alpha)])
        lines.append(report("axpy", str(n), 12 * n, us, err <= 1e-5, err))
    for rows, cols in ((8000, 1000), (3000, 4097), (32768, 768)):
        x = torch.randn(rows, cols, device=dev)
        out = torch.empty_like(x)
        f = launcher(softmax, [rows, cols], [out, x], [ctypes.c_float(1.0), None, None])
        f()
        torch.cuda.synchronize()
        err = (out - torch.softmax(x, 1)).abs().max().item()
        us = median_us([f, lambda: torch.softmax(x, 1)])
        lines.append(report("softmax", "%dx%d" % (rows, cols), 8 * rows * cols, us, err <= 1e-5, err))
        g = launcher(softmax, [rows, cols], [out, x], [ctypes.c_float(0.5), None, None])
        g()
        torch.cuda.synchronize()
        err = (out - torch.softmax(0.5 * x, 1)).abs().max().item()
        if err > 1e-5:
            print(json.dumps({"kernel": "softmax", "size": "%dx%d" % (rows, cols), "scale": 0.5,
                              "max_abs_error": err, "checked": False}))
        gamma, beta = torch.randn(cols, device=dev), torch.randn(cols, device=dev)
        f = launcher(layernorm, [rows, cols], [out, x, gamma, beta], [ctypes.c_float(1e-5), None, None])
        f()
        torch.cuda.synchronize()
        want = torch.nn.functional.layer_norm(x, (cols,), gamma, beta, 1e-5)
        err = (out - want).abs().max().item()
        us = median_us([f, lambda: torch.nn.functional.layer_norm(x, (cols,), gamma, beta, 1e-5)])
        lines.append(report("layernorm", "%dx%d" % (rows, cols), 8 * rows * cols, us, err <= 1e-3, err))
    for rows, cols in ((5000, 3001), (10007, 8191)):
        a, b = torch.randn(rows, cols, device=dev), torch.randn(rows, cols, device=dev)
        c = torch.empty_like(a)
        f = launcher(matadd, [rows, cols], [c, a, b], [None, None])
        f()
        torch.cuda.synchronize()
        err = (c - (a + b)).abs().max().item()
        c2 = torch.empty_like(a)
        us = median_us([f, lambda: torch.add(a, b, out=c2)])
        lines.append(report("matadd", "%dx%d" % (rows, cols), 12 * rows * cols, us, err == 0, err))
        t = torch.empty(cols, rows, device=dev)
        f = launcher(transpose, [rows, cols], [t, a], [None, None])
        f()
        torch.cuda.synchronize()
        err = (t - a.t()).abs().max().item()
        t2 = torch.empty(cols, rows, device=dev)
        us = median_us([f, lambda: t2.copy_(a.t())])
        lines.append(report("transpose", "%dx%d" % (rows, cols), 8 * rows * cols, us, err == 0, err))
    for b, rows, cols in ((12, 1000, 768), (96, 197, 384)):
        a = torch.randn(b, rows, cols, device=dev)
        t = torch.empty(b, cols, rows, device=dev)
        f = launcher(batched, [b, rows, cols], [t, a], [None, None])
        f()
        torch.cuda.synchronize()
        err = (t - a.transpose(1, 2)).abs().max().item()
        t2 = torch.empty(b, cols, rows, device=dev)
        us = median_us([f, lambda: t2.copy_(a.transpose(1, 2))])
        lines.append(report("batched_transpose", "%dx%dx%d" % (b, rows, cols), 8 * b * rows * cols,
                            us, err == 0, err))
    big = [l for l in lines if l["mbytes"] > 1]
    print(json.dumps({"kind": "summary", "calls": len(lines), "checked": sum(l["checked"] for l in lines),
                      "over_1mb": len(big),
                      "at_least_torch": sum(l["torch_over_pmtune"] >= 1.0 for l in big),
                      "least_torch_over_pmtune": min(l["torch_over_pmtune"] for l in big),
                      "graph_at_least_torch": sum(l["graph_torch_over_pmtune"] >= 1.0 for l in big),
                      "graph_least_torch_over_pmtune": min(l["graph_torch_over_pmtune"] for l in big)}))


if __name__ == "__main__":
    main()
