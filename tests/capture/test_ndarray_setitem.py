"""Item assignment into NumPy arrays under capture (``a[idx] = v``, ``a[idx] += v``,
writes through basic-index views), and indexing with several integer arrays:
jitted against plain Python, one graph where the write is modelled."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager

X = np.arange(12.0).reshape(3, 4)
XI = np.arange(12).reshape(3, 4)


def fill_slice(a):
    b = np.zeros((3, 4))
    b[1:3] = a[:2] * 2
    return b


def set_element(a):
    b = a * 1.0
    b[0, -1] = 7.0
    return b


def set_argument(a):
    a[0] = -1.0
    return a.sum()


def set_rows_by_array(a, rows):
    b = a.copy()
    b[rows] = a[0]
    return b


def loop_fill(a):
    out = np.zeros(len(a) - 2)
    for i in range(len(a) - 2):
        out[i] = a[i:i + 3].sum()
    return out


def ewma(a):
    out = np.zeros(a.shape)
    out[0] = a[0]
    for i in range(1, len(a)):
        out[i] = 0.5 * out[i - 1] + a[i]
    return out


def int_array_into_float(a):
    a[:, 1] = np.arange(3)
    return a


def float32_value_into_float64(a):
    a[1:, ::2] = np.ones((2, 2), np.float32) / 3
    return a


def python_int_into_int32(a):
    a[1] = -2 ** 31
    a[2] = True
    return a


def row_normalize(a):
    for i in range(a.shape[0]):
        a[i] = a[i] / a[i].sum()
    return a


def counts(a):
    c = np.zeros(3)
    for v in (0, 2, 2):
        c[v] += 1
    return c * a[0, :3]


def augmented_row(a):
    a[1] += 1
    return a


def augmented_column(a):
    a[:, 0] -= a[:, 0].mean()
    return a


def augmented_block_of_copy(a):
    b = a.copy()
    b[1:, 1:] *= 2
    return b


def write_through_view(a):
    v = a[1]
    v[2] = 100.0
    return a * 2


def write_through_view_of_view(a):
    v = a[1:]
    w = v[0]
    w[0] = 7.0
    return a, v


def return_written_view(a):
    v = a[0]
    v += 1
    return v


def write_twice_through_view(a):
    v = a[0, ::-1]
    v[0] = 9.0
    v[1] = 8.0
    return a


def new_axis_view(a):
    a[..., None][1] = 5.0
    return a


def duplicate_positions(a):
    a[[0, 0, 1]] = np.array([1.0, 2.0, 3.0])[:, None]
    return a


def cross_entropy_grad(p, y):
    n = p.shape[0]
    g = p.copy()
    g[np.arange(n), y] -= 1
    return g / n


def diagonal_by_two_arrays(a):
    b = np.zeros((4, 4))
    b[np.arange(4), np.arange(4)] = 1.0
    return b @ a.T


def clamp_negative(a):
    a[a < 0] = 0
    return a


def zero_rows_by_mask(a):
    b = a.copy()
    b[b[:, 0] > 3] = -1.0
    return b


def pick_two_arrays(a, i, j):
    return a[i, j], a[i[:, None], j], a[:, j[:2]][i[:2], 0]


def float_into_int(a):
    a[0] = 2.5  # NumPy truncates toward zero
    a[1, 1:] = -3.9
    a[2] = True
    return a


def numpy_scalars(a, s):
    a[0] = np.float64(1 / 3)  # rounded to float32 as NumPy rounds it
    a[1, 0] = np.int64(7)
    a[1, 1] = s  # a NumPy scalar computed in the function
    return a


P = np.random.default_rng(0).random((5, 3))
Y = np.array([0, 2, 1, 1, 0])
CAPTURED = [
    (fill_slice, (X,)), (set_element, (X,)), (set_argument, (X,)),
    (set_rows_by_array, (X, np.array([2, 0]))), (loop_fill, (np.arange(8.0),)), (ewma, (X,)),
    (int_array_into_float, (X,)), (float32_value_into_float64, (X,)),
    (python_int_into_int32, (np.zeros((3, 2), np.int32),)), (row_normalize, (X + 1,)),
    (counts, (X,)), (augmented_row, (X,)), (augmented_column, (X,)),
    (augmented_block_of_copy, (X,)), (write_through_view, (X,)),
    (write_through_view_of_view, (X,)), (return_written_view, (X,)),
    (write_twice_through_view, (X,)), (new_axis_view, (X,)), (duplicate_positions, (X,)),
    (cross_entropy_grad, (P, Y)), (diagonal_by_two_arrays, (X,)),
    (pick_two_arrays, (X, np.array([2, 0, 1]), np.array([3, -1, 0]))),
    (clamp_negative, (X - 5,)), (zero_rows_by_mask, (X,)), (float_into_int, (XI,)),
    (numpy_scalars, (X.astype(np.float32), np.float64(2.5))),
]


@pytest.mark.parametrize("fn,args", CAPTURED, ids=[f.__name__ for f, _ in CAPTURED])
def test_item_assignment_is_captured(fn, args):
    jitted = assert_same_as_eager(fn, *args)
    assert frame.explain(fn)(*(np.array(a, copy=True) for a in args)).graph_break_count == 0


def nan_into_int(a):
    a[0] = float("nan")  # NumPy raises ValueError
    return a


def overflowing_numpy_scalar(a):
    a[0] = np.float64(1e300)  # NumPy warns (overflow in cast)
    return a


def out_of_range_int(a):
    a[0] = 2 ** 31
    return a


def float_array_into_int(a):
    a[0] = np.array([1.5, -2.5])
    return a


def view_read_after_base_write(a):
    v = a[0]
    a[0, 1] = 5.0
    return v


def sibling_view(a):
    v, w = a[0], a[1]
    v[0] = 9.0
    return w.sum(), a


def transposed_view(a):
    b = a.T
    b[0] = 0.0
    return a


def bad_broadcast(a):
    a[:, 1] = np.arange(4.0)
    return a


def out_of_bounds(a):
    a[5] = 1.0
    return a


def mask_several_values(a):
    a[a > 2] = np.arange(9.0)  # as many values as the mask selects: data-dependent
    return a


def mask_wrong_shape(a):
    a[np.array([True, False])] = 1.0
    return a


NOT_MODELLED = [
    (mask_several_values, (X,)), (mask_wrong_shape, (X,)),
    (nan_into_int, (XI,)), pytest.param(overflowing_numpy_scalar, (X.astype(np.float32),), marks=pytest.mark.filterwarnings(
        "ignore:overflow encountered in cast:RuntimeWarning")),
    (out_of_range_int, (np.zeros(3, np.int32),)),
    (float_array_into_int, (np.zeros((2, 2), np.int64),)), (view_read_after_base_write, (X,)),
    (sibling_view, (X,)), (transposed_view, (X,)), (bad_broadcast, (X,)), (out_of_bounds, (X,)),
]


@pytest.mark.parametrize("fn,args", NOT_MODELLED,
                         ids=[(c.values if hasattr(c, "values") else c)[0].__name__ for c in NOT_MODELLED])
def test_unmodelled_writes_keep_numpy_semantics(fn, args):
    """Value-dependent casts, stale views, writes through other views and errors
    run natively: the same result, or NumPy's own exception."""
    assert_same_as_eager(fn, *args, captured=None)


def test_a_long_fill_loop_runs_natively_with_its_reason():
    """Past ITEM_WRITES_PER_ARRAY item assignments into one array the trace
    stops: NumPy's in-place writes beat an unrolled graph of that many ops."""
    from capture.translation import ITEM_WRITES_PER_ARRAY

    def fill(a, n):
        out = np.zeros((n, a.shape[1]))
        for i in range(n):
            out[i] = a[i % a.shape[0]] * 2.0
        return out

    short = frame.explain(fill)(X, ITEM_WRITES_PER_ARRAY)
    assert short.graph_break_count == 0
    long = frame.explain(fill)(X, ITEM_WRITES_PER_ARRAY + 1)
    (reason,) = [r.reason for r in long.break_reasons]
    assert reason.startswith(f"more than {ITEM_WRITES_PER_ARRAY} item assignments into one "
                             f"array (a loop filling it runs natively: NumPy writes in place)")
    assert_same_as_eager(fill, X, ITEM_WRITES_PER_ARRAY + 1, captured=None)
    assert_same_as_eager(fill, X, 5)


# -- a NumPy integer scalar stored into a signed integer array ------------------------------------
# NumPy stores it at a basic index as a Python int: out of the dtype's range it raises
# OverflowError; an unsigned target or an advanced index wraps (as an array value does).
# The scalar here is computed from the data, so whether it fits is a run-time check.

def store_sum_at_int(a, b):
    a[0] = b.sum()
    return a


def store_and_at_slice(a, b):
    a[1:] = b & b
    return a


def fill_with_max(a, b):
    a.fill(b.max())
    return a


def store_max_at_ellipsis_of_row(a, b):
    a[0, ...] = b.max()
    return a


def store_sum_at_positions(a, b):
    a[[0, 2]] = b.sum()   # advanced: wraps
    return a


def store_sum_under_mask(a, b):
    a[a > 1] = b.sum()    # advanced: wraps
    return a


def store_at_dynamic_position(a, b):
    a[int(b.argmin())] = b.max()
    return a


@pytest.mark.parametrize("fn", [store_sum_at_int, store_and_at_slice, fill_with_max,
                                store_max_at_ellipsis_of_row, store_sum_at_positions,
                                store_sum_under_mask, store_at_dynamic_position],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int64"])
@pytest.mark.parametrize("values", [[300, 5], [3, 5], [-200, 1], [2**40, 0]], ids=str)
def test_numpy_integer_scalar_stored_into_an_integer_array(fn, dtype, values):
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=dtype)
    assert_same_as_eager(fn, a, np.array(values), captured=None)


def test_a_scalar_that_fits_stays_captured():
    jitted = assert_same_as_eager(store_sum_at_int, np.array([1, 2, 3], np.int8), np.array([3, 5]))
    entry = jitted._frame_cache.entries[0]
    assert entry.graph is not None and not entry.breaks
