"""User classes and ``functools.partial`` under capture (issue 15, items 2 and 3):
the mechanisms behind ``test_coverage_classes.py`` — an instance made in the
function is built by the entry only when it escapes, guards on class
attributes and on partials passed in, breaks that name the class."""
from __future__ import annotations

import dataclasses
import functools
import traceback

import numpy as np
import pytest

import capture
import frame

from .helpers import CompileCounter, array, assert_same_as_eager, last_entry


class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def total(self):
        return self.a + self.b


class Holder:
    def __init__(self):
        self.child = None


class Scaled:
    factor = 2.0

    def __init__(self, x):
        self.x = x

    def value(self):
        return self.x * self.factor


def _explain(fn, *args):
    capture.reset_caches()
    out = frame.explain(fn)(*args)
    return out.graph_count, [f"{r.kind}: {r.reason}" for r in out.break_reasons]


def test_instance_that_never_escapes_costs_nothing():
    def f(x):
        p = Pair(x * 2, x + 1)
        return p.total()

    jitted = assert_same_as_eager(f, array())
    entry = last_entry(jitted)
    assert object.__new__ not in entry.namespace.values()   # nothing built after the graph
    assert len(entry.graph.outputs) == 1
    assert _explain(f, array()) == (1, [])


def test_escaping_instance_is_built_with_its_final_attributes():
    def f(x):
        p = Pair(x * 2, 1.0)
        p.b = p.b + 1
        p.c = "extra"
        return p, p

    jitted = assert_same_as_eager(f, array())
    assert object.__new__ in last_entry(jitted).namespace.values()
    r1, r2 = jitted(array())
    assert r1 is r2 and type(r1) is Pair and list(vars(r1)) == ["a", "b", "c"] and r1.b == 2.0


def test_instance_referring_to_itself():
    def f(x):
        p = Pair(x + 1, None)
        p.b = p
        return p

    result = assert_same_as_eager(f, array())(array())
    assert result.b is result
    assert _explain(f, array()) == (1, [])


def test_new_instance_stored_on_an_argument_object():
    def f(holder, x):
        holder.child = Pair(x * 3, [x])
        return holder.child.a + 1

    assert_same_as_eager(f, Holder(), array())
    assert _explain(f, Holder(), array()) == (1, [])


def test_instance_live_across_a_graph_break():
    def f(x):
        p = Pair(x * 2, 3.0)
        print("step")
        return p.total() + 1

    assert_same_as_eager(f, array())
    graphs, breaks = _explain(f, array())
    assert graphs == 2 and len(breaks) == 1 and "print" in breaks[0]


def test_second_call_is_a_cache_hit():
    def f(x):
        cfg = _Config(0.5)
        return x * cfg.lr + cfg.momentum

    counter = CompileCounter()
    counter.reset()
    jitted = frame.jit(f)
    jitted(array())
    jitted(array(seed=1))
    assert counter.translations == 1


def test_class_attribute_change_is_seen():
    def f(x):
        return Scaled(x).value()

    jitted = frame.jit(f)
    x = array()
    np.testing.assert_allclose(jitted(x), x * 2.0, rtol=1e-6)
    Scaled.factor = 5.0
    try:
        np.testing.assert_allclose(jitted(x), x * 5.0, rtol=1e-6)
    finally:
        Scaled.factor = 2.0
    assert _explain(f, x) == (1, [])


def test_replaced_init_is_seen():
    class Local:
        def __init__(self, v):
            self.v = v * 2

    def f(x):
        return Local(x).v

    jitted = frame.jit(f)
    x = array()
    np.testing.assert_allclose(jitted(x), x * 2, rtol=1e-6)
    assert _explain(f, x) == (1, [])

    def new_init(self, v):
        self.w = v

    Local.__init__ = new_init
    with pytest.raises(AttributeError, match="'Local' object has no attribute 'v'"):
        jitted(x)


@dataclasses.dataclass
class _Config:
    lr: float
    momentum: float = 0.9
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class _Frozen:
    scale: float


def test_frozen_dataclass_write_raises_at_the_users_line():
    def f(x):
        cfg = _Frozen(2.0)
        cfg.scale = 3.0   # the line of the error
        return x * cfg.scale

    assert_same_as_eager(f, array())
    with pytest.raises(dataclasses.FrozenInstanceError) as info:
        frame.jit(f)(array())
    line = f.__code__.co_firstlineno + 2
    frames = [(fs.name, fs.lineno) for fs in traceback.extract_tb(info.value.__traceback__)]
    assert ("f", line) in frames


def test_wrong_init_arity_raises_type_error():
    def f(x):
        return Pair(x).total()

    assert_same_as_eager(f, array())
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        frame.jit(f)(array())


# -- functools.partial ---------------------------------------------------------------------------

def _affine(x, w, b=0.0):
    return x * w + b


def _shift(x, w, b=0.0):
    return x - w - b


def _swapped(w, x, b=0.0):
    return x * w - b


def test_partial_argument_is_guarded_on_func_args_and_keywords():
    def f(x, act):
        return act(x)

    jitted = frame.jit(f)
    x = array()
    for act in (functools.partial(_affine, w=2.0), functools.partial(_affine, w=3.0),
                functools.partial(_shift, w=3.0), functools.partial(_affine, w=3.0, b=1.0),
                functools.partial(_affine, b=1.0, w=3.0), functools.partial(_swapped, 2.0),
                functools.partial(_swapped, 5.0), functools.partial(_swapped, 5.0, b=2.0)):
        np.testing.assert_allclose(jitted(x, act), f(x, act), rtol=1e-6)
        assert _explain(f, x, act) == (1, [])


def test_partial_global_rebound_is_seen():
    def f(x):
        return _GLOBAL_PARTIAL(x)

    global _GLOBAL_PARTIAL
    jitted = frame.jit(f)
    x = array()
    np.testing.assert_allclose(jitted(x), x * 2.0, rtol=1e-6)
    assert _explain(f, x) == (1, [])
    saved = _GLOBAL_PARTIAL
    _GLOBAL_PARTIAL = functools.partial(_shift, w=1.0)
    try:
        np.testing.assert_allclose(jitted(x), x - 1.0, rtol=1e-6)
    finally:
        _GLOBAL_PARTIAL = saved


_GLOBAL_PARTIAL = functools.partial(_affine, w=2.0)


def test_partial_keywords_mutated_between_calls():
    p = functools.partial(_affine, w=2.0)

    def f(x):
        return p(x)

    jitted = frame.jit(f)
    x = array()
    np.testing.assert_allclose(jitted(x), x * 2.0, rtol=1e-6)
    p.keywords["w"] = 4.0
    np.testing.assert_allclose(jitted(x), x * 4.0, rtol=1e-6)
    p.keywords["b"] = 1.0
    np.testing.assert_allclose(jitted(x), x * 4.0 + 1.0, rtol=1e-6)
    assert _explain(f, x) == (1, [])


def test_partial_made_inside_is_one_graph():
    def f(x):
        scale = functools.partial(_affine, w=0.5)
        clip = functools.partial(np.clip, a_min=0)
        return clip(scale(x), a_max=1.0), functools.partial(frame.sum, axis=0)(frame.tensor(x))

    assert_same_as_eager(f, array())
    assert _explain(f, array()) == (1, [])


# -- classes whose instances are not modelled: a break naming the class ------------------------

class _Meta(type):
    pass


class WithMeta(metaclass=_Meta):
    def __init__(self, v):
        self.v = v


class MyList(list):
    pass


class WithDel:
    def __init__(self, v):
        self.v = v

    def __del__(self):
        pass


class WithGetattribute:
    def __init__(self, v):
        self.v = v

    def __getattribute__(self, name):
        return object.__getattribute__(self, name)


class Net(frame.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = frame.nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x)


@pytest.mark.parametrize("make, reason", [
    (lambda x: WithMeta(x).v, "creating a WithMeta object: its metaclass _Meta"),
    (lambda x: MyList([x])[0], "creating a MyList object: it derives from the builtin type list"),
    (lambda x: WithDel(x).v, "creating a WithDel object: WithDel defines __del__"),
    (lambda x: WithGetattribute(x).v,
     "creating a WithGetattribute object: WithGetattribute defines __getattribute__"),
    (lambda x: Net()(frame.tensor(x)).shape, "creating a Net object: it is a frame nn.Module"),
], ids=["metaclass", "builtin_base", "finalizer", "getattribute", "nn_module"])
def test_unmodelled_classes_break_with_a_reason_naming_the_class(make, reason):
    def f(x):
        y = x * 2
        return make(y)

    assert_same_as_eager(f, array(), captured=None)
    graphs, breaks = _explain(f, array())
    assert graphs == 1 and any(reason in b for b in breaks), breaks


def test_equality_by_identity_of_objects_of_the_frame_is_guarded():
    def f(x, a, b):
        return x + 1 if a == b else x - 1

    jitted = frame.jit(f)
    x = array()
    one, other = Holder(), Holder()
    np.testing.assert_allclose(jitted(x, one, other), x - 1, rtol=1e-6)
    np.testing.assert_allclose(jitted(x, one, one), x + 1, rtol=1e-6)
    np.testing.assert_allclose(jitted(x, other, one), x - 1, rtol=1e-6)
    assert _explain(f, x, one, other) == (1, [])


def test_two_namedtuples_made_in_the_function_are_distinct_objects():
    import collections
    point = collections.namedtuple("point", "x y")

    def f(x):
        a, b = point(x, 1), point(x, 1)
        return x + 1, a is b, a is a, a == b

    assert_same_as_eager(f, array())
