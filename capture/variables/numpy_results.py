"""NumPy calls whose result frame's functions do not give as NumPy does.

``np.cov`` of a single variable (one 1-D array): NumPy squeezes the (1, 1)
matrix to a 0-d *array*, while a 0-d result of frame's functions stands for
a NumPy scalar.  The trace computes the matrix with frame's ``cov_matrix``
(NumPy's order of operations) and gives the 0-d value the kind of an array.
"""
from __future__ import annotations

from frame._numpy_stats import cov_matrix

from ..errors import Unsupported
from .base import NDARRAY, ConstantVariable, TensorVariable, Variable
from .registry import HOOKS

__all__ = ["is_cov_of_one_variable", "numpy_cov_of_one_variable"]


def is_cov_of_one_variable(args: list[Variable], kwargs: dict[str, Variable]) -> bool:
    """``np.cov(m, ...)`` of one 1-D NumPy array, without ``y``."""
    m = args[0] if args else kwargs.get("m")
    y = args[1] if len(args) > 1 else kwargs.get("y")
    return (isinstance(m, TensorVariable) and m.kind == NDARRAY and len(m.shape) == 1
            and (y is None or y.is_none()))


def numpy_cov_of_one_variable(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    c = tx.call_real(cov_matrix, args, kwargs, numpy_semantics=True)
    if not isinstance(c, TensorVariable) or tuple(c.shape) != (1, 1):
        raise Unsupported("unsupported_call", "numpy.cov of one variable with these arguments")
    value = HOOKS.tensor_getattr(tx, c, "reshape").call(tx, [ConstantVariable(())], {})
    return TensorVariable(value.meta, NDARRAY)   # NumPy's 0-d array
