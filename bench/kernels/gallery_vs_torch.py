#!/usr/bin/env python3
"""gallery_vs_torch.py: the kernels of examples/kernels served by pmtune (pmtune.Kernel,
through the extension) against their PyTorch equivalents, in one run, at sizes given here (gallery.sh
tunes others): each result checked against torch's first, then each call timed with CUDA events
on the current stream (warm-up, then the median of ROUNDS rounds of CALLS calls, the two
alternating), on fresh random data, three ways: called from Python (Python's own cost of each
call in it, which the extension keeps near a torch op's), "graph": the same calls captured in a
CUDA graph and replayed (the kernels alone; data that fits the L2 cache stays there from call to
call), and "cold": replayed calls cycling over copies of the data, at least COLD_BYTES of them,
as tuning times (each call's data out of L2). One JSON line per kernel and size, then a summary
line.

Usage: PMTUNE_DB=DB python3 bench/kernels/gallery_vs_torch.py   (BUILD: the build folder, build)
"""
import json
import os
import statistics
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, os.environ.get("BUILD", "build"), "python"))
import pmtune  # noqa: E402  (the package staged in the build: its extension and library)

ROUNDS, CALLS = 30, 20
COLD_BYTES = 256 << 20  # five times an H100's L2

ctx = pmtune.Context(0)  # on $PMTUNE_DB


def kernel(name):
    return pmtune.Kernel(os.path.join(ROOT, "examples", "kernels", name + ".json"), context=ctx)


def launcher(k, dims, tensors, scalars):
    """A call of k on dims over tensors with scalars (numbers or None), as a closure."""
    def call():
        k(dims, tensors, scalars)
    call.keep = tensors  # the tensors live as long as the call
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


def graphed(fs):
    """CALLS calls cycling over fs captured in a CUDA graph (after a call of each on a side
    stream, as torch asks): its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for f in fs:
            f()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(CALLS):
            fs[i % len(fs)]()
    return g.replay


def measure(make, nbytes):
    """make() gives (pmtune's call, torch's call) on fresh data; each timed called, replayed and
    replayed cold (over copies): ((pm, torch), (pm, torch), (pm, torch)) in us per call."""
    first = make()
    copies = [first] + [make() for _ in range(min(CALLS, -(-COLD_BYTES // nbytes)) - 1)]
    called = rounds_us(list(first), CALLS, CALLS)
    graph = rounds_us([graphed([f]) for f in first], 1, CALLS)
    cold = rounds_us([graphed([c[i] for c in copies]) for i in range(2)], 1, CALLS)
    return called, graph, cold


def report(name, size, nbytes, us, tol_ok, err):
    line = {"kernel": name, "size": size, "mbytes": round(nbytes / 1e6, 2)}
    for prefix, (pm, th) in zip(("", "graph_", "cold_"), us):
        line.update({prefix + "pmtune_us": round(pm, 2), prefix + "torch_us": round(th, 2),
                     prefix + "torch_over_pmtune": round(th / pm, 3)})
    line.update({"checked": tol_ok, "max_abs_error": err})
    print(json.dumps(line), flush=True)
    return line


def main():
    torch.manual_seed(1)
    dev = torch.device("cuda")
    gpu = torch.cuda.get_device_name(0)
    print(json.dumps({"kind": "run", "gpu": gpu, "torch": torch.__version__, "library": pmtune.library_path,
                      "db": os.environ.get("PMTUNE_DB"), "commit": os.environ.get("PM_COMMIT"),
                      "rounds": ROUNDS, "calls": CALLS, "cold_bytes": COLD_BYTES}))
    lines = []
    axpy, softmax, layernorm = kernel("axpy"), kernel("softmax"), kernel("layernorm")
    matadd, transpose = kernel("matadd"), kernel("transpose")
    batched = kernel("batched_transpose")
    alpha = 0.75
    for n in (3_000_017, 50_000_021):
        x, y = torch.randn(n, device=dev), torch.randn(n, device=dev)
        got = y.clone()
        launcher(axpy, [n], [got, x], [alpha, None])()
        torch.cuda.synchronize()
        err = (got - (y + alpha * x)).abs().max().item()

        def make():
            x, y, y2 = (torch.randn(n, device=dev) for _ in range(3))
            return (launcher(axpy, [n], [y, x], [alpha, None]),
                    lambda: y2.add_(x, alpha=alpha))
        lines.append(report("axpy", str(n), 12 * n, measure(make, 12 * n), err <= 1e-5, err))
    for rows, cols in ((8000, 1000), (3000, 4097), (32768, 768)):
        x = torch.randn(rows, cols, device=dev)
        out = torch.empty_like(x)
        launcher(softmax, [rows, cols], [out, x], [1.0, None, None])()
        torch.cuda.synchronize()
        err = (out - torch.softmax(x, 1)).abs().max().item()
        launcher(softmax, [rows, cols], [out, x], [0.5, None, None])()
        torch.cuda.synchronize()
        err2 = (out - torch.softmax(0.5 * x, 1)).abs().max().item()

        def make():
            x, out = torch.randn(rows, cols, device=dev), torch.empty(rows, cols, device=dev)
            return (launcher(softmax, [rows, cols], [out, x], [1.0, None, None]),
                    lambda: torch.softmax(x, 1))
        nb = 8 * rows * cols
        lines.append(report("softmax", "%dx%d" % (rows, cols), nb, measure(make, nb),
                            max(err, err2) <= 1e-5, max(err, err2)))
        gamma, beta = torch.randn(cols, device=dev), torch.randn(cols, device=dev)
        launcher(layernorm, [rows, cols], [out, x, gamma, beta], [1e-5, None, None])()
        torch.cuda.synchronize()
        want = torch.nn.functional.layer_norm(x, (cols,), gamma, beta, 1e-5)
        err = (out - want).abs().max().item()

        def make():
            x, out = torch.randn(rows, cols, device=dev), torch.empty(rows, cols, device=dev)
            return (launcher(layernorm, [rows, cols], [out, x, gamma, beta],
                             [1e-5, None, None]),
                    lambda: torch.nn.functional.layer_norm(x, (cols,), gamma, beta, 1e-5))
        lines.append(report("layernorm", "%dx%d" % (rows, cols), nb, measure(make, nb), err <= 1e-3,
                            err))
    for rows, cols in ((5000, 3001), (10007, 8191)):
        a, b = torch.randn(rows, cols, device=dev), torch.randn(rows, cols, device=dev)
        c = torch.empty_like(a)
        launcher(matadd, [rows, cols], [c, a, b], [None, None])()
        torch.cuda.synchronize()
        err = (c - (a + b)).abs().max().item()

        def make():
            a, b, c, c2 = (torch.randn(rows, cols, device=dev) for _ in range(4))
            return (launcher(matadd, [rows, cols], [c, a, b], [None, None]),
                    lambda: torch.add(a, b, out=c2))
        nb = 12 * rows * cols
        lines.append(report("matadd", "%dx%d" % (rows, cols), nb, measure(make, nb), err == 0, err))
        t = torch.empty(cols, rows, device=dev)
        launcher(transpose, [rows, cols], [t, a], [None, None])()
        torch.cuda.synchronize()
        err = (t - a.t()).abs().max().item()

        def make():
            a, t, t2 = (torch.empty(n, device=dev) for n in ((rows, cols), (cols, rows), (cols, rows)))
            a.normal_()
            return (launcher(transpose, [rows, cols], [t, a], [None, None]),
                    lambda: t2.copy_(a.t()))
        nb = 8 * rows * cols
        lines.append(report("transpose", "%dx%d" % (rows, cols), nb, measure(make, nb), err == 0, err))
    for b, rows, cols in ((12, 1000, 768), (96, 197, 384)):
        a = torch.randn(b, rows, cols, device=dev)
        t = torch.empty(b, cols, rows, device=dev)
        launcher(batched, [b, rows, cols], [t, a], [None, None])()
        torch.cuda.synchronize()
        err = (t - a.transpose(1, 2)).abs().max().item()

        def make():
            a, t, t2 = (torch.empty(n, device=dev) for n in ((b, rows, cols), (b, cols, rows),
                                                              (b, cols, rows)))
            a.normal_()
            return (launcher(batched, [b, rows, cols], [t, a], [None, None]),
                    lambda: t2.copy_(a.transpose(1, 2)))
        nb = 8 * b * rows * cols
        lines.append(report("batched_transpose", "%dx%dx%d" % (b, rows, cols), nb,
                            measure(make, nb), err == 0, err))
    big = [l for l in lines if l["mbytes"] > 1]
    summary = {"kind": "summary", "calls": len(lines), "checked": sum(l["checked"] for l in lines),
               "over_1mb": len(big)}
    for prefix in ("", "graph_", "cold_"):
        summary[prefix + "at_least_torch"] = sum(l[prefix + "torch_over_pmtune"] >= 1.0 for l in big)
        summary[prefix + "least_torch_over_pmtune"] = min(l[prefix + "torch_over_pmtune"] for l in big)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
