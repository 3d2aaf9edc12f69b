"""dump_text / parse_text: determinism, exact round trips, distinct constants, errors."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import frame

from frame.ir import (Graph, GraphBuilder, IRParseError, Node, TensorType, dump_text,
                      graph_constants, parse_text, verify)
from frame.ir.text import constant_digest

from .graphs import GRAPHS, VERIFIABLE, assert_same_graph, elementwise_chain, fused_node


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_two_builds_dump_identically(name):
    assert dump_text(GRAPHS[name]()) == dump_text(GRAPHS[name]())


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_round_trip(name):
    g = GRAPHS[name]()
    text = dump_text(g)
    back = parse_text(text, graph_constants(g))
    assert dump_text(back) == text
    assert_same_graph(g, back)
    if name in VERIFIABLE:
        verify(g)
        verify(back)


def test_golden_format():
    b = GraphBuilder()
    x = b.input("float32", (2, 3))
    y = b.input("float32", (3,))
    s = b.op("add", x, y)
    c = b.constant(np.array([1.0, 2.5], np.float32))
    h = b.op("cast", s, dtype="float16")
    r = b.op("relu", s)
    r.producer.device = "cpu"
    g = b.build(h, c, r)
    assert dump_text(g) == (
        "%0 = input : float32[2,3]\n"
        "%1 = input : float32[3]\n"
        "%2 = add(%0, %1) : float32[2,3]\n"
        "%3 = constant() {dtype=float32, shape=(2,), value=[1.0, 2.5]} : float32[2]\n"
        "%4 = cast(%2) {dtype=float16} : float16[2,3]\n"
        "%5 = relu(%2) : float32[2,3] @cpu\n"
        "graph_output(%4, %3, %5)")


def test_golden_fused_and_device():
    body = GraphBuilder(device="gpu")
    a = body.input("float32", (2,))
    body_graph = body.build(body.op("exp", a))
    b = GraphBuilder(device="gpu")
    x = b.input("float32", (2,))
    node = b.graph.append(fused_node("fused", [x], body_graph, attrs={"n": 1}))
    g = b.build(node.output)
    assert dump_text(g) == (
        "graph @gpu\n"
        "%0 = input : float32[2]\n"
        "%1 = fused(%0) {n=1} : float32[2] {\n"
        "  graph @gpu\n"
        "  %0 = input : float32[2]\n"
        "  %1 = exp(%0) : float32[2]\n"
        "  graph_output(%1)\n"
        "}\n"
        "graph_output(%1)")


def test_large_constant_prints_a_full_digest():
    b = GraphBuilder()
    arr = np.arange(17, dtype=np.float32)
    b.build(b.constant(arr))
    line = dump_text(b.graph).splitlines()[0]
    assert line == (f"%0 = constant() {{digest={constant_digest(arr)}, dtype=float32, shape=(17,)}}"
                    " : float32[17]")
    assert len(constant_digest(arr)) == len("sha256:") + 64


def _const_text(arr) -> str:
    b = GraphBuilder()
    return dump_text(b.build(b.constant(arr)))


def _bits32(*words) -> np.ndarray:
    return np.array(words, np.uint32).view(np.float32)


@pytest.mark.parametrize("a, b", [
    (np.array([0.0], np.float32), np.array([-0.0], np.float32)),
    (np.array([np.nan], np.float32), np.array([0.0], np.float32)),
    (_bits32(0x7FC00000), _bits32(0xFFC00000)),                # NaN vs negative NaN
    (_bits32(0x7FC00000), _bits32(0x7FC00001)),                # NaN payload bits
    (np.array([1.0], np.float32), np.array([1.0], np.float64)),
    (np.array([1], np.int32), np.array([1.0], np.float32)),
    (np.array([1], np.int32), np.array([True])),
    (np.array([complex(0.0, 0.0)]), np.array([complex(0.0, -0.0)])),
    (np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)),
    (np.zeros(64, np.float32), np.zeros(64, np.float64)),
    (np.zeros((4, 16), np.float32), np.zeros((16, 4), np.float32)),
], ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_different_constants_give_different_text(a, b):
    assert _const_text(a) != _const_text(b)


def test_large_constants_differing_in_one_element():
    base = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    texts = {_const_text(base)}
    for i, value in ((0, 5.0), (4095, 5.0), (100, -0.0), (100, np.nan)):
        other = base.copy()
        other.reshape(-1)[i] = value
        texts.add(_const_text(other))
    zero = base.copy()
    zero.reshape(-1)[7] = 0.0
    negzero = base.copy()
    negzero.reshape(-1)[7] = -0.0
    texts |= {_const_text(zero), _const_text(negzero)}
    assert len(texts) == 7
    assert _const_text(base) == _const_text(base.copy())


def test_payload_bits_survive_round_trip():
    g = GRAPHS["small_constants"]()
    back = parse_text(dump_text(g))
    for old, new in zip(g.nodes, back.nodes):
        if old.const is not None:
            assert old.const.tobytes() == new.const.tobytes(), old.const


def test_digest_without_payload_names_the_digest_and_line():
    g = GRAPHS["large_constants"]()
    text = dump_text(g)
    digest = constant_digest(g.nodes[0].const)
    with pytest.raises(IRParseError, match=rf"line 2: constant payload {digest} is not provided"):
        parse_text(text)
    with pytest.raises(ValueError, match="not provided"):
        parse_text(text, {})


def test_digest_with_the_wrong_array_is_rejected():
    g = GRAPHS["large_constants"]()
    consts = graph_constants(g)
    digest = constant_digest(g.nodes[0].const)
    consts[digest] = consts[digest] + 1
    with pytest.raises(IRParseError, match="does not have that digest"):
        parse_text(dump_text(g), consts)


def test_graph_constants_covers_bodies():
    g = GRAPHS["fused"]()
    body_const = g.nodes[0].body.nodes[2].const
    assert list(graph_constants(g)) == [constant_digest(body_const)]


def test_attr_named_value_is_not_a_payload():
    g = parse_text("%0 = custom() {value=2.0} : float32[]\n"
                   "%1 = constant() {dtype=float32, shape=(), value=[2.0]} : float32[]\n"
                   "graph_output(%0, %1)")
    assert g.nodes[0].attrs == {"value": 2.0} and g.nodes[0].const is None
    assert g.nodes[1].const.tolist() == 2.0 and "value" not in g.nodes[1].attrs


def test_hand_written_text_is_read():
    text = """
    # a golden test may be written by hand
    graph @cpu
    %x = input : float32[2]
    %two = constant()  {shape=(), dtype=float32, value=[2.0]} : float32[]
    %y = mul(%x,%two) : float32[2]

    graph_output(%y)
    """
    g = parse_text(text)
    verify(g)
    assert dump_text(g) == ("%0 = input : float32[2]\n"
                            "%1 = constant() {dtype=float32, shape=(), value=[2.0]} : float32[]\n"
                            "%2 = mul(%0, %1) : float32[2]\n"
                            "graph_output(%2)")


def test_dynamic_dims_parse_so_verify_can_reject_them():
    g = parse_text("%0 = input : float32[?,3]\ngraph_output(%0)")
    assert g.inputs[0].type.shape == (-1, 3)
    assert dump_text(g) == "%0 = input : float32[?,3]\ngraph_output(%0)"


def test_zero_output_node_round_trips():
    g = Graph()
    x = g.add_input(TensorType(frame.float32, (2,)))
    g.append(Node("print_it", [x], {"tag": "t"}))
    g.set_outputs([x])
    text = dump_text(g)
    assert text.splitlines()[1] == 'print_it(%0) {tag="t"}'
    assert dump_text(parse_text(text)) == text


@pytest.mark.parametrize("text, line, message", [
    ("%0 = input : float32[2]\n%1 = relu(%9) : float32[2]\ngraph_output(%1)", 2, "%9 is used before"),
    ("%0 = input : float32[2]\n%0 = relu(%0) : float32[2]\ngraph_output(%0)", 2, "defined more than once"),
    ("%0 = input : float33[2]\ngraph_output(%0)", 1, "unknown dtype 'float33'"),
    ("%0 = input : float32[2]\n%1 = relu(%0) : float32[2], float32[2]\ngraph_output(%1)", 2,
     r"1 result\(s\) but 2 type\(s\)"),
    ("%0 = input : float32[2]\n%1 = relu(%0)", 2, "1 result"),
    ("%0 = input : float32[2]\n%1 = relu(%0) : float32[2]", 2, "missing graph_output"),
    ("%0 = input : float32[2]\ngraph_output(%0)\n%1 = relu(%0) : float32[2]", 3, "after graph_output"),
    ("%0 = input : float32[2]\n%1 = relu(%0) : float32[2]\n%2 = input : float32[2]\ngraph_output(%1)", 3,
     "inputs must come before"),
    ("%0 = input : float32[2]\n%1 = f(%0) {a=[1]} : float32[2]\ngraph_output(%1)", 2,
     "expected an attribute value"),
    ("%0 = input : float32[2]\n%1 = f(%0) {a=(1,2.0)} : float32[2]\ngraph_output(%1)", 2, "mixes ints"),
    ("%0 = input : float32[2]\n%1 = f(%0) {a=1, a=2} : float32[2]\ngraph_output(%1)", 2, "given twice"),
    ("%0 = constant() {dtype=float32, shape=(2,), value=[1.0]} : float32[2]\ngraph_output(%0)", 1,
     "payload has 1 elements"),
    ("%0 = constant() {dtype=int32, shape=(1,), value=[1.5]} : int32[1]\ngraph_output(%0)", 1,
     "integer payload"),
    ("%0 = input : float32[2]\n%1 = f(%0) : float32[2] {\n  %0 = input : float32[2]\n  graph_output(%0)\n",
     5, "missing '}'"),
    ("%0 = input : float32[2]\n}\ngraph_output(%0)", 2, "unexpected '}'"),
    ("%0 = input : float32[2] extra\ngraph_output(%0)", 1, "unexpected 'extra'"),
    ("%0 = input : float32[2,x]\ngraph_output(%0)", 1, "bad dimension 'x'"),
])
def test_parse_errors_name_the_line(text, line, message):
    with pytest.raises(IRParseError, match=rf"line {line}: .*{message}") as info:
        parse_text(text)
    assert isinstance(info.value, ValueError)


def test_parse_error_pickles():
    with pytest.raises(IRParseError) as info:
        parse_text("%0 = input : float33[2]\ngraph_output(%0)")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is IRParseError and str(again) == str(info.value)


def test_multi_output_line():
    b = GraphBuilder()
    x = b.input("float32", (2,))
    lo, hi = b.op("split", x, axis=0, sizes=(1, 1))
    g = b.build(hi, lo)
    assert dump_text(g).splitlines()[1] == "%1, %2 = split(%0) {axis=0, sizes=(1,1)} : float32[1], float32[1]"
    assert dump_text(parse_text(dump_text(g))) == dump_text(g)


def test_digest_covers_dtype_and_shape():
    zero_d = np.array(1.5, np.float32)
    assert constant_digest(zero_d) != constant_digest(zero_d.reshape(1))
    data = np.arange(24, dtype=np.int32)
    assert constant_digest(data.reshape(4, 6)) != constant_digest(data.reshape(6, 4))
    assert constant_digest(data) != constant_digest(data.view(np.float32))
    assert constant_digest(data.reshape(4, 6).T) == constant_digest(np.ascontiguousarray(data.reshape(4, 6).T))
