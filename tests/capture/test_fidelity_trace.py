"""Tracing fidelity (issue 12, items 1, 2, 7): NumPy ``out=`` / ``where=``
writes, ``callable()`` and friends, and list operands converted as NumPy
converts them.  Every test compares the jitted function with plain Python."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import frame
from tests.capture.helpers import array, assert_same_as_eager, tensor
from tests.capture.test_corpus_numpy import _softmax as sklearn_softmax


def _x(shape=(2, 3), dtype="float32", seed=0):
    return array(shape, dtype, seed)


# -- 1. out= is an in-place write ---------------------------------------------------------

def exp_positional_out(X):
    np.exp(X, X)
    return X


def exp_positional_out_unused(X):
    np.exp(X, X)


def tanh_out_identity(X):
    r = np.tanh(X, out=X)
    return r is X, r


def maximum_out(X):
    np.maximum(X, 0, out=X)
    return X * 2


def divide_out(d, out):
    return np.divide(1.0, d, out=out)


def sqrt_positional(n):
    np.sqrt(n, n)
    return n


def out_tuple(X):
    return np.exp(X, out=(X,))


def out_broadcast(x, o):
    np.add(x, 1, out=o)
    return o


def out_other_dtype(x, o):
    np.multiply(x, 2, out=o)   # float32 result written into float64 (same_kind)
    return o


def out_casting_error(x, o):
    np.add(x, 1.5, out=o)      # float into int: UFuncTypeError natively
    return o


def out_where_mask(X, O):
    return np.exp(X, out=O, where=X > 0)


def out_where_list(X, O):
    np.negative(X, out=O, where=[True, False, True])
    return O


def out_where_false(X, O):
    return np.exp(X, out=O, where=False)


def where_without_out(X):
    m = X > 0
    r = np.exp(X, where=m)     # the other elements are uninitialised
    return np.where(m, r, 0)


def reduce_out(X, o):
    np.add.reduce(X, axis=0, out=o)
    return o


def sum_out(X, o):
    r = np.sum(X, axis=1, out=o)
    return r is o, o + 1


def sum_out_other_dtype(X, o):
    np.sum(X, axis=1, out=o)   # NumPy reduces in out's dtype: runs in NumPy
    return o


def method_out(X, o):
    X.clip(-1.0, 1.0, out=X)
    X.sum(axis=0, out=o)
    return X, o


def clip_out(X):
    np.clip(X, 0, 1, out=X)
    return X


def matmul_out(a, b, c):
    np.matmul(a, b, out=c)
    return c + 1


def dot_out(a, b, c):
    np.dot(a, b, out=c)
    return c


def add_at(X):
    np.add.at(X, [0, 1, 0], 1.0)
    return X




@pytest.mark.parametrize("fn", [exp_positional_out, exp_positional_out_unused, tanh_out_identity,
                                maximum_out, out_tuple, clip_out, add_at],
                         ids=lambda f: f.__name__)
def test_out_on_argument(fn):
    captured = None if fn is add_at else True  # ufunc.at: a graph break, NumPy runs it
    assert_same_as_eager(fn, _x(), captured=captured)


def test_out_positional_and_keyword_values():
    assert_same_as_eager(divide_out, array((2, 3), positive=True), np.zeros((2, 3), np.float32))
    assert_same_as_eager(sqrt_positional, array((2, 3), positive=True))
    assert_same_as_eager(sqrt_positional, array((2, 3), "int64"))  # casting error, natively


def test_out_broadcast_and_casting():
    assert_same_as_eager(out_broadcast, _x((3,)), np.zeros((2, 3), np.float32))
    assert_same_as_eager(out_broadcast, _x((2, 3)), np.zeros((3,), np.float32))  # ValueError
    assert_same_as_eager(out_other_dtype, _x(), np.zeros((2, 3), np.float64))
    assert_same_as_eager(out_casting_error, _x(), np.zeros((2, 3), np.int64))


@pytest.mark.filterwarnings("ignore:'where' used without 'out'")
def test_out_where():
    assert_same_as_eager(out_where_mask, _x(), np.full((2, 3), 7.0, np.float32))
    assert_same_as_eager(out_where_list, _x(), np.full((2, 3), 7.0, np.float32))
    assert_same_as_eager(out_where_false, _x(), np.full((2, 3), 7.0, np.float32))
    assert_same_as_eager(where_without_out, _x(), captured=None)


def test_reductions_with_out():
    assert_same_as_eager(reduce_out, _x(), np.zeros((3,), np.float32))
    assert_same_as_eager(sum_out, _x(), np.zeros((2,), np.float32))
    assert_same_as_eager(sum_out_other_dtype, _x(), np.zeros((2,), np.int64), captured=None)
    assert_same_as_eager(method_out, _x(), np.zeros((3,), np.float32))


def test_matmul_and_dot_out():
    a, b = _x((2, 3)), _x((3, 4), seed=1)
    assert_same_as_eager(matmul_out, a, b, np.zeros((2, 4), np.float32))
    assert_same_as_eager(dot_out, a, b, np.zeros((2, 4), np.float32), captured=None)


def test_sklearn_softmax():
    assert_same_as_eager(sklearn_softmax, _x((4, 5)), False)          # mutates the argument
    assert_same_as_eager(sklearn_softmax, _x((4, 5)), True, captured=None)  # np.copy: a graph break


def tensor_exp_out(t):
    r = np.exp(t, out=t)
    return r is t, t


def tensor_add_out(t, x):
    np.add(t, x, out=t)
    return t.sum()


def ndarray_into_tensor(x, t):
    return np.exp(x, out=t)


def tensor_where(t):
    return np.exp(t, out=t, where=True)  # frame's __array_ufunc__ refuses where=


def test_tensor_out():
    assert_same_as_eager(tensor_exp_out, tensor())
    assert_same_as_eager(tensor_add_out, tensor(), _x(seed=2))
    assert_same_as_eager(ndarray_into_tensor, _x(), tensor(seed=3))
    assert_same_as_eager(tensor_where, tensor())


# -- 2. callable() and attribute checks ---------------------------------------------------

class _WithCall:
    def __call__(self, v):
        return v + 1

    def method(self):
        return 1


class _Plain:
    pass


class _Meta(type):
    def __call__(cls, *args):
        return 0


class _WithMeta(metaclass=_Meta):
    pass


def branch_on_callable(x, obj):
    if callable(obj):
        return x + 1
    return x - 1


@pytest.mark.parametrize("obj", [_WithCall, _WithCall(), _WithCall().method,
                                 functools.partial(int, "3"), frame.nn.Linear(2, 2), frame.Tensor,
                                 _WithMeta, len, np.exp, _Plain(), tensor(), _x(), 3, [1]],
                         ids=lambda o: type(o).__name__)
def test_callable(obj):
    assert_same_as_eager(branch_on_callable, _x(), obj)


def has_call(x, obj):
    return x + 1 if hasattr(obj, "__call__") else x - 1


@pytest.mark.parametrize("obj", [tensor(), _x(), frame.nn.Parameter(tensor()), _WithCall()],
                         ids=lambda o: type(o).__name__)
def test_hasattr_call_of_instances(obj):
    # an instance's attribute comes from its class, not from the class's metaclass
    assert_same_as_eager(has_call, _x(), obj)


def test_hasattr_of_metaclass_attribute():
    assert_same_as_eager(has_call, _x(), _WithMeta, captured=None)


# -- 7. list operands become the arrays NumPy makes -----------------------------------------

LIST = [[0.1, 0.2], [0.3, 1e-9]]


def _list_cases():
    return {
        "np.add(list, a32)": lambda L, w: np.add(L, w),
        "a32 + list": lambda L, w: w + L,
        "a32 - list": lambda L, w: w - L,
        "list @ a32": lambda L, w: L @ w,
        "list @ list": lambda L, w: L @ L,
        "np.matmul(list, a32)": lambda L, w: np.matmul(L, w),
        "np.dot(list, a32)": lambda L, w: np.dot(L, w),
        "np.maximum(list, a32)": lambda L, w: np.maximum(L, w),
        "np.asarray(list) + a32": lambda L, w: np.asarray(L) + w,
        "a32 * tuple": lambda L, w: w * (2.0, 3.0),
        "a32 + [1e-9]": lambda L, w: w + [1e-9],
        "a32 + [complex]": lambda L, w: w + [1j, 2],
        "a32 + [bools]": lambda L, w: w + [True, False],
        "i32 + [ints]": lambda L, w: w.astype(np.int32) + [1, 2],
        "i32 + [big int]": lambda L, w: w.astype(np.int32) + [2 ** 70, 1],
        "np.where(m, list, 0.5)": lambda L, w: np.where(w > 0, L, 0.5),
        "np.concatenate([list, a32])": lambda L, w: np.concatenate([L, w]),
        "np.stack([a32 row, list row])": lambda L, w: np.stack([w[0], L[0]]),
        "np.clip(a32, list, 1.5)": lambda L, w: np.clip(w, [0.0, 0.5], 1.5),
        "a32.clip(list, 1.5)": lambda L, w: w.clip([0.0, 0.5], 1.5),
        "np.add([a32 rows], a64)": lambda L, w: np.add([w[0], w[1]], w.astype(np.float64)),
        "np.add([a32 item, float], a32)": lambda L, w: np.add([w[0, 0], 1.5], w),
        "np.add.reduce(list)": lambda L, w: np.add.reduce(L) + w,
        "a32 + 1.0 (weak)": lambda L, w: w + 1.0,
        "i32 + 2**40": lambda L, w: w.astype(np.int32) + 2 ** 40,
        "frame.add(list, t)": lambda L, w: frame.add(L, frame.tensor(w)),
        "t + list": lambda L, w: frame.tensor(w) + L,
        "np.add(t, list)": lambda L, w: np.add(frame.tensor(w), L),
    }


# NumPy runs these (a graph break or the whole call): no frame op, an object array,
# a list holding arrays, an exception
_NOT_CAPTURED = {"list @ list", "np.dot(list, a32)", "i32 + [big int]", "np.add([a32 rows], a64)",
                 "np.add([a32 item, float], a32)", "i32 + 2**40"}


@pytest.mark.parametrize("name", list(_list_cases()))
def test_list_operands(name):
    fn = _list_cases()[name]
    captured = None if name in _NOT_CAPTURED else True
    assert_same_as_eager(fn, LIST, array((2, 2), positive=True), captured=captured)


def list_matmul(L, w):
    return L @ w


def test_list_input_keeps_float64_and_is_captured():
    w = array((2, 2), positive=True)
    jitted = assert_same_as_eager(list_matmul, LIST, w)
    assert jitted(LIST, w).dtype == np.float64


def frame_op_on_list_of_tensors(t):
    return frame.add([t[0], t[1]], t)   # frame converts the list with np.asarray


def test_frame_op_on_list_holding_tensors():
    # the list's values must come from the traced tensors, never from their meta arrays
    assert_same_as_eager(frame_op_on_list_of_tensors, tensor(), captured=None)
