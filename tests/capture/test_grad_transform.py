"""``frame.grad`` / ``frame.value_and_grad`` inside a jitted function
(capture/autograd.py ``grad_call``, capture/variables/grad.py): the
differentiated function and its gradient are traced into the caller's graph,
with eager's results (types, values, requires_grad, exceptions); what cannot
be traced (a gradient that is a Python float, a ``backward()`` inside the
differentiated function...) runs natively with its reason."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F

from .helpers import array, assert_same_as_eager, last_entry, tensor


def explain_ok(fn, *args, graphs=1):
    """Captured whole: ``graphs`` graphs, no graph break, no native fallback."""
    out = frame.explain(fn)(*copy.deepcopy(args))
    assert (out.graph_count, out.graph_break_count) == (graphs, 0), str(out)
    assert out.exception is None, str(out)
    return out


def traced(fn, *args):
    """Same as eager, and one graph with no break."""
    assert_same_as_eager(fn, *args)
    return explain_ok(fn, *args)


def break_kinds(fn, *args):
    out = frame.explain(fn)(*copy.deepcopy(args))
    return [r.kind for r in out.break_reasons], out


def leaf(shape=(4,), seed=0):
    return frame.tensor(array(shape, seed=seed)).requires_grad_()


def loss_fn(w, b, x, y):
    return F.cross_entropy(x @ w + b, y)


def cubic(a):
    return (a ** 3).sum()


# --------------------------------------------------------------------------- first order

def test_sgd_step_with_grad_is_one_graph():
    def f(x, w):
        g = frame.grad(lambda w: ((x @ w) ** 2).mean())(w)
        return w - 0.1 * g

    out = traced(f, tensor((3, 4)), tensor((4, 2), seed=1))
    ops = out.ops_per_graph[0]
    assert ops.count("matmul") >= 2 and "transpose" in ops  # the forward and its gradient


def test_value_and_grad_int_argnums():
    def f(x, w):
        loss, g = frame.value_and_grad(lambda x, w: ((x @ w) ** 2).mean(), argnums=1)(x, w)
        return loss, g, loss.requires_grad, g.requires_grad

    traced(f, tensor((3, 4)), tensor((4, 2), seed=1))


@pytest.mark.parametrize("argnums", [(0, 1), (1, 0), [1, 0], (-1,)])
def test_grad_and_value_and_grad_tuple_argnums(argnums):
    def g(x, w):
        return frame.grad(lambda x, w: (frame.tanh(x @ w) ** 2).sum(), argnums)(x, w)

    def vg(x, w):
        return frame.value_and_grad(lambda x, w: (frame.tanh(x @ w) ** 2).sum(), argnums)(x, w)

    traced(g, tensor((3, 4)), tensor((4, 2), seed=1))
    traced(vg, tensor((3, 4)), tensor((4, 2), seed=1))


@pytest.mark.parametrize("make", [
    lambda: tensor((3,), seed=2),
    lambda: array((3,), seed=2),
    lambda: array((3,), "float64", seed=2),
    lambda: np.float32(1.5),
    lambda: tensor((), seed=2),
], ids=["tensor", "ndarray", "ndarray64", "npscalar", "tensor0d"])
def test_argument_kinds_give_eager_types(make):
    def f(s, w):
        value, g = frame.value_and_grad(lambda s, w: (frame.sin(w * s) * w).sum())(s, w)
        return value, g

    traced(f, make(), array((3,), seed=3))
    traced(lambda s, w: f(s, frame.tensor(w)), make(), array((3,), seed=3))


def test_python_float_argument_runs_natively():
    # its gradient is a Python float: a value read from the graph
    def lam(s, w):
        return frame.grad(lambda s: (w * s).sum())(s)

    def glob(s, w):
        y = w * 2.0
        return y + frame.grad(loss_of_scale)(s, w)

    w = tensor((3,))
    assert_same_as_eager(lam, 2.0, w, captured=False)
    kinds, out = break_kinds(lam, 2.0, w)
    assert kinds == ["data_dependent"] and "Python float" in out.break_reasons[0].reason
    # a function without cells of its own: a graph break at the call, the rest captured
    assert_same_as_eager(glob, 2.0, w, captured=None)
    kinds, out = break_kinds(glob, 2.0, w)
    assert kinds == ["data_dependent"] and out.graph_count == 2


def loss_of_scale(s, w):
    return (w * s).sum()


def test_disconnected_argument_gets_zeros():
    def f(x, w):
        return frame.value_and_grad(lambda x, w: (x * 2.0).sum(), argnums=(0, 1))(x, w)

    def constant(x):
        return frame.value_and_grad(lambda x: 1.5)(x), frame.grad(lambda x: np.float32(2.0))(x)

    traced(f, tensor((3,)), array((2, 2)))
    assert_same_as_eager(constant, tensor((3,)))
    assert_same_as_eager(constant, array((3,)))


def test_a_function_made_outside_is_traced():
    dloss = frame.value_and_grad(loss_fn, argnums=(0, 1))

    def f(w, b, x, y):
        loss, (gw, gb) = dloss(w, b, x, y)
        return loss, w - 0.5 * gw, b - 0.5 * gb

    args = (tensor((4, 3)), frame.zeros(3), tensor((5, 4), seed=1), frame.tensor([0, 1, 2, 1, 0]))
    out = traced(f, *args)
    assert any("__closure__" in g for g in out.guards), out.guards


def test_grad_of_frame_function_and_of_a_module():
    class Energy(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 0.5

        def forward(self, x):
            return self.scale * (x ** 2).sum()

    def f(x, m):
        return frame.grad(frame.sum)(x), frame.grad(m)(x), frame.grad(m.forward)(x)

    traced(f, tensor((3,)), Energy())


def test_no_grad_side_effects_and_leaves_stop_requiring_grad():
    def f(x, p):
        seen = []

        def fn(a):
            seen.append(a)
            return (a * p.detach()).sum()
        with frame.no_grad():
            g = frame.grad(fn)(x)
        return g, p.grad is None, seen[0].requires_grad, frame.autograd.is_grad_enabled()

    traced(f, tensor((4,)), leaf())


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("body", [
    lambda x, w: frame.grad(lambda w: x @ w)(w),                          # not a scalar
    lambda x, w: frame.grad(lambda w: (w, w))(w),                          # not a tensor
    lambda x, w: frame.grad(lambda w: (w > 0).sum())(w),                   # not floating
    lambda x, w: frame.grad(lambda w: (x @ w).sum(), argnums=3)(w),        # out of range
    lambda x, w: frame.grad(lambda a, b: (a @ b).sum(), argnums=(0, -2))(x, w),  # twice
    lambda x, w: frame.grad(lambda w: (x @ w).sum(), argnums=1.5)(w),      # not an int
    lambda x, w: frame.grad(lambda k: (w * k).sum())(3),                   # an integer argument
    lambda x, w: frame.grad(lambda k: (w * k).sum())(np.arange(2)),        # integer dtype
], ids=["shape", "tuple", "bool", "range", "twice", "float-argnums", "int", "int-array"])
def test_errors_are_eager_errors(body):
    def f(x, w):
        return body(x, w)

    assert_same_as_eager(f, tensor((3, 4)), tensor((4, 2), seed=1))
    kinds, out = break_kinds(f, tensor((3, 4)), tensor((4, 2), seed=1))
    assert kinds == ["exception"] and out.exception is not None


# --------------------------------------------------------------------------- higher order

@pytest.mark.parametrize("make", [lambda: frame.tensor(np.float32(1.5)),
                                  lambda: np.array(1.5, np.float32),
                                  lambda: np.float32(1.5)], ids=["tensor", "ndarray", "npscalar"])
def test_second_and_third_order(make):
    def second(s):
        return frame.grad(frame.grad(cubic))(s)

    def third(s):
        return frame.value_and_grad(frame.grad(frame.grad(lambda a: (a ** 4).sum())))(s)

    traced(second, make())
    traced(third, make())
    assert float(frame.grad(frame.grad(cubic))(1.5)) == pytest.approx(9.0)


def test_mixed_second_derivative():
    # the inner function closes over the outer one's parameter (a cell of an
    # inlined function, filled from the argument as MAKE_CELL does)
    def f(x0, y0):
        return frame.grad(lambda y: frame.grad(lambda x: (x * y).sum() ** 2)(x0).sum())(y0)

    traced(f, tensor((3,)), tensor((3,), seed=2))
    traced(f, array((3,)), array((3,), seed=2))


def test_inlined_function_parameter_captured_by_a_closure():
    def f(x):
        def inner(y):
            return (lambda: y * 2.0)()
        return inner(x)

    traced(f, tensor((3,)))


def test_second_derivative_of_a_vector_function():
    def d2(x):
        return frame.grad(lambda x: frame.grad(lambda x: (frame.sin(x) * x).sum())(x).sum())(x)

    x = tensor((5,))
    traced(d2, x)
    expected = 2 * np.cos(x.numpy()) - x.numpy() * np.sin(x.numpy())
    np.testing.assert_allclose(frame.jit(d2, backend="cpu")(x).numpy(), expected, rtol=1e-5,
                               atol=1e-6)


class _U(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(1, 8)
        self.l2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.l2(frame.tanh(self.l1(x)))


def test_physics_informed_training_step_through_second_derivative():
    # u'' + sin(x) = 0: the loss uses d2u/dx2, and backward trains u's parameters
    # through the recorded gradient nodes (create_graph)
    frame.manual_seed(0)
    u = _U()
    opt = frame.optim.SGD(list(u.parameters()), lr=0.05)
    xs = frame.tensor(array((6, 1), positive=True))

    def step(u, opt, xs):
        du = lambda x: frame.grad(lambda x: u(x).sum())(x)  # noqa: E731
        d2u = frame.grad(lambda x: du(x).sum())(xs)
        loss = ((d2u + frame.sin(xs)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach(), [p.grad for p in (u.l1.weight, u.l1.bias, u.l2.weight)]

    traced(step, u, opt, xs)
    grads = step(*copy.deepcopy((u, opt, xs)))[1]
    assert all(float(np.abs(g.numpy()).sum()) > 0 for g in grads)


# --------------------------------------------------------------------------- with modules

class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(frame.tanh(self.fc1(x)))


def _model_and_data():
    frame.manual_seed(0)
    return _MLP(), tensor((5, 4)), frame.tensor([0, 1, 2, 1, 0])


def test_input_gradient_of_a_module_loss():
    def saliency(model, x, y):
        with frame.no_grad():
            g = frame.grad(lambda x: F.cross_entropy(model(x), y))(x)
        return g.abs().sum(axis=1)

    def fgsm(model, x, y):
        with frame.no_grad():
            loss, g = frame.value_and_grad(lambda x: F.cross_entropy(model(x), y))(x)
            return loss, x + 0.1 * frame.sign(g)

    traced(saliency, *_model_and_data())
    traced(fgsm, *_model_and_data())


def test_gradient_that_requires_grad_leaves_the_function_with_its_record():
    # the parameters require grad and grad mode is on: eager records the gradient
    # (create_graph), so it requires grad; it leaves the compiled code with the
    # entry's autograd record (compiled autograd across the jit boundary)
    def saliency(model, x, y):
        g = frame.grad(lambda x: F.cross_entropy(model(x), y))(x)
        return g, g.requires_grad

    assert_same_as_eager(saliency, *_model_and_data())
    model, x, y = _model_and_data()
    twin = copy.deepcopy(model)
    (saliency(model, x, y)[0] ** 2).sum().backward()
    (frame.jit(saliency)(twin, x, y)[0] ** 2).sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_functional_sgd_and_a_parameter_argument():
    def sgd(w, b, x, y):
        loss, (gw, gb) = frame.value_and_grad(loss_fn, argnums=(0, 1))(w, b, x, y)
        return loss, w - 0.5 * gw, b - 0.5 * gb

    def param_step(model, x, y):
        lin = model.fc1
        g = frame.grad(lambda w: F.cross_entropy(model.fc2(frame.tanh(x @ w.T + lin.bias)), y))(
            lin.weight)
        requires = g.requires_grad
        with frame.no_grad():
            lin.weight -= 0.1 * g
        return requires

    model, x, y = _model_and_data()
    traced(sgd, tensor((4, 3)), frame.zeros(3), x, y)
    out = traced(param_step, model, x, y)
    assert out.result is True


# --------------------------------------------------------------------------- native cases, cache

def test_backward_or_in_place_update_inside_the_function_runs_natively():
    def bw(x, p):
        def fn(a):
            loss = (a * p).sum()
            loss.backward()
            return loss
        return frame.grad(fn)(x), p.grad

    def inplace(x):
        def fn(a):
            with frame.no_grad():
                a += 1.0
            return (a * a).sum()
        return frame.grad(fn)(x)

    assert_same_as_eager(bw, tensor((3,)), leaf((3,)), captured=False)
    assert_same_as_eager(inplace, tensor((3,)), captured=False)
    assert "backward() inside" in break_kinds(bw, tensor((3,)), leaf((3,)))[1].break_reasons[0].reason
    assert "in-place" in break_kinds(inplace, tensor((3,)))[1].break_reasons[0].reason


def test_second_call_hits_the_cache(compile_counter):
    def f(x, w):
        g = frame.grad(lambda w: ((x @ w) ** 2).mean())(w)
        v, h = frame.value_and_grad(frame.grad(cubic))(frame.tensor(np.float32(2.0)))
        return w - 0.1 * g, v, h

    jf = frame.jit(f, backend="cpu")
    jf(tensor((3, 4)), tensor((4, 2), seed=1))
    assert compile_counter.translations == 1
    got = jf(tensor((3, 4), seed=5), tensor((4, 2), seed=6))
    assert compile_counter.translations == 1 and compile_counter.recompiles == 0
    assert not last_entry(jf).native
    expected = f(tensor((3, 4), seed=5), tensor((4, 2), seed=6))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
