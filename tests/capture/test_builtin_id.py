"""``id()`` under capture (capture/variables/builtins.py, ``_id``): the id of
an object of the frame is its real id, the object guarded by identity, so a
``seen`` set of ids (``Module.named_parameters``) is captured; another object
at the same place recompiles; an object made in the function keeps its
address to the native run (a break)."""
from __future__ import annotations

import numpy as np

import frame
import frame.nn as nn

from .helpers import array, assert_same_as_eager


class Holder:
    def __init__(self, a, b):
        self.a, self.b = a, b


def test_ids_of_arguments_and_their_attributes_are_the_real_ones():
    def f(h, x):
        return id(h), id(h.a), id(h.a) == id(h.b), x * 2

    shared = [1]
    h = Holder(shared, shared)
    want = f(h, array())
    jitted = frame.jit(f)
    got = jitted(h, array())
    assert got[:3] == want[:3]
    np.testing.assert_array_equal(got[3], want[3])
    other = Holder([1], [1])      # another object: the identity guard recompiles
    got = jitted(other, array())
    assert got[:3] == (id(other), id(other.a), False)


def test_dedupe_by_id_captures_in_one_graph():
    w = frame.tensor(np.ones(3, np.float32))

    def total(params, x):
        seen, out = set(), x
        for p in params:
            if id(p) not in seen:
                seen.add(id(p))
                out = out + p
        return out
    params = [w, w, frame.tensor(np.full(3, 2.0, np.float32))]
    assert_same_as_eager(total, params, frame.tensor(np.zeros(3, np.float32)))
    explained = frame.explain(total)(params, frame.tensor(np.zeros(3, np.float32)))
    assert explained.graph_count == 1 and explained.graph_break_count == 0


def test_module_parameters_inside_a_jitted_function():
    frame.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def penalised(x):
        return model(x).sum() + sum((p * p).sum() for p in model.parameters())
    x = frame.tensor(np.ones((3, 4), np.float32))
    explained = frame.explain(penalised)(x)
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    np.testing.assert_allclose(frame.jit(penalised)(x).numpy(), penalised(x).numpy(), rtol=1e-5)


def test_id_of_an_object_made_in_the_function_runs_natively():
    def f(x):
        box = [x]
        return id(box) != 0, x + 1
    explained = frame.explain(f)(array())
    assert any("id() of an object made in the function" in r.reason
               for r in explained.break_reasons)
    jitted = frame.jit(f)
    got = jitted(array())
    assert got[0] is True
    np.testing.assert_array_equal(got[1], array() + 1)


def test_id_of_none_and_booleans():
    def f(x):
        return id(None), id(True), x
    assert_same_as_eager(f, array())
    assert frame.explain(f)(array()).graph_break_count == 0
