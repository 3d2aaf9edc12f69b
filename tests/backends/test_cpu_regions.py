"""Regions on the cpu executable: a matmul heading a fused node writes its
product with ``out=`` into the node's own array and the epilogue runs in
place; ``where`` is written with ``out=`` (a branch-free select on the bit
patterns, or a masked copy).  Results are bit
for bit those of the reference interpreter on the unfused graph, for float32,
float64 and integer dtypes."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.autograd.backward import build_backward_graph
from frame.ir import GraphBuilder, clone_graph
from frame.ops.interpreter import evaluate
from frame.passes.fusion import OperatorFusion
from frame.runtime import compile as rc
from ..graphcheck import assert_identical


@pytest.fixture(autouse=True)
def _fresh_cache():
    rc.clear_cache()
    with frame.config.override(cache=False, tiered=False):
        yield
    rc.clear_cache()


def _inputs(graph, seed=0, special=False):
    rng = np.random.default_rng(seed)
    out = []
    for v in graph.inputs:
        dt = v.type.dtype.np
        if dt.kind == "b":
            out.append(rng.random(v.type.shape) > 0.5)
        elif dt.kind in "iu":
            out.append(rng.integers(-3, 4, v.type.shape).astype(dt))
        else:
            x = rng.standard_normal(v.type.shape).astype(dt)
            if special and x.size >= 4:
                x.reshape(-1)[:4] = [np.nan, np.inf, -0.0, -np.inf]
            out.append(x)
    return out


def _check(graph, seed=0, special=False):
    ins = _inputs(graph, seed, special)
    exe = rc.compile(graph, "cpu")
    with np.errstate(all="ignore"):
        want = evaluate(graph, ins)
        assert_identical(evaluate(OperatorFusion().run(clone_graph(graph)), ins), want)
        assert_identical(exe.run(ins), want)
        assert_identical(exe.run(ins), want)   # the second run reuses the buffers
    return exe


def _mlp_step(dtype: str, sizes=(12, 8, 6, 4), batch=5):
    """relu MLP, mean squared error (cross-entropy for floats: the relu
    gradient and the bias gradient), its backward and an SGD update."""
    b = GraphBuilder()
    x = b.input(dtype, (batch, sizes[0]))
    target = b.input(dtype, (batch, sizes[-1]))
    params, h = [], x
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        w, bias = b.input(dtype, (n_out, n_in)), b.input(dtype, (n_out,))
        params += [w, bias]
        h = b.op("add", b.op("matmul", h, b.op("transpose", w, perm=(1, 0))), bias)
        if i < len(sizes) - 2:
            h = b.op("relu", h)
    d = b.op("sub", h, target)
    loss = b.op("sum", b.op("mul", d, d), axes=(0, 1))
    g = build_backward_graph(b.build(loss), 0, list(range(2, 2 + len(params))))
    gb = GraphBuilder(g)
    lr = gb.scalar(0.01, like=g.inputs[2])
    updated = [gb.op("sub", p, gb.op("mul", dp, lr)) for p, dp in zip(g.inputs[2:], g.outputs[1:])]
    g.set_outputs([g.outputs[0]] + updated)
    return g


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mlp_training_step_regions_are_bitwise_equal(dtype):
    graph = _mlp_step(dtype)
    fused = OperatorFusion().run(clone_graph(graph))
    bodies = [[n.op for n in node.body.nodes] for node in fused.nodes if node.op == "fused"]
    assert ["matmul", "add"] in bodies                       # forward: matmul + bias
    assert any(ops[0] == "matmul" and "where" in ops for ops in bodies)   # relu gradient
    exe = _check(graph)
    _check(graph, seed=1, special=True)
    src = exe.source
    assert "k_where" not in src, "where writes into its array"
    assert "np_bitwise_xor(" in src
    # every matmul writes a preallocated or fresh array of its own type
    assert "k_matmul" not in src


def test_integer_regions_are_bitwise_equal():
    b = GraphBuilder()
    x, w, bias = b.input("int32", (6, 5)), b.input("int32", (5, 4)), b.input("int32", (4,))
    h = b.op("relu", b.op("add", b.op("matmul", x, w), bias))
    s = b.op("sum", b.op("mul", h, h), axes=(1,))
    _check(b.build(s, b.op("maximum", b.op("matmul", h, b.op("transpose", w, perm=(1, 0))), x)))


def test_matmul_head_writes_the_region_array_and_the_epilogue_runs_in_place():
    b = GraphBuilder()
    x, w, bias = b.input("float32", (16, 8)), b.input("float32", (8, 4)), b.input("float32", (4,))
    h = b.op("add", b.op("matmul", x, w), bias)
    out = b.op("mul", b.op("relu", h), h)           # h is read twice inside: one region
    exe = _check(b.build(out))
    lines = [ln.strip() for ln in exe.source.splitlines() if ln.strip().startswith("np_")]
    assert lines[0].startswith("np_matmul(v0, v1, v3)"), exe.source
    # add in place on the product; relu into a scratch array (h is still needed)
    assert lines[1] == "np_add(v3, v2, v3)", exe.source
    assert "k_" not in exe.source


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_where_lowering_every_aliasing_form(dtype):
    """where(c, a, b) with out being a (the fused relu gradient), b, neither, or
    (a bool result) its own condition: the same bits as np.where."""
    b = GraphBuilder()
    c0, a0, b0 = (b.input("float32", (3, 4)) for _ in range(3))
    p, q = b.input(dtype, (3, 4)), b.input(dtype, (3, 4))
    zero = b.constant(np.zeros((), dtype))
    cond = b.op("greater", c0, a0)
    ap = b.op("maximum", p, q)                                        # dies in where: out == a
    out_a = b.op("where", cond, ap, q)
    bp = b.op("minimum", q, p)                                        # out == b
    out_b = b.op("where", b.op("less", c0, b0), p, bp)
    out_n = b.op("where", b.op("equal", a0, b0), p, q)                 # out is neither
    mask = b.op("greater", b0, c0)
    out_c = b.op("where", mask, mask, b.op("less", a0, c0))           # bool over the condition
    out_z = b.op("where", cond, b.op("maximum", q, q), zero)          # a 0-d branch
    graph = b.build(out_a, out_b, out_n, out_c, out_z)
    for seed in range(3):
        exe = _check(graph, seed=seed, special=(seed == 2))
    src = exe.source
    assert "k_where" not in src
    if dtype != "bool":   # (bool graphs simplify further before fusion)
        # bit selects for out == a, neither, the 0-d branch; a masked copy for
        # out == b; np.where copied for the bool result over its condition
        assert src.count("np_bitwise_xor(") == 6 and src.count("np_multiply(") == 3
        assert src.count("np_copyto(") == 2 and src.count("np_where(") == 1


def test_where_with_a_cast_runs_its_kernel():
    b = GraphBuilder()
    c, p, q = b.input("bool", (3,)), b.input("int32", (3,)), b.input("float32", (3,))
    exe = _check(b.build(b.op("where", c, p, q)))
    assert "k_where" in exe.source


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("softmax_first", [False, True])
def test_softmax_and_cross_entropy_share_their_exponentials(dtype, reduction, softmax_first):
    b = GraphBuilder()
    x, y = b.input(dtype, (7, 5)), b.input("int64", (7,))
    logits = b.op("mul", x, x)
    if softmax_first:
        p = b.op("softmax", logits, axis=1)
        loss = b.op("cross_entropy", logits, y, reduction=reduction)
    else:
        loss = b.op("cross_entropy", logits, y, reduction=reduction)
        p = b.op("softmax", logits, axis=1)
    graph = b.build(loss, b.op("sub", p, b.scalar(0.5, like=p)))
    rng = np.random.default_rng(3)
    for scale in (1.0, 40.0):
        ins = [(rng.standard_normal((7, 5)) * scale).astype(dtype), rng.integers(0, 5, 7)]
        exe = rc.compile(graph, "cpu")
        with np.errstate(all="ignore"):
            assert_identical(exe.run(ins), evaluate(graph, ins))
    src = exe.source
    assert src.count("k_softmax_cross_entropy(") == 1
    assert "k_softmax(" not in src and "k_cross_entropy(" not in src


def test_shared_softmax_cross_entropy_raises_the_reference_error():
    b = GraphBuilder()
    x, y = b.input("float32", (3, 4)), b.input("int32", (3,))
    graph = b.build(b.op("cross_entropy", x, y), b.op("softmax", x, axis=1))
    ins = [np.ones((3, 4), np.float32), np.array([0, 4, 1], np.int32)]
    with pytest.raises(frame.hal.FrameError) as want:
        evaluate(graph, ins)
    exe = rc.compile(graph, "cpu")
    assert "k_softmax_cross_entropy(" in exe.source
    with pytest.raises(type(want.value)) as got:
        exe.run(ins)
    assert str(got.value) == str(want.value)
