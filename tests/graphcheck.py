"""Helpers shared by tests that run graphs: random inputs and bitwise comparison."""
from __future__ import annotations

import numpy as np

from frame.ir import Graph


def random_inputs(graph: Graph, seed: int = 0, int_range: int = 5) -> list[np.ndarray]:
    """One random array per graph input: bools, small ints, floats in [-2, 2)."""
    rng = np.random.default_rng(seed)
    out = []
    for v in graph.inputs:
        dt = v.type.dtype.np
        if dt.kind == "b":
            out.append(rng.random(v.type.shape) > 0.5)
        elif dt.kind == "i":
            out.append(rng.integers(-int_range, int_range + 1, v.type.shape).astype(dt))
        else:
            out.append(rng.uniform(-2, 2, v.type.shape).astype(dt))
    return out


def assert_identical(got, want, what: str = "") -> None:
    """Same number of outputs, each an ndarray with the same dtype, shape and bytes."""
    prefix = f"{what}: " if what else ""
    assert len(got) == len(want), f"{prefix}{len(got)} outputs != {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert type(g) is np.ndarray, f"{prefix}output {i} is a {type(g).__name__}"
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{prefix}output {i}"
        assert g.tobytes() == w.tobytes(), f"{prefix}output {i}:\n{g}\n!=\n{w}"


def mlp_training_graph(sizes=(784, 256, 128, 10), batch: int = 128, lr: float = 0.01) -> Graph:
    """One SGD step of a ReLU MLP as capture builds it (``F.linear`` is
    ``x @ transpose(w) + b``, cross-entropy loss, ``build_backward_graph``):
    inputs x, labels, then (weight, bias) per layer; outputs the loss, the
    gradients and the updated parameters."""
    from frame.autograd import build_backward_graph
    from frame.ir import GraphBuilder

    b = GraphBuilder()
    x = b.input("float32", (batch, sizes[0]))
    labels = b.input("int64", (batch,))
    params = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        params += [b.input("float32", (n_out, n_in)), b.input("float32", (n_out,))]
    h = x
    for i in range(0, len(params), 2):
        h = b.op("add", b.op("matmul", h, b.op("transpose", params[i], perm=(1, 0))), params[i + 1])
        if i + 2 < len(params):
            h = b.op("relu", h)
    loss = b.op("cross_entropy", h, labels, reduction="mean")
    full = build_backward_graph(b.build(loss), 0, list(range(2, 2 + len(params))))
    step = GraphBuilder(full)
    grads = full.outputs[1:]
    rate = step.scalar(lr, like=grads[0])
    updated = [step.op("sub", p, step.op("mul", g, rate)) for p, g in zip(full.inputs[2:], grads)]
    return step.build(*full.outputs, *updated)
