"""test_pmtune.py: the Python package: the library found (or a clear error), arrays read through
__cuda_array_interface__ (packed, a slice of a wider array, transposed) and refused with a clear
exception, pmtune's own messages raised; on a GPU each op on PyTorch and CuPy arrays (and JAX's,
through DLPack) against the array library's own result. Without a GPU those tests skip, saying so.
Run (after a build): PYTHONPATH=build/python python3 -m pytest python/tests"""
import ctypes
import os
import re
import subprocess
import sys

import pytest

import pmtune
from pmtune import _arrays, _ext

ROOT = os.environ.get("PMTUNE_SOURCE_DIR") or \
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Fake:
    """An object exposing __cuda_array_interface__ over memory that is never touched."""

    def __init__(self, shape, strides=None, typestr="<f4", ptr=0x10000, readonly=False):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (ptr, readonly),
                                         "strides": strides, "version": 3}


def gpu_count():
    try:
        c = pmtune.Context(0)
        c.close()
        return 1
    except pmtune.Error:
        return 0


# ---- The library -----------------------------------------------------------------------------

def test_the_library_is_found_and_its_version_is_the_project_s():
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        want = re.search(r"project\(pmtune VERSION ([0-9.]+)", f.read()).group(1)
    assert pmtune.version() == want
    assert pmtune.library_path
    if os.environ.get("PMTUNE_EXPECT_INSTALLED"):  # python_package.sh: pip's copy, not the tree's
        assert "site-packages" in pmtune.__file__, pmtune.__file__
    if os.environ.get("PMTUNE_EXPECT_OWN_LIBRARY"):  # the package's own, its results beside it
        own = os.path.join(os.path.dirname(pmtune.__file__), "lib")
        assert os.path.dirname(pmtune.library_path) == own, (pmtune.library_path, own)
        d = os.path.dirname(os.path.realpath(pmtune.library_path))  # where runtime/shipped.c looks
        found = [os.path.join(d, up, "share", "pmtune", "results") for up in ("..", ".")]
        found = [r for r in found if os.path.isdir(r)]
        assert found and any(f.endswith((".json", ".json.gz")) for f in os.listdir(found[0])), d


def test_a_missing_library_says_where_it_looked_and_what_to_set():
    env = dict(os.environ, PMTUNE_LIBRARY="/nonexistent/libpmtune.so")
    r = subprocess.run([sys.executable, "-c", "import pmtune; pmtune.version()"], env=env,
                       capture_output=True, text=True, cwd=os.path.dirname(pmtune.__path__[0]))
    assert r.returncode != 0
    assert "LibraryNotFound" in r.stderr and "PMTUNE_LIBRARY" in r.stderr
    assert "/nonexistent/libpmtune.so" in r.stderr


def test_no_gpu_is_a_clear_error():
    if gpu_count():
        pytest.skip("a GPU is present: the context opens")
    with pytest.raises(pmtune.Error) as e:
        pmtune.Context(0)
    assert e.value.name == "PM_ENODEV" and "no CUDA device" in str(e.value)
    with pytest.raises(pmtune.Error, match="no CUDA device"):
        pmtune.matadd(Fake((4, 4)), Fake((4, 4)), out=Fake((4, 4)))


# ---- Reading arrays --------------------------------------------------------------------------

def test_layouts_are_read_from_the_strides():
    lay = lambda shape, strides=None: _ext.layout(Fake(shape, strides), "a")
    assert lay((3, 5)) == (0, 3, 5, 20)                     # packed, row-major
    assert lay((3, 5), (4 * 64, 4)) == (0, 3, 5, 256)       # a slice of a 64-wide array
    assert lay((3, 5), (4, 12)) == (1, 3, 5, 12)            # transposed: column-major, packed
    assert lay((3, 5), (4, 4 * 32)) == (1, 3, 5, 128)       # a transposed slice
    assert lay((1, 7), (28, 4)) == (0, 1, 7, 28)            # one line
    assert lay((7, 1), (4, 4)) == (1, 7, 1, 28)             # one packed column
    assert lay((7, 1), (40, 4)) == (0, 7, 1, 40)            # a column of a wider matrix
    assert lay((1, 7), (999, 4)) == (0, 1, 7, 28)           # a dimension of one: any stride
    assert lay((7, 1), (4, 999)) == (1, 7, 1, 28)
    assert lay((1, 7), (4, 8)) == (1, 1, 7, 8)              # every other float of one line
    with pytest.raises(ValueError, match="one of the two must be 4"):
        lay((3, 5), (40, 8))                                # every other float
    with pytest.raises(ValueError, match="one of the two must be 4"):
        lay((3, 5), (8, 4))                                 # lines overlapping
    with pytest.raises(ValueError, match="2-D"):
        lay((3, 5, 2))
    assert _ext.packed(Fake((6, 7)), "x") == 42
    assert _ext.packed(Fake((6, 7), (4, 24)), "x") == 42  # transposed
    with pytest.raises(ValueError, match="not contiguous"):
        _ext.packed(Fake((6, 7), (40, 4)), "x")


def test_what_is_not_a_float_gpu_array_is_refused():
    with pytest.raises(TypeError, match="float32, float16, bfloat16 or float64"):
        _ext.view(Fake((2, 2), typestr="<i4"), "a")
    with pytest.raises(TypeError, match="float32, float16"):
        _ext.view(Fake((2, 2), typestr=">f2" if sys.byteorder == "little" else "<f2"), "a")
    half, double = Fake((3, 5), typestr="<f2"), Fake((3, 5), typestr="<f8")
    assert _ext.view(half, "a") == (_arrays.dtype("f16"), (3, 5), (10, 2))
    assert _ext.layout(half, "a") == (0, 3, 5, 10)
    assert (_ext.view(double, "a")[0], _ext.packed(double, "a")) == (_arrays.dtype("f64"), 15)
    with pytest.raises(TypeError, match="not a GPU array"):
        _ext.view([1.0, 2.0], "a")
    with pytest.raises(ValueError, match="read-only"):
        _ext.view(Fake((2, 2), readonly=True), "out", True)


# ---- Calls refused before and by the library (a context with no device) -----------------------

@pytest.fixture
def ctx():
    c = pmtune.Context(device=None, db=os.devnull + ".pmtune-test.db")
    yield c
    c.close()


def test_calls_are_checked_before_the_library(ctx):
    a, b = Fake((4, 5)), Fake((4, 5))
    with pytest.raises(TypeError, match="float32, float16, float32: one type is needed"):
        ctx.matadd(a, Fake((4, 5), typestr="<f2"), out=Fake((4, 5)))
    with pytest.raises(TypeError, match="float64, float32: one type is needed"):
        ctx.filter(Fake((4, 5), typestr="<f8"), [0.0] * 9, out=Fake((4, 5)))
    with pytest.raises(TypeError, match="reduce_sum takes float32 or float16 arrays, not float64"):
        ctx.reduce_sum(Fake((10,), typestr="<f2"), out=Fake((1,), typestr="<f8"))
    with pytest.raises(TypeError, match="reduce_sum takes float32 arrays, not float64"):
        ctx.reduce_sum(Fake((10,)), out=Fake((1,), typestr="<f8"))
    with pytest.raises(TypeError, match="dtype: 'float16' or 'float32', not 'float64'"):
        ctx.reduce_sum(Fake((10,), typestr="<f2"), dtype="float64")
    with pytest.raises(ValueError, match="the same shape"):
        ctx.matadd(a, Fake((5, 4)), out=Fake((4, 5)))
    with pytest.raises(ValueError, match="different orders"):
        ctx.matadd(a, Fake((4, 5), (4, 16)), out=Fake((4, 5)))
    with pytest.raises(ValueError, match="a and b lay their elements out in different orders"):
        ctx.add(a, Fake((4, 5), (4, 16)), out=Fake((4, 5)))  # one transposed: not elementwise
    with pytest.raises(ValueError, match="pass out="):
        ctx.matadd(a, b)  # not PyTorch's nor CuPy's: pmtune cannot make the output
    with pytest.raises(ValueError, match="read-only"):
        ctx.matadd(a, b, out=Fake((4, 5), readonly=True))
    with pytest.raises(ValueError, match="one element"):
        ctx.reduce_sum(Fake((10,)), out=Fake((2,)))
    with pytest.raises(ValueError, match=r"\(2 radius \+ 1\)\^2"):
        ctx.filter(a, [1.0] * 8, out=Fake((4, 5)))
    with pytest.raises(ValueError, match="border"):
        ctx.filter(a, [[0, 0, 0], [0, 1, 0], [0, 0, 0]], border="wrap", out=Fake((4, 5)))
    with pytest.raises(ValueError, match="row-major"):
        ctx.filter(Fake((4, 5), (4, 16)), [0.0] * 9, out=Fake((4, 5)))
    with pytest.raises(TypeError, match="host"):
        ctx.filter(a, Fake((3, 3)), out=Fake((4, 5)))


def test_a_single_line_or_column_is_read_in_the_order_the_others_fit(ctx):
    """A line or a packed column fits both orders; one that fits one order alone (a column of a
    wider matrix: row-major) decides for all. Reaching the library (this context has no device,
    PM_ENODEV) means the layouts were accepted."""
    column, wider = Fake((7, 1)), Fake((7, 1), (40, 4))  # packed; a column of a 10-wide matrix
    line, spaced = Fake((1, 7)), Fake((1, 7), (4, 8))    # packed; every other float
    for a, b, out in ((column, wider, column), (wider, column, column), (column, column, wider),
                      (line, spaced, line), (line, line, spaced)):
        with pytest.raises(pmtune.Error, match="no device"):
            ctx.matadd(a, b, out=out)
    with pytest.raises(pmtune.Error, match="no device"):
        ctx.filter(wider, [0.0] * 9, out=column)


def test_the_library_s_refusals_raise_its_message(ctx):
    with pytest.raises(pmtune.Error) as e:  # a context with no device takes no call
        ctx.matadd(Fake((4, 5)), Fake((4, 5)), out=Fake((4, 5)))
    assert e.value.name == "PM_ENODEV" and e.value.status == -3
    assert str(e.value) == "pm_matadd_t: this context has no device"
    ctx.close()
    with pytest.raises(ValueError, match="closed"):
        ctx.add(Fake((3,)), Fake((3,)), out=Fake((3,)))


class HostArray:
    """A host array as NumPy's is to DLPack: device type 1, and a refusal of a CUDA stream."""

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, stream=None):
        if stream is not None:
            raise RuntimeError("NumPy only supports stream=None.")
        raise AssertionError("pmtune must not ask for the data of a host array")


class CudaCapsule:
    """A DLPack producer of a CUDA array that is never touched: a DLTensor built with ctypes
    (strides in elements, or None: packed), in a capsule named "dltensor"."""

    def __init__(self, shape, strides=None, code=2, bits=32, ptr=0x10000, offset=0):
        n = len(shape)
        i64s = ctypes.c_int64 * n
        self._keep = [i64s(*shape), i64s(*strides) if strides is not None else None]

        class DLTensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                        ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                        ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                        ("lanes", ctypes.c_uint16), ("shape", ctypes.c_void_p),
                        ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64)]
        self._t = DLTensor(ptr, 2, 0, n, code, bits, 1, ctypes.addressof(self._keep[0]),
                           ctypes.addressof(self._keep[1]) if strides is not None else None,
                           offset)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        self._new = lambda: new(ctypes.addressof(self._t), b"dltensor", None)

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self._new()


def test_a_dlpack_capsule_is_read_into_a_view():
    assert _ext.view(CudaCapsule((3, 5)), "a") == (0, (3, 5), (20, 4))  # no strides: packed
    assert _ext.view(CudaCapsule((3, 5), (1, 3)), "a") == (0, (3, 5), (4, 12))
    assert _ext.view(CudaCapsule((4, 6), (1, 4), bits=64), "a") == (3, (4, 6), (8, 32))
    assert _ext.view(CudaCapsule((7,), code=4, bits=16), "a")[0] == 2  # bfloat16
    with pytest.raises(TypeError, match="not DLPack type \\(0, 32, 1\\)"):
        _ext.view(CudaCapsule((7,), code=0), "a")  # int32


def test_arguments_are_checked_before_a_context_is_opened():
    """The module's functions check what Python can before they open the device's
    context, so a wrong argument is a TypeError or ValueError naming it, GPU or not."""
    with pytest.raises(TypeError, match="a: list is not a GPU array"):
        pmtune.matadd([1.0, 2.0], [3.0, 4.0])
    with pytest.raises(TypeError, match="x: the array is in host memory"):
        pmtune.reduce_sum(HostArray())
    with pytest.raises(TypeError, match="b: the array is in host memory"):
        pmtune.add(Fake((4,)), HostArray(), out=Fake((4,)))
    with pytest.raises(TypeError, match="stream: an int"):
        pmtune.add(Fake((4,)), Fake((4,)), out=Fake((4,)), stream="default")
    with pytest.raises(ValueError, match="stream: a cudaStream_t is 0 to 2\\^64 - 1"):
        pmtune.add(Fake((4,)), Fake((4,)), out=Fake((4,)), stream=-1)
    with pytest.raises(TypeError, match="dtype: 'float32', not 'f8'"):
        pmtune.reduce_sum(Fake((10,)), dtype="f8")
    with pytest.raises(TypeError, match="dtype: 'float16' or 'float32', not 'f8'"):
        pmtune.reduce_sum(Fake((10,), typestr="<f2"), dtype="f8")
    assert issubclass(pmtune.Error, RuntimeError)


class TorchDevice:
    """What pmtune reads of a torch.device."""

    def __init__(self, kind, index):
        self.type, self.index = kind, index


def test_devices_and_integers_are_checked_not_truncated():
    for bad, kind, what in ((2 ** 32 - 1, ValueError, "0 to 2\\^31 - 1"),
                            (-2, ValueError, "0 to 2\\^31 - 1"),
                            ("cuda:x", ValueError, "'cuda' or 'cuda:N'"),
                            ("gpu", ValueError, "'cuda' or 'cuda:N'"),
                            (TorchDevice("cpu", None), ValueError, "a CUDA device"),
                            (1.5, TypeError, "not float"), (True, TypeError, "not a bool")):
        with pytest.raises(kind, match="device: .*" + what):
            pmtune.Context(device=bad)
    with pytest.raises(ValueError, match="autotune_budget: from 0 to 2147483647, not "):
        pmtune.Context(device=None, autotune_budget=2 ** 70)
    with pytest.raises(TypeError, match="autotune_budget: an int"):
        pmtune.Context(device=None, autotune_budget=1.0)
    for good, ordinal in ((3, 3), ("cuda", 0), ("cuda:2", 2), (TorchDevice("cuda", None), 0),
                          (TorchDevice("cuda", 1), 1), (None, -1)):
        assert pmtune._device_index(good) == ordinal


def test_importing_pmtune_imports_no_torch():
    r = subprocess.run([sys.executable, "-c", "import sys, pmtune; pmtune.version(); "
                        "print('torch' in sys.modules)"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


FAKE_TORCH = """
import sys, types
import pmtune  # first: pmtune.torch's custom ops are not the stand-in's to register
torch = types.ModuleType("torch")
class dtype:
    def __init__(self, name): self.name = name
    def __repr__(self): return "torch." + self.name
for n in ("float32", "float16", "bfloat16", "float64", "int32"):
    setattr(torch, n, dtype(n))
class Tensor:
    def __init__(self, dt): self.dtype, self.shape = dt, (4,)
    def get_device(self): return 0
    def data_ptr(self): return 0x10000
    def stride(self): return (1,)
torch.Tensor = Tensor
torch.empty_strided = lambda *a, **k: Tensor(torch.float32)
torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: 0)
sys.modules["torch"] = torch
"""


def test_a_process_s_first_call_reads_torch_tensors_with_the_library_s_types():
    """The first thing a process does is a call on torch tensors: the extension reads their types
    as the library lists them, which it must load first (a stand-in torch: no GPU needed)."""
    code = FAKE_TORCH + """
t = torch.float32
try:
    pmtune.add(Tensor(t), Tensor(t), out=Tensor(t))
except pmtune.Error as e:  # no GPU here; on a GPU the call runs on 0x10000 and is not made
    print("library:", e.name)
try:
    pmtune.add(Tensor(torch.int32), Tensor(t))
except TypeError as e:
    print("refused:", e)
"""
    if gpu_count():
        pytest.skip("a GPU is present: the stand-in's pointers would be used")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=os.path.dirname(pmtune.__path__[0]))
    assert r.returncode == 0, r.stderr
    assert "library: PM_ENODEV" in r.stdout, r.stdout + r.stderr
    assert ("refused: a: pmtune takes float32, float16, bfloat16 or float64 arrays, not "
            "torch.int32") in r.stdout, r.stdout


def test_the_package_s_version_is_the_library_s():
    assert pmtune.__version__ == pmtune.version()
    assert os.path.exists(os.path.join(os.path.dirname(pmtune.__file__), "py.typed"))


def test_a_kernel_s_calls_are_checked_before_the_library():
    axpy = pmtune.Kernel(os.path.join(ROOT, "examples", "kernels", "axpy.json"))
    y, x = Fake((1000,)), Fake((1000,))
    with pytest.raises(ValueError, match="2 dims given, its description has 1"):
        axpy([10, 100], [y, x], [0.5, None])
    with pytest.raises(ValueError, match=r"dims\[0\] = 0"):
        axpy([0], [y, x], [0.5, None])
    with pytest.raises(ValueError, match="1 buffers given, its description has 2"):
        axpy([1000], [y], [0.5, None])
    with pytest.raises(TypeError, match="x is float16, its description says float32"):
        axpy([1000], [y, Fake((1000,), typestr="<f2")], [0.5, None])
    with pytest.raises(ValueError, match="not contiguous"):
        axpy([1000], [y, Fake((10, 100), (800, 4))], [0.5, None])
    with pytest.raises(ValueError, match="1 scalars given, its description has 2"):
        axpy([1000], [y, x], [0.5])
    with pytest.raises(TypeError, match="scalar alpha: a number"):
        axpy([1000], [y, x], ["half", None])
    with pytest.raises(ValueError, match="scalar n: an int of 32 bits"):
        axpy([1000], [y, x], [0.5, 2 ** 31])
    with pytest.raises(ValueError, match="read-only"):
        axpy([1000], [y, Fake((1000,), readonly=True)], [0.5, None])
    with pytest.raises(FileNotFoundError):
        pmtune.Kernel("/nonexistent/k.json")


# ---- On a GPU --------------------------------------------------------------------------------

needs_gpu = pytest.mark.skipif(not gpu_count(), reason="no CUDA device")


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return torch


@needs_gpu
def test_the_library_s_argument_checks_raise_its_message():
    c = pmtune.Context(0)
    with pytest.raises(pmtune.Error) as e:  # a null pointer
        c.matadd(Fake((4, 5), ptr=0), Fake((4, 5)), out=Fake((4, 5)))
    assert e.value.name == "PM_EINVAL" and e.value.status == -1 and "pm_matadd" in str(e.value)
    with pytest.raises(pmtune.Error, match="pitch") as e:  # a pitch that is no multiple of 4
        c.matadd(Fake((4, 5), (22, 4)), Fake((4, 5)), out=Fake((4, 5)))
    with pytest.raises(pmtune.Error, match="radius"):  # radius 4
        c.filter(Fake((4, 5)), [0.0] * 81, out=Fake((4, 5)))
    c.close()


@needs_gpu
def test_torch_matadd_packed_sliced_transposed_on_the_current_stream():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(1)
    for rows, cols in [(7777, 5003), (4097, 1500), (1, 1), (3, 1001), (1000, 3)]:
        a = torch.rand(rows, cols, device="cuda", generator=g)
        b = torch.rand(rows, cols, device="cuda", generator=g)
        assert torch.equal(pmtune.matadd(a, b), a + b), (rows, cols, "packed")
        wa = torch.rand(rows, cols + 37, device="cuda", generator=g)
        wb = torch.rand(rows, cols + 37, device="cuda", generator=g)
        sa, sb = wa[:, 5:5 + cols], wb[:, 5:5 + cols]
        assert torch.equal(pmtune.matadd(sa, sb), sa + sb), (rows, cols, "slice")
        out = torch.empty(cols, rows, device="cuda").t()
        at, bt = a.t().contiguous().t(), b.t().contiguous().t()  # column-major storage
        assert at.stride() == (1, rows)
        assert torch.equal(pmtune.matadd(at, bt, out=out), a + b), (rows, cols, "column-major")
    s = torch.cuda.Stream()
    a = torch.rand(2048, 2048, device="cuda", generator=g)
    b = torch.rand(2048, 2048, device="cuda", generator=g)
    with torch.cuda.stream(s):
        c = pmtune.matadd(a, b)
        c2 = pmtune.matadd(c, b)  # ordered after c on s: the same stream
    s.synchronize()
    assert torch.equal(c2, a + b + b)


@needs_gpu
def test_torch_matadd_and_add_in_half_bfloat16_and_double():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(3)
    rand = lambda *shape: torch.rand(*shape, device="cuda", generator=g)
    for dt in (torch.float16, torch.bfloat16, torch.float64):  # bfloat16: through DLPack
        for rows, cols in [(7777, 5003), (4097, 1500), (3, 1001), (1, 1)]:
            a, b = rand(rows, cols).to(dt), rand(rows, cols).to(dt)
            c = pmtune.matadd(a, b)
            assert c.dtype == dt and torch.equal(c, a + b), (dt, rows, cols, "packed")
            wa, wb = rand(rows, cols + 37).to(dt), rand(rows, cols + 37).to(dt)
            sa, sb = wa[:, 5:5 + cols], wb[:, 5:5 + cols]  # one element off: 2-byte aligned
            assert torch.equal(pmtune.matadd(sa, sb), sa + sb), (dt, rows, cols, "slice")
            at, bt = a.t().contiguous().t(), b.t().contiguous().t()  # column-major storage
            out = torch.empty(cols, rows, device="cuda", dtype=dt).t()
            assert torch.equal(pmtune.matadd(at, bt, out=out), a + b), (dt, rows, cols, "col")
        for n in [1, 7, 1000, (1 << 20) + 7]:
            x, y = torch.randn(n, device="cuda", generator=g).to(dt), rand(n).to(dt)
            assert torch.equal(pmtune.add(x, y), x + y), (dt, n)
    with pytest.raises(TypeError, match="one type is needed"):
        pmtune.add(rand(10), rand(10).half())
    m1, m2 = rand(300, 7), rand(300, 7)
    got = pmtune.add(m1.t(), m2.t())  # both transposed: the output too
    assert got.stride() == (1, 7) and torch.equal(got, (m1 + m2).t())
    with pytest.raises(ValueError, match="different orders"):
        pmtune.add(m1.t().contiguous(), m2.t())


@needs_gpu
def test_torch_one_line_or_one_column_of_a_wider_matrix():
    """A dimension of one has any stride (torch keeps the parent's, a DLPack export writes 1): a
    line or a column of a row- or column-major matrix is read as the same layout either way."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(5)
    w, v = (torch.rand(513, 1031, device="cuda", generator=g) for _ in range(2))
    for order, (a, b) in (("row-major", (w, v)), ("column-major", (w.t().contiguous().t(),
                                                                   v.t().contiguous().t()))):
        for what, pick in (("a line", lambda m: m[7:8, :]), ("a column", lambda m: m[:, 7:8]),
                           ("part of a line", lambda m: m[7:8, 3:900]),
                           ("part of a column", lambda m: m[3:500, 7:8])):
            sa, sb = pick(a), pick(b)
            assert torch.equal(pmtune.matadd(sa, sb), sa + sb), (order, what)
            if sa.is_contiguous() or sa.t().is_contiguous():  # add takes packed arrays
                got = pmtune.add(sa, sb)
                assert got.shape == sa.shape and torch.equal(got, sa + sb), (order, what, "add")



@needs_gpu
def test_torch_reduce_and_filter_in_half_bfloat16_and_double():
    torch = _torch()
    import torch.nn.functional as F
    g = torch.Generator(device="cuda").manual_seed(4)
    for dt, u in ((torch.float16, 2.0 ** -11), (torch.bfloat16, 2.0 ** -8), (torch.float64, 2.0 ** -53)):
        for n in [1, 7, 1000, (1 << 20) + 7, 1 << 24]:
            x = torch.randn(n, device="cuda", generator=g).to(dt)
            ref = x.double().sum().item()
            acc = 2.0 ** -24 if dt != torch.float64 else 2.0 ** -52  # generous: n^(1/2) terms
            bound = acc * 64 * x.abs().double().sum().item()
            s = pmtune.reduce_sum(x)  # in x's type: rounded once more
            assert s.dtype == dt and abs(s.item() - ref) <= bound + u * abs(ref), (dt, n, s.item(), ref)
            f = pmtune.reduce_sum(x, dtype="float32")  # the float sum of a 16-bit vector
            assert f.dtype == torch.float32 and abs(f.item() - ref) <= bound + 2.0 ** -24 * abs(ref), (dt, n)
            assert pmtune.reduce_sum(x, dtype="float32").item() == f.item(), "deterministic"
        img = torch.randn(517, 1031, device="cuda", generator=g).to(dt)
        for r in (1, 3):
            w = torch.randn(2 * r + 1, 2 * r + 1, dtype=torch.float64)
            wt = w if dt == torch.float64 else w.float()  # what pmtune takes: float, double for f64
            for border, mode in (("clamp", "replicate"), ("zero", "constant")):
                got = pmtune.filter(img, w.numpy(), border=border)
                padded = F.pad(img.double()[None, None], (r, r, r, r), mode=mode)
                ref = F.conv2d(padded, wt.double().cuda()[None, None])[0, 0]
                err = (got.double() - ref).abs().max().item()
                assert got.dtype == dt and err <= (u + 1e-5) * (1 + ref.abs().max().item()), (dt, r, border, err)


@needs_gpu
def test_torch_add_reduce_filter():
    torch = _torch()
    import torch.nn.functional as F
    g = torch.Generator(device="cuda").manual_seed(2)
    for n in [1, 3, 1000, 65536, 1 << 20, (1 << 20) + 7]:
        a = torch.randn(n, device="cuda", generator=g)
        b = torch.randn(n, device="cuda", generator=g)
        assert torch.equal(pmtune.add(a, b), a + b), n
        s = pmtune.reduce_sum(a)
        ref = a.double().sum().item()
        bound = 1e-5 * a.abs().double().sum().item() + 1e-6
        assert abs(s.item() - ref) <= bound, (n, s.item(), ref)
    x = torch.randn(517, 1031, device="cuda", generator=g)
    for r in (1, 2, 3):
        w = torch.randn(2 * r + 1, 2 * r + 1)
        for border, mode in (("clamp", "replicate"), ("zero", "constant")):
            got = pmtune.filter(x, w.numpy(), border=border)
            padded = F.pad(x[None, None], (r, r, r, r), mode=mode)
            ref = F.conv2d(padded.double(), w.double().cuda()[None, None])[0, 0]
            err = (got.double() - ref).abs().max().item()
            assert err <= 1e-4 * (1 + ref.abs().max().item()), (r, border, err)
    with pytest.raises(TypeError, match="float32, float16, bfloat16 or float64"):
        pmtune.add(a.int(), b.int())


@needs_gpu
def test_cupy_matadd_reduce_filter():
    cupy = pytest.importorskip("cupy")
    rng = cupy.random.default_rng(3)
    a = rng.random((3001, 4097), dtype=cupy.float32)
    b = rng.random((3001, 4097), dtype=cupy.float32)
    assert bool((pmtune.matadd(a, b) == a + b).all())
    af, bf = cupy.asfortranarray(a), cupy.asfortranarray(b)
    c = pmtune.matadd(af, bf)
    assert c.flags.f_contiguous and bool((c == a + b).all())
    s = pmtune.reduce_sum(a[:, :])
    assert abs(float(s) - float(a.astype(cupy.float64).sum())) <= 1e-5 * float(abs(a).sum())
    x = rng.random((300, 500), dtype=cupy.float32)
    got = pmtune.filter(x, [[0, 0, 0], [0, 1, 0], [0, 0, 0]])
    assert bool((got == x).all())  # the identity mask


@needs_gpu
def test_jax_through_dlpack():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    torch = _torch()
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    import jax.numpy as jnp
    a = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    b = jnp.ones((3, 4), dtype=jnp.float32)
    out = torch.empty(3, 4, device="cuda")  # JAX's arrays are immutable: the output is torch's
    pmtune.matadd(a, b, out=out)
    torch.cuda.synchronize()
    assert out.cpu().tolist() == [[float(4 * i + j + 1) for j in range(4)] for i in range(3)]


@needs_gpu
def test_torch_kernels_of_one_s_own_with_scalars_and_three_dims():
    torch = _torch()
    k = os.path.join(ROOT, "examples", "kernels")
    axpy = pmtune.Kernel(os.path.join(k, "axpy.json"))
    x, y = torch.randn(100003, device="cuda"), torch.randn(100003, device="cuda")
    want = y + 0.75 * x
    axpy([x.numel()], [y, x], [0.75, None])
    torch.cuda.synchronize()
    assert torch.allclose(y, want, rtol=0, atol=1e-6)
    with pytest.raises(pmtune.Error, match="scalar 0 \\(alpha\\) has no value"):
        axpy([x.numel()], [y, x])
    softmax = pmtune.Kernel(os.path.join(k, "softmax.json"))
    a = torch.randn(300, 1001, device="cuda")
    out = torch.empty_like(a)
    softmax([300, 1001], [out, a], [0.5, None, None])
    torch.cuda.synchronize()
    assert (out - torch.softmax(0.5 * a, 1)).abs().max().item() <= 1e-5
    bt = pmtune.Kernel(os.path.join(k, "batched_transpose.json"))
    b = torch.randn(5, 33, 70, device="cuda")
    t = torch.empty(5, 70, 33, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):  # the current stream is the one launched on
        bt([5, 33, 70], [t, b])
    s.synchronize()
    assert torch.equal(t, b.transpose(1, 2))
    g, t2 = torch.cuda.CUDAGraph(), torch.empty_like(t)
    with torch.cuda.graph(g):  # captured, then replayed
        bt([5, 33, 70], [t2, b])
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(t2, b.transpose(1, 2))


@needs_gpu
def test_torch_graph_capture_replays_the_operations_on_new_data():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(5)
    a = torch.rand(1000, 3001, device="cuda", generator=g)
    b = torch.rand(1000, 3001, device="cuda", generator=g)
    x = torch.randn(777777, device="cuda", generator=g)
    w = [[0.0, 0.25, 0.0], [0.25, 0.0, 0.25], [0.0, 0.25, 0.0]]
    run = lambda: (pmtune.matadd(a, b), pmtune.add(a.view(-1), b.view(-1)), pmtune.reduce_sum(x),
                   pmtune.filter(a, w))
    run()  # warm: what serves each size is chosen before the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):  # the outputs, made by pmtune, come from the graph's pool
        outs = run()
    for _ in range(2):  # new data in the captured inputs: the replay computes on it
        a.copy_(torch.rand(a.shape, device="cuda", generator=g))
        x.copy_(torch.randn(x.shape, device="cuda", generator=g))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(outs[0], a + b) and torch.equal(outs[1], (a + b).view(-1))
        assert abs(outs[2].item() - x.double().sum().item()) <= 1e-3 * x.abs().sum().item()
        ref = torch.nn.functional.conv2d(torch.nn.functional.pad(a[None, None], (1, 1, 1, 1),
                                                                 mode="replicate"),
                                         torch.tensor(w, device="cuda")[None, None])[0, 0]
        assert (outs[3] - ref).abs().max().item() <= 1e-5


@needs_gpu
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_keeps_the_custom_ops_in_one_graph(backend):
    torch = _torch()
    import pmtune.torch  # noqa: F401  (registered already where torch came first)
    g = torch.Generator(device="cuda").manual_seed(6)
    a = torch.rand(513, 1025, device="cuda", generator=g)
    b = torch.rand(513, 1025, device="cuda", generator=g)

    def f(a, b):
        c = torch.ops.pmtune.matadd(a, b) * 2
        d = torch.ops.pmtune.add(c, b)
        e = torch.ops.pmtune.filter(d, [0.0] * 4 + [1.0] + [0.0] * 4, "zero")
        return e, torch.ops.pmtune.reduce_sum(e, "float32"), torch.ops.pmtune.matadd(a.t(), b.t())

    torch._dynamo.reset()
    got = torch.compile(f, fullgraph=True, backend=backend)(a, b)  # a graph break raises
    torch.cuda.synchronize()
    want = 2 * (a + b) + b
    assert torch.equal(got[0], want)
    assert abs(got[1].item() - want.double().sum().item()) <= 1e-4 * want.sum().item()
    assert got[2].stride() == (1, 1025) and torch.equal(got[2], (a + b).t())
