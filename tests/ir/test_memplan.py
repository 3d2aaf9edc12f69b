"""plan_memory: no two live values share a buffer (brute force), reuse happens,
peak <= naive, inputs/outputs/constants are never planned, transposes are
views whose source outlives them."""
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
    """A random DAG of elementwise ops and transposes over broadcast-compatible
    shapes and two dtypes."""
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
        elif r < 0.8:
            v = b.op("cast", rng.choice(pool), dtype=rng.choice(["float32", "float64"]))
        elif r < 0.9:  # transposed and back (shapes stay broadcastable): views
            x = rng.choice(pool)
            perm = list(range(x.type.rank))
            rng.shuffle(perm)
            t = b.op("transpose", x, perm=tuple(perm))
            if rng.random() < 0.5:
                t = b.op(rng.choice(_UNARY), t)
            v = b.op("transpose", t, perm=tuple(perm.index(i) for i in range(len(perm))))
        else:
            shape = rng.choice(_SHAPES)
            v = b.constant(np.full(shape, rng.random(), np.float32))
        pool.append(v)
    outputs = rng.sample(pool, rng.randint(1, min(3, len(pool))))
    return b.build(*outputs)


def _shows(v, w) -> bool:
    """Does value ``v`` show ``w``'s memory (``w`` itself, or a chain of
    transposes of ``w`` that are not graph outputs; ``outputs`` below)?"""
    while v is not w:
        node = v.producer
        if node is None or node.op != "transpose" or v in _shows.outputs:
            return False
        v = node.inputs[0]
    return True


def brute_force_lifetimes(graph: Graph) -> dict[int, tuple[int, int]]:
    """value number -> (defining node index, last node index reading it or a view
    of it), independently."""
    numbers = {id(v): i for i, v in enumerate(graph.values())}
    _shows.outputs = graph.outputs
    out = {}
    for pos, node in enumerate(graph.nodes):
        for v in node.outputs:
            readers = [p for p, n in enumerate(graph.nodes) if any(_shows(u, v) for u in n.inputs)]
            out[numbers[id(v)]] = (pos, max(readers, default=pos))
    return out


def check_plan(graph: Graph, plan: MemoryPlan) -> None:
    values = graph.values()
    numbers = {id(v): i for i, v in enumerate(values)}
    never = {numbers[id(v)] for v in graph.inputs} | {numbers[id(v)] for v in graph.outputs}
    never |= {numbers[id(n.output)] for n in graph.nodes if n.op == "constant"}
    views = {numbers[id(n.output)]: numbers[id(n.inputs[0])] for n in graph.nodes
             if n.op == "transpose" and numbers[id(n.output)] not in never}
    assert dict(plan.views) == views
    expected = {numbers[id(v)] for n in graph.nodes for v in n.outputs} - never - set(views)
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


def test_random_graphs_have_views():
    """The random graphs exercise views, including views of views."""
    plans = [plan_memory(random_graph(seed)) for seed in range(40)]
    assert sum(len(p.views) for p in plans) >= 10
    assert any(source in p.views for p in plans for source in p.views.values())


# --------------------------------------------------------------------------- views

def _clobber_graph() -> Graph:
    """%1 = exp(x); %2 = transpose(%1); then a chain of same-sized values, and a
    late reader of the view: greedy reuse without the view rule would put %3 in
    %1's buffer (%1 itself is read last by the transpose, node 1)."""
    b = GraphBuilder()
    x = b.input("float32", (4, 4))
    e = b.op("exp", x)                         # %1, node 0
    t = b.op("transpose", e, perm=(1, 0))      # %2, node 1: a view of %1
    u = b.op("neg", x)                         # %3, node 2
    w = b.op("abs", u)                         # %4, node 3
    late = b.op("add", w, t)                   # %5, node 4: reads the view
    return b.build(b.op("tanh", late))          # %6, node 5


def test_a_view_has_no_buffer_and_keeps_its_source_alive():
    g = _clobber_graph()
    plan = plan_memory(g)
    check_plan(g, plan)
    assert dict(plan.views) == {2: 1}
    assert 2 not in plan.assignment and 2 not in plan.lifetimes and 2 not in plan.types
    assert plan.lifetimes[1] == (0, 4)          # to the add that reads the view, not node 1
    # nothing defined while the view is alive shares %1's buffer
    for n in (3, 4, 5):
        assert plan.assignment[n] != plan.assignment[1]
    assert plan.max_live_bytes <= plan.peak_bytes <= plan.naive_bytes
    assert plan.naive_bytes == 4 * 64              # %1, %3, %4, %5: the view weighs nothing


def test_without_the_view_rule_the_source_buffer_would_be_reused():
    """The same graph with a copying op in place of the transpose: %1 dies at
    node 1 and %3 takes its buffer -- which the view rule must prevent."""
    b = GraphBuilder()
    x = b.input("float32", (4, 4))
    e = b.op("exp", x)
    t = b.op("neg", e)                          # a copy instead of a view
    u = b.op("neg", x)
    w = b.op("abs", u)
    g = b.build(b.op("tanh", b.op("add", w, t)))
    plan = plan_memory(g)
    assert plan.lifetimes[1] == (0, 1)
    assert plan.assignment[3] == plan.assignment[1]


def test_chains_of_views_extend_the_root():
    b = GraphBuilder()
    x = b.input("float32", (2, 3, 4))
    e = b.op("exp", x)                                   # %1, node 0
    t1 = b.op("transpose", e, perm=(2, 0, 1))            # %2, node 1
    t2 = b.op("transpose", t1, perm=(0, 2, 1))           # %3, node 2
    n = b.op("neg", x)                                   # %4, node 3
    s = b.op("sum", t2, axes=(0,), keepdims=False)       # %5, node 4
    g = b.build(b.op("add", b.op("sum", n, axes=(2,), keepdims=False),
                     b.op("transpose", s, perm=(1, 0))))
    plan = plan_memory(g)
    check_plan(g, plan)
    assert dict(plan.views) == {2: 1, 3: 2, 7: 5}
    assert plan.lifetimes[1] == (0, 4)                   # read through %3 at node 4
    assert plan.assignment[4] != plan.assignment[1]
    assert plan.lifetimes[5] == (4, 7)                   # its view %7 is read by the add
    assert "  view %2 of %1\n  view %3 of %2\n  view %7 of %5" in str(plan)


def test_a_transpose_that_is_a_graph_output_is_planned_like_any_output():
    b = GraphBuilder()
    x = b.input("float32", (3, 4))
    e = b.op("exp", x)
    t = b.op("transpose", e, perm=(1, 0))
    g = b.build(t, b.op("transpose", x, perm=(1, 0)))
    plan = plan_memory(g)
    check_plan(g, plan)
    assert dict(plan.views) == {} and set(plan.assignment) == {1}
    assert plan.lifetimes[1] == (0, 1)


def test_views_of_inputs_and_constants_extend_nothing():
    b = GraphBuilder()
    x = b.input("float32", (3, 4))
    c = b.constant(np.ones((4, 3), np.float32))
    tx = b.op("transpose", x, perm=(1, 0))               # %2 of %0
    tc = b.op("transpose", c, perm=(1, 0))               # %3 of %1 (the constant)
    g = b.build(b.op("add", b.op("exp", tx), b.op("transpose", tc, perm=(1, 0))))
    plan = plan_memory(g)
    check_plan(g, plan)
    assert dict(plan.views) == {2: 0, 3: 1, 5: 3}
    assert set(plan.assignment) == {4}


def test_plan_is_keyed_by_definition_number_so_clones_agree():
    g = random_graph(7)
    a, b = plan_memory(g), plan_memory(clone_graph(g))
    assert a == b
