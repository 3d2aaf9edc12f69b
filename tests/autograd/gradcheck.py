"""Gradient checking against central differences.

``EPS`` is the central-difference step; ``RTOL``/``ATOL`` the tolerance the
analytic gradient must meet.  With float64 data, central differences err by
O(EPS**2 * f''') from truncation plus O(1e-16 * |f| / EPS) from rounding,
both far below the tolerance for the smooth, O(1)-sized test functions.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from frame.autograd import build_backward_graph
from frame.dtypes import from_numpy
from frame.ir import Graph, GraphBuilder, Value
from frame.ops.interpreter import evaluate

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6


def is_diff_array(a: np.ndarray) -> bool:
    return np.asarray(a).dtype.kind in "fc"


def numeric_grad(f: Callable[[list[np.ndarray]], float], arrays: Sequence[np.ndarray], k: int,
                 eps: float = EPS) -> np.ndarray:
    """d f / d arrays[k] by central differences; for a complex array
    ``dF/dRe + i dF/dIm`` (frame's convention for complex gradients)."""
    base = [np.array(a, copy=True) for a in arrays]
    x = base[k]
    out = np.zeros(x.shape, dtype=x.dtype)
    steps = [eps] + ([1j * eps] if x.dtype.kind == "c" else [])
    for idx in np.ndindex(*x.shape):
        for step in steps:
            orig = x[idx]
            x[idx] = orig + step
            plus = f(base)
            x[idx] = orig - step
            minus = f(base)
            x[idx] = orig
            d = (plus - minus) / (2 * eps)
            out[idx] += d if step == eps else 1j * d
    return out


def weighted_sum(b: GraphBuilder, values: Sequence[Value], rng: np.random.Generator) -> Value:
    """A real scalar ``sum_i sum(real(v_i * w_i))`` with random weights of each
    value's shape (complex weights for complex values), so every element of
    every value reaches the loss with a different factor."""
    total = None
    for v in values:
        if v.type.dtype.kind not in "fc":
            continue
        w = rng.uniform(0.5, 1.5, v.type.shape) * rng.choice([-1.0, 1.0], v.type.shape)
        if v.type.dtype.kind == "c":
            w = w + 1j * rng.uniform(-1.0, 1.0, v.type.shape)
        t = b.op("mul", v, b.constant(np.asarray(w, dtype=v.type.dtype.np)))
        if t.type.dtype.kind == "c":
            t = b.op("real", t)
        if t.type.dtype.name != "float64":
            t = b.op("cast", t, dtype="float64")
        s = b.op("sum", t, axes=tuple(range(t.type.rank)), keepdims=False)
        total = s if total is None else b.op("add", total, s)
    if total is None:
        raise ValueError("no floating-point value to build a loss from")
    return total


def op_loss_graph(op: str, arrays: Sequence[np.ndarray], attrs: dict, seed: int = 0) -> Graph:
    """``loss = sum(op(inputs) * random_weights)`` over every float output."""
    b = GraphBuilder()
    ins = [b.input(from_numpy(np.asarray(a).dtype), np.shape(a)) for a in arrays]
    outs = b.op_multi(op, ins, attrs)
    return b.build(weighted_sum(b, outs, np.random.default_rng(seed)))


def scalar_fn(graph: Graph, index: int = 0) -> Callable[[list[np.ndarray]], float]:
    return lambda arrays: float(np.real(evaluate(graph, arrays)[index]))


def check_gradients(graph: Graph, arrays: Sequence[np.ndarray], wrt: Sequence[int],
                    eps: float = EPS, rtol: float = RTOL, atol: float = ATOL,
                    what: str = "") -> Graph:
    """Assert that build_backward_graph's gradients of output 0 match central
    differences; returns the gradient graph."""
    grad_graph = build_backward_graph(graph, 0, list(wrt))
    results = evaluate(grad_graph, list(arrays))
    analytic = results[len(graph.outputs):]
    f = scalar_fn(graph)
    for k, got in zip(wrt, analytic):
        want = numeric_grad(f, arrays, k, eps)
        assert got.shape == np.shape(arrays[k]) and got.dtype == np.asarray(arrays[k]).dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"{what}: gradient of input {k}")
    return grad_graph


def add_scalar_output(graph: Graph, values: Sequence[Value], seed: int = 1) -> Graph:
    """Replace ``graph``'s outputs by one random weighted sum of ``values``
    (appends to ``graph``; used to differentiate a gradient graph again)."""
    b = GraphBuilder(graph)
    loss = weighted_sum(b, values, np.random.default_rng(seed))
    graph.set_outputs([loss])
    return graph
