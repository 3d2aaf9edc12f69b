"""Core values of capture are types, not strings (issue 14, item 6): the
traced code raising is ``UserCodeRaises`` (reported with kind
``USER_RAISES``), a TensorVariable's kind is a ``TensorKind``.  Each case is
also compared with the plain function."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from capture.errors import CATALOGUE, USER_RAISES, BreakReason, Unsupported, UserCodeRaises
from capture.variables.base import NDARRAY, NPSCALAR, TENSOR, TensorKind, TensorVariable

from .helpers import assert_same_as_eager, last_entry, tensor


def test_user_code_raises_is_its_own_type():
    e = UserCodeRaises("IndexError: tuple index out of range")
    assert isinstance(e, Unsupported) and e.kind == USER_RAISES and USER_RAISES in CATALOGUE
    assert BreakReason(USER_RAISES, "r", "f.py:1").user_raises
    assert not BreakReason("unsupported_call", "r", "f.py:1").user_raises


def test_raising_function_runs_natively_with_its_reason():
    def f(x, t):
        return x + t[3]

    x = tensor((2,))
    assert_same_as_eager(f, x, (1, 2))
    jitted = frame.jit(f)
    with pytest.raises(IndexError):
        jitted(x, (1, 2))
    entry = last_entry(jitted)
    assert entry.native and entry.reason.user_raises and entry.reason.kind == USER_RAISES


class _Obj:
    a = 1.5


@pytest.mark.parametrize("name", ["a", "b"])
def test_getattr_default_and_hasattr(name):
    """``getattr(o, n, default)`` and ``hasattr`` catch exactly the traced
    attribute error (a ``UserCodeRaises``)."""
    def f(x, o):
        return x * getattr(o, name, 3.0) + (1.0 if hasattr(o, name) else 2.0)

    assert_same_as_eager(f, tensor((2,)), _Obj())


def test_tensor_kinds_are_an_enum():
    assert (TENSOR, NDARRAY, NPSCALAR) == (TensorKind.TENSOR, TensorKind.NDARRAY,
                                           TensorKind.NPSCALAR)
    assert str(TENSOR) == "tensor" and TENSOR != "tensor"
    meta = np.zeros(2, np.float32)
    assert repr(TensorVariable(meta, NDARRAY)) == "Tensor(ndarray float32[2])"


def test_values_of_a_trace_carry_tensor_kinds(monkeypatch):
    """A trace over a tensor, an array and a NumPy scalar makes TensorVariables
    of each kind, every one a ``TensorKind``."""
    def f(x, a, s):
        return x + 1, a * 2, a.sum() + s

    args = (tensor((2,)), np.ones(2, np.float32), np.float32(2.0))
    assert_same_as_eager(f, *args)
    seen = []
    orig = TensorVariable.__init__

    def init(self, meta, kind, *rest, **kwargs):
        seen.append(kind)
        orig(self, meta, kind, *rest, **kwargs)

    monkeypatch.setattr(TensorVariable, "__init__", init)
    frame.jit(f)(tensor((3,)), np.ones(3, np.float32), np.float32(2.0))  # (a new translation)
    assert seen and all(isinstance(k, TensorKind) for k in seen)
    assert {TENSOR, NDARRAY, NPSCALAR} <= set(seen)


def test_jit_options_are_a_frozen_dataclass():
    """``frame.jit``'s options: a frozen ``JitOptions`` (``frame.explain``
    re-makes a jitted function from them, with ``full_graph`` off)."""
    import dataclasses

    from capture.jit import JitOptions

    def f(x):
        return x * 2

    jitted = frame.jit(f, backend="cpu", full_graph=True)
    options = jitted._frame_options
    assert options == JitOptions("cpu", True, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.backend = "openvino"
    out = frame.explain(jitted)(tensor((2,)))
    assert out.graph_count == 1 and not out.break_reasons
    assert_same_as_eager(f, tensor((2,)), backend="cpu")
