"""The fallback chain, end to end, with the tiny test backend."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import frame
from frame.ir import GraphBuilder
from frame.runtime import compile as rc
from frame.runtime.fallback import FallbackExecutable
from frame.ops.interpreter import evaluate
from frame.runtime.stats import reset_stats, stats

from .tiny_backend import tiny


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    reset_stats()
    yield
    rc.clear_cache()


def _inputs(g, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-2, 2, v.type.shape).astype(v.type.dtype.np) for v in g.inputs]


def graph_with(op, **attrs):
    """x -> add -> <op> -> mul -> relu : the op sits between compiled runs."""
    b = GraphBuilder()
    x = b.input(frame.float32, (3, 4))
    y = b.input(frame.float32, (3, 4))
    s = b.op("add", x, y)
    t = b.op(op, s, **attrs)
    u = b.op("mul", t, y)
    return b.build(b.op("relu", u))


def _warnings(caplog, level=logging.WARNING):
    return [r for r in caplog.records if r.levelno == level and r.name.startswith("frame")]


def test_cpu_hop_partitions_and_matches_reference(caplog):
    caplog.set_level(logging.INFO, logger="frame.fallbacks")
    g = graph_with("tanh")
    exe = rc.compile(g, "tiny", frame.hal.CompileOptions(fusion=False))
    assert isinstance(exe, FallbackExecutable)
    assert exe.partitions == ["compiled[1 nodes]", "cpu:tanh", "compiled[2 nodes]"]
    ins = _inputs(g)
    np.testing.assert_allclose(exe.run(ins)[0], evaluate(g, ins)[0], rtol=1e-6)
    # each hop is one INFO line (FRAME_LOG=fallbacks); the user gets one WARN for the graph
    node_lines = [r for r in _warnings(caplog, logging.INFO) if "running it via" in r.getMessage()]
    assert len(node_lines) == 1
    msg = node_lines[0].getMessage()
    assert "tiny" in msg and "cpu reference kernel" in msg and "tiny compiles only" in msg
    graph_warns = _warnings(caplog)
    assert len(graph_warns) == 1
    assert graph_warns[0].getMessage() == (
        "fallback: backend 'tiny' cannot compile 1 op(s) of a 4-node graph (tanh on float32); "
        "they run via the cpu reference kernels (1). Why (tanh): tiny compiles only add, "
        "constant, mul, relu, sub; FRAME_LOG=fallbacks lists every op.")
    assert stats().fallbacks == {("tanh", "tiny"): 1}
    assert stats().fallback_targets == {("tanh", "tiny", "cpu"): 1}


def test_backend_kernel_hop(caplog):
    caplog.set_level(logging.WARNING, logger="frame")
    g = graph_with("exp")
    exe = rc.compile(g, "tiny", frame.hal.CompileOptions(fusion=False))
    assert "kernel:exp" in exe.partitions
    ins = _inputs(g)
    np.testing.assert_allclose(exe.run(ins)[0], evaluate(g, ins)[0], rtol=1e-6)
    assert any("eager kernels" in r.getMessage() for r in _warnings(caplog))
    assert stats().fallback_targets == {("exp", "tiny", "kernel"): 1}


def test_decomposition_hop(caplog):
    caplog.set_level(logging.WARNING, logger="frame")
    g = graph_with("gelu", approximate="tanh")
    exe = rc.compile(g, "tiny", frame.hal.CompileOptions(fusion=False))
    ins = _inputs(g)
    np.testing.assert_allclose(exe.run(ins)[0], evaluate(g, ins)[0], rtol=1e-5, atol=1e-6)
    targets = stats().fallback_targets
    assert targets[("gelu", "tiny", "decomposition")] == 1
    # the decomposition's own unsupported primitive (tanh) went to cpu, never decomposed again
    assert targets[("tanh", "tiny", "cpu")] == 1
    assert any("decomposition" in r.getMessage() for r in _warnings(caplog))
    # the supported primitives of the decomposition are compiled with their neighbours
    assert any(p.startswith("compiled[") and int(p[9:].split()[0]) > 2 for p in exe.partitions)


def test_counts_do_not_grow_on_cache_hits():
    g = graph_with("tanh")
    exe = rc.compile(g, "tiny")
    exe.run(_inputs(g))
    first = stats().fallbacks
    for _ in range(3):
        assert rc.compile(graph_with("tanh"), "tiny") is exe
        exe.run(_inputs(g))
    assert stats().fallbacks == first == {("tanh", "tiny"): 1}


def test_fused_unsupported_node_is_opened_up():
    # with fusion on, tanh sits inside a fused node the tiny backend cannot take
    g = graph_with("tanh")
    exe = rc.compile(g, "tiny")
    ins = _inputs(g)
    np.testing.assert_allclose(exe.run(ins)[0], evaluate(g, ins)[0], rtol=1e-6)
    assert stats().fallbacks == {("tanh", "tiny"): 1}


def test_output_that_is_an_input_or_constant_is_a_copy():
    b = GraphBuilder()
    x = b.input(frame.float32, (2,))
    c = b.constant(np.array([1.0, 2.0], np.float32))
    t = b.op("tanh", x)
    g = b.build(t, x, c)
    exe = rc.compile(g, "tiny")
    xin = np.array([0.5, 1.0], np.float32)
    out = exe.run([xin])
    assert not np.shares_memory(out[1], xin)
    out[2][0] = 99  # must not corrupt the cached executable's constant
    assert exe.run([xin])[2].tolist() == [1.0, 2.0]
