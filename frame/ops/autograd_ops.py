"""Ops that gradient rules need and that the other op families do not provide:
``scatter_add`` (the transpose of ``take``), ``conj`` and ``real`` (complex
values: the gradient of a product with a complex factor carries that factor's
conjugate, and a real operand receives the real part of a complex gradient).

They are ordinary ops (type inference, reference kernel, cases in
``tests/ops/cases_autograd.py``) with gradient rules of their own, so that
gradient graphs that use them can be differentiated again.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import complex64, complex128, float32, float64
from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema
from ..errors import FrameIndexError
from .shape import check_axis

__all__: list[str] = []


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# --------------------------------------------------------------------------- scatter_add

def _scatter_add_infer(types, attrs):
    base, idx, upd = types
    axis = attrs["axis"]
    if base.rank == 0:
        raise FrameValueError("scatter_add: cannot scatter along an axis of a zero-dimensional "
                              "tensor")
    check_axis("scatter_add", axis, base.rank)
    if idx.dtype.kind not in "iu":
        raise FrameTypeError(f"scatter_add: indices must be an integer tensor, got {idx}")
    if base.dtype.kind not in "fiuc":
        raise FrameTypeError(f"scatter_add: expected a numeric (not bool) input, got {base}")
    if upd.dtype is not base.dtype:
        raise FrameTypeError(f"scatter_add: updates must have the input's dtype {base.dtype}, "
                             f"got {upd}")
    want = base.shape[:axis] + idx.shape + base.shape[axis + 1:]
    if upd.shape != want:
        raise FrameValueError(f"scatter_add: updates for input {base}, indices {idx} and axis "
                              f"{axis} must have shape {_fmt(want)} (the shape of "
                              f"take(input, indices, axis)), got {upd}")
    return [base]


def _scatter_add_kernel(ins, attrs):
    base, idx, upd = ins
    axis = attrs["axis"]
    n = base.shape[axis]
    if idx.size:
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise FrameIndexError(f"scatter_add: index {int(bad.flat[0])} is out of bounds for "
                                  f"axis {axis} with size {n}")
    out = np.array(base, order="C", copy=True)
    # one advanced index among slices: the indexed view has take's shape, and
    # add.at accumulates repeated indices instead of keeping the last write
    np.add.at(out, (slice(None),) * axis + (idx,), upd)
    return (out,)


register(OpSchema("scatter_add", 3, _scatter_add_infer, _scatter_add_kernel,
                  attrs={"axis": AttrSpec("int")},
                  doc="scatter_add(input, indices, updates, axis): a copy of input with "
                      "updates added at the positions take(input, indices, axis) reads; "
                      "repeated indices accumulate, negative ones count from the end."))


# --------------------------------------------------------------------------- conj, real

def _conj_infer(types, attrs):
    (t,) = types
    return [t]


def _conj_kernel(ins, attrs):
    x = ins[0]
    if x.dtype.kind == "c":
        return (np.conjugate(x),)
    return (np.array(x, copy=True),)  # real values are their own conjugate


_REAL_OF = {complex64: float32, complex128: float64}


def _real_infer(types, attrs):
    (t,) = types
    return [t.with_dtype(_REAL_OF.get(t.dtype, t.dtype))]


def _real_kernel(ins, attrs):
    return (np.array(np.real(ins[0]), copy=True),)


_EW = ("elementwise", "fusable")
register(OpSchema("conj", 1, _conj_infer, _conj_kernel, traits=_EW,
                  doc="numpy.conjugate for complex inputs; the identity for real ones."))
register(OpSchema("real", 1, _real_infer, _real_kernel, traits=_EW,
                  doc="numpy.real: the real part (complex64 -> float32, complex128 -> "
                      "float64); the identity for real inputs."))
