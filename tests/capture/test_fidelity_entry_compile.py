"""A cache entry whose generated source does not compile (a guard over a
source nested deeper than Python's parser allows, a parameter name the entry
cannot spell) never reaches the user as an internal error: the call runs
natively, with the WARN and the reason, as any call capture cannot handle.
Differential: the jitted call returns what the plain call returns."""
from __future__ import annotations

import types

import numpy as np
import pytest

import frame
from capture import codegen

from .helpers import assert_same_as_eager, last_entry


def _x():
    return frame.tensor(np.arange(3, dtype=np.float32))


def _explained(fn, *args):
    return frame.explain(fn)(*args)


def _reasons(fn, *args) -> list[str]:
    return [r.reason for r in _explained(fn, *args).break_reasons]


# --------------------------------------------------------------------------- user code

def count_entries(table, x):
    return x * len(table)


def nested_key(depth=250):
    key = 1
    for _ in range(depth):
        key = (key,)
    return key


class Node:
    pass


def chain(depth=250):
    """A linked list through an attribute that is read with ``getattr``."""
    root = node = Node()
    for _ in range(depth):
        nxt = Node()
        setattr(node, "__next", nxt)
        node = nxt
    node.value = 3.0
    return root


def walk(node, x):
    while hasattr(node, "__next"):
        node = getattr(node, "__next")
    return x * node.value


def reserved_parameter(__x):
    return __x * 2


def _renamed(names):
    def template(a, b):
        return a * b + 1
    code = template.__code__.replace(co_varnames=names)
    return types.FunctionType(code, template.__globals__, "renamed")


# --------------------------------------------------------------------------- tests

def test_a_dict_key_nested_too_deep_for_a_guard_runs_natively(caplog):
    x = _x()
    jitted = assert_same_as_eager(count_entries, {nested_key(): 1, "a": 2}, x, captured=False)
    assert "does not compile" in last_entry(jitted).reason.reason
    out = jitted({nested_key(): 1, "a": 2, "b": 3}, x)   # a second call: the native entry
    np.testing.assert_array_equal(out.numpy(), count_entries({1: 1, 2: 2, 3: 3}, x).numpy())
    assert any("does not compile" in r for r in _reasons(count_entries, {nested_key(): 1}, x))


def test_a_getattr_chain_nested_too_deep_for_a_guard_runs_natively():
    jitted = frame.jit(walk)
    np.testing.assert_array_equal(jitted(chain(), _x()).numpy(), walk(chain(), _x()).numpy())
    assert "does not compile" in last_entry(jitted).reason.reason
    short = chain(3)   # other calls may still be captured
    np.testing.assert_array_equal(jitted(short, _x()).numpy(), walk(short, _x()).numpy())


def test_a_parameter_name_capture_reserves_runs_natively():
    jitted = assert_same_as_eager(reserved_parameter, _x(), captured=False)
    assert "reserved" in last_entry(jitted).reason.reason
    np.testing.assert_array_equal(jitted(_x()).numpy(), reserved_parameter(_x()).numpy())


@pytest.mark.parametrize("names", [(".0", "b"), ("a", "not an identifier")])
def test_a_parameter_name_that_is_not_an_identifier_runs_natively(names):
    fn = _renamed(names)
    x = _x()
    jitted = frame.jit(fn)
    np.testing.assert_array_equal(jitted(x, x).numpy(), fn(x, x).numpy())
    np.testing.assert_array_equal(jitted(x, 2.0).numpy(), fn(x, 2.0).numpy())
    entries = jitted._frame_cache.entries
    assert not entries or all(e.native for e in entries)


def _failing_maker(monkeypatch, fails: int):
    """``maker_code`` raises SyntaxError on its first ``fails`` calls (an
    injected failure of the generated source)."""
    real = codegen.maker_code
    calls = []

    def maker(src, names):
        calls.append(src)
        if len(calls) <= fails:
            raise SyntaxError("injected")
        return real(src, names)
    monkeypatch.setattr(codegen, "maker_code", maker)
    return calls


def _captured_fn(w, x):
    return frame.tanh(x @ w) * 2.0


@pytest.mark.parametrize("fails", [1, 2, 3])
def test_an_entry_that_does_not_compile_runs_natively(monkeypatch, fails):
    """1: the graph entry fails, its native entry compiles; 2: the native entry
    fails too and is made with the guards that compile alone; 3: that fails
    as well, and an entry without guards runs every call natively."""
    w = frame.tensor(np.eye(3, dtype=np.float32))
    x = frame.tensor(np.ones((2, 3), np.float32))
    calls = _failing_maker(monkeypatch, fails)
    jitted = frame.jit(_captured_fn)
    np.testing.assert_array_equal(jitted(w, x).numpy(), _captured_fn(w, x).numpy())
    entry = last_entry(jitted)
    assert entry.native and "does not compile (SyntaxError: injected)" in entry.reason.reason
    assert len(calls) == fails + 1
    assert (entry.guards == []) == (fails == 3)
    np.testing.assert_array_equal(jitted(w, x + 1).numpy(), _captured_fn(w, x + 1).numpy())
