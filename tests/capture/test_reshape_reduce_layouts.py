"""Reductions and reshapes of arrays that are not C-ordered, bit for bit NumPy's.

NumPy's reduction writes a result laid out like its operand, and the order of
the result decides the order in which its iterator adds: ``np.add.reduce(v,
2)`` of a view of a Fortran-ordered array adds pairwise per element into an
F-ordered result, but runs across elements into a C-ordered ``out``.  And
NumPy's reshape of an array that is not C-contiguous may copy it into C order
(``np.ravel(X_F)``), so a chain of reshapes is not one reshape to a
layout-sensitive reader.  The cpu executable gives NumPy's bits for both
(frame/backends/cpu/lowerings.py ``_reduction``, canonicalize
``_merge_reshapes``)."""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame

from .corpus import _setting
from .helpers import assert_same_as_eager

FUNCTIONS = {
    "split_axis_sum": lambda X: X.reshape(40, 2, 30).sum(axis=2),
    "split_axis_max": lambda X: X.reshape(40, 2, 30).max(axis=2),
    "ravel_then_reshape_sum": lambda X: np.ravel(X).reshape(40, 60).sum(axis=1),
    "flat_chain_split_sum": lambda X: X.reshape(-1).reshape(40, 2, 30).sum(axis=2),
    "reshape_chain_matmul": lambda X: X.reshape(-1).reshape(40, 60) @ X.T,
    "transposed_3d_mean": lambda X: X.reshape(40, 3, 20).transpose(2, 0, 1).mean(axis=2),
    "scaled_split_prod": lambda X: (X * 0.5 + 1).reshape(40, 2, 30).prod(axis=2),
    "ravel_back_cumsum": lambda X: np.cumsum(np.ravel(X).reshape(X.shape), axis=1).sum(axis=0),
}


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_reductions_and_reshapes_of_other_layouts(name, order):
    X = np.array(np.random.default_rng(7).standard_normal((40, 60)), order=order)
    fn = FUNCTIONS[name]
    assert_same_as_eager(fn, X, captured=None)
    if _setting() in ("cpu", "default"):
        capture.reset_caches()
        want, got = fn(X), frame.jit(fn)(X)
        assert want.dtype == got.dtype and np.array_equal(want, got), \
            f"not NumPy's bits: max difference {np.max(np.abs(want - got))!r}"
