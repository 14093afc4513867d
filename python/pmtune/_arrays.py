"""_arrays.py: the element types as the library numbers and names them (it is asked, through the
extension), and new output arrays made by a library other than PyTorch (the extension makes
PyTorch's itself); reading arrays is the extension's (_ext_arrays.c)."""
from . import _ext

_types = None  # _ext.dtypes(): ((name, array name, bytes), ...) in pm_dtype's order


def _dtypes():
    global _types
    if _types is None:
        _types = _ext.dtypes()  # the library is loaded where it is not yet
    return _types


def dtype(name):
    """The pm_dtype value of the type a description names ("f32", "bf16"), or None."""
    for t, (n, _, _) in enumerate(_dtypes()):
        if n == name:
            return t
    return None


def array_name(t):
    """Type t's name in the array libraries ("float32")."""
    return _dtypes()[t][1]


def _library_of(obj):
    return type(obj).__module__.split(".")[0]


def empty_like(obj, shape, order, what, dtype=0):
    """A new array of shape and element type dtype (a pm_dtype value) on obj's device in order
    ("C" row-major, "F" column-major), from obj's library (CuPy); ValueError for others (pass
    `out`)."""
    if _library_of(obj) == "cupy":
        import cupy
        name = array_name(dtype)
        if name == "bfloat16":
            raise ValueError("%s: pass out= (CuPy has no bfloat16)" % what)
        with obj.device:
            return cupy.empty(shape, dtype=getattr(cupy, name), order=order)
    raise ValueError("%s: pass out= (pmtune makes new arrays only for PyTorch and CuPy)" % what)
