"""Focused differential tests of the sixth fidelity sweep (task HD,
``test_corpus_sweep6.py``: scientific and ML-from-scratch NumPy code): what
the sweep found, one test per fix."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from tests.conftest import SETTING

from .helpers import assert_same, assert_same_as_eager


def _bits(value) -> tuple:
    value = np.asarray(value)
    return type(value), value.dtype, value.shape, value.tobytes()


# -- np.linalg.norm without axis: BLAS's dot of the ravel, not a sum of squares -----------------------

@pytest.mark.parametrize("shape", [(17,), (100,), (1001,), (40, 3)], ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_norm_without_axis_is_numpys_bits(shape, dtype):
    # RMSProp's np.linalg.norm(step), power iteration's w / np.linalg.norm(w):
    # NumPy computes sqrt(x.ravel(order="K").dot(x.ravel(order="K")))
    def f(x):
        return (np.linalg.norm(x), np.linalg.norm(x, keepdims=True),
                np.linalg.norm(x, "fro" if x.ndim == 2 else 2))

    x = (np.random.default_rng(len(shape) + shape[0]).normal(size=shape) * 10).astype(dtype)
    native, jitted = f(x), frame.jit(f)(x)
    if SETTING == "untiered" and dtype is np.float32:
        assert_same(native, jitted)   # OpenVINO's float32 dot: within tolerance
    else:
        assert [_bits(v) for v in jitted] == [_bits(v) for v in native]
    assert_same_as_eager(f, x)


# -- np.dot of a strided vector: BLAS reads it in place --------------------------------------------

@pytest.mark.parametrize("n", [100, 1001])
def test_dot_of_a_column_is_not_copied(n):
    # coordinate descent's np.dot(X[:, j], r): NumPy's dot copies only negative or
    # zero strides and matrices that are neither C- nor Fortran-contiguous
    def f(X, r):
        return (np.dot(X[:, 1], r), X[:, 1].dot(r), r.dot(X[:, 2]), np.dot(X[::2, 0], r[::2]),
                np.dot(X[:, 1][::-1], r), np.dot(X[:, :1].T, r), np.dot(X[:2, :].T, r[:2]))

    rng = np.random.default_rng(n)
    X, r = rng.normal(size=(n, 3)), rng.normal(size=n)
    native, jitted = f(X, r), frame.jit(f)(X, r)
    if SETTING != "untiered":
        assert [_bits(v) for v in jitted] == [_bits(v) for v in native]
    assert_same_as_eager(f, X, r)


def test_inner_operands_are_dot_operands():
    # np.inner of vectors and matrices is NumPy's dot of a and b.T: a reversed
    # vector or a transposed column slice is copied before BLAS
    def f(a, b):
        return (np.inner(a[::-1, 0], b), np.inner(a[:, 0], b), np.inner(a[::2, 1], b[::2]),
                np.inner(a[:, :2].T, a[:, 1:].T))

    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(1000, 3)), rng.normal(size=1000)
    native, jitted = f(a, b), frame.jit(f)(a, b)
    if SETTING != "untiered":
        assert [_bits(v) for v in jitted] == [_bits(v) for v in native]
    assert_same_as_eager(f, a, b)


# -- ndarray.copy(order='F') ------------------------------------------------------------------------

def test_copy_in_fortran_order_runs_natively():
    # the order was ignored: a C-ordered copy where NumPy makes a Fortran-ordered one
    def f(a):
        b = a.copy(order="F")
        return b, b.flags.f_contiguous, (a + 1).copy("A")

    a = np.arange(12.0).reshape(3, 4)
    native, jitted = f(a), frame.jit(f)(a.copy())
    assert jitted[0].flags.f_contiguous and not jitted[0].flags.c_contiguous
    assert jitted[1] is native[1] is True
    assert_same_as_eager(f, a, captured=None)
    reasons = [r.reason for r in frame.explain(f)(a).break_reasons]
    assert any("ndarray.copy() with these arguments" in r for r in reasons), reasons


# -- the harness: NumPy Generators compared by their state ------------------------------------------

def test_assert_same_compares_generators_by_state():
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    assert_same(a, b)
    b.random()
    with pytest.raises(AssertionError, match="bit_generator.state"):
        assert_same(a, b)
