"""Products of an array with its own transpose, bit for bit NumPy's.

NumPy's matmul and dot see ``x.T`` and ``x`` start at one address with swapped
strides and multiply them with BLAS's syrk, which rounds unlike the gemm two
separate arrays get (about half the shapes differ in the last bit).
canonicalize turns such a product in the captured graph into op ``gram``,
whose kernel makes NumPy's own aliased call; a product of two equal arrays
computed twice (``(x * 2).T @ (x * 2)``) stays a gemm, as in NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame

from .corpus import _setting
from .helpers import assert_same_as_eager

FUNCTIONS = {
    "xT_x": lambda X: X.T @ X,
    "x_xT": lambda X: X @ X.T,
    "np_dot_x_xT": lambda X: np.dot(X, X.T),
    "np_matmul_xT_x": lambda X: np.matmul(X.T, X),
    "cov_of_rows": lambda X: np.cov(X),
    "cov_of_columns": lambda X: np.cov(X, rowvar=False),
    "normal_equations": lambda X: np.linalg.solve(X.T @ X + 0.1 * np.eye(X.shape[1]),
                                                   X.T @ X[:, 0]),
    "centred_gram": lambda X: (lambda C: C.T @ C / (len(C) - 1))(X - X.mean(axis=0)),
    "recomputed_is_gemm": lambda X: (X * 2).T @ (X * 2),
    "inline_centred_is_gemm": lambda X: (X - X.mean(0)).T @ (X - X.mean(0)),
    "same_slice_twice": lambda X: X[::2].T @ X[::2],
    "float32": lambda X: (lambda Y: Y.T @ Y)(X.astype(np.float32)),
    "batched": lambda X: (lambda B: np.swapaxes(B, -1, -2) @ B)(X.reshape(2, -1, X.shape[1])),
}
SHAPES = [(6, 50), (10, 30), (30, 30), (100, 3)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_product_with_own_transpose(name, shape):
    """Types and values under every setting; NumPy's bits where the first call
    runs on the cpu executable (cpu, default), for C- and Fortran-ordered X."""
    X = np.random.default_rng(sum(shape)).standard_normal(shape)
    fn = FUNCTIONS[name]
    for arg in (X, np.asfortranarray(X)):
        assert_same_as_eager(fn, arg, captured=None)
        if _setting() in ("cpu", "default"):
            capture.reset_caches()
            want, got = fn(arg), frame.jit(fn)(arg)
            assert want.dtype == got.dtype and np.array_equal(want, got), \
                f"not NumPy's bits: max difference {np.max(np.abs(want - got))!r}"
