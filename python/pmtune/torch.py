"""pmtune.torch: pmtune's operations as PyTorch custom ops (torch.library), so that
torch.compile keeps them in its graph (fullgraph=True works) and its fake tensors know their
outputs: torch.ops.pmtune.matadd(a, b), add(a, b), reduce_sum(x, dtype=None) and
filter(x, weights, border="clamp"), each returning a new tensor made as pmtune.matadd ... make
it. Imported by `import pmtune` where torch was imported first, else `import pmtune.torch`;
nothing here is imported where torch is absent. Eager code calls pmtune.matadd ... directly: the
dispatcher's cost of a custom op is more than the call's own."""
from typing import List, Optional

import torch

from . import _ext

def _column_major(t: torch.Tensor) -> bool:
    """Whether pmtune reads a 2-D tensor as column-major (_ext_arrays.c's ext_layout_2d())."""
    rows, cols = t.shape
    s0, s1 = t.stride()
    if rows > 1 and cols == 1 and s0 == 1:
        return True  # a packed column
    return not ((s1 == 1 or cols == 1) and (rows == 1 or s0 >= cols))  # row-major where it fits


@torch.library.custom_op("pmtune::matadd", mutates_args=())
def matadd(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a + b: pmtune.matadd."""
    return _ext.matadd(a, b)


@matadd.register_fake
def _(a, b):
    if a.dim() == 2 and _column_major(a):
        return a.new_empty((a.shape[1], a.shape[0])).t()
    return a.new_empty(a.shape)


@torch.library.custom_op("pmtune::add", mutates_args=())
def add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a + b over contiguous tensors: pmtune.add."""
    return _ext.add(a, b)


@add.register_fake
def _(a, b):
    return a.new_empty(a.shape)


@torch.library.custom_op("pmtune::reduce_sum", mutates_args=())
def reduce_sum(x: torch.Tensor, dtype: Optional[str] = None) -> torch.Tensor:
    """The sum of x's elements, 0-d, in x's type or dtype ("float32"): pmtune.reduce_sum."""
    return _ext.reduce_sum(x, dtype=dtype)


@reduce_sum.register_fake
def _(x, dtype=None):
    return x.new_empty((), dtype=torch.float32 if dtype == "float32" else x.dtype)


@torch.library.custom_op("pmtune::filter", mutates_args=())
def filter(x: torch.Tensor, weights: List[float],  # noqa: A001
           border: str = "clamp") -> torch.Tensor:
    """x correlated with the (2r + 1)^2 weights, row by row: pmtune.filter."""
    return _ext.filter(x, weights, border)


@filter.register_fake
def _(x, weights, border="clamp"):
    return x.new_empty(x.shape)
