"""Differential corpus, library and course code written in NumPy (task HX,
the fifth fidelity sweep): the numerical cores of scikit-learn-style
estimators and utilities (scalers, PCA, k-means, k-NN, logistic regression,
encoders, splits, metrics, histograms), scipy.special-like functions
(logsumexp, softplus, expit, xlogy), numerically careful code (Kahan sums,
``np.nextafter``, ``np.finfo`` tolerances, ``np.errstate``, ``np.nan*``,
int32 overflow), CS231n-style assignment layers (naive and vectorised
losses, affine/conv/pool/batchnorm/dropout forward and backward with caches,
gradient checks on dicts of params), d2l-style helpers (minibatch
generators, ``Accumulator``) and "network from scratch" classes with
``forward``/``backward`` methods and a list of layers.  Each function is run
natively and jitted (``corpus.Case.check``)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from .corpus import Corpus

case = Corpus()

# breaks that should not happen and are not fixed by this sweep (strict xfails)
NUMPY_WARNINGS = ("NumPy's warnings of compiled ops are not the user's: np.nanmean of an all-NaN "
                  "slice warns from frame/ops/stats.py, natively from the user's line "
                  "(docs/capture.md, floating-point errors)")


def _rng(seed):
    return np.random.default_rng(seed)


def _blobs(n=24, d=2, k=3, seed=0, dtype=np.float64):
    rng = _rng(seed)
    centers = rng.uniform(-5, 5, (k, d))
    y = np.arange(n) % k
    X = centers[y] + rng.normal(0, 0.6, (n, d))
    return X.astype(dtype), y


# == scikit-learn-style preprocessing ==============================================================

class StandardScaler:
    def __init__(self, with_mean=True, with_std=True, ddof=0):
        self.with_mean = with_mean
        self.with_std = with_std
        self.ddof = ddof

    def fit(self, X):
        self.n_samples_seen_ = X.shape[0]
        self.mean_ = X.mean(axis=0) if self.with_mean else None
        if self.with_std:
            var = X.var(axis=0, ddof=self.ddof)
            scale = np.sqrt(var)
            scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0
            self.var_, self.scale_ = var, scale
        else:
            self.var_ = self.scale_ = None
        return self

    def transform(self, X, copy=True):
        X = X.copy() if copy else X
        if self.with_mean:
            X -= self.mean_
        if self.with_std:
            X /= self.scale_
        return X

    def inverse_transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        if self.with_std:
            X = X * self.scale_
        if self.with_mean:
            X = X + self.mean_
        return X


def _scaler_data(dtype=np.float64):
    X = _rng(1).normal(3.0, 2.0, (10, 4)).astype(dtype)
    X[:, 2] = 7.0                     # a constant feature: scale 1, not 0
    return X


@case(lambda: (_scaler_data(),), graphs=1)
def standard_scaler_fit_transform(X):
    sc = StandardScaler().fit(X)
    Z = sc.transform(X)
    return Z, sc.mean_, sc.scale_, sc.n_samples_seen_


@case(lambda: (_scaler_data(np.float32),), kwargs={"with_mean": False, "ddof": 1}, graphs=1)
def standard_scaler_options(X, with_mean=True, ddof=0):
    sc = StandardScaler(with_mean=with_mean, ddof=ddof).fit(X)
    Z = sc.transform(X)
    return Z, Z.dtype, sc.mean_, sc.var_, sc.inverse_transform(Z)


@case(lambda: (_scaler_data(),), graphs=1)
def standard_scaler_transform_in_place(X):
    sc = StandardScaler().fit(X)
    out = sc.transform(X, copy=False)
    return out is X, float(np.abs(X.mean(axis=0)).max())


def _incremental_mean_and_var(X, last_mean, last_variance, last_sample_count):
    last_sum = last_mean * last_sample_count
    new_sum = np.nansum(X, axis=0)
    new_sample_count = np.sum(~np.isnan(X), axis=0)
    updated_sample_count = last_sample_count + new_sample_count
    updated_mean = (last_sum + new_sum) / updated_sample_count
    T = new_sum / new_sample_count
    temp = X - T
    new_unnormalized_variance = np.nansum(temp ** 2, axis=0)
    correction = np.nansum(temp, axis=0)
    new_unnormalized_variance -= correction ** 2 / new_sample_count
    last_unnormalized_variance = last_variance * last_sample_count
    with np.errstate(divide="ignore", invalid="ignore"):
        last_over_new_count = last_sample_count / new_sample_count
        updated_unnormalized_variance = (
            last_unnormalized_variance + new_unnormalized_variance
            + last_over_new_count / updated_sample_count * (last_sum / last_over_new_count - new_sum) ** 2)
    zeros = last_sample_count == 0
    updated_unnormalized_variance[zeros] = new_unnormalized_variance[zeros]
    updated_variance = updated_unnormalized_variance / updated_sample_count
    return updated_mean, updated_variance, updated_sample_count


def _partial_fit_steps():
    rng = _rng(2)
    chunks = [rng.normal(1.0, 3.0, (6, 3)) for _ in range(3)]
    chunks[1][2, 1] = np.nan
    state = {"mean": np.zeros(3), "var": np.zeros(3), "n": np.zeros(3, dtype=np.int64)}
    return [(state, c) for c in chunks]


@case(steps=_partial_fit_steps)
def incremental_mean_var_partial_fit(state, chunk):
    state["mean"], state["var"], state["n"] = _incremental_mean_and_var(
        chunk, state["mean"], state["var"], state["n"])
    return state["n"].copy(), np.sqrt(state["var"])


@case(lambda: (_scaler_data(),), kwargs={"feature_range": (-1, 1)}, graphs=1)
def minmax_scaler(X, feature_range=(0, 1)):
    lo, hi = feature_range
    if lo >= hi:
        raise ValueError(f"Minimum of desired feature range must be smaller than maximum. Got {feature_range}.")
    data_min = np.nanmin(X, axis=0)
    data_max = np.nanmax(X, axis=0)
    data_range = data_max - data_min
    data_range[data_range == 0.0] = 1.0
    scale = (hi - lo) / data_range
    min_ = lo - data_min * scale
    return X * scale + min_, scale, min_


@case(lambda: (_scaler_data(),), kwargs={"feature_range": (2, 1)}, graphs=0, breaks="the function raises")
def minmax_scaler_bad_range(X, feature_range=(0, 1)):
    return minmax_scaler(X, feature_range)


@case(lambda: (_rng(3).normal(size=(6, 3)) * np.array([1.0, 100.0, 0.0]),), graphs=1)
def robust_and_maxabs_scalers(X):
    q1, med, q3 = np.percentile(X, [25, 50, 75], axis=0)
    iqr = q3 - q1
    iqr[iqr == 0] = 1
    max_abs = np.max(np.abs(X), axis=0)
    max_abs[max_abs == 0] = 1
    return (X - med) / iqr, X / max_abs


@case(lambda: (_rng(4).normal(size=(5, 3)),), kwargs={"norm": "l1"}, graphs=1)
def normalizer_rows(X, norm="l2"):
    if norm == "l1":
        norms = np.abs(X).sum(axis=1)
    elif norm == "l2":
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    elif norm == "max":
        norms = np.max(abs(X), axis=1)
    else:
        raise ValueError("'%s' is not a supported norm" % norm)
    norms[norms == 0.0] = 1.0
    return X / norms[:, np.newaxis]


@case(lambda: (np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan], [np.nan, 8.0, 9.0], [2.0, 2.0, 2.0]]),),
      graphs=2, breaks="numpy.nonzero on a tensor")
def simple_imputer_mean_and_median(X):
    mask = np.isnan(X)
    means = np.nanmean(X, axis=0)
    medians = np.nanmedian(X, axis=0)
    filled = np.where(mask, means, X)
    rows, cols = np.nonzero(mask)
    X2 = X.copy()
    X2[rows, cols] = medians[cols]
    return filled, X2, mask.sum(axis=0)


@case(lambda: (np.array([[0.5, -1.0], [2.0, 3.0]]),), kwargs={"degree": 3}, graphs=1)
def polynomial_features(X, degree=2, include_bias=True):
    n, d = X.shape
    cols = [np.ones(n)] if include_bias else []
    powers = []
    for deg in range(1, degree + 1):
        for i in range(d):
            for j in range(i, d):
                if deg == 1 and j != i:
                    continue
                if deg == 1:
                    cols.append(X[:, i])
                    powers.append((i,))
                elif deg == 2:
                    cols.append(X[:, i] * X[:, j])
                    powers.append((i, j))
    if degree >= 3:
        cols.append(np.prod(X, axis=1) ** (degree - 1))
        powers.append(tuple(range(d)) * (degree - 1))
    return np.column_stack(cols), powers


@case(lambda: (np.array(["cat", "dog", "cat", "bird", "dog", "cat"]),), graphs=0,
      breaks="dtype <U4 is not supported")
def one_hot_encoder_unique_inverse(values):
    categories, inverse = np.unique(values, return_inverse=True)
    onehot = np.zeros((values.shape[0], categories.shape[0]), dtype=np.float64)
    onehot[np.arange(values.shape[0]), inverse] = 1
    return categories, inverse, onehot


@case(lambda: (np.array([3, 1, 3, 7, 1, 1]),), graphs=1,
      breaks=("numpy.unique on a tensor", "numpy.bincount whose length depends on the values",
              "numpy.array_equal on a tensor"))
def label_encoder_fit_transform_inverse(y):
    classes = np.unique(y)
    encoded = np.searchsorted(classes, y)
    decoded = classes[encoded]
    counts = np.bincount(encoded, minlength=len(classes))
    return classes, encoded, decoded, counts, np.array_equal(decoded, y)


@case(lambda: (np.array([3, 1, 9]), np.array([1, 3, 3, 9, 4])), graphs=1,
      breaks=("numpy.setdiff1d on a tensor", "formatting Tensor", "the function raises ValueError"))
def label_encoder_unseen_label_raises(classes, y):
    classes = np.sort(classes)
    diff = np.setdiff1d(y, classes)
    if len(diff):
        raise ValueError(f"y contains previously unseen labels: {diff}")
    return np.searchsorted(classes, y)


@case(lambda: (np.array([0, 2, 1, 2]), 4), graphs=1)
def label_binarizer_eye_index(y, n_classes):
    Y = np.eye(n_classes, dtype=int)[y]
    return Y, Y.argmax(axis=1), Y.sum(axis=0)


@case(lambda: (np.array([0.1, 2.5, 3.3, 7.9, 5.0, 9.99, 0.0]),), kwargs={"n_bins": 4}, graphs=1)
def kbins_discretizer_uniform(x, n_bins=5):
    edges = np.linspace(x.min(), x.max(), n_bins + 1)
    codes = np.digitize(x, edges[1:-1])
    centers = (edges[1:] + edges[:-1]) * 0.5
    return edges, codes, centers[codes]


@case(lambda: (np.array([1.0, 2.0, 2.0, 3.0, 10.0, 11.0, 15.0, 30.0]),), kwargs={"n_bins": 3}, graphs=2,
      breaks=("numpy.unique on a tensor", "numpy.bincount whose length depends on the values"))
def kbins_discretizer_quantile(x, n_bins=3):
    edges = np.percentile(x, np.linspace(0, 100, n_bins + 1))
    edges = np.unique(edges)
    codes = np.searchsorted(edges[1:-1], x, side="right")
    return edges, codes, np.bincount(codes, minlength=len(edges) - 1)


def _scale_calls():
    X = _scaler_data()
    return [(X, 0.0, 1.0), (X, -1.0, 1.0), (X * 2, -1.0, 1.0), (X[:5], -1.0, 1.0), (X.astype(np.float32), 0, 1)]


@case(calls=_scale_calls, recompiles=3)
def minmax_scale_with_range_per_call(X, lo, hi):
    data_min, data_max = X.min(axis=0), X.max(axis=0)
    rng = np.where(data_max - data_min == 0, 1.0, data_max - data_min)
    return lo + (X - data_min) * (hi - lo) / rng


def _threshold_calls():
    X, y = _binary(n=10, seed=60)
    w = np.array([1.0, -1.0, 0.5])
    return [(X, w, 0.5), (X, w, 0.3), (X, w * 2, 0.3), (X, w, 0.7)]


@case(calls=_threshold_calls, recompiles=1)
def predict_with_threshold_per_call(X, w, threshold):
    proba = 1 / (1 + np.exp(-(X @ w)))
    return (proba >= threshold).astype(np.int64), proba.max()


# == splits, sampling ===============================================================================

@case(lambda: (np.arange(30.0).reshape(10, 3), np.arange(10) % 3), kwargs={"test_size": 0.3, "seed": 7},
      graphs=1)
def train_test_split_default_rng(X, y, test_size=0.25, seed=None):
    n = X.shape[0]
    n_test = int(math.ceil(test_size * n))
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    test, train = perm[:n_test], perm[n_test:]
    return X[train], X[test], y[train], y[test]


@case(lambda: (np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2]),), kwargs={"seed": 3})
def stratified_split_indices(y, test_frac=0.5, seed=0):
    rng = np.random.default_rng(seed)
    classes, y_idx = np.unique(y, return_inverse=True)
    train, test = [], []
    for c in range(len(classes)):
        idx = np.flatnonzero(y_idx == c)
        rng.shuffle(idx)
        k = int(round(len(idx) * test_frac))
        test.extend(idx[:k].tolist())
        train.extend(idx[k:].tolist())
    return sorted(train), sorted(test)


@case(lambda: (12, 4))
def kfold_indices(n_samples, n_splits=3):
    fold_sizes = np.full(n_splits, n_samples // n_splits, dtype=int)
    fold_sizes[: n_samples % n_splits] += 1
    indices = np.arange(n_samples)
    current = 0
    folds = []
    for fold_size in fold_sizes:
        start, stop = current, current + fold_size
        test = indices[start:stop]
        train = np.concatenate([indices[:start], indices[stop:]])
        folds.append((train, test))
        current = stop
    return folds


@case(lambda: (np.arange(20.0).reshape(10, 2),), kwargs={"n_boot": 3, "seed": 5})
def bootstrap_means(X, n_boot=5, seed=0):
    rng = np.random.default_rng(seed)
    stats = []
    for _ in range(n_boot):
        idx = rng.integers(0, len(X), size=len(X))
        stats.append(X[idx].mean(axis=0))
    return np.array(stats), np.std(stats, axis=0, ddof=1)


# == estimators ===================================================================================

def _svd_flip(u, v):
    max_abs_cols = np.argmax(np.abs(u), axis=0)
    signs = np.sign(u[max_abs_cols, range(u.shape[1])])
    u *= signs
    v *= signs[:, np.newaxis]
    return u, v


@case(lambda: (_rng(5).normal(size=(12, 4)) @ np.diag([4.0, 2.0, 1.0, 0.2]), 2), graphs=1)
def pca_svd_flip_explained_variance(X, n_components):
    mean = X.mean(axis=0)
    Xc = X - mean
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    U, Vt = _svd_flip(U, Vt)
    explained_variance = S ** 2 / (X.shape[0] - 1)
    ratio = explained_variance / explained_variance.sum()
    components = Vt[:n_components]
    Z = Xc @ components.T
    X_back = Z @ components + mean
    return Z, ratio[:n_components], np.cumsum(ratio), float(np.mean((X - X_back) ** 2))


@case(lambda: (_rng(6).normal(size=(15, 3)).astype(np.float32),), graphs=1)
def pca_whiten(X, n_components=2):
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / (len(X) - 1)
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1][:n_components]
    evals, evecs = evals[order], evecs[:, order]
    Z = Xc @ evecs / np.sqrt(evals)
    return Z, Z.dtype, np.cov(Z, rowvar=False)


def _kmeans_plus_plus(X, k, rng):
    centers = [X[rng.integers(len(X))]]
    for _ in range(1, k):
        d2 = np.min(((X[:, None, :] - np.array(centers)[None]) ** 2).sum(-1), axis=1)
        probs = d2 / d2.sum()
        centers.append(X[rng.choice(len(X), p=probs)])
    return np.array(centers)


@case(lambda: (_blobs(n=21, seed=8)[0], 3), kwargs={"seed": 1})
def kmeans_plus_plus_then_lloyd(X, k, n_iter=10, tol=1e-6, seed=0):
    rng = np.random.default_rng(seed)
    centers = _kmeans_plus_plus(X, k, rng)
    for it in range(n_iter):
        d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
        labels = np.argmin(d, axis=1)
        new = np.empty_like(centers)
        for j in range(k):
            members = X[labels == j]
            if len(members) == 0:                         # empty cluster: farthest point
                new[j] = X[np.argmax(d.min(axis=1))]
            else:
                new[j] = members.mean(axis=0)
        shift = np.sum((new - centers) ** 2)
        centers = new
        if shift <= tol:
            break
    inertia = d[np.arange(len(X)), labels].sum()
    return centers, labels, inertia, it


@case(lambda: (np.array([[0.0, 0.0], [0.2, 0.1], [0.1, 0.3], [9.0, 9.0]]),
               np.array([[0.0, 0.1], [50.0, 50.0], [9.0, 8.5]])), graphs=1,
      breaks=("numpy.bincount whose length depends on the values", "a slice whose bounds are integer tensors"))
def kmeans_empty_cluster_relocation(X, centers):
    d = np.sqrt(((X[:, None] - centers[None]) ** 2).sum(-1))
    labels = d.argmin(axis=1)
    counts = np.bincount(labels, minlength=len(centers))
    sums = np.zeros_like(centers)
    np.add.at(sums, labels, X)
    empty = counts == 0
    far = np.argsort(d[np.arange(len(X)), labels])[::-1][: empty.sum()]
    sums[empty] = X[far]
    counts[empty] = 1
    return sums / counts[:, None], labels, counts


@case(lambda: (*_blobs(n=18, seed=9), np.array([[0.0, 0.0], [3.0, -2.0], [-4.0, 4.0], [1.0, 1.0]])),
      kwargs={"k": 5}, graphs=2, breaks="numpy.apply_along_axis on a tensor")
def knn_argpartition_vote(X_train, y_train, X_test, k=3):
    d = (np.sum(X_test ** 2, axis=1)[:, None] - 2 * X_test @ X_train.T + np.sum(X_train ** 2, axis=1)[None])
    nn_idx = np.argpartition(d, k, axis=1)[:, :k]
    nn_labels = y_train[nn_idx]
    votes = np.apply_along_axis(np.bincount, 1, nn_labels, minlength=3)
    return votes.argmax(axis=1), np.sort(np.take_along_axis(d, nn_idx, axis=1), axis=1)


@case(lambda: (*_blobs(n=12, seed=10), np.array([[0.5, 0.5], [-2.0, 1.0]])), graphs=1)
def knn_regression_distance_weighted(X_train, y_train, X_test, k=4):
    d = np.linalg.norm(X_test[:, None, :] - X_train[None, :, :], axis=-1)
    idx = np.argsort(d, axis=1, kind="stable")[:, :k]
    w = 1.0 / np.maximum(np.take_along_axis(d, idx, axis=1), 1e-12)
    return (w * y_train[idx]).sum(axis=1) / w.sum(axis=1)


def _binary(n=30, d=3, seed=11, dtype=np.float64):
    rng = _rng(seed)
    X = rng.normal(size=(n, d)).astype(dtype)
    w = np.array([1.5, -2.0, 0.5][:d])
    y = (X @ w + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    return X, y


def _log_loss(y, p, eps=1e-15):
    p = np.clip(p, eps, 1 - eps)
    return -np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))


@case(lambda: _binary(), kwargs={"C": 10.0}, graphs=1)
def logistic_regression_gd_clip_log1p(X, y, lr=0.3, n_iter=25, C=1.0):
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    losses = []
    for _ in range(n_iter):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -500, 500)))
        losses.append(_log_loss(y, p) + 0.5 / (C * n) * w @ w)
        err = p - y
        w -= lr * (X.T @ err / n + w / (C * n))
        b -= lr * err.mean()
    return w, b, losses[0], losses[-1], (p > 0.5).astype(int)


@case(lambda: _binary(dtype=np.float32), graphs=1)
def logistic_regression_float32_weights(X, y, lr=np.float32(0.5), n_iter=10):
    w = np.zeros(X.shape[1], dtype=X.dtype)
    for _ in range(n_iter):
        p = 0.5 * (1 + np.tanh(0.5 * (X @ w)))
        w -= lr * X.T @ (p - y) / len(y)
    return w, w.dtype


@case(lambda: (_rng(12).normal(size=(20, 3)), _rng(13).normal(size=20)), kwargs={"alpha": 0.5}, graphs=1)
def ridge_closed_form_with_intercept(X, y, alpha=1.0, fit_intercept=True):
    if fit_intercept:
        X_offset, y_offset = X.mean(axis=0), y.mean()
        X, y = X - X_offset, y - y_offset
    A = X.T @ X + alpha * np.eye(X.shape[1])
    coef = np.linalg.solve(A, X.T @ y)
    intercept = y_offset - X_offset @ coef if fit_intercept else 0.0
    return coef, intercept


@case(lambda: (_rng(14).normal(size=(15, 2)), _rng(15).normal(size=15)), graphs=2,
      breaks="numpy.linalg.lstsq on a tensor")
def linear_regression_lstsq(X, y):
    A = np.hstack([X, np.ones((len(X), 1))])
    coef, residuals, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    y_hat = A @ coef
    ss_res = ((y - y_hat) ** 2).sum()
    ss_tot = ((y - y.mean()) ** 2).sum()
    return coef, residuals, rank, 1 - ss_res / ss_tot


@case(lambda: (_rng(16).normal(size=(20, 4)), _rng(17).normal(size=20)))
def lasso_coordinate_descent(X, y, alpha=0.1, n_iter=8):
    n, d = X.shape
    w = np.zeros(d)
    col_sq = (X ** 2).sum(axis=0)
    r = y - X @ w
    for _ in range(n_iter):
        for j in range(d):
            r += X[:, j] * w[j]
            rho = X[:, j] @ r
            w[j] = np.sign(rho) * max(abs(rho) - alpha * n, 0.0) / col_sq[j]
            r -= X[:, j] * w[j]
    return w, np.count_nonzero(w)


# (no graphs=: a break inside a list comprehension is captured differently on 3.12+, PEP 709)
@case(lambda: _blobs(n=18, seed=18))
def gaussian_nb_log_likelihood(X, y, var_smoothing=1e-9):
    classes = np.unique(y)
    eps = var_smoothing * np.var(X, axis=0).max()
    theta = np.array([X[y == c].mean(axis=0) for c in classes])
    var = np.array([X[y == c].var(axis=0) for c in classes]) + eps
    prior = np.array([np.mean(y == c) for c in classes])
    jll = []
    for i in range(len(classes)):
        n_ij = -0.5 * np.sum(np.log(2.0 * np.pi * var[i]))
        n_ij = n_ij - 0.5 * np.sum(((X - theta[i]) ** 2) / var[i], axis=1)
        jll.append(np.log(prior[i]) + n_ij)
    jll = np.array(jll).T
    log_prob_x = np.log(np.sum(np.exp(jll - jll.max(axis=1, keepdims=True)), axis=1)) + jll.max(axis=1)
    return classes[np.argmax(jll, axis=1)], np.exp(jll - log_prob_x[:, None])


@case(lambda: (np.array([[2, 0, 1], [0, 3, 0], [1, 1, 4], [0, 0, 2]]), np.array([0, 1, 1, 0])), graphs=1,
      breaks="numpy.unique on a tensor")
def multinomial_nb_fit(counts, y, alpha=1.0):
    classes = np.unique(y)
    Y = (y[:, None] == classes[None]).astype(np.float64)
    feature_count = Y.T @ counts
    class_count = Y.sum(axis=0)
    smoothed = feature_count + alpha
    feature_log_prob = np.log(smoothed) - np.log(smoothed.sum(axis=1, keepdims=True))
    class_log_prior = np.log(class_count) - np.log(class_count.sum())
    return feature_log_prob, class_log_prior, (counts @ feature_log_prob.T + class_log_prior).argmax(1)


@case(lambda: (_binary(n=16, d=2, seed=19)[0], _binary(n=16, d=2, seed=19)[1]))
def perceptron_epochs(X, y, epochs=4):
    t = np.where(y == 1, 1, -1)
    w = np.zeros(X.shape[1])
    b = 0.0
    mistakes = []
    for _ in range(epochs):
        m = 0
        for xi, ti in zip(X, t):
            if ti * (xi @ w + b) <= 0:
                w += ti * xi
                b += ti
                m += 1
        mistakes.append(m)
    return w, b, mistakes


@case(lambda: (_blobs(n=9, seed=20)[0],), graphs=2, breaks="min() over tensors compares their values")
def agglomerative_single_linkage_distances(X):
    d = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    i, j = np.unravel_index(np.argmin(d), d.shape)
    iu = np.triu_indices(len(X), k=1)
    return (min(i, j), max(i, j)), d[iu].min(), np.isinf(d).sum()


# == metrics =======================================================================================

@case(lambda: (np.array([0, 1, 2, 2, 0, 1, 1, 2]), np.array([0, 2, 2, 2, 0, 0, 1, 1])), graphs=3,
      breaks=("numpy.bincount whose length depends on the values", "numpy.array_equal on a tensor"))
def confusion_matrix_add_at(y_true, y_pred, n_classes=3):
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (y_true, y_pred), 1)
    cm2 = np.bincount(n_classes * y_true + y_pred, minlength=n_classes ** 2).reshape(n_classes, n_classes)
    with np.errstate(divide="ignore", invalid="ignore"):
        normalized = cm / cm.sum(axis=1, keepdims=True)
    return cm, np.array_equal(cm, cm2), np.nan_to_num(normalized)


@case(lambda: (np.array([0, 1, 1, 0, 1]), np.array([0, 0, 0, 0, 0])), graphs=1,
      breaks="the truth value of a tensor depends on its data")
def precision_recall_f1_zero_division(y_true, y_pred):
    tp = np.sum((y_true == 1) & (y_pred == 1))
    fp = np.sum((y_true == 0) & (y_pred == 1))
    fn = np.sum((y_true == 1) & (y_pred == 0))
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, type(tp).__name__


def _roc_curve(y, score):
    order = np.argsort(score, kind="mergesort")[::-1]
    score, y = score[order], y[order]
    distinct = np.where(np.diff(score))[0]
    thr_idx = np.r_[distinct, y.size - 1]
    tps = np.cumsum(y)[thr_idx]
    fps = 1 + thr_idx - tps
    tps = np.r_[0, tps]
    fps = np.r_[0, fps]
    return fps / fps[-1], tps / tps[-1], np.r_[np.inf, score[thr_idx]]


@case(lambda: (np.array([0, 0, 1, 1, 0, 1, 1, 0, 1]), np.array([0.1, 0.4, 0.35, 0.8, 0.4, 0.9, 0.6, 0.2, 0.6])),
      graphs=3, breaks=("NumPy's where() here is not modelled", "NumPy's where() here is not modelled"))
def roc_curve_and_auc_trapezoid(y, score):
    fpr, tpr, thr = _roc_curve(y, score)
    auc = np.trapezoid(tpr, fpr) if hasattr(np, "trapezoid") else np.trapz(tpr, fpr)
    auc2 = np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2)
    return fpr, tpr, thr, auc, auc2


@case(lambda: (np.array([1, 0, 1, 1, 0, 0, 1]), np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.3, 0.1])), graphs=1)
def average_precision_score(y, score):
    order = np.argsort(-score)
    y = y[order]
    tp = np.cumsum(y)
    precision = tp / np.arange(1, len(y) + 1)
    recall = tp / y.sum()
    return np.sum(np.diff(np.r_[0.0, recall]) * precision), precision[-1]


@case(lambda: (np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]]), np.array([0, 2, 0])),
      graphs=1)
def log_loss_and_top_k_accuracy(proba, y, k=2):
    p = np.clip(proba, 1e-15, 1 - 1e-15)
    p /= p.sum(axis=1, keepdims=True)
    ll = -np.log(p[np.arange(len(y)), y]).mean()
    topk = np.argsort(proba, axis=1)[:, ::-1][:, :k]
    return ll, np.mean(np.any(topk == y[:, None], axis=1))


@case(lambda: (np.array([3.0, -0.5, 2.0, 7.0]), np.array([2.5, 0.0, 2.0, 8.0])), graphs=1)
def regression_metrics(y_true, y_pred):
    err = y_true - y_pred
    mse = np.mean(err ** 2)
    mae = np.mean(np.abs(err))
    r2 = 1 - np.sum(err ** 2) / np.sum((y_true - np.mean(y_true)) ** 2)
    evs = 1 - np.var(err) / np.var(y_true)
    medae = np.median(np.abs(err))
    return mse, np.sqrt(mse), mae, r2, evs, medae, np.max(np.abs(err))


@case(lambda: (_blobs(n=12, seed=21)[0], _blobs(n=12, seed=21)[1]))   # (breaks per loop iteration)
def silhouette_score_vectorised(X, labels):
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    ks = np.unique(labels)
    same = labels[:, None] == labels[None]
    a = (D * same).sum(1) / np.maximum(same.sum(1) - 1, 1)
    b = np.full(len(X), np.inf)
    for k in ks:
        m = labels == k
        b = np.where(labels != k, np.minimum(b, D[:, m].mean(1)), b)
    s = (b - a) / np.maximum(a, b)
    return s, s.mean()


# == histograms, binning, searching =================================================================

@case(lambda: (_rng(22).normal(size=50),), graphs=1)
def histogram_density_and_cdf(x, bins=8):
    counts, edges = np.histogram(x, bins=bins)
    density, _ = np.histogram(x, bins=edges, density=True)
    cdf = np.cumsum(counts) / counts.sum()
    widths = np.diff(edges)
    return counts, edges, density, cdf, np.sum(density * widths)


@case(lambda: (np.array([0.5, 1.0, 1.5, 2.0, 2.0, 3.7, 4.0]),), graphs=1)
def histogram_explicit_edges_and_range(x):
    c1, e1 = np.histogram(x, bins=[0, 1, 2, 3, 4])
    c2, e2 = np.histogram(x, bins=3, range=(1, 4))
    c3, _ = np.histogram(x, bins=4, weights=np.arange(len(x), dtype=float))
    return c1, e1, c2, e2, c3, c1.dtype


@case(lambda: (np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 10.0]), np.array([0.0, 1.0, 2.0, 3.0])), graphs=1)
def digitize_right_and_left(x, bins):
    return (np.digitize(x, bins), np.digitize(x, bins, right=True),
            np.digitize(x, bins[::-1]), np.searchsorted(bins, x, side="left"),
            np.searchsorted(bins, x, side="right"))


@case(lambda: (np.array([0.1, 0.3, 0.6, 1.0]), 7))
def weighted_sampling_searchsorted(cum_weights, seed):
    rng = np.random.default_rng(seed)
    u = rng.random(10)
    idx = np.searchsorted(cum_weights, u)
    return idx, np.bincount(idx, minlength=len(cum_weights))


@case(lambda: (np.array([5, 1, 4, 1, 5, 9, 2, 6, 5, 3]),), graphs=2, breaks="numpy.unique on a tensor")
def ranks_with_ties(a):
    order = np.argsort(a, kind="stable")
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(a))
    uniq, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    dense = inv + 1
    avg = (np.cumsum(counts) - (counts - 1) / 2.0)[inv]
    return ranks, dense, avg


@case(lambda: (_rng(23).normal(size=40),), graphs=1)
def quantiles_and_iqr_outliers(x):
    q1, q3 = np.quantile(x, [0.25, 0.75])
    iqr = q3 - q1
    lo, hi = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    mask = (x < lo) | (x > hi)
    return q1, q3, np.percentile(x, 90, method="nearest"), mask.sum(), np.clip(x, lo, hi)


# == scipy.special-like functions ===================================================================

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    a_max = np.amax(a, axis=axis, keepdims=True)
    if a_max.ndim > 0:
        a_max[~np.isfinite(a_max)] = 0
    elif not np.isfinite(a_max):
        a_max = 0
    if b is not None:
        tmp = b * np.exp(a - a_max)
    else:
        tmp = np.exp(a - a_max)
    with np.errstate(divide="ignore"):
        s = np.sum(tmp, axis=axis, keepdims=keepdims)
        if return_sign:
            sgn = np.sign(s)
            s = np.abs(s)
        out = np.log(s)
    if not keepdims:
        a_max = np.squeeze(a_max, axis=axis)
    out += a_max
    if return_sign:
        return out, sgn
    return out


@case(lambda: (np.array([[1000.0, 1000.0, -np.inf], [-1.0, 2.0, 3.0]]),), graphs=1)
def logsumexp_axis_and_keepdims(a):
    return logsumexp(a, axis=1), logsumexp(a, axis=0, keepdims=True), logsumexp(a)


@case(lambda: (np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0, -1.0])), graphs=1)
def logsumexp_b_return_sign(a, b):
    return logsumexp(a, b=b, return_sign=True), logsumexp(a, b=np.abs(b))


@case(lambda: (np.array([-np.inf, -np.inf]),), graphs=1)
def logsumexp_all_neg_inf(a):
    return logsumexp(a)


@case(lambda: (np.array([-800.0, -30.0, -1.0, 0.0, 1.0, 30.0, 800.0]),), graphs=1)
def expit_softplus_stable(x):
    expit = np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))
    softplus = np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))
    log_expit = -np.logaddexp(0, -x)
    return expit, softplus, log_expit


@case(lambda: (np.array([-800.0, -1.0, 0.0, 1.0, 800.0], np.float32),), graphs=1)
def expit_naive_float32_overflow(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


@case(lambda: (np.array([0.0, 0.0, 1.0, 2.0]), np.array([0.0, 3.0, 0.0, 0.5])), graphs=1)
def xlogy_xlog1py_entr(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        xlogy = np.where(x == 0, 0.0, x * np.log(y))
        xlog1py = np.where(x == 0, 0.0, x * np.log1p(y))
    p = np.array([0.5, 0.25, 0.25, 0.0])
    entr = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0.0))
    return xlogy, xlog1py, entr


@case(lambda: (np.array([[2.0, 1.0, 0.1], [1000.0, 1000.0, 999.0]], np.float32),), graphs=1)
def softmax_log_softmax_stable(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    sm = e / e.sum(axis=-1, keepdims=True)
    lsm = z - np.log(e.sum(axis=-1, keepdims=True))
    return sm, lsm, sm.dtype


# (no graphs=: a break inside a list comprehension is captured differently on 3.12+, PEP 709)
@case(lambda: (np.array([0.5, 1.0, 3.5, 10.0]),))
def gammaln_via_lgamma_and_beta(x):
    lg = np.array([math.lgamma(v) for v in x])
    beta = np.exp(lg[:-1] + lg[1:] - np.array([math.lgamma(a + b) for a, b in zip(x[:-1], x[1:])]))
    return lg, beta


@case(lambda: (np.array([-3.0, -0.5, 0.0, 0.5, 3.0]),))
def erf_and_normal_cdf(x):
    erf = np.vectorize(math.erf)(x)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))
    return erf, cdf


# == numerically careful code =======================================================================

@case(lambda: (np.full(1000, 0.1, dtype=np.float32),), graphs=1)
def kahan_summation_loop(x):
    total = np.float32(0.0)
    c = np.float32(0.0)
    for v in x[:50]:
        y = v - c
        t = total + y
        c = (t - total) - y
        total = t
    naive = np.float32(0.0)
    for v in x[:50]:
        naive += v
    return total, naive, total.dtype


@case(lambda: ([0.1] * 10 + [1e16, 1.0, -1e16],), graphs=0)
def neumaier_sum_python_floats(values):
    total = 0.0
    comp = 0.0
    for v in values:
        t = total + v
        if abs(total) >= abs(v):
            comp += (total - t) + v
        else:
            comp += (v - t) + total
        total = t
    return total + comp, sum(values), math.fsum(values)


@case(lambda: (np.array([1.0, 0.0, -1.0, 1e300], np.float64), np.array([1.0, 1.0, -np.inf, np.inf])), graphs=1)
def nextafter_and_spacing(x, towards):
    up = np.nextafter(x, towards)
    return up, up - x, np.spacing(np.float32(1.0)), np.nextafter(np.float32(1), np.float32(2))


@case(lambda: (np.array([1.0, 1.0 + 1e-9, 1.1]), np.array([1.0, 1.0, 1.0])), graphs=1,
      breaks="numpy.allclose under capture")
def finfo_tolerances(a, b):
    eps64 = np.finfo(np.float64).eps
    eps32 = np.finfo(a.astype(np.float32).dtype).eps
    tol = 100 * eps64 * np.maximum(np.abs(a), np.abs(b))
    return (np.abs(a - b) <= tol, np.isclose(a, b), np.isclose(a, b, rtol=0, atol=eps32),
            np.allclose(a[:2], b[:2]), np.finfo(np.float32).tiny, np.finfo(np.float16).max, eps32)


@case(lambda: (np.array([1.0, 0.0, -1.0, np.nan]),), graphs=1)
def errstate_blocks_divide_invalid(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / x
        lg = np.log(x)
    safe = np.divide(1.0, x, out=np.zeros_like(x), where=x != 0)
    return inv, lg, safe, np.isfinite(inv).sum()


@case(lambda: (np.array([0.0, -1.0]),), observe=True)
def errstate_raise_caught(x):
    try:
        with np.errstate(divide="raise"):
            y = np.log(x)
    except FloatingPointError as e:
        return "raised", str(e)
    return "ok", y


@case(lambda: (np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [4.0, 5.0, 6.0]]),), observe=True)
def nan_functions_all_nan_row(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        m = np.nanmean(X, axis=1)
        mx = np.nanmax(X, axis=1)
    return (m, mx, np.nansum(X, axis=1), np.nanstd(X[[0, 2]], axis=1), np.nanargmax(X[0]),
            np.nanpercentile(X[[0, 2]], 50, axis=1), np.count_nonzero(np.isnan(X)))


@case(lambda: (np.array([1.0, np.nan, 3.0]),), observe=True, xfail=NUMPY_WARNINGS)
def nanmean_all_nan_warns(x):
    return np.nanmean(x[1:2]), np.nanmean(x)


@case(lambda: (np.array([2_000_000_000, 2_000_000_000, 5], dtype=np.int32),), graphs=1)
def int32_accumulation_overflow(a):
    total = np.sum(a)                         # sum of int32 goes to the platform int
    as32 = np.add.reduce(a, dtype=np.int32)   # wraps
    cum = np.cumsum(a, dtype=np.int32)
    prod = a[:2] * np.int32(2)                # wraps elementwise
    return total, total.dtype, as32, cum, prod, (a.astype(np.int64) * 2).sum()


@case(lambda: (np.array([200, 100, 50], dtype=np.uint8),), graphs=1)
def uint8_image_arithmetic(img):
    wrapped = img + img
    widened = img.astype(np.int16) + img
    clipped = np.clip(img.astype(np.int32) * 2, 0, 255).astype(np.uint8)
    mean = img.mean()
    return wrapped, widened, clipped, mean, type(mean).__name__


@case(lambda: (np.array([1e-20, 1.0, 1e20]),), graphs=1)
def log1p_expm1_precision(x):
    return np.log1p(x), np.log(1 + x), np.expm1(x[:1]), np.exp(x[:1]) - 1, np.hypot(x, x)


@case(lambda: (np.array([1e154, 1e154]), np.array([3.0, 4.0])), graphs=1)
def stable_norm_scaling(x, y):
    scale = np.max(np.abs(x))
    stable = scale * np.sqrt(np.sum((x / scale) ** 2))
    with np.errstate(over="ignore"):
        naive = np.sqrt(np.sum(x ** 2))
    return stable, naive, np.linalg.norm(x), np.linalg.norm(y)


@case(lambda: (np.array([1e8, 1.0, -1e8, 1e-8] * 3, np.float32),), graphs=1)
def welford_running_variance(x):
    n = 0
    mean = 0.0
    m2 = 0.0
    for v in x.astype(np.float64):
        n += 1
        delta = v - mean
        mean += delta / n
        m2 += delta * (v - mean)
    return mean, m2 / (n - 1), np.var(x.astype(np.float64), ddof=1)


@case(lambda: (np.float64(2.0),), graphs=0)
def newton_sqrt_until_tolerance(a):
    x = a
    it = 0
    while abs(x * x - a) > 4 * np.finfo(float).eps * a and it < 50:
        x = 0.5 * (x + a / x)
        it += 1
    return x, it, type(x).__name__


@case(lambda: (np.array([0.1, 0.2, 0.3]),), graphs=1)
def float_equality_pitfalls(x):
    return (x[0] + x[1] == x[2], np.isclose(x[0] + x[1], x[2]), np.round(x * 3, 10),
            np.floor(x * 10 + 0.5), np.rint(np.array([0.5, 1.5, 2.5, -0.5])))


@case(lambda: (np.array([3.0, np.nan, 1.0, np.nan]), np.array([2.0, 2.0, 5.0, 1.0])), graphs=1)
def nan_propagation_in_reductions_and_argmax(x, y):
    return (np.max(x), np.min(x), np.argmax(x), np.argmin(x), np.maximum(x, y), np.minimum(y, x),
            np.fmax(x, y), np.sign(x), np.clip(x, 1.5, 2.5), x.sum(), np.sort(x))


@case(lambda: (np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 1.0]], np.float32),), graphs=1)
def argmin_argmax_ties_first_index(d):
    return (np.argmin(d, axis=1), np.argmax(d, axis=1), np.argmax(d), d.argmin(axis=0),
            np.argsort(d, axis=1, kind="stable"))


@case(lambda: (np.array([-7, -3, 0, 3, 7], np.int32), np.array([2, -2, 3, 2, -3], np.int32)), graphs=1)
def integer_floor_division_modulo_signs(a, b):
    return a // b, a % b, np.fmod(a, b), np.divmod(a, b), a / b, -a // 2, np.remainder(a, 3)


@case(lambda: (np.array([50, 100, 0, 255], np.uint8), np.array([-128, 127, -1, 5], np.int8)), graphs=1)
def small_integer_wraparound(u, i):
    return (u - np.uint8(100), u * 2, np.abs(i), -i, i + np.int8(1), u.sum(), u.cumsum(), i.prod(),
            u.astype(np.int8))


@case(lambda: (np.array([1, 2, 3, 4], np.int64),), graphs=1)
def clip_int_array_with_float_bounds(a):
    return np.clip(a, 1.5, 3.5), np.clip(a, 2, 3), np.minimum(a, 2.5), np.round(a * 1.25), np.round(a, -1)


@case(lambda: (np.array([0.0, 1.0, 2.0, 10.0]), np.array([-1.0, 0.0, 0.5, 1.0])), graphs=2,
      breaks=("numpy.arctanh on a tensor has no frame op", "numpy.__exit__"))
def log_exp_domain_edges(x, y):
    with np.errstate(all="ignore"):
        return np.log(x), np.log1p(y), np.log2(x), np.sqrt(y), np.arctanh(y), np.power(y, 0.5), 0.0 ** y


@case(lambda: (np.array([True, False, True, True]), np.array([1, 2, 3, 4], np.int32)), graphs=1)
def bool_and_int32_reduction_dtypes(m, a):
    return (m.sum(), m.cumsum(), m.mean(), np.count_nonzero(m), (a * m).sum(), a.mean(), a.cumprod(),
            np.add.reduce(a), a.sum(dtype=np.int16), np.prod(a, dtype=np.float32))


@case(lambda: (np.float32(0.1), np.float64(0.1), 3), graphs=0, breaks="overflow encountered in scalar add")
def nep50_scalar_promotion(f32, f64, n):
    return f32 * 2.5, f32 + f64, f32 * n, np.float32(1e-45) / 2, f64 ** n, np.int32(7) // 2, np.uint8(200) + 100


@case(lambda: (np.array([2, 3], np.int64), np.array([-1, 2], np.int64)))
def integer_negative_power_raises(a, b):
    return a ** b


@case(lambda: (np.array([0.25, 1.0, 2.5, 4.0, 4.0]),), graphs=1)
def diff_prepend_ediff_gradient(x):
    return (np.diff(x, prepend=0.0), np.diff(x, n=2), np.ediff1d(x, to_begin=[-1.0]), np.gradient(x),
            np.diff(x, append=x[-1]))


@case(lambda: (np.array([[1.0, -2.0], [3.0, 4.0]]),), graphs=1)
def linalg_norm_variants(A):
    return (np.linalg.norm(A), np.linalg.norm(A, ord=1), np.linalg.norm(A, ord=np.inf),
            np.linalg.norm(A, axis=0), np.linalg.norm(A, ord=1, axis=1), np.linalg.norm(A, "fro"),
            np.linalg.norm(A[0], ord=0), np.linalg.norm(A[0], ord=-np.inf))


@case(lambda: (np.array([0.0, 0.5, 1.0, 1.0, 2.5, 3.0]),), graphs=1)
def histogram_with_range_right_edge(x):
    c, e = np.histogram(x, bins=3, range=(0.0, 3.0))
    cw, _ = np.histogram(x, bins=3, range=(0.0, 3.0), weights=np.ones_like(x) * 0.5)
    cd, _ = np.histogram(x, bins=3, range=(0.0, 3.0), density=True)
    return c, e, cw, cd, c.dtype


@case(lambda: (np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 10.0, np.nan]),), graphs=1)
def digitize_constant_bins_with_nan(x):
    bins = np.array([0.0, 1.0, 2.0, 3.0])
    return (np.digitize(x, bins), np.digitize(x, bins, right=True), np.digitize(x, bins[::-1]),
            np.digitize(x, bins[::-1], right=True), np.searchsorted(bins, x))


@case(lambda: (np.arange(10, dtype=np.int32) * 3,), graphs=1)
def percentile_and_median_int_input(a):
    return (np.percentile(a, 30), np.median(a), np.quantile(a, [0.1, 0.9]), np.percentile(a, 50, axis=0),
            np.median(a.reshape(2, 5), axis=1), np.percentile(a.astype(np.float32), 25).dtype)


# == CS231n-style assignment code ====================================================================

def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    dx = dout.dot(w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T.dot(dout)
    db = np.sum(dout, axis=0)
    return dx, dw, db


def relu_forward(x):
    out = np.maximum(0, x)
    return out, x


def relu_backward(dout, cache):
    x = cache
    dx = dout.copy()
    dx[x <= 0] = 0
    return dx


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out, relu_cache = relu_forward(a)
    return out, (fc_cache, relu_cache)


def affine_relu_backward(dout, cache):
    fc_cache, relu_cache = cache
    da = relu_backward(dout, relu_cache)
    return affine_backward(da, fc_cache)


def _affine_inputs():
    rng = _rng(30)
    return (rng.normal(size=(4, 2, 3)), rng.normal(size=(6, 5)), rng.normal(size=5), rng.normal(size=(4, 5)))


@case(_affine_inputs, graphs=1)
def affine_forward_backward_with_cache(x, w, b, dout):
    out, cache = affine_forward(x, w, b)
    dx, dw, db = affine_backward(dout, cache)
    return out, dx, dw, db, cache[0] is x


@case(_affine_inputs, graphs=1)
def affine_relu_sandwich(x, w, b, dout):
    out, cache = affine_relu_forward(x, w, b)
    dx, dw, db = affine_relu_backward(dout, cache)
    return out, dx.shape, dw, db


def softmax_loss_naive(W, X, y, reg):
    loss = 0.0
    dW = np.zeros_like(W)
    num_train = X.shape[0]
    num_classes = W.shape[1]
    for i in range(num_train):
        scores = X[i].dot(W)
        scores -= np.max(scores)
        probs = np.exp(scores) / np.sum(np.exp(scores))
        loss += -np.log(probs[y[i]])
        for j in range(num_classes):
            dW[:, j] += (probs[j] - (j == y[i])) * X[i]
    loss = loss / num_train + reg * np.sum(W * W)
    dW = dW / num_train + 2 * reg * W
    return loss, dW


def softmax_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    scores -= scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=1, keepdims=True)
    loss = -np.log(probs[np.arange(num_train), y]).sum() / num_train + reg * np.sum(W * W)
    dscores = probs
    dscores[np.arange(num_train), y] -= 1
    dW = X.T.dot(dscores) / num_train + 2 * reg * W
    return loss, dW


def _linear_clf_data(dtype=np.float64):
    rng = _rng(31)
    return (rng.normal(0, 0.01, (5, 3)).astype(dtype), rng.normal(size=(8, 5)).astype(dtype),
            rng.integers(0, 3, 8), 0.1)


@case(_linear_clf_data, graphs=1)
def softmax_loss_naive_vs_vectorized(W, X, y, reg):
    l1, g1 = softmax_loss_naive(W, X, y, reg)
    l2, g2 = softmax_loss_vectorized(W, X, y, reg)
    return l1, l2, abs(l1 - l2), np.linalg.norm(g1 - g2, ord="fro")


def svm_loss_naive(W, X, y, reg):
    dW = np.zeros(W.shape)
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    loss /= num_train
    dW /= num_train
    loss += reg * np.sum(W * W)
    dW += 2 * reg * W
    return loss, dW


def svm_loss_vectorized(W, X, y, reg):
    num_train = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(num_train), y][:, np.newaxis]
    margins = np.maximum(0, scores - correct + 1)
    margins[np.arange(num_train), y] = 0
    loss = margins.sum() / num_train + reg * np.sum(W * W)
    binary = (margins > 0).astype(X.dtype)
    binary[np.arange(num_train), y] = -binary.sum(axis=1)
    dW = X.T.dot(binary) / num_train + 2 * reg * W
    return loss, dW


@case(_linear_clf_data)
def svm_loss_naive_vs_vectorized(W, X, y, reg):
    l1, g1 = svm_loss_naive(W, X, y, reg)
    l2, g2 = svm_loss_vectorized(W, X, y, reg)
    return l1, l2, np.abs(g1 - g2).max()


@case(lambda: _linear_clf_data(np.float32), graphs=1)
def svm_loss_vectorized_float32(W, X, y, reg):
    loss, dW = svm_loss_vectorized(W, X, y, reg)
    return loss, dW, dW.dtype, type(loss).__name__


def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    out = np.zeros((N, F, H_out, W_out), dtype=x.dtype)
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    window = x_pad[n, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    cache = (x, w, b, conv_param)
    return out, cache


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, F, H_out, W_out = dout.shape
    _, _, HH, WW = w.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant")
    dx_pad = np.zeros_like(x_pad)
    dw = np.zeros_like(w)
    db = dout.sum(axis=(0, 2, 3))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    hs, ws = i * stride, j * stride
                    dw[f] += x_pad[n, :, hs:hs + HH, ws:ws + WW] * dout[n, f, i, j]
                    dx_pad[n, :, hs:hs + HH, ws:ws + WW] += w[f] * dout[n, f, i, j]
    dx = dx_pad[:, :, pad:-pad, pad:-pad] if pad else dx_pad
    return dx, dw, db


def _conv_inputs(dtype=np.float64):
    rng = _rng(32)
    return (rng.normal(size=(2, 2, 4, 4)).astype(dtype), rng.normal(size=(2, 2, 3, 3)).astype(dtype),
            rng.normal(size=2).astype(dtype), {"stride": 2, "pad": 1})


@case(_conv_inputs, graphs=1)
def conv_forward_naive_pad_four_loops(x, w, b, conv_param):
    out, cache = conv_forward_naive(x, w, b, conv_param)
    return out, cache[3] is conv_param


@case(_conv_inputs, graphs=1)
def conv_backward_naive_from_cache(x, w, b, conv_param):
    out, cache = conv_forward_naive(x, w, b, conv_param)
    dx, dw, db = conv_backward_naive(np.ones_like(out), cache)
    return dx, dw, db


def max_pool_forward_naive(x, pool_param):
    N, C, H, W = x.shape
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    H_out, W_out = 1 + (H - ph) // s, 1 + (W - pw) // s
    out = np.zeros((N, C, H_out, W_out), dtype=x.dtype)
    for i in range(H_out):
        for j in range(W_out):
            out[:, :, i, j] = np.max(x[:, :, i * s:i * s + ph, j * s:j * s + pw], axis=(2, 3))
    return out, (x, pool_param)


def max_pool_backward_naive(dout, cache):
    x, pool_param = cache
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H_out, W_out = dout.shape
    dx = np.zeros_like(x)
    for n in range(N):
        for c in range(C):
            for i in range(H_out):
                for j in range(W_out):
                    window = x[n, c, i * s:i * s + ph, j * s:j * s + pw]
                    r, q = np.unravel_index(np.argmax(window), window.shape)
                    dx[n, c, i * s + r, j * s + q] += dout[n, c, i, j]
    return dx


@case(lambda: (_rng(33).normal(size=(2, 2, 4, 4)), {"pool_height": 2, "pool_width": 2, "stride": 2}))
# (a break per store at a traced position: dx[n, c, i * s + r, j * s + q] += ...)
def max_pool_forward_backward_naive(x, pool_param):
    out, cache = max_pool_forward_naive(x, pool_param)
    dx = max_pool_backward_naive(np.arange(out.size, dtype=float).reshape(out.shape), cache)
    return out, dx


@case(lambda: (_rng(34).normal(size=(2, 3, 4, 4)),), graphs=1)
def max_pool_reshape_fast(x):
    N, C, H, W = x.shape
    xr = x.reshape(N, C, H // 2, 2, W // 2, 2)
    out = xr.max(axis=3).max(axis=4)
    mask = xr == out[:, :, :, None, :, None]
    return out, mask.sum()


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    if mode == "train":
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x, x_hat, sample_mean, sample_var, gamma, eps)
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
        cache = None
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def batchnorm_backward_alt(dout, cache):
    x, x_hat, mean, var, gamma, eps = cache
    N = x.shape[0]
    dgamma = np.sum(dout * x_hat, axis=0)
    dbeta = np.sum(dout, axis=0)
    dx_hat = dout * gamma
    dx = (1.0 / N) / np.sqrt(var + eps) * (N * dx_hat - dx_hat.sum(axis=0) - x_hat * (dx_hat * x_hat).sum(axis=0))
    return dx, dgamma, dbeta


def _bn_steps():
    rng = _rng(35)
    gamma, beta = np.ones(3), np.zeros(3)
    bn_param = {"mode": "train", "momentum": 0.8}
    xs = [rng.normal(2.0, 3.0, (6, 3)) for _ in range(3)]

    def to_test():
        bn_param["mode"] = "test"
    return [(xs[0], gamma, beta, bn_param), (xs[1], gamma, beta, bn_param), to_test,
            (xs[2], gamma, beta, bn_param)]


@case(steps=_bn_steps)
def batchnorm_bn_param_dict_mutated(x, gamma, beta, bn_param):
    out, cache = batchnorm_forward(x, gamma, beta, bn_param)
    if cache is None:
        return out, None
    dx, dgamma, dbeta = batchnorm_backward_alt(np.ones_like(out) * np.arange(3), cache)
    return out, dx, dgamma, dbeta


@case(lambda: (np.ones((2, 3)), np.ones(3), np.zeros(3), {"mode": "eval"}), graphs=0,
      breaks="the function raises")
def batchnorm_invalid_mode(x, gamma, beta, bn_param):
    return batchnorm_forward(x, gamma, beta, bn_param)


def spatial_batchnorm_forward(x, gamma, beta, bn_param):
    N, C, H, W = x.shape
    x_flat = x.transpose(0, 2, 3, 1).reshape(-1, C)
    out, cache = batchnorm_forward(x_flat, gamma, beta, bn_param)
    return out.reshape(N, H, W, C).transpose(0, 3, 1, 2), cache


@case(lambda: (_rng(36).normal(size=(2, 3, 2, 2)), np.array([1.0, 2.0, 0.5]), np.zeros(3),
               {"mode": "train", "running_mean": np.zeros(3), "running_var": np.ones(3)}), graphs=1)
def spatial_batchnorm_transpose_reshape(x, gamma, beta, bn_param):
    out, _ = spatial_batchnorm_forward(x, gamma, beta, bn_param)
    return out, out.mean(axis=(0, 2, 3)), bn_param["running_mean"]


def layernorm_forward(x, gamma, beta, ln_param):
    eps = ln_param.get("eps", 1e-5)
    mu = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    x_hat = (x - mu) / np.sqrt(var + eps)
    return gamma * x_hat + beta, (x_hat, gamma, var + eps)


def layernorm_backward(dout, cache):
    x_hat, gamma, v = cache
    D = x_hat.shape[1]
    dgamma = (dout * x_hat).sum(axis=0)
    dbeta = dout.sum(axis=0)
    dxh = dout * gamma
    dx = (D * dxh - dxh.sum(1, keepdims=True) - x_hat * (dxh * x_hat).sum(1, keepdims=True)) / (D * np.sqrt(v))
    return dx, dgamma, dbeta


@case(lambda: (_rng(37).normal(size=(3, 4)).astype(np.float32), np.ones(4, np.float32), np.zeros(4, np.float32)),
      graphs=1)
def layernorm_forward_backward(x, gamma, beta):
    out, cache = layernorm_forward(x, gamma, beta, {})
    dx, dgamma, dbeta = layernorm_backward(np.ones_like(out), cache)
    return out, dx, dgamma, dbeta


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    elif mode == "test":
        out = x
    out = out.astype(x.dtype, copy=False)
    return out, (dropout_param, mask)


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    if dropout_param["mode"] == "train":
        return dout * mask
    return dout


@case(lambda: (np.ones((4, 5), np.float32), {"p": 0.6, "mode": "train", "seed": 123}))
def dropout_mask_in_cache_legacy_seed(x, dropout_param):
    out, cache = dropout_forward(x, dropout_param)
    dx = dropout_backward(np.full_like(x, 2.0), cache)
    return out, dx, out.dtype, cache[1].dtype, cache[0] is dropout_param


@case(lambda: (np.ones((3, 3)), {"p": 0.5, "mode": "test"}), graphs=0)
def dropout_test_mode_identity(x, dropout_param):
    out, cache = dropout_forward(x, dropout_param)
    return out is x, dropout_backward(x, cache) is x


def eval_numerical_gradient(f, x, h=1e-5):
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        old = x[ix]
        x[ix] = old + h
        fxph = f(x)
        x[ix] = old - h
        fxmh = f(x)
        x[ix] = old
        grad[ix] = (fxph - fxmh) / (2 * h)
        it.iternext()
    return grad


def _rel_error(x, y):
    return np.max(np.abs(x - y) / np.maximum(1e-8, np.abs(x) + np.abs(y)))


@case(lambda: (_rng(38).normal(size=(3, 2)), _rng(39).normal(size=(2, 3)), np.array([0, 2, 1])))
def gradient_check_nditer(X, W, y):
    f = lambda w: softmax_loss_vectorized(w, X, y, 0.0)[0]   # noqa: E731
    num = eval_numerical_gradient(f, W)
    _, ana = softmax_loss_vectorized(W, X, y, 0.0)
    return _rel_error(num, ana) < 1e-6, num.shape


def _two_layer_loss(params, X, y, reg=0.05):
    h = np.maximum(0, X @ params["W1"] + params["b1"])
    scores = h @ params["W2"] + params["b2"]
    scores = scores - scores.max(axis=1, keepdims=True)
    logp = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    n = len(y)
    loss = -logp[np.arange(n), y].mean() + 0.5 * reg * sum(np.sum(params[k] ** 2) for k in ("W1", "W2"))
    d = np.exp(logp)
    d[np.arange(n), y] -= 1
    d /= n
    grads = {"W2": h.T @ d + reg * params["W2"], "b2": d.sum(0)}
    dh = d @ params["W2"].T
    dh[h <= 0] = 0
    grads["W1"] = X.T @ dh + reg * params["W1"]
    grads["b1"] = dh.sum(0)
    return loss, grads


def _two_layer_params(seed=40, d=3, h=4, c=3):
    rng = _rng(seed)
    return {"W1": 0.5 * rng.normal(size=(d, h)), "b1": 0.1 * rng.normal(size=h),
            "W2": 0.5 * rng.normal(size=(h, c)), "b2": np.zeros(c)}


@case(lambda: (_two_layer_params(), _rng(41).normal(size=(5, 3)), np.array([0, 1, 2, 1, 0])), graphs=4,
      breaks=("the truth value of a tensor depends on its data",) * 4)
def gradient_check_dict_of_params(params, X, y, h=1e-5):
    _, grads = _two_layer_loss(params, X, y)
    errors = {}
    for name in sorted(params):
        p = params[name]
        num = np.zeros_like(p)
        for ix in np.ndindex(p.shape):
            old = p[ix]
            p[ix] = old + h
            lp, _ = _two_layer_loss(params, X, y)
            p[ix] = old - h
            lm, _ = _two_layer_loss(params, X, y)
            p[ix] = old
            num[ix] = (lp - lm) / (2 * h)
        errors[name] = bool(_rel_error(num, grads[name]) < 1e-5)
    return errors


def sgd(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    w -= config["learning_rate"] * dw
    return w, config


def sgd_momentum(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    next_w = w + v
    config["velocity"] = v
    return next_w, config


def adam(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-3)
    config.setdefault("beta1", 0.9)
    config.setdefault("beta2", 0.999)
    config.setdefault("epsilon", 1e-8)
    config.setdefault("m", np.zeros_like(w))
    config.setdefault("v", np.zeros_like(w))
    config.setdefault("t", 0)
    config["t"] += 1
    config["m"] = config["beta1"] * config["m"] + (1 - config["beta1"]) * dw
    config["v"] = config["beta2"] * config["v"] + (1 - config["beta2"]) * dw ** 2
    mt = config["m"] / (1 - config["beta1"] ** config["t"])
    vt = config["v"] / (1 - config["beta2"] ** config["t"])
    next_w = w - config["learning_rate"] * mt / (np.sqrt(vt) + config["epsilon"])
    return next_w, config


def _optim_steps():
    w = np.linspace(-0.4, 0.6, 6).reshape(2, 3)
    dw = np.linspace(-0.6, 0.4, 6).reshape(2, 3)
    configs = {"sgd": {"learning_rate": 0.1}, "momentum": {"learning_rate": 0.1}, "adam": {}}
    return [(w, dw, configs)] * 3


@case(steps=_optim_steps)
def cs231n_update_rules_config_dicts(w, dw, configs):
    out = {}
    for name, rule in (("sgd", sgd), ("momentum", sgd_momentum), ("adam", adam)):
        next_w, configs[name] = rule(w.copy(), dw, configs[name])
        out[name] = next_w
    return out, configs["adam"]["t"]


class Solver:
    """A CS231n-style solver: a model with ``params`` and ``loss``, one optim
    config per parameter, history lists."""

    def __init__(self, model, data, update_rule=sgd_momentum, lr=0.05, batch_size=4, num_epochs=3, seed=0):
        self.model = model
        self.X, self.y = data
        self.update_rule = update_rule
        self.batch_size = batch_size
        self.num_epochs = num_epochs
        self.rng = np.random.default_rng(seed)
        self.optim_configs = {p: {"learning_rate": lr} for p in model.params}
        self.loss_history = []
        self.train_acc_history = []
        self.best_val_acc = 0
        self.best_params = {}

    def _step(self):
        idx = self.rng.choice(self.X.shape[0], self.batch_size)
        loss, grads = self.model.loss(self.X[idx], self.y[idx])
        self.loss_history.append(loss)
        for p, w in self.model.params.items():
            next_w, next_config = self.update_rule(w, grads[p], self.optim_configs[p])
            self.model.params[p] = next_w
            self.optim_configs[p] = next_config

    def check_accuracy(self, X, y):
        return np.mean(np.argmax(self.model.loss(X), axis=1) == y)

    def train(self):
        iterations_per_epoch = max(self.X.shape[0] // self.batch_size, 1)
        for t in range(self.num_epochs * iterations_per_epoch):
            self._step()
            if (t + 1) % iterations_per_epoch == 0:
                acc = self.check_accuracy(self.X, self.y)
                self.train_acc_history.append(acc)
                if acc > self.best_val_acc:
                    self.best_val_acc = acc
                    self.best_params = {k: v.copy() for k, v in self.model.params.items()}
        return self


class TwoLayerNet:
    def __init__(self, input_dim=2, hidden_dim=8, num_classes=3, weight_scale=0.5, reg=0.0, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {"W1": weight_scale * rng.standard_normal((input_dim, hidden_dim)),
                       "b1": np.zeros(hidden_dim),
                       "W2": weight_scale * rng.standard_normal((hidden_dim, num_classes)),
                       "b2": np.zeros(num_classes)}
        self.reg = reg

    def loss(self, X, y=None):
        h, c1 = affine_relu_forward(X, self.params["W1"], self.params["b1"])
        scores, c2 = affine_forward(h, self.params["W2"], self.params["b2"])
        if y is None:
            return scores
        shifted = scores - scores.max(axis=1, keepdims=True)
        Z = np.exp(shifted).sum(axis=1, keepdims=True)
        log_probs = shifted - np.log(Z)
        N = X.shape[0]
        loss = -np.sum(log_probs[np.arange(N), y]) / N
        dscores = np.exp(log_probs)
        dscores[np.arange(N), y] -= 1
        dscores /= N
        loss += 0.5 * self.reg * (np.sum(self.params["W1"] ** 2) + np.sum(self.params["W2"] ** 2))
        dh, dW2, db2 = affine_backward(dscores, c2)
        dx, dW1, db1 = affine_relu_backward(dh, c1)
        grads = {"W1": dW1 + self.reg * self.params["W1"], "b1": db1,
                 "W2": dW2 + self.reg * self.params["W2"], "b2": db2}
        return loss, grads


@case(lambda: (_blobs(n=12, seed=42),))
def solver_trains_two_layer_net_three_epochs(data):
    model = TwoLayerNet(reg=0.01)
    solver = Solver(model, data).train()
    return (solver.loss_history[0], solver.loss_history[-1], solver.train_acc_history,
            solver.best_val_acc, sorted(solver.best_params), solver.optim_configs["W1"]["velocity"].shape)


def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x @ Wx + prev_h @ Wh + b)
    return next_h, (x, prev_h, Wx, Wh, next_h)


def rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    da = dnext_h * (1 - next_h ** 2)
    return da @ Wx.T, da @ Wh.T, x.T @ da, prev_h.T @ da, da.sum(axis=0)


def rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    h = np.zeros((N, T, h0.shape[1]))
    caches = []
    prev = h0
    for t in range(T):
        prev, c = rnn_step_forward(x[:, t, :], prev, Wx, Wh, b)
        h[:, t, :] = prev
        caches.append(c)
    return h, caches


def rnn_backward(dh, caches):
    N, T, H = dh.shape
    x0, _, Wx, Wh, _ = caches[0]
    dx = np.zeros((N, T, x0.shape[1]))
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros(H)
    dprev = np.zeros((N, H))
    for t in reversed(range(T)):
        dxt, dprev, dWxt, dWht, dbt = rnn_step_backward(dh[:, t, :] + dprev, caches[t])
        dx[:, t, :] = dxt
        dWx += dWxt
        dWh += dWht
        db += dbt
    return dx, dprev, dWx, dWh, db


@case(lambda: (_rng(43).normal(size=(2, 3, 4)), np.zeros((2, 5)), 0.3 * _rng(44).normal(size=(4, 5)),
               0.3 * _rng(45).normal(size=(5, 5)), np.zeros(5)), graphs=1)
def rnn_forward_backward_list_of_caches(x, h0, Wx, Wh, b):
    h, caches = rnn_forward(x, h0, Wx, Wh, b)
    grads = rnn_backward(np.ones_like(h), caches)
    return h, len(caches), grads


def word_embedding_forward(x, W):
    return W[x], (x, W)


def word_embedding_backward(dout, cache):
    x, W = cache
    dW = np.zeros_like(W)
    np.add.at(dW, x, dout)
    return dW


@case(lambda: (np.array([[0, 3, 1], [3, 3, 2]]), np.arange(12.0).reshape(4, 3)), graphs=1)
def word_embedding_add_at_backward(x, W):
    out, cache = word_embedding_forward(x, W)
    return out, word_embedding_backward(np.ones_like(out), cache)


def temporal_softmax_loss(x, y, mask):
    N, T, V = x.shape
    x_flat, y_flat, mask_flat = x.reshape(N * T, V), y.reshape(N * T), mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    return loss, dx_flat.reshape(N, T, V)


@case(lambda: (_rng(46).normal(size=(2, 3, 4)), np.array([[1, 2, 0], [3, 0, 0]]),
               np.array([[True, True, False], [True, False, False]])), graphs=1)
def temporal_softmax_loss_masked(x, y, mask):
    return temporal_softmax_loss(x, y, mask)


# -- aliasing and in-place updates in course code ----------------------------------------------------

def _inplace_bn_steps():
    running = np.zeros(3)
    bn_param = {"mode": "train", "running_mean": running, "running_var": np.ones(3), "momentum": 0.5}
    xs = [np.arange(6.0).reshape(2, 3) + k for k in range(3)]
    return [(x, bn_param, running) for x in xs]


@case(steps=_inplace_bn_steps)
def running_stats_updated_in_place_alias(x, bn_param, running):
    m = bn_param["momentum"]
    bn_param["running_mean"] *= m                          # the caller's array, in place
    bn_param["running_mean"] += (1 - m) * x.mean(axis=0)
    bn_param["running_var"] = m * bn_param["running_var"] + (1 - m) * x.var(axis=0)
    return running is bn_param["running_mean"], running.copy(), bn_param["running_var"]


def _cache_alias_steps():
    x = np.arange(6.0).reshape(2, 3)
    w = np.ones((3, 2))
    state = {}

    def mutate_x():
        x[0, 0] = 100.0
    return [(x, w, state, "forward"), mutate_x, (x, w, state, "backward"), (x, w, state, "forward")]


@case(steps=_cache_alias_steps)
def cache_holds_the_input_not_a_copy(x, w, state, phase):
    if phase == "forward":
        out, state["cache"] = affine_forward(x, w, np.zeros(2))
        return out
    dx, dw, db = affine_backward(np.ones((2, 2)), state["cache"])
    return dw                                              # sees x as mutated after forward


@case(lambda: (np.zeros(5), np.array([0, 1, 1, 3, 1]), np.array([1.0, 2.0, 3.0, 4.0, 5.0])), graphs=1,
      breaks="numpy.bincount whose length depends on the values")
def add_at_repeated_indices_vs_fancy_iadd(acc, idx, vals):
    a = acc.copy()
    np.add.at(a, idx, vals)
    b = acc.copy()
    b[idx] += vals                                         # the last write wins per index
    c = np.bincount(idx, weights=vals, minlength=5)
    return a, b, c


@case(lambda: (np.arange(12.0).reshape(3, 4),), graphs=0,
      breaks=("an in-place update through a view", "tensor attribute .base"))
def view_of_param_mutated_through_reshape(W):
    flat = W.reshape(-1)
    flat[::5] = -1.0                                       # writes W through the view
    col = W[:, 1]
    col *= 10                                              # and through a column view
    return W, flat.base is W, np.shares_memory(col, W)


@case(lambda: (np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]),), graphs=1)
def relu_backward_mask_store_and_clip_out(x):
    dx = np.ones_like(x)
    dx[x <= 0] = 0
    g = x.copy()
    np.clip(g, -3.0, 3.0, out=g)
    h = np.empty_like(x)
    np.multiply(x, 2, out=h)
    np.maximum(h, 0, out=h)
    return dx, g, h


def _grad_check_inplace_steps():
    w = np.array([0.5, -1.0, 2.0])
    return [(w,), (w,)]


@case(steps=_grad_check_inplace_steps)
def numeric_gradient_restores_entries(w, h=1e-4):
    def f(v):
        return np.sum(v ** 3) + v[0] * v[1]
    grad = np.zeros_like(w)
    for i in range(w.size):
        old = w[i]
        w[i] = old + h
        fp = f(w)
        w[i] = old - h
        fm = f(w)
        w[i] = old
        grad[i] = (fp - fm) / (2 * h)
    return grad, w


@case(lambda: ({"W": np.ones((2, 2)), "b": np.zeros(2)}, {"W": np.full((2, 2), 0.5), "b": np.ones(2)}),
      graphs=1)
def sgd_dict_update_in_place_and_rebound(params, grads, lr=0.1):
    before = params["W"]
    for k in params:
        if k == "W":
            params[k] -= lr * grads[k]                     # in place: `before` changes too
        else:
            params[k] = params[k] - lr * grads[k]          # rebound: a new array
    return before is params["W"], before, params


@case(lambda: (np.array([3, 1, 2, 3, 3, 1]),), graphs=1)
def argsort_descending_ties_and_top_k(scores):
    desc = np.argsort(-scores, kind="stable")
    rev = np.argsort(scores, kind="stable")[::-1]
    top = np.argpartition(-scores, 2)[:2]
    return desc, rev, np.sort(scores[top]), np.flip(np.sort(scores))


@case(lambda: (np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]], np.float32),), graphs=1)
def predict_proba_argmax_and_threshold_ties(p):
    return p.argmax(axis=1), (p[:, 1] >= 0.5).astype(np.int8), np.round(p * 10).astype(int), p.max(axis=1).dtype


@case(lambda: (np.arange(1, 7, dtype=np.int32).reshape(2, 3),), graphs=1)
def integer_matmul_and_mean_dtypes(a):
    return a @ a.T, a.dot(a.T).dtype, a.mean(axis=0), (a / 2).dtype, (a // 2).dtype, np.true_divide(a, a.sum())


# == d2l-style code ===================================================================================

def data_iter(batch_size, features, labels, rng):
    num_examples = len(features)
    indices = list(range(num_examples))
    rng.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = np.array(indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


def synthetic_data(w, b, num_examples, rng):
    X = rng.normal(0, 1, (num_examples, len(w)))
    y = X @ w + b
    y += rng.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


class Accumulator:
    """For accumulating sums over ``n`` variables."""

    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def reset(self):
        self.data = [0.0] * len(self.data)

    def __getitem__(self, idx):
        return self.data[idx]


@case(lambda: (np.array([2.0, -3.4]), 4.2), kwargs={"num_epochs": 3})
def d2l_linear_regression_from_scratch(true_w, true_b, lr=0.03, num_epochs=3, batch_size=10):
    rng = np.random.default_rng(0)
    features, labels = synthetic_data(true_w, true_b, 50, rng)
    w = rng.normal(0, 0.01, (2, 1))
    b = np.zeros(1)
    history = []
    for epoch in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels, rng):
            y_hat = X @ w + b
            err = y_hat - y.reshape(y_hat.shape)
            w -= lr * X.T @ err / batch_size
            b -= lr * err.sum(axis=0) / batch_size
        train_l = 0.5 * (features @ w + b - labels) ** 2
        history.append(float(train_l.mean()))
    return w.ravel(), b, history


def d2l_softmax(X):
    X_exp = np.exp(X)
    partition = X_exp.sum(1, keepdims=True)
    return X_exp / partition


def d2l_cross_entropy(y_hat, y):
    return -np.log(y_hat[range(len(y_hat)), y])


def d2l_accuracy(y_hat, y):
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.astype(y.dtype) == y
    return float(cmp.astype(y.dtype).sum())


@case(lambda: (*_blobs(n=20, k=3, seed=47),))
def d2l_softmax_regression_with_accumulator(features, labels, num_epochs=3, lr=0.1, batch_size=5):
    W = np.zeros((2, 3))
    b = np.zeros(3)
    rng = np.random.default_rng(1)
    epochs = []
    for epoch in range(num_epochs):
        metric = Accumulator(3)
        for X, y in data_iter(batch_size, features, labels, rng):
            y_hat = d2l_softmax(X @ W + b)
            l = d2l_cross_entropy(y_hat, y)
            grad = y_hat.copy()
            grad[np.arange(len(y)), y] -= 1
            W -= lr * X.T @ grad / len(y)
            b -= lr * grad.mean(axis=0)
            metric.add(float(l.sum()), d2l_accuracy(y_hat, y), y.size)
        epochs.append((metric[0] / metric[2], metric[1] / metric[2]))
    return W, b, epochs


@case(lambda: (np.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]]), np.array([0, 2])), graphs=2,
      breaks="float() of a tensor reads its value")
def d2l_cross_entropy_range_index(y_hat, y):
    return d2l_cross_entropy(y_hat, y), d2l_accuracy(y_hat, y) / len(y)


@case(lambda: (np.arange(10),), graphs=1)
def d2l_seq_data_iter_sequential(corpus, batch_size=2, num_steps=2):
    offset = 1
    num_tokens = ((len(corpus) - offset - 1) // batch_size) * batch_size
    Xs = np.array(corpus[offset: offset + num_tokens])
    Ys = np.array(corpus[offset + 1: offset + 1 + num_tokens])
    Xs, Ys = Xs.reshape(batch_size, -1), Ys.reshape(batch_size, -1)
    num_batches = Xs.shape[1] // num_steps
    out = []
    for i in range(0, num_steps * num_batches, num_steps):
        out.append((Xs[:, i: i + num_steps], Ys[:, i: i + num_steps]))
    return out


@case(lambda: (np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])), graphs=1)
def d2l_corr2d_loops(X, K):
    h, w = K.shape
    Y = np.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
    return Y


@case(lambda: (np.arange(16.0).reshape(4, 4),), kwargs={"mode": "avg"}, graphs=1)
def d2l_pool2d_loops(X, pool_size=(2, 2), mode="max"):
    p_h, p_w = pool_size
    Y = np.zeros((X.shape[0] - p_h + 1, X.shape[1] - p_w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            if mode == "max":
                Y[i, j] = X[i: i + p_h, j: j + p_w].max()
            elif mode == "avg":
                Y[i, j] = X[i: i + p_h, j: j + p_w].mean()
    return Y


@case(lambda: (np.array([[1, 2, 0, 0], [3, 0, 0, 0]]), np.array([2, 1])), graphs=1)
def d2l_sequence_mask_and_masked_softmax(X, valid_len, value=-1e6):
    maxlen = X.shape[1]
    mask = np.arange(maxlen, dtype=np.float32)[None, :] < valid_len[:, None]
    Xm = np.where(mask, X.astype(np.float32), np.float32(value))
    e = np.exp(Xm - Xm.max(axis=-1, keepdims=True))
    return mask, e / e.sum(axis=-1, keepdims=True)


@case(lambda: (np.linspace(0, 6, 13),), graphs=1)
def d2l_gradient_descent_trace(xs, eta=0.2, steps=10):
    f_grad = lambda x: 2 * x                 # noqa: E731
    x = 10.0
    results = [x]
    for _ in range(steps):
        x -= eta * f_grad(x)
        results.append(float(x))
    return results, np.interp(xs, np.arange(len(results)), results)


# == "neural network from scratch" classes ============================================================

class Layer:
    def __init__(self):
        self.params = {}
        self.grads = {}

    def forward(self, x):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError


class Dense(Layer):
    def __init__(self, n_in, n_out, rng):
        super().__init__()
        limit = np.sqrt(6 / (n_in + n_out))
        self.params["W"] = rng.uniform(-limit, limit, (n_in, n_out))
        self.params["b"] = np.zeros(n_out)

    def forward(self, x):
        self.x = x
        return x @ self.params["W"] + self.params["b"]

    def backward(self, grad):
        self.grads["W"] = self.x.T @ grad
        self.grads["b"] = grad.sum(axis=0)
        return grad @ self.params["W"].T


class ReLU(Layer):
    def forward(self, x):
        self.mask = x > 0
        return x * self.mask

    def backward(self, grad):
        return grad * self.mask


class Sigmoid(Layer):
    def forward(self, x):
        self.out = 1 / (1 + np.exp(-x))
        return self.out

    def backward(self, grad):
        return grad * self.out * (1 - self.out)


class Tanh(Layer):
    def forward(self, x):
        self.out = np.tanh(x)
        return self.out

    def backward(self, grad):
        return grad * (1 - self.out ** 2)


class SoftmaxCrossEntropy:
    def forward(self, logits, y):
        shifted = logits - logits.max(axis=1, keepdims=True)
        self.probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        self.y = y
        return -np.mean(np.log(self.probs[np.arange(len(y)), y] + 1e-12))

    def backward(self):
        g = self.probs.copy()
        g[np.arange(len(self.y)), self.y] -= 1
        return g / len(self.y)


class MSELoss:
    def forward(self, pred, target):
        self.diff = pred - target
        return np.mean(self.diff ** 2)

    def backward(self):
        return 2 * self.diff / self.diff.size


class Network:
    def __init__(self, layers, loss):
        self.layers = layers
        self.loss_fn = loss

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, grad):
        for layer in reversed(self.layers):
            grad = layer.backward(grad)
        return grad

    def parameters(self):
        for i, layer in enumerate(self.layers):
            for name in layer.params:
                yield f"{i}.{name}", layer.params, layer.grads, name

    def sgd_step(self, lr):
        for _, params, grads, name in self.parameters():
            params[name] -= lr * grads[name]


def _xor_net(seed=0, act=Tanh):
    rng = np.random.default_rng(seed)
    return Network([Dense(2, 6, rng), act(), Dense(6, 1, rng), Sigmoid()], MSELoss())


_XOR_X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
_XOR_Y = np.array([[0.0], [1.0], [1.0], [0.0]])


@case(lambda: (_xor_net(), _XOR_X, _XOR_Y), kwargs={"epochs": 5}, graphs=1)
def from_scratch_xor_training_loop(net, X, Y, epochs=4, lr=0.5):
    losses = []
    for _ in range(epochs):
        out = net.forward(X)
        losses.append(net.loss_fn.forward(out, Y))
        net.backward(net.loss_fn.backward())
        net.sgd_step(lr)
    return losses, [name for name, *_ in net.parameters()]


def _net_steps():
    rng = np.random.default_rng(3)
    net = Network([Dense(2, 5, rng), ReLU(), Dense(5, 3, rng)], SoftmaxCrossEntropy())
    X, y = _blobs(n=12, seed=48)
    batches = [(net, X[i:i + 4], y[i:i + 4]) for i in range(0, 12, 4)]
    return batches + batches[:1]


@case(steps=_net_steps)
def from_scratch_classifier_step_per_batch(net, X, y, lr=0.2):
    logits = net.forward(X)
    loss = net.loss_fn.forward(logits, y)
    net.backward(net.loss_fn.backward())
    net.sgd_step(lr)
    return loss, (logits.argmax(axis=1) == y).mean()


@case(lambda: (_xor_net(seed=1, act=ReLU), _XOR_X[:1]), graphs=1)
def from_scratch_layer_attributes_stored(net, x):
    out = net.forward(x)
    dx = net.backward(np.ones_like(out))
    return out, dx, net.layers[0].x is x, net.layers[1].mask.dtype, sorted(net.layers[2].grads)


@case(lambda: (_rng(49).normal(size=(3, 2)),), graphs=0, breaks="the function raises")
def from_scratch_abstract_layer_raises(x):
    return Layer().forward(x)


def _gradient_check_net(net, X, Y, eps=1e-6):
    out = net.forward(X)
    net.loss_fn.forward(out, Y)
    net.backward(net.loss_fn.backward())
    worst = 0.0
    for key, params, grads, name in net.parameters():
        p = params[name]
        for ix in list(np.ndindex(p.shape))[:3]:
            old = p[ix]
            p[ix] = old + eps
            lp = net.loss_fn.forward(net.forward(X), Y)
            p[ix] = old - eps
            lm = net.loss_fn.forward(net.forward(X), Y)
            p[ix] = old
            num = (lp - lm) / (2 * eps)
            worst = max(worst, abs(num - grads[name][ix]) / max(1e-8, abs(num) + abs(grads[name][ix])))
    return worst


@case(lambda: (_xor_net(seed=2), _XOR_X, _XOR_Y), graphs=0,
      breaks=("max() over tensors compares their values",) * 2)
def from_scratch_gradient_check_network(net, X, Y):
    return _gradient_check_net(net, X, Y) < 1e-5


class MomentumOptimizer:
    def __init__(self, params_and_grads, lr=0.1, beta=0.9):
        self.items = params_and_grads
        self.lr = lr
        self.beta = beta
        self.velocity = {key: np.zeros_like(params[name]) for key, params, _, name in params_and_grads}

    def step(self):
        for key, params, grads, name in self.items:
            v = self.velocity[key]
            v *= self.beta
            v += grads[name]
            params[name] -= self.lr * v


@case(lambda: (_XOR_X, _XOR_Y))
def from_scratch_momentum_optimizer_epochs(X, Y, epochs=4):
    net = _xor_net(seed=4)
    opt = MomentumOptimizer(list(net.parameters()))
    history = []
    for epoch in range(epochs):
        out = net.forward(X)
        history.append(round(float(net.loss_fn.forward(out, Y)), 12))
        net.backward(net.loss_fn.backward())
        opt.step()
    return history, {k: v.copy() for k, v in opt.velocity.items()}


@case(lambda: (_rng(50).normal(size=(4, 3)).astype(np.float32),), graphs=1)
def from_scratch_activation_table(x):
    acts = {"relu": lambda v: np.maximum(v, 0), "leaky": lambda v: np.where(v > 0, v, 0.01 * v),
            "elu": lambda v: np.where(v > 0, v, np.expm1(v)), "gelu": lambda v: 0.5 * v * (
                1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))),
            "swish": lambda v: v / (1 + np.exp(-v))}
    return {name: fn(x) for name, fn in acts.items()}


@case(lambda: ((3, 4, 2), 0))
def from_scratch_weight_init_schemes(sizes, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for scheme in ("xavier", "he", "lecun"):
        Ws = []
        for n_in, n_out in zip(sizes[:-1], sizes[1:]):
            if scheme == "xavier":
                std = np.sqrt(2.0 / (n_in + n_out))
            elif scheme == "he":
                std = np.sqrt(2.0 / n_in)
            else:
                std = np.sqrt(1.0 / n_in)
            Ws.append(rng.normal(0, std, (n_in, n_out)))
        out[scheme] = [w.shape for w in Ws], float(np.std(np.concatenate([w.ravel() for w in Ws])))
    return out


@pytest.mark.parametrize("c", case.params())
def test_corpus_library(c):
    c.check()
