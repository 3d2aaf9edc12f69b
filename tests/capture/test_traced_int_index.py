"""Indexing at a position given by an integer computed in the function.

``x[indices[k]]``: ``indices[k]`` is a NumPy integer (a 0-d integer tensor under
capture), which NumPy reads as an int.  frame's indexing read it with ``int()``
of its data, which under capture is the meta array's made-up value (0): the
jitted function silently returned ``x[0]`` (and wrote ``y[0]``).  An element
(every axis indexed by an int) is now a gather checked at run time; a view at
such a position, and item assignment there, break the graph.  A slice whose
bounds are such integers (``data[indptr[i]:indptr[i + 1]]``, the rows of a CSR
matrix) was read as ``0:0`` (an empty slice); it now runs natively."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_captured, assert_same_as_eager


def element_at_computed_index(indices, x):
    return x[indices[1]], x[indices[2]], x[indices[-1]]


def element_of_matrix_mixed(indices, m):
    return m[indices[2], indices[1]], m[1, indices[0]], m[indices[1], -1]


def csr_matvec(indptr, indices, data, x):
    y = np.zeros(len(indptr) - 1)
    for i in range(len(indptr) - 1):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * x[indices[k]]
        y[i] = acc
    return y


def write_at_computed_index(indices, y):
    y[indices[1]] = 5.0
    y[indices[2]] += 1.0
    return y


def row_view_at_computed_index(indices, m):
    row = m[indices[1]]
    row[0] = 7.0
    return m, row


def tensor_element_at_tensor_index(i, t):
    return t[i] * 2


def negative_computed_index(x):
    k = x.argmax() - 3          # a NumPy integer, negative (-2)
    return x[k]


def out_of_range_computed_index(x):
    return x[x.argmax() + 10]


def fill_slice_at_computed_bounds(indptr, d):
    d[indptr[1]:indptr[2]] = 1.0
    return d


def csr_to_dense(indptr, indices, data):
    dense = np.zeros((len(indptr) - 1, indices.max() + 1))
    for i in range(len(indptr) - 1):
        dense[i, indices[indptr[i]:indptr[i + 1]]] = data[indptr[i]:indptr[i + 1]]
    return dense


def sum_of_slice_at_computed_bounds(indptr, data):
    return data[indptr[1]:indptr[3]].sum() * 2


CASES = [
    (element_at_computed_index, lambda: (np.array([0, 2, 1]), np.array([1.0, -1.0, 2.0]))),
    (element_of_matrix_mixed, lambda: (np.array([0, 2, 1]), np.arange(9.0).reshape(3, 3))),
    (csr_matvec, lambda: (np.array([0, 2, 3, 6]), np.array([0, 2, 1, 0, 1, 2]),
                          np.arange(1.0, 7.0), np.array([1.0, -1.0, 2.0]))),
    (write_at_computed_index, lambda: (np.array([0, 2, 1]), np.zeros(3))),
    (row_view_at_computed_index, lambda: (np.array([0, 2, 1]), np.zeros((3, 2)))),
    (tensor_element_at_tensor_index, lambda: (frame.tensor(np.array([0, 2, 1]))[1],
                                              frame.tensor(np.array([1.0, -1.0, 2.0], np.float32)))),
    (negative_computed_index, lambda: (np.array([1.0, 5.0, 2.0]),)),
    (out_of_range_computed_index, lambda: (np.array([1.0, 5.0, 2.0]),)),
    (fill_slice_at_computed_bounds, lambda: (np.array([0, 2, 3, 6]), np.zeros(6))),
    (csr_to_dense, lambda: (np.array([0, 2, 3, 6]), np.array([0, 2, 1, 0, 1, 2]), np.arange(1.0, 7.0))),
    (sum_of_slice_at_computed_bounds, lambda: (np.array([0, 2, 3, 6]), np.arange(1.0, 7.0))),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_computed_integer_index_same_as_eager(fn, make):
    assert_same_as_eager(fn, *make(), captured=None)


@pytest.mark.parametrize("fn,make", [CASES[0], CASES[1], CASES[5], CASES[6]],
                         ids=["vector", "matrix", "tensor", "negative"])
def test_element_at_computed_index_is_captured(fn, make):
    assert_captured(fn, *make(), graphs=1)
