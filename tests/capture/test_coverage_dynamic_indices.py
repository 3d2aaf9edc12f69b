"""Coverage corpus, ints that change between calls used as indices and slice
bounds (docs/capture.md, "Dynamic indices"), in the style of TorchDynamo's
automatic-dynamic tests and the NumPy tutorials' loops: a row, a column, a
time step, a window, an embedding row, a minibatch, item assignments.

Each case is called several times (``calls=``), every call compared with the
plain function; ``recompiles=`` counts the calls that translated again: an
index becomes a graph input at the second call (1 recompile), a slice of a
new length (a window running past the end, a short last batch) is one more,
and an int that decides a shape (``x[-k:]``, ``np.zeros(n)``) keeps its value
guard.  ``graphs=`` is what ``frame.explain`` shows for the first call."""
from __future__ import annotations

import numpy as np
import pytest

from .corpus import Corpus
from .helpers import array, tensor

case = Corpus()


def _each(values, make):
    return lambda: [make(v) for v in values]


# -- reading ---------------------------------------------------------------------------------------

@case(calls=_each((0, 1, 2, 3, -1), lambda i: (array((5, 3)), i)), graphs=1, recompiles=1)
def select_row(x, i):
    return x[i] * 2.0


@case(calls=_each((0, 2, 1, -3), lambda j: (array((4, 5)), j)), graphs=1, recompiles=1)
def select_column(x, j):
    c = x[:, j]
    return c / np.sqrt((c * c).sum())


@case(calls=_each(((0, 1), (2, 3), (3, 0), (-1, -2)), lambda ij: (array((4, 4)), *ij)),
      graphs=1, recompiles=1)
def matrix_element(a, i, j):
    return a[i, j] + a[j, i]


@case(calls=_each((0, 1, 2, 3), lambda t: (array((4, 2, 3)), array((2, 3), seed=1), t)),
      graphs=1, recompiles=1)
def rnn_time_step(xs, h, t):
    return np.tanh(xs[t] + 0.5 * h)


@case(calls=_each((0, 3, 1, 6), lambda s: (array((10, 2)), s)), graphs=1, recompiles=1)
def moving_window_mean(seq, start):
    return seq[start:start + 4].mean(axis=0)


@case(calls=_each((0, 3, 6, 8, 9, 2), lambda s: (array((10, 2)), s)), graphs=1, recompiles=3)
def window_running_past_the_end(seq, start):
    return seq[start:start + 3] * 2.0      # lengths 3, 3, 3, 2, 1: one entry per length


@case(calls=_each((1, 2, 3, 4), lambda k: (array((6, 2)), k)), graphs=0, recompiles=3)
def last_k_rows(x, k):
    return x[-k:]                         # k decides the length: guarded per value


@case(calls=_each((0, 2, 4, 1), lambda tok: (tensor((5, 3)), tok)), graphs=1, recompiles=1)
def embedding_lookup(table, token):
    return table[token] * 0.5


@case(calls=_each((0, 1, 2, 1), lambda i: (array((4, 3)), i)), graphs=0, recompiles=1)
def returned_row_view(x, i):
    return x[i]                           # a view of x, as NumPy's


# -- writing ---------------------------------------------------------------------------------------

@case(calls=_each((0, 1, 2, -1), lambda i: (np.zeros((4, 3)), array((3,), dtype="float64"), i)),
      graphs=1, recompiles=1)
def set_row(out, v, i):
    out[i] = v
    return out.sum()


@case(calls=_each((0, 1, 3, 2), lambda i: (np.ones((5, 2)), array((2,), dtype="float64"), i)),
      graphs=1, recompiles=1)
def scatter_add_row(acc, g, i):
    acc[i] += g


@case(calls=_each((0, 2, 4), lambda i: (np.zeros(8, np.float32), i)), graphs=1, recompiles=1)
def fill_a_span(buf, i):
    buf[i:i + 3] = 1.0
    return buf


# -- loops with a break in the body ------------------------------------------------------------------

def _minibatches(n, seed=0):
    X = array((n, 4), dtype="float64", seed=seed)
    return (X, X @ np.arange(1.0, 5.0)[:, None], np.zeros((4, 1)), 8)


@case(calls=lambda: [_minibatches(37, seed) for seed in range(3)], graphs=4,
      breaks=("float() of a",) * 4, recompiles=2)
def minibatch_sgd(X, y, W, batch):
    losses = []
    for i in range(0, X.shape[0], batch):
        xb, yb = X[i:i + batch], y[i:i + batch]
        err = xb @ W - yb
        W -= 0.01 * xb.T @ err / len(xb)
        loss = float((err ** 2).mean())
        if loss > 1e12:   # the test needs the number: a break at float()
            break
        losses.append(loss)
    return losses


# the losses only appended: float() is made after the graph (variables/lazy_scalars.py),
# so the whole epoch is one graph
@case(calls=lambda: [_minibatches(37, seed) for seed in range(3)], graphs=1, recompiles=0)
def minibatch_sgd_losses_appended(X, y, W, batch):
    losses = []
    for i in range(0, X.shape[0], batch):
        xb, yb = X[i:i + batch], y[i:i + batch]
        err = xb @ W - yb
        W -= 0.01 * xb.T @ err / len(xb)
        losses.append(float((err ** 2).mean()))
    return losses


def test_enough_cases():
    assert len(case.cases) >= 12


@pytest.mark.parametrize("c", case.params())
def test_coverage_dynamic_indices(c):
    c.check()
