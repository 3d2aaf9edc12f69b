"""``frame.grad`` and ``frame.value_and_grad``: kinds of results, argnums,
higher order (polynomials, a PINN-style d2u/dx2 of a tanh MLP) against
analytic values and finite differences, and training through derivatives."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.functions import _core


# --------------------------------------------------------------------------- first and higher order

def poly(x):
    return x ** 4 - 3.0 * x ** 2 + 2.0 * x


def test_polynomial_derivatives_up_to_third_order():
    d1 = frame.grad(poly)
    d2 = frame.grad(d1)
    d3 = frame.grad(d2)
    for x in (-1.5, 0.5, 2.0):
        assert d1(x) == pytest.approx(4 * x ** 3 - 6 * x + 2, rel=1e-5)
        assert d2(x) == pytest.approx(12 * x ** 2 - 6, rel=1e-5)
        assert d3(x) == pytest.approx(24 * x, rel=1e-5)


def test_second_derivative_matches_finite_differences_in_float64():
    x = np.array([-1.2, 0.3, 0.9, 1.7])
    f = lambda t: frame.sin(t * t).sum()  # noqa: E731
    hess_diag = frame.grad(lambda t: frame.grad(f)(t).sum())(x)
    h = 1e-4

    def fx(v):
        return np.sin(v * v)
    fd = (fx(x + h) - 2 * fx(x) + fx(x - h)) / h ** 2
    assert hess_diag.dtype == np.float64
    np.testing.assert_allclose(hess_diag, fd, rtol=1e-5, atol=1e-6)


def test_result_kinds_follow_the_arguments():
    f = lambda x: (x * x).sum()  # noqa: E731
    g = frame.grad(f)(3.0)
    assert type(g) is float and g == 6.0
    arr = np.array([1.0, 2.0])
    g = frame.grad(f)(arr)
    assert type(g) is np.ndarray and g.dtype == np.float64 and g.tolist() == [2.0, 4.0]
    assert not np.shares_memory(g, arr)
    g = frame.grad(f)(np.float64(1.5))
    assert isinstance(g, np.float64) and g == 3.0
    t = frame.tensor([1.0, 2.0])
    g = frame.grad(f)(t)
    assert isinstance(g, frame.Tensor) and g.dtype is frame.float32 and g.tolist() == [2.0, 4.0]
    assert not g.requires_grad and not t.requires_grad
    value, g = frame.value_and_grad(f)(arr)
    assert isinstance(value, np.floating) and value == 5.0
    value, g = frame.value_and_grad(f)(t)
    assert isinstance(value, frame.Tensor) and value.item() == 5.0 and not value.requires_grad


def test_argnums_tuple_negative_and_keyword_arguments():
    def f(x, y, scale=1.0):
        return (x * x * y).sum() * scale

    gx, gy = frame.grad(f, argnums=(0, 1))(2.0, 5.0, scale=2.0)
    assert (gx, gy) == (40.0, 8.0)
    assert frame.grad(f, argnums=-1)(2.0, 5.0) == 4.0
    value, (gy,) = frame.value_and_grad(f, argnums=(1,))(2.0, 5.0)
    assert value == 20.0 and gy == 4.0


def test_unused_argument_gets_zeros():
    g = frame.grad(lambda x, y: (x * 2.0).sum(), argnums=1)(np.ones(2), np.ones((2, 3)))
    assert g.shape == (2, 3) and not g.any()
    assert frame.grad(lambda x: frame.tensor(1.0))(2.0) == 0.0


def test_errors():
    with pytest.raises(TypeError, match="integer"):
        frame.grad(lambda x: x * 2.0)(3)
    with pytest.raises(TypeError, match="floating-point"):
        frame.grad(lambda x: x.sum())(np.arange(3))
    with pytest.raises(ValueError, match=r"scalar \(0-d\).*shape \[2\]"):
        frame.grad(lambda x: x * 2.0)(np.ones(2))
    with pytest.raises(TypeError, match="argnums"):
        frame.grad(lambda x: x, argnums="0")
    with pytest.raises(ValueError, match="out of range"):
        frame.grad(lambda x: x, argnums=1)(1.0)
    with pytest.raises(ValueError, match="twice"):
        frame.grad(lambda x, y: x, argnums=(0, -2))(1.0, 2.0)
    with pytest.raises(TypeError, match="must return a scalar tensor"):
        frame.grad(lambda x: "nope")(1.0)


def test_nested_grad_does_not_confuse_a_captured_variable_with_its_own():
    # d/dx [ d/dy (x * y) at y = x ] = d/dx x = 1  (not 2: the inner variable is distinct)
    assert frame.grad(lambda x: frame.grad(lambda y: x * y)(x))(3.0) == 1.0


def test_grad_works_inside_no_grad_and_leaves_nothing_tracked():
    before = len(_core.tracked)
    with frame.no_grad():
        assert frame.grad(lambda x: x ** 3)(2.0) == 12.0
        g = frame.grad(lambda x: (x ** 3).sum())(frame.tensor([2.0]))
    assert g.tolist() == [12.0] and not g.requires_grad
    del g
    assert len(_core.tracked) == before


# --------------------------------------------------------------------------- PINN-style

class TanhMLP:
    """u(x) = W3 tanh(W2 tanh(W1 x + b1) + b2) + b3 for a batch of scalars x [N, 1]."""

    def __init__(self, seed: int):
        rng = np.random.default_rng(seed)
        shapes = [(1, 8), (8,), (8, 8), (8,), (8, 1), (1,)]
        self.params = [frame.tensor(rng.standard_normal(s) * 0.7, requires_grad=True)
                       for s in shapes]

    def __call__(self, x):
        w1, b1, w2, b2, w3, b3 = self.params
        h = frame.tanh(x @ w1 + b1)
        h = frame.tanh(h @ w2 + b2)
        return h @ w3 + b3

    def numpy_u(self, x):
        w1, b1, w2, b2, w3, b3 = (p.numpy() for p in self.params)
        h = np.tanh(x @ w1 + b1)
        h = np.tanh(h @ w2 + b2)
        return h @ w3 + b3


def u_xx(net, x):
    """d2u/dx2 per sample: the samples are independent, so the gradient of sum(u)
    is du/dx row by row, and the same again for the second derivative."""
    du = frame.grad(lambda t: net(t).sum())
    return frame.grad(lambda t: du(t).sum())(x)


def test_pinn_second_derivative_of_a_tanh_mlp_matches_finite_differences():
    net = TanhMLP(0)
    x = np.linspace(-1.5, 1.5, 7).reshape(7, 1)
    got = u_xx(net, frame.tensor(x))
    assert isinstance(got, frame.Tensor) and got.shape == (7, 1)
    h = 1e-4
    fd = (net.numpy_u(x + h) - 2 * net.numpy_u(x) + net.numpy_u(x - h)) / h ** 2
    np.testing.assert_allclose(got.numpy(), fd, rtol=1e-5, atol=1e-6)
    assert got.requires_grad  # it depends on the parameters: a loss can train them


def test_pinn_loss_on_the_second_derivative_trains_the_parameters():
    net = TanhMLP(1)
    x = frame.tensor(np.linspace(-1.0, 1.0, 5).reshape(5, 1))

    def loss():
        residual = u_xx(net, x) + frame.sin(x)  # u'' = -sin(x)
        return (residual * residual).mean()

    loss().backward()
    assert net.params[-1].grad is None  # u'' does not depend on the output bias
    eps = 1e-6
    for p in net.params:
        grad = p.grad.numpy() if p.grad is not None else np.zeros(p.shape)
        data = p.numpy()
        for idx in list(np.ndindex(*data.shape))[:4]:
            orig = data[idx]
            data[idx] = orig + eps
            plus = loss().item()
            data[idx] = orig - eps
            minus = loss().item()
            data[idx] = orig
            assert grad[idx] == pytest.approx((plus - minus) / (2 * eps), rel=1e-5, abs=1e-7)
