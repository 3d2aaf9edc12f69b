"""build_backward_graph as a transform: arguments, errors, structure, and the
documented semantics (ties, zeros, integer paths, summed uses)."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.autograd import (NonDifferentiableError, build_backward_graph, gradient_rule,
                            unbroadcast)
from frame.hal.errors import FrameError
from frame.ir import GraphBuilder, clone_graph, dump_text, verify
from frame.ops import AttrSpec, OpSchema, register
from frame.ops.interpreter import evaluate
from frame.ops.registry import unregister
from frame.passes.fusion import OperatorFusion

from .gradcheck import check_gradients

F64 = frame.float64


def _sum_all(b, v):
    return b.op("sum", v, axes=tuple(range(v.type.rank)), keepdims=False)


def _grads(graph, arrays, wrt, loss_index=0):
    g = build_backward_graph(graph, loss_index, wrt)
    return evaluate(g, arrays)[len(graph.outputs):]


# --------------------------------------------------------------------------- structure

def test_outputs_are_forward_outputs_then_one_gradient_per_wrt():
    b = GraphBuilder()
    x, y = b.input(F64, (2, 3)), b.input(F64, (3,))
    prod = b.op("mul", x, y)
    graph = b.build(prod, _sum_all(b, b.op("tanh", prod)))
    before = dump_text(graph)
    result = build_backward_graph(graph, 1, [1, 0])
    assert dump_text(graph) == before, "the input graph must not change"
    verify(result)
    assert len(result.outputs) == 4
    assert [v.type for v in result.outputs[2:]] == [y.type, x.type]
    xv, yv = np.random.default_rng(0).normal(size=(2, 3)), np.array([0.5, -1.0, 2.0])
    outs = evaluate(result, [xv, yv])
    np.testing.assert_allclose(outs[0], xv * yv)
    np.testing.assert_allclose(outs[1], np.tanh(xv * yv).sum())
    d = 1 - np.tanh(xv * yv) ** 2
    np.testing.assert_allclose(outs[2], (d * xv).sum(axis=0))
    np.testing.assert_allclose(outs[3], d * yv)


def test_result_is_a_clone_that_shares_no_values():
    b = GraphBuilder()
    x = b.input(F64, (2,))
    graph = b.build(_sum_all(b, b.op("exp", x)))
    result = build_backward_graph(graph, 0, [0])
    old = {id(v) for v in graph.values()}
    assert not old & {id(v) for v in result.values()}


def test_only_nodes_on_a_path_from_wrt_to_loss_get_gradients():
    def build(with_side_branch: bool):
        b = GraphBuilder()
        x, y = b.input(F64, (3,)), b.input(F64, (3,))
        # y feeds the loss too, but y is not a wrt value: no rule may run for its ops
        loss = b.op("add", _sum_all(b, b.op("sin", x)), _sum_all(b, b.op("exp", y)))
        outs = [loss]
        if with_side_branch:  # an output the loss does not depend on
            outs.append(b.op("log", b.op("exp", x)))
        return b.build(*outs)

    plain = build_backward_graph(build(False), 0, [0])
    side = build_backward_graph(build(True), 0, [0])
    n_plain = len(build(False).nodes)
    n_side = len(build(True).nodes)
    assert plain.op_names()[n_plain:] == side.op_names()[n_side:]
    backward_ops = plain.op_names()[n_plain:]
    assert "exp" not in backward_ops and "cos" in backward_ops


def test_gradients_nobody_needs_are_not_built():
    """Rules build every input's gradient; those of inputs that are not on a
    path (here the constant exponent of pow) are dropped from the result."""
    b = GraphBuilder()
    x = b.input(F64, (3,))
    graph = b.build(_sum_all(b, b.op("pow", x, b.scalar(3.0, like=x))))
    result = build_backward_graph(graph, 0, [0])
    assert "log" not in result.op_names()  # d/d(exponent) needs log(x)
    users = result.users()
    assert all(users.get(id(v)) or v in result.outputs
               for n in result.nodes[len(graph.nodes):] for v in n.outputs)
    (g,) = evaluate(result, [np.array([1.0, -2.0, 0.5])])[1:]
    np.testing.assert_allclose(g, 3 * np.array([1.0, -2.0, 0.5]) ** 2)


def test_unused_split_outputs_get_zero_gradients():
    b = GraphBuilder()
    x = b.input(F64, (5, 2))
    first, _, last = b.op("split", x, axis=0, sizes=(1, 3, 1))
    graph = b.build(b.op("add", _sum_all(b, first), _sum_all(b, b.op("mul", last, last))))
    xv = np.arange(10.0).reshape(5, 2)
    (g,) = _grads(graph, [xv], [0])
    want = np.zeros((5, 2))
    want[0] = 1.0
    want[4] = 2 * xv[4]
    np.testing.assert_allclose(g, want)


def test_graph_inputs_and_intermediate_values_as_wrt():
    b = GraphBuilder()
    x = b.input(F64, (3,))
    h = b.op("mul", x, b.scalar(2.0, like=x))
    graph = b.build(_sum_all(b, b.op("exp", h)))
    xv = np.array([0.1, -0.3, 0.7])
    gx_index, gx_value, gh = _grads(graph, [xv], [0, x, h])
    np.testing.assert_allclose(gh, np.exp(2 * xv))
    np.testing.assert_allclose(gx_index, 2 * np.exp(2 * xv))
    np.testing.assert_array_equal(gx_index, gx_value)
    # a single int stands for a list of one; negative indices count from the end
    (g_single,) = _grads(graph, [xv], -1)
    np.testing.assert_array_equal(g_single, gx_index)


def test_multiple_uses_are_summed():
    b = GraphBuilder()
    x = b.input(F64, (4,))
    # x appears four times: x*x (twice), + x, and inside exp
    y = b.op("add", b.op("add", b.op("mul", x, x), x), b.op("exp", x))
    graph = b.build(_sum_all(b, y))
    xv = np.array([0.5, -1.0, 2.0, 0.0])
    (g,) = _grads(graph, [xv], [0])
    np.testing.assert_allclose(g, 2 * xv + 1 + np.exp(xv))
    check_gradients(graph, [xv], [0])


def test_loss_index_selects_the_output_and_may_be_negative():
    b = GraphBuilder()
    x = b.input(F64, (2,))
    graph = b.build(_sum_all(b, x), _sum_all(b, b.op("mul", x, x)))
    xv = np.array([1.5, -2.0])
    np.testing.assert_allclose(_grads(graph, [xv], [0], loss_index=-1)[0], 2 * xv)
    np.testing.assert_allclose(_grads(graph, [xv], [0], loss_index=0)[0], [1.0, 1.0])


def test_float32_graph_gives_float32_gradients_through_mixed_dtypes():
    b = GraphBuilder()
    x = b.input(frame.float32, (2, 3))
    y = b.input(F64, (3,))
    z = b.op("mul", x, y)  # float32 * float64 -> float64, broadcast
    graph = b.build(_sum_all(b, z))
    xv = np.ones((2, 3), np.float32)
    yv = np.array([1.0, 2.0, 3.0])
    gx, gy = _grads(graph, [xv, yv], [0, 1])
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    np.testing.assert_allclose(gx, np.broadcast_to(yv, (2, 3)))
    np.testing.assert_allclose(gy, [2.0, 2.0, 2.0])


# --------------------------------------------------------------------------- disconnected wrt

def test_disconnected_wrt_gets_zeros_of_its_shape_and_dtype():
    b = GraphBuilder()
    x = b.input(F64, (2,))
    y = b.input(frame.float32, (2, 3))
    graph = b.build(_sum_all(b, b.op("exp", x)))
    gx, gy = _grads(graph, [np.zeros(2), np.ones((2, 3), np.float32)], [0, 1])
    assert gy.dtype == np.float32 and gy.shape == (2, 3) and not gy.any()
    np.testing.assert_allclose(gx, [1.0, 1.0])


def test_integer_values_break_the_chain_without_error():
    """argmax and comparisons only reach the loss through integer/bool values:
    they are not on a gradient path (zeros, as PyTorch and JAX give)."""
    b = GraphBuilder()
    x = b.input(F64, (4,))
    index = b.op("cast", b.op("argmax", x, axis=0), dtype=F64)
    mask = b.op("cast", b.op("greater", x, b.scalar(0.0, like=x)), dtype=F64)
    relu_like = b.op("where", b.op("greater", x, b.scalar(0.0, like=x)), x, b.scalar(0.0, like=x))
    graph = b.build(b.op("add", index, _sum_all(b, b.op("mul", mask, relu_like))))
    xv = np.array([0.5, -1.0, 2.0, -0.25])
    (g,) = _grads(graph, [xv], [0])
    np.testing.assert_allclose(g, (xv > 0).astype(float))

    b = GraphBuilder()
    x = b.input(F64, (4,))
    graph = b.build(b.op("cast", b.op("argmax", x, axis=0), dtype=F64))
    (g,) = _grads(graph, [xv], [0])
    assert not g.any()


# --------------------------------------------------------------------------- argument errors

def test_loss_must_be_scalar_and_the_error_shows_the_shape():
    b = GraphBuilder()
    x = b.input(F64, (2, 3))
    graph = b.build(b.op("exp", x))
    with pytest.raises(frame.FrameValueError, match=r"scalar \(0-d\), got shape \[2, 3\]"):
        build_backward_graph(graph, 0, [0])


def test_loss_must_be_floating_point():
    b = GraphBuilder()
    x = b.input(frame.int64, (3,))
    graph = b.build(_sum_all(b, x))
    with pytest.raises(frame.FrameTypeError, match="floating-point dtype, got int64"):
        build_backward_graph(graph, 0, [0])


@pytest.mark.parametrize("loss_index,wrt,error,match", [
    (1, [0], frame.FrameValueError, "loss_index 1 is out of range"),
    ("0", [0], frame.FrameTypeError, "loss_index must be an int"),
    (0, [2], frame.FrameValueError, r"wrt\[0\] = 2 is not an input index"),
    (0, [1], frame.FrameTypeError, r"graph input 1, int64\[3\]"),
    (0, ["x"], frame.FrameTypeError, "wrt entries are graph input indices or Values"),
])
def test_bad_arguments(loss_index, wrt, error, match):
    b = GraphBuilder()
    x = b.input(F64, (3,))
    b.input(frame.int64, (3,))
    graph = b.build(_sum_all(b, x))
    with pytest.raises(error, match=match):
        build_backward_graph(graph, loss_index, wrt)


def test_wrt_value_from_another_graph_is_rejected():
    b = GraphBuilder()
    x = b.input(F64, (3,))
    graph = b.build(_sum_all(b, x))
    foreign = GraphBuilder().input(F64, (3,))
    with pytest.raises(frame.FrameValueError, match="not a value of this graph"):
        build_backward_graph(graph, 0, [foreign])


# --------------------------------------------------------------------------- non-differentiable ops

def test_fused_node_on_the_path_is_an_error_naming_it():
    b = GraphBuilder()
    x = b.input(F64, (3,))
    y = b.op("exp", b.op("neg", b.op("mul", x, x)))
    graph = OperatorFusion().run(b.build(_sum_all(b, y)))
    assert "fused" in graph.op_names()
    with pytest.raises(NonDifferentiableError, match="'fused' is on the path") as info:
        build_backward_graph(graph, 0, [0])
    err = info.value
    assert err.op == "fused" and isinstance(err, FrameError) and isinstance(err, TypeError)
    assert "before operator_fusion" in str(err) and ">> " in str(err)  # the IR line is shown


@pytest.fixture
def custom_ops():
    """Two test-only float ops: one declared non-differentiable, one without a rule."""
    def infer(types, attrs):
        return [types[0]]

    def kernel(ins, attrs):
        return (np.round(ins[0] * attrs["scale"]),)

    names = ("test_round_nd", "test_scale_norule")
    register(OpSchema(names[0], 1, infer, kernel, attrs={"scale": AttrSpec("float", 1.0)},
                      traits=("nondifferentiable",)))
    register(OpSchema(names[1], 1, infer, kernel, attrs={"scale": AttrSpec("float", 1.0)}))
    try:
        yield names
    finally:
        for n in names:
            unregister(n)


def test_nondifferentiable_op_on_the_path_is_an_error_naming_it(custom_ops):
    nd, norule = custom_ops
    for op, reason in ((nd, "declared non-differentiable"), (norule, "has no gradient rule")):
        b = GraphBuilder()
        x = b.input(F64, (3,))
        graph = b.build(_sum_all(b, b.op("exp", b.op(op, x))))
        match = f"'{op}' is on the path.*{reason}"
        with pytest.raises(NonDifferentiableError, match=match) as info:
            build_backward_graph(graph, 0, [0])
        assert info.value.op == op
        assert f">> %1 = {op}(%0)" in str(info.value)


def test_nondifferentiable_op_off_the_path_is_fine(custom_ops):
    nd, _ = custom_ops
    b = GraphBuilder()
    x, y = b.input(F64, (3,)), b.input(F64, (3,))
    # the op only touches y, which is not a wrt value
    graph = b.build(_sum_all(b, b.op("mul", x, b.op(nd, y))))
    xv, yv = np.ones(3), np.array([1.2, -0.7, 3.4])
    (g,) = _grads(graph, [xv, yv], [0])
    np.testing.assert_allclose(g, np.round(yv))


def test_gradient_rule_registration_is_checked(custom_ops):
    nd, norule = custom_ops
    with pytest.raises(ValueError, match="cannot have a rule"):
        gradient_rule(nd)(lambda b, i, o, g, a: [None])
    with pytest.raises(ValueError, match="already has a gradient rule"):
        gradient_rule("exp")(lambda b, i, o, g, a: [None])
    gradient_rule(norule)(
        lambda b, i, o, g, a: [b.op("mul", g[0], b.scalar(a["scale"], like=g[0]))])
    b = GraphBuilder()
    x = b.input(F64, (3,))
    graph = b.build(_sum_all(b, b.op(norule, x, scale=3.0)))
    (g,) = _grads(graph, [np.ones(3)], [0])
    np.testing.assert_allclose(g, [3.0, 3.0, 3.0])


def test_a_rule_returning_the_wrong_type_is_reported(custom_ops):
    _, norule = custom_ops
    gradient_rule(norule)(lambda b, i, o, g, a: [b.op("sum", g[0], axes=(0,))])
    b = GraphBuilder()
    x = b.input(F64, (3,))
    graph = b.build(_sum_all(b, b.op(norule, x)))
    with pytest.raises(FrameError, match=rf"rule of '{norule}' returned float64\[\] for input 0"):
        build_backward_graph(graph, 0, [0])


# --------------------------------------------------------------------------- documented semantics

def test_max_reduction_splits_ties_evenly():
    b = GraphBuilder()
    x = b.input(F64, (2, 4))
    graph = b.build(_sum_all(b, b.op("max", x, axes=(1,), keepdims=False)))
    xv = np.array([[1.0, 3.0, 3.0, 3.0], [0.0, -1.0, 0.0, -2.0]])
    (g,) = _grads(graph, [xv], [0])
    np.testing.assert_allclose(g, [[0, 1 / 3, 1 / 3, 1 / 3], [0.5, 0, 0.5, 0]])


def test_maximum_splits_ties_in_half_and_minimum_too():
    b = GraphBuilder()
    x, y = b.input(F64, (3,)), b.input(F64, (3,))
    graph = b.build(_sum_all(b, b.op("add", b.op("maximum", x, y),
                                     b.op("mul", b.op("minimum", x, y), b.scalar(10.0, like=x)))))
    gx, gy = _grads(graph, [np.array([1.0, 2.0, 0.0]), np.array([1.0, 0.0, 2.0])], [0, 1])
    np.testing.assert_allclose(gx, [5.5, 1.0, 10.0])
    np.testing.assert_allclose(gy, [5.5, 10.0, 1.0])


def test_max_pool_splits_window_ties_and_adds_overlaps():
    b = GraphBuilder()
    x = b.input(F64, (1, 1, 2, 4))
    pooled = b.op("max_pool2d", x, kernel=(2, 2), stride=(2, 2))
    graph = b.build(_sum_all(b, pooled))
    (g,) = _grads(graph, [np.ones((1, 1, 2, 4))], [0])
    np.testing.assert_allclose(g, np.full((1, 1, 2, 4), 0.25))
    # overlapping windows (stride 1): the centre max wins all four windows
    b = GraphBuilder()
    x = b.input(F64, (1, 1, 3, 3))
    graph = b.build(_sum_all(b, b.op("max_pool2d", x, kernel=(2, 2), stride=(1, 1))))
    xv = np.zeros((1, 1, 3, 3))
    xv[0, 0, 1, 1] = 5.0
    (g,) = _grads(graph, [xv], [0])
    want = np.zeros((1, 1, 3, 3))
    want[0, 0, 1, 1] = 4.0
    np.testing.assert_allclose(g, want)


def test_piecewise_constant_ops_give_zero_gradients():
    for op in ("sign", "floor", "ceil"):
        b = GraphBuilder()
        x = b.input(F64, (3,))
        graph = b.build(_sum_all(b, b.op(op, x)))
        (g,) = _grads(graph, [np.array([0.3, -1.7, 2.2])], [0])
        assert g.shape == (3,) and not g.any()


def test_relu_and_abs_subgradient_at_zero_is_zero():
    for op in ("relu", "abs"):
        b = GraphBuilder()
        x = b.input(F64, (3,))
        graph = b.build(_sum_all(b, b.op(op, x)))
        (g,) = _grads(graph, [np.array([0.0, -2.0, 3.0])], [0])
        np.testing.assert_allclose(g, [0.0, 0.0 if op == "relu" else -1.0, 1.0])


def test_embedding_and_take_accumulate_repeated_indices():
    b = GraphBuilder()
    w = b.input(F64, (4, 2))
    idx = b.input(frame.int64, (2, 3))
    graph = b.build(_sum_all(b, b.op("embedding", idx, w)))
    iv = np.array([[0, 2, 2], [3, 2, 0]])
    (g,) = _grads(graph, [np.ones((4, 2)), iv], [0])
    np.testing.assert_allclose(g, [[2, 2], [0, 0], [3, 3], [1, 1]])


# --------------------------------------------------------------------------- unbroadcast

@pytest.mark.parametrize("grad_shape,shape", [
    ((2, 3), (3,)), ((2, 3), (2, 1)), ((4, 2, 3), (1, 3)), ((2, 3), ()), ((2, 3), (2, 3)),
    ((0, 3), (1, 3)), ((5, 1, 4), (1, 1)),
])
def test_unbroadcast_sums_broadcast_axes(grad_shape, shape):
    b = GraphBuilder()
    g = b.input(F64, grad_shape)
    out = unbroadcast(b, g, shape)
    assert out.type.shape == shape
    graph = b.build(out)
    gv = np.random.default_rng(1).normal(size=grad_shape)
    (got,) = evaluate(graph, [gv])
    lead = len(grad_shape) - len(shape)
    want = gv.sum(axis=tuple(range(lead))) if lead else gv
    want = want.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True) \
        if shape else want
    np.testing.assert_allclose(got, np.reshape(want, shape))


def test_unbroadcast_rejects_shapes_that_do_not_broadcast():
    b = GraphBuilder()
    g = b.input(F64, (2, 3))
    with pytest.raises(ValueError, match="does not broadcast"):
        unbroadcast(b, g, (2,))
    with pytest.raises(ValueError, match="fewer dimensions"):
        unbroadcast(b, g, (1, 2, 3))


def test_backward_graph_of_a_clone_equals_backward_graph_of_the_original():
    b = GraphBuilder()
    x = b.input(F64, (2, 2))
    graph = b.build(_sum_all(b, b.op("matmul", x, b.op("softmax", x, axis=1))))
    assert dump_text(build_backward_graph(graph, 0, [0])) == \
        dump_text(build_backward_graph(clone_graph(graph), 0, [0]))
