"""Focused differential tests of the fifth fidelity sweep (task HX,
``test_corpus_library.py``: library and course code in NumPy): what the sweep
found, one test per fix."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


def _no_break(fn, *args, graphs=1):
    """``frame.explain``: the call is ``graphs`` graphs and no break."""
    out = frame.explain(fn)(*args)
    assert [r.reason for r in out.break_reasons] == []
    assert out.graph_count == graphs


# -- a range object as an index array (d2l's cross_entropy, scikit-learn's svd_flip) -------------

def test_range_as_an_index_array():
    def cross_entropy(y_hat, y):
        return -np.log(y_hat[range(len(y_hat)), y])

    y_hat = np.array([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5], [0.2, 0.2, 0.6]])
    y = np.array([0, 2, 1])
    assert_same_as_eager(cross_entropy, y_hat, y)
    _no_break(cross_entropy, y_hat, y)


def test_range_index_alone_and_with_a_slice_and_in_a_store():
    def f(u):
        cols = np.argmax(np.abs(u), axis=0)
        signs = np.sign(u[cols, range(u.shape[1])])
        v = u[range(1, 3)] * 2
        w = u[:, range(2)]
        u[range(0, 3, 2)] = 0.0
        return signs, v, w, u[range(0)]

    assert_same_as_eager(f, np.arange(12.0).reshape(4, 3) - 5)
    _no_break(f, np.arange(12.0).reshape(4, 3) - 5)


# -- np.unravel_index of traced indices ------------------------------------------------------------

def test_unravel_index_of_an_argmax_in_a_pooling_backward():
    def f(x):
        r, q = np.unravel_index(np.argmax(x), x.shape)
        rows, cols = np.unravel_index(np.argsort(x, axis=None)[:3], x.shape, order="F")
        (flat,) = np.unravel_index(np.argmin(x), (x.size,))
        return r, q, rows, cols, flat

    x = np.random.default_rng(0).normal(size=(3, 4))
    assert_same_as_eager(f, x)
    _no_break(f, x)


@pytest.mark.parametrize("indices", [np.array([1, 8]), np.array([[0, 4]], np.uint8), np.int32(5)],
                         ids=["int64", "uint8-2d", "scalar"])
def test_unravel_index_dtypes_and_kinds(indices):
    def f(i):
        return np.unravel_index(i, (3, 3)), np.unravel_index(i, (3, 3), order="F")
    assert_same_as_eager(f, indices)


@pytest.mark.parametrize("indices", [np.array([1, 9]), np.array([-1, 2]), np.array([1.0])],
                         ids=["past-the-end", "negative", "float"])
def test_unravel_index_errors_are_numpys(indices):
    # out of range raises NumPy's ValueError (the graph's checked take fails at
    # run time, the call runs natively); float indices raise NumPy's TypeError
    def f(i):
        return np.unravel_index(i, (3, 3))
    assert_same_as_eager(f, indices, captured=None)


# -- index constructors of ints at trace time -------------------------------------------------------

def test_triu_tril_diag_indices_of_ints():
    def f(d):
        iu = np.triu_indices(d.shape[0], k=1)
        return (d[iu], d[np.diag_indices(3)], np.tril_indices(3, -1, 4), np.indices((2, 3)),
                np.ravel_multi_index(([0, 1], [2, 0]), (3, 3)))

    d = np.arange(9.0).reshape(3, 3)
    assert_same_as_eager(f, d)
    _no_break(f, d)


# -- np.r_[...] ----------------------------------------------------------------------------------------

def test_r_concatenation_of_traced_pieces():
    # scikit-learn's roc_curve: np.r_[0, tps], np.r_[distinct, y.size - 1]
    def f(a, i, s):
        return (np.r_[0, a], np.r_[a, a.size - 1], np.r_[np.inf, a[::-1]], np.r_[i, 3],
                np.r_[i, 2.5], np.r_[a], np.r_[s, i], np.r_[[1, 2], i], np.r_[np.float32(1), i],
                np.r_[a.reshape(1, 3), a.reshape(1, 3)])

    args = (np.arange(3.0), np.array([4, 5], np.int32), np.float32(2.0))
    assert_same_as_eager(f, *args)
    _no_break(f, *args)


def test_r_of_constants_and_what_is_not_modelled():
    def consts(x):
        return np.r_[0, 1:3, 7] + x

    def with_slice(a):
        return np.r_[1:3, a]

    def mismatched(a):
        return np.r_[a, np.ones((2, 2))]

    assert_same_as_eager(consts, np.ones(4))
    _no_break(consts, np.ones(4))
    assert_same_as_eager(with_slice, np.arange(3.0), captured=None)
    assert_same_as_eager(mismatched, np.arange(3.0), captured=None)   # NumPy's ValueError


# -- constant arrays made in the function as constant parameters -------------------------------------

def test_constant_arrays_made_in_the_function_are_constant_parameters():
    # np.digitize's bins, np.percentile's q, np.partition's kth, np.insert/np.delete
    # positions: an np.array literal or np.linspace of constants is a constant of
    # the graph, not "computed from arrays"
    def f(x):
        bins = np.array([0.0, 1.0, 2.0, 3.0])
        q = np.linspace(0, 100, 5)
        return (np.digitize(x, bins), np.digitize(x, np.array([3, 2.5, 0]), right=True),
                np.percentile(x, q), np.partition(x, np.array([1, 2])),
                np.insert(x, np.array([1]), 5.0), np.delete(x, np.array([0, 2])))

    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 10.0, np.nan])
    assert_same_as_eager(f, x)
    _no_break(f, x)


def test_q_computed_from_inputs_still_breaks():
    def f(x, q):
        return np.percentile(x, q * 10)

    x, q = np.array([-1.0, 0.5, 2.5]), np.array([0.0, 1.0, 2.0])
    assert_same_as_eager(f, x, q, captured=None)
    out = frame.explain(f)(x, q)
    assert ["q computed from arrays" in r.reason for r in out.break_reasons] == [True]


# -- np.linspace of traced ends -------------------------------------------------------------------

@pytest.mark.parametrize("x", [np.array([0.1, 2.5, 3.3, 7.9]), np.array([0.1, 2.5, -3.3, 7.9], np.float32),
                               np.array([1, 9, 3, 4], np.int32), np.array([1e-310, 2e-310, 0.0, 5e-324])],
                         ids=["float64", "float32", "int32", "denormal"])
def test_linspace_of_traced_ends(x):
    # KBinsDiscretizer's uniform edges: np.linspace(x.min(), x.max(), n_bins + 1)
    def f(x):
        return (np.linspace(x.min(), x.max(), 5), np.linspace(x.min(), 10, 4, endpoint=False),
                np.linspace(0, x.max(), 7, retstep=True), np.linspace(x[0], x[1], 6, dtype=np.int32),
                np.linspace(x.min(), x.min(), 3), np.linspace(x[2], x[3], 5, axis=-1),
                np.linspace(np.float32(0), x.max(), 4), np.linspace(x.min(), np.float64(3), 4))
    assert_same_as_eager(f, x)
    _no_break(f, x)


def test_linspace_not_modelled_counts_run_numpy():
    def empty(x):
        return np.linspace(x.min(), x.max(), 0)

    def negative(x):
        return np.linspace(x.min(), x.max(), -1)     # NumPy's ValueError

    assert_same_as_eager(empty, np.array([1.5, 2.5]), captured=None)
    assert_same_as_eager(negative, np.array([1.5, 2.5]), captured=None)


# -- np.digitize with bins computed in the graph ------------------------------------------------------

@pytest.mark.parametrize("bins", [[0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, 2.0, 1.0],
                                  [1.0, 1.0], [5.0], [0.0, np.nan, 2.0], [np.nan, 1.0, 2.0], [1.0, 3.0, 2.0],
                                  [0.0, 1.0, 1.0, 5.0]],
                         ids=["up", "down", "flat-up", "flat-down", "flat", "one", "nan-after", "nan-first",
                              "not-monotonic", "repeated"])
def test_digitize_with_traced_bins(bins):
    # NumPy's monotonicity test decides the direction or raises ValueError
    # (a run-time check in the graph: the call then runs natively)
    def f(x, b):
        return np.digitize(x, b), np.digitize(x, b, right=True)

    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 10.0, np.nan])
    assert_same_as_eager(f, x, np.array(bins), captured=None)
    _no_break(f, x, np.array(bins))


def test_digitize_with_quantile_edges():
    def quantile_bins(x, n_bins=3):
        edges = np.quantile(x, np.linspace(0, 1, n_bins + 1))
        return np.digitize(x, edges[1:-1]), edges

    x = np.array([3.0, 1.0, 2.0, 7.0, 4.5, 0.5])
    assert_same_as_eager(quantile_bins, x)
    _no_break(quantile_bins, x)


# -- a data check whose result is unused still raises -------------------------------------------------

def test_unused_out_of_range_index_still_raises():
    # ``correct = scores[np.arange(n), y]`` left unused: NumPy raises IndexError for a
    # label out of range all the same (the checked node was dropped as dead code)
    def loss(scores, y):
        correct = scores[np.arange(len(y)), y]
        return scores.sum() * 0.5

    scores = np.arange(6.0).reshape(2, 3)
    assert_same_as_eager(loss, scores, np.array([0, 5]), captured=None)
    assert_same_as_eager(loss, scores, np.array([0, 2]))


def test_unused_inverse_of_a_singular_matrix_still_raises():
    def f(A, b):
        inv = np.linalg.inv(A)
        return b * 2

    assert_same_as_eager(f, np.zeros((2, 2)), np.ones(2), captured=None)
    assert_same_as_eager(f, np.eye(2), np.ones(2))


# -- np.histogram: explicit edges, weights, density, the data's range -----------------------------------

_HIST_DATA = [np.random.default_rng(0).normal(size=50), np.random.default_rng(1).normal(size=40).astype(np.float32),
              np.array([0.5, 1.0, 1.5, 2.0, 2.0, 3.7, 4.0]), np.array([3.0, 3.0, 3.0]),
              np.array([1.0, np.nan, 2.0]), np.array([1.0, np.inf]), np.arange(10, dtype=np.int32)]


@pytest.mark.parametrize("x", _HIST_DATA, ids=["normal", "float32", "edges", "constant", "nan", "inf", "int32"])
def test_histogram_edges_weights_density(x):
    def f(x):
        return (np.histogram(x, bins=[0, 1, 2, 3, 4]), np.histogram(x, bins=np.array([-1.0, 0.0, 0.5, 3.0])),
                np.histogram(x, bins=3, range=(0.0, 3.0), weights=np.linspace(0, 1, x.size)),
                np.histogram(x, bins=3, range=(0, 3), density=True),
                np.histogram(x, bins=[0.0, 2.0, 2.0, 4.0], weights=np.ones(x.size) * 0.5, density=True),
                np.histogram(x, bins=[0, 1, 2], weights=np.arange(x.size, dtype=np.float32)))
    assert_same_as_eager(f, x)
    _no_break(f, x)


@pytest.mark.parametrize("x", _HIST_DATA[:6], ids=["normal", "float32", "edges", "constant", "nan", "inf"])
def test_histogram_of_the_datas_range(x):
    # bins=n without range=: the edges np.linspace(x.min(), x.max(), n + 1) in the
    # graph; NaN or inf in the data: NumPy's ValueError (a run-time check)
    def f(x):
        counts, edges = np.histogram(x, bins=6)
        density, same = np.histogram(x, bins=edges, density=True)
        weighted, _ = np.histogram(x, bins=3, weights=np.linspace(-1, 1, x.size))
        return counts, edges, density, same is edges, weighted

    assert_same_as_eager(f, x, captured=None)
    _no_break(f, x)


def test_histogram_bins_not_increasing_raises_numpys_error():
    def f(x):
        counts, edges = np.histogram(x, bins=4)
        unused, _ = np.histogram(x, bins=edges[::-1])
        return counts

    assert_same_as_eager(f, np.array([0.5, 1.0, 3.0]), captured=None)


def test_histogram_returns_the_bins_array_itself():
    def f(x):
        b = np.array([0.0, 1.0, 5.0])
        counts, edges = np.histogram(x, bins=b)
        return counts, edges is b

    assert_same_as_eager(f, np.array([0.5, 1.0, 3.0]))


def test_eager_numpy_errors_of_run_time_checks():
    # frame Tensors outside capture: the check is read eagerly, and NumPy runs the
    # call on the data, raising its own error
    calls = [lambda: np.unravel_index(frame.tensor(np.array([9])), (3, 3)),
             lambda: np.digitize(frame.tensor(np.array([1.0])), frame.tensor(np.array([1.0, 3.0, 2.0]))),
             lambda: np.histogram(frame.tensor(np.array([1.0, np.nan])), bins=3)]
    messages = ["index 9 is out of bounds for array with size 9",
                "bins must be monotonically increasing or decreasing",
                "autodetected range of [nan, nan] is not finite"]
    for call, message in zip(calls, messages):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


# -- NumPy scalar tolerances, ufunc.reduce with dtype= --------------------------------------------------

def test_isclose_with_numpy_scalar_tolerances():
    # np.finfo(np.float32).eps as atol: a 0-d array to NumPy (strongly typed)
    def f(a, b, h):
        e32 = np.finfo(np.float32).eps
        return (np.isclose(a, b, rtol=0, atol=e32), np.isclose(a, b, atol=np.float64(1e-3)),
                np.isclose(h, h + np.float16(0.001), atol=e32), np.isclose(h, np.float16(1), rtol=np.float32(1e-3)),
                np.isclose(a, 1.0, atol=np.float32(0.05)), np.isclose(a, np.float64(1.0), atol=np.int32(0)))

    args = (np.array([1.0, 1.0 + 1e-9, 1.1]), np.array([1.0, 1.0, 1.0]),
            np.array([1.0, 1.0009765625, 2.0], np.float16))
    assert_same_as_eager(f, *args)
    _no_break(f, *args)


def test_add_reduce_with_dtype():
    def f(a):
        return (np.add.reduce(a, dtype=np.int32), np.add.reduce(a.reshape(3, 1), axis=1, dtype=np.int16, keepdims=True),
                np.multiply.reduce(a, dtype=np.float32), np.add.reduce(a, axis=None, dtype=np.int64))

    a = np.array([2_000_000_000, 2_000_000_000, 5], dtype=np.int32)
    assert_same_as_eager(f, a)
    _no_break(f, a)


# -- np.ndindex ------------------------------------------------------------------------------------

def test_ndindex_loop_of_a_gradient_check():
    def f(p, h=1e-3):
        g = np.zeros_like(p)
        for ix in np.ndindex(p.shape):
            old = p[ix]
            p[ix] = old + h
            fp = np.sum(p ** 2)
            p[ix] = old - h
            fm = np.sum(p ** 2)
            p[ix] = old
            g[ix] = (fp - fm) / (2 * h)
        return g, list(np.ndindex(2, 1)), type(np.ndindex(2)).__name__, next(np.ndindex(()))

    assert_same_as_eager(f, np.arange(6.0).reshape(2, 3))
    _no_break(f, np.arange(6.0).reshape(2, 3))
