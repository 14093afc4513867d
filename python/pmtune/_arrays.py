"""_arrays.py: the element types as pmtune.h numbers them, and new output arrays made by a
library other than PyTorch (the extension makes PyTorch's itself); reading arrays is the
extension's (_ext.c)."""

# pmtune.h's pm_dtype: its value, and its name in the array libraries
F32, F16, BF16, F64 = 0, 1, 2, 3
NAMES = {F32: "float32", F16: "float16", BF16: "bfloat16", F64: "float64"}
BY_NAME = {"f32": F32, "f16": F16, "bf16": BF16, "f64": F64}  # the descriptions' names


def _library_of(obj):
    return type(obj).__module__.split(".")[0]


def empty_like(obj, shape, order, what, dtype=F32):
    """A new array of shape and element type dtype (F32 ...) on obj's device in order ("C"
    row-major, "F" column-major), from obj's library (CuPy); ValueError for others (pass
    `out`)."""
    if _library_of(obj) == "cupy":
        import cupy
        if dtype == BF16:
            raise ValueError("%s: pass out= (CuPy has no bfloat16)" % what)
        with obj.device:
            return cupy.empty(shape, dtype=getattr(cupy, NAMES[dtype]), order=order)
    raise ValueError("%s: pass out= (pmtune makes new arrays only for PyTorch and CuPy)" % what)
