"""NumPy's index helpers written with frame's ops: ``np.unravel_index`` and
``np.r_[...]``.

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
"""
from __future__ import annotations

import math
import operator

import numpy as np

from . import functions as F
from ._numpy_functions import NotModelled
from .dtypes import from_numpy, int64
from .functions._core import as_array
from .tensor import Tensor

__all__ = ["INDEX_FUNCTIONS", "r_getitem"]


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
    outside = F.logical_or(F.less(flat, 0), F.greater_equal(flat, size))
    check = F.take(np.zeros(2, np.int64), F.mul(F.astype(outside, int64), 2), axis=0)
    flat = F.add(flat, check)   # + 0, once the check passed
    strides = []
    step = 1
    for d in (reversed(dims) if order == "C" else dims):
        strides.append(step)
        step *= d
    if order == "C":
        strides.reverse()
    return tuple(F.mod(F.floordiv(flat, s), d) for s, d in zip(strides, dims))


INDEX_FUNCTIONS: dict = {np.unravel_index: unravel_index}


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
