"""NumPy functions that write into their array argument: ``np.fill_diagonal``,
``np.put_along_axis``.

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

``np.put_along_axis(arr, indices, values, axis)`` is NumPy's
``arr[_make_along_axis_idx(arr.shape, indices, axis)] = values``: the same
fancy index (orthogonal ``arange`` columns, the traced ``indices`` at
``axis``) written through ``ndarray_setitem``; an index out of range raises
in the graph's ``scatter`` and the call then runs natively.  NumPy's checks
of the arguments (an integer array of the array's rank) are made at trace
time; ``axis=None`` (a flat view) runs natively.
"""
from __future__ import annotations

import inspect
import math

import numpy as np

import frame

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, TENSOR, ConstantVariable, TensorVariable, Variable
from .registry import HOOKS

__all__ = ["fill_diagonal_positions", "numpy_fill_diagonal", "numpy_put_along_axis"]


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


def _put_along_axis_signature(arr, indices, values, axis): ...


def numpy_put_along_axis(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = bind_call(_put_along_axis_signature, "put_along_axis", args, kwargs)
    arr, indices, values, axis = (bound[k] for k in ("arr", "indices", "values", "axis"))
    if not (isinstance(arr, TensorVariable) and arr.kind == NDARRAY
            and isinstance(indices, TensorVariable) and indices.kind != TENSOR
            and axis.is_constant() and axis.as_constant() is not None
            and not (isinstance(values, TensorVariable) and values.kind == TENSOR)):
        raise Unsupported("unsupported_call", "numpy.put_along_axis with these arguments")
    if indices.meta.dtype.kind not in "iu":
        raise UserCodeRaises("IndexError: `indices` must be an integer array",
                             exc=IndexError("`indices` must be an integer array"))
    shape = tuple(arr.shape)
    if len(shape) != len(indices.shape):
        message = "`indices` and `arr` must have the same number of dimensions"
        raise UserCodeRaises(f"ValueError: {message}", exc=ValueError(message))
    try:
        ax = np.lib.array_utils.normalize_axis_index(axis.as_constant(), len(shape))
    except (TypeError, np.exceptions.AxisError) as e:
        raise UserCodeRaises(f"put_along_axis(): {e}", exc=e) from e
    ones = (1,) * len(shape)
    parts = [indices if dim == ax else
             tx.wrap_result(np.arange(n).reshape(ones[:dim] + (-1,) + ones[dim + 1:]))
             for dim, n in enumerate(shape)]
    from .containers import TupleVariable   # lazy: containers imports callables, which imports this
    HOOKS.ndarray_setitem(tx, arr, TupleVariable(parts), values)
    return ConstantVariable(None)
