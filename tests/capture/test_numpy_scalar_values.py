"""NumPy scalars of the frame (``np.float64``, ``np.float32``, ``np.float16``,
``np.int64``, ``np.int32``) as arguments and live across graph breaks.

They are guarded by type where they are read and by value only where the
trace uses the value (``capture/variables/scalars.py``), like Python's
ints and floats: arithmetic between scalars is recomputed by the entry with
NumPy's own scalars (so results keep NumPy's types: ``np.float32(2) + 1`` is
``np.float32``), and a scalar whose value guard failed once becomes a graph
input of its own dtype where it meets an array (NumPy scalars are strongly
typed).  An accumulator ``total += x.sum()`` live at a break in a loop used to
recompile the resume function at every iteration (its value guard)."""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


pytestmark = pytest.mark.usefixtures("quiet_fresh_stats")


def accumulate_with_a_break(xs, w):
    total = np.float64(0.0)
    count = 0
    for x in xs:
        h = np.maximum(x @ w, 0.0)
        total += h.sum()
        if float(h.max()) > 0.5:   # a break at every iteration
            count += 1
    return total, count, total / max(count, 1)


def test_accumulator_across_breaks_does_not_recompile():
    rng = np.random.default_rng(0)
    w = rng.random((3, 2))
    jitted = frame.jit(accumulate_with_a_break)
    for seed in range(4):
        xs = list(np.random.default_rng(seed).random((5, 3)))
        assert_same_as_eager(jitted, xs, w, captured=None)
    # once per resume function, its value guard fails and it becomes a graph input
    reasons = [str(r) for r in frame.stats().recompile_reasons if "total" in str(r)]
    assert all("total becomes a graph input" in r for r in reasons), reasons
    assert len(reasons) <= 2, reasons


def scale_and_derive(x, s):
    return x * s, s * 2, s + 1, -s, s / 3, s // 2, s ** 2, s > 1, abs(s), float(s), math.sqrt(s)


SCALARS = [np.float32(2.5), np.float32(3.0), np.float64(4.5), np.float16(1.5), np.int64(3),
           np.int32(7), np.float32(0.25)]


@pytest.mark.parametrize("array_dtype", ["float32", "float64", "int32"])
def test_scalars_keep_numpy_types_over_calls(array_dtype):
    """One jitted function called with several NumPy scalars (values change,
    then types): every result has the plain function's type and dtype, also
    once the scalar became a graph input (a strongly typed operand)."""
    jitted = frame.jit(scale_and_derive)
    for s in SCALARS:
        x = np.arange(1, 4).astype(array_dtype)
        assert_same_as_eager(jitted, x, s, captured=None)


def test_a_dynamic_numpy_scalar_is_one_graph_input():
    def step(w, g, lr):
        return w - lr * g
    jitted = frame.jit(step)
    w, g = np.ones(3, np.float32), np.full(3, 0.5, np.float32)
    for lr in (np.float32(0.1), np.float32(0.2), np.float32(0.3), np.float32(0.4)):
        got, want = jitted(w, g, lr), step(w, g, lr)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert frame.stats().recompiles == 1   # the value changed once: dynamic from then on
    # a float64 learning rate: strongly typed, the result is float64, as in NumPy
    out = jitted(w, g, np.float64(0.5))
    assert out.dtype == np.float64 and np.array_equal(out, step(w, g, np.float64(0.5)))


def overflowing(s, x):
    return s * s, x + 1


def test_scalar_overflow_warns_once_or_raises_as_numpy():
    """Scalar arithmetic of NumPy scalars is not recomputed by the entry: it
    would run twice (the guard, then the rebuild) and warn twice."""
    jitted = frame.jit(overflowing)
    for s in (np.int64(5), np.int64(6), np.int64(2 ** 62), np.int64(7), np.int64(2 ** 62)):
        assert_same_as_eager(jitted, s, np.ones(2), captured=None)
        with pytest.warns(RuntimeWarning) if s > 2 ** 60 else _no_warning() as caught:
            jitted(s, np.ones(2))
        assert len(caught or ()) == (1 if s > 2 ** 60 else 0)
        with np.errstate(over="raise"):
            if s > 2 ** 60:
                with pytest.raises(FloatingPointError):
                    jitted(s, np.ones(2))


def nan_scalars(s, x):
    return x + s, s != s, np.isnan(s)


def test_nan_and_infinite_numpy_scalars():
    jitted = frame.jit(nan_scalars)
    for s in (np.float32(1.0), np.float32("nan"), np.float32("inf"), np.float32(-0.0)):
        assert_same_as_eager(jitted, s, np.ones(2, np.float32), captured=None)


@contextlib.contextmanager
def _no_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def ufuncs_of_a_scalar(x, s):
    return np.sqrt(s) * x, np.sign(s - 2.5), np.exp(s) + 1.0


def test_a_dynamic_numpy_float_is_a_ufunc_operand():
    """``np.sign(fm)`` of a dynamic NumPy float is computed by the graph (a NumPy
    scalar result), not read by value: one recompile, then none."""
    jitted = frame.jit(ufuncs_of_a_scalar)
    for s in (np.float64(2.0), np.float64(3.0), np.float64(4.0), np.float64(0.5)):
        x = np.arange(3.0)
        got, want = jitted(x, s), ufuncs_of_a_scalar(x, s)
        assert [type(v) for v in got] == [type(v) for v in want]
        assert all(np.allclose(g, w) for g, w in zip(got, want))
    assert frame.stats().recompiles == 1, frame.stats().recompile_reasons
