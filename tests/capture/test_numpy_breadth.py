"""NumPy breadth (issue 15 item 6): jitted vs plain NumPy over dtypes, axes,
keepdims/ddof, sort kinds and ties, einsum forms, norm orders, pad modes;
argument mutation (``a.sort()``), identity (``astype(copy=False)``), break
reasons that name the NumPy function, and the same functions on frame
Tensors (eager results and gradients)."""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame

from .helpers import array, assert_grad_matches_central_differences, assert_same_as_eager

RNG = np.random.default_rng(0)
DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


def _data(dtype, shape=(4, 5), seed=0):
    return array(shape, dtype, seed=seed)


def _reasons(fn, *args):
    capture.reset_caches()
    out = frame.explain(fn)(*args)
    return out.graph_count, [r.reason for r in out.break_reasons]


def check(fn, *args):
    """Jitted equals plain, and capture needed no graph break."""
    assert_same_as_eager(fn, *args)
    assert _reasons(fn, *args)[1] == []


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
@pytest.mark.parametrize("axis,ddof,keepdims", [(None, 0, False), (0, 1, False), (1, 0, True),
                                                 ((0, 1), 2, True), (-1, 0.5, False)])
def test_std_var(dtype, axis, ddof, keepdims):
    def f(x):
        return (np.std(x, axis=axis, ddof=ddof, keepdims=keepdims),
                x.var(axis=axis, ddof=ddof, keepdims=keepdims))
    check(f, _data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_cumprod(dtype, axis):
    def f(x):
        return np.cumsum(x, axis=axis), x.cumprod(axis=axis)
    check(f, _data(dtype, (3, 4)))


def test_cumsum_with_dtype_wraps_as_numpy():
    def f(x):
        return np.cumsum(x, dtype=np.int32), np.cumsum(x)
    check(f, np.full(4, 2 ** 30, np.int32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", [None, "stable", "mergesort", "heapsort"])
def test_sort_argsort_with_ties(dtype, kind):
    x = np.array([[3, 1, 2, 1, 3, 0, 2, 1], [0, 0, 1, 1, 2, 2, 0, 1]]).astype(dtype)

    def f(x):
        return np.argsort(x, axis=1, kind=kind), np.sort(x, kind=kind), np.argsort(x, axis=0)
    check(f, x)


def test_sort_nan_and_signed_zeros():
    x = np.array([2.0, np.nan, -0.0, 1.0, 0.0, np.nan, -1.0], np.float32)
    check(lambda x: (np.sort(x), np.argsort(x), np.argsort(x, stable=True)), x)


def test_sort_method_sorts_the_argument_in_place():
    def f(x):
        r = x.sort(axis=0)
        return r, x.sum()
    check(f, _data("float32"))


def test_take_along_axis_out_of_range_raises_an_index_error():
    # (a FrameIndexError, an IndexError: the compiled kernel's, as for np.take)
    def f(x, i):
        return np.take_along_axis(x, i, axis=1)
    jitted = frame.jit(f)
    x = _data("float32", (2, 3))
    np.testing.assert_array_equal(jitted(x, np.array([[2], [-3]])), f(x, np.array([[2], [-3]])))
    with pytest.raises(IndexError, match="out of bounds"):
        jitted(x, np.array([[0], [5]]))


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("ij,jk", [(3, 4), (4, 2)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->", [(3, 4)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(4,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ij,ij->i", [(2, 1), (2, 3)]), ("ijk->kji", [(2, 3, 4)]), ("iij->j", [(3, 3, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]), ("i,i,i->i", [(3,), (3,), (3,)]),
])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_einsum(subscripts, shapes, dtype):
    arrays = [_data(dtype, s, seed=i) for i, s in enumerate(shapes)]
    check(lambda *xs: np.einsum(subscripts, *xs), *arrays)


@pytest.mark.parametrize("ord", [None, 1, 2, np.inf, -np.inf, 0, 3, 0.5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_vector_norm(ord, dtype):
    check(lambda x: (np.linalg.norm(x[0], ord),
                                    np.linalg.norm(x, ord, axis=1, keepdims=True)), _data(dtype))


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf])
def test_matrix_norm(ord):
    check(lambda x: (np.linalg.norm(x[1], ord), np.linalg.norm(x, ord, axis=(2, 0)),
                                    np.linalg.norm(x[0], ord, keepdims=True)),
                         _data("float32", (3, 4, 5)))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", [1, (2, 0), ((1, 2), (3, 0))])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_pad_modes(mode, width, dtype):
    check(lambda x: np.pad(x, width, mode=mode), _data(dtype))


def test_pad_constant_values():
    check(lambda x: np.pad(x, 2, constant_values=-1.5), _data("float32"))


@pytest.mark.parametrize("sections", [1, 2, 3, 4, [1, 3], [2, 2, 4]])
def test_array_split(sections):
    check(lambda x: [p * 2 for p in np.array_split(x, sections, axis=1)],
                         _data("float32"))


def test_astype_copy_false_is_the_same_array():
    def f(x):
        y = x.astype(np.float32, copy=False)
        y += 1  # writes through to the argument, as in NumPy
        z = x.astype(np.float64, copy=False)
        return y is x, z is x, z
    check(f, _data("float32"))


def test_astype_casting_rule_raises_as_numpy():
    assert_same_as_eager(lambda x: x.astype(np.int32, casting="safe"), _data("float32"),
                         captured=None)


def test_new_functions_are_captured_in_one_graph():
    def f(x, i):
        return (np.std(x), np.einsum("ij->j", x), np.linalg.norm(x), np.sort(x),
                np.take_along_axis(x, i, axis=1), np.cumsum(x), np.pad(x, 1, mode="edge"),
                np.array_split(x * 1, 3), x.astype(np.float64))
    assert _reasons(f, _data("float32"), np.zeros((4, 1), np.int64)) == (1, [])


@pytest.mark.parametrize("fn,name", [
    (lambda x: x + np.random.rand(), "numpy.random.rand"),   # (a scalar draw)
    (lambda x: np.random.normal(x, 1.0), "numpy.random.normal"),   # (loc computed in the graph)
    (lambda x: np.linalg.eig(x[:, :4])[0], "numpy.linalg.eig"),
    (lambda x: np.unique(x).sum() + x, "numpy.unique"),
    (lambda x: np.linalg.norm(x, "nuc"), "numpy.linalg.norm"),
    (lambda x: np.pad(x, 1, mode="maximum"), "numpy.pad"),
    (lambda x: np.var(x, where=x > -10), "numpy.var with where="),
    (lambda x: x + RNG.normal(x.mean(), size=x.shape), "numpy.random.Generator.normal"),
])
def test_break_reason_names_the_function(fn, name):
    graphs, reasons = _reasons(fn, _data("float32"))
    assert reasons and name in reasons[0], reasons


# -- the same functions on frame Tensors (NumPy's protocol, eager) ---------------------------------

def test_eager_tensor_results_match_numpy():
    x = _data("float32")
    t = frame.tensor(x)
    for fn in (lambda a: np.std(a, axis=0, ddof=1), lambda a: np.cumsum(a, axis=1),
               lambda a: np.sort(a, axis=0), lambda a: np.einsum("ij,kj->ik", a, a),
               lambda a: np.linalg.norm(a, axis=1), lambda a: np.pad(a, 1, mode="reflect")):
        got = fn(t)
        assert isinstance(got, frame.Tensor)
        np.testing.assert_allclose(got.numpy(), fn(x), rtol=1e-5, atol=1e-6)


def test_eager_gradients_through_numpy_functions():
    x = _data("float64", (3, 4))
    w = _data("float64", (3, 4), seed=1)

    def loss(t):
        s = np.sort(t, axis=1)
        c = np.cumsum(s, axis=1)
        i = np.argmax(t, axis=1)[:, None]
        g = np.take_along_axis(t, i, axis=1)
        e = np.einsum("ij,kj->ik", t, t * w)
        p = np.pad(t, ((1, 1), (2, 0)), mode="reflect")
        return (frame.sum(c * w) + frame.sum(g) + np.linalg.norm(t) + np.std(t)
                + frame.sum(e) + frame.sum(p * p))

    assert_grad_matches_central_differences(loss, x)
