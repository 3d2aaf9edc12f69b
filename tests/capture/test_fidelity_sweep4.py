"""Focused differential tests of the fourth fidelity sweep (task HU,
``test_corpus_suites.py``): what the sweep found, one test per fix."""
from __future__ import annotations

import numpy as np

import frame

from .helpers import array, assert_captured, assert_same_as_eager


def _no_break(fn, *args, graphs=1):
    """``frame.explain``: the call is ``graphs`` graphs and no break."""
    out = frame.explain(fn)(*args)
    assert [r.reason for r in out.break_reasons] == []
    assert out.graph_count == graphs


class _Holder:
    def __init__(self):
        self.a = 1


# -- del of an attribute / a global the call set first ---------------------------------------------

def test_attribute_set_then_deleted_on_an_input_object():
    # the object never had ``tmp``: after the call it still has none (the
    # replay deleted an attribute the real object did not have: AttributeError)
    def f(x, obj):
        obj.tmp = x * 2
        del obj.tmp
        return hasattr(obj, "tmp"), x + 1
    assert_same_as_eager(f, array(), _Holder())
    _no_break(f, array(), _Holder())


def test_existing_attribute_reset_then_deleted():
    def f(x, obj):
        obj.a = x
        del obj.a
        return x * 2
    assert_same_as_eager(f, array(), _Holder())


def test_global_set_then_deleted():
    def f(x):
        global _SWEEP4_TMP
        _SWEEP4_TMP = x
        del _SWEEP4_TMP
        return x + 1
    assert_same_as_eager(f, array(), globals_to_check=[(globals(), "_SWEEP4_TMP")])
    assert "_SWEEP4_TMP" not in globals()


# -- slices -----------------------------------------------------------------------------------------

def test_slice_attributes_and_indices():
    def f(x, n):
        s = slice(1, None, 2)
        t = slice(1, n)
        return x[s], s.start, s.stop, s.step, t.stop, t.step, s.indices(len(x)), t.indices(10)
    assert_same_as_eager(f, array((5,)), 3)
    _no_break(f, array((5,)), 3, graphs=0)


# -- with on an instance made in the call -------------------------------------------------------------

class _Scaled:
    def __init__(self, factor):
        self.factor = factor
        self.inside = False

    def __enter__(self):
        self.inside = True
        return self.factor

    def __exit__(self, exc_type, exc, tb):
        self.inside = False
        return exc_type is KeyError


def test_with_on_an_instance_made_in_the_call():
    def f(x):
        cm = _Scaled(3.0)
        with cm as k:
            was = cm.inside
            y = x * k
        return y, was, cm.inside
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_with_on_an_instance_made_in_the_call_suppresses():
    def f(x):
        cm = _Scaled(2.0)
        with cm:
            y = x * 2
            {}["missing"]
        return y, cm.inside
    assert_same_as_eager(f, array(), captured=None)


# -- hash ------------------------------------------------------------------------------------------

def test_hash_of_constant_numbers_and_tuples():
    def f(x):
        return x * 2, hash((1, 2.5, None)), hash(-1), hash(7) == hash(7.0)
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_hash_of_a_str_is_not_folded():
    # a str's hash is salted per process: not a constant of a persisted entry
    def f(x):
        return x * 2, hash("abc")
    out = frame.explain(f, backend="cpu")(array())
    assert any("hash()" in r.reason for r in out.break_reasons)
    assert_same_as_eager(f, array(), captured=None)
