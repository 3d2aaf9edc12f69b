"""The fallback chain when a backend refuses a whole graph at ``Backend.compile``
(with fusion on), and ops that no backend can run: named at compile time."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.hal import (Backend, ErrorCode, Executable, FrameError, register_backend,
                       unimplemented)
from frame.ir import GraphBuilder
from frame.ops.registry import register, unregister
from frame.ops.schema import OpSchema
from frame.ops.interpreter import evaluate
from frame.runtime import compile as rc
from frame.runtime.fallback import FallbackExecutable
from frame.runtime.stats import reset_stats, stats


class _Run(Executable):
    def __init__(self, graph):
        self.graph = graph

    def run(self, inputs):
        return [np.array(o, copy=True) for o in evaluate(self.graph, inputs)]


class PickyBackend(Backend):
    """Claims every elementwise node, but its ``compile`` refuses any graph holding
    a ``tanh`` (a whole-graph refusal: no ``unsupported`` list), as a backend
    finds out only when it tries (a library error, a size limit)."""

    name = "picky"

    def __init__(self):
        self.compiled: list[list[str]] = []

    def supports(self, node) -> bool:
        if node.body is not None:
            return all(self.supports(n) for n in node.body.nodes)
        return node.op in ("add", "mul", "tanh", "relu", "constant")

    def compile(self, graph, options):
        ops = [n.op for n in graph.nodes]
        for n in graph.nodes:
            if n.body is not None:
                ops += [m.op for m in n.body.nodes]
        if "tanh" in ops:
            raise unimplemented("backend 'picky' cannot compile tanh after all")
        self.compiled.append(ops)
        return _Run(graph)


_picky = PickyBackend()
register_backend("picky", lambda: _picky)


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    reset_stats()
    _picky.compiled.clear()
    yield
    rc.clear_cache()


def _graph():
    b = GraphBuilder()
    x = b.input(frame.float32, (3, 4))
    y = b.input(frame.float32, (3, 4))
    t = b.op("tanh", b.op("add", x, y))        # fused with its neighbours
    return b.build(b.op("relu", b.op("mul", t, y)))


def test_whole_graph_refusal_with_fusion_falls_back_instead_of_raising():
    g = _graph()
    exe = rc.compile(g, "picky")  # fusion is on in the standard pipeline
    assert isinstance(exe, FallbackExecutable)
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    np.testing.assert_allclose(exe.run(ins)[0], evaluate(g, ins)[0], rtol=1e-6)
    assert not any("tanh" in ops for ops in _picky.compiled)
    assert stats().fallbacks.get(("tanh", "picky"), 0) == 1


def test_whole_graph_refusal_through_jit():
    def f(x, y):
        return ((x + y).tanh() * y).relu()

    rng = np.random.default_rng(1)
    x, y = (frame.tensor(rng.standard_normal((3, 4)).astype(np.float32)) for _ in range(2))
    got = frame.jit(f, backend="picky")(x, y).numpy()
    np.testing.assert_allclose(got, f(x, y).numpy(), rtol=1e-6)


def _kernel_less_op():
    def infer(types, attrs):
        return [types[0]]
    return register(OpSchema("no_kernel_anywhere", 1, infer, None,
                             doc="test op: a schema without a reference kernel"), replace=True)


@pytest.mark.parametrize("backend", ["picky", "cpu"])
def test_an_op_without_any_kernel_is_named_at_compile_time(backend):
    _kernel_less_op()
    try:
        b = GraphBuilder()
        x = b.input(frame.float32, (3,))
        g = b.build(b.op("relu", b.op("no_kernel_anywhere", b.op("add", x, x))))
        with pytest.raises(FrameError) as err:
            rc.compile(g, backend)
        assert "no_kernel_anywhere" in str(err.value)
        assert err.value.code is ErrorCode.UNIMPLEMENTED
    finally:
        unregister("no_kernel_anywhere")


class ListyBackend(PickyBackend):
    """Lists the nodes holding a relu as unsupported (a partial refusal), and then
    refuses the partition that holds the tanh as a whole."""

    name = "listy"

    def compile(self, graph, options):
        holding = [n for n in graph.nodes
                   if n.op == "relu" or (n.body is not None
                                         and any(m.op == "relu" for m in n.body.nodes))]
        if holding:
            err = unimplemented("backend 'listy' cannot compile relu")
            err.unsupported = holding
            raise err
        return super().compile(graph, options)


_listy = ListyBackend()
register_backend("listy", lambda: _listy)


def test_a_partition_refused_at_compile_time_runs_op_by_op():
    g = _graph()
    exe = rc.compile(g, "listy")
    rng = np.random.default_rng(2)
    ins = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    np.testing.assert_allclose(exe.run(ins)[0], evaluate(g, ins)[0], rtol=1e-6)
    assert not any("tanh" in ops for ops in _listy.compiled)
