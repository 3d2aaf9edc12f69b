"""Differential corpus, NumPy's memory layouts (task HB): library and tutorial
code whose NumPy result depends on the layout of an intermediate, checked bit
for bit.

``lr * X.T`` is Fortran-ordered in NumPy (a ufunc lays its result out in the
"K" order of its operands), so ``lr * X.T @ err`` runs gemv/gemm with BLAS's
transpose flag; ``(X.T * 2).sum(axis=1)`` adds in memory order;
``X[:, 1:5].sum()`` sums a view with gaps in rows of 4.  A C-ordered copy of
the same values gives other last bits.  These are everyday patterns: gradient
descent for linear and logistic regression, softmax regression, weighted least
squares, covariance, column-slice statistics, image patches, ``np.dot``,
``X.T.dot(err)``, in float32 and float64, and arguments that are themselves
Fortran-ordered arrays, transposes or slices.

Each case runs through the standard corpus check (``corpus.Case.check``:
values within the backend's tolerance, types, mutation) and then once more,
bit for bit (``np.array_equal`` on the very same argument objects, not deep
copies, so a view stays a view), where the first call runs on the cpu
executable: ``FRAME_TEST_SETTING=cpu`` and ``default`` (tiered: the cpu tier
first).  Under ``untiered`` every graph runs on OpenVINO, whose float kernels
are not NumPy's: tolerance only.
"""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame

from .corpus import Corpus, _setting

case = Corpus()


def _rng(seed):
    return np.random.default_rng(seed)


def _regression(n=200, d=7, seed=0, dtype=np.float64):
    rng = _rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    w = rng.standard_normal(d).astype(dtype)
    y = (X @ w + 0.1 * rng.standard_normal(n)).astype(dtype)
    return X, y, np.zeros(d, dtype)


def _classes(n=120, d=6, k=4, seed=1, dtype=np.float64):
    rng = _rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    labels = rng.integers(0, k, n)
    Y = np.eye(k, dtype=dtype)[labels]
    W = (0.1 * rng.standard_normal((d, k))).astype(dtype)
    return X, Y, W


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


# == linear regression =============================================================================

@case(lambda: _regression() + (0.01,), graphs=1)
def linreg_gd_step(X, y, w, lr):
    err = X @ w - y
    w = w - lr * X.T @ err
    return w


@case(lambda: _regression(seed=2) + (0.05,), graphs=1)
def linreg_gd_step_one_over_m(X, y, w, lr):
    m = X.shape[0]
    h = X.dot(w)
    grad = 1 / m * X.T @ (h - y)
    return w - lr * grad


@case(lambda: _regression(seed=3, dtype=np.float32) + (np.float32(0.01),), graphs=1)
def linreg_gd_step_float32(X, y, w, lr):
    return w - lr * X.T @ (X @ w - y)


@case(lambda: _regression(seed=4) + (0.01, 0.1), graphs=1)
def ridge_gradient_scaled_design(X, y, w, lr, lam):
    n = len(y)
    grad = (X.T * (2.0 / n)).dot(X.dot(w) - y) + 2 * lam * w
    return w - lr * grad


@case(lambda: _regression(seed=5)[:2] + (np.full(200, 0.5),), graphs=1)
def weighted_least_squares_normal_equations(X, y, weights):
    XtW = X.T * weights
    return np.linalg.solve(XtW @ X, XtW @ y)


@case(lambda: _regression(seed=6)[:2] + (0.5,), graphs=1)
def ridge_normal_equations_scaled(X, y, alpha):
    Xs = X.T / np.sqrt(len(y))
    A = Xs @ Xs.T + alpha * np.eye(X.shape[1])
    return np.linalg.solve(A, Xs @ y)


@case(lambda: _regression(seed=7) + (0.01,), graphs=1)
def linreg_np_dot_transposed_scaled(X, y, w, lr):
    return w - np.dot(lr * X.T, np.dot(X, w) - y)


# == logistic and softmax regression ===============================================================

@case(lambda: (_regression(seed=8)[0], (_rng(8).random(200) > 0.5).astype(np.float64),
               np.zeros(7), 0.1), graphs=1)
def logistic_regression_step(X, y, w, lr):
    h = _sigmoid(X @ w)
    return w - lr * (1.0 / len(y)) * X.T @ (h - y)


@case(lambda: (_regression(seed=9, dtype=np.float32)[0],
               (_rng(9).random(200) > 0.5).astype(np.float32), np.zeros(7, np.float32)),
      graphs=1)
def logistic_regression_gradient_float32(X, y, w):
    h = _sigmoid(X.dot(w))
    return (X.T / len(y)).dot(h - y)


@case(lambda: _classes() + (0.5,), graphs=1)
def softmax_regression_gradient(X, Y, W, lr):
    Z = X @ W
    Z = Z - Z.max(axis=1, keepdims=True)
    P = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    grad = 1 / X.shape[0] * X.T @ (P - Y)
    return W - lr * grad


@case(lambda: _classes(k=10, dtype=np.float32, seed=10), graphs=1)
def softmax_over_transposed_logits_float32(X, Y, W):
    S = np.exp((X @ W).T)           # classes x samples, as in cs231n's column layout
    return S / S.sum(axis=0)


# == statistics ====================================================================================

@case(lambda: (_rng(11).standard_normal((301, 7)),), graphs=1)
def transposed_scaled_row_sums(X):
    return (X.T * 2).sum(axis=1)


@case(lambda: (_rng(12).standard_normal((301, 7)),), graphs=1)
def transposed_scaled_total(X):
    return (X.T * 2).sum()


@case(lambda: (_rng(13).standard_normal((301, 7)),), graphs=1)
def exp_transposed_means(X):
    return np.exp(X.T).mean(axis=1)


@case(lambda: (_rng(14).standard_normal((3001, 7)),), graphs=1)
def column_slice_total(X):
    return X[:, 1:5].sum()


@case(lambda: (_rng(15).standard_normal((3001, 7)).astype(np.float32),), graphs=1)
def column_slice_mean_float32(X):
    return X[:, 2:6].mean()


@case(lambda: (_rng(16).standard_normal((3001, 5)),), graphs=1)
def total_without_bias_column(X):
    return X[:, 1:].sum()


@case(lambda: (_rng(17).standard_normal((256, 256)).astype(np.float32),), graphs=1)
def image_patch_mean_float32(img):
    return img[32:96, 64:200].mean()


@case(lambda: (_rng(18).standard_normal((500, 33)),), graphs=1)
def every_other_row_sum(X):
    return X[::2].sum()


@case(lambda: (_rng(19).standard_normal((400, 5)),), graphs=1)
def centered_columns_sum_of_squares(X):
    Xc = X.T - X.mean(axis=0)[:, None]
    return (Xc ** 2).sum(axis=1)


@case(lambda: (_rng(20).standard_normal((301, 6)),), graphs=1)
def transposed_standardised_variance(X):
    Z = X.T * 0.5
    return Z.var(axis=1), Z.std(axis=1)


@case(lambda: (_rng(21).standard_normal((301, 6)),), graphs=1)
def transposed_row_norms(X):
    return np.linalg.norm(X.T * 3.0, axis=1)


@case(lambda: (_rng(22).standard_normal((300, 4)) * 0.01 + 1.0,), graphs=1)
def transposed_products(X):
    return np.prod(X.T * 1.001)


@case(lambda: (_rng(23).standard_normal((200, 6)),), graphs=1)
def covariance_of_scaled_transpose(X):
    Xs = X.T / X.std(axis=0)[:, None]
    Xs = Xs - Xs.mean(axis=1, keepdims=True)
    return Xs @ Xs.T / (X.shape[0] - 1)


# == matrix products ===============================================================================

@case(lambda: (_rng(24).standard_normal((64, 33)), _rng(25).standard_normal((64, 17))), graphs=1)
def exp_transposed_times_matrix(A, B):
    return np.exp(A.T) @ B


@case(lambda: (_rng(26).standard_normal((64, 33)), _rng(27).standard_normal((17, 64))), graphs=1)
def affine_transposed_times_transposed(A, C):
    return (A.T * 2.0 + 1.0) @ C.T


@case(lambda: (_rng(28).standard_normal((301, 7)),), graphs=1)
def scaled_gram_column(X):
    return 1 / X.shape[0] * X.T @ X[:, 0]


@case(lambda: (_rng(29).standard_normal((128, 9)).astype(np.float32),
               _rng(30).standard_normal(128).astype(np.float32)), graphs=1)
def tensordot_of_scaled_transpose_float32(X, v):
    return np.tensordot(X.T * np.float32(0.5), v, axes=1)


@case(lambda: (_rng(31).standard_normal((3, 1000)), _rng(32).standard_normal((1000, 3))), graphs=1)
def transposed_matmul_result_scaled(a, b):
    # NumPy computes a @ b and views it transposed; (a @ b).T == b.T @ a.T only
    # up to rounding
    return (a @ b).T * 2.0


@case(lambda: (_rng(37).standard_normal((301, 9)), _rng(38).standard_normal(301)), graphs=1)
def dot_of_transposed_feature_slice(X, r):
    # np.dot copies an operand that is neither C- nor Fortran-contiguous to C
    # order; the @ operator hands the same strided view to BLAS (lda 9)
    return np.dot(X[:, 1:5].T, r), X[:, 1:5].T @ r


@case(lambda: (_rng(39).standard_normal((301, 9)), _rng(40).standard_normal(9)), graphs=1)
def reversed_rows_dot_and_matmul(X, v):
    # np.dot copies the reversed view; the @ operator runs its own loop on it
    Xr = X[::-1]
    return np.dot(Xr, v), Xr @ v, Xr.dot(v)


# == arguments that are not C-ordered ==============================================================

@case(lambda: (np.asfortranarray(_rng(33).standard_normal((7, 3001))),), graphs=1)
def fortran_argument_scaled_row_sums(X):
    return (X * 2).sum(axis=1)


@case(lambda: (_rng(34).standard_normal((40, 301)).T,), graphs=1)
def transposed_argument_scaled_total(X):
    return (X * 2).sum()


@case(lambda: (_rng(35).standard_normal((200, 7)).T, _rng(36).standard_normal(200), 0.01),
      graphs=1)
def transposed_argument_gradient(Xt, err, lr):
    return (lr * Xt) @ err


# ----------------------------------------------------------------------------------------------

def _bit_equal(native, jitted, path="result"):
    """Same Python structure, and arrays with the same dtype, shape and bits."""
    if isinstance(native, (tuple, list)):
        assert type(native) is type(jitted) and len(native) == len(jitted), path
        for i, (a, b) in enumerate(zip(native, jitted)):
            _bit_equal(a, b, f"{path}[{i}]")
        return
    a, b = np.asarray(native), np.asarray(jitted)
    assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: {b.dtype}{b.shape} != {a.dtype}{a.shape}"
    assert np.array_equal(a, b, equal_nan=True), (
        f"{path}: not NumPy's bits (max difference {np.max(np.abs(a - b))!r})")


def _runs_cpu_first() -> bool:
    """Does a jitted function's first call run on the cpu executable here?"""
    return _setting() in ("cpu", "default")


@pytest.mark.parametrize("c", case.params())
def test_corpus_layout(c):
    c.check()
    if not _runs_cpu_first():
        return
    capture.reset_caches()
    args = c.args()
    native = c.fn(*args)
    jitted = frame.jit(c.fn)(*args)
    _bit_equal(native, jitted)
