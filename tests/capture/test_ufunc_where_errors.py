"""A ufunc's ``where=`` under capture: NumPy computes only the elements the
mask selects, so the elements it skips raise no floating-point error.  The
graph computes every element and selects; capture puts a quiet value into the
skipped elements of the operands (capture/variables/numpy_calls.py,
``_skip_masked_elements``), so the jitted call warns, raises and returns
exactly what NumPy does.  Differential: warnings are recorded on both sides,
and ``np.errstate(all="raise")`` must not make the jitted call fall back."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


def _zeros_masked(a, b):
    return np.divide(a, b, out=np.zeros_like(a), where=b != 0)


def _log_masked(x):
    return np.log(x, out=np.full_like(x, -np.inf), where=x > 0)


def _sqrt_masked(x):
    return np.sqrt(x, out=np.zeros_like(x), where=x >= 0)


def _arccos_masked(x):
    return np.arccos(x, out=np.full_like(x, np.nan), where=np.abs(x) <= 1)


def _arcsin_masked(x):
    out = np.zeros_like(x)
    np.arcsin(x, out=out, where=np.abs(x) <= 1)
    return out


def _floor_divide_ints(a, b):
    return np.floor_divide(a, b, out=np.zeros_like(a), where=b != 0)


def _power_masked(x):
    return np.power(x, -1.5, out=np.ones_like(x), where=x > 0)


def _reciprocal_broadcast_mask(x):
    keep = (np.arange(x.shape[1]) % 2 == 0)   # a row mask broadcast over the rows
    return np.reciprocal(x, out=np.zeros_like(x), where=keep)


def _divide_scalar_numerator(b):
    return np.divide(1.0, b, out=np.full_like(b, 7.0), where=b != 0)


_F = np.array([[0.0, 1.0, -2.0, 4.0], [3.0, 0.0, -0.5, 9.0]])
_CASES = [
    (_zeros_masked, (np.arange(8.0).reshape(2, 4), _F)),
    (_zeros_masked, (np.arange(8.0, dtype=np.float32).reshape(2, 4), _F.astype(np.float32))),
    (_log_masked, (_F,)),
    (_sqrt_masked, (_F.astype(np.float32),)),
    (_arccos_masked, (_F / 2,)),
    (_arcsin_masked, (np.array([1.0, 0.5, -3.0, 2.0]),)),
    (_floor_divide_ints, (np.arange(8).reshape(2, 4), _F.astype(np.int64))),
    (_power_masked, (_F,)),
    (_reciprocal_broadcast_mask, (np.array([[1.0, 0.0, 2.0, 0.0], [4.0, 0.0, 8.0, 0.0]]),)),
    (_divide_scalar_numerator, (_F,)),
]


def _recorded(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, sorted(str(w.message) for w in caught if w.category is RuntimeWarning)


@pytest.mark.parametrize("fn, args", _CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(_CASES)])
def test_skipped_elements_do_not_warn(fn, args):
    want, want_warnings = _recorded(fn, *[a.copy() for a in args])
    jitted = frame.jit(fn)
    for _ in range(3):  # the first call traces; the later ones run the cached graph
        got, got_warnings = _recorded(jitted, *[a.copy() for a in args])
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
        assert got_warnings == want_warnings == []


@pytest.mark.parametrize("fn, args", _CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(_CASES)])
def test_one_graph_and_no_fallback_under_errstate_raise(fn, args):
    assert_same_as_eager(fn, *args)
    explained = frame.explain(fn)(*args)
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    errors = frame.stats().extra.get("graph_run_errors", 0)
    with np.errstate(all="raise"):
        want = fn(*[a.copy() for a in args])
        jitted = frame.jit(fn)
        for _ in range(2):
            np.testing.assert_array_equal(jitted(*[a.copy() for a in args]), want)
    # the graph raised no FloatingPointError (which would have rerun the call natively)
    assert frame.stats().extra.get("graph_run_errors", 0) == errors


def test_an_error_in_a_selected_element_still_warns_as_numpy():
    """A zero divisor the mask selects warns in NumPy: the jitted call too."""
    def f(a, b):
        return np.divide(a, b, out=np.zeros_like(a), where=b > -1)
    a, b = np.arange(1.0, 5.0), np.array([0.0, 1.0, 2.0, -3.0])
    want, want_warnings = _recorded(f, a, b)
    got, got_warnings = _recorded(frame.jit(f), a, b)
    np.testing.assert_array_equal(got, want)
    assert want_warnings == ["divide by zero encountered in divide"]
    assert got_warnings == want_warnings


def test_a_mask_of_all_false_or_all_true():
    def none(a, b):
        return np.divide(a, b, out=np.full_like(a, 3.0), where=np.zeros(a.shape, bool))

    def every(a, b):
        return np.divide(a, b, out=np.full_like(a, 3.0), where=np.ones(a.shape, bool))
    a, b = np.arange(4.0), np.array([1.0, 2.0, 4.0, 8.0])
    for fn in (none, every):
        want, want_warnings = _recorded(fn, a, b)
        got, got_warnings = _recorded(frame.jit(fn), a, b)
        np.testing.assert_array_equal(got, want)
        assert got_warnings == want_warnings


def test_the_quiet_value_is_found_by_running_the_ufunc():
    """1 is not quiet for arctanh (divide by zero), 2 is not (invalid): 0.5 is."""
    from capture.variables.base import TensorVariable
    from capture.variables.numpy_calls import _quiet_value
    args = [object.__new__(TensorVariable)]  # _quiet_value asks an array operand its type only
    assert _quiet_value(np.arctanh, args, [np.dtype(np.float64)]) == 0.5
    assert _quiet_value(np.divide, args * 2, [np.dtype(np.float32)] * 2) == 1
    assert _quiet_value(np.floor_divide, args * 2, [np.dtype(np.int64)] * 2) == 1
