"""The compiled cpu executable vs eager launches vs hand-written NumPy.

    python benchmarks/compiled_cpu.py [--source]

Two 20-node graphs on 64x64 float32 inputs, each run three ways, interleaved
in one process:

* ``compiled``: ``frame.runtime.compile.compile(graph, "cpu")``, then ``exe.run``;
* ``eager``: the same ops as ``frame.<op>`` calls on Tensors (one launch each);
* ``numpy``: the same math written by hand with NumPy.

``mlp`` has 3 matmuls and transcendental ops (tanh, exp, sqrt); ``light`` has
1 matmul and 19 arithmetic ops.  Targets (issue 3): compiled within 1.3x of
hand-written NumPy, and at least 3x faster than eager.  Eager costs the
kernels plus a fixed ~2 us per op, compiled the same kernels plus ~1 us per
graph, so eager/compiled is bounded by 1 + 20 * 2 us / (kernel time): the
``light`` graph is where per-op overhead, not NumPy's kernels, dominates.
"""
from __future__ import annotations

import sys
from typing import Callable

import numpy as np

import frame
from _harness import interleaved, show
from frame.ir import Graph, GraphBuilder
from frame.runtime.compile import compile as compile_graph
from frame.ops.interpreter import evaluate

N = 64


# --------------------------------------------------------------------------- mlp

def mlp_graph() -> Graph:
    b = GraphBuilder()
    x, w1, w2, w3 = (b.input("float32", (N, N)) for _ in range(4))
    b1, b2 = b.input("float32", (N,)), b.input("float32", (N,))
    half = b.scalar(0.5, like=x)
    h = b.op("relu", b.op("add", b.op("matmul", x, w1), b1))
    g = b.op("tanh", b.op("mul", h, x))
    k = b.op("exp", b.op("neg", b.op("abs", b.op("sub", b.op("matmul", g, w2), b2))))
    m = b.op("add", b.op("mul", k, g), h)
    n = b.op("maximum", b.op("matmul", m, w3), x)
    n = b.op("mul", b.op("sqrt", b.op("abs", n)), half)
    return b.build(b.op("sub", b.op("tanh", b.op("add", n, m)), x))


def mlp_eager(x, w1, w2, w3, b1, b2, half):
    h = frame.relu(frame.add(frame.matmul(x, w1), b1))
    g = frame.tanh(frame.mul(h, x))
    k = frame.exp(frame.neg(frame.abs(frame.sub(frame.matmul(g, w2), b2))))
    m = frame.add(frame.mul(k, g), h)
    n = frame.maximum(frame.matmul(m, w3), x)
    n = frame.mul(frame.sqrt(frame.abs(n)), half)
    return frame.sub(frame.tanh(frame.add(n, m)), x)


def mlp_numpy(x, w1, w2, w3, b1, b2, half):
    h = np.maximum(x @ w1 + b1, np.float32(0))
    g = np.tanh(h * x)
    k = np.exp(-np.abs(g @ w2 - b2))
    m = k * g + h
    n = np.maximum(m @ w3, x)
    n = np.sqrt(np.abs(n)) * half
    return np.tanh(n + m) - x


# --------------------------------------------------------------------------- light

def light_graph() -> Graph:
    b = GraphBuilder()
    x, w = b.input("float32", (N, N)), b.input("float32", (N, N))
    bias, c = b.input("float32", (N,)), b.input("float32", (N,))
    half = b.scalar(0.5, like=x)
    h = b.op("relu", b.op("add", b.op("matmul", x, w), bias))
    a = b.op("sub", b.op("mul", h, x), c)
    a = b.op("maximum", a, b.op("neg", x))
    a = b.op("add", b.op("mul", a, a), h)
    a = b.op("abs", b.op("sub", b.op("minimum", a, x), bias))
    a = b.op("mul", b.op("add", a, h), half)
    a = b.op("sub", b.op("maximum", a, c), x)
    a = b.op("add", b.op("mul", a, h), b.op("neg", a))
    return b.build(b.op("relu", a))


def light_eager(x, w, bias, c, half):
    h = frame.relu(frame.add(frame.matmul(x, w), bias))
    a = frame.sub(frame.mul(h, x), c)
    a = frame.maximum(a, frame.neg(x))
    a = frame.add(frame.mul(a, a), h)
    a = frame.abs(frame.sub(frame.minimum(a, x), bias))
    a = frame.mul(frame.add(a, h), half)
    a = frame.sub(frame.maximum(a, c), x)
    a = frame.add(frame.mul(a, h), frame.neg(a))
    return frame.relu(a)


def light_numpy(x, w, bias, c, half):
    h = np.maximum(x @ w + bias, np.float32(0))
    a = np.maximum(h * x - c, -x)
    a = a * a + h
    a = np.abs(np.minimum(a, x) - bias)
    a = (a + h) * half
    a = np.maximum(a, c) - x
    return np.maximum(a * h + -a, np.float32(0))


# --------------------------------------------------------------------------- run

def measure(name: str, graph: Graph, eager: Callable, numpy: Callable,
            show_source: bool) -> tuple[float, float]:
    nodes = [n for n in graph.nodes if n.op != "constant"]
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, v.type.shape).astype(np.float32) for v in graph.inputs]
    half = np.array(0.5, np.float32)
    tensors = [frame.tensor(a) for a in arrays] + [frame.tensor(half)]
    exe = compile_graph(graph, "cpu")

    want = evaluate(graph, arrays)[0]
    assert exe.run(arrays)[0].tobytes() == want.tobytes(), "compiled != interpreter"
    np.testing.assert_allclose(eager(*tensors).numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numpy(*arrays, half), want, rtol=1e-5, atol=1e-6)

    res = interleaved({
        "compiled cpu executable": lambda: exe.run(arrays),
        "hand-written numpy": lambda: numpy(*arrays, half),
        "eager frame.<op> calls": lambda: eager(*tensors),
    }, number=500, rounds=15, warmup=100)
    print(f"\n{name}: {len(nodes)} nodes ({sum(n.op == 'matmul' for n in nodes)} matmul) on "
          f"{N}x{N} float32, median of interleaved rounds:")
    show(res, "hand-written numpy")
    compiled, hand, eag = (res["compiled cpu executable"], res["hand-written numpy"],
                           res["eager frame.<op> calls"])
    print(f"  compiled / numpy   = {compiled / hand:.2f}   (target <= 1.30)")
    print(f"  eager / compiled   = {eag / compiled:.2f}   (target >= 3.00)")
    if show_source:
        print(exe.source)
    return compiled / hand, eag / compiled


def main() -> None:
    show_source = "--source" in sys.argv
    measure("mlp", mlp_graph(), mlp_eager, mlp_numpy, show_source)
    measure("light", light_graph(), light_eager, light_numpy, show_source)


if __name__ == "__main__":
    main()
