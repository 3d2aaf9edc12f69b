"""Higher-order derivatives: build_backward_graph applied to its own output.

To differentiate a gradient again, a scalar is made from the gradient output
(a sum, or a residual loss) inside the gradient graph, and the transform is
applied to that graph.
"""
from __future__ import annotations

import numpy as np

import frame
from frame.autograd import build_backward_graph
from frame.ir import Graph, GraphBuilder, Value, verify
from frame.ops.interpreter import evaluate

from .gradcheck import add_scalar_output, check_gradients

F64 = frame.float64


def _sum_all(b, v):
    return b.op("sum", v, axes=tuple(range(v.type.rank)), keepdims=False)


def _with_scalar_of(graph: Graph, make) -> Graph:
    """Append ``make(builder, outputs)`` (a scalar) and make it output 0,
    keeping the other outputs after it."""
    b = GraphBuilder(graph)
    loss = make(b, graph.outputs)
    graph.set_outputs([loss] + list(graph.outputs))
    return graph


def test_polynomial_derivatives_up_to_third_order():
    b = GraphBuilder()
    x = b.input(F64, (5,))
    cube = b.op("pow", x, b.scalar(3.0, like=x))
    f = b.op("add", b.op("sub", cube, b.op("mul", b.scalar(2.0, like=x), b.op("mul", x, x))),
             b.op("mul", b.scalar(5.0, like=x), x))
    graph = b.build(_sum_all(b, f))
    xv = np.array([-2.0, -0.5, 0.25, 1.0, 3.0])
    want = [3 * xv ** 2 - 4 * xv + 5, 6 * xv - 4, np.full(5, 6.0)]
    for order in range(3):
        graph = build_backward_graph(graph, 0, [0])
        verify(graph)
        got = evaluate(graph, [xv])[-1]
        np.testing.assert_allclose(got, want[order], rtol=1e-12, atol=1e-12,
                                   err_msg=f"derivative of order {order + 1}")
        # next round: differentiate sum(f^(order+1)) (the derivatives are elementwise)
        graph = _with_scalar_of(graph, lambda b, outs: _sum_all(b, outs[-1]))


def _linear_mse_graph(nonlinear: bool) -> Graph:
    """loss = mse_loss(sum(act(X @ W), axis=1), t) with act = tanh or identity."""
    b = GraphBuilder()
    X, W, t = b.input(F64, (4, 3)), b.input(F64, (3, 2)), b.input(F64, (4,))
    y = b.op("matmul", X, W)
    if nonlinear:
        y = b.op("tanh", y)
    s = b.op("sum", y, axes=(1,), keepdims=False)
    return b.build(b.op("mse_loss", s, t, reduction="mean"))


def test_matmul_sum_mse_hessian_vector_product():
    rng = np.random.default_rng(3)
    X, W, t = rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), rng.normal(size=4)
    V = rng.normal(size=(3, 2))
    first = build_backward_graph(_linear_mse_graph(False), 0, [1])
    # <grad_W, V> differentiated again is the Hessian-vector product H V
    b = GraphBuilder(first)
    hv_loss = _sum_all(b, b.op("mul", first.outputs[1], b.constant(V)))
    first.set_outputs([hv_loss])
    second = build_backward_graph(first, 0, [1])
    (hv,) = evaluate(second, [X, W, t])[1:]
    # loss = 1/N sum_n (x_n W 1 - t_n)^2  =>  H V = 2/N X^T (X V 1) 1^T
    ones = np.ones((2, 1))
    np.testing.assert_allclose(hv, 2 / 4 * X.T @ (X @ V @ ones) @ ones.T, rtol=1e-12)


def test_matmul_tanh_sum_mse_second_order_matches_central_differences():
    rng = np.random.default_rng(4)
    arrays = [rng.normal(size=(4, 3)), 0.5 * rng.normal(size=(3, 2)), rng.normal(size=4)]
    first = check_gradients(_linear_mse_graph(True), arrays, [0, 1])
    second = add_scalar_output(first, first.outputs[1:])
    check_gradients(second, arrays, [0, 1, 2], rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- PINN-style residual

HIDDEN = 6


def _mlp(b: GraphBuilder) -> tuple[list[Value], Value]:
    """u(x) = tanh(x W1 + b1) W2 + b2 for a batch of scalar points x: [N, 1]."""
    x = b.input(F64, (5, 1))
    w1, b1 = b.input(F64, (1, HIDDEN)), b.input(F64, (HIDDEN,))
    w2, b2 = b.input(F64, (HIDDEN, 1)), b.input(F64, (1,))
    h = b.op("tanh", b.op("add", b.op("matmul", x, w1), b1))
    return [x, w1, b1, w2, b2], b.op("add", b.op("matmul", h, w2), b2)


def _params(seed: int = 5):
    rng = np.random.default_rng(seed)
    x = np.linspace(-0.9, 0.8, 5).reshape(5, 1)
    return [x, rng.normal(size=(1, HIDDEN)), rng.normal(size=HIDDEN),
            rng.normal(size=(HIDDEN, 1)), rng.normal(size=1)]


def _uxx_graph() -> Graph:
    """Outputs (sum(u_x), u, u_x, u_xx): u's points are independent, so the
    gradient of sum(u) with respect to x is u_x pointwise, and again for u_xx."""
    b = GraphBuilder()
    _, u = _mlp(b)
    g1 = build_backward_graph(b.build(_sum_all(b, u), u), 0, [0])    # (sum u, u, u_x)
    g1 = _with_scalar_of(g1, lambda b, outs: _sum_all(b, outs[2]))   # (sum u_x, sum u, u, u_x)
    return build_backward_graph(g1, 0, [0])                           # (..., u_xx)


def test_pinn_second_derivative_of_a_tanh_mlp():
    arrays = _params()
    graph = _uxx_graph()
    verify(graph)
    outs = evaluate(graph, arrays)
    u, ux, uxx = outs[2], outs[3], outs[4]
    x, w1, b1, w2, b2 = arrays
    t = np.tanh(x @ w1 + b1)
    np.testing.assert_allclose(ux, ((1 - t ** 2) * w1) @ w2, rtol=1e-12)
    np.testing.assert_allclose(uxx, (-2 * t * (1 - t ** 2) * w1 ** 2) @ w2, rtol=1e-10,
                               atol=1e-12)
    # and against second central differences of u itself (step h = 1e-3:
    # truncation ~ h^2 |u''''| / 12, rounding ~ 1e-16 / h^2, both < 1e-6)
    h = 1e-3
    b = GraphBuilder()
    _, u_value = _mlp(b)
    forward = b.build(u_value)

    def u_at(xs):
        return evaluate(forward, [xs] + arrays[1:])[0]

    fd = (u_at(x + h) - 2 * u_at(x) + u_at(x - h)) / h ** 2
    np.testing.assert_allclose(uxx, fd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(u, u_at(x), rtol=1e-14)


def test_pinn_residual_loss_gradient_with_respect_to_weights():
    """loss = mean((u_xx - f(x))^2): its gradient with respect to the weights
    differentiates the u_xx graph once more (third derivatives of tanh)."""
    arrays = _params(6)
    graph = _uxx_graph()
    source = -np.pi ** 2 * np.sin(np.pi * arrays[0])

    def residual_loss(b, outs):
        r = b.op("sub", outs[-1], b.constant(source))
        return b.op("mean", b.op("mul", r, r), axes=(0, 1), keepdims=False)

    graph = _with_scalar_of(graph, residual_loss)
    check_gradients(graph, arrays, [1, 2, 3, 4], rtol=1e-5, atol=1e-7)
