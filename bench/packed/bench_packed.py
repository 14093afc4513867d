#!/usr/bin/env python3
"""bench_packed.py: packed matadd (served as add) against torch.add and a flat float4 add, in one run.

For each packed size (pitch = line length; odd widths; row- and column-major), on one GPU, in one
process, interleaved: pm_matadd through ctypes on build/libpmtune.so (on torch tensors' memory and
torch's current stream), torch.add(a, b, out=c), and a flat float4 grid-stride add with a scalar
tail (a CuPy RawKernel, the shape of bench/peers' float4 add). The target: pm_matadd at
least as fast as both at every size.

Protocol, per size: fresh random inputs in [-1, 1) (torch's generator, a seed per size); every
method's result checked once against torch's a + b, bit for bit (an add rounds once); 200 ms of
GPU work to bring the clocks up and --warmup untimed runs of each; then --rounds rounds (>= 50),
each with fresh random inputs, running the three methods in a rotating order, each timed with
CUDA events around one run, after a read of twice the L2 cache (so that none of its data is left
there; --no-flush to leave it) and a spin of the GPU (torch.cuda._sleep) that holds it busy while
the host queues the run, so that host launch cost is not timed. Medians; GB/s counts 12 bytes a
float (a and b read, c written).

Output: a table, then one JSON object per size, each on a line starting with '{':
  size, order, n, pm_ms, torch_ms, float4_ms (medians), pm_gbps, pm_vs_torch = torch_ms / pm_ms
  and pm_vs_float4 = float4_ms / pm_ms (>= 1: pm_matadd is at least as fast), met (both >= 1),
  verified, served (what `pmtune explain --op add` says the call runs, where build/tools/pmtune is
  there), gpu, rounds, flush.

Usage (from the repository root, after building; the database from PMTUNE_DB, as pm_open takes it):
  PMTUNE_DB=/tmp/pmtune.db python3 bench/packed/bench_packed.py [--rounds 100] [--warmup 10]
      [--lib build/libpmtune.so] [--size 7777x5003:row ...] [--no-flush]
Exit status: 0 measured and verified, 1 a failed call or a wrong result, 2 bad usage or a missing
module (torch, cupy).
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The sizes: odd widths, both orders where the issue does not name one.
SIZES = [
    (7777, 5003, "row"), (7777, 5003, "col"),
    (4097, 1500, "col"), (4097, 1500, "row"),
    (4096, 4096, "row"), (4096, 4096, "col"),
    (1000, 1001, "row"), (1000, 1001, "col"),
    (3001, 4097, "col"), (3001, 4097, "row"),
    (12345, 777, "row"), (12345, 777, "col"),
    (16384, 8192, "row"), (16384, 8192, "col"),
]

PM_OK, PM_ROW_MAJOR, PM_COL_MAJOR = 0, 0, 1


class PmOptions(ctypes.Structure):  # include/pmtune.h's pm_options
    _fields_ = [("device", ctypes.c_int), ("db_path", ctypes.c_char_p),
                ("autotune", ctypes.c_int), ("autotune_budget", ctypes.c_int)]


def fail(msg, status=1):
    print("bench_packed: " + msg, file=sys.stderr)
    sys.exit(status)


def load_pmtune(path):
    """Loads libpmtune.so with every symbol bound now (RTLD_NOW), before torch and CuPy load their
    own CUDA libraries (NVRTC of another version among them), so that pmtune's calls bind to the
    libraries it was built with."""
    if not os.path.exists(path):
        fail("%s not found: build first (cmake --build build), or give --lib" % path, 2)
    lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    vp, sz, ci = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
    lib.pm_open.argtypes, lib.pm_open.restype = [ctypes.POINTER(vp), ctypes.POINTER(PmOptions)], ci
    lib.pm_close.argtypes, lib.pm_close.restype = [vp], None
    lib.pm_errmsg.argtypes, lib.pm_errmsg.restype = [vp], ctypes.c_char_p
    lib.pm_errname.argtypes, lib.pm_errname.restype = [ci], ctypes.c_char_p
    lib.pm_notice.argtypes, lib.pm_notice.restype = [vp], ctypes.c_char_p
    lib.pm_version.argtypes, lib.pm_version.restype = [], ctypes.c_char_p
    lib.pm_matadd.argtypes = [vp, sz, sz, ci, vp, sz, vp, sz, vp, sz, vp]
    lib.pm_matadd.restype = ci
    return lib


def parse_size(text):
    try:
        dims, order = text.split(":") if ":" in text else (text, "row")
        rows, cols = (int(x) for x in dims.split("x"))
        if rows < 1 or cols < 1 or order not in ("row", "col"):
            raise ValueError
        return rows, cols, order
    except ValueError:
        raise argparse.ArgumentTypeError("size '%s': want ROWSxCOLS[:row|:col]" % text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.environ.get("PMTUNE_LIB", os.path.join(ROOT, "build", "libpmtune.so")))
    ap.add_argument("--rounds", type=int, default=100, help="timed rounds per size (>= 50)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed runs of each method first")
    ap.add_argument("--size", type=parse_size, action="append", help="ROWSxCOLS[:row|:col], repeatable")
    ap.add_argument("--no-flush", action="store_true", help="do not flush L2 before each timed run")
    args = ap.parse_args()
    if args.rounds < 50:
        ap.error("--rounds must be at least 50")

    lib = load_pmtune(args.lib)  # before torch and cupy: see load_pmtune
    try:
        import torch
        import cupy
    except ImportError as e:
        fail("needs torch and cupy: %s" % e, 2)
    if not torch.cuda.is_available():
        fail("no CUDA device for torch")

    db = os.environ.get("PMTUNE_DB")
    ctx = ctypes.c_void_p()
    opts = PmOptions(device=0, db_path=db.encode() if db else None, autotune=0, autotune_budget=0)
    rc = lib.pm_open(ctypes.byref(ctx), ctypes.byref(opts))
    if rc != PM_OK:
        msg = lib.pm_errmsg(ctx).decode() if ctx.value else "out of memory"
        fail("pm_open: %s: %s" % (lib.pm_errname(rc).decode(), msg))

    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    stream = torch.cuda.Stream(device=dev)  # one stream for all three: pmtune gets its handle
    props = torch.cuda.get_device_properties(dev)
    gpu = props.name
    sm_count = props.multi_processor_count
    l2 = getattr(props, "L2_cache_size", 50 << 20) or (50 << 20)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    print("# bench_packed.py; %s; libpmtune %s, build of %s; torch %s, cupy %s; db %s; %d rounds, %s"
          % (gpu, lib.pm_version().decode(), commit, torch.__version__, cupy.__version__,
             db or "(default)", args.rounds, "no flush" if args.no_flush else "L2 flushed"))

    float4_add = cupy.RawKernel(r"""
extern "C" __global__ void __launch_bounds__(256)
add_f4(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
       unsigned long long n) {
  const unsigned long long n4 = n / 4, stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const float4 *a4 = (const float4 *)a, *b4 = (const float4 *)b;
  float4 *c4 = (float4 *)c;
  for (unsigned long long i = t; i < n4; i += stride) {
    const float4 x = a4[i], y = b4[i];
    c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
  if (n4 * 4 + t < n) c[n4 * 4 + t] = a[n4 * 4 + t] + b[n4 * 4 + t];
}
""", "add_f4")
    cp_stream = cupy.cuda.ExternalStream(stream.cuda_stream)

    flush = None if args.no_flush else torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev).fill_(0)
    gate = hasattr(torch.cuda, "_sleep")
    status = 0
    results = []
    sizes = args.size or SIZES
    print("%-12s %-4s %11s %10s %10s %10s %8s %9s %10s  %s"
          % ("size", "ord", "n", "pm ms", "torch ms", "float4 ms", "pm GB/s", "vs torch", "vs float4", "served"))
    with torch.cuda.stream(stream):
        for si, (rows, cols, order) in enumerate(sizes):
            n = rows * cols
            colmajor = order == "col"
            line = (rows if colmajor else cols) * 4  # packed: the pitch is a line's length
            gen = torch.Generator(device=dev)
            gen.manual_seed(1000 + si)
            a = torch.empty(n, dtype=torch.float32, device=dev)
            b = torch.empty_like(a)
            c = torch.empty_like(a)

            def refill():
                a.uniform_(-1, 1, generator=gen)
                b.uniform_(-1, 1, generator=gen)

            refill()
            ca, cb, cc = cupy.asarray(a), cupy.asarray(b), cupy.asarray(c)
            grid4 = max(1, min((n // 4 + 255) // 256, sm_count * (2048 // 256) * 4))

            def run_pm():
                r = lib.pm_matadd(ctx, rows, cols, PM_COL_MAJOR if colmajor else PM_ROW_MAJOR,
                                  c.data_ptr(), line, a.data_ptr(), line, b.data_ptr(), line,
                                  stream.cuda_stream)
                if r != PM_OK:
                    fail("pm_matadd %dx%d %s: %s: %s" % (rows, cols, order, lib.pm_errname(r).decode(),
                                                          lib.pm_errmsg(ctx).decode()))

            def run_torch():
                torch.add(a, b, out=c)

            def run_float4():
                with cp_stream:
                    float4_add((grid4,), (256,), (ca, cb, cc, cupy.uint64(n)))

            methods = [("pm", run_pm), ("torch", run_torch), ("float4", run_float4)]

            # each checked once, bit for bit, against torch's a + b, the output poisoned first
            want = a + b
            verified = True
            for name, run in methods:
                c.fill_(float("nan"))
                run()
                stream.synchronize()
                if not torch.equal(c, want):
                    bad = int((c != want).sum().item())
                    print("bench_packed: %s %dx%d %s: %d of %d elements differ from a + b"
                          % (name, rows, cols, order, bad, n), file=sys.stderr)
                    verified = False
                    status = 1
            del want

            # clocks up (200 ms of work), then warm-up runs
            t0 = torch.cuda.Event(enable_timing=True)
            t1 = torch.cuda.Event(enable_timing=True)
            t0.record(stream)
            while True:
                for _ in range(20):
                    run_torch()
                t1.record(stream)
                t1.synchronize()
                if t0.elapsed_time(t1) > 200:
                    break
            for _ in range(args.warmup):
                for _, run in methods:
                    run()

            times = {name: [] for name, _ in methods}
            events = []
            for r in range(args.rounds):
                refill()
                for k in range(3):
                    name, run = methods[(r + k) % 3]  # rotating order
                    if flush is not None:
                        flush.sum()  # reads it all: no line of a, b or c stays in L2
                    if gate:
                        torch.cuda._sleep(200000)  # the GPU busy while the host queues the run
                    e0 = torch.cuda.Event(enable_timing=True)
                    e1 = torch.cuda.Event(enable_timing=True)
                    e0.record(stream)
                    run()
                    e1.record(stream)
                    events.append((name, e0, e1))
                if len(events) >= 300:  # bounded: the events of a few rounds at a time
                    stream.synchronize()
                    for name, e0, e1 in events:
                        times[name].append(e0.elapsed_time(e1))
                    events = []
            stream.synchronize()
            for name, e0, e1 in events:
                times[name].append(e0.elapsed_time(e1))

            med = {name: statistics.median(v) for name, v in times.items()}
            served = explain(n, db)
            res = {
                "size": "%dx%d" % (rows, cols), "order": order, "n": n,
                "pm_ms": round(med["pm"], 6), "torch_ms": round(med["torch"], 6),
                "float4_ms": round(med["float4"], 6),
                "pm_gbps": round(12.0 * n / (med["pm"] * 1e6), 1),
                "pm_vs_torch": round(med["torch"] / med["pm"], 4),
                "pm_vs_float4": round(med["float4"] / med["pm"], 4),
                "verified": verified, "served": served, "gpu": gpu, "rounds": args.rounds,
                "flush": flush is not None,
            }
            res["met"] = verified and res["pm_vs_torch"] >= 1.0 and res["pm_vs_float4"] >= 1.0
            results.append(res)
            print("%-12s %-4s %11d %10.4f %10.4f %10.4f %8.0f %8.3fx %9.3fx  %s"
                  % (res["size"], order, n, med["pm"], med["torch"], med["float4"], res["pm_gbps"],
                     res["pm_vs_torch"], res["pm_vs_float4"], served), flush=True)
            del ca, cb, cc, a, b, c

    notice = lib.pm_notice(ctx)
    if notice:
        print("# pm_notice: %s" % notice.decode())
    lib.pm_close(ctx)
    for res in results:
        print(json.dumps(res))
    return status


def explain(n, db):
    """What `pmtune explain --op add --size n` says a call runs: "exact block=... (from ...)",
    or "?" where build/tools/pmtune is not there or fails."""
    exe = os.path.join(ROOT, "build", "tools", "pmtune")
    if not os.access(exe, os.X_OK):
        return "?"
    cmd = [exe, "explain", "--op", "add", "--size", str(n), "--json"] + (["--db", db] if db else [])
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        d = json.loads(p.stdout)
        return "%s %s" % (d["source"], d["config"])
    except (ValueError, KeyError):
        return "?"


if __name__ == "__main__":
    sys.exit(main())
