"""Graph breaks inside comprehensions.

CPython 3.12+ inlines list, set and dict comprehensions into the function
(PEP 709) with an exception handler that puts the comprehension's variables
back; 3.11 calls a function of their own.  A break inside one (``[float(l)
for l in losses]``) used to run the whole call natively on 3.12+ ("inside a
try block"); now that handler is passed over (``instructions.with_blocks``),
and the resume function that continues inside the comprehension adds to the
caller's real list or dict (``LIST_APPEND``/``MAP_ADD`` record the additions
as side effects).  Jitted against plain, on every Python."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


def _tensors(*values):
    return [frame.tensor(np.full(3, v, np.float32)) for v in values]


def list_of_floats(ts, w):
    x = "outer"
    vals = [float((x * w).sum()) for x in ts]
    total = sum(vals)
    return total, vals, x, (w * total).sum()


def unbound_variable_after(ts):
    vals = [t.sum().item() for t in ts]
    try:
        return vals, t  # noqa: F821 - the comprehension's variable is not the function's
    except NameError as e:
        return vals, type(e).__name__


def dict_under_no_grad(ts, w):
    with frame.no_grad():
        vals = {i: (x * w).sum().item() for i, x in enumerate(ts)}
    return vals, w * 2


def nested_comprehensions(rows):
    table = [[float(c.sum()) for c in row] for row in rows]
    return table, sum(map(sum, table))


def with_condition(ts):
    return [t.sum().item() for t in ts if t.sum().item() > 0]


def set_of_signs(ts):
    return {int(t.sum().item() > 0) for t in ts}


def in_a_try(ts):
    try:
        return [t.sum().item() for t in ts]
    except ValueError:
        return []


CASES = [
    (list_of_floats, lambda: (_tensors(1.0, -2.0, 3.0), frame.tensor(np.ones(3, np.float32)))),
    (unbound_variable_after, lambda: (_tensors(1.0, 2.0),)),
    (dict_under_no_grad, lambda: (_tensors(1.0, -2.0, 3.0), frame.tensor(np.ones(3, np.float32)))),
    (nested_comprehensions, lambda: ([_tensors(1.0, 2.0), _tensors(3.0, -4.0)],)),
    (with_condition, lambda: (_tensors(1.0, -2.0, 3.0),)),
    (set_of_signs, lambda: (_tensors(1.0, -2.0, 3.0),)),
    (in_a_try, lambda: (_tensors(1.0, -2.0),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_comprehension_with_a_break_matches_plain(fn, args):
    for _ in range(2):   # the second call runs the cached entries
        assert_same_as_eager(fn, *args(), captured=None)


@pytest.mark.parametrize("fn", [list_of_floats, dict_under_no_grad])
def test_the_function_around_the_comprehension_compiles(fn):
    args = dict((c[0], c[1]) for c in CASES)[fn]()
    out = frame.explain(fn)(*args)
    assert out.graph_count >= 1, out
    assert not any("try block" in r.reason for r in out.break_reasons), out.break_reasons


def test_a_try_around_the_comprehension_breaks_too():
    jitted = frame.jit(in_a_try)
    jitted(_tensors(1.0, 2.0))
    entry = jitted._frame_cache.entries[0]
    assert not entry.native, entry.reason
