"""Coverage corpus, linear algebra: NumPy code of the kind statistics and
numerical tutorials are made of -- least squares and ridge regression through
``np.linalg.solve``, PCA through ``np.linalg.eigh``, a Newton step of logistic
regression, Mahalanobis distances through ``np.linalg.inv``, Gaussian
log-likelihoods through ``np.linalg.slogdet``, a Gaussian-process posterior
through ``np.linalg.cholesky``, a Kalman filter update, Jacobian determinants,
least squares and PCA through ``np.linalg.qr``/``svd``/``pinv``, and the
diagonal helpers (``np.trace``, ``np.diag``, ``np.diagonal``,
``ndarray.diagonal``/``ndarray.trace``).  Each function is run natively and
jitted (``corpus.Case.check``) and must be one graph with no break, except
``np.linalg.lstsq`` (its residuals' shape and its rank depend on the values:
a break naming it).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from .corpus import Corpus
from .helpers import array

case = Corpus()


def design(n=12, d=3, seed=0, dtype="float64"):
    return array((n, d), dtype, seed=seed)


def spd(d=4, seed=1, dtype="float64"):
    a = array((d, d), "float64", seed=seed)
    return (a @ a.T / d + np.eye(d)).astype(dtype)


# -- regression ----------------------------------------------------------------------------------

@case(lambda: (design(), array((12,), "float64", seed=2)), graphs=1)
def least_squares_normal_equations(X, y):
    return np.linalg.solve(X.T @ X, X.T @ y)


@case(lambda: (design(), array((12, 2), "float64", seed=2), 0.5), graphs=1)
def ridge_regression_two_targets(X, Y, lam):
    d = X.shape[1]
    w = np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ Y)
    residual = Y - X @ w
    return w, (residual ** 2).mean(axis=0)


@case(lambda: (design(dtype="float32"), array((12,), "float32", seed=2)), graphs=1)
def least_squares_float32(X, y):
    w = np.linalg.solve(X.T @ X, X.T @ y)
    return w, w.dtype


@case(lambda: (design(20, 3, seed=4), (array((20,), seed=5) > 0).astype(np.float64),
               np.zeros(3)), graphs=1)
def logistic_regression_newton_step(X, y, w):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    grad = X.T @ (p - y)
    hess = X.T @ (X * (p * (1.0 - p))[:, None]) + 1e-3 * np.eye(X.shape[1])
    return w - np.linalg.solve(hess, grad)


# -- covariance, PCA, distances ------------------------------------------------------------------

@case(lambda: (design(30, 4, seed=6),), graphs=1)
def pca_projection(X):
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / (X.shape[0] - 1)
    eigenvalues, eigenvectors = np.linalg.eigh(cov)
    top = eigenvectors[:, ::-1][:, :2]
    explained = eigenvalues[::-1] / eigenvalues.sum()
    return Xc @ top, explained


@case(lambda: (design(30, 4, seed=6),), graphs=1)
def covariance_spectrum(X):
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / len(X)
    w = np.linalg.eigvalsh(cov)
    return w[-1] / w[0], np.trace(cov), np.sqrt(np.diag(cov))


@case(lambda: (spd(4),), graphs=1)
def eigh_named_result(S):
    result = np.linalg.eigh(S, UPLO="U")
    return result.eigenvalues.max(), result


@case(lambda: (design(10, 3, seed=7), array((3,), "float64", seed=8), spd(3, seed=9)), graphs=1)
def mahalanobis_distances(X, mu, S):
    diff = X - mu
    precision = np.linalg.inv(S)
    return np.sqrt(np.sum((diff @ precision) * diff, axis=1))


@case(lambda: (design(10, 3, seed=7), array((3,), "float64", seed=8), spd(3, seed=9)), graphs=1)
def gaussian_log_likelihood(X, mu, S):
    d = X.shape[1]
    sign, logdet = np.linalg.slogdet(S)
    diff = X - mu
    quad = np.sum(diff * np.linalg.solve(S, diff.T).T, axis=1)
    return sign, -0.5 * (quad + logdet + d * math.log(2 * math.pi))


@case(lambda: (spd(3, dtype="float32"),), graphs=1)
def log_det_float32(S):
    result = np.linalg.slogdet(S)
    return result.logabsdet, result.sign, np.linalg.det(S)


# -- Gaussian processes, Kalman filters ----------------------------------------------------------

def rbf(A, B, length=1.0):
    sq = np.sum(A ** 2, axis=1)[:, None] + np.sum(B ** 2, axis=1)[None, :] - 2 * A @ B.T
    return np.exp(-0.5 * sq / length ** 2)


@case(lambda: (array((8, 2), "float64", seed=10), array((8,), "float64", seed=11),
               array((3, 2), "float64", seed=12)), graphs=1)
def gaussian_process_posterior_mean(X, y, Xs):
    K = rbf(X, X) + 0.1 * np.eye(len(X))
    L = np.linalg.cholesky(K)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, y))
    v = np.linalg.solve(L, rbf(X, Xs))
    mean = rbf(Xs, X) @ alpha
    var = np.diag(rbf(Xs, Xs)) - np.sum(v * v, axis=0)
    return mean, var, 2 * np.sum(np.log(np.diagonal(L)))


@case(lambda: (array((4,), "float64", seed=13), spd(4, seed=14), array((2, 4), "float64", seed=15),
               0.25 * np.eye(2), array((2,), "float64", seed=16)), graphs=1)
def kalman_update(x, P, H, R, z):
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    x_new = x + K @ (z - H @ x)
    P_new = (np.eye(len(x)) - K @ H) @ P
    return x_new, P_new


@case(lambda: (spd(3, seed=17), np.linalg.cholesky(spd(3, seed=18))), graphs=1)
def cholesky_upper_and_lower(S, L0):
    U = np.linalg.cholesky(S, upper=True)
    return U, np.linalg.cholesky(L0 @ L0.T)


# -- determinants, integer and batched inputs ----------------------------------------------------

@case(lambda: (array((5, 2, 2), "float64", seed=19),), graphs=1)
def jacobian_determinants(J):
    dets = np.linalg.det(J)
    return dets, np.abs(dets).sum()


@case(lambda: (np.array([[2, 1], [1, 3]], dtype=np.int64), np.array([1, 2], dtype=np.int32)),
      graphs=1)
def integer_system(A, b):
    return np.linalg.inv(A), np.linalg.solve(A, b), np.linalg.det(A)


@case(lambda: (spd(3, seed=20) + np.zeros((2, 1, 1)),), graphs=1)
def batched_inverse(A):
    return np.linalg.inv(A) @ A


# -- QR, SVD, pseudo-inverse ----------------------------------------------------------------------

@case(lambda: (design(), array((12,), "float64", seed=2)), graphs=1)
def least_squares_by_qr(X, y):
    Q, R = np.linalg.qr(X)
    return np.linalg.solve(R, Q.T @ y), np.abs(np.diag(R))


@case(lambda: (design(), array((12,), "float64", seed=2)), graphs=1)
def least_squares_by_pinv(X, y):
    return np.linalg.pinv(X) @ y, np.linalg.pinv(X.T @ X, hermitian=True)


@case(lambda: (design(30, 4, seed=6),), graphs=1)
def pca_by_svd(X):
    Xc = X - X.mean(axis=0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    scores = U[:, :2] * S[:2]
    return scores, S ** 2 / (len(X) - 1), Vt[:2]


@case(lambda: (array((5, 3), "float32", seed=26),), graphs=1)
def condition_number_and_complete_factors(A):
    s = np.linalg.svd(A, compute_uv=False)
    result = np.linalg.svd(A)
    return s[0] / s[-1], result.U.shape, np.linalg.qr(A, mode="complete").Q, np.linalg.qr(A, "r")


@case(lambda: (design(), array((12,), "float64", seed=2)), graphs=1,
      breaks=("numpy.linalg.lstsq on a tensor has no frame op",))
def least_squares_by_lstsq(X, y):
    w, residuals, rank, s = np.linalg.lstsq(X, y, rcond=None)
    return X @ w - y, rank


# -- diagonals -----------------------------------------------------------------------------------

@case(lambda: (array((4, 4), "float64", seed=21),), graphs=1)
def diagonal_helpers(A):
    return (np.trace(A), A.trace(offset=1), np.diag(A, k=-1), A.diagonal(),
            np.diagonal(A, offset=2))


@case(lambda: (array((4,), "float32", seed=22),), graphs=1)
def diag_of_vector(v):
    return np.diag(v), np.diag(v, 1), np.diag(v, k=-2)


@case(lambda: (array((2, 3, 4), "float64", seed=23),), graphs=1)
def diagonal_of_a_stack(T):
    return np.diagonal(T, axis1=1, axis2=2), T.diagonal(0, 0, 2), np.trace(T, axis1=1, axis2=2)


@case(lambda: (np.arange(9, dtype=np.int32).reshape(3, 3),), graphs=1)
def integer_trace(A):
    return np.trace(A), A.trace(dtype=np.float32), np.diag(A)


@case(lambda: (array((3, 3), "float64", seed=24), array((3,), "float64", seed=25)), graphs=1)
def scale_rows_with_diag(A, s):
    return np.diag(s) @ A @ np.diag(1.0 / s)


@pytest.mark.parametrize("c", case.params())
def test_coverage_linalg(c):
    c.check()
