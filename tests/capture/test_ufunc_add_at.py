"""``np.add.at(a, index, value)`` inside jitted functions: unbuffered
accumulation (a repeated index gets every addition, where ``a[index] += v``
keeps one), written into the caller's array.  Captured as one ``scatter_add``
when NumPy adds in ``a``'s dtype; otherwise the call runs natively.  Each case
runs jitted and plain (values, dtypes, the arguments after the call,
exceptions)."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_captured, assert_same_as_eager


def confusion_matrix(y_true, y_pred, k):
    cm = np.zeros((k, k), dtype=np.int64)
    np.add.at(cm, (y_true, y_pred), 1)
    return cm


def weighted_histogram(bins, weights):
    out = np.zeros(5)
    np.add.at(out, bins, weights)
    return out


def add_rows_in_place(a, idx, v):
    np.add.at(a, idx, v)
    return a.sum()


def from_the_end(a):
    np.add.at(a, [-1, -1, 0], 2.0)
    return a


def out_of_bounds(a):
    np.add.at(a, [0, 7], 1.0)
    return a


def at_argmax_rows(scores, counts):
    np.add.at(counts, scores.argmax(axis=1), 1)   # a computed index array
    return counts


def mixed_slice_and_array(a, cols):
    np.add.at(a, (slice(None), cols), 0.5)
    return a


def casts_back(a):
    np.add.at(a, [0, 0], np.float64(0.1))   # added in float64, rounded into float32
    return a


def bool_array(a):
    np.add.at(a, [0, 1, 1], True)
    return a


def with_a_mask(a):
    np.add.at(a, a > 0.5, 1.0)
    return a


def _int(*shape_high, seed=0):
    rng = np.random.default_rng(seed)
    shape, high = shape_high[:-1], shape_high[-1]
    return rng.integers(0, high, shape)


CAPTURED = [
    (confusion_matrix, lambda: (_int(20, 3), _int(20, 3, seed=1), 3)),
    (weighted_histogram, lambda: (_int(30, 5), np.random.default_rng(2).random(30))),
    (add_rows_in_place, lambda: (np.zeros((4, 3), np.float32), np.array([0, 2, 0]),
                                 np.ones(3, np.float32))),
    (add_rows_in_place, lambda: (np.zeros((4, 3), np.float32), np.array([[0, 2], [0, 0]]),
                                 np.float32(2))),
    (add_rows_in_place, lambda: (np.arange(12).reshape(4, 3), [1, 1, 1], np.array([1, 2, 3]))),
    (from_the_end, lambda: (np.zeros(4),)),
    (at_argmax_rows, lambda: (np.random.default_rng(3).random((9, 4)), np.zeros(4, np.int64))),
    (mixed_slice_and_array, lambda: (np.zeros((2, 4)), np.array([3, 3, 0]))),
]

NATIVE = [
    (out_of_bounds, lambda: (np.zeros(4),)),
    (casts_back, lambda: (np.zeros(3, np.float32),)),
    (bool_array, lambda: (np.zeros(3, bool),)),
    (with_a_mask, lambda: (np.random.default_rng(4).random(6),)),
]


@pytest.mark.parametrize("fn,make", CAPTURED + NATIVE,
                         ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CAPTURED + NATIVE)])
def test_add_at_same_as_eager(fn, make):
    assert_same_as_eager(fn, *make(), captured=None)
    jitted = frame.jit(fn)
    for _ in range(2):   # the cached entry, on fresh arguments
        assert_same_as_eager(jitted, *make(), captured=None)


@pytest.mark.parametrize("fn,make", CAPTURED, ids=[f"{c[0].__name__}{i}" for i, c in
                                                  enumerate(CAPTURED)])
def test_add_at_is_one_graph(fn, make):
    assert_captured(fn, *make(), graphs=1)


def test_repeated_indices_accumulate_unlike_iadd():
    def both(a, idx):
        b = a.copy()
        np.add.at(a, idx, 1.0)
        b[idx] += 1.0
        return a, b
    assert_same_as_eager(both, np.zeros(3), np.array([0, 0, 0, 2]))


def test_other_ufuncs_at_run_natively_without_a_recompile_per_call():
    """``np.maximum.at`` is not modelled: it breaks, and the bound method
    pending at the break (a new object at each access) reaches the resume
    function guarded by its ufunc and name, not by identity."""
    def running_max(a, idx, v):
        np.maximum.at(a, idx, v)
        return a
    frame.reset_stats()
    jitted = frame.jit(running_max)
    for _ in range(4):
        assert_same_as_eager(jitted, np.zeros(4), np.array([0, 0, 2]), np.array([1.0, 3.0, 2.0]),
                             captured=None)
    assert frame.stats().recompiles == 0, frame.stats().recompile_reasons
