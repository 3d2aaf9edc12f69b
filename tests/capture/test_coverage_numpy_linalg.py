"""Coverage corpus, NumPy model code with products, truth tests and array
building: linear and logistic regression written with ``np.dot``, similarity
matrices with ``np.inner``/``np.outer``, attention masks from ``np.triu``/
``np.tril``, finite differences (``np.diff``), circular shifts (``np.roll``),
upsampling with ``np.repeat``/``np.tile``, grids from ``np.meshgrid``, feature
stacking (``np.hstack``/``np.vstack``/``np.column_stack``), convergence checks
with ``np.isclose``/``np.any``/``np.all``, rounding for display, weighted
averages and ``*_like`` buffers -- the way NumPy tutorials and numpy-only
libraries write them.  Each function runs natively and jitted and must be one
graph with no break, except where the break is inherent (a Python bool of the
values steering Python control flow) or frame has no op yet (asserted with
its reason).
"""
from __future__ import annotations

import numpy as np
import pytest

from .corpus import Corpus
from .helpers import array

case = Corpus()


# -- regression, classification -----------------------------------------------------------------------

@case(lambda: (array((8, 3), "float64"), array((3,), "float64", seed=1),
               array((8,), "float64", seed=2)), graphs=1)
def linear_regression_gradient_step(X, w, y):
    pred = np.dot(X, w)
    grad = np.dot(X.T, pred - y) / len(y)
    return w - 0.1 * grad


@case(lambda: (array((6, 4)), array((4,), seed=1)), graphs=1)
def logistic_regression_predict(X, w):
    z = X.dot(w)
    p = 1.0 / (1.0 + np.exp(-z))
    return (p > 0.5).astype(np.int64), p


@case(lambda: (array((5, 3), "float64"),), graphs=1)
def normal_equations_lhs(X):
    Xb = np.hstack([np.ones((X.shape[0], 1)), X])
    return np.dot(Xb.T, Xb)


@case(lambda: (array((4, 3)), array((5, 3), seed=1)), graphs=1)
def cosine_similarity_matrix(A, B):
    num = np.inner(A, B)
    norms = np.outer(np.sqrt(np.sum(A * A, axis=1)), np.sqrt(np.sum(B * B, axis=1)))
    return num / norms


@case(lambda: (array((3, 4, 5)), array((5, 2), seed=1)), graphs=1)
def batched_projection_tensordot(x, W):
    return np.tensordot(x, W, axes=([2], [0]))


@case(lambda: (array((6,)),), graphs=1)
def outer_product_covariance(v):
    c = v - v.mean()
    return np.outer(c, c) / (len(v) - 1)


# -- attention masks, sequences -----------------------------------------------------------------------

@case(lambda: (array((4, 4)),), graphs=1)
def causal_attention_mask(scores):
    mask = np.triu(np.ones_like(scores), k=1)
    masked = np.where(mask > 0, -1e9, scores)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@case(lambda: (array((2, 3, 3)),), graphs=1)
def lower_triangular_batch(x):
    return np.tril(x), np.triu(x, -1).sum(axis=(1, 2))


@case(lambda: (array((10,), "float64"),), graphs=1)
def finite_difference_derivative(y):
    dx = 0.1
    dy = np.diff(y) / dx
    d2y = np.diff(y, n=2) / dx ** 2
    return dy, d2y


@case(lambda: (array((3, 6)),), graphs=1)
def returns_from_prices(prices):
    return np.diff(prices, axis=1, prepend=prices[:, :1]) / prices


@case(lambda: (array((8,)),), graphs=1)
def circular_convolution_by_rolls(x):
    kernel = (0.25, 0.5, 0.25)
    return sum(k * np.roll(x, s) for k, s in zip(kernel, (-1, 0, 1)))


@case(lambda: (array((4, 4)),), graphs=1)
def game_of_life_neighbour_count(board):
    b = (board > 0).astype(np.int64)
    n = np.zeros_like(b)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy or dx:
                n = n + np.roll(np.roll(b, dy, axis=0), dx, axis=1)
    return n


# -- building arrays ----------------------------------------------------------------------------------

@case(lambda: (array((2, 3)),), graphs=1)
def nearest_neighbour_upsample(img):
    return np.repeat(np.repeat(img, 2, axis=0), 2, axis=1)


@case(lambda: (array((2, 2)),), graphs=1)
def tile_a_pattern(p):
    return np.tile(p, (2, 3))


@case(lambda: (array((4,)), array((3,), seed=1)), graphs=1)
def grid_evaluation_with_meshgrid(xs, ys):
    X, Y = np.meshgrid(xs, ys)
    return np.sin(X) * np.cos(Y)


@case(lambda: (array((5,)), array((5,), seed=1)), graphs=1)
def polynomial_features(x, y):
    return np.column_stack([x, y, x * y, np.square(x), np.square(y)])


@case(lambda: (array((3, 2)), array((2, 2), seed=1)), graphs=1)
def stack_batches(a, b):
    both = np.vstack((a, b))
    return both, np.dstack([both, both]).shape


@case(lambda: (array((2, 3, 4)),), graphs=1)
def channels_last_to_first(img):
    return np.moveaxis(img, -1, 0) * 1.0, np.swapaxes(img, 0, 1).sum(axis=0)


@case(lambda: (array((3, 4)),), graphs=1)
def buffers_like(x):
    acc = np.zeros_like(x)
    ones = np.ones_like(x, dtype=np.float64)
    fill = np.full_like(x, 0.5)
    return acc + x, ones * 2, fill - x


# -- checks, statistics, rounding -------------------------------------------------------------------

@case(lambda: (array((4, 3)),), graphs=1)
def any_all_checks(x):
    return np.any(x > 2.5, axis=0), np.all(np.abs(x) < 3.0), (x < 0).any(axis=1)


@case(lambda: (array((4, 3)),), graphs=1)
def count_positive_per_row(x):
    return np.count_nonzero(x > 0, axis=1)


@case(lambda: (array((5,)), array((5,), seed=1)), graphs=1)
def elementwise_tolerance_check(a, b):
    return np.isclose(a, a + 1e-7), np.isclose(a, b, atol=0.5)


@case(lambda: (array((4, 3), "float64"),), graphs=1)
def round_for_display(x):
    return np.round(x, 2), np.around(x * 100), x.round(1)


@case(lambda: (array((4, 3)),), graphs=1)
def value_range_and_weighted_mean(x):
    return np.ptp(x, axis=0), np.average(x, axis=1, weights=[0.2, 0.3, 0.5])


@case(lambda: (array((4, 3)),), graphs=1)
def mean_in_float32_of_ints(x):
    counts = (x > 0).astype(np.int64)
    return np.mean(counts, dtype=np.float32), np.sum(counts, axis=0, dtype=np.int32)


@case(lambda: (array((6,), "float64"),), graphs=1)
def log_returns_and_compounding(r):
    small = r * 1e-4
    return np.log1p(small).sum(), np.expm1(np.cumsum(np.log1p(small)))


# -- breaks -------------------------------------------------------------------------------------------

@case(lambda: (array((4,)), array((4,), seed=1)), graphs=1, breaks="numpy.allclose")
def converged_check_allclose(w_old, w_new):
    # the Python bool steers the caller's control flow: the values decide it
    done = np.allclose(w_old, w_new, atol=1e-3)
    return w_new * 2, done


@case(lambda: (array((4, 3)),), graphs=1)
def softplus_with_log1p(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


@pytest.mark.parametrize("c", case.params())
def test_coverage_numpy_linalg(c):
    c.check()
