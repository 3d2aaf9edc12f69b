"""Loop indices as dynamic graph inputs (capture/variables/dynamic_index.py).

A dynamic int (its value guard failed once) used as an index or a slice bound
of an ndarray or a Tensor is a 0-d int64 graph input: the guards are on the
index's validity (``-n <= i < n``) and on a slice's length, not on the value,
so a loop whose body breaks the graph (``float(loss)``, ``.item()``, a
data-dependent ``break``) settles to a number of entries that does not grow
with its trip count.  Every call is compared with the plain function
(``assert_same_as_eager``: values, dtypes, argument mutation, the lists
returned, exceptions, memory shared with the inputs)."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager, tensor


def _data(n, d=8, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)).astype(np.float32),
            rng.standard_normal((n, 1)).astype(np.float32),
            rng.standard_normal((d, 1)).astype(np.float32))


def linear_regression_epoch(X, y, W, lr, bs):
    losses = []
    for i in range(0, X.shape[0], bs):
        xb, yb = X[i:i + bs], y[i:i + bs]
        p = xb @ W
        err = p - yb
        W -= lr * xb.T @ err / len(xb)
        losses.append(float((err ** 2).mean()))     # reads the value: a break every batch
    return W, losses


def minibatch_tutorial(images, labels, weights, batch_size, learning_rate):
    # the NumPy "MNIST from scratch" tutorial's loop, with a last partial batch
    n = images.shape[0]
    total = 0.0
    for i in range(0, n, batch_size):
        x = images[i:i + batch_size]
        t = labels[i:i + batch_size]
        scores = x @ weights
        grad = x.T @ (scores - t) / x.shape[0]
        weights -= learning_rate * grad
        total += ((scores - t) ** 2).sum().item()
    return total / n


def rnn(xs, h, Wx, Wh, limit):
    steps = 0
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
        steps += 1
        if np.abs(h).max() > limit:                  # data-dependent: a break every step
            break
    return h, steps


def column_norms(X):
    norms = []
    for j in range(X.shape[1]):
        c = X[:, j]
        norms.append(float(np.sqrt((c * c).sum())))
    return norms


def fill_rows(x, out):
    total = 0.0
    for i in range(x.shape[0]):
        out[i] = x[i] * 2.0 + 1.0
        total += float(out[i].sum())
    return total


def accumulate_rows(acc, x):
    seen = []
    for i in range(x.shape[0]):
        acc[i] += x[i]
        seen.append(float(acc[i].max()))
    return seen


def _settled(compile_counter, run, trips):
    """(translations, recompiles) of ``run(trips)`` on fresh caches."""
    compile_counter.reset()
    run(trips)
    return compile_counter.translations, compile_counter.recompiles


def _bounded(compile_counter, run, most=4, trips=(8, 40)):
    counts = [_settled(compile_counter, run, n) for n in trips]
    assert counts[0] == counts[1], counts           # does not grow with the trip count
    assert counts[0][1] <= most, counts
    assert compile_counter.graph_breaks.get("recompile_limit", 0) == 0


@pytest.mark.parametrize("bs", [32, 48])
def test_minibatch_linear_regression(compile_counter, bs):
    def run(trips):
        X, y, W = _data(trips * bs)
        assert_same_as_eager(linear_regression_epoch, X, y, W, 0.1, bs, captured=None)
    _bounded(compile_counter, run)
    X, y, W = _data(640)                       # 640 % 48 != 0: a short last batch
    assert_same_as_eager(linear_regression_epoch, X, y, W, 0.1, bs, captured=None)


def test_minibatch_tutorial_with_a_partial_last_batch(compile_counter):
    def run(trips):
        X, y, W = _data(trips * 16 + 5)          # the last batch has 5 rows
        assert_same_as_eager(minibatch_tutorial, X, y, W, 16, 0.05, captured=None)
    _bounded(compile_counter, run)


def test_rnn_step_loop_with_a_data_dependent_break(compile_counter):
    rng = np.random.default_rng(1)
    Wx = rng.standard_normal((4, 6)).astype(np.float32) * 0.3
    Wh = rng.standard_normal((6, 6)).astype(np.float32) * 0.3

    def run(trips):
        xs = np.random.default_rng(2).standard_normal((trips, 1, 4)).astype(np.float32) * 0.01
        xs[5] = 10.0                                   # h leaves [-0.5, 0.5] at step 5
        h = np.zeros((1, 6), np.float32)
        assert_same_as_eager(rnn, xs, h, Wx, Wh, 2.0, captured=None)   # runs to the end
        assert_same_as_eager(rnn, xs, h, Wx, Wh, 0.5, captured=None)   # leaves early
    _bounded(compile_counter, run)


def test_column_loop(compile_counter):
    def run(trips):
        assert_same_as_eager(column_norms, np.random.default_rng(2).standard_normal((5, trips)),
                             captured=None)
    _bounded(compile_counter, run)


def test_item_assignment_loop_writes_the_callers_array(compile_counter):
    def run(trips):
        x = np.random.default_rng(3).standard_normal((trips, 3)).astype(np.float32)
        assert_same_as_eager(fill_rows, x, np.zeros((trips, 3), np.float32), captured=None)
    _bounded(compile_counter, run)


def test_inplace_add_at_a_dynamic_row(compile_counter):
    def run(trips):
        x = np.random.default_rng(4).standard_normal((trips, 3))
        assert_same_as_eager(accumulate_rows, np.ones((trips, 3)), x, captured=None)
    # float() is made after the graph (variables/lazy_scalars.py): a short loop is
    # unrolled into one graph; a long one breaks at float() past the unrolling budget
    _bounded(compile_counter, run, trips=(40, 120))


# -- one function called with changing indices -----------------------------------------------

def pick(x, i):
    return x[i]


def pick_columns(x, i, j):
    return x[:, i], x[i, 1:], x[i, j], x[..., j]


def window(x, i, j):
    return x[i:j], x[i:i + 3], x[:j], x[i:], x[i::-1], x[i:j:2]


def test_index_changing_every_call_settles(compile_counter):
    x = np.arange(30.0).reshape(6, 5)
    for i in (0, 1, 2, 3, 4, 5, -1, -6, 2):
        assert_same_as_eager(pick, x, i)
    assert compile_counter.translations == 2          # the first value, then dynamic


def test_out_of_range_index_raises_as_numpy(compile_counter):
    x = np.arange(30.0).reshape(6, 5)
    for i in (0, 1, 6, 3, -7, -6, 100, 2):
        assert_same_as_eager(pick, x, i)               # IndexError from the native run


def test_indices_on_several_axes():
    x = np.arange(30.0).reshape(6, 5)
    for i, j in ((0, 0), (1, 2), (4, -1), (-2, 3), (5, 4), (2, 5), (1, 1)):
        assert_same_as_eager(pick_columns, x, i, j)


def test_slices_follow_numpy_clamping():
    x = np.arange(30.0).reshape(10, 3)
    for i, j in ((0, 4), (1, 5), (2, 6), (-3, 10), (7, 20), (-100, 3), (8, 2), (3, -2),
                 (12, 15), (5, 9), (-1, -1), (2, 6)):
        assert_same_as_eager(window, x, i, j)


def test_bounds_beyond_int64():
    def f(x, i):
        return x[i:], x[i:i + 2], x[:i]
    x = np.arange(12.0).reshape(6, 2)
    for i in (0, 1, -2 ** 70, 2 ** 70, 3, -2 ** 64, 2):
        assert_same_as_eager(f, x, i)


def test_returned_slice_is_a_view_of_the_argument():
    def f(x, i):
        return x[i:i + 2], x[i]
    x = np.arange(12.0).reshape(6, 2)
    for i in (0, 1, 3, 4, -2):
        assert_same_as_eager(f, x, i)                   # compares memory sharing too


def test_writes_at_dynamic_positions():
    def f(x, i, j):
        x[i] = 7.0
        x[i:j] = -1.0
        x[j] += 2.5
        x[:, i] *= 3.0
        return x.sum()
    for i, j in ((0, 2), (1, 3), (2, 4), (-3, -1), (3, 1), (0, 4)):
        assert_same_as_eager(f, np.arange(20.0).reshape(5, 4), i, j)


def test_frame_tensor_indexed_by_a_changing_int(compile_counter):
    def f(t, i):
        u = t[i] * 2
        t[i + 1] = u
        return t[i:i + 2].sum(), t
    for i in (0, 1, 2, -3, 1):
        assert_same_as_eager(f, tensor((4, 3)), i)
    assert compile_counter.translations == 2


@pytest.mark.parametrize("backend", ["cpu", "openvino"])
def test_results_are_the_static_index_results_bit_for_bit(compile_counter, backend):
    if backend == "openvino":
        pytest.importorskip("openvino")

    def f(x, i, j):
        return window(x, i, j) + pick_columns(x, i, j) + (x[i:i + 2] * 1.5,)
    x = np.random.default_rng(5).standard_normal((7, 4)).astype(np.float32)
    jitted = frame.jit(f, backend=backend)
    for i, j in ((0, 3), (1, 3), (2, 3), (-4, 3), (3, 3)):
        for got, want in zip(jitted(x, i, j), f(x, i, j)):
            assert type(got) is type(want) and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert compile_counter.graph_breaks.get("recompile_limit", 0) == 0

    def g(x, i, j):   # the same lengths for every i: one entry after the first value
        return pick_columns(x, i, j) + (x[i:i + 2] * 1.5, x[:, j:j + 1])
    compile_counter.reset()
    jitted = frame.jit(g, backend=backend)
    for i, j in ((0, 3), (1, 2), (2, -2), (-4, 0), (3, 1)):
        for got, want in zip(jitted(x, i, j), g(x, i, j)):
            assert type(got) is type(want) and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    assert compile_counter.translations == 2


def test_value_used_for_a_shape_stays_guarded(compile_counter):
    def f(x, i):
        return x[i] + np.zeros(i + 1)[:1]              # i decides a shape: guarded by value
    x = np.arange(12.0).reshape(6, 2)
    for i in (0, 1, 2, 3):
        assert_same_as_eager(f, x, i)
    assert compile_counter.translations == 4


def test_switched_off_by_config(compile_counter):
    x = np.arange(12.0).reshape(6, 2)
    with frame.config.override(dynamic_scalars=False):
        for i in (0, 1, 2, 3):
            assert_same_as_eager(pick, x, i)
    assert compile_counter.translations == 4
