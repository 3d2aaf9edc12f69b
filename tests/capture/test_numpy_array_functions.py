"""NumPy functions that pass an array through, copy it or convert its dtype
(``np.asarray``, ``np.array``, ``np.copy``, ``np.ravel``, ``np.shape``,
``np.atleast_1d``/``2d``/``3d``...),
Python's scalar types as dtypes, and the constructors of uninitialised arrays:
jitted against plain Python (identity and memory sharing included), in one
graph."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager

X = np.arange(12.0).reshape(3, 4)


def asarray_is_the_array(a):
    b = np.asarray(a)
    b += 1  # writes a too
    return b


def asarray_same_dtype(a):
    return np.asarray(a, dtype=np.float64), np.asanyarray(a)


def asarray_converts(a):
    return np.asarray(a, dtype=np.float32) * 2, np.asarray(a, dtype=int)


def array_copies(a):
    b = np.array(a)
    b[0] = -1.0
    return a, b


def array_dtype(a):
    return np.array(a, dtype=float), np.array(a, dtype=np.float32), np.array(a, copy=None)


def copy_function(a):
    c = np.copy(a)
    c *= 3
    return a.sum(), c


def ravel_function(a):
    return np.ravel(a)


def metadata(a):
    return np.shape(a), np.ndim(a), np.size(a), np.size(a, 1), a * np.shape(a)[1]


def builtin_dtypes(a):
    m = np.zeros(a.shape, dtype=bool)
    m[0, 1] = True
    n = np.ones(3, dtype=int) + a[0, :3].astype(int)
    return m, n, np.full((2,), 3, dtype=float) * a[0, :2], a.astype(complex)


def empty_then_filled(a):
    out = np.empty((a.shape[0],))
    for i in range(a.shape[0]):
        out[i] = a[i].max()
    return out + np.identity(3)[0]


def library_style(x, w):
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w)
    if np.ndim(x) == 1:
        x = x[None, :]
    return np.tanh(x @ w)


def atleast(a):
    one, two, three = np.atleast_1d(a), np.atleast_2d(a), np.atleast_3d(a)
    return one, two, three * 2, one is a, two is a  # views of a, or a itself


def write_through_atleast(a):
    two = np.atleast_2d(a)
    two *= 2  # a reshaped view writes its base: runs natively
    return a


CASES = [
    (asarray_is_the_array, (X,)), (asarray_same_dtype, (X,)), (asarray_converts, (X,)),
    (array_copies, (X,)), (array_dtype, (X,)), (copy_function, (X,)), (ravel_function, (X,)),
    (metadata, (X,)), (builtin_dtypes, (X,)), (empty_then_filled, (X,)),
    (library_style, (X[0], X.T)), (atleast, (np.float64(3.0) * np.ones(()),)), (atleast, (X[0],)),
    (atleast, (X,)), (atleast, (X[None],)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_array_functions_are_captured(fn, args):
    assert_same_as_eager(fn, *args)
    assert frame.explain(fn)(*(np.array(a, copy=True) for a in args)).graph_break_count == 0


def asarray_copy_false_converting(a):
    return np.asarray(a, dtype=np.float32, copy=False)


def asarray_fortran(a):
    return np.asarray(a, order="F")


@pytest.mark.parametrize("fn", [asarray_copy_false_converting, asarray_fortran,
                                write_through_atleast])
def test_unmodelled_uses_keep_numpy_semantics(fn):
    assert_same_as_eager(fn, X, captured=None)
