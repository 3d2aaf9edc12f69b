"""Exceptions under capture: what the original raises, the jitted function
raises (same type, same message: the call runs natively); ``full_graph=True``
turns a graph break into ``frame.GraphBreakError`` naming the reason and the
user's file:line, but still lets the function's own exceptions through."""
from __future__ import annotations

import logging
import os

import numpy as np
import pytest

import frame
from capture.errors import CATALOGUE, BreakReason, GraphBreakError, Unsupported
from capture.jit import CACHE_LIMIT

from .helpers import array, assert_same, assert_same_as_eager, tensor

HERE = os.path.basename(__file__)


def _line_of(fn, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def test_shape_mismatch_in_an_op():
    assert_same_as_eager(lambda x, y: x @ y, tensor((2, 3)), tensor((2, 3), seed=1))


def test_raise_value_error_on_a_python_condition():
    def f(x, n):
        if n > 2:
            raise ValueError(f"n is too large: {n}")
        return x * n
    assert_same_as_eager(f, tensor(), 5)
    assert_same_as_eager(f, tensor(), 1)


def test_raise_exception_class_without_arguments():
    def f(x, flag):
        if flag:
            raise KeyError
        return x
    assert_same_as_eager(f, tensor(), True)


def test_exception_in_inlined_function():
    def check(n):
        if n < 0:
            raise ValueError("negative")
        return n

    def f(x, n):
        return x * check(n)
    assert_same_as_eager(f, tensor(), -1)


def test_exception_from_frame_function_argument_check():
    assert_same_as_eager(lambda x: frame.clip(x), tensor())


def test_exception_from_indexing():
    assert_same_as_eager(lambda x: x[5], tensor((2, 3)))


def test_type_error_from_python_operator():
    assert_same_as_eager(lambda x, s: x * 2 + s, tensor(), "text")


def test_numpy_shape_error_on_ndarrays():
    assert_same_as_eager(lambda a, b: a + b, array((2, 3)), array((3, 2), seed=1))


def test_exception_entry_is_cached_and_raises_again(compile_counter):
    def f(x, n):
        if n > 2:
            raise ValueError("big")
        return x
    g = frame.jit(f, backend="cpu")
    for _ in range(2):
        with pytest.raises(ValueError, match="big"):
            g(tensor(), 3)
    assert compile_counter.translations == 1


def test_exception_logs_info_not_warning(caplog):
    def f(x):
        raise RuntimeError("boom")
    g = frame.jit(f, backend="cpu")
    with caplog.at_level(logging.INFO, logger="frame.capture"):
        with pytest.raises(RuntimeError):
            g(tensor())
    assert all(r.levelno == logging.INFO for r in caplog.records)


def test_full_graph_print_of_tensor_raises_graph_break_error():
    def f(x):
        y = x * 2
        print(y)
        return y
    g = frame.jit(f, backend="cpu", full_graph=True)
    with pytest.raises(frame.GraphBreakError) as info:
        g(tensor())
    message = str(info.value)
    assert "print" in message
    assert f"{HERE}:{_line_of(f, 'print(y)')}" in message
    assert info.value.break_reason.kind == "unsupported_call"
    assert info.value.break_reason.location == f"{HERE}:{_line_of(f, 'print(y)')}"


def test_full_graph_data_dependent_branch_names_its_line():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    g = frame.jit(f, backend="cpu", full_graph=True)
    with pytest.raises(GraphBreakError, match=f"data_dependent.*{HERE}:{_line_of(f, 'if x.sum()')}"):
        g(tensor())


def test_full_graph_break_inside_inlined_function_names_the_inner_line():
    def inner(x):
        return x.item()

    def f(x):
        return inner(x) + 1
    g = frame.jit(f, backend="cpu", full_graph=True)
    with pytest.raises(GraphBreakError, match=f"{HERE}:{_line_of(inner, 'x.item()')}"):
        g(tensor((1,)))


def test_full_graph_still_raises_the_functions_own_exception():
    def f(x, n):
        if n > 2:
            raise ValueError("too large")
        return x
    g = frame.jit(f, backend="cpu", full_graph=True)
    with pytest.raises(ValueError, match="too large"):
        g(tensor(), 3)


def test_full_graph_caught_exception_is_traced():
    # a KeyError raised and caught inside the function is traced (issue 15 item 4)
    def f(x, d):
        try:
            return x * d["k"]
        except KeyError:
            return x
    g = frame.jit(f, backend="cpu", full_graph=True)
    assert_same(f(tensor(), {}), g(tensor(), {}))


def test_full_graph_caught_unmodelled_exception_is_a_break():
    # OSError(errno, ...) makes a subclass chosen by errno: not modelled, so the
    # handler is not simulated and full_graph refuses
    def f(x):
        try:
            raise OSError(2, "missing")
        except FileNotFoundError:
            return x
    g = frame.jit(f, backend="cpu", full_graph=True)
    with pytest.raises(GraphBreakError):
        g(tensor())


def test_full_graph_succeeds_on_capturable_function():
    g = frame.jit(lambda x: (x * 2).relu(), backend="cpu", full_graph=True)
    assert g(tensor()).shape == (2, 3)


def test_graph_break_without_full_graph_warns_once(caplog):
    def f(x):
        print("side")
        return x
    g = frame.jit(f, backend="cpu")
    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        g(tensor())
        g(tensor())
    assert len(caplog.records) == 1
    assert "unsupported_call" in caplog.records[0].getMessage()


@pytest.mark.parametrize("where", ["top", "limit"])
def test_full_graph_break_is_only_the_error(where, caplog):
    """With full_graph=True a break raises GraphBreakError; nothing runs
    natively, so no "runs natively" WARN comes before the error."""
    def f(x):
        y = x * 2
        print(float(y.sum()))     # reads a value: a break
        return y + 1

    def g(x, n):
        return x.reshape(n + 1, -1)   # a value guard on n (a shape): every n recompiles

    with caplog.at_level(logging.WARNING, logger="frame"):
        if where == "top":
            jitted = frame.jit(f, backend="cpu", full_graph=True)
            for _ in range(2):
                with pytest.raises(frame.GraphBreakError, match="data_dependent"):
                    jitted(tensor())
        else:
            jitted = frame.jit(g, backend="cpu", full_graph=True)
            for n in range(CACHE_LIMIT):
                jitted(tensor((8, 9, 10, 7)), n)
            with pytest.raises(frame.GraphBreakError, match="recompile_limit"):
                jitted(tensor((8, 9, 10, 7)), 9)
    assert caplog.records == []


def test_caught_exception_is_reclassified():
    def f(x, d):
        try:  # OSError(errno, ...) is not modelled (a KeyError is traced)
            raise OSError(2, "k")
        except FileNotFoundError:
            return x
    g = frame.jit(f, backend="cpu")
    g(tensor(), {})
    assert g._frame_cache.entries[0].reason.kind == "caught_exception"


def test_break_reasons_are_catalogued():
    reason = BreakReason("data_dependent", "if on a tensor", "f.py:3")
    assert reason.explanation and reason.hint
    assert str(reason) == "data_dependent at f.py:3: if on a tensor"
    err = GraphBreakError(reason)
    assert "f.py:3" in str(err) and "Hint:" in str(err)
    with pytest.raises(ValueError):
        Unsupported("not_a_kind", "x")
    assert {"unsupported_call", "data_dependent", "exception", "recompile_limit"} <= set(CATALOGUE)


def test_graph_break_error_is_a_frame_error():
    assert issubclass(frame.GraphBreakError, frame.FrameError)
    np.testing.assert_equal(frame.GraphBreakError, GraphBreakError)


def test_full_graph_break_raises_on_every_call():
    g = frame.jit(lambda x: print(x), backend="cpu", full_graph=True)
    for _ in range(3):
        with pytest.raises(GraphBreakError):
            g(tensor())
    assert g._frame_cache.entries == []


def test_full_graph_exception_inside_comprehension_is_the_users():
    def f(x, n):
        return [x * (10 // (i - n)) for i in range(3)]
    g = frame.jit(f, backend="cpu", full_graph=True)
    with pytest.raises(ZeroDivisionError):
        g(tensor(), 1)


def test_exception_inside_generator_expression():
    assert_same_as_eager(lambda x, d: sum(x * d[k] for k in ("a", "b")), tensor(), {"a": 1})


def test_capture_error_falls_back_to_a_native_run(monkeypatch):
    from capture import handlers

    def broken(tx, instr):
        raise KeyError("bug in a handler")
    monkeypatch.setitem(handlers.HANDLERS, "BINARY_OP", broken)
    g = frame.jit(lambda x: x * 2, backend="cpu")
    x = tensor()
    np.testing.assert_allclose(g(x).numpy(), (x * 2).numpy())
    assert g._frame_cache.entries[0].reason.kind == "capture_error"


def _type_error(fn, *args, **kwargs) -> str:
    with pytest.raises(TypeError) as info:
        fn(*args, **kwargs)
    return str(info.value)


@pytest.mark.parametrize("bad", [((), {}), ((1, 2, 3, 4), {}), ((1,), {"z": 2}),
                                 ((1, 2), {"x": 3})], ids=["missing", "too many", "unknown kw",
                                                           "twice"])
def test_a_call_that_does_not_bind_raises_the_functions_own_type_error(bad):
    def step(x, y=2.0, *, k=1):
        return x * y + k

    jitted = frame.jit(step, backend="cpu")
    jitted(tensor(), 3.0)  # an entry exists: the bad call reaches it first
    args, kwargs = bad
    assert _type_error(jitted, *args, **kwargs) == _type_error(step, *args, **kwargs)


def test_varargs_and_kwargs_entries_bind_like_the_function():
    def f(a, *rest, scale=1.0, **named):
        return (a + sum(rest)) * scale + len(named)

    jitted = frame.jit(f, backend="cpu")
    t = tensor()
    for args, kwargs in [((t,), {}), ((t, 1.0, 2.0), {"scale": 2.0}), ((t,), {"u": 1, "v": 2})]:
        np.testing.assert_array_equal(jitted(*args, **kwargs).numpy(), f(*args, **kwargs).numpy())
    assert _type_error(jitted) == _type_error(f)


def test_closures_of_one_code_each_run_their_own_cells_when_native():
    def make(k):
        def f(x):
            try:  # a break inside a try: the whole function runs natively
                print("side effect")
            except ValueError:
                pass
            return x + k
        return f

    f1, f2 = make(1.0), make(2.0)
    j1, j2 = frame.jit(f1, backend="cpu"), frame.jit(f2, backend="cpu")
    x = tensor()
    np.testing.assert_array_equal(j1(x).numpy(), f1(x).numpy())
    assert j1._frame_cache is j2._frame_cache  # one code object, one cache
    np.testing.assert_array_equal(j2(x).numpy(), f2(x).numpy())


# -- a graph that raises at run time (its data, not its shapes: the guards held) -----------------

def _bump_then_gather(x, table, idx, log):
    log.append(len(log))
    x += 1
    return table[idx] * 2


def _table():
    return np.arange(12, dtype=np.float32).reshape(4, 3)


@pytest.mark.parametrize("backend", [None, "cpu"])
def test_index_out_of_range_at_run_time_raises_the_plain_error_after_its_side_effects(backend):
    """The entry translated for in-range indices runs again with an index out of
    range: the gather's run-time check raised frame's error (not NumPy's
    IndexError, another message) and the in-place ``x += 1`` (donated to the cpu
    executable) had already happened, or the list append had not.  The call now
    runs natively: NumPy's IndexError, each side effect exactly once."""
    for i in (1, 2, 7, -5, 3):
        assert_same_as_eager(_bump_then_gather, np.zeros(3, np.float32), _table(),
                             np.array([0, i]), [], captured=None, backend=backend)


def _tensor_gather(t, w, idx):
    t += 1.0
    return w[idx].sum()


def test_tensor_index_out_of_range_at_run_time_raises_eagers_error():
    for i in (1, 2, 9):
        assert_same_as_eager(_tensor_gather, tensor((3,)), frame.tensor(_table()),
                             frame.tensor(np.array([i, 0])), captured=None, backend="cpu")


def _dropout_then_gather(x, idx):
    y = frame.nn.functional.dropout(x, 0.5, True)
    return y[idx]


def test_random_draws_are_given_back_when_the_call_reruns_natively():
    """The entry draws its random numbers before the graph runs; when the graph
    raises, the native call draws them itself: the generator is where the
    plain call leaves it."""
    x = tensor((4, 3))
    jitted = frame.jit(_dropout_then_gather, backend="cpu")
    for idx in (np.array([0, 1]), np.array([2, 3]), np.array([1, 8])):
        outcomes = []
        for fn in (_dropout_then_gather, jitted):
            frame.manual_seed(0)
            try:
                out = fn(x, frame.tensor(idx)).numpy()
            except IndexError as e:
                out = str(e)
            outcomes.append((out, frame.randn(3).numpy()))
        assert_same(outcomes[0], outcomes[1])


def test_data_checked_ops_are_ops():
    """The ops capture treats as checking their data at run time exist (a renamed
    op would silently lose the donation rule of ``codegen._donate_write_backs``)."""
    from capture.codegen import DATA_CHECKED_OPS
    from frame.ops.registry import lookup
    assert all(lookup(name) is not None for name in DATA_CHECKED_OPS), DATA_CHECKED_OPS
