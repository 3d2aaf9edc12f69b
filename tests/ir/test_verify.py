"""verify: one failing graph per invariant, the message shape, bodies, valid graphs."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import frame
from frame.hal.errors import ErrorCode, FrameError
from frame.ir import (DYNAMIC, Graph, GraphBuilder, IRVerifyError, TensorType, Value, dump_text,
                      verify)
from frame.ops import OpSchema
from frame.ops.registry import register, unregister

from .graphs import GRAPHS, VERIFIABLE, fused_node


def _exp_graph(n: int = 3) -> Graph:
    """x -> exp -> exp -> ... (n nodes)."""
    b = GraphBuilder()
    v = b.input("float32", (2,))
    for _ in range(n):
        v = b.op("exp", v)
    return b.build(v)


def _fails(graph: Graph, invariant: str, marked: str) -> IRVerifyError:
    """verify fails with ``invariant`` and marks the line ``marked`` with '>>'."""
    with pytest.raises(IRVerifyError) as info:
        verify(graph)
    err = info.value
    assert str(err).startswith(f"{invariant}: "), str(err)
    assert err.invariant == invariant
    assert err.code is ErrorCode.INTERNAL and isinstance(err, FrameError)
    marked_lines = [ln for ln in str(err).splitlines() if ln.startswith(">> ")]
    assert marked_lines == [">> " + marked], str(err)
    # the neighbours are shown too, unmarked
    assert any(ln.startswith("   %") or ln.startswith("   graph_output") for ln in str(err).splitlines())
    return err


@pytest.mark.parametrize("name", VERIFIABLE)
def test_valid_graphs_pass(name):
    verify(GRAPHS[name]())


# ------------------------------------------------------------------ V1 SSA

def test_v1_use_of_a_value_from_another_graph():
    g = _exp_graph()
    stranger = Value(TensorType(frame.float32, (2,)))
    g.nodes[1].inputs = (stranger,)
    _fails(g, "V1", "%2 = exp(%?0) : float32[2]")


def test_v1_value_defined_twice():
    g = _exp_graph()
    g.nodes[2].outputs = g.nodes[0].outputs
    err = _fails(g, "V1", "%1 = exp(%2) : float32[2]")
    assert "already defined" in str(err)


def test_v1_producer_and_index_must_point_back():
    g = _exp_graph()
    g.nodes[1].outputs[0].index = 1
    err = _fails(g, "V1", "%2 = exp(%1) : float32[2]")
    assert "expected this node, index 0" in str(err)


def test_v1_graph_input_claims_a_producer():
    g = _exp_graph()
    g.inputs[0].producer = g.nodes[0]
    _fails(g, "V1", "%0 = input : float32[2]")


def test_v1_graph_output_not_defined():
    g = _exp_graph()
    g.outputs = [Value(TensorType(frame.float32, (2,)))]
    _fails(g, "V1", "graph_output(%?0)")


# ------------------------------------------------------------------ V2 acyclic

def test_v2_use_before_definition():
    g = _exp_graph()
    g.nodes[0], g.nodes[1] = g.nodes[1], g.nodes[0]
    err = _fails(g, "V2", "%1 = exp(%2) : float32[2]")
    assert "used before it is defined" in str(err)


def test_v2_node_reading_its_own_output():
    g = _exp_graph()
    g.nodes[1].inputs = g.nodes[1].outputs
    err = _fails(g, "V2", "%2 = exp(%2) : float32[2]")
    assert "defined by this node" in str(err)


# ------------------------------------------------------------------ V3 registered

def test_v3_unknown_op():
    g = _exp_graph()
    g.nodes[1].op = "frobnicate"
    err = _fails(g, "V3", "%2 = frobnicate(%1) : float32[2]")
    assert "'frobnicate' is not registered" in str(err)


# ------------------------------------------------------------------ V4 schema

def test_v4_arity():
    b = GraphBuilder()
    x = b.input("float32", (2,))
    y = b.op("add", x, x)
    g = b.build(y)
    g.nodes[0].inputs = (x,)
    err = _fails(g, "V4", "%1 = add(%0) : float32[2]")
    assert "expects 2 inputs, got 1" in str(err)


def test_v4_missing_attr():
    b = GraphBuilder()
    x = b.input("float32", (2,))
    g = b.build(b.op("cast", x, dtype="float64"))
    del g.nodes[0].attrs["dtype"]
    err = _fails(g, "V4", "%1 = cast(%0) : float64[2]")
    assert "missing attribute 'dtype'" in str(err)


def test_v4_unknown_and_wrong_kind_attr():
    b = GraphBuilder()
    x = b.input("float32", (2,))
    g = b.build(b.op("exp", x))
    g.nodes[0].attrs["alpha"] = 1.0
    assert "unknown attribute 'alpha'" in str(_fails(g, "V4", "%1 = exp(%0) {alpha=1.0} : float32[2]"))
    b = GraphBuilder()
    x = b.input("float32", (2,))
    g = b.build(b.op("cast", x, dtype="float16"))
    g.nodes[0].attrs["dtype"] = 3
    assert "must be dtype" in str(_fails(g, "V4", "%1 = cast(%0) {dtype=3} : float16[2]"))


# ------------------------------------------------------------------ V5 static types

def test_v5_dynamic_dim_is_rejected():
    b = GraphBuilder()
    x = b.input("float32", (DYNAMIC, 3))
    g = b.build(b.op("relu", x))
    err = _fails(g, "V5", "%0 = input : float32[?,3]")
    assert "dynamic dims are not supported" in str(err)


def test_v5_dynamic_dim_on_a_node_output():
    g = _exp_graph()
    g.nodes[2].outputs[0].type = TensorType(frame.float32, (DYNAMIC,))
    err = _fails(g, "V5", "%3 = exp(%2) : float32[?]")
    assert "dynamic dims are not supported" in str(err)


def test_v5_unknown_type():
    g = _exp_graph()
    g.nodes[0].outputs[0].type = None
    _fails(g, "V5", "%1 = exp(%0) : <invalid type None>")


def test_v5_type_disagrees_with_inference():
    g = _exp_graph()
    g.nodes[1].outputs[0].type = TensorType(frame.float64, (2,))
    err = _fails(g, "V5", "%2 = exp(%1) : float64[2]")
    assert "schema infers (float32[2])" in str(err)


def test_v5_constant_payload_must_match_its_type():
    b = GraphBuilder()
    c = b.constant(np.array([1.0, 2.0], np.float32))
    g = b.build(c)
    g.nodes[0].const = np.array([1.0, 2.0])  # float64 payload on a float32 constant
    err = _fails(g, "V5", "%0 = constant() {dtype=float32, shape=(2,), value=[1.0, 2.0]} : float32[2]")
    assert "payload is float64[2]" in str(err)
    g.nodes[0].const = np.zeros((1, 2), np.float32)
    _fails(g, "V5", "%0 = constant() {dtype=float32, shape=(2,), value=[0.0, 0.0]} : float32[2]")
    g.nodes[0].const = None
    assert "without a payload" in str(_fails(g, "V5", "%0 = constant() {dtype=float32, shape=(2,)} : float32[2]"))


# ------------------------------------------------------------------ V6 one device

def test_v6_node_on_another_device():
    g = _exp_graph()
    g.nodes[1].device = "gpu"
    err = _fails(g, "V6", "%2 = exp(%1) : float32[2] @gpu")
    assert "one device per graph" in str(err)


def test_v6_node_on_the_graph_device_is_fine():
    g = _exp_graph()
    g.device = "gpu"
    g.nodes[1].device = "gpu"
    verify(g)


# ------------------------------------------------------------------ V7 closed attr set

@pytest.mark.parametrize("value", [np.int64(1), [1, 2], (1, 2.0), (True,), None, {"a": 1}])
def test_v7_attr_outside_the_closed_set(value):
    b = GraphBuilder()
    x = b.input("float32", (2,))
    g = b.build(b.op("cast", x, dtype="float16"))
    g.nodes[0].attrs["dtype"] = value
    err = _fails(g, "V7", dump_text(g).splitlines()[1])
    assert "not in the closed set" in str(err)


def test_v7_attr_name_must_be_an_identifier():
    g = _exp_graph()
    g.nodes[0].attrs["a b"] = 1
    _fails(g, "V7", "%1 = exp(%0) {a b=1} : float32[2]")


def test_v7_is_reported_before_v4():
    g = _exp_graph()
    g.nodes[0].attrs["alpha"] = [1.0]  # unknown to the schema *and* outside the set
    _fails(g, "V7", "%1 = exp(%0) {alpha=<invalid list: [1.0]>} : float32[2]")


# ------------------------------------------------------------------ order, context, bodies

def test_first_failing_node_wins_and_v3_precedes_v5():
    g = _exp_graph(4)
    g.nodes[1].op = "nope"
    g.nodes[1].outputs[0].type = TensorType(frame.float32, (DYNAMIC,))
    g.nodes[3].device = "gpu"
    _fails(g, "V3", "%2 = nope(%1) : float32[?]")


def test_context_is_a_window_around_the_node():
    g = _exp_graph(20)
    g.nodes[10].op = "nope"
    err = _fails(g, "V3", "%11 = nope(%10) : float32[2]")
    lines = str(err).splitlines()
    assert lines[1] == "   ..." and lines[-1] == "   ..."
    assert "   %8 = exp(%7) : float32[2]" in lines and "   %14 = exp(%13) : float32[2]" in lines
    assert not any("%7 = exp" in ln for ln in lines)


def test_error_pickles_and_keeps_its_invariant():
    g = _exp_graph()
    g.nodes[0].op = "nope"
    with pytest.raises(IRVerifyError) as info:
        verify(g)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is IRVerifyError and again.invariant == "V3" and str(again) == str(info.value)
    renamed = info.value.with_message("pass 'x': " + info.value.message)
    assert type(renamed) is IRVerifyError and renamed.invariant == "V3"


@pytest.fixture
def fused_op():
    """A test-only fused op schema (the real one does not exist yet)."""
    name = "test_fused_op"
    register(OpSchema(name, (0, None), lambda types, attrs: [],
                      lambda ins, attrs: (), attrs={}), replace=True)
    yield name
    unregister(name)


def _fused_graph(op: str) -> Graph:
    body = GraphBuilder()
    p = body.input("float32", (3,))
    body_graph = body.build(body.op("neg", body.op("exp", p)))
    b = GraphBuilder()
    x = b.input("float32", (3,))
    node = b.graph.append(fused_node(op, [x], body_graph))
    return b.build(b.op("relu", node.output))


def test_fused_body_is_verified_recursively(fused_op):
    g = _fused_graph(fused_op)
    verify(g)
    g.nodes[0].body.nodes[1].op = "nope"
    err = _fails(g, "V3", "  %2 = nope(%1) : float32[3]")
    assert f"%1 = {fused_op}(%0) : float32[3] {{" in str(err)


def test_fused_node_must_match_its_body(fused_op):
    g = _fused_graph(fused_op)
    g.nodes[0].outputs[0].type = TensorType(frame.float32, (4,))
    g.nodes[1].outputs[0].type = TensorType(frame.float32, (4,))
    assert "body produces (float32[3])" in str(_fails(g, "V5", f"%1 = {fused_op}(%0) : float32[4] {{"))
    g = _fused_graph(fused_op)
    g.nodes[0].inputs = ()
    _fails(g, "V4", f"%1 = {fused_op}() : float32[3] {{")


def test_fused_body_on_another_device(fused_op):
    g = _fused_graph(fused_op)
    g.nodes[0].body.device = "gpu"
    _fails(g, "V6", f"%1 = {fused_op}(%0) : float32[3] {{")
