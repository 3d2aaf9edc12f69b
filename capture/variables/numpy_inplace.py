"""NumPy functions that write into their array argument: ``np.fill_diagonal``.

``np.fill_diagonal(a, val, wrap=False)`` is NumPy's ``a.flat[:end:step] = val``:
the positions (C order, whatever ``a``'s layout) follow from the shape alone,
so they are constants of the trace; the write is ``a[rows, cols, ...] = val``
through ``ndarray_setitem`` (frame's functional setitem written back into
``a``, a side effect replayed on an input; a view writes through to its base),
with NumPy's conversion of a scalar ``val``.  An array ``val`` is repeated or
cut to the number of positions, as ``a.flat[...] = val`` does.  What NumPy
rejects (a 1-d array, unequal dimensions beyond 2-d) raises natively; a value
frame cannot convert exactly (a list, a cast NumPy makes unsafely) runs
natively.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

import frame

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, TENSOR, ConstantVariable, TensorVariable, Variable
from .registry import HOOKS

__all__ = ["fill_diagonal_positions", "numpy_fill_diagonal"]


def _fill_diagonal_signature(a, val, wrap=False): ...


def fill_diagonal_positions(shape: tuple[int, ...], wrap: bool) -> np.ndarray:
    """The flat (C-order) positions ``np.fill_diagonal`` writes: NumPy's own formula."""
    end = None
    if len(shape) == 2:
        step = shape[1] + 1
        if not wrap:
            end = shape[1] * shape[1]
    else:
        step = 1 + int(np.cumprod(shape[:-1]).sum())
    return np.arange(math.prod(shape), dtype=np.int64)[:end:step]


def _repeated(x, n: int):
    """``x`` flattened, repeated and cut to ``n`` elements (``a.flat[...] = x``)."""
    flat = frame.reshape(x, -1)
    size = flat.shape[0]
    if size != n:
        reps = -(-n // size)
        flat = frame.concat([flat] * reps, axis=0)[:n] if reps > 1 else flat[:n]
    return flat


def bind_call(signature, name: str, args: list[Variable], kwargs: dict[str, Variable]) -> dict:
    """``args``/``kwargs`` bound to ``signature``'s parameters, defaults applied;
    a call NumPy would reject raises its TypeError (the native run's)."""
    try:
        bound = inspect.signature(signature).bind(*args, **kwargs)
    except TypeError as e:
        raise UserCodeRaises(f"{name}(): {e}") from e
    bound.apply_defaults()
    return bound.arguments


def numpy_fill_diagonal(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = bind_call(_fill_diagonal_signature, "fill_diagonal", args, kwargs)
    a, val, wrap = bound["a"], bound["val"], bound["wrap"]
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY:
        raise Unsupported("unsupported_call", "numpy.fill_diagonal of something other than a "
                                              "NumPy array")
    wrap = wrap.as_constant() if isinstance(wrap, Variable) and wrap.is_constant() else wrap
    if isinstance(wrap, Variable):
        raise Unsupported("unsupported_call", "numpy.fill_diagonal with a wrap= known only at "
                                              "run time")
    shape = tuple(a.shape)
    if len(shape) < 2:
        raise UserCodeRaises("fill_diagonal: array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise UserCodeRaises("fill_diagonal: All dimensions of input must be of equal length")
    positions = fill_diagonal_positions(shape, bool(wrap))
    index = ConstantVariable(np.unravel_index(positions, shape))
    if isinstance(val, TensorVariable):
        if val.kind == TENSOR:
            raise Unsupported("unsupported_call", "numpy.fill_diagonal with a frame Tensor value")
        if val.shape:
            if math.prod(val.shape) == 0:
                raise Unsupported("unsupported_call", "numpy.fill_diagonal with an empty value")
            val = tx.call_real(_repeated, [val, ConstantVariable(len(positions))], {},
                               numpy_semantics=True)
    HOOKS.ndarray_setitem(tx, a, index, val)
    return ConstantVariable(None)
