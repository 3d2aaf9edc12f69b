"""Graph breaks: differential tests (jitted == plain Python) for functions that
break, each also checking ``frame.explain``'s graph count and break kinds.

Every case is ``(fn, args, graphs, kinds)``: ``graphs`` is the number of graphs
``frame.explain`` reports for one call with fresh caches, ``kinds`` the break
kinds in the order they were met.
"""
from __future__ import annotations

import copy
import functools
import io
import logging
import sys

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager, last_entry, tensor

U, D = "unsupported_call", "data_dependent"
COUNTER = 0
# an untraceable call (print into a buffer: a functools.partial, which capture
# does not trace)
log = functools.partial(print, file=io.StringIO())


def t(seed=0, shape=(2, 3)):
    return tensor(shape, seed=seed)


class Box:
    def __init__(self, value):
        self.value = value
        self.n = 0


# -- helpers called by the cases ------------------------------------------------------------------

def helper_print(x):
    y = x * 2
    print("inside", y.shape)
    return y + 1


def helper_if(x):
    if x.sum() > 0:
        return x * 3
    return x - 3


def level3(x):
    y = x + 1
    log(y)
    return y * 2


def level2(x):
    return level3(x * 3) - 1


def level1(x):
    return level2(x + 2) * 0.5


def helper_raises(x):
    log(x)
    raise ValueError("bad value")


def helper_catches(x):
    try:  # (OSError(errno, ...) is not modelled: a KeyError would be traced)
        raise OSError(2, "k")
    except FileNotFoundError:
        return x * 2


# -- the cases ------------------------------------------------------------------------------------
CASES = []


def case(graphs, kinds, *args):
    def register(fn):
        CASES.append(pytest.param(fn, args, graphs, kinds, id=fn.__name__))
        return fn
    return register


# print between tensor ops
@case(2, [U], t())
def print_middle(x):
    y = x + 1
    print("y", y.shape)
    return y * 2


@case(3, [U, U], t())
def print_twice(x):
    y = x + 1
    print("a")
    z = y * 2
    print("b")
    return z - 1


@case(1, [U], t())
def print_first(x):
    print("start")
    return (x * 2).relu()


@case(1, [U], t())
def print_last(x):
    y = x * 2 + 1
    print("end")
    return y


@case(2, [U], t(), t(1))
def print_two_inputs(x, y):
    a = x * y
    print(a.shape)
    return a + y


@case(1, [U], t())
def print_result_used(x):
    y = x.exp()
    r = print("v")
    return y if r is None else -y


@case(2, [U], t())
def log_call(x):
    y = x.tanh()
    log(y)
    return y + x


@case(2, [U], t())
def print_kwargs(x):
    y = x * 3
    print("y", end="\n", sep=" ")
    return y - x


@case(2, [U], t(), 3)
def print_with_int(x, n):
    y = x * n
    print(n)
    return y + n


@case(2, [D, U], t())
def print_of_tensor(x):
    y = x + 5
    print(y.sum().item() > -1000)  # two breaks fold: .item() first
    return y * 2


@case(2, [D], t())
def print_ndarray(x):
    a = (x * 2).numpy()
    return x + a.sum()


# .item() in Python arithmetic and conditions
@case(2, [D], t())
def item_arith(x):
    s = x.sum().item()
    return x * (s * 2 + 1)


@case(2, [D], t())
def item_if(x):
    s = x.mean().item()
    if s > 0:
        return x + 1
    return x - 1


@case(2, [D], t(3))
def item_if_negative(x):
    s = x.mean().item() - 100.0
    if s > 0:
        return x + 1
    return x - 1


@case(2, [D], t())
def float_of_tensor(x):
    v = float(x.max())
    return x / (abs(v) + 1)


@case(2, [D], t())
def int_of_tensor(x):
    n = int(x.shape[0] + x.argmax())
    return x * n


@case(1, [D], t())
def tolist_result(x):
    return (x * 2).tolist()


@case(2, [D], t())
def item_then_python(x):
    s = x.sum().item()
    k = round(s, 2)
    return x + k


# if / while on tensor values in the top frame
@case(2, [D], t())
def if_tensor(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


@case(2, [D], -t())
def if_tensor_else(x):
    y = x + 1
    if y.sum() > 0:
        return y * 2
    return y - 1


@case(2, [D], t())
def if_tensor_join(x):
    y = x * 2
    if y.max() > 1:
        y = y + 1
    else:
        y = y - 1
    return y.relu()


@case(2, [D], t())
def if_not_tensor(x):
    if not (x.min() > 100):
        return x + 1
    return x


@case(3, [D, D], t())
def if_twice(x):
    y = x
    if y.sum() > 0:
        y = y + 1
    if y.mean() > -100:
        y = y * 2
    return y


@case(1, [D], t())
def if_and(x):
    if x.sum() > 0 and x.max() > 0:
        return x * 2
    return x


@case(2, [D], t())
def ternary_tensor(x):
    return x * 2 if x.sum() > 0 else x * 3


# n + 1 is passed on as an expression of n (a Python scalar guarded where its value is
# used, docs/capture.md "Dynamic scalars"): the loop's resume function serves every n
# (on 3.12+ the resume function continuing itself is a second resume code: 3 graphs)
@case(2 if sys.version_info < (3, 12) else 3, [D, D] if sys.version_info < (3, 12) else [D, D, D],
      t(), 0)
def while_tensor(x, n):
    y = x
    while y.sum() < 100:
        y = y + 10
        n += 1
    return y, n


# if on a tensor inside an inlined call
@case(4, [D, D], t())
def inlined_if(x):
    y = x + 1
    z = helper_if(y)
    return z * 2


@case(4, [D, D], -t())
def inlined_if_neg(x):
    y = x + 1
    return helper_if(y) - y


@case(4, [U, U], t())
def inlined_print(x):
    a = x.exp()
    b = helper_print(a)
    return a + b


@case(8, [U, U, U, U], t())
def nested_three_deep(x):
    y = x * 2
    z = level1(y)
    return z + y


@case(8, [U, U, U, U, U], t())
def nested_three_deep_twice(x):
    return level1(x) + level1(x + 1)


# breaks in loops
@case(3, [U, U], t())
def loop_print(x):
    for _ in range(5):
        x = x + 1
        print("step")
        x = x * 0.5
    return x


@case(3, [U, U], t(), [t(1), t(2), t(3)])
def loop_over_list(x, ws):
    for w in ws:
        x = x * w
        log(x)
        x = x + 1
    return x


@case(3, [U, U, U], t())
def loop_print_index(x):
    for i in range(3):
        x = x + i
        print(i)
    return x


# `i < 4` guards its outcome, not i: one resume entry serves i = 1, 2, 3
@case(2, [U, U], t(), 0)
def while_print(x, i):
    while i < 4:
        x = x * 1.5
        log(i)
        i += 1
    return x, i


@case(2, [U, U], t())
def loop_break_statement(x):
    for i in range(10):
        x = x + 1
        log(i)
        if i == 2:
            break
    return x


@case(4, [D, D], t())
def loop_tensor_if(x):
    for _ in range(3):
        if x.sum() > 0:
            x = x - 1
        else:
            x = x + 2
    return x


@case(3, [U, U, U], t())
def loop_list_append(x):
    out = []
    for i in range(3):
        out.append(x * i)
        log(i)
    return out


# containers and closures live on the stack / in locals across a break
@case(2, [U], t())
def live_list(x):
    items = [x + 1, x * 2]
    log(items)
    return items[0] + items[1]


@case(2, [U], t())
def live_dict(x):
    d = {"a": x + 1, "b": 3}
    print("d")
    return d["a"] * d["b"]


@case(2, [U], t())
def live_tuple(x):
    pair = (x.exp(), x.sin())
    print("p")
    return pair[0] - pair[1]


@case(2, [U], t())
def stack_list(x):
    return [x + 1, print("in list"), x * 2]


@case(2, [U], t())
def stack_call_args(x):
    return frame.maximum(x + 1, x * (print("arg") or 2))


@case(2, [U], t(), 2.0)
def closure_read(x, k):
    def scale(v):
        return v * k
    y = scale(x)
    print("y")
    return scale(y)


@case(2, [U], t())
def cell_var(x):
    c = x + 1
    print("c")
    f = lambda: c * 2  # noqa: E731
    return f()


@case(2, [U], t())
def nested_container(x):
    d = {"xs": [x, x + 1], "n": (1, 2)}
    log(d)
    return d["xs"][1] * d["n"][1]


# mutation of lists/dicts/attributes/globals before and after a break
@case(2, [U], [], t())
def list_mutated_before(out, x):
    out.append(x + 1)
    log(len(out))
    return x * 2


@case(2, [U], [], t())
def list_mutated_after(out, x):
    y = x + 1
    print("m")
    out.append(y * 2)
    return y


@case(2, [U], {}, t())
def dict_mutated_both(d, x):
    d["a"] = x + 1
    print(len(d))
    d["b"] = x * 2
    return d


@case(2, [U], Box(1), t())
def attr_mutated(b, x):
    b.n = 1
    y = x + b.value
    print(b.n)
    b.n = 2
    return y * 2


@case(2, [U], t())
def global_mutated(x):
    global COUNTER
    COUNTER = 5
    y = x + 1
    print(COUNTER)
    COUNTER = COUNTER + 1
    return y * COUNTER


@case(2, [U], [1, 2], t())
def list_read_by_native(out, x):
    out.append(3)
    y = x * len(out)
    print(out)           # the native print sees the replayed append
    return y + sum(out)


@case(1, [], [3, 1, 2], t())
def list_sort_traced(values, x):
    values.sort()
    return x * values[0]


@case(2, [U], t())
def inplace_before(x):
    x += 1
    print("x")
    return x * 2


# exceptions after a break
@case(1, [U, 'exception'], t())
def raise_after(x):
    y = x + 1
    print("before")
    raise ValueError(f"shape {y.shape}")


@case(1, [U, 'exception'], t(), t(0, (3, 2)))
def shape_error_after(x, y):
    z = x * 2
    print("z")
    return z + y


@case(1, [U, U, 'exception'], t())
def raise_in_callee_after_break(x):
    y = x * 2
    return helper_raises(y)


@case(0, [U, 'exception'], t())
def key_error_after(x):
    d = {"a": x}
    log(d)
    return d["b"]


@case(1, [D, 'exception', 'caught_exception'], t())
def caught_in_callee(x):
    y = x + 1
    if y.sum() > 0:
        y = helper_catches(y)
    return y


# attribute loads and f-strings at breaks
@case(2, [D], t())
def fstring_tensor(x):
    y = x + 1
    s = f"{y.sum()}"
    return y * len(s)


@case(1, ['unsupported_object', U], t())
def method_of_list_native(x):
    xs = [3, 1, 2]
    xs.__sizeof__()   # (a list method capture does not model)
    return x * xs[0]


@case(2, [D, U], t())
def numpy_unsupported(x):
    a = (x + 1).numpy()
    return np.unique(a).sum() * x


# -- generated variants: one break between two ops, for many op pairs ------------------------------
_UNARY = ["exp", "tanh", "sin", "cos", "relu", "sigmoid", "abs", "neg", "square", "floor"]
_BINARY = ["add", "sub", "mul", "maximum", "minimum"]


def _op(name):
    if name == "neg":
        return lambda v: -v
    if name == "square":
        return lambda v: v * v
    return getattr(frame, name)


def _print_between(u, b):
    first, second = _op(u), getattr(frame, b)

    def fn(x, y):
        z = first(x)
        print(u, b)
        return second(z, y)
    fn.__name__ = fn.__qualname__ = f"print_between_{u}_{b}"
    return fn


def _if_between(u, cmp):
    first = _op(u)

    def fn(x):
        z = first(x)
        if (z.sum() > 0) if cmp == "gt" else (z.sum() <= 0):
            return z * 2
        return z - 1
    fn.__name__ = fn.__qualname__ = f"if_after_{u}_{cmp}"
    return fn


for _u in _UNARY:
    for _b in _BINARY:
        CASES.append(pytest.param(_print_between(_u, _b), (t(), t(1)), 2, [U],
                                  id=f"print_between_{_u}_{_b}"))
    for _cmp in ("gt", "le"):
        CASES.append(pytest.param(_if_between(_u, _cmp), (t(),), 2, [D], id=f"if_after_{_u}_{_cmp}"))


def _explain_copy(fn, args, globals_to_check=()):
    saved = [(d, name, d.get(name)) for d, name in globals_to_check]
    try:
        return frame.explain(fn)(*copy.deepcopy(args))
    finally:
        for d, name, v in saved:
            d[name] = v


@pytest.mark.parametrize("fn, args, graphs, kinds", CASES)
def test_graph_break_same_as_eager(fn, args, graphs, kinds):
    globals_to_check = [(globals(), "COUNTER")]
    assert_same_as_eager(fn, *args, captured=None, globals_to_check=globals_to_check)
    out = _explain_copy(fn, args, globals_to_check)
    got = [r.kind for r in out.break_reasons]
    assert out.graph_count == graphs, f"{out.graph_count} graphs, expected {graphs}\n{out}"
    assert got == kinds, f"break kinds {got}, expected {kinds}\n{out}"
    assert out.graph_break_count == len(kinds)


def test_enough_break_cases():
    assert len(CASES) >= 120


# -- caches of resume functions ---------------------------------------------------------------------

def test_second_call_translates_nothing(compile_counter):
    f = frame.jit(print_middle, backend="cpu")
    x = t()
    first = f(x)
    translations = compile_counter.translations
    assert translations == 2  # the function and its resume function
    second = f(x)
    assert compile_counter.translations == translations
    np.testing.assert_allclose(first.numpy(), second.numpy())


def test_loop_of_100_with_print_compiles_a_bounded_number_of_graphs(compile_counter, capsys):
    def body(x):
        for _ in range(100):
            x = x + 1
            print("step")
            x = x * 0.5
        return x
    out = frame.explain(body)(t())
    # the top frame's graph, the graph after the print (resume at the print)
    # and the graph of the loop head's resume: 3, whatever the trip count
    assert out.graph_count <= 3
    np.testing.assert_allclose(out.result.numpy(), body(t()).numpy(), rtol=1e-5)
    assert capsys.readouterr().out.count("step") == 200


def test_loop_of_10000_iterations_does_not_recurse(capsys):
    def body(x):
        for _ in range(10_000):
            x = x + 1
            log(0)
        return x
    f = frame.jit(body, backend="cpu")
    np.testing.assert_allclose(f(t()).numpy(), body(t()).numpy())


def test_loop_over_tensors_reuses_entries(compile_counter):
    def body(x, ws):
        for w in ws:
            x = x * w
            log(x)
            x = x + 1
        return x
    ws = [t(i) for i in range(20)]
    f = frame.jit(body, backend="cpu")
    f(t(), ws)
    first = compile_counter.translations
    assert first <= 4  # top frame, after the break, the loop head, the exit
    f(t(), ws)
    assert compile_counter.translations == first


# -- WARN once per site, counts by kind ------------------------------------------------------------

def test_one_warning_per_break_site_and_counts_by_kind(caplog, compile_counter):
    def fn(x):
        y = x + 1
        print("a")
        if y.sum() > 0:
            y = y * 2
        return y
    f = frame.jit(fn, backend="cpu")
    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        f(t())
        f(t())
        f(-t() - 10)
    warnings = [r for r in caplog.records if "graph break" in r.getMessage()]
    sites = {r.getMessage() for r in warnings}
    assert len(warnings) == len(sites) == 2, [r.getMessage() for r in warnings]
    assert any("unsupported_call" in m and "print" in m for m in sites)
    assert any("data_dependent" in m for m in sites)
    assert all("test_graph_breaks.py:" in m for m in sites)
    breaks = compile_counter.graph_breaks
    assert breaks["unsupported_call"] == 1 and breaks["data_dependent"] == 1


# -- where no break is placed --------------------------------------------------------------------

def test_break_inside_try_resumes():
    def fn(x):
        try:
            y = x + 1
            print("in try")
        except ValueError:
            y = x
        return y * 2
    j = assert_same_as_eager(fn, t(), captured=None)
    assert last_entry(j).breaks and not last_entry(j).native   # (tests/capture/test_try_block_breaks.py)


def test_break_inside_an_except_block_runs_natively():
    def fn(x):
        try:
            raise ValueError("v")
        except ValueError:
            y = x + 1
            print("handling", type(sys.exc_info()[1]).__name__)
        return y * 2
    j = assert_same_as_eager(fn, t(), captured=False)
    assert "inside an except, finally or with-exit block" in last_entry(j).reason.reason


def test_full_graph_still_raises():
    f = frame.jit(print_middle, backend="cpu", full_graph=True)
    with pytest.raises(frame.GraphBreakError):
        f(t())


def test_locals_is_not_run_in_the_entry():
    def fn(x):
        y = x + 1
        names = sorted(locals())
        return y, names
    assert_same_as_eager(fn, t(), captured=None)


def test_explain_output_is_printable_and_leaves_caches_alone():
    f = frame.jit(if_tensor, backend="cpu")
    f(t())
    entries = list(f._frame_cache.entries)
    out = frame.explain(if_tensor)(t())
    assert f._frame_cache.entries == entries
    text = str(out)
    assert "Graph count: 2" in text and "data_dependent" in text and "test_graph_breaks.py:" in text
    assert out.break_reasons[0].location.startswith("test_graph_breaks.py:")
    assert out.ops_per_graph[0] and all(isinstance(op, str) for op in out.ops_per_graph[0])
    assert any("Tensor float32[2, 3]" in g for g in out.guards)
    assert out.compile_time_s > 0


def test_small_graphs_run_eagerly(monkeypatch):
    monkeypatch.setattr(frame.config, "min_graph_ops", 1000)
    assert_same_as_eager(print_middle, t(), captured=None)
    out = frame.explain(print_middle)(t())
    assert out.graph_count == 2  # captured, but executed op by op


def test_explain_lists_ops_not_constants():
    import frame

    def f(x):
        return x * 2.0 + 1.0
    out = frame.explain(f)(frame.tensor([1.0, 2.0]))
    assert out.ops_per_graph == [["mul", "add"]]
