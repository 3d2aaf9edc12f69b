"""NumPy's NaN-ignoring reductions of floating arrays: ``nan_reduce`` runs
``numpy.<function>`` (nanmax, nanmin, nanargmax, nanargmin, nanmean, nanvar,
nanstd, nanmedian) over ``axes`` (or the flattened array for ``flat``).

Their results could be composed from other ops, but what they do with a slice
holding only NaN cannot: NumPy warns (RuntimeWarning "All-NaN slice
encountered", "Mean of empty slice", "Degrees of freedom <= 0 for slice") or
raises (ValueError "All-NaN slice encountered" for nanargmax/nanargmin), which
depends on the values.  The reference kernel is NumPy's function itself, so
values, warnings and errors are NumPy's at run time (trait ``may_raise``:
capture runs the plain function when such a graph raises).  OpenVINO refuses
the op (no lowering), so the cpu kernel runs it between compiled partitions.
Input dtypes are float16, float32 and float64 (integer and bool arrays hold no
NaN: frame/_numpy_stats.py calls the plain reductions for them); the results
have the input's dtype, int64 for the arg functions.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import int64
from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema
from .shape import check_axes

__all__ = ["NAN_FUNCTIONS"]

NAN_FUNCTIONS = ("nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean", "nanvar", "nanstd",
                 "nanmedian")
_ARG = ("nanargmax", "nanargmin")


def _nan_reduce_infer(types, attrs):
    (t,) = types
    function, axes = attrs["function"], attrs["axes"]
    if function not in NAN_FUNCTIONS:
        raise FrameValueError(f"nan_reduce: function must be one of {NAN_FUNCTIONS}, "
                              f"got {function!r}")
    if t.dtype.name not in ("float16", "float32", "float64"):
        raise FrameTypeError(f"nan_reduce: needs a float16, float32 or float64 tensor, got {t}")
    check_axes("nan_reduce", axes, t.rank)
    if attrs["flat"]:
        axes = tuple(range(t.rank))
    elif function in _ARG and len(axes) != 1:
        raise FrameValueError(f"nan_reduce: {function} reduces one axis, got axes {axes}")
    if attrs["keepdims"]:
        shape = tuple(1 if i in axes else d for i, d in enumerate(t.shape))
    else:
        shape = tuple(d for i, d in enumerate(t.shape) if i not in axes)
    return [TensorType(int64 if function in _ARG else t.dtype, shape)]


def _nan_reduce_kernel(ins, attrs):
    function = attrs["function"]
    axis = None if attrs["flat"] else attrs["axes"]
    if function in _ARG and axis is not None:
        axis = axis[0]
    kwargs = {"axis": axis, "keepdims": attrs["keepdims"]}
    if function in ("nanvar", "nanstd"):
        ddof = attrs["ddof"]
        kwargs["ddof"] = int(ddof) if ddof.is_integer() else ddof
    result = np.asarray(getattr(np, function)(ins[0], **kwargs))
    if function in _ARG:
        result = result.astype(np.int64, copy=False)
    return (result if result.flags.c_contiguous else result.copy(),)  # 0-d stays 0-d


register(OpSchema("nan_reduce", 1, _nan_reduce_infer, _nan_reduce_kernel,
                  attrs={"function": AttrSpec("str"), "axes": AttrSpec("ints"),
                         "flat": AttrSpec("bool", False), "keepdims": AttrSpec("bool", False),
                         "ddof": AttrSpec("float", 0.0)},
                  traits=("nondifferentiable", "may_raise"),
                  doc="numpy.<function>(x, axis, keepdims[, ddof]) for function in nanmax, "
                      "nanmin, nanargmax, nanargmin, nanmean, nanvar, nanstd, nanmedian: "
                      "NumPy's own kernel, so an all-NaN slice warns or raises as in NumPy."))
