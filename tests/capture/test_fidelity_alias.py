"""An in-place write into an input that shares memory with another input
(``g(X, X[:])``, ``g(X, X)``, a Tensor and its NumPy view): the graph copies
inputs in and writes results back, which is only right when the written
arrays alias nothing else.  Such calls run natively under a guard; calls with
separate arrays are still captured.  (Before, the fresh entry's aliasing guard
rejected the very arguments it was made for: RuntimeError.)"""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


def add_into_second(x, o):
    o += 1
    return x.sum()


def scale_both(a, b):
    a *= 2
    b += a
    return a + b


def ufunc_out_into_other(x, o):
    np.exp(x, out=o)
    return o - x


def _x():
    return np.arange(1, 7, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("fn, alias", [
    (f, a) for f in (add_into_second, scale_both, ufunc_out_into_other) for a in ("same", "view")
] + [(add_into_second, "overlap")], ids=lambda v: getattr(v, "__name__", v))
def test_in_place_write_into_aliased_inputs(fn, alias):
    # deep copies would separate the aliases: compare by hand, on fresh copies
    xn = _x(); yn = {"same": xn, "view": xn[:], "overlap": xn.reshape(-1)[1:4].reshape(1, 3)}[alias]
    native = fn(xn, yn)
    xj = _x(); yj = {"same": xj, "view": xj[:], "overlap": xj.reshape(-1)[1:4].reshape(1, 3)}[alias]
    jitted = frame.jit(fn, backend="cpu")(xj, yj)
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(native))
    np.testing.assert_array_equal(xj, xn)
    np.testing.assert_array_equal(yj, yn)


@pytest.mark.parametrize("fn", [add_into_second, scale_both, ufunc_out_into_other],
                         ids=lambda f: f.__name__)
def test_separate_inputs_are_still_captured(fn):
    assert_same_as_eager(fn, _x(), _x() + 1)


def test_aliased_then_separate_calls_each_right():
    jitted = frame.jit(scale_both, backend="cpu")
    for aliased in (True, False, True, False):
        xn, xj = _x(), _x()
        yn, yj = (xn, xj) if aliased else (_x() + 1, _x() + 1)
        native = scale_both(xn, yn)
        out = jitted(xj, yj)
        np.testing.assert_array_equal(out, native)
        np.testing.assert_array_equal(xj, xn)
        np.testing.assert_array_equal(yj, yn)


def test_an_entry_that_rejects_its_own_arguments_runs_natively(monkeypatch, caplog):
    """The safety net for a capture bug: a fresh entry whose guards fail on the
    arguments it was made for is dropped and the function runs natively, with
    one WARN naming the guard (it raised RuntimeError)."""
    from capture import codegen

    real = codegen._mutation_guards

    def broken(tr):
        real(tr)
        tr.guards.add("False", "a guard capture got wrong")
    monkeypatch.setattr(codegen, "_mutation_guards", broken)

    def f(x):
        return x * 2 + 1
    jitted = frame.jit(f, backend="cpu")
    with caplog.at_level("WARNING", logger="frame"):
        for _ in range(3):
            np.testing.assert_array_equal(jitted(_x()), f(_x()))
    warned = [r for r in caplog.records if "rejected its own arguments" in r.getMessage()]
    assert len(warned) == 1 and "a guard capture got wrong" in warned[0].getMessage()
    assert jitted._frame_cache.entries == [] and jitted._frame_cache.native_forever
