"""Guards are built by ``GuardSet`` from sources and a ``GuardKind``; what an
entry binds from the called function (closure cells, globals) follows from the
guards' and loads' sources (issue 14, item 3).  Each case is also compared
with the plain function."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from capture.guards import GuardKind
from capture.sources import CLOSURE, FRAME_GLOBALS, ClosureSource, GlobalSource

from .helpers import assert_same_as_eager, last_entry, tensor


def _kinds(jitted) -> set:
    entry = last_entry(jitted)
    assert entry.guards
    for g in entry.guards:
        assert isinstance(g.kind, GuardKind), g
    return {g.kind for g in entry.guards}


def _run(fn, *args, **kwargs):
    """Differential check, then the jitted entry's guard kinds."""
    assert_same_as_eager(fn, *args, **kwargs)
    jitted = frame.jit(fn)
    jitted(*args)
    return jitted, _kinds(jitted)


def _helper(x, scale=2.0, *, shift=1.0):
    return x * scale + shift


class _Box:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return x * self.w


def test_values_and_relations():
    def f(t, a, n, flag, pair, d, box, same):
        y = t * n if flag else t
        if same is t:
            y = y + 1
        if pair is d:
            y = y - 1
        return y + a.sum() + pair[0] + d["k"] + box.apply(t) + len(pair)

    t = tensor((2,))
    _, kinds = _run(f, t, np.ones(2, np.float32), 3, True, (1, 2), {"k": 1.5},
                    _Box(2.0), t)
    expected = {GuardKind.TENSOR, GuardKind.NDARRAY, GuardKind.CONSTANT, GuardKind.TYPE_AND_LEN,
                GuardKind.DICT_KEYS, GuardKind.TYPE_IS, GuardKind.ALIAS, GuardKind.SAME_OUTCOME,
                GuardKind.CLASS_ATTR, GuardKind.NO_INSTANCE_ATTR, GuardKind.NOT_IN_GLOBALS}
    assert expected <= kinds, expected - kinds


def test_called_functions_and_modules():
    def f(x):
        import math
        return _helper(x, 3.0) + math.pi

    _, kinds = _run(f, tensor((2,)))
    assert {GuardKind.IDENTITY, GuardKind.CODE, GuardKind.DEFAULTS, GuardKind.KWDEFAULTS,
            GuardKind.MODULE_LOADED} <= kinds


def test_in_place_writes():
    def f(x, y):
        x += y
        return x * 2

    _, kinds = _run(f, tensor((2,)), tensor((2,), seed=1))
    assert {GuardKind.WRITEABLE, GuardKind.DISJOINT} <= kinds


def test_read_only_and_from_numpy():
    def f(a):
        return frame.from_numpy(a) + 1

    _, kinds = _run(f, np.ones(3, np.float32))
    assert GuardKind.C_CONTIGUOUS in kinds

    def g(a):
        a += 1
        return a

    ro = np.ones(3, np.float32)
    ro.flags.writeable = False
    assert_same_as_eager(g, ro, captured=None)
    jitted = frame.jit(g)
    with pytest.raises(ValueError):
        jitted(ro)
    assert GuardKind.READ_ONLY in _kinds(jitted)


def test_grad_mode():
    def f(x):
        return x * 2 if frame.autograd.is_grad_enabled() else x

    _, kinds = _run(f, tensor((3,)))
    assert GuardKind.GRAD_MODE in kinds


def _make(c):
    def f(x):
        return x + c
    return f


def test_closure_cells_are_bound_from_sources():
    """The entry binds the closure (and globals) exactly when a guard or a
    load reads them; the entry serves each closure of one code object with its
    own cells."""
    f1, f2 = _make(1.0), _make(5.0)
    x = tensor((2,))
    assert_same_as_eager(f1, x)
    jitted1, jitted2 = frame.jit(f1), frame.jit(f2)
    np.testing.assert_array_equal(jitted1(x).numpy(), f1(x).numpy())
    np.testing.assert_array_equal(jitted2(x).numpy(), f2(x).numpy())
    entry = last_entry(jitted1)
    reads = frozenset().union(*(s.frame_reads() for g in entry.guards for s in g.sources))
    assert any(isinstance(s.root, ClosureSource) for g in entry.guards for s in g.sources)
    assert CLOSURE in reads
    assert f"{CLOSURE} = __fn.__closure__" in entry.source


def test_globals_bound_from_sources():
    def f(x):
        return _helper(x)

    jitted, _ = _run(f, tensor((2,)))
    entry = last_entry(jitted)
    assert any(isinstance(s.root, GlobalSource) for g in entry.guards for s in g.sources)
    assert f"{FRAME_GLOBALS} = __fn.__globals__" in entry.source
    assert f"{CLOSURE} = " not in entry.source
