"""_arrays.py: what pmtune needs of a caller's GPU array (its pointer, shape, strides in bytes,
device), read from __cuda_array_interface__ (PyTorch, CuPy, Numba) or DLPack (JAX and the rest),
and the caller's current stream and new output arrays, asked of the array's own library."""
import ctypes
import sys

FLOAT32 = "<f4"
_DL_CUDA, _DL_CUDA_MANAGED, _DL_FLOAT, _DL_BFLOAT = 2, 13, 2, 4

# pmtune.h's pm_dtype: its value, name and element size, by the array protocols' names for it
F32, F16, BF16, F64 = 0, 1, 2, 3
NAMES = {F32: "float32", F16: "float16", BF16: "bfloat16", F64: "float64"}
SIZES = {F32: 4, F16: 2, BF16: 2, F64: 8}
_TYPESTRS = {"f4": F32, "f2": F16, "f8": F64}  # __cuda_array_interface__ has no bfloat16
_DLTYPES = {(_DL_FLOAT, 32): F32, (_DL_FLOAT, 16): F16, (_DL_BFLOAT, 16): BF16, (_DL_FLOAT, 64): F64}


class View:
    """A GPU array as pmtune sees it: strides in bytes, its element type (F32 ...), read from its
    protocol."""

    def __init__(self, obj, ptr, shape, strides, device, keep=None, dtype=F32):
        self.obj, self.ptr, self.shape, self.strides, self.device = obj, ptr, shape, strides, device
        self.dtype, self.esize = dtype, SIZES[dtype]
        self._keep = keep  # a DLPack capsule: the memory stays valid while it lives

    def need(self, what, call, dtypes):
        """TypeError where the element type is not one of dtypes (call: the function, for the
        message)."""
        if self.dtype not in dtypes:
            raise TypeError("%s: %s takes %s arrays, not %s" % (
                what, call, " or ".join(NAMES[t] for t in dtypes), NAMES[self.dtype]))

    def layout(self, what):
        """(order, rows, cols, pitch) of a 2-D view, order 0 row-major or 1 column-major: the
        elements of a line next to each other (esize bytes apart), lines `pitch` bytes apart (a
        packed array, a slice of a wider one, a transposed one). ValueError for any other."""
        if len(self.shape) != 2:
            raise ValueError("%s: a 2-D array is needed, not %d-D" % (what, len(self.shape)))
        rows, cols = self.shape
        s0, s1 = self.strides
        e = self.esize
        if rows == 1 and (cols == 1 or s1 == e):  # one line
            return 0, rows, cols, e * cols
        if cols == 1 and s0 == e:  # one column, packed: a column-major line
            return 1, rows, cols, e * rows
        if (s1 == e or cols == 1) and s0 >= e * cols:
            return 0, rows, cols, s0
        if s0 == e and s1 >= e * rows:
            return 1, rows, cols, s1
        raise ValueError("%s: strides %s bytes: one of the two must be %d (a line's elements next "
                         "to each other) and the other at least a line" % (what, (s0, s1), e))

    def packed_vector(self, what):
        """The number of elements of a view whose elements are next to each other in memory."""
        n, stride = 1, self.esize
        for extent, s in sorted(zip(self.shape, self.strides), key=lambda e: e[1]):
            if extent != 1 and s != stride:
                raise ValueError("%s: not contiguous (strides %s bytes)" % (what, self.strides))
            n *= extent
            stride = self.esize * n
        return n


def _cai_dtype(cai):
    """The element type a __cuda_array_interface__ names, or None."""
    typestr = cai.get("typestr") or ""
    native = typestr[:1] in ("<", "=", "|") or (typestr[:1] == ">" and sys.byteorder == "big")
    return _TYPESTRS.get(typestr[1:]) if native else None


def _from_cai(obj, cai):
    typestr = cai.get("typestr") or ""
    dtype = _cai_dtype(cai)
    if dtype is None:
        raise TypeError("pmtune takes float32, float16, bfloat16 or float64 arrays, not %s" % typestr)
    shape = tuple(int(e) for e in cai["shape"])
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides, acc = [], SIZES[dtype]
        for e in reversed(shape):
            strides.insert(0, acc)
            acc *= max(e, 1)
    ptr, readonly = cai["data"]
    return View(obj, int(ptr or 0), shape, tuple(int(s) for s in strides), _device_of(obj),
                dtype=dtype), readonly


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_NAMES = {1: "CPU", 3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
             10: "ROCm", 14: "oneAPI"}


def _from_dlpack(obj, stream, what):
    device = getattr(obj, "__dlpack_device__", None)
    if device is not None:  # asked first: a host array's producer may refuse a CUDA stream
        kind = int(device()[0])
        if kind not in (_DL_CUDA, _DL_CUDA_MANAGED):
            raise TypeError("%s: the array is in %s memory (DLPack device type %d): pmtune takes "
                            "arrays in GPU memory" % (what, "host" if kind in (1, 3) else
                                                      _DL_NAMES.get(kind, "non-CUDA"), kind))
    try:  # the producer makes the data ready on our stream (1: the legacy default stream)
        capsule = obj.__dlpack__(stream=stream or 1)
    except TypeError:
        capsule = obj.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # DLManagedTensor begins with its DLTensor; the capsule keeps it alive and frees it when
    # collected, since it is not renamed "used_dltensor" (pmtune takes no ownership)
    t = _DLTensor.from_address(get(capsule, b"dltensor"))
    if t.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise TypeError("%s: pmtune takes arrays in GPU memory (DLPack device type %d)"
                        % (what, t.device.device_type))
    dtype = _DLTYPES.get((t.dtype.code, t.dtype.bits)) if t.dtype.lanes == 1 else None
    if dtype is None:
        raise TypeError("pmtune takes float32, float16, bfloat16 or float64 arrays, not DLPack "
                        "type (%d, %d, %d)" % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
    e = SIZES[dtype]
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(e * t.strides[i] for i in range(t.ndim))
    else:
        strides, acc = [], e
        for extent in reversed(shape):
            strides.insert(0, acc)
            acc *= max(extent, 1)
        strides = tuple(strides)
    return View(obj, (t.data or 0) + t.byte_offset, shape, strides, t.device.device_id, capsule,
                dtype=dtype)


def view(obj, what, stream=0, writable=False):
    """The View of obj; TypeError where it is no GPU array pmtune can take."""
    try:
        cai = getattr(obj, "__cuda_array_interface__", None)
    except TypeError:
        cai = None
    if cai is not None and _cai_dtype(cai) is None and hasattr(obj, "__dlpack__"):
        cai = None  # a type the protocol cannot name (PyTorch's bfloat16 is "<V2"): DLPack can
    if cai is not None:
        v, readonly = _from_cai(obj, cai)
        if writable and readonly:
            raise ValueError("%s: the array is read-only" % what)
        return v
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, stream, what)
    raise TypeError("%s: %s is not a GPU array (it has neither __cuda_array_interface__ nor "
                    "__dlpack__)" % (what, type(obj).__name__))


def _library_of(obj):
    return type(obj).__module__.split(".")[0]


def _device_of(obj):
    lib = _library_of(obj)
    if lib == "torch":
        return obj.device.index or 0
    if lib == "cupy":
        return obj.device.id
    ident = getattr(getattr(obj, "device", None), "id", None)  # Numba's, for one
    return ident if isinstance(ident, int) else 0


def stream_handle(stream, obj):
    """The cudaStream_t to launch on: `stream` (an int, a torch.cuda.Stream or a cupy Stream),
    else the current stream of obj's library (PyTorch's and CuPy's), else the legacy default
    stream (0)."""
    if stream is not None:
        for attr in ("cuda_stream", "ptr", "handle"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        if isinstance(stream, bool) or not isinstance(stream, int):
            raise TypeError("stream: an int (a cudaStream_t), a torch or CuPy stream, not %s"
                            % type(stream).__name__)
        if not 0 <= stream < 2 ** 64:
            raise ValueError("stream: a cudaStream_t is 0 to 2^64 - 1, not %d" % stream)
        return stream
    lib = _library_of(obj)
    if lib == "torch":
        import torch
        return torch.cuda.current_stream(obj.device).cuda_stream
    if lib == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


def empty_like(obj, shape, order, what, dtype=F32):
    """A new array of shape and element type dtype (F32 ...) on obj's device in order ("C"
    row-major, "F" column-major), from obj's library (PyTorch or CuPy); ValueError for others
    (pass `out`)."""
    lib = _library_of(obj)
    if lib == "torch":
        import torch
        t = getattr(torch, NAMES[dtype])
        if order == "F" and len(shape) == 2:
            return torch.empty((shape[1], shape[0]), dtype=t, device=obj.device).t()
        return torch.empty(shape, dtype=t, device=obj.device)
    if lib == "cupy":
        import cupy
        if dtype == BF16:
            raise ValueError("%s: pass out= (CuPy has no bfloat16)" % what)
        with obj.device:
            return cupy.empty(shape, dtype=getattr(cupy, NAMES[dtype]), order=order)
    raise ValueError("%s: pass out= (pmtune makes new arrays only for PyTorch and CuPy)" % what)
