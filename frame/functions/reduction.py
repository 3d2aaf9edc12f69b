"""User-facing reductions: ``frame.sum``, ``frame.mean``, ``frame.max``,
``frame.min``, ``frame.prod``, ``frame.argmax``, ``frame.argmin``.

NumPy signatures (``axis=None | int | tuple``, ``keepdims``).  ``dtype`` and
``out`` are accepted because ``np.sum(t)`` and friends pass them to the
tensor's method; only their default ``None`` is supported.

The names shadow the builtins ``sum``, ``max`` and ``min`` inside this module,
so the helpers here do not use those builtins.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import FrameTypeError
from ..ops.common import normalize_axes, normalize_axis
from ._core import apply1, as_array, bind_schema, schema_attrs
from .shape import reshape

__all__ = ["sum", "mean", "max", "min", "prod", "argmax", "argmin"]
METHODS = list(__all__)

Axis = Any  # None, an int, or a tuple/list of ints


def _numpy_extras(op: str, dtype: Any, out: Any) -> None:
    """NumPy passes ``dtype=None, out=None`` to methods; other values are unsupported."""
    if dtype is not None:
        raise FrameTypeError(f"{op}: the dtype argument is not supported; convert the input "
                             f"with .astype() first")
    if out is not None:
        raise FrameTypeError(f"{op}: the out argument is not supported; frame tensors are "
                             f"never written into by reductions")


def reduction_axes(op: str, axis: Axis, rank: int) -> tuple[int, ...]:
    """Canonical axes for ``axis``: None -> every axis; negatives normalised; sorted."""
    if axis is None:
        return tuple(range(rank))
    if isinstance(axis, (numbers.Integral, np.integer)) and not isinstance(axis, bool):
        if rank == 0 and int(axis) in (0, -1):
            return ()  # NumPy lets an int axis 0/-1 name the "axis" of a 0-d array
        return normalize_axes(op, (int(axis),), rank)
    if isinstance(axis, (tuple, list)):
        for a in axis:
            if isinstance(a, bool) or not isinstance(a, (numbers.Integral, np.integer)):
                raise FrameTypeError(f"{op}: axis must be None, an int or a tuple of ints, "
                                     f"got {axis!r}")
        return normalize_axes(op, tuple(int(a) for a in axis), rank)
    raise FrameTypeError(f"{op}: axis must be None, an int or a tuple of ints, got {axis!r}")


def _reduce(op: str, x, axis: Axis, keepdims: bool):
    a = as_array(x)
    attrs = schema_attrs(op, axes=reduction_axes(op, axis, a.ndim), keepdims=keepdims)
    return apply1(op, (a,), attrs)


@bind_schema("sum")
def sum(x, axis: Axis = None, keepdims: bool = False, *, dtype: Any = None, out: Any = None):
    """Sum of elements over ``axis`` (all axes when None), NumPy dtypes
    (bool and int32 sum to int64).

    >>> frame.sum(frame.tensor([[1, 2], [3, 4]]), axis=0).tolist()
    [4, 6]
    """
    _numpy_extras("sum", dtype, out)
    return _reduce("sum", x, axis, keepdims)


@bind_schema("mean")
def mean(x, axis: Axis = None, keepdims: bool = False, *, dtype: Any = None, out: Any = None):
    """Arithmetic mean over ``axis``; integer and bool inputs give float64, as in NumPy.

    >>> frame.mean(frame.tensor([1.0, 2.0, 6.0])).item()
    3.0
    """
    _numpy_extras("mean", dtype, out)
    return _reduce("mean", x, axis, keepdims)


@bind_schema("max")
def max(x, axis: Axis = None, keepdims: bool = False, *, out: Any = None):
    """Largest element over ``axis``; reducing zero elements is an error.

    >>> frame.max(frame.tensor([[1, 5], [3, 2]]), axis=1).tolist()
    [5, 3]
    """
    _numpy_extras("max", None, out)
    return _reduce("max", x, axis, keepdims)


@bind_schema("min")
def min(x, axis: Axis = None, keepdims: bool = False, *, out: Any = None):
    """Smallest element over ``axis``; reducing zero elements is an error.

    >>> frame.min(frame.tensor([[1, 5], [3, 2]]), axis=0).tolist()
    [1, 2]
    """
    _numpy_extras("min", None, out)
    return _reduce("min", x, axis, keepdims)


@bind_schema("prod")
def prod(x, axis: Axis = None, keepdims: bool = False, *, dtype: Any = None, out: Any = None):
    """Product of elements over ``axis`` (NumPy dtypes, like ``sum``).

    >>> frame.prod(frame.tensor([2, 3, 4])).item()
    24
    """
    _numpy_extras("prod", dtype, out)
    return _reduce("prod", x, axis, keepdims)


def _arg(op: str, x, axis, keepdims: bool, out: Any):
    _numpy_extras(op, None, out)
    a = as_array(x)
    if axis is None:
        # As NumPy: the index into the flattened tensor.
        flat = reshape(a, (-1,))
        result = apply1(op, (as_array(flat),), schema_attrs(op, axis=0, keepdims=False))
        return reshape(result, (1,) * a.ndim) if keepdims else result
    if isinstance(axis, bool) or not isinstance(axis, (numbers.Integral, np.integer)):
        raise FrameTypeError(f"{op}: axis must be None or an int, got {axis!r}")
    canonical = normalize_axis(op, int(axis), a.ndim)
    return apply1(op, (a,), schema_attrs(op, axis=canonical, keepdims=keepdims))


@bind_schema("argmax")
def argmax(x, axis: int | None = None, keepdims: bool = False, *, out: Any = None):
    """Index (int64) of the first largest element along ``axis``; with
    ``axis=None`` the index into the flattened tensor.

    >>> frame.argmax(frame.tensor([[1, 5], [7, 2]])).item()
    2
    """
    return _arg("argmax", x, axis, keepdims, out)


@bind_schema("argmin")
def argmin(x, axis: int | None = None, keepdims: bool = False, *, out: Any = None):
    """Index (int64) of the first smallest element along ``axis`` (flattened when None).

    >>> frame.argmin(frame.tensor([[1, 5], [7, 2]]), axis=1).tolist()
    [0, 1]
    """
    return _arg("argmin", x, axis, keepdims, out)
