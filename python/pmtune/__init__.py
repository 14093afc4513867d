"""pmtune for Python: pmtune's tuned kernels (matadd, add, reduce_sum, filter) called on any
GPU array that exposes __cuda_array_interface__ or DLPack (PyTorch, CuPy, Numba, JAX), on the
caller's current stream, through libpmtune.so's C ABI; each call's work (reading the arrays,
checking them, calling the library) is done by a compiled extension (_ext*.c).
Every call takes float32, float16, bfloat16 and float64 arrays (all of one call of one type;
16-bit results computed in float and rounded once, as torch.add does); reduce_sum writes its sum
in the input's type or, asked (dtype="float32"), as a float32.

    import pmtune, torch
    a = torch.rand(7777, 5003, device="cuda"); b = torch.rand_like(a)
    c = pmtune.matadd(a, b)           # a new array; out= writes into one of yours
    s = pmtune.reduce_sum(a[:, :100]) # a slice of a wider array: its pitch is read from it
    pmtune.matadd(a.t(), b.t(), out=c.t())  # transposed: column-major

A kernel of your own (a .cu file and its JSON description, docs/kernels.md) is called
the same way, tuned as `pmtune tune --kernel` tuned it:

    axpy = pmtune.Kernel("examples/kernels/axpy.json")
    axpy([n], [y, x], [0.75, None])   # dims, buffers and scalars in "args" order (None: "value")

Each call runs on a context of the array's device, opened on first use on the default database
($PMTUNE_DB, else ~/.cache/pmtune/pmtune.db); pmtune.Context opens one of your own. A refused
call raises pmtune.Error with pmtune's own message."""
import json
import os
import sys
import threading
from typing import Any, List, Optional, Sequence, Union

from . import _arrays, _ext, _lib

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
library_path = None
_load_lock = threading.Lock()


def _load():
    """Opens the library on first need (import pmtune works without it)."""
    global library_path
    with _load_lock:
        if library_path is None:
            library_path = _lib.load()


class Error(RuntimeError):
    """A call pmtune refused or could not run: `status` is pmtune's (negative) status code,
    `name` its name ("PM_EINVAL"); the text is pmtune's message. Arguments Python can check are
    checked first, and raise TypeError or ValueError naming the argument."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status, self.name = status, _ext.errname(status)


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _ext.version()


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
        self._h, self.device = None, device
        self._h = _ext.open(ordinal, path, int(bool(autotune)), budget, int(bool(record)))

    def close(self) -> None:
        """Frees what the context holds; a closed context refuses calls."""
        if getattr(self, "_h", None):
            h, self._h = self._h, None
            _ext.close(h)

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
        """What the context fell back on, and why, the first time it did; None where it never
        did."""
        return _ext.notice(self._handle())

    def reload(self) -> None:
        """Reads the tuning database again: later calls serve what was tuned meanwhile."""
        _ext.reload(self._handle())

    def _handle(self):
        if not self._h:
            raise ValueError("the pmtune context is closed")
        return self._h

    # ---- the operations (the module's functions call these on the device's context) ----------

    def matadd(self, a: Array, b: Array, out: Optional[Array] = None,
               stream: Stream = None) -> Array:
        """pmtune.matadd on this context."""
        return _ext.matadd(a, b, out, stream, self._handle())

    def add(self, a: Array, b: Array, out: Optional[Array] = None, stream: Stream = None) -> Array:
        """pmtune.add on this context."""
        return _ext.add(a, b, out, stream, self._handle())

    def reduce_sum(self, x: Array, out: Optional[Array] = None, stream: Stream = None,
                   dtype: Optional[str] = None) -> Array:
        """pmtune.reduce_sum on this context."""
        return _ext.reduce_sum(x, out, stream, dtype, self._handle())

    def filter(self, x: Array, weights: Any, border: str = "clamp", out: Optional[Array] = None,
               stream: Stream = None) -> Array:
        """pmtune.filter on this context."""
        return _ext.filter(x, weights, border, out, stream, self._handle())


class Kernel:
    """A kernel of your own, described by the JSON file at path: k(dims, buffers, scalars=None,
    stream=None) runs it on the problem dims (as its "dims" say: [n], [rows, cols] or [batch,
    rows, cols]) over buffers (GPU arrays with __cuda_array_interface__ or DLPack, one per buffer
    argument in "args" order, each of its "type" and contiguous) with scalars (one per scalar
    argument in "args" order, a number, or None for its description's "value"; leave scalars out
    where each has one), on the current stream of the buffers' library; what pm_kernel_launch_with
    does, with its checks and its messages. Served on context (a pmtune.Context), else on the
    first buffer's device's context."""

    _SCALARS = {"i32": 0, "i64": 1, "f32": 2, "f64": 3}  # as _ext.kernel numbers them

    def __init__(self, path: Union[str, os.PathLike], context: Optional[Context] = None) -> None:
        self.path, self._context, self._handles = os.fspath(path), context, {}
        with open(self.path, "rb") as f:  # the library reads it again, and checks all of it
            doc = json.load(f)
        args = doc.get("args") if isinstance(doc, dict) else None
        if not isinstance(args, list):
            raise ValueError("%s: no \"args\" list" % self.path)
        self.name = str(doc.get("name"))
        self.ndims = len(doc.get("dims") or ())
        args = [a for a in args if isinstance(a, dict)]
        self.buffers = [(str(a.get("name")), _arrays.dtype(a.get("type")))
                        for a in args if "scalar" not in a]
        self.scalars = [(str(a.get("name")), a.get("scalar")) for a in args if "scalar" in a]
        # what the extension checks each call against (_ext_kernel.c, ext_kernel)
        self._spec = (self.name, self.ndims, tuple(n for n, _ in self.buffers),
                      tuple(-1 if t is None else t for _, t in self.buffers),
                      tuple(n for n, _ in self.scalars),
                      tuple(self._SCALARS.get(k, -1) for _, k in self.scalars),
                      self._handles, self._open_on_device)
        if context is not None:
            self._handle(context)  # a description the library refuses is refused now

    def _handle(self, ctx):
        """(ctx's handle, this kernel's handle on it), opened on first use."""
        h = ctx._handle()  # a closed context: ValueError (its kernels went with it)
        k = self._handles.get(("ctx", id(ctx)))
        if k is None or k[0] is not ctx:
            k = self._handles[("ctx", id(ctx))] = (ctx, _ext.kernel_open(h, self.path))
        return h, k[1]

    def _open_on_device(self, device):
        """The handles on device's own context (the extension keeps them by device)."""
        return self._handle(_context_for_device(device))

    def __call__(self, dims: Sequence[int], buffers: Sequence[Array],
                 scalars: Optional[Sequence[Optional[Union[int, float]]]] = None,
                 stream: Stream = None) -> None:
        if self._context is None:
            _ext.kernel(self._spec, None, None, dims, buffers, scalars, stream)
        else:
            h, k = self._handle(self._context)
            _ext.kernel(self._spec, h, k, dims, buffers, scalars, stream)


# ---- One context a device, opened on first use ----------------------------------------------

_contexts, _contexts_lock = {}, threading.Lock()


def _context_for_device(device):
    with _contexts_lock:
        c = _contexts.get(device)
        if c is None:
            c = _contexts[device] = Context(device)
        return c


def _device_handle(device):
    """The handle of device's own context (the extension asks it once a device)."""
    return _context_for_device(device)._handle()


_ext.setup(Error, _device_handle, _load, _arrays.empty_like)


# The module's calls, on each array's device's own context: the extension's own functions (no
# Python between the caller and the C code); their docstrings are _ext.c's method table's.
matadd, add, reduce_sum, filter = _ext.matadd, _ext.add, _ext.reduce_sum, _ext.filter  # noqa: A001

if "torch" in sys.modules:  # its custom ops (pmtune.torch), for torch.compile; never imported here
    from . import torch as _torch_ops  # noqa: F401

