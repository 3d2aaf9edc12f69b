"""plan_memory: no two live values share a buffer (brute force), reuse happens,
peak <= naive, inputs/outputs/constants are never planned."""
from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from frame.ir import Graph, GraphBuilder, MemoryPlan, clone_graph, plan_memory, verify


_SHAPES = [(4,), (3, 4), (1, 4), (), (2, 3, 4)]
_UNARY = ["exp", "neg", "relu", "tanh", "abs"]
_BINARY = ["add", "mul", "sub", "maximum"]


def random_graph(seed: int) -> Graph:
    """A random DAG of elementwise ops over broadcast-compatible shapes and two dtypes."""
    rng = random.Random(seed)
    b = GraphBuilder()
    pool = [b.input("float32", rng.choice(_SHAPES)) for _ in range(rng.randint(1, 3))]
    for _ in range(rng.randint(3, 25)):
        r = rng.random()
        if r < 0.35:
            v = b.op(rng.choice(_UNARY), rng.choice(pool))
        elif r < 0.75:
            x, y = rng.choice(pool), rng.choice(pool)
            if x.type.dtype is not y.type.dtype:
                y = b.op("cast", y, dtype=x.type.dtype)
            v = b.op(rng.choice(_BINARY), x, y)
        elif r < 0.85:
            v = b.op("cast", rng.choice(pool), dtype=rng.choice(["float32", "float64"]))
        else:
            shape = rng.choice(_SHAPES)
            v = b.constant(np.full(shape, rng.random(), np.float32))
        pool.append(v)
    outputs = rng.sample(pool, rng.randint(1, min(3, len(pool))))
    return b.build(*outputs)


def brute_force_lifetimes(graph: Graph) -> dict[int, tuple[int, int]]:
    """value number -> (defining node index, last reading node index), independently."""
    numbers = {id(v): i for i, v in enumerate(graph.values())}
    out = {}
    for pos, node in enumerate(graph.nodes):
        for v in node.outputs:
            readers = [p for p, n in enumerate(graph.nodes) if any(u is v for u in n.inputs)]
            out[numbers[id(v)]] = (pos, max(readers, default=pos))
    return out


def check_plan(graph: Graph, plan: MemoryPlan) -> None:
    values = graph.values()
    numbers = {id(v): i for i, v in enumerate(values)}
    never = {numbers[id(v)] for v in graph.inputs} | {numbers[id(v)] for v in graph.outputs}
    never |= {numbers[id(n.output)] for n in graph.nodes if n.op == "constant"}
    expected = {numbers[id(v)] for n in graph.nodes for v in n.outputs} - never
    assert set(plan.assignment) == expected
    life = brute_force_lifetimes(graph)
    for n in expected:
        assert tuple(plan.lifetimes[n]) == life[n]
    planned = sorted(expected)
    for i, a in enumerate(planned):
        buf = plan.buffers[plan.assignment[a]]
        assert buf.dtype is values[a].type.dtype and buf.size >= values[a].type.size
        for b in planned[i + 1:]:
            if plan.assignment[a] == plan.assignment[b]:
                (sa, ea), (sb, eb) = life[a], life[b]
                assert ea < sb or eb < sa, f"%{a} {life[a]} and %{b} {life[b]} share a buffer"
    for index, buf in enumerate(plan.buffers):
        held = [values[n].type.size for n in planned if plan.assignment[n] == index]
        assert held and buf.size == max(held)
    assert plan.naive_bytes == sum(values[n].type.nbytes for n in planned)
    assert plan.max_live_bytes <= plan.peak_bytes <= plan.naive_bytes


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs(seed):
    g = random_graph(seed)
    verify(g)
    check_plan(g, plan_memory(g))


def _chain(n: int, shape=(8,)) -> Graph:
    b = GraphBuilder()
    v = b.input("float32", shape)
    for _ in range(n):
        v = b.op("exp", v)
    return b.build(v)


def test_chain_reuses_two_buffers():
    g = _chain(8)
    plan = plan_memory(g)
    check_plan(g, plan)
    assert len(plan.assignment) == 7 and len(plan.buffers) == 2
    assert plan.peak_bytes == 2 * 32 and plan.naive_bytes == 7 * 32
    # alternating: %1 buf0, %2 buf1, %3 buf0 (free once node 1, which read %1, completed)
    assert [plan.assignment[n] for n in range(1, 8)] == [0, 1, 0, 1, 0, 1, 0]


def test_no_in_place_aliasing_with_a_dying_input():
    g = _chain(3)
    plan = plan_memory(g)
    # %1 dies at node 1, which defines %2: they must not share a buffer
    assert plan.assignment[1] != plan.assignment[2]


def test_outputs_of_one_node_never_share():
    b = GraphBuilder()
    x = b.input("float32", (4,))
    lo, hi = b.op("split", b.op("exp", x), axis=0, sizes=(2, 2))
    g = b.build(b.op("add", lo, hi))
    plan = plan_memory(g)
    check_plan(g, plan)
    assert plan.assignment[2] != plan.assignment[3]


def test_dtypes_never_share_and_unused_values_are_planned():
    b = GraphBuilder()
    x = b.input("float32", (4,))
    a = b.op("cast", b.op("exp", x), dtype="float64")   # %1 f32, %2 f64
    b.op("neg", a)                                      # %3 dead: nobody reads it
    d = b.op("exp", b.op("cast", b.op("exp", a), dtype="float32"))
    g = b.build(d)
    plan = plan_memory(g)
    check_plan(g, plan)
    assert plan.lifetimes[3] == (2, 2)
    dt = {n: plan.buffers[i].dtype.name for n, i in plan.assignment.items()}
    assert dt == {1: "float32", 2: "float64", 3: "float64", 4: "float64", 5: "float32"}


def test_a_freed_buffer_grows_for_a_larger_value():
    b = GraphBuilder()
    x = b.input("float32", (4,))
    m = b.input("float32", (3, 4))
    s = b.op("exp", b.op("exp", x))           # %2, %3: (4,)
    big = b.op("add", b.op("exp", s), m)      # %4 (4,), %5 (3,4): reuses a freed (4,) buffer
    g = b.build(b.op("neg", big))
    plan = plan_memory(g)
    check_plan(g, plan)
    assert len(plan.buffers) == 2
    assert sorted(buf.size for buf in plan.buffers) == [4, 12]
    assert plan.peak_bytes == (4 + 12) * 4 < plan.naive_bytes


def test_inputs_outputs_and_constants_are_not_planned():
    b = GraphBuilder()
    x = b.input("float32", (4,))
    c = b.constant(np.ones(4, np.float32))
    y = b.op("mul", x, c)
    z = b.op("exp", y)
    g = b.build(z, y)
    plan = plan_memory(g)
    assert dict(plan.assignment) == {} and plan.buffers == () and plan.peak_bytes == 0


def test_plan_is_immutable_and_printable():
    plan = plan_memory(_chain(4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.peak_bytes = 0
    with pytest.raises(TypeError):
        plan.assignment[1] = 5
    text = str(plan)
    assert text.splitlines()[0] == ("memory plan: 2 buffers for 3 values, peak 64 B, naive 96 B, "
                                    "max live 64 B")
    assert "  buf0: float32 x 8 (32 B) <- %1 float32[8] [0,1], %3 float32[8] [2,3]" in text
    assert plan.buffer_of(2) == plan.buffers[1] and plan.buffer_of(0) is None


def test_plan_is_keyed_by_definition_number_so_clones_agree():
    g = random_graph(7)
    a, b = plan_memory(g), plan_memory(clone_graph(g))
    assert a == b
