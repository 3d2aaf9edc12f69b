"""Ops whose reference kernel is a NumPy function that a composition of
frame's ops cannot reproduce exactly.

NumPy's NaN-ignoring reductions of floating arrays: ``nan_reduce`` runs
``numpy.<function>`` (nanmax, nanmin, nanargmax, nanargmin, nanmean, nanvar,
nanstd, nanmedian) over ``axes`` (or the flattened array for ``flat``).

Their results could be composed from other ops, but what they do with a slice
holding only NaN cannot: NumPy warns (RuntimeWarning "All-NaN slice
encountered", "Mean of empty slice", "Degrees of freedom <= 0 for slice") or
raises (ValueError "All-NaN slice encountered" for nanargmax/nanargmin), which
depends on the values.  The reference kernel is NumPy's function itself, so
values, warnings and errors are NumPy's at run time (trait ``may_raise``:
capture runs the plain function when such a graph raises).  Its warning is a
side effect (trait ``has_side_effect``): the node is never folded at compile
time, merged with an equal one or dropped when its result is unused, so it
warns on every run as often as NumPy would.  OpenVINO refuses
the op (no lowering), so the cpu kernel runs it between compiled partitions.
Input dtypes are float16, float32 and float64 (integer and bool arrays hold no
NaN: frame/_numpy_stats.py calls the plain reductions for them); the results
have the input's dtype, int64 for the arg functions.

``searchsorted`` (NumPy's binary search: its answer for an unsorted array is
its own), ``interp`` (NumPy's float64 kernel with its own treatment of NaN,
infinities and repeated points) and ``partition``/``argpartition`` (NumPy's
introselect: the order of the elements besides the kth ones is the
algorithm's) run NumPy's functions too.  OpenVINO refuses them all
(frame/backends/openvino/rules_stats.py).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import float64, int64
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
                  traits=("nondifferentiable", "may_raise", "has_side_effect"),
                  doc="numpy.<function>(x, axis, keepdims[, ddof]) for function in nanmax, "
                      "nanmin, nanargmax, nanargmin, nanmean, nanvar, nanstd, nanmedian: "
                      "NumPy's own kernel, so an all-NaN slice warns or raises as in NumPy."))


# --------------------------------------------------------------------------- searchsorted, interp

def _searchsorted_infer(types, attrs):
    a, v = types
    if a.rank != 1:
        raise FrameValueError(f"searchsorted: the sorted array must be 1-D, got {a}")
    if attrs["side"] not in ("left", "right"):
        raise FrameValueError(f"searchsorted: side must be 'left' or 'right', got "
                              f"{attrs['side']!r}")
    if a.dtype.is_complex or v.dtype.is_complex:
        raise FrameTypeError(f"searchsorted: complex values are not ordered by frame, got {a}, {v}")
    return [TensorType(int64, v.shape)]


def _searchsorted_kernel(ins, attrs):
    a, v = ins
    result = np.asarray(np.searchsorted(a, v, side=attrs["side"])).astype(np.int64, copy=False)
    return (result if result.flags.c_contiguous else result.copy(),)


register(OpSchema("searchsorted", 2, _searchsorted_infer, _searchsorted_kernel,
                  attrs={"side": AttrSpec("str", "left")}, traits=("nondifferentiable",),
                  doc="numpy.searchsorted(a, v, side): NumPy's binary search of each value of v "
                      "in the 1-D a (NaN last; NumPy's result also where a is not sorted)."))


def _interp_infer(types, attrs):
    x, xp, fp = types
    if xp.rank != 1 or fp.rank != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        raise FrameValueError(f"interp: xp and fp must be 1-D of one non-zero length, got "
                              f"{xp}, {fp}")
    for t in types:
        if t.dtype.is_complex:
            raise FrameTypeError(f"interp: complex values are not supported, got {t}")
    return [TensorType(float64, x.shape)]


def _interp_kernel(ins, attrs):
    x, xp, fp = ins
    result = np.asarray(np.interp(x, xp, fp, left=attrs["left"] if attrs["has_left"] else None,
                                  right=attrs["right"] if attrs["has_right"] else None,
                                  period=attrs["period"] or None))
    return (result if result.flags.c_contiguous else result.copy(),)


register(OpSchema("interp", 3, _interp_infer, _interp_kernel,
                  attrs={"left": AttrSpec("float", 0.0), "has_left": AttrSpec("bool", False),
                         "right": AttrSpec("float", 0.0), "has_right": AttrSpec("bool", False),
                         "period": AttrSpec("float", 0.0)},
                  traits=("nondifferentiable",),
                  doc="numpy.interp(x, xp, fp, left, right, period): NumPy's piecewise-linear "
                      "interpolation (its own kernel: float64, NumPy's handling of NaN and "
                      "infinities); left/right only when has_left/has_right, period 0.0 = "
                      "None."))


# --------------------------------------------------------------------------- partition, argpartition

def _partition_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        if t.rank == 0:
            raise FrameValueError(f"{op}: needs a tensor of rank >= 1, got {t}")
        axis = attrs["axis"]
        if not 0 <= axis < t.rank:
            raise FrameValueError(f"{op}: axis {axis} out of range for {t}")
        n = t.shape[axis]
        for k in attrs["kth"]:
            if not -n <= k < n:
                raise FrameValueError(f"{op}: kth {k} out of bounds for an axis of size {n}")
        if t.dtype.is_complex:
            raise FrameTypeError(f"{op}: complex values are not ordered by frame, got {t}")
        return [t if op == "partition" else TensorType(int64, t.shape)]
    return infer


def _partition_kernel(op: str):
    fn = getattr(np, op)

    def kernel(ins, attrs):
        result = fn(ins[0], list(attrs["kth"]), axis=attrs["axis"])
        return (np.ascontiguousarray(result.astype(np.int64, copy=False) if op != "partition"
                                     else result),)
    return kernel


for _op in ("partition", "argpartition"):
    register(OpSchema(_op, 1, _partition_infer(_op), _partition_kernel(_op),
                      attrs={"kth": AttrSpec("ints"), "axis": AttrSpec("int")},
                      traits=("nondifferentiable",),
                      doc=f"numpy.{_op}(x, kth, axis): NumPy's introselect, so the elements "
                          f"around the kth positions come out in exactly NumPy's order."))
