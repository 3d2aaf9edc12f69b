"""Linear algebra: matmul with NumPy's full rules.

1-D operands are promoted (a vector on the left gets a leading 1, on the right
a trailing 1) and the added dimension is removed from the result; leading
(batch) dimensions broadcast; dtypes resolve as ``numpy.matmul``'s loops do
(bool @ bool is bool, int32 @ float16 is float64, ...).
"""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from ..errors import FrameValueError
from .common import broadcast_shapes, ufunc_result_dtype
from .registry import register
from .schema import OpSchema

__all__: list[str] = []


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _matmul_infer(types, attrs):
    a, b = types
    for i, t in enumerate(types):
        if t.rank == 0:
            raise FrameValueError(f"matmul: operand {i} is zero-dimensional ({t}); matmul needs "
                                  f"at least one dimension (use mul for scalars)")
    a_shape = (1,) + a.shape if a.rank == 1 else a.shape
    b_shape = b.shape + (1,) if b.rank == 1 else b.shape
    if a_shape[-1] != b_shape[-2]:
        raise FrameValueError(f"matmul: shapes {_fmt(a.shape)} and {_fmt(b.shape)} are not "
                              f"aligned: the contracted dimensions are {a_shape[-1]} (last of "
                              f"operand 0) and {b_shape[-2]} (operand 1)")
    try:
        batch = broadcast_shapes("matmul", a_shape[:-2], b_shape[:-2])
    except FrameValueError:
        raise FrameValueError(f"matmul: the batch dimensions of shapes {_fmt(a.shape)} and "
                              f"{_fmt(b.shape)} cannot be broadcast together") from None
    shape = batch + ((a_shape[-2],) if a.rank > 1 else ()) + ((b_shape[-1],) if b.rank > 1 else ())
    return [TensorType(ufunc_result_dtype("matmul", np.matmul, [a.dtype, b.dtype]), shape)]


def _matmul_kernel(ins, attrs):
    return (np.asarray(np.matmul(ins[0], ins[1])),)


register(OpSchema("matmul", 2, _matmul_infer, _matmul_kernel, traits=("broadcast",),
                  doc="numpy.matmul: 1-D promotion, batch broadcasting, NumPy dtypes."))
