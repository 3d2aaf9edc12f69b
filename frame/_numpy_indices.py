"""NumPy's index and range helpers written with frame's ops:
``np.unravel_index``, ``np.r_[...]`` and ``np.linspace`` of traced scalars.

``np.unravel_index(indices, shape)`` of traced integer indices (an ``argmax``
of a window, a flat position computed in the function) gives one int64 array
(or NumPy scalar, for a scalar index) per axis of the constant ``shape``:
``(indices // stride) % size`` with C or Fortran strides.  NumPy raises
``ValueError`` for an index outside ``[0, prod(shape))``, which depends on the
values: the flat index goes through a ``take`` whose run-time bounds check
fails exactly then (index 0 of a two-element constant when in range, 2 when
not), so the graph raises and capture runs the call natively, giving NumPy's
error.  A shape computed from arrays, ``order`` other than ``'C'``/``'F'``, or
non-integer indices (NumPy raises TypeError) are not modelled (``NotModelled``).

``np.r_[a, b, 0]`` (``r_getitem``) is not a function NumPy dispatches to
frame; capture calls it for ``np.r_.__getitem__`` with traced items.

``np.linspace(x.min(), x.max(), n)`` (traced 0-d ends, a constant count) is
NumPy's own computation step by step (``numpy/_core/function_base.py``):
``arange(num) * step + start`` in the inexact result type of the ends, with
NumPy's denormal branch (``(arange / div) * delta`` where the step is 0) as a
``where``, the last element set to ``stop`` (``endpoint``), ``floor`` before an
integer ``dtype=``; ``retstep`` gives the step as a NumPy scalar.  Array ends,
``num < 2``, complex or bool ends and other axes are not modelled.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import functions as F
from ._numpy_functions import NotModelled
from .dtypes import from_numpy, int64
from .functions._core import _EAGER, as_array, current_level
from .tensor import Tensor

__all__ = ["INDEX_FUNCTIONS", "r_getitem", "checked"]


def checked(value, bad, function: str):
    """``value``, once the 0-d bool ``bad`` is known false; NumPy's
    ``function`` raises where it is true.  Eagerly ``bad`` is read now (true:
    ``NotModelled``, so NumPy runs the call on the data and raises its own
    error); in a graph it is a ``take`` of index 0 (good) or 2 (bad) from a
    two-element constant, whose run-time bounds check fails exactly where NumPy
    raises (the call then runs natively and raises NumPy's error), added to
    ``value`` as a zero."""
    if current_level() is _EAGER:
        if bool(np.asarray(as_array(bad))):
            raise NotModelled(function, "of values NumPy rejects")
        return value
    zeros = np.zeros(2, as_array(value).dtype)
    return F.add(value, F.take(zeros, F.mul(F.astype(bad, int64), 2), axis=0))


def _shape_tuple(shape) -> tuple[int, ...]:
    if isinstance(shape, (Tensor, np.ndarray)):
        raise NotModelled("unravel_index", "with a shape computed from arrays")
    try:
        dims = tuple(operator.index(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    except TypeError:
        raise NotModelled("unravel_index", f"with shape={shape!r}") from None
    if any(d < 0 for d in dims):
        raise NotModelled("unravel_index", f"with negative dimensions {dims} (NumPy raises)")
    return dims


def unravel_index(indices, shape, order="C"):
    """``np.unravel_index``: one int64 coordinate array per axis of ``shape``;
    an index out of range raises at run time (a checked ``take``)."""
    dims = _shape_tuple(shape)
    if order not in ("C", "F"):
        raise NotModelled("unravel_index", f"with order={order!r}")
    if not isinstance(indices, Tensor):
        indices = np.asarray(indices)
    if as_array(indices).dtype.kind not in "iu":
        raise NotModelled("unravel_index", f"of {as_array(indices).dtype} indices (NumPy raises)")
    flat = F.astype(indices, int64)
    size = math.prod(dims)
    outside = F.greater(F.sum(F.astype(F.logical_or(F.less(flat, 0), F.greater_equal(flat, size)),
                                       int64)), 0)
    flat = checked(flat, outside, "unravel_index")
    strides = []
    step = 1
    for d in (reversed(dims) if order == "C" else dims):
        strides.append(step)
        step *= d
    if order == "C":
        strides.reverse()
    return tuple(F.mod(F.floordiv(flat, s), d) for s, d in zip(strides, dims))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``np.linspace`` with traced 0-d ends: NumPy's steps as frame ops."""
    try:
        num = operator.index(num)
    except TypeError:
        raise NotModelled("linspace", f"with num={num!r}") from None
    if num < 2 or axis not in (0, -1) or device not in (None, "cpu"):
        raise NotModelled("linspace", f"with num={num}, axis={axis!r}, device={device!r}")
    ends = []
    for end in (start, stop):
        if isinstance(end, Tensor):
            if end.ndim != 0:
                raise NotModelled("linspace", "of array ends")
            kind = as_array(end).dtype
        elif type(end) in (int, float) or isinstance(end, (np.integer, np.floating)):
            kind = end   # Python scalars weak, NumPy scalars strong (np.result_type)
        else:
            raise NotModelled("linspace", f"with an end {type(end).__name__}")
        if np.dtype(np.result_type(kind)).kind not in "iuf":
            raise NotModelled("linspace", "of complex or bool ends")
        ends.append(kind)
    dt = np.result_type(*ends, 0.0)   # NumPy's result type of the ends, made inexact
    fdt = from_numpy(dt)
    integer_dtype = dtype is not None and np.issubdtype(dtype, np.integer)
    div = num - 1 if endpoint else num

    def as_dt(end):
        return F.astype(end, fdt) if isinstance(end, Tensor) else np.asarray(end, dtype=dt)
    delta = F.sub(as_dt(stop), as_dt(start))               # np.subtract(..., dtype=type(dt))
    y = F.astype(F.arange(num), fdt)
    step = F.div(delta, div)
    # NumPy: where the step is 0 (a denormal delta), y / div * delta, else y * step
    y = F.where(F.equal(step, 0), F.mul(F.div(y, div), delta), F.mul(y, step))
    y = F.astype(F.add(y, start), fdt)                     # y += start (in place: y's dtype)
    if endpoint:
        y = F.concat([y[:-1], F.reshape(as_dt(stop), (1,))], axis=0)
    if integer_dtype:
        y = F.floor(y)
    if dtype is not None:
        y = F.astype(y, from_numpy(np.dtype(dtype)))
    return (y, step) if retstep else y


INDEX_FUNCTIONS: dict = {np.unravel_index: unravel_index, np.linspace: linspace}


def r_getitem(key):
    """``np.r_[key]`` of 1-D pieces: NumPy's ``AxisConcatenator`` with its
    defaults (axis 0, ``ndmin=1``): each item made at least 1-D, all cast to
    the ``np.result_type`` of the arrays' dtypes and the scalars (Python
    scalars weakly, as NumPy 2), then concatenated.  Slices (``np.r_[1:4]``)
    and string directives (``'0,2'``, ``'r'``) are not modelled."""
    items = key if type(key) is tuple else (key,)
    pieces, kinds = [], []
    for item in items:
        if isinstance(item, (slice, str)):
            raise NotModelled("r_", "with slices or string directives")
        if isinstance(item, Tensor):
            piece = F.reshape(item, (1,)) if item.ndim == 0 else item
            kinds.append(as_array(item).dtype)
        elif type(item) in np.ScalarType:
            piece = np.array(item, ndmin=1)
            kinds.append(item)
        else:
            piece = np.array(item, ndmin=1)
            if piece.dtype.kind not in "biuf":
                raise NotModelled("r_", f"of {piece.dtype} values")
            kinds.append(piece.dtype)
        pieces.append(piece)
    if not pieces:
        raise NotModelled("r_", "of nothing")
    final = np.result_type(*kinds)
    return F.concat([F.astype(p, from_numpy(final)) for p in pieces], axis=0)
