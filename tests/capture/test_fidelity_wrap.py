"""What ``frame.jit`` wraps keeps its nature (issue 12, "Fidelity"): generator
and coroutine functions, generators made inside a jitted function, C-level
callables (builtins, ``functools.lru_cache``), ``functools.partial``, in-place
writes to read-only inputs; ``frame.explain`` of what ``frame.jit`` returned;
eager mode said in ``explain`` and ``report``; ``frame.config.dump_ir_after``."""
from __future__ import annotations

import asyncio
import functools
import inspect
import io
import logging

import numpy as np
import pytest

import frame
from frame.ir import GraphBuilder
from frame.runtime import compile as runtime_compile

from .helpers import array, assert_same_as_eager, tensor


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


# -- generator and coroutine functions, jitted ------------------------------------------------------

def _gen(x, n):
    for i in range(n):
        yield x * i


async def _no_await(x):
    return x + 1


async def _awaits(x):
    await asyncio.sleep(0)
    return x * 2


async def _agen(x):
    for i in range(2):
        yield x + i


def test_jitted_generator_function_returns_a_generator(caplog):
    g = frame.jit(_gen, backend="cpu")
    x = array((3,))
    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        first = g(x, 3)
        second = g(array((4,)), 2)   # another shape: the same native entry, no recompile
    assert inspect.isgenerator(first)
    for got, want in zip(list(first), list(_gen(x, 3)), strict=True):
        np.testing.assert_array_equal(got, want)
    assert len(list(second)) == 2
    assert len(g._frame_cache.entries) == 1 and g._frame_cache.entries[0].native
    warned = _warnings(caplog)
    assert len(warned) == 1 and "generator function" in warned[0]


def test_jitted_generator_function_raises_its_own_binding_error_at_the_call():
    with pytest.raises(TypeError) as native:
        _gen(1)
    with pytest.raises(TypeError) as jitted:
        frame.jit(_gen, backend="cpu")(1)
    assert str(jitted.value) == str(native.value)


def test_jitted_generator_function_under_full_graph_raises():
    with pytest.raises(frame.GraphBreakError, match="generator_function"):
        frame.jit(_gen, backend="cpu", full_graph=True)(1.0, 2)


def test_async_def_without_await_returns_a_coroutine():
    f = frame.jit(_no_await, backend="cpu")
    coro = f(1)
    assert inspect.iscoroutine(coro)
    assert asyncio.run(coro) == 2
    if hasattr(inspect, "markcoroutinefunction"):  # 3.12+
        assert inspect.iscoroutinefunction(f)
    assert asyncio.run(frame.jit(_awaits, backend="cpu")(3)) == 6


def test_jitted_async_generator_function_returns_an_async_generator():
    async def collect(agen):
        return [v async for v in agen]
    agen = frame.jit(_agen, backend="cpu")(10)
    assert inspect.isasyncgen(agen)
    assert asyncio.run(collect(agen)) == [10, 11]


def test_explain_says_why_a_generator_function_runs_natively():
    out = frame.explain(_gen, backend="cpu")(1.0, 2)
    assert out.exception is None and list(out.result) == [0.0, 1.0]
    assert [b.kind for b in out.break_reasons] == ["generator_function"]
    assert "generator function" in str(out)


# -- generators made and consumed inside a jitted function ---------------------------------------

def _genexpr_sum(x):
    return sum(x * i for i in range(3))


def _inner_generator_loop(x):
    def gen():
        for i in range(3):
            yield x * i
    total = 0
    for v in gen():
        total = total + v
    return total


def _generator_left_in_finally(x):
    log = []

    def gen():
        try:
            yield x
            yield x * 2
        finally:
            log.append("closed")
    g = gen()
    first = next(g)
    del g  # closing it runs the finally block
    return first, log


def _loop_broken_inside_try(x):
    log = []

    def gen():
        try:
            for i in range(5):
                yield x * i
        finally:
            log.append("closed")
    total = x
    for v in gen():
        total = total + v
        break
    return total, log


def _generator_finished_inside_try(x):
    log = []

    def gen():
        try:
            yield x
        finally:
            log.append("closed")
    return list(gen()), log


@pytest.mark.parametrize("fn", [_genexpr_sum, _inner_generator_loop])
def test_generator_consumed_inside_is_captured(fn):
    assert_same_as_eager(fn, array((3,)))


@pytest.mark.parametrize("fn", [_generator_left_in_finally, _loop_broken_inside_try])
def test_generator_abandoned_inside_a_try_runs_its_handler(fn):
    # the handler runs when the generator is closed: not modelled, so native
    jitted = assert_same_as_eager(fn, array((3,)), captured=False)
    assert "paused inside a try block" in jitted._frame_cache.entries[0].reason.reason


def test_generator_run_to_its_end_inside_a_try_is_still_captured():
    assert_same_as_eager(_generator_finished_inside_try, array((3,)), captured=None)
    out = frame.explain(_generator_finished_inside_try, backend="cpu")(array((3,)))
    assert out.graph_break_count == 0


# -- C-level callables, partial, non-callables ----------------------------------------------------

def test_lru_cache_wrapper_still_caches(caplog):
    calls = []

    @functools.lru_cache(maxsize=None)
    def cached(n):
        calls.append(n)
        return n * 2
    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        f = frame.jit(cached, backend="cpu")
        assert f(3) == 6 and f(3) == 6 and f(4) == 8
    assert calls == [3, 4]           # the underlying function ran once per argument
    assert cached.cache_info().hits == 1
    assert f.__wrapped__ is cached
    assert len(_warnings(caplog)) == 1


def test_builtin_runs_natively_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        f = frame.jit(max, backend="cpu")
        assert f(3, 7) == 7 and f([1, 9]) == 9
        assert frame.jit(np.add, backend="cpu")(np.ones(2), 1).tolist() == [2.0, 2.0]
    warned = _warnings(caplog)
    assert len(warned) == 2 and "max" in warned[0]
    with pytest.raises(frame.GraphBreakError, match="unsupported_call"):
        frame.jit(max, backend="cpu", full_graph=True)(1, 2)


def test_builtin_explain_says_why():
    out = frame.explain(frame.jit(abs, backend="cpu"))(-3)
    assert out.result == 3
    assert [b.kind for b in out.break_reasons] == ["unsupported_call"]


def _scaled_sum(x, w, scale=1.0):
    return (x * w).sum() * scale


def test_partial_jits_its_function_and_applies_its_arguments():
    w = tensor((2, 3), seed=1)
    p = functools.partial(_scaled_sum, w=w, scale=2.0)
    x = tensor((2, 3))
    jitted = frame.jit(p, backend="cpu")
    np.testing.assert_allclose(jitted(x).numpy(), p(x).numpy(), rtol=1e-6)
    assert not jitted._frame_cache.entries[0].native       # _scaled_sum was captured
    np.testing.assert_allclose(jitted(x, scale=3.0).numpy(), p(x, scale=3.0).numpy(), rtol=1e-6)
    assert list(inspect.signature(jitted).parameters) == list(inspect.signature(p).parameters)
    positional = frame.jit(functools.partial(_scaled_sum, x), backend="cpu")
    np.testing.assert_allclose(positional(w).numpy(), _scaled_sum(x, w).numpy(), rtol=1e-6)


def test_staticmethod_object_is_unwrapped():
    sm = staticmethod(_scaled_sum)
    x, w = tensor((2, 3)), tensor((2, 3), seed=1)
    jitted = frame.jit(sm, backend="cpu")
    np.testing.assert_allclose(jitted(x, w).numpy(), _scaled_sum(x, w).numpy(), rtol=1e-6)
    assert not jitted._frame_cache.entries[0].native


class _HasForwardOnly:
    def forward(self, x):
        return x


@pytest.mark.parametrize("bad", [42, "f", _HasForwardOnly()])
def test_jit_of_something_not_callable_is_a_clear_type_error(bad):
    with pytest.raises(TypeError, match="frame.jit expects a callable"):
        frame.jit(bad)


# -- in-place writes into read-only inputs --------------------------------------------------------

def _iadd(x):
    x += 1
    return x


def _setitem(x):
    x[0] = 1
    return x


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("fn", [_iadd, _setitem])
def test_in_place_write_into_read_only_array_raises_numpys_error(fn):
    with pytest.raises(ValueError) as native:
        fn(_read_only(array((3,))))
    jitted = frame.jit(fn, backend="cpu")
    for _ in range(2):
        with pytest.raises(ValueError) as raised:
            jitted(_read_only(array((3,))))
        assert str(raised.value) == str(native.value)
    entries = jitted._frame_cache.entries
    assert len(entries) == 1 and entries[0].native


def test_read_only_entry_does_not_serve_writeable_arrays():
    jitted = frame.jit(_iadd, backend="cpu")
    with pytest.raises(ValueError, match="read-only"):
        jitted(_read_only(array((3,))))
    x = array((3,))
    out = jitted(x)
    assert out is x and np.array_equal(x, array((3,)) + 1)
    entries = jitted._frame_cache.entries
    assert len(entries) == 2 and not entries[0].native     # the writeable call was captured


def test_in_place_write_into_read_only_tensor_raises_like_eager():
    def make():
        return frame.from_numpy(_read_only(array((3,))))
    with pytest.raises(ValueError) as native:
        _iadd(make())
    with pytest.raises(ValueError) as jitted:
        frame.jit(_iadd, backend="cpu")(make())
    assert str(jitted.value) == str(native.value)


# -- frame.explain of what frame.jit returned ----------------------------------------------------------

class _Doubler(frame.nn.Module):
    def forward(self, x):
        return (x * 2).relu()


def _double(x):
    return (x * 2).relu()


def test_explain_of_a_jitted_module_counts_its_graphs():
    m = _Doubler()
    out = frame.explain(frame.jit(m, backend="cpu"))(tensor())
    assert out.exception is None
    assert out.graph_count == 1 and out.ops_per_graph == [["mul", "relu"]]
    assert frame.explain(m, backend="cpu")(tensor()).graph_count == 1


def test_explain_uses_the_jitted_functions_backend():
    out = frame.explain(frame.jit(_double, backend="no_such_backend"))(tensor())
    assert out.exception is not None and "no_such_backend" in str(out.exception)
    # explain's own backend wins
    assert frame.explain(frame.jit(_double, backend="no_such_backend"), backend="cpu")(
        tensor()).graph_count == 1


@pytest.mark.parametrize("backend", ["cpu", "openvino"])
def test_explain_of_a_jitted_function_compiles_for_its_backend(backend):
    # one of the two is not the default backend
    if backend == "openvino":
        pytest.importorskip("openvino")
    runtime_compile.clear_cache()
    frame.reset_stats()
    with frame.config.override(tiered=False, cache=False):
        out = frame.explain(frame.jit(_double, backend=backend))(tensor())
    assert out.graph_count == 1
    assert frame.stats().compiles_by_backend == {backend: 1}


# -- eager mode said in explain and report ----------------------------------------------------------

def test_frame_eager_is_said_by_explain_and_report(monkeypatch):
    monkeypatch.setenv("FRAME_EAGER", "1")
    frame.reset_stats()
    out = frame.explain(_double, backend="cpu")(tensor())
    assert out.graph_count == 0 and out.eager is not None and "FRAME_EAGER" in out.eager
    assert "Eager mode forced" in str(out)
    buf = io.StringIO()
    frame.report(file=buf)
    assert "eager mode is forced" in buf.getvalue()


def test_config_eager_forces_eager_mode(compile_counter):
    with frame.config.override(eager=True):
        f = frame.jit(_double, backend="cpu")
        f(tensor())
        buf = io.StringIO()
        frame.report(file=buf)
    assert compile_counter.translations == 0
    assert "eager mode is forced" in buf.getvalue() and "1 such call(s)" in buf.getvalue()


def test_eager_option_is_said_by_explain_and_report(compile_counter):
    f = frame.jit(_double, backend="cpu", eager=True)
    f(tensor())
    out = frame.explain(f)(tensor())   # the explained call is eager too
    assert out.eager == "frame.jit(..., eager=True)" and out.graph_count == 0
    assert compile_counter.translations == 0
    buf = io.StringIO()
    frame.report(file=buf)
    assert "2 call(s) of jitted functions ran natively in eager mode" in buf.getvalue()


# -- frame.config.dump_ir_after ----------------------------------------------------------------------

def test_config_dump_ir_after_dumps_that_pass(capsys):
    b = GraphBuilder()
    x = b.input(frame.float32, (5,))
    c = b.op("mul", b.scalar(2.0, dtype=frame.float32), b.scalar(3.0, dtype=frame.float32))
    graph = b.build(b.op("add", x, c))
    runtime_compile.clear_cache()
    with frame.config.override(dump_ir_after="constant_folding", tiered=False, cache=False):
        runtime_compile.compile(graph, "cpu")
    err = capsys.readouterr().err
    assert "// IR after constant_folding" in err
    assert "value=[6.0]" in err.split("// IR after constant_folding", 1)[1]
