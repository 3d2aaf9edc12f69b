"""User-facing elementwise functions: ``frame.add``, ``frame.exp``, ...

Each carries ``__frame_op__`` (the op it runs) so capture can recognise it.
"""
from __future__ import annotations

from ..dtypes import int64
from ..errors import FrameValueError
from ..ops.elementwise import BINARY_UFUNCS, UNARY_UFUNCS
from ._core import apply1, as_array, bind_schema, operands, schema_attrs

_NO_ATTRS: dict = {}

__all__ = sorted(set(BINARY_UFUNCS) | set(UNARY_UFUNCS) | {
    "rsqrt", "sigmoid", "relu", "gelu", "erf", "where", "clip", "astype", "cast", "bitwise_not"})
METHODS = [n for n in __all__ if n != "where"]


def _make_unary(op: str):
    def fn(x):
        return apply1(op, (as_array(x),), _NO_ATTRS)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"Elementwise ``{op}`` of a tensor (NumPy semantics).\n\n    >>> frame.{op}(frame.tensor([0.5]))  # doctest: +SKIP\n"
    return bind_schema(op)(fn)


def _make_binary(op: str):
    def fn(x, y):
        return apply1(op, operands(x, y), _NO_ATTRS)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"Elementwise ``{op}`` with NumPy broadcasting; Python scalars are weakly "
                  f"typed (NEP 50).")
    return bind_schema(op)(fn)


_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))


def _make_compare(op: str):
    """A comparison: as a binary function, except that a Python int outside the
    other operand's integer dtype is compared by value, as NumPy 2 does
    (``uint8_array < -1`` is all False, ``uint8_array == 256`` too; arithmetic
    with such an int raises): the array is widened to int64 first."""
    def fn(x, y):
        try:
            arrays = operands(x, y)
        except FrameValueError:
            arrays = _widened(x, y)
            if arrays is None:
                raise
        return apply1(op, arrays, _NO_ATTRS)
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = (f"Elementwise ``{op}`` with NumPy broadcasting; Python scalars are weakly "
                  f"typed (NEP 50), and compared by value.")
    return bind_schema(op)(fn)


def _widened(x, y):
    """The operands with the integer array (narrower than 64 bits) as int64, when
    the other operand is a Python int that fits in int64; else None."""
    for a, b in ((x, y), (y, x)):
        if type(b) is int and -(1 << 63) <= b < 1 << 63:
            arr = as_array(a)
            if arr.dtype.kind in "iu" and arr.dtype.itemsize < 8:
                wide = astype(a, int64)
                return operands(wide, b) if a is x else operands(b, wide)
    return None


for _op in (*UNARY_UFUNCS, "rsqrt", "sigmoid", "relu", "erf"):
    globals()[_op] = _make_unary(_op)
for _op in BINARY_UFUNCS:
    globals()[_op] = _make_compare(_op) if _op in _COMPARISONS else _make_binary(_op)


@bind_schema("gelu")
def gelu(x, approximate: str = "none"):
    """GELU: ``x * Phi(x)``; ``approximate="tanh"`` uses the tanh formula."""
    return apply1("gelu", (as_array(x),), schema_attrs("gelu", approximate=approximate))


@bind_schema("where")
def where(cond, x, y):
    """``x`` where ``cond`` is true, else ``y`` (broadcasting, NumPy promotion)."""
    c = as_array(cond)
    a, b = operands(x, y)
    return apply1("where", (c, a, b), _NO_ATTRS)


@bind_schema("clip")
def clip(x, lo=None, hi=None):
    """Limit values to ``[lo, hi]``; a bound of None is open (as numpy.clip)."""
    if lo is None and hi is None:
        raise ValueError("clip: at least one of lo and hi must be given")
    xa = as_array(x)
    if lo is None:
        lo = -float("inf") if xa.dtype.kind in "fc" else _int_limits(xa)[0]
    if hi is None:
        hi = float("inf") if xa.dtype.kind in "fc" else _int_limits(xa)[1]
    if xa.dtype.kind in "iu":
        # NumPy 2 accepts a Python int bound beyond the dtype on its own side (a
        # uint8 clipped to [-10, 300] is itself); the other side raises OverflowError
        low, high = _int_limits(xa)
        lo = low if type(lo) is int and lo < low else lo
        hi = high if type(hi) is int and hi > high else hi
    arrays = operands(x, lo, hi)
    return apply1("clip", arrays, _NO_ATTRS)


def _int_limits(a):
    import numpy as np
    if a.dtype.kind == "b":
        return False, True
    info = np.iinfo(a.dtype)
    return int(info.min), int(info.max)


@bind_schema("cast")
def astype(x, dtype):
    """A copy of ``x`` converted to ``dtype`` (NumPy casting, unsafe like ndarray.astype)."""
    return apply1("cast", (as_array(x),), schema_attrs("cast", dtype=dtype))


cast = astype
bitwise_not = invert  # numpy.bitwise_not is numpy.invert
