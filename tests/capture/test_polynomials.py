"""``np.polyval``, ``np.polyder`` and ``np.fix`` are graph ops with NumPy's
semantics: Horner's rule step by step as NumPy writes it (so each
intermediate has NumPy's dtype under NEP 50 and NumPy's rounding), the
derivative's int64 factors (float32 coefficients give float64), and ``np.fix``
as NumPy 2's ``np.trunc``.  Each case runs natively and jitted over dtypes,
must be one graph with no break, and gives NumPy's bits where the cpu
executable runs the first call."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import capture
import frame

from .corpus import _setting
from .helpers import assert_same_as_eager

DTYPES = ("float32", "float64", "int64", "int8")


def values(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(n) * 3).astype(dtype)
    return rng.integers(-5, 6, n).astype(dtype)


FUNCTIONS = {
    "polyval": lambda p, x: np.polyval(p, x),
    "polyval_of_scalar": lambda p, x: np.polyval(p, 1.5),
    "polyval_int_scalar": lambda p, x: np.polyval(p, 3),
    "polyval_list_coefficients": lambda p, x: np.polyval([2.0, -1.0, 0.5], x),
    "polyval_of_column": lambda p, x: np.polyval(p, x.reshape(-1, 1)[::2]),
    "polyder": lambda p, x: np.polyder(p),
    "polyder_twice": lambda p, x: np.polyder(p, 2),
    "polyval_of_derivative": lambda p, x: np.polyval(np.polyder(p), x) * x,
    "fix": lambda p, x: np.fix(x),
    "fix_of_expression": lambda p, x: np.fix(x * 2.5 - 1),
    "newton_step": lambda p, x: x - np.polyval(p, x) / (np.polyval(np.polyder(p), x) + 100.0),
}


@pytest.mark.parametrize("xdtype", DTYPES)
@pytest.mark.parametrize("pdtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_polynomial_functions(name, pdtype, xdtype):
    fn = FUNCTIONS[name]
    p, x = values(5, pdtype, 1), values(8, xdtype, 2)
    assert_same_as_eager(fn, p, x)
    out = frame.explain(fn)(*copy.deepcopy((p, x)))
    assert out.graph_break_count == 0, [r.reason for r in out.break_reasons]
    if _setting() in ("cpu", "default"):
        capture.reset_caches()
        with np.errstate(all="ignore"):
            want, got = fn(p, x), frame.jit(fn)(p, x)
        assert type(want) is type(got) and want.dtype == got.dtype
        assert np.array_equal(want, got, equal_nan=want.dtype.kind == "f")


def test_fix_keeps_signed_zeros_and_non_finite_values():
    x = np.array([-0.5, -0.0, 0.0, 0.5, -2.5, 2.5, np.inf, -np.inf, np.nan], np.float32)
    got = frame.jit(np.fix)(x)
    assert np.array_equal(np.signbit(got), np.signbit(np.fix(x)))
    assert np.array_equal(got, np.fix(x), equal_nan=True)


@pytest.mark.parametrize("call", [
    lambda p: np.polyder(p, -1),           # NumPy raises ValueError
    lambda p: np.polyder(p, 7),            # an empty result
    lambda p: np.polyder(p, 0) is p,       # NumPy returns p itself
    lambda p: np.polyval(p.reshape(2, 3), 2.0),
    lambda p: np.fix(p, out=np.empty_like(p)),
], ids=["negative_order", "empty_result", "order_zero_is_p", "two_d_coefficients", "out"])
def test_what_is_not_modelled_runs_natively(call):
    """Uses outside the model are graph breaks: NumPy runs them, with its errors."""
    assert_same_as_eager(call, np.arange(6.0), captured=None)


def test_on_frame_tensors():
    """``Tensor.__array_function__`` gives Tensors with NumPy's values."""
    p, x = np.array([1.0, -2.0, 0.25], np.float32), np.linspace(-2, 2, 5)
    got = np.polyval(frame.tensor(p), frame.tensor(x))
    assert isinstance(got, frame.Tensor)
    np.testing.assert_array_equal(got.numpy(), np.polyval(p, x))
    np.testing.assert_array_equal(np.polyder(frame.tensor(p)).numpy(), np.polyder(p))


def _warnings_of(fn, *args):
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [(w.category, str(w.message), w.lineno) for w in seen]


def test_fix_warns_as_this_numpy_does_at_every_call():
    """NumPy 2.5 deprecates ``np.fix`` (a DeprecationWarning at every call, from
    the caller's line); an older NumPy says nothing.  The jitted call warns the
    same, on the first call and on cached ones."""
    def f(x):
        y = x * 2
        return np.fix(y) + 1

    jitted = frame.jit(f)
    x = np.array([-1.25, 0.5, 3.75])
    for _ in range(3):
        (want, want_seen), (got, got_seen) = _warnings_of(f, x), _warnings_of(jitted, x)
        np.testing.assert_array_equal(got, want)
        assert got_seen == want_seen
    assert frame.explain(f)(x).graph_break_count == 0
