"""Python numbers read from a graph value (``t.item()``, ``float(t)``, ``int(t)``)
are made by the entry after the graph when they are only handed on -- returned,
appended, stored -- so the call is no graph break
(``capture/variables/lazy_scalars.py``).  A use that needs the number breaks
the graph at the call, as before.  Each function runs natively and jitted on
copies of its inputs; results (types included), mutated arguments and
globals, and exceptions must match; then ``frame.explain`` counts graphs and
breaks."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


pytestmark = pytest.mark.usefixtures("quiet_fresh_stats")

HISTORY: list = []


class Meter:
    def __init__(self):
        self.last = None
        self.count = 0


METER = Meter()


def returned_item(x):
    return x.sum().item()


def returned_conversions(x):
    return (float(x.mean()), int(x.astype(np.int64).sum()), x.max().item(), (x > 0).any().item(),
            int((x > 0).all()), x.astype(np.float32).sum().item(), x[:1, :1].item())


def appended_to_a_global(x):
    loss = (x ** 2).mean()
    HISTORY.append(loss.item())
    return x * 2


def stored_on_an_object(x):
    METER.last = float(x.sum())
    METER.count += 1
    return x - 1


def stored_in_containers(x):
    v = x.sum().item()
    d = {"loss": v, "both": [v, v]}
    return d, d["both"][0] is d["both"][1]      # one object wherever it is stored


def value_at_the_call(x):
    v = float(x.sum())
    x += 1                                      # later writes do not show
    return v, x


def through_a_helper(x):
    def metric(a):
        return a.mean().item()
    return [metric(x), metric(x * 2)], x


def training_loop_history(x, w):
    losses = []
    for _ in range(4):
        err = x @ w - 1.0
        losses.append(float((err ** 2).mean()))
        w = w - 0.1 * x.T @ err / len(x)
    return w, losses


def tensor_item(x):
    t = frame.tensor(x).sum()
    return t.item(), float(t)


def numpy_scalar_item(x):
    return np.float32(x.sum()).item(), np.int16(3).item(), x.astype(np.float16).max().item()


LAZY = [returned_item, returned_conversions, appended_to_a_global, stored_on_an_object,
        stored_in_containers, value_at_the_call, through_a_helper, training_loop_history,
        tensor_item, numpy_scalar_item]


def _args(fn, dtype="float64"):
    x = (np.arange(6.0).reshape(2, 3) / 7 - 0.3).astype(dtype)
    if fn is training_loop_history:
        return x, np.zeros((3, 1), dtype)
    return (x,)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn", LAZY, ids=lambda f: f.__name__)
def test_numbers_handed_on_are_no_break(fn, dtype):
    HISTORY.clear()
    METER.last, METER.count = None, 0
    assert_same_as_eager(fn, *_args(fn, dtype), globals_to_check=[(globals(), "HISTORY")],
                         captured=None)
    out = frame.explain(fn)(*_args(fn, dtype))
    assert out.graph_break_count == 0, out.break_reasons
    assert out.graph_count == 1


# -- uses that need the number: the break at the call, as before -----------------------------

def arithmetic(x):
    v = x.sum().item()
    return v + 1, x * 2


def comparison(x):
    v = float(x.sum())
    if v > 0:
        return x * 2
    return x


def formatted(x):
    return f"{x.sum().item():.4f}"


def type_of(x):
    v = x.sum().item()
    return type(v), isinstance(v, float)


def max_of(x):
    return max(x.sum().item(), 0.5)


def member(x):
    return x.sum().item() in (1.0, 2.0)


def dict_key(x):
    return {(1, x.max().item()): 1}


def int_of_float(x):              # int() of a float may raise: never deferred
    return int(x.sum() * 10)


def item_of_many(x):              # NumPy raises: the call runs natively
    return x.item()


def used_after_being_stored(x):
    d = {"v": x.sum().item()}
    HISTORY.append(d["v"])
    return d["v"] * 2


NEEDS_VALUE = [arithmetic, comparison, formatted, type_of, max_of, member, dict_key, int_of_float,
               item_of_many, used_after_being_stored]


@pytest.mark.parametrize("fn", NEEDS_VALUE, ids=lambda f: f.__name__)
def test_uses_that_need_the_number(fn):
    HISTORY.clear()
    assert_same_as_eager(fn, *_args(fn), globals_to_check=[(globals(), "HISTORY")], captured=None)
    out = frame.explain(fn)(*_args(fn))
    if fn is item_of_many:
        return
    assert out.graph_break_count == 1, out.break_reasons
    assert out.break_reasons[0].kind == "data_dependent"
    assert "tensor" in out.break_reasons[0].reason


def test_translation_without_lazy_numbers_when_a_use_cannot_break():
    """A use inside an expression that cannot run natively in an entry (``v + 1``
    returned): the break is at ``.item()``, where it was before."""
    out = frame.explain(arithmetic)(*_args(arithmetic))
    assert ".item()" in out.break_reasons[0].reason
