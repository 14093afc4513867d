"""pmtune for Python: pmtune's tuned kernels (matadd, add, reduce_sum, filter) called on any
GPU array that exposes __cuda_array_interface__ or DLPack (PyTorch, CuPy, Numba, JAX), on the
caller's current stream, through libpmtune.so's C ABI with ctypes (no compiled extension).
Every call takes float32, float16, bfloat16 and float64 arrays (all of one call of one type;
16-bit results computed in float and rounded once, as torch.add does); reduce_sum writes its sum
in the input's type or, asked (dtype="float32"), as a float32.

    import pmtune, torch
    a = torch.rand(7777, 5003, device="cuda"); b = torch.rand_like(a)
    c = pmtune.matadd(a, b)           # a new array; out= writes into one of yours
    s = pmtune.reduce_sum(a[:, :100]) # a slice of a wider array: its pitch is read from it
    pmtune.matadd(a.t(), b.t(), out=c.t())  # transposed: column-major

A kernel of your own (a .cu file and its JSON description, README "Your own kernels") is called
the same way, tuned as `pmtune tune --kernel` tuned it:

    axpy = pmtune.Kernel("examples/kernels/axpy.json")
    axpy([n], [y, x], [0.75, None])   # dims, buffers and scalars in "args" order (None: "value")

Each call runs on a context of the array's device, opened on first use on the default database
($PMTUNE_DB, else ~/.cache/pmtune/pmtune.db); pmtune.Context opens one of your own. A refused
call raises pmtune.Error with pmtune's own message."""
import ctypes
import json
import math
import os
import threading
from typing import Any, List, Optional, Sequence, Union

from . import _arrays, _lib

Array = Any  # a GPU array: __cuda_array_interface__ or DLPack (torch.Tensor, cupy.ndarray, ...)
Device = Union[int, str, Any, None]  # an ordinal, "cuda:N", a torch.device, or None
Stream = Union[int, Any, None]  # a cudaStream_t as an int, a torch or CuPy stream, or None

__all__ = ["Context", "Error", "Kernel", "LibraryNotFound", "version", "library_path", "matadd",
           "add", "reduce_sum", "filter", "__version__"]

# The library's version this package was made with (CMakeLists.txt's project version; the test
# suite checks the two, and the loaded library's pm_version(), are one).
__version__ = "0.1.0"

_INT_MAX = 2 ** 31 - 1

LibraryNotFound = _lib.LibraryNotFound
_C, library_path = None, None
_C_lock = threading.Lock()


def _c():
    global _C, library_path
    with _C_lock:
        if _C is None:
            _C, library_path = _lib.load()
        return _C


class Error(RuntimeError):
    """A call pmtune refused or could not run: `status` is pmtune's (negative) status code,
    `name` its name ("PM_EINVAL"); the text is pmtune's message. Arguments Python can check are
    checked first, and raise TypeError or ValueError naming the argument."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status, self.name = status, _c().pm_errname(status).decode()


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _c().pm_version().decode()


def _device_index(device):
    """A device as pmtune.Context takes it (an int, "cuda", "cuda:N", a torch.device of type
    cuda, or None) as its ordinal (-1: None); ValueError or TypeError naming the argument."""
    if device is None:
        return -1
    if isinstance(device, bool):
        raise TypeError("device: an int, 'cuda:N' or a torch.device, not a bool")
    if isinstance(device, int):
        if not 0 <= device <= _INT_MAX:
            raise ValueError("device: an ordinal from 0 to 2^31 - 1, not %d" % device)
        return device
    if isinstance(device, str):
        kind, _, index = device.partition(":")
        if kind != "cuda" or (index and not index.isdigit()):
            raise ValueError("device: 'cuda' or 'cuda:N', not %r" % device)
        return _device_index(int(index) if index else 0)
    kind, index = getattr(device, "type", None), getattr(device, "index", None)  # torch.device
    if kind is not None:
        if kind != "cuda":
            raise ValueError("device: a CUDA device, not %r" % (device,))
        return _device_index(0 if index is None else index)
    raise TypeError("device: an int, 'cuda:N' or a torch.device, not %s" % type(device).__name__)


def _int_in(name, value, low, high):
    """value as an int from low to high; TypeError or ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s: an int, not %s" % (name, type(value).__name__))
    if not low <= value <= high:
        raise ValueError("%s: from %d to %d, not %d" % (name, low, high, value))
    return value


class Context:
    """A pmtune context on one CUDA device: what it has loaded and decided is kept until close().
    device: a CUDA device (an ordinal, "cuda:N" or a torch.device), or None for no device
    (compiling and checking only); db: the tuning database's path (None: pmtune's default);
    autotune, record, autotune_budget (0: the library's): as pm_options."""

    def __init__(self, device: Device = 0, db: Optional[Union[str, os.PathLike]] = None,
                 autotune: bool = False, record: bool = False, autotune_budget: int = 0) -> None:
        ordinal = _device_index(device)
        budget = _int_in("autotune_budget", autotune_budget, 0, _INT_MAX)
        path = None if db is None else os.fsencode(db)
        if path is not None and b"\0" in path:
            raise ValueError("db: a path without NUL characters")
        lib = _c()
        o = _lib.Options(ordinal, path, int(bool(autotune)), budget, int(bool(record)))
        h = ctypes.c_void_p()
        rc = lib.pm_open(ctypes.byref(h), ctypes.byref(o))
        self._h, self.device = h, device
        if rc != 0:
            msg = lib.pm_errmsg(h) if h else None
            self.close()
            raise Error(rc, (msg or lib.pm_strerror(rc)).decode())

    def close(self) -> None:
        """Frees what the context holds; a closed context refuses calls."""
        if getattr(self, "_h", None):
            _c().pm_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # at interpreter exit the library may be gone
            pass

    def notice(self) -> Optional[str]:
        """What the context fell back on, and why, the first time it did; None where it never did."""
        n = _c().pm_notice(self._handle())
        return n.decode() if n else None

    def reload(self) -> None:
        """Reads the tuning database again: later calls serve what was tuned meanwhile."""
        self._check(_c().pm_reload(self._handle()))

    def _handle(self):
        if not self._h:
            raise ValueError("the pmtune context is closed")
        return self._h

    def _check(self, rc):
        if rc != 0:
            raise Error(rc, (_c().pm_errmsg(self._h) or _c().pm_strerror(rc)).decode())

    # ---- the operations (the module's functions call these on the device's context) ----------

    def matadd(self, a: Array, b: Array, out: Optional[Array] = None,
               stream: Stream = None) -> Array:
        """out = a + b over 2-D arrays of one type (float32, float16, bfloat16, float64), each
        row-major or column-major (the same order for all three) with any pitch; out is made
        (PyTorch, CuPy) where not given. Returns out."""
        s = _arrays.stream_handle(stream, a)
        va, vb = _arrays.view(a, "a", s), _arrays.view(b, "b", s)
        oa, rows, cols, pa = va.layout("a")
        if vb.shape != va.shape:
            raise ValueError("a is %s, b is %s: the same shape is needed" % (va.shape, vb.shape))
        ob, _, _, pb = vb.layout("b")
        if out is None:
            out = _arrays.empty_like(a, (rows, cols), "F" if oa else "C", "matadd", va.dtype)
        vc = _arrays.view(out, "out", s, writable=True)
        if vc.shape != va.shape:
            raise ValueError("out is %s, a is %s: the same shape is needed" % (vc.shape, va.shape))
        oc, _, _, pc = vc.layout("out")
        _same_type(va, vb, vc)
        if not oa == ob == oc:
            raise ValueError("a, b and out are stored in different orders (row-major: %s, %s, %s):"
                             " pmtune's matadd takes one" % (oa == 0, ob == 0, oc == 0))
        self._check(_c().pm_matadd_t(self._handle(), va.dtype, rows, cols, oa, vc.ptr, pc, va.ptr,
                                     pa, vb.ptr, pb, s))
        return out

    def add(self, a: Array, b: Array, out: Optional[Array] = None, stream: Stream = None) -> Array:
        """out = a + b over contiguous arrays of one type (float32, float16, bfloat16, float64) and
        any shape (one flat vector). Returns out."""
        s = _arrays.stream_handle(stream, a)
        va, vb = _arrays.view(a, "a", s), _arrays.view(b, "b", s)
        if vb.shape != va.shape:
            raise ValueError("a is %s, b is %s: the same shape is needed" % (va.shape, vb.shape))
        n = va.packed_vector("a")
        vb.packed_vector("b")
        if out is None:
            out = _arrays.empty_like(a, va.shape, "C", "add", va.dtype)
        vc = _arrays.view(out, "out", s, writable=True)
        if vc.shape != va.shape:
            raise ValueError("out is %s, a is %s: the same shape is needed" % (vc.shape, va.shape))
        vc.packed_vector("out")
        _same_type(va, vb, vc)
        self._check(_c().pm_add_t(self._handle(), va.dtype, n, vc.ptr, va.ptr, vb.ptr, s))
        return out

    def reduce_sum(self, x: Array, out: Optional[Array] = None, stream: Stream = None,
                   dtype: Optional[str] = None) -> Array:
        """The sum of a contiguous array's elements (float16 and bfloat16 summed in float or
        double, float64 in double), into out: one element on the GPU of x's type or float32
        (made, 0-d, where not given: of x's type, or of dtype, "float32" for the float sum of a
        16-bit array). Returns out."""
        s = _arrays.stream_handle(stream, x)
        vx = _arrays.view(x, "x", s)
        n = vx.packed_vector("x")
        if dtype is not None and dtype not in (_arrays.NAMES[vx.dtype], "float32"):
            raise TypeError("dtype: %s, not %r" % (" or ".join(
                repr(t) for t in sorted({_arrays.NAMES[vx.dtype], "float32"})), dtype))
        if out is None:
            out = _arrays.empty_like(x, (), "C", "reduce_sum",
                                     _arrays.F32 if dtype == "float32" else vx.dtype)
        vo = _arrays.view(out, "out", s, writable=True)
        vo.need("out", "reduce_sum", tuple(sorted({vx.dtype, _arrays.F32})))
        if math.prod(vo.shape) != 1:
            raise ValueError("out: one element is needed, not %s" % (vo.shape,))
        self._check(_c().pm_reduce_sum_t(self._handle(), vx.dtype, n, vx.ptr, vo.dtype, vo.ptr, s))
        return out

    def filter(self, x: Array, weights: Any, border: str = "clamp", out: Optional[Array] = None,
               stream: Stream = None) -> Array:
        """out = x correlated with the (2r + 1) x (2r + 1) weights (a host sequence, nested or
        flat, or a NumPy array; r 1 to 3), over a row-major 2-D image of any of the four types
        with any pitch (the weights taken as float32, float64 for a float64 image; the sums in
        that type, rounded once to the image's); border "clamp" (the edge repeated) or "zero".
        Returns out."""
        if border not in ("clamp", "zero"):
            raise ValueError("border: 'clamp' or 'zero', not %r" % (border,))
        if hasattr(weights, "__cuda_array_interface__") or hasattr(weights, "__dlpack_device__") \
                and not hasattr(weights, "__array__"):
            raise TypeError("weights: a host sequence or NumPy array (pmtune copies it at the call)")
        w = _flat_floats(weights)
        side = math.isqrt(len(w))
        if side * side != len(w) or side % 2 == 0:
            raise ValueError("weights: (2 radius + 1)^2 values are needed, not %d" % len(w))
        s = _arrays.stream_handle(stream, x)
        vx = _arrays.view(x, "x", s)
        ox, rows, cols, px = vx.layout("x")
        if ox != 0:
            raise ValueError("x: filter takes a row-major image (its rows' floats next to each "
                             "other)")
        if out is None:
            out = _arrays.empty_like(x, (rows, cols), "C", "filter", vx.dtype)
        vo = _arrays.view(out, "out", s, writable=True)
        _same_type(vx, vo)
        if vo.shape != vx.shape:
            raise ValueError("out is %s, x is %s: the same shape is needed" % (vo.shape, vx.shape))
        oo, _, _, po = vo.layout("out")
        if oo != 0:
            raise ValueError("out: filter writes a row-major image")
        cw = ((ctypes.c_double if vx.dtype == _arrays.F64 else ctypes.c_float) * len(w))(*w)
        self._check(_c().pm_filter_t(self._handle(), vx.dtype, rows, cols, vo.ptr, po, vx.ptr, px,
                                     cw, side // 2, 0 if border == "clamp" else 1, s))
        return out


class Kernel:
    """A kernel of your own, described by the JSON file at path: k(dims, buffers, scalars=None,
    stream=None) runs it on the problem dims (as its "dims" say: [n], [rows, cols] or [batch,
    rows, cols]) over buffers (GPU arrays with __cuda_array_interface__ or DLPack, one per buffer
    argument in "args" order, each of its "type" and contiguous) with scalars (one per scalar
    argument in "args" order, a number, or None for its description's "value"; leave scalars out
    where each has one), on the current stream of the buffers' library; what pm_kernel_launch_with
    does, with its checks and its messages. Served on context (a pmtune.Context), else on the
    first buffer's device's context."""

    _TYPES = {"f32": _arrays.F32, "f16": _arrays.F16, "bf16": _arrays.BF16, "f64": _arrays.F64}
    _SCALARS = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "f32": ctypes.c_float,
                "f64": ctypes.c_double}

    def __init__(self, path: Union[str, os.PathLike], context: Optional[Context] = None) -> None:
        self.path, self._context, self._handles = os.fspath(path), context, {}
        with open(self.path, "rb") as f:  # the library reads it again, and checks all of it
            doc = json.load(f)
        args = doc.get("args") if isinstance(doc, dict) else None
        if not isinstance(args, list):
            raise ValueError("%s: no \"args\" list" % self.path)
        self.name = doc.get("name")
        self.ndims = len(doc.get("dims") or ())
        self.buffers = [(a.get("name"), self._TYPES.get(a.get("type"))) for a in args
                        if isinstance(a, dict) and "scalar" not in a]
        self.scalars = [(a.get("name"), self._SCALARS.get(a.get("scalar"))) for a in args
                        if isinstance(a, dict) and "scalar" in a]
        if context is not None:
            self._handle(context)  # a description the library refuses is refused now

    def _handle(self, ctx):
        ctx._handle()  # a closed context: ValueError (its kernels went with it)
        h = self._handles.get(id(ctx))
        if h is None:
            k = ctypes.c_void_p()
            ctx._check(_c().pm_kernel_open(ctx._handle(), self.path.encode(), ctypes.byref(k)))
            h = self._handles[id(ctx)] = (ctx, k)  # (the context kept: its handle lives with it)
        return h[1]

    def __call__(self, dims: Sequence[int], buffers: Sequence[Array],
                 scalars: Optional[Sequence[Optional[Union[int, float]]]] = None,
                 stream: Stream = None) -> None:
        dims, buffers = list(dims), list(buffers)
        if len(dims) != self.ndims:
            raise ValueError("%s: %d dims given, its description has %d" % (
                self.name, len(dims), self.ndims))
        if not buffers:
            raise ValueError("%s: no buffers given (it takes %d)" % (self.name, len(self.buffers)))
        if len(buffers) != len(self.buffers):
            raise ValueError("%s: %d buffers given, its description has %d (%s)" % (
                self.name, len(buffers), len(self.buffers), ", ".join(n for n, _ in self.buffers)))
        for i, d in enumerate(dims):
            if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d < 2 ** 31:
                raise ValueError("%s: dims[%d] = %r: an int from 1 to 2^31 - 1" % (self.name, i, d))
        s = _arrays.stream_handle(stream, buffers[0])
        ptrs = []
        for (name, t), obj in zip(self.buffers, buffers):
            v = _arrays.view(obj, name, s, writable=True)
            v.packed_vector(name)
            if t is not None and v.dtype != t:
                raise TypeError("%s: %s is %s, its description says %s" % (
                    self.name, name, _arrays.NAMES[v.dtype], _arrays.NAMES[t]))
            ptrs.append(v.ptr)
        vals = []
        if scalars is not None:
            scalars = list(scalars)
            if len(scalars) != len(self.scalars):
                raise ValueError("%s: %d scalars given, its description has %d (%s)" % (
                    self.name, len(scalars), len(self.scalars),
                    ", ".join(n for n, _ in self.scalars)))
            for (name, ctype), x in zip(self.scalars, scalars):
                if x is None or ctype is None:
                    vals.append(None)
                    continue
                if isinstance(x, bool) or not isinstance(x, (int, float)):
                    raise TypeError("%s: scalar %s: a number, not %r" % (self.name, name, x))
                if ctype in (ctypes.c_int32, ctypes.c_int64):
                    bits = 31 if ctype is ctypes.c_int32 else 63
                    if not isinstance(x, int) or not -2 ** bits <= x < 2 ** bits:
                        raise ValueError("%s: scalar %s: an int of %d bits, not %r" % (
                            self.name, name, bits + 1, x))
                vals.append(ctype(x))
        ctx = self._context or _context_for_device(_arrays._device_of(buffers[0]))
        k = self._handle(ctx)
        cd = (ctypes.c_size_t * max(1, len(dims)))(*dims)
        cb = (ctypes.c_void_p * len(ptrs))(*ptrs)
        cs = (ctypes.c_void_p * max(1, len(vals)))(
            *[None if v is None else ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        ctx._check(_c().pm_kernel_launch_with(k, cd, cb, cs if scalars is not None else None,
                                              len(vals), s))


def _same_type(*views):
    """TypeError where the arrays of one call hold different element types."""
    if len({v.dtype for v in views}) != 1:
        raise TypeError("the arrays hold %s: one type is needed" % ", ".join(
            _arrays.NAMES[v.dtype] for v in views))


def _flat_floats(w):
    if hasattr(w, "tolist"):
        w = w.tolist()
    out = []
    stack = [w]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
        else:
            out.append(float(item))
    return out


# ---- One context a device, opened on first use ----------------------------------------------

_contexts, _contexts_lock = {}, threading.Lock()


def _context_for_device(device):
    with _contexts_lock:
        c = _contexts.get(device)
        if c is None:
            c = _contexts[device] = Context(device)
        return c


class _OnFirstUse(Context):
    """The context of a device as the module's functions use it: opened (once a device, shared)
    at the library call, after every argument Python checks was checked, so that a wrong
    argument is a TypeError or ValueError on a machine without a GPU too."""

    def __init__(self, device):  # pylint: disable=super-init-not-called
        self.device, self._real = device, None

    def _handle(self):
        if self._real is None:
            self._real = _context_for_device(self.device)
        return self._real._handle()

    def _check(self, rc):
        self._real._check(rc)

    def close(self):
        pass


def _context_for(obj):
    return _OnFirstUse(_arrays._device_of(obj))


def matadd(a: Array, b: Array, out: Optional[Array] = None, stream: Stream = None) -> Array:
    return _context_for(a).matadd(a, b, out, stream)


def add(a: Array, b: Array, out: Optional[Array] = None, stream: Stream = None) -> Array:
    return _context_for(a).add(a, b, out, stream)


def reduce_sum(x: Array, out: Optional[Array] = None, stream: Stream = None,
               dtype: Optional[str] = None) -> Array:
    return _context_for(x).reduce_sum(x, out, stream, dtype)


def filter(x: Array, weights: Any, border: str = "clamp", out: Optional[Array] = None,  # noqa: A001
           stream: Stream = None) -> Array:
    return _context_for(x).filter(x, weights, border, out, stream)


for _f in (matadd, add, reduce_sum, filter):
    _f.__doc__ = getattr(Context, _f.__name__).__doc__ + " On the array's device's context."
