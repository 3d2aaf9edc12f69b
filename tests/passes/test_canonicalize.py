"""canonicalize beyond its golden cases: the transpose rules on a training step,
on random graphs of transposes and matmuls (same values as before, a
fixpoint, deterministic), and the rules' limits."""
from __future__ import annotations

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.hal import get_backend
from frame.ir import Graph, GraphBuilder, clone_graph, dump_text, verify
from frame.ops.interpreter import evaluate
from frame.passes import PassManager, standard_pipeline
from frame.passes.canonicalize import Canonicalize
from ..graphcheck import assert_identical, mlp_training_graph, random_inputs


def _transposes(graph: Graph) -> list:
    return [n for n in graph.nodes if n.op == "transpose"]


def _until(graph: Graph, last: str) -> Graph:
    """``graph`` (cloned) after the standard pipeline's passes up to ``last``."""
    passes = standard_pipeline(get_backend("cpu"))
    cut = [p.name for p in passes].index(last) + 1
    return PassManager(passes[:cut]).run(clone_graph(graph))


def test_training_step_keeps_only_the_transposes_blas_can_read():
    graph = mlp_training_graph()
    assert len(_transposes(graph)) == 11
    after = _until(graph, "dead_node_elimination")
    users = after.users()
    outputs = {id(v) for v in after.outputs}
    for node in _transposes(after):
        src = node.inputs[0].producer
        assert src is None or src.op != "transpose", "a transpose of a transpose is left"
        if src is not None and src.op == "matmul":
            assert len(users[id(node.inputs[0])]) > 1 or id(node.inputs[0]) in outputs
    # the forward W^T of each layer, and one small transposed gradient operand per
    # weight gradient: (x^T g)^T became g^T x, W^T^T cancelled
    kept = sorted(n.output.type.shape for n in _transposes(after))
    assert kept == [(10, 128), (128, 10), (128, 128), (256, 128), (256, 128), (784, 256)]
    assert not any(n.output in after.outputs for n in _transposes(after))
    # every weight gradient (an output) is now a matmul, not a transpose of one
    for grad in after.outputs[1:7:2]:
        assert grad.producer.op == "matmul"


def test_training_step_values_barely_move():
    """(a @ b)^T and b^T @ a^T add the same products, possibly grouped differently."""
    graph = mlp_training_graph((20, 16, 12, 10), batch=8)
    after = _until(graph, "dead_node_elimination")
    ins = random_inputs(graph, 0, int_range=4)
    ins[1] = np.abs(ins[1]) % 10
    for got, want in zip(evaluate(after, ins), evaluate(graph, ins)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def _random_graph(seed: int, dtype: str) -> Graph:
    """Random square matmuls, transposes and adds (every value [4,4] or [4,4,4])."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    pool = [b.input(dtype, (4, 4)), b.input(dtype, (4, 4)), b.input(dtype, (4, 4, 4))]
    for _ in range(int(rng.integers(4, 16))):
        a, c = (pool[int(i)] for i in rng.integers(len(pool), size=2))
        r = rng.random()
        if r < 0.4:
            a = pool[-1] if rng.random() < 0.5 else a   # often a product just made
            perm = (1, 0) if a.type.rank == 2 else tuple(int(p) for p in rng.permutation(3))
            v = b.op("transpose", a, perm=perm)
        elif r < 0.8:
            v = b.op("matmul", a, c)
        else:
            v = b.op("add", a, c)
        pool.append(v)
    outs = [pool[-1]] + [pool[int(i)] for i in rng.integers(len(pool), size=int(rng.integers(0, 3)))]
    return b.build(*outs)


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_same_values_fixpoint_deterministic(seed):
    graph = _random_graph(seed, "int64")       # integer products: the rewrites are exact
    once = Canonicalize().run(clone_graph(graph))
    verify(once)
    text = dump_text(once)
    assert dump_text(Canonicalize().run(clone_graph(once))) == text
    assert dump_text(Canonicalize().run(clone_graph(graph))) == text
    ins = random_inputs(graph, seed)
    assert_identical(evaluate(once, ins), evaluate(graph, ins))
    for node in _transposes(once):
        src = node.inputs[0].producer
        assert src is None or src.op != "transpose"


def test_the_rules_reach_float_graphs_too():
    changed = 0
    for seed in range(40):
        graph = _random_graph(seed, "float32")
        once = Canonicalize().run(clone_graph(graph))
        changed += dump_text(once) != dump_text(graph)
        ins = random_inputs(graph, seed)
        for got, want in zip(evaluate(once, ins), evaluate(graph, ins)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert changed >= 20


def test_a_dead_reader_keeps_the_product():
    """A product read by a transpose and by a node nobody uses still has two
    users: canonicalize does not guess what dead_node_elimination will drop."""
    b = GraphBuilder()
    x, y = b.input("float32", (3, 4)), b.input("float32", (4, 5))
    m = b.op("matmul", x, y)
    b.op("neg", m)
    graph = b.build(b.op("transpose", m, perm=(1, 0)))
    once = Canonicalize().run(graph)
    assert [n.op for n in once.nodes] == ["matmul", "neg", "transpose"]


def test_many_drops_and_new_nodes_in_one_sweep():
    """Identity nodes dropped early in a sweep are freed while the transposed
    matmul rule makes new nodes: the pass must not confuse a new node with a
    dropped one that had the same ``id`` (it once did, now and then)."""
    for _ in range(10):
        b = GraphBuilder()
        x, g = b.input("float32", (4, 6)), b.input("float32", (4, 5))
        outs = []
        for _ in range(40):
            c = b.op("cast", x, dtype="float32")                       # an identity
            m = b.op("matmul", b.op("transpose", c, perm=(1, 0)), g)
            outs.append(b.op("neg", b.op("transpose", m, perm=(1, 0))))
        graph = Canonicalize().run(b.build(*outs))
        verify(graph)
        assert [n.op for n in graph.nodes].count("matmul") == 40
