"""Eager autograd: recording, ``Tensor.backward``, ``no_grad``, ``detach``,
``requires_grad_``, in-place rules and errors.

Gradients are checked against the graph engine run on a hand-built graph of
the same computation, and against central differences (float64 models).
"""
from __future__ import annotations

import copy
import pickle
import threading
import weakref

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.autograd import AutogradError, NonDifferentiableError, build_backward_graph
from frame.autograd import eager as eager_autograd
from frame.functions import _core
from frame.ir import GraphBuilder
from frame.ops import OpSchema, register
from frame.ops.interpreter import evaluate
from frame.ops.registry import unregister
from frame.runtime import eager as eager_runtime


# --------------------------------------------------------------------------- helpers

def central_differences(loss_fn, params, eps=1e-6):
    """d loss_fn() / d p for every float64 tensor p, perturbing p's data in place."""
    grads = []
    with frame.no_grad():
        for p in params:
            data = p.numpy()
            g = np.zeros_like(data)
            for idx in np.ndindex(*data.shape):
                orig = data[idx]
                data[idx] = orig + eps
                plus = float(loss_fn())
                data[idx] = orig - eps
                minus = float(loss_fn())
                data[idx] = orig
                g[idx] = (plus - minus) / (2 * eps)
            grads.append(g)
    return grads


def float64_(module: nn.Module) -> nn.Module:
    """Replace every weight and bias of ``module`` by a float64 Parameter."""
    for m in module.modules():
        for name in ("weight", "bias"):
            p = getattr(m, name, None)
            if isinstance(p, nn.Parameter):
                setattr(m, name, nn.Parameter(p.numpy().astype(np.float64)))
    return module


def assert_grads(params, expected, rtol=1e-5, atol=1e-7):
    for p, e in zip(params, expected):
        assert p.grad is not None
        assert p.grad.shape == p.shape and p.grad.dtype is p.dtype
        np.testing.assert_allclose(p.grad.numpy(), e, rtol=rtol, atol=atol)


def mlp(sizes=(6, 5, 4, 3)) -> nn.Sequential:
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


@pytest.fixture(autouse=True)
def _seed():
    frame.manual_seed(0)


# --------------------------------------------------------------------------- recording

def test_ops_on_tensors_that_require_grad_are_recorded():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    c = frame.tensor([3.0, 4.0])
    y = x * c
    z = frame.exp(y).sum()
    assert x.is_leaf and x.grad_fn is None
    assert y.requires_grad and not y.is_leaf and y.grad_fn.op == "mul"
    assert z.requires_grad and z.grad_fn.op == "sum"
    assert "grad_fn=<sum>" in repr(z)
    u = c * 2.0  # nothing tracked among the operands
    assert not u.requires_grad and u.is_leaf


def test_integer_and_bool_results_are_not_recorded():
    x = frame.tensor([1.0, -2.0], requires_grad=True)
    assert not (x > 0).requires_grad
    assert not frame.argmax(x).requires_grad
    assert not x.astype(frame.int64).requires_grad
    y = frame.where(x > 0, x, 0.0).sum()  # the comparison is off the gradient path
    y.backward()
    assert x.grad.tolist() == [1.0, 0.0]


def _graph_engine_mlp_grads(x, labels, weights):
    """The same MLP + cross-entropy as a hand-built graph, through build_backward_graph."""
    b = GraphBuilder()
    xv = b.input(frame.float32, x.shape)
    yv = b.input(frame.int64, labels.shape)
    ws = [b.input(frame.float32, w.shape) for w in weights]
    h = xv
    for i in range(0, len(ws), 2):
        h = b.op("add", b.op("matmul", h, b.op("transpose", ws[i], perm=(1, 0))), ws[i + 1])
        if i + 2 < len(ws):
            h = b.op("relu", h)
    graph = b.build(b.op("cross_entropy", h, yv, reduction="mean"))
    bw = build_backward_graph(graph, 0, list(range(2, 2 + len(ws))))
    return evaluate(bw, [x, labels, *weights])


def test_mlp_gradients_match_the_graph_engine():
    model = mlp((12, 8, 6, 4))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 12)).astype(np.float32)
    labels = rng.integers(0, 4, 5)
    loss = F.cross_entropy(model(frame.tensor(x)), frame.tensor(labels))
    loss.backward()
    params = list(model.parameters())
    expected = _graph_engine_mlp_grads(x, labels, [p.numpy() for p in params])
    np.testing.assert_allclose(loss.item(), expected[0], rtol=1e-6)
    assert_grads(params, expected[1:], rtol=1e-5, atol=1e-6)


def test_mlp_gradients_match_central_differences():
    model = float64_(mlp())
    rng = np.random.default_rng(2)
    x = frame.tensor(rng.standard_normal((4, 6)))
    labels = frame.tensor(rng.integers(0, 3, 4))
    F.cross_entropy(model(x), labels).backward()
    params = list(model.parameters())
    assert_grads(params, central_differences(lambda: F.cross_entropy(model(x), labels), params))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 3, 3, padding=1)
        self.fc = nn.Linear(3 * 3 * 3, 4)

    def forward(self, x):
        h = F.max_pool2d(frame.relu(self.conv(x)), 2)
        return self.fc(h.reshape(h.shape[0], -1))


def test_cnn_gradients_match_central_differences_for_parameters_and_input():
    model = float64_(SmallCNN())
    rng = np.random.default_rng(3)
    x = frame.tensor(rng.standard_normal((2, 2, 6, 6)), requires_grad=True)
    labels = frame.tensor([1, 3])
    F.cross_entropy(model(x), labels).backward()
    params = list(model.parameters()) + [x]
    assert_grads(params, central_differences(lambda: F.cross_entropy(model(x), labels), params))


# --------------------------------------------------------------------------- backward's contract

def test_backward_accumulates_into_grad_like_pytorch():
    x = frame.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * x).sum()
    loss.backward()
    first = x.grad
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    loss.backward()  # the record is still alive: a second backward accumulates again
    assert x.grad.tolist() == [4.0, 8.0, 12.0]
    assert first.tolist() == [2.0, 4.0, 6.0]  # accumulation makes a new tensor
    (x * 10.0).sum().backward()
    assert x.grad.tolist() == [14.0, 18.0, 22.0]
    x.grad = None
    (x * 10.0).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0, 10.0]


def test_only_leaves_get_grad_and_every_reachable_leaf_does():
    a = frame.tensor([1.0, 2.0], requires_grad=True)
    b = frame.tensor([5.0, 7.0], requires_grad=True)
    h = a * b
    (h.sum() + a.sum() * 0.0).backward()
    assert h.grad is None
    assert a.grad.tolist() == [5.0, 7.0] and b.grad.tolist() == [1.0, 2.0]
    c = frame.tensor([1.0], requires_grad=True)
    (c * 0.0 + frame.relu(-c)).sum().backward()  # reached, gradient zero
    assert c.grad.tolist() == [0.0]


def test_gradient_argument_weights_a_non_scalar_output():
    x = frame.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.backward(gradient=frame.tensor([1.0, 0.5, -1.0]))
    assert x.grad.tolist() == [2.0, 2.0, -6.0]
    z = frame.tensor([[2.0]], requires_grad=True)
    (z * 3.0).backward()  # one element: no gradient needed, whatever the rank
    assert z.grad.tolist() == [[3.0]]


def test_non_scalar_backward_is_an_error_naming_the_shape():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match=r"single element.*shape \[2\]"):
        (x * 2.0).backward()
    with pytest.raises(ValueError, match=r"gradient has shape \[3\].*shape \[2\]"):
        (x * 2.0).backward(gradient=np.ones(3))


def test_backward_on_a_tensor_that_does_not_require_grad_is_an_error():
    with pytest.raises(AutogradError, match="does not require grad"):
        (frame.tensor([1.0]) * 2.0).sum().backward()
    x = frame.tensor([1.0], requires_grad=True)
    with frame.no_grad():
        y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_backward_on_a_leaf_gives_ones():
    x = frame.tensor(3.0, requires_grad=True)
    x.backward()
    assert x.grad.item() == 1.0


@pytest.fixture
def nondifferentiable_op():
    name = "test_eager_round"
    register(OpSchema(name, 1, lambda types, attrs: [types[0]],
                      lambda ins, attrs: (np.round(ins[0]),)))
    try:
        yield name
    finally:
        unregister(name)


def test_nondifferentiable_op_on_the_path_is_an_error_naming_it(nondifferentiable_op):
    x = frame.tensor([0.4, 1.6], requires_grad=True)
    y = _core.apply1(nondifferentiable_op, (_core.as_array(x),), {})
    assert y.requires_grad and y.grad_fn.op == nondifferentiable_op
    with pytest.raises(NonDifferentiableError, match=f"'{nondifferentiable_op}' is on the path"):
        (y * x).sum().backward()
    with frame.no_grad():  # off the path: fine
        c = _core.apply1(nondifferentiable_op, (_core.as_array(x),), {})
    (c * x).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0]


def test_create_graph_backward_gives_differentiable_gradients():
    x = frame.tensor(2.0, requires_grad=True)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.item() == 12.0 and g.requires_grad
    x.grad = None
    g.backward()
    assert x.grad.item() == 12.0  # d/dx 3x^2 = 6x
    y = frame.tensor(2.0, requires_grad=True)
    (y ** 3).backward()
    assert not y.grad.requires_grad


# --------------------------------------------------------------------------- no_grad, detach, requires_grad_

def test_no_grad_context_manager_and_decorator():
    x = frame.tensor([1.0], requires_grad=True)
    with frame.no_grad():
        assert not (x * 2.0).requires_grad
        with frame.no_grad():
            pass
        assert not (x * 2.0).requires_grad  # still off after the inner block
    assert (x * 2.0).requires_grad

    @frame.no_grad()
    def f(t):
        return t * 2.0

    @frame.no_grad
    def g(t):
        return t * 2.0

    assert not f(x).requires_grad and not g(x).requires_grad
    assert f.__name__ == "f" and (x * 2.0).requires_grad


def test_no_grad_is_thread_local():
    x = frame.tensor([1.0], requires_grad=True)
    seen = {}
    inside = threading.Event()
    done = threading.Event()

    def worker():
        inside.wait()
        seen["other"] = (x * 2.0).requires_grad
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    with frame.no_grad():
        inside.set()
        done.wait()
        seen["this"] = (x * 2.0).requires_grad
    t.join()
    assert seen == {"other": True, "this": False}


def test_detach_shares_memory_but_is_outside_the_record():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    d = h.detach()
    assert not d.requires_grad and d.is_leaf
    assert d.numpy() is not h.numpy() and np.shares_memory(d.numpy(), h.numpy())
    (d * x).sum().backward()  # d is a constant
    assert x.grad.tolist() == [3.0, 6.0]
    assert not x.detach().requires_grad


def test_requires_grad_on_leaves():
    t = frame.tensor([1.0, 2.0])
    assert t.requires_grad_() is t and t.requires_grad
    t.requires_grad = False
    assert not (t * 2.0).requires_grad
    with pytest.raises(TypeError, match="floating-point"):
        frame.tensor([1, 2]).requires_grad_()
    h = frame.tensor([1.0], requires_grad=True) * 2.0
    h.requires_grad_(True)  # already requires grad: fine
    with pytest.raises(ValueError, match="not a leaf"):
        h.requires_grad_(False)


def test_a_leaf_that_stops_requiring_grad_is_a_constant_for_later_backward():
    a = frame.tensor([1.0, 2.0], requires_grad=True)
    b = frame.tensor([3.0, 4.0], requires_grad=True)
    loss = (a * b).sum()
    a.requires_grad_(False)
    loss.backward()
    assert a.grad is None and b.grad.tolist() == [1.0, 2.0]


def test_nothing_is_recorded_under_another_op_handler():
    x = frame.tensor([1.0], requires_grad=True)

    def handler(op, arrays, attrs):
        return eager_runtime.run_op(op, arrays, attrs)

    with _core.op_handler(handler):
        y = x * 2.0
    assert y.tolist() == [2.0] and not y.requires_grad


# --------------------------------------------------------------------------- in-place operations

def test_inplace_on_a_leaf_that_requires_grad_raises_unless_no_grad():
    w = frame.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(AutogradError, match="a leaf Variable that requires grad is being used "
                                            "in an in-place operation"):
        w += 1.0
    with pytest.raises(AutogradError, match="leaf Variable"):
        w.zero_()
    assert w.tolist() == [1.0, 2.0]
    with frame.no_grad():
        w -= 0.5
        w.zero_()
    assert w.tolist() == [0.0, 0.0] and w.requires_grad and w.is_leaf


def test_inplace_on_a_recorded_result_is_recorded():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    h += x
    assert h.grad_fn.op == "add"
    h *= x  # h = 3x * x
    h.sum().backward()
    assert h.tolist() == [3.0, 12.0]
    assert x.grad.tolist() == [6.0, 12.0]
    x.grad = None
    s = x * 2.0
    s *= s  # mul reads the old s, which the write overwrites: it keeps a copy
    s.sum().backward()
    assert s.tolist() == [4.0, 16.0] and x.grad.tolist() == [8.0, 16.0]


def test_inplace_that_overwrites_a_saved_value_fails_at_backward():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y += 1.0  # exp's gradient needs its output, which this overwrote
    with pytest.raises(AutogradError, match="modified by an in-place operation.*'exp'"):
        y.sum().backward()
    z = x * 2.0
    z += 1.0  # mul's gradient does not read its output: fine (as PyTorch)
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_inplace_under_no_grad_bumps_the_version_backward_checks():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    loss = (h * h).sum()
    with frame.no_grad():
        h += 1.0
    with pytest.raises(AutogradError, match="in-place"):
        loss.backward()
    v = x * 1.0
    loss = (v * v).sum()
    d = v.detach()  # detached views share the version counter
    d += 1.0
    with pytest.raises(AutogradError, match="in-place"):
        loss.backward()


def test_inplace_on_an_untracked_tensor_with_a_tracked_operand_joins_the_graph():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    buf = frame.zeros(2)
    buf += x * x
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_inplace_write_that_casts_records_the_cast():
    x = frame.tensor(np.array([1.5, 2.5]), requires_grad=True)  # float64
    buf = frame.zeros(2, dtype=frame.float32)
    buf += x * 2.0
    assert buf.dtype is frame.float32 and buf.grad_fn.op == "cast"
    buf.sum().backward()
    assert x.grad.dtype is frame.float64 and x.grad.tolist() == [2.0, 2.0]


def test_zero_on_a_recorded_result_gives_zero_gradient():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3.0
    h.zero_()
    (h + x).sum().backward()
    assert h.tolist() == [0.0, 0.0] and x.grad.tolist() == [1.0, 1.0]


def test_a_leaf_updated_between_two_uses_gets_both_contributions():
    w = frame.tensor([1.0, 2.0], requires_grad=True)
    first = (w * 3.0).sum()
    with frame.no_grad():
        w += 1.0
    second = (w * w).sum()  # w = [2, 3] here
    (first + second).backward()
    assert w.grad.tolist() == [7.0, 9.0]


def test_a_leaf_changed_after_use_fails_only_when_its_value_is_needed():
    w = frame.tensor([1.0, 2.0], requires_grad=True)
    linear = (w * 3.0).sum()
    square = (w * w).sum()
    with frame.no_grad():
        w -= 1.0  # what an optimizer step does
    linear.backward()  # d/dw 3w does not read w
    assert w.grad.tolist() == [3.0, 3.0]
    with pytest.raises(AutogradError, match="leaf tensor.*version"):
        square.backward()


# --------------------------------------------------------------------------- frontend coverage

def test_frame_functions_that_pass_bare_arrays_on_are_recorded():
    rng = np.random.default_rng(4)
    a = frame.tensor(rng.standard_normal(3), requires_grad=True)
    b = frame.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    m = frame.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    bias = frame.tensor(rng.standard_normal(3), requires_grad=True)
    w = frame.tensor(rng.standard_normal(20))

    def loss():
        # concat(axis=None) reshapes temporaries; take(axis=None) flattens one;
        # split with overlapping indices slices the same array twice; layer_norm
        # with a bias only makes its own weight
        flat = frame.concat([a * 2.0, b * 1.0], axis=None)
        picked = frame.take(b * 1.0, [3, 0, 3])
        pieces = frame.split(a * 1.0, [2, 1])
        normed = F.layer_norm(m * 1.0, (3,), b=bias * 1.0)
        parts = [flat, picked, *pieces, normed.reshape(-1)]
        return (frame.concat(parts) * w).sum()

    loss().backward()
    params = [a, b, m, bias]
    assert_grads(params, central_differences(loss, params))


def test_multi_output_ops_route_each_output_gradient():
    x = frame.tensor(np.arange(6.0), requires_grad=True)
    p, q = frame.split(x, 2)
    (p * 1.0 + q * 10.0).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 10.0, 10.0, 10.0]


def test_a_tracked_tensors_own_array_counts_as_the_tensor():
    x = frame.tensor([1.0, 2.0], requires_grad=True)
    y = frame.mul(x.numpy(), 3.0)  # documented: the same ndarray object is x
    assert y.requires_grad


def test_copies_of_parameters_keep_requiring_grad():
    model = mlp((3, 2))
    twin = copy.deepcopy(model)
    revived = pickle.loads(pickle.dumps(model))
    x = frame.tensor(np.ones((1, 3), np.float32))
    for m in (twin, revived):
        m(x).sum().backward()
        assert all(p.grad is not None for p in m.parameters())
    assert all(p.grad is None for p in model.parameters())
    h = frame.tensor([1.0], requires_grad=True) * 2.0
    assert not copy.deepcopy(h).requires_grad  # a recorded result copies as a plain tensor


# --------------------------------------------------------------------------- memory and reuse

def test_records_are_freed_with_the_tensors():
    tracked_before = len(_core.tracked)
    x = frame.tensor(np.ones(4), requires_grad=True)
    h = frame.tanh(x * 2.0)
    loss = (h * h).sum()
    h_array = weakref.ref(h.numpy())
    loss.backward()
    assert len(_core.tracked) == tracked_before + 3  # x, h, loss (temporaries are gone)
    del h
    assert h_array() is not None  # the record of 'loss' keeps the value it needs
    del loss
    assert h_array() is None  # ... and goes with it: no cycles, no gc needed
    assert len(_core.tracked) == tracked_before + 1


def test_held_tensors_are_bounded():
    x = frame.tensor([1.0], requires_grad=True)
    for _ in range(200):
        frame.tensor(x * 1.0)  # conversions whose array no op consumes
    assert len(_core._dispatch.held) <= _core._HELD_LIMIT


def test_backward_graph_is_reused_for_records_of_the_same_structure(monkeypatch):
    calls = []
    real = eager_autograd.build_backward_graph

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(eager_autograd, "build_backward_graph", counting)
    monkeypatch.setattr(eager_autograd, "_BACKWARD_CACHE", {})
    model = mlp((5, 4, 3))
    x = frame.tensor(np.random.default_rng(5).standard_normal((2, 5)).astype(np.float32))
    labels = frame.tensor([0, 2])
    for step in range(3):
        F.cross_entropy(model(x), labels).backward()
    assert len(calls) == 1
    F.cross_entropy(model(x * 2.0), labels).backward()  # x is not tracked: same structure
    assert len(calls) == 1
    F.cross_entropy(frame.tanh(model(x)), labels).backward()  # one more node
    assert len(calls) == 2


def test_one_value_that_is_two_gradients_gives_two_arrays():
    """d(a+b)/da and d(a+b)/db are one value of the backward graph: each leaf
    still gets its own array (an in-place update of one grad leaves the other)."""
    a = frame.tensor(np.ones(3, np.float32), requires_grad=True)
    b = frame.tensor(np.ones(3, np.float32), requires_grad=True)
    (a + b).sum().backward()
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    a.grad += 1
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3, np.float32))
    ga, gb = frame.grad(lambda p, q: (p + q).sum(), argnums=(0, 1))(
        frame.tensor(np.ones(3, np.float32)), frame.tensor(np.ones(3, np.float32)))
    assert not np.shares_memory(ga.numpy(), gb.numpy())


def test_a_shared_gradient_value_stays_differentiable_for_each_leaf():
    from frame.autograd.eager import gradients
    x = frame.tensor(np.array([2.0]), requires_grad=True)
    y = frame.tensor(np.array([3.0]), requires_grad=True)
    s = x + y
    # d/dx = d/dy = 2 (x + y): the add hands one incoming gradient to both operands
    gx, gy = gradients((s * s).sum(), [x, y], create_graph=True)
    assert gx is not gy and not np.shares_memory(gx.numpy(), gy.numpy())
    np.testing.assert_allclose(gx.numpy(), [10.0])
    np.testing.assert_allclose(gy.numpy(), [10.0])
    for g in (gx, gy):  # each is recorded: second derivatives through it
        hx, hy = gradients(g.sum(), [x, y])
        np.testing.assert_allclose(hx.numpy(), [2.0])
        np.testing.assert_allclose(hy.numpy(), [2.0])
