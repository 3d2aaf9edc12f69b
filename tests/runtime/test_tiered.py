"""Tiered compilation (frame/runtime/tiered.py): the fast tier answers while a
deliberately slow tier compiles in the background, the swap, equal results on
both tiers, backpressure, timeouts, failures, and process exit.

The slow tier is a test backend whose compile blocks on an Event the test
releases: the order of events is forced, no test depends on how long anything
takes."""
from __future__ import annotations

import json
import logging
import os
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import frame
from frame.hal import Backend, Executable, FrameError, ErrorCode, register_backend
from frame.ir import GraphBuilder
from frame.ops.interpreter import evaluate
from frame.runtime import compile as rc
from frame.runtime import tiered
from frame.runtime.fallback import FallbackExecutable
from frame.runtime.stats import reset_stats, stats

ROOT = str(pathlib.Path(__file__).resolve().parents[2])


class SlowExecutable(Executable):
    def __init__(self, graph):
        self.graph = graph
        self.input_types = tuple(v.type for v in graph.inputs)
        self.output_types = tuple(v.type for v in graph.outputs)

    def run(self, inputs):
        return [np.array(o, copy=True) for o in evaluate(self.graph, list(inputs))]


class SlowBackend(Backend):
    """Compiles by waiting for ``gate`` (set by the test), then evaluates the
    reference interpreter: bit-exact with the cpu tier."""

    name = "slowtier"

    def __init__(self):
        self.gate = threading.Event()
        self.started = threading.Event()
        self.compiles = 0
        self.fail_with: Exception | None = None
        self.unsupported: set[str] = set()

    def supports(self, node) -> bool:
        if node.body is not None:
            return all(self.supports(n) for n in node.body.nodes)
        return node.op not in self.unsupported

    def compile(self, graph, options):
        self.started.set()
        self.gate.wait()
        self.compiles += 1
        if self.fail_with is not None:
            raise self.fail_with
        return SlowExecutable(graph)


_slow = SlowBackend()
register_backend("slowtier", lambda: _slow)


@pytest.fixture
def slow():
    """The slow backend reset, tiered over cpu, tiering on (threshold 1, no quiet
    period); afterwards every background compile is released and finished."""
    _slow.__init__()
    tiered.set_fast_tier("slowtier", "cpu")
    rc.clear_cache()
    reset_stats()
    with frame.config.override(tiered=True, cache=False, hot_threshold=1, tier_quiet_s=0.0,
                               max_pending=4, compile_timeout_s=60.0):
        yield _slow
        _slow.gate.set()
        assert tiered.scheduler.idle(30), "background compiles did not finish"
    tiered.set_fast_tier("slowtier", None)
    rc.clear_cache()


def graph(scale=1.5, shape=(4, 5)):
    b = GraphBuilder()
    x = b.input("float32", shape)
    y = b.input("float32", shape)
    h = b.op("tanh", b.op("mul", b.op("add", x, y), b.scalar(scale, like=x)))
    return b.build(b.op("exp", h), b.op("relu", b.op("sub", h, y)))


def inputs(shape=(4, 5), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]


def test_first_calls_run_before_the_slow_compile_finishes_then_swap(slow):
    exe = rc.compile(graph(), "slowtier")
    assert isinstance(exe, tiered.TieredExecutable) and exe.tier == "fast"
    before = [exe.run(inputs(seed=s)) for s in range(3)]  # the first call requested the compile
    assert slow.started.wait(30), "the background compile never started"
    more = [exe.run(inputs(seed=s)) for s in range(3)]    # it is blocked: these ran on cpu
    assert exe.state == tiered.PENDING and slow.compiles == 0
    assert stats().extra["tier_pending"] == 1
    slow.gate.set()
    assert exe.wait(30) == tiered.SLOW and exe.tier == "slow"
    after = [exe.run(inputs(seed=s)) for s in range(3)]
    assert slow.compiles == 1
    for b, m, a in zip(before, more, after):   # the tiers agree exactly
        for x, y, z in zip(b, m, a):
            np.testing.assert_array_equal(x, y)
            np.testing.assert_array_equal(x, z)
    tiered.scheduler.idle(30)
    s = stats()
    assert (s.extra["tier_requests"], s.extra["tier_swaps"], s.extra["tier_pending"]) == (1, 1, 0)
    assert s.compiles_by_backend == {"cpu": 1, "slowtier": 1}


def test_results_match_the_reference_on_both_tiers(slow):
    g = graph(scale=0.7, shape=(3, 8))
    exe = rc.compile(g, "slowtier")
    ins = inputs((3, 8))
    ref = evaluate(g, ins)
    fast_out = exe.run(ins)
    slow.gate.set()
    assert exe.wait(30) == tiered.SLOW
    for r, f, s_ in zip(ref, fast_out, exe.run(ins)):
        np.testing.assert_array_equal(r, f)
        np.testing.assert_array_equal(r, s_)


def test_hot_threshold_delays_the_request(slow):
    with frame.config.override(hot_threshold=3):
        exe = rc.compile(graph(), "slowtier")
    exe.run(inputs())
    exe.run(inputs())
    assert exe.state == tiered.FAST and stats().extra.get("tier_requests", 0) == 0
    exe.run(inputs())  # the third call
    assert exe.state == tiered.PENDING and stats().extra["tier_requests"] == 1


def test_threshold_zero_requests_at_compile_time(slow):
    with frame.config.override(hot_threshold=0):
        exe = rc.compile(graph(), "slowtier")
    assert exe.state == tiered.PENDING


def test_the_in_process_cache_returns_the_same_tiered_executable(slow):
    a = rc.compile(graph(), "slowtier")
    assert rc.compile(graph(), "slowtier") is a
    a.run(inputs())
    slow.gate.set()
    a.wait(30)
    assert rc.compile(graph(), "slowtier") is a and a.tier == "slow"


def test_backpressure_refuses_and_asks_again(slow):
    # cooldown_s=0: asked again on the very next call (tests/runtime/test_pgo.py: the cooldown)
    with frame.config.override(max_pending=1, cooldown_s=0.0):
        first = rc.compile(graph(1.0), "slowtier")
        second = rc.compile(graph(2.0), "slowtier")
        first.run(inputs())
        assert slow.started.wait(30)
        second.run(inputs())   # one compile pending already: refused
        second.run(inputs())   # and again
        assert second.state == tiered.FAST
        assert stats().extra["tier_backpressure"] == 2
        slow.gate.set()
        assert first.wait(30) == tiered.SLOW
        assert tiered.scheduler.idle(30)
        second.run(inputs())   # room now: requested
        assert second.wait(30) == tiered.SLOW
    assert stats().extra["tier_swaps"] == 2


def test_a_compile_past_the_timeout_is_abandoned(slow, caplog):
    with frame.config.override(compile_timeout_s=0.05):
        exe = rc.compile(graph(), "slowtier")
        with caplog.at_level(logging.WARNING, logger="frame.tiered"):
            out = exe.run(inputs())
            assert exe.wait(30) == tiered.ABANDONED  # the gate is closed: it cannot finish
    assert any("abandoned" in r.message for r in caplog.records)
    assert stats().extra["tier_timeouts"] == 1
    slow.gate.set()                       # the abandoned compile ends: its result is dropped
    assert tiered.scheduler.idle(30)
    assert exe.state == tiered.ABANDONED and exe.tier == "fast"
    for a, b in zip(out, exe.run(inputs())):
        np.testing.assert_array_equal(a, b)
    assert stats().extra.get("tier_swaps", 0) == 0 and stats().extra["tier_pending"] == 0


def test_the_worker_moves_on_after_a_timeout(slow):
    """An abandoned compile frees its slot: the next request is accepted and runs
    while the abandoned one is still stuck."""
    with frame.config.override(compile_timeout_s=0.05, max_pending=1):
        stuck = rc.compile(graph(1.0), "slowtier")
        stuck.run(inputs())
        assert stuck.wait(30) == tiered.ABANDONED
    slow.started.clear()
    with frame.config.override(max_pending=1):
        nxt = rc.compile(graph(2.0), "slowtier")
        nxt.run(inputs())
        assert nxt.state == tiered.PENDING and stats().extra.get("tier_backpressure", 0) == 0
        assert slow.started.wait(30), "the next compile did not start"
        slow.gate.set()
        assert nxt.wait(30) == tiered.SLOW
    assert stuck.state == tiered.ABANDONED


def test_a_failing_background_compile_keeps_the_fast_tier(slow, caplog):
    slow.fail_with = FrameError(ErrorCode.INTERNAL, "the slow compiler crashed")
    exe = rc.compile(graph(), "slowtier")
    with caplog.at_level(logging.WARNING, logger="frame.tiered"):
        out = exe.run(inputs())
        slow.gate.set()
        assert exe.wait(30) == tiered.FAILED
    assert any("the slow compiler crashed" in r.message for r in caplog.records)
    assert stats().extra["tier_failures"] == 1
    for a, b in zip(out, exe.run(inputs())):   # still answering, on cpu
        np.testing.assert_array_equal(a, b)


def test_unimplemented_in_the_background_takes_the_fallback_chain(slow, caplog):
    slow.unsupported = {"tanh"}  # backend_lowering refuses it: partitioned around it
    exe = rc.compile(graph(), "slowtier")
    out = exe.run(inputs())
    slow.gate.set()
    with caplog.at_level(logging.WARNING, logger="frame.fallbacks"):
        assert exe.wait(30) == tiered.SLOW
    assert isinstance(exe.slow, FallbackExecutable)
    assert any("tanh" in r.message for r in caplog.records)
    assert stats().fallbacks[("tanh", "slowtier")] == 1
    for a, b in zip(out, exe.run(inputs())):
        np.testing.assert_array_equal(a, b)


def test_tiering_off_compiles_the_slow_tier_directly(slow):
    slow.gate.set()
    with frame.config.override(tiered=False):
        exe = rc.compile(graph(), "slowtier")
    assert isinstance(exe, SlowExecutable)


def test_the_jit_runs_through_the_swap_without_retranslating(slow):
    def f(x, y):
        return frame.tanh(x * 2.0 + y) - y
    jitted = frame.jit(f, backend="slowtier")
    x, y = (frame.tensor(a) for a in inputs())
    first = jitted(x, y).numpy()
    assert slow.started.wait(30)
    slow.gate.set()
    tiered.scheduler.idle(30)
    after = jitted(x, y).numpy()
    np.testing.assert_array_equal(first, after)
    np.testing.assert_allclose(first, f(x, y).numpy(), rtol=1e-6)
    s = stats()
    assert s.translations == 1 and s.extra["tier_swaps"] == 1


def test_openvino_and_cpu_tiers_agree():
    """The real pair: cpu codegen first, OpenVINO after the swap."""
    rc.clear_cache()
    reset_stats()
    g = graph(scale=0.9, shape=(16, 32))
    ins = inputs((16, 32))
    with frame.config.override(tiered=True, cache=False, hot_threshold=1, tier_quiet_s=0.0):
        exe = rc.compile(g, "openvino")
        fast_out = exe.run(ins)
        assert exe.wait(60) == tiered.SLOW
    assert type(exe.slow).__name__ == "OpenVinoExecutable"
    for f, s_ in zip(fast_out, exe.run(ins)):
        np.testing.assert_allclose(s_, f, rtol=2e-6, atol=1e-6)
    rc.clear_cache()


def test_quiet_period_waits_for_foreground_compiles(slow):
    """A queued compile waits while the program keeps compiling in the foreground."""
    with frame.config.override(tier_quiet_s=3600.0):
        exe = rc.compile(graph(1.0), "slowtier")
        exe.run(inputs())
        assert exe.state == tiered.PENDING
        assert not slow.started.wait(0.2)  # held back: a foreground compile just happened
    # at most MAX_YIELD_S after the request it starts regardless
    assert slow.started.wait(30)


def test_dropped_queued_compiles_are_requested_again_on_the_next_call(slow):
    """``drop_queued`` (the test fixtures' end of a test): a compile that has not
    started is dropped, the graph stays on the fast tier, and its next call asks
    for the compile again, which then swaps in."""
    slow.gate.set()
    with frame.config.override(tier_quiet_s=3600.0):
        exe = rc.compile(graph(1.0), "slowtier")
        exe.run(inputs())
        assert exe.state == tiered.PENDING and not slow.started.wait(0.1)
        worker = tiered.scheduler._worker   # it was yielding to the foreground
        assert tiered.scheduler.drop_queued() == 1
        assert exe.state == tiered.FAST and tiered.scheduler.pending == 0
        assert not slow.started.is_set()
        time.sleep(0.05)
        assert worker.is_alive(), "the worker died on the emptied queue"
        exe.run(inputs())
        assert exe.state == tiered.PENDING
        assert tiered.scheduler.idle(30)
    assert exe.wait(30) == tiered.SLOW and slow.compiles == 1
    np.testing.assert_array_equal(exe.run(inputs())[0], evaluate(graph(1.0), inputs())[0])


def test_a_thread_waiting_for_the_compiles_ends_the_quiet_period(slow):
    """While the program waits in ``scheduler.idle`` it compiles nothing in the
    foreground: the queued compile starts at once, long before MAX_YIELD_S."""
    slow.gate.set()
    with frame.config.override(tier_quiet_s=3600.0):
        exe = rc.compile(graph(1.0), "slowtier")
        exe.run(inputs())
        assert not slow.started.wait(0.2)  # held back by the quiet period
        began = time.monotonic()
        assert tiered.scheduler.idle(30)
        assert time.monotonic() - began < tiered.MAX_YIELD_S / 2
    assert slow.started.is_set() and exe.state == tiered.SLOW


_EXIT_CHILD = r"""
import threading, numpy as np, frame
from frame.hal import Backend, register_backend
from frame.ir import GraphBuilder
from frame.runtime import tiered
from frame.runtime.compile import compile as runtime_compile

class Stuck(Backend):
    name = "stuck"
    started = threading.Event()
    def supports(self, node):
        return True
    def compile(self, graph, options):
        self.started.set()
        threading.Event().wait()  # never returns

backend = Stuck()
register_backend("stuck", lambda: backend)
tiered.set_fast_tier("stuck", "cpu")
frame.config.hot_threshold = 1
frame.config.tier_quiet_s = 0.0
b = GraphBuilder()
x = b.input("float32", (3,))
exes = [runtime_compile(b.build(b.op("mul", x, b.scalar(k, like=x))), "stuck") for k in (2.0, 3.0)]
print([float(e.run([np.ones(3, np.float32)])[0][0]) for e in exes])
assert Stuck.started.wait(30)
print(tiered.scheduler.pending)   # one running, one queued
"""


def test_process_exit_does_not_hang_on_pending_compiles():
    env = dict(os.environ, PYTHONPATH=ROOT, FRAME_TIERED="1", FRAME_CACHE="0",
               FRAME_COMPILE_EXIT_WAIT_S="0.1")
    proc = subprocess.run([sys.executable, "-c", _EXIT_CHILD], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["[2.0, 3.0]", "2"]


_EXIT_OPENVINO_CHILD = r"""
import threading, numpy as np, frame
from frame.hal import get_backend
from frame.ir import GraphBuilder
from frame.runtime.compile import compile as runtime_compile

core = get_backend("openvino").core
entered = threading.Event()
real = core.compile_model
def compile_model(*args, **kwargs):
    entered.set()
    return real(*args, **kwargs)
core.compile_model = compile_model

frame.config.hot_threshold = 0
frame.config.tier_quiet_s = 0.0
b = GraphBuilder()
x = b.input("float32", (64, 64))
v = x
for k in range(12):
    v = b.op("tanh", b.op("add", b.op("matmul", v, x), b.scalar(k / 10, like=x)))
exe = runtime_compile(b.build(v), "openvino")
assert entered.wait(60)
print("exiting during compile_model")
"""


def test_exit_in_the_middle_of_an_openvino_compile(tmp_path):
    """OpenVINO aborts a process that exits inside compile_model (this child,
    with FRAME_COMPILE_EXIT_WAIT_S=0: 6 aborts in 6 runs); the exit hook waits
    for the compile in flight."""
    env = dict(os.environ, PYTHONPATH=ROOT, FRAME_TIERED="1", FRAME_CACHE="0",
               FRAME_CACHE_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", _EXIT_OPENVINO_CHILD], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "exiting during compile_model" in proc.stdout
