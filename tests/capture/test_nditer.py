"""``np.nditer`` walked by position (``capture/variables/nditer.py``): the
numeric gradient check of course code is one graph where NumPy's iteration
order is known, and a graph break (NumPy runs it) where it depends on a
layout capture does not model.  Every function is compared with the plain
call (results, printed output, arguments after the call, exceptions)."""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame

from .helpers import assert_same_as_eager


def _explain(fn, *args):
    capture.reset_caches()
    return frame.explain(fn)(*args)


def _positions(x, **kwargs):
    seen = []
    it = np.nditer(x, **kwargs)
    while not it.finished:
        seen.append(it.multi_index)
        it.iternext()
    return seen, it.finished, it.itersize


def eval_numerical_gradient(f, x, h=1e-5):
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        oldval = x[ix]
        x[ix] = oldval + h
        fxph = f(x)
        x[ix] = oldval - h
        fxmh = f(x)
        x[ix] = oldval
        grad[ix] = (fxph - fxmh) / (2 * h)
        it.iternext()
    return grad


def gradient_check(W, X):
    def loss(W):
        return np.sum(np.tanh(X @ W) ** 2)
    return eval_numerical_gradient(loss, W), W


def multi_index_order(x):
    return _positions(x, flags=["multi_index"])


def c_and_f_index(x, order):
    seen = []
    it = np.nditer(x, flags=["multi_index", "c_index"], order=order)
    while not it.finished:
        seen.append((it.multi_index, it.index, it.iterindex))
        it.iternext()
    it.reset()
    return seen, it.multi_index, it.shape, it.ndim


def multi_index_of_a_computed_array(x):
    y = x.T * 2.0        # Fortran-ordered in NumPy: its K order is not C order
    return _positions(y, flags=["multi_index"])


def multi_index_of_a_computed_vector(x):
    return _positions(x.sum(axis=0) + 1.0, flags=["multi_index"])


def past_the_end_is_caught(x):
    it = np.nditer(x, flags=["multi_index"])
    while it.iternext():
        pass
    try:
        return it.multi_index
    except ValueError as e:
        return str(e), it.iternext()


def no_multi_index_flag_raises(x):
    it = np.nditer(x)
    return it.multi_index


def gradient_check_printing(W):
    grad = np.zeros_like(W)
    it = np.nditer(W, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        old = W[ix]
        W[ix] = old + 1e-4
        up = np.sum(W ** 3)
        W[ix] = old
        grad[ix] = up
        print(ix, it.iterindex)   # a graph break inside the loop: the iterator goes on natively
        it.iternext()
    return grad


def test_gradient_check_is_one_graph():
    W = np.random.default_rng(0).normal(size=(3, 2))
    X = np.random.default_rng(1).normal(size=(4, 3))
    assert_same_as_eager(gradient_check, W, X, captured=None)
    out = _explain(gradient_check, W.copy(), X)
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


@pytest.mark.parametrize("make", [
    lambda: np.arange(6.0).reshape(2, 3),
    lambda: np.arange(24.0).reshape(2, 3, 4),
    lambda: np.zeros(()),
    lambda: np.zeros((0, 3)),
    lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    lambda: np.arange(6.0).reshape(2, 3)[:, ::-1],
    lambda: np.arange(8.0)[::-2],
], ids=["c", "c3d", "0d", "empty", "fortran", "reversed", "reversed_1d"])
def test_multi_index_order_is_numpys(make):
    x = make()
    assert_same_as_eager(multi_index_order, x, captured=None)
    out = _explain(multi_index_order, x)
    modelled = x.flags.c_contiguous and x.size > 0   # (NumPy raises for an empty array)
    assert (out.graph_break_count == 0) == modelled, out.break_reasons


def test_fortran_input_after_c_input_traces_again():
    jitted = frame.jit(multi_index_order)
    c = np.arange(6.0).reshape(2, 3)
    assert jitted(c) == multi_index_order(c)
    f = np.asfortranarray(c)
    assert jitted(f) == multi_index_order(f)   # (the C-contiguity guard fails)
    assert multi_index_order(f) != multi_index_order(c)


@pytest.mark.parametrize("order", ["C", "F", "K", "A"])
def test_c_index_and_reset(order):
    x = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    assert_same_as_eager(c_and_f_index, x, order, captured=None)
    out = _explain(c_and_f_index, x, order)
    assert (out.graph_break_count == 0) == (order in ("C", "F")), out.break_reasons


def test_computed_arrays():
    x = np.arange(6.0).reshape(2, 3)
    assert_same_as_eager(multi_index_of_a_computed_array, x, captured=None)
    assert _explain(multi_index_of_a_computed_array, x).graph_break_count > 0
    assert_same_as_eager(multi_index_of_a_computed_vector, x, captured=None)
    assert _explain(multi_index_of_a_computed_vector, x).graph_break_count == 0


def test_errors_are_numpys():
    x = np.arange(4.0).reshape(2, 2)
    assert_same_as_eager(past_the_end_is_caught, x, captured=None)
    assert _explain(past_the_end_is_caught, x).graph_break_count == 0
    assert_same_as_eager(no_multi_index_flag_raises, x, captured=None)
    ro = x.copy()
    ro.flags.writeable = False
    assert_same_as_eager(gradient_check, ro, np.ones((3, 2)), captured=None)


def test_break_inside_the_loop_resumes_at_the_position():
    W = np.arange(6.0).reshape(3, 2) / 7
    assert_same_as_eager(gradient_check_printing, W, captured=None)
