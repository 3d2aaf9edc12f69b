"""Ops with no tensor inputs: constant (payload on the node), arange, full."""
from __future__ import annotations

import math

import numpy as np

from ..errors import FrameValueError
from ..errors import FrameTypeError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema
from .shape import check_fill_value


def _constant_infer(types, attrs):
    return [TensorType(attrs["dtype"], attrs["shape"])]


def _constant_kernel(ins, attrs):
    # A constant's value is its node's payload (Node.const), not an attribute:
    # graph interpreters read it from the node; nothing launches 'constant'.
    raise FrameValueError("constant: the value lives on the node (Node.const); "
                          "it cannot be launched as a kernel")


register(OpSchema("constant", 0, _constant_infer, _constant_kernel,
                  attrs={"dtype": AttrSpec("dtype"), "shape": AttrSpec("shape")},
                  doc="A constant array; the payload is stored on the node."))


# --------------------------------------------------------------------------- arange, full

def arange_length(start: float, stop: float, step: float) -> int:
    """The number of elements ``numpy.arange(start, stop, step)`` produces:
    ``ceil((stop - start) / step)`` in double precision, at least 0."""
    if step == 0:
        raise FrameValueError("arange: step must not be zero")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        raise FrameValueError(f"arange: start, stop and step must be finite, "
                              f"got {start}, {stop}, {step}")
    try:
        return max(math.ceil((stop - start) / step), 0)
    except OverflowError:
        raise FrameValueError(f"arange: the length of arange({start}, {stop}, {step}) "
                              f"is too large") from None


def _arange_infer(types, attrs):
    n = arange_length(attrs["start"], attrs["stop"], attrs["step"])
    dtype = attrs["dtype"]
    if dtype.is_bool and n > 2:
        # NumPy has no fill rule for bool: only [start, start + step] is defined.
        raise FrameTypeError(f"arange: a bool result can have at most 2 elements, this one "
                             f"would have {n}")
    return [TensorType(dtype, (n,))]


def _arange_kernel(ins, attrs):
    # np.arange itself, so the values are exactly NumPy's for the dtype (it
    # steps by the difference of the first two values in that dtype).
    return (np.arange(attrs["start"], attrs["stop"], attrs["step"], dtype=attrs["dtype"].np),)


register(OpSchema("arange", 0, _arange_infer, _arange_kernel,
                  attrs={"start": AttrSpec("float"), "stop": AttrSpec("float"),
                         "step": AttrSpec("float", 1.0), "dtype": AttrSpec("dtype")},
                  traits=("nondifferentiable",),
                  doc="numpy.arange(start, stop, step, dtype)."))


def _full_infer(types, attrs):
    shape, dtype = attrs["shape"], attrs["dtype"]
    if any(d < 0 for d in shape):
        raise FrameValueError(f"full: negative dimension in shape {list(shape)}")
    check_fill_value("full", attrs["value"], dtype)
    return [TensorType(dtype, shape)]


def _full_kernel(ins, attrs):
    return (np.full(attrs["shape"], attrs["value"], dtype=attrs["dtype"].np),)


register(OpSchema("full", 0, _full_infer, _full_kernel,
                  attrs={"shape": AttrSpec("shape"), "value": AttrSpec("float"),
                         "dtype": AttrSpec("dtype")},
                  traits=("nondifferentiable",),
                  doc="numpy.full(shape, value, dtype); float values are cast as NumPy does."))
