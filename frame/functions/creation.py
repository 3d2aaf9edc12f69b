"""User-facing creation functions: ``frame.zeros``, ``frame.ones``,
``frame.full``, ``frame.arange``, ``frame.eye``.

They run the ``full`` and ``arange`` ops (and elementwise ops for ``eye``)
through the eager launch path like every other op, so capture sees them as
graph nodes.  Values travel as float attrs, so integers beyond 2**53, which a
float cannot hold exactly, are rejected rather than silently rounded.
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..dtypes import DType, as_dtype, bool_, float32, from_numpy, int64
from ..errors import FrameTypeError, FrameValueError
from ..tensor import Tensor
from ._core import apply1, as_array, bind_schema, schema_attrs
from .elementwise import astype, equal, sub
from .shape import reshape

__all__ = ["zeros", "ones", "full", "arange", "eye", "zeros_like", "ones_like", "full_like",
           "empty_like"]
METHODS: list[str] = []

_EXACT_INT = 2 ** 53  # the largest range of integers a float attr holds exactly


def _shape(op: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (numbers.Integral, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise FrameTypeError(f"{op}: shape must be an int or a sequence of ints, "
                             f"got {shape!r}") from None
    if not all(isinstance(d, (numbers.Integral, np.integer)) and not isinstance(d, bool)
               for d in dims):
        raise FrameTypeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}")
    if any(d < 0 for d in dims):
        raise FrameValueError(f"{op}: negative dimensions are not allowed, got {list(dims)}")
    return tuple(int(d) for d in dims)


def _float_attr(op: str, what: str, value: Any) -> float:
    """``value`` as a float attr; rejects non-numbers and inexact large ints."""
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (numbers.Integral, np.integer)):
        if abs(int(value)) > _EXACT_INT:
            raise FrameValueError(f"{op}: {what} {value} is too large to be represented "
                                  f"exactly (limit 2**53)")
        return float(value)
    if isinstance(value, (numbers.Real, np.floating)):
        return float(value)
    raise FrameTypeError(f"{op}: {what} must be a real number, got {value!r}")


def _is_int(v: Any) -> bool:
    return isinstance(v, (numbers.Integral, np.integer))


@bind_schema("full")
def full(shape, value, dtype=None):
    """A tensor of ``shape`` filled with ``value``.  With ``dtype=None`` the
    dtype follows the value: bool -> bool, int -> int64, float -> float32.

    >>> frame.full((2, 2), 7).dtype
    frame.int64
    """
    if dtype is None:
        if isinstance(value, (bool, np.bool_)):
            dtype = bool_
        elif _is_int(value):
            dtype = int64
        else:
            dtype = float32
    dt: DType = as_dtype(dtype)
    attrs = schema_attrs("full", shape=_shape("full", shape), value=_float_attr("full", "value", value),
                         dtype=dt)
    return apply1("full", (), attrs)


@bind_schema("full")
def zeros(shape, dtype=float32):
    """A tensor of zeros (float32 unless ``dtype`` is given).

    >>> frame.zeros((2, 3)).shape
    (2, 3)
    """
    return full(shape, 0.0, dtype=dtype)


@bind_schema("full")
def ones(shape, dtype=float32):
    """A tensor of ones (float32 unless ``dtype`` is given).

    >>> frame.ones(3, dtype=frame.int32).tolist()
    [1, 1, 1]
    """
    return full(shape, 1.0, dtype=dtype)


@bind_schema("arange")
def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in ``[start, stop)``, exactly numpy.arange's for the
    dtype.  With ``dtype=None``: int64 if every argument is an int, else float32.

    >>> frame.arange(5).tolist()
    [0, 1, 2, 3, 4]
    >>> frame.arange(0, 1, 0.25).tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    if stop is None:
        start, stop = 0, start
    args = (start, stop, step)
    if dtype is None:
        dtype = int64 if all(_is_int(v) for v in args) else float32
    attrs = schema_attrs("arange", start=_float_attr("arange", "start", start),
                         stop=_float_attr("arange", "stop", stop),
                         step=_float_attr("arange", "step", step), dtype=as_dtype(dtype))
    return apply1("arange", (), attrs)


def eye(n: int, m: int | None = None, dtype=float32, *, k: int = 0):
    """A 2-D tensor with ones on the ``k``-th diagonal and zeros elsewhere.

    Built from ops (``arange``, ``sub``, ``equal``, ``cast``), so it runs on the
    eager path and is captured like any other computation.

    >>> frame.eye(2).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    m = n if m is None else m
    for what, v in (("n", n), ("m", m), ("k", k)):
        if not _is_int(v) or isinstance(v, bool):
            raise FrameTypeError(f"eye: {what} must be an int, got {v!r}")
    if n < 0 or m < 0:
        raise FrameValueError(f"eye: negative dimensions are not allowed, got n={n}, m={m}")
    rows = reshape(arange(int(n), dtype=int64), (int(n), 1))
    cols = reshape(arange(int(m), dtype=int64), (1, int(m)))
    return astype(equal(sub(cols, rows), int(k)), dtype)


def _like(op: str, x, dtype):
    """Shape and dtype of ``x`` (a Tensor, an ndarray or array-like data), the
    dtype replaced by ``dtype`` when given.  Reads metadata only."""
    if isinstance(x, Tensor):
        shape, dt = x.shape, x.dtype
    else:
        arr = as_array(x)
        shape, dt = arr.shape, from_numpy(arr.dtype)
    return shape, (dt if dtype is None else as_dtype(dtype))


@bind_schema("full")
def full_like(x, value, dtype=None):
    """A tensor of ``x``'s shape and dtype (or ``dtype``) filled with ``value``,
    which is converted to that dtype as numpy.full_like does (2.7 -> 2 for ints).

    >>> frame.full_like(frame.zeros((2,), dtype=frame.int64), 2.7).tolist()
    [2, 2]
    """
    shape, dt = _like("full_like", x, dtype)
    if isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, (bool, np.bool_)):
        # numpy.full_like stores the value with the array's dtype (unsafe cast)
        with np.errstate(all="ignore"):
            value = np.asarray(value).astype(dt.np).item() if dt.kind != "b" else bool(value)
    return full(shape, value, dtype=dt)


@bind_schema("full")
def zeros_like(x, dtype=None):
    """A tensor of zeros with ``x``'s shape and dtype (or ``dtype``)."""
    shape, dt = _like("zeros_like", x, dtype)
    return full(shape, 0.0, dtype=dt)


@bind_schema("full")
def ones_like(x, dtype=None):
    """A tensor of ones with ``x``'s shape and dtype (or ``dtype``)."""
    shape, dt = _like("ones_like", x, dtype)
    return full(shape, 1.0, dtype=dt)


@bind_schema("full")
def empty_like(x, dtype=None):
    """A tensor with ``x``'s shape and dtype (or ``dtype``).  frame has no
    uninitialised memory: the values are zeros (any values are allowed here)."""
    shape, dt = _like("empty_like", x, dtype)
    return full(shape, 0.0, dtype=dt)
