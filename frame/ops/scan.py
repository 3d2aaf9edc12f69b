"""Scans, sorting and gathers along one axis: cumsum, cumprod, sort, argsort,
take_along_axis (NumPy's ``np.cumsum``, ``np.cumprod``, ``np.sort``,
``np.argsort``, ``np.take_along_axis``).

``axis`` is a canonical (non-negative) axis.  Output dtypes are NumPy 2's:
cumsum/cumprod lift bool and small integers to int64 as ``sum``/``prod`` do,
argsort gives int64.  ``sort``/``argsort`` carry NumPy's ``kind``
("quicksort", "mergesort", "heapsort", "stable"): the order of ties depends on
it (for sort: which of -0.0 and 0.0 comes first), and the reference kernel is
NumPy's own sort of that kind, so tied elements come out in exactly NumPy's
order.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import int64
from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .reduction import reduction_dtype
from .registry import register
from .schema import AttrSpec, OpSchema
from .shape import check_axis, check_indices_in_bounds

__all__ = ["SORT_KINDS"]

SORT_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def _check_axis(op: str, t: TensorType, axis: int) -> None:
    if t.rank == 0:
        raise FrameValueError(f"{op}: needs a tensor of rank >= 1, got {t}")
    check_axis(op, axis, t.rank)


# --------------------------------------------------------------------------- cumsum, cumprod

_SCANS = {"cumsum": (np.cumsum, "sum"), "cumprod": (np.cumprod, "prod")}


def _scan_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        _check_axis(op, t, attrs["axis"])
        return [t.with_dtype(reduction_dtype(_SCANS[op][1], t.dtype))]
    return infer


def _scan_kernel(op: str):
    fn = _SCANS[op][0]

    def kernel(ins, attrs):
        # NumPy's result, laid out as NumPy lays it out (its operand's order): the
        # layout analysis asks this kernel (ops/layout.py)
        return (fn(ins[0], axis=attrs["axis"]),)
    return kernel


for _name in _SCANS:
    register(OpSchema(_name, 1, _scan_infer(_name), _scan_kernel(_name),
                      attrs={"axis": AttrSpec("int")},
                      doc=f"numpy.{_name}(x, axis): running {_SCANS[_name][1]} along one axis, "
                          f"in the dtype numpy.{_SCANS[_name][1]} gives."))


# running maximum / minimum (np.maximum.accumulate, np.minimum.accumulate): NumPy's
# accumulate as the kernel (NaN propagates from where it first appears)
_EXTREMUM_SCANS = {"cummax": np.maximum, "cummin": np.minimum}


def _extremum_scan_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        _check_axis(op, t, attrs["axis"])
        if t.dtype.is_complex:
            raise FrameTypeError(f"{op}: complex values are not ordered by frame, got {t}")
        return [t]
    return infer


for _name, _uf in _EXTREMUM_SCANS.items():
    register(OpSchema(_name, 1, _extremum_scan_infer(_name),
                      lambda ins, attrs, _f=_uf: (_f.accumulate(ins[0], axis=attrs["axis"]),),
                      attrs={"axis": AttrSpec("int")}, traits=("nondifferentiable",),
                      doc=f"numpy.{_uf.__name__}.accumulate(x, axis): the running "
                          f"{_uf.__name__} along one axis, in x's dtype."))


# --------------------------------------------------------------------------- sort, argsort

def _check_sort(op: str, t: TensorType, attrs) -> None:
    _check_axis(op, t, attrs["axis"])
    if attrs["kind"] not in SORT_KINDS:
        raise FrameValueError(f"{op}: kind must be one of {SORT_KINDS}, got {attrs['kind']!r}")
    if t.dtype.is_complex:
        raise FrameTypeError(f"{op}: complex values are not ordered by frame, got {t}")


def _sort_infer(types, attrs):
    (t,) = types
    _check_sort("sort", t, attrs)
    return [t]


def _sort_kernel(ins, attrs):
    return (np.sort(ins[0], axis=attrs["axis"], kind=attrs["kind"]),)   # in NumPy's layout


register(OpSchema("sort", 1, _sort_infer, _sort_kernel,
                  attrs={"axis": AttrSpec("int"), "kind": AttrSpec("str", "quicksort")},
                  doc="numpy.sort(x, axis, kind): x sorted along axis (NaN last), by NumPy's "
                      "sort of that kind."))


def _argsort_infer(types, attrs):
    (t,) = types
    _check_sort("argsort", t, attrs)
    return [TensorType(int64, t.shape)]


def _argsort_kernel(ins, attrs):
    return (np.ascontiguousarray(np.argsort(ins[0], axis=attrs["axis"], kind=attrs["kind"])
                                 .astype(np.int64, copy=False)),)


register(OpSchema("argsort", 1, _argsort_infer, _argsort_kernel,
                  attrs={"axis": AttrSpec("int"), "kind": AttrSpec("str", "quicksort")},
                  traits=("nondifferentiable",),
                  doc="numpy.argsort(x, axis, kind): the indices that sort x along axis (NaN "
                      "last); ties are ordered as NumPy's sort of that kind orders them."))


# --------------------------------------------------------------------------- take_along_axis

def _take_along_axis_infer(types, attrs):
    x, idx = types
    axis = attrs["axis"]
    _check_axis("take_along_axis", x, axis)
    if idx.dtype.kind not in "iu":
        raise FrameTypeError(f"take_along_axis: indices must be an integer tensor, got {idx}")
    if idx.rank != x.rank:
        raise FrameValueError(f"take_along_axis: indices {idx} must have the rank of {x}")
    for i, (d, k) in enumerate(zip(x.shape, idx.shape)):
        if i != axis and d != k and d != 1 and k != 1:
            raise FrameValueError(f"take_along_axis: indices {idx} do not broadcast against "
                                  f"{x} outside axis {axis}")
    shape = tuple(k if i == axis else max(d, k) if 0 not in (d, k) else 0
                  for i, (d, k) in enumerate(zip(x.shape, idx.shape)))
    return [x.with_shape(shape)]


def _take_along_axis_kernel(ins, attrs):
    x, idx = ins
    axis = attrs["axis"]
    check_indices_in_bounds("take_along_axis", idx, axis, x.shape[axis])
    return (np.ascontiguousarray(np.take_along_axis(x, idx, axis=axis)),)


register(OpSchema("take_along_axis", 2, _take_along_axis_infer, _take_along_axis_kernel,
                  attrs={"axis": AttrSpec("int")},
                  doc="numpy.take_along_axis(x, indices, axis): out[..., j, ...] = "
                      "x[..., indices[..., j, ...], ...]; the other axes broadcast; negative "
                      "indices count from the end, out-of-range indices raise."))
