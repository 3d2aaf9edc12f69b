"""A varied set of graphs for the IR tests, built fresh on every call.

Each entry of ``GRAPHS`` is a zero-argument function, so a test can build the
same graph twice independently.  ``VERIFIABLE`` names the ones verify must
accept: made of registered ops only (the fused graphs count once a ``fused``
schema is registered).  Ops added by other work (reductions, split, full, pad)
are used only when registered.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

import frame  # noqa: F401  (registers ops)
from frame.dtypes import as_dtype
from frame.ir import Graph, GraphBuilder, Node, TensorType


def fused_node(op: str, inputs, body: Graph, attrs=None, device=None) -> Node:
    """A hand-built node whose computation is ``body`` (no schema needed for text)."""
    node = Node(op, inputs, attrs or {}, body=body, device=device)
    node.set_output_types([v.type for v in body.outputs])
    return node


def chain() -> Graph:
    b = GraphBuilder()
    x = b.input("float32", (4, 3))
    y = b.input("float32", (4, 3))
    v = b.op("add", x, y)
    for name in ("relu", "exp", "neg", "tanh", "sigmoid", "abs"):
        v = b.op(name, v)
    v = b.op("mul", v, y)
    return b.build(v)


def broadcast() -> Graph:
    b = GraphBuilder()
    x = b.input("float32", (4, 3))
    row = b.input("float32", (3,))
    col = b.input("float32", (4, 1))
    s = b.op("sub", b.op("add", x, row), col)
    d = b.op("div", s, b.op("maximum", row, b.scalar(1.0, like=row)))
    return b.build(d, s)


def small_constants() -> Graph:
    b = GraphBuilder()
    x = b.input("float32", (5,))
    f32 = b.constant(np.array([1.0, -0.0, np.nan, np.inf, -np.inf], np.float32))
    tiny = b.constant(np.array([1e-30, 0.1, -2.5, 3.0, 7e20], np.float32))
    f64 = b.constant(np.array([0.1, 1 / 3, -0.0, 5e-324, 1.7976931348623157e308]))
    f16 = b.constant(np.array([0.1, 65504.0, -0.0, 6e-8, np.nan], np.float16))
    # 0 * inf gives the negative NaN 0xffc00000 on x86; 0x7fc00001 has a payload bit
    neg_nan = b.constant(np.array([0xFFC00000, 0x7FC00001], np.uint32).view(np.float32))
    i32 = b.constant(np.array([[1, -2], [2**31 - 1, -2**31]], np.int32))
    i64 = b.constant(np.array(-(2**63), np.int64))
    flags = b.constant(np.array([True, False, True]))
    c64 = b.constant(np.array([1 + 2j, complex(-0.0, -0.0), complex(np.nan, np.inf)], np.complex64))
    c128 = b.constant(np.array(complex(1e-300, -1.5), np.complex128))
    v = b.op("add", b.op("mul", x, f32), tiny)
    return b.build(v, f64, f16, neg_nan, i32, i64, flags, c64, c128)


def large_constants() -> Graph:
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input("float32", (64, 64))
    w = b.constant(rng.standard_normal((64, 64)).astype(np.float32))
    idx = b.constant(np.arange(100, dtype=np.int64).reshape(4, 25))
    mask = b.constant(rng.random(20) > 0.5)
    z = b.constant((rng.standard_normal(17) + 1j * rng.standard_normal(17)).astype(np.complex64))
    exactly17 = b.constant(np.linspace(0, 1, 17))
    return b.build(b.op("mul", x, w), idx, mask, z, exactly17)


def zero_d() -> Graph:
    b = GraphBuilder()
    s = b.input("float64", ())
    e = b.input("float32", (0, 3))
    v = b.op("sqrt", b.op("add", s, b.scalar(2.0, like=s)))
    return b.build(v, b.op("exp", e), s)


def dtypes() -> Graph:
    b = GraphBuilder()
    flag = b.input("bool", (3,))
    i = b.input("int32", (3,))
    j = b.input("int64", (3,))
    h = b.input("float16", (3,))
    c = b.input("complex64", (3,))
    both = b.op("logical_and", flag, b.op("less", i, j))
    w = b.op("where", both, b.op("cast", h, dtype="float32"), b.op("cast", i, dtype="float32"))
    cz = b.op("mul", c, b.op("cast", w, dtype="complex64"))
    return b.build(both, w, cz, b.op("add", i, j), b.op("neg", h))


def attrs_registered() -> Graph:
    b = GraphBuilder()
    x = b.input("float32", (2, 3))
    outs = [b.op("gelu", x, approximate="tanh"), b.op("cast", x, dtype="float16")]
    outs.append(b.op("sum", x, axes=(0, 1), keepdims=False))
    outs.append(b.op("sum", x, axes=(1,), keepdims=True))
    outs.extend(b.op("split", x, axis=1, sizes=(1, 2)))
    outs.append(b.op("full", shape=(2,), value=-0.0, dtype="float64"))
    outs.append(b.op("pad", x, pads=(1, 0, 0, 2), value=float("nan")))
    outs.append(b.op("reshape", x, shape=(6,)))
    return b.build(*outs)


def attrs_every_kind() -> Graph:
    """Attr values of every kind on a hand-built node (an unregistered op)."""
    g = Graph()
    x = g.add_input(TensorType(as_dtype("float32"), (2,)))
    attrs = {
        "i": -7, "big": 2**70, "f": 1e-05, "nan": float("nan"), "negzero": -0.0, "inf": float("-inf"),
        "negnan": -float("nan"),
        "s": 'quote " back\\ slash\nnew {line}, a=b', "uni": "héllo ✓", "empty": "",
        "t": True, "fl": False, "ints": (3, -1, 0), "one": (5,), "none": (), "floats": (0.5, -0.0),
        "onef": (2.0,), "dt": as_dtype("complex128"), "dtb": as_dtype("bool"),
        "value": 3.5,  # an attr called value, not a payload
    }
    node = g.append(Node("custom_op", [x], attrs))
    node.set_output_types([TensorType(as_dtype("float32"), (2,))])
    g.set_outputs(node.outputs)
    return g


def devices() -> Graph:
    b = GraphBuilder(device="gpu")
    x = b.input("float32", (4,))
    y = b.op("exp", x)
    z = b.op("relu", y)
    z.producer.device = "gpu"
    return b.build(z, y)


def odd_devices() -> Graph:
    g = devices()
    g.device = "my device #1"
    g.nodes[0].device = "GPU.0"
    return g


def plumbing() -> Graph:
    """Unused inputs, an input as output, the same value output twice, a dead node."""
    b = GraphBuilder()
    x = b.input("float32", (2,))
    b.input("int64", (7, 1))
    y = b.op("exp", x)
    b.op("neg", y)
    return b.build(y, x, y)


def no_outputs() -> Graph:
    b = GraphBuilder()
    b.input("float32", (2,))
    return b.build()


def fused() -> Graph:
    """Fused nodes with bodies, one nested, one holding a large constant."""
    inner = GraphBuilder()
    a = inner.input("float32", (4,))
    inner_body = inner.build(inner.op("exp", inner.op("neg", a)))

    body = GraphBuilder()
    p = body.input("float32", (4,))
    q = body.input("float32", (4,))
    s = body.op("add", p, q)
    nested = body.graph.append(fused_node("fused", [s], inner_body))
    big = body.constant(np.arange(32, dtype=np.float32).reshape(8, 4) / 7)
    body_graph = body.build(nested.output, body.op("mul", s, s), big)

    b = GraphBuilder()
    x = b.input("float32", (4,))
    y = b.input("float32", (4,))
    node = b.graph.append(fused_node("fused", [x, y], body_graph))
    r = b.op("relu", node.outputs[0])
    return b.build(r, node.outputs[2])


def fused_on_gpu() -> Graph:
    body = GraphBuilder(device="gpu")
    a = body.input("float32", (3,))
    body_graph = body.build(body.op("sin", a))
    b = GraphBuilder(device="gpu")
    x = b.input("float32", (3,))
    node = b.graph.append(fused_node("fused", [x], body_graph, device="gpu"))
    return b.build(*node.outputs)


def matmul_sum() -> Graph:
    b = GraphBuilder()
    x = b.input("float32", (32, 784))
    w = b.input("float32", (784, 256))
    m = b.op("matmul", x, w)
    return b.build(b.op("sum", m, axes=(0, 1)), m)


GRAPHS: dict[str, Callable[[], Graph]] = {
    "chain": chain, "broadcast": broadcast, "small_constants": small_constants,
    "large_constants": large_constants, "zero_d": zero_d, "dtypes": dtypes,
    "attrs_registered": attrs_registered, "attrs_every_kind": attrs_every_kind,
    "devices": devices, "odd_devices": odd_devices, "plumbing": plumbing,
    "no_outputs": no_outputs, "fused": fused, "fused_on_gpu": fused_on_gpu,
    "matmul_sum": matmul_sum,
}

# Graphs made only of registered ops, on one device: verify must accept them.
VERIFIABLE = [name for name in GRAPHS if name not in ("attrs_every_kind", "odd_devices")]


def elementwise_chain(n: int) -> Graph:
    """``n`` nodes: add/relu/mul rounds with scalar constants (the timing graph)."""
    b = GraphBuilder()
    x = b.input("float32", (32, 784))
    w = b.input("float32", (32, 784))
    v = x
    while len(b.graph.nodes) < n:
        kind = len(b.graph.nodes) % 3
        if kind == 0:
            v = b.op("add", v, w)
        elif kind == 1:
            v = b.op("relu", v)
        else:
            v = b.op("mul", v, b.scalar(0.5, like=v)) if len(b.graph.nodes) + 2 <= n else b.op("exp", v)
    return b.build(v)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes())


def _same_attr(a, b) -> bool:
    """Equal values of equal types (bitwise for floats, so -0.0 and NaN count)."""
    if type(a) is not type(b):
        return False
    if type(a) is tuple:
        return len(a) == len(b) and all(_same_attr(x, y) for x, y in zip(a, b))
    if type(a) is float:
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    return a == b


def assert_same_graph(a: Graph, b: Graph) -> None:
    """Structural equality: devices, types, ops, attrs, payloads (bitwise), wiring, bodies."""
    assert a.device == b.device
    assert [v.type for v in a.inputs] == [v.type for v in b.inputs]
    pos_a = {id(v): i for i, v in enumerate(a.values())}
    pos_b = {id(v): i for i, v in enumerate(b.values())}
    assert len(a.nodes) == len(b.nodes)
    for na, nb in zip(a.nodes, b.nodes):
        assert na.op == nb.op and na.device == nb.device
        assert sorted(na.attrs) == sorted(nb.attrs), (na.attrs, nb.attrs)
        for k in na.attrs:
            assert _same_attr(na.attrs[k], nb.attrs[k]), (k, na.attrs[k], nb.attrs[k])
        assert [pos_a[id(v)] for v in na.inputs] == [pos_b[id(v)] for v in nb.inputs]
        assert [v.type for v in na.outputs] == [v.type for v in nb.outputs]
        assert all(v.producer is nb and v.index == i for i, v in enumerate(nb.outputs))
        assert (na.const is None) == (nb.const is None)
        if na.const is not None:
            assert _same_bits(na.const, nb.const)
        assert (na.body is None) == (nb.body is None)
        if na.body is not None:
            assert_same_graph(na.body, nb.body)
    assert [pos_a[id(v)] for v in a.outputs] == [pos_b[id(v)] for v in b.outputs]
