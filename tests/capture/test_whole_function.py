"""Whole functions captured into one graph: an MLP forward through user-written
module-like classes, a loop-unrolled RNN cell, a NumPy-written GELU, jitted
bound methods and callable objects; ``FRAME_EAGER=1`` and ``eager=True`` run
the original function."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import array, assert_captured, assert_same_as_eager, graph_count, tensor


class Linear:
    def __init__(self, n_in, n_out, seed):
        self.weight = tensor((n_in, n_out), seed=seed)
        self.bias = tensor((n_out,), seed=seed + 100)

    def __call__(self, x):
        return x @ self.weight + self.bias


class ReLU:
    def __call__(self, x):
        return frame.relu(x)


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class MLP:
    def __init__(self):
        self.body = Sequential(Linear(8, 16, 0), ReLU(), Linear(16, 16, 1), ReLU())
        self.head = Linear(16, 4, 2)

    def forward(self, x):
        return frame.log_softmax(self.head(self.body(x)), axis=-1)

    def __call__(self, x):
        return self.forward(x)


class RNNCell:
    def __init__(self, n_in, n_hidden):
        self.w_x = tensor((n_in, n_hidden), seed=3)
        self.w_h = tensor((n_hidden, n_hidden), seed=4) * 0.1
        self.b = tensor((n_hidden,), seed=5)

    def step(self, x, h):
        return frame.tanh(x @ self.w_x + h @ self.w_h + self.b)

    def run(self, xs, h):
        outputs = []
        for t in range(xs.shape[0]):
            h = self.step(xs[t], h)
            outputs.append(h)
        return frame.stack(outputs), h


def numpy_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * np.power(x, 3))))


def test_mlp_forward_is_one_graph():
    model = MLP()
    fn = assert_captured(lambda m, x: m(x), model, tensor((5, 8)))
    assert graph_count(fn) == 1
    assert_same_as_eager(lambda m, x: m(x), model, tensor((5, 8)))


def test_mlp_graph_has_every_parameter_as_input():
    model = MLP()
    fn = assert_captured(lambda m, x: m(x), model, tensor((5, 8)))
    graph = fn._frame_cache.entries[0].graph
    assert len(graph.inputs) == 1 + 2 * 3
    ops = [n.op for n in graph.nodes]
    assert ops.count("matmul") == 3


def test_mlp_with_new_weights_reuses_the_entry(compile_counter):
    f = frame.jit(lambda m, x: m(x), backend="cpu")
    f(MLP(), tensor((5, 8)))
    other = MLP()
    other.head.weight = tensor((16, 4), seed=42)
    out = f(other, tensor((5, 8)))
    assert compile_counter.translations == 1
    np.testing.assert_allclose(out.numpy(), other(tensor((5, 8))).numpy(), rtol=1e-5, atol=1e-6)


def test_rnn_cell_loop_unrolled_into_one_graph():
    cell = RNNCell(3, 4)
    fn = assert_captured(lambda c, xs, h: c.run(xs, h), cell, tensor((6, 2, 3)), tensor((2, 4), seed=9))
    assert graph_count(fn) == 1
    ops = [n.op for n in fn._frame_cache.entries[0].graph.nodes]
    assert ops.count("tanh") == 6
    assert_same_as_eager(lambda c, xs, h: c.run(xs, h), cell, tensor((6, 2, 3)), tensor((2, 4), seed=9))


def test_rnn_over_tensor_rows():
    cell = RNNCell(3, 4)

    def f(xs, h):
        for x in xs:
            h = cell.step(x, h)
        return h
    assert_captured(f, tensor((5, 2, 3)), tensor((2, 4), seed=9))
    assert_same_as_eager(f, tensor((5, 2, 3)), tensor((2, 4), seed=9))


def test_numpy_gelu_is_one_graph():
    fn = assert_captured(numpy_gelu, array((16, 16)))
    ops = {n.op for n in fn._frame_cache.entries[0].graph.nodes}
    assert "tanh" in ops and "pow" in ops
    assert_same_as_eager(numpy_gelu, array((16, 16)))


def test_function_without_tensor_work_has_no_graph():
    assert_captured(lambda n, s: (n * 2, s.upper()), 3, "a", graphs=0)


def test_jit_on_a_bound_method():
    model = MLP()
    fn = frame.jit(model.forward, backend="cpu")
    x = tensor((5, 8))
    np.testing.assert_allclose(fn(x).numpy(), model.forward(x).numpy(), rtol=1e-5, atol=1e-6)
    entry = fn.__func__._frame_cache.entries[0]
    assert not entry.native and entry.graph is not None


def test_jit_on_a_callable_object():
    model = MLP()
    fn = frame.jit(model, backend="cpu")
    x = tensor((5, 8))
    np.testing.assert_allclose(fn(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert not fn.__func__._frame_cache.entries[0].native


def test_jit_as_decorator_with_options():
    @frame.jit(backend="cpu", full_graph=True)
    def f(x, w):
        return frame.relu(x @ w).sum()
    out = f(tensor((2, 3)), tensor((3, 4), seed=1))
    assert out.shape == ()


def test_jit_rejects_non_callables():
    with pytest.raises(TypeError):
        frame.jit(42)


def test_eager_option_runs_the_original(compile_counter):
    f = frame.jit(lambda x: (x * 2).relu(), backend="cpu", eager=True)
    x = tensor()
    np.testing.assert_allclose(f(x).numpy(), (x * 2).relu().numpy())
    assert compile_counter.translations == 0
    assert f._frame_cache.entries == []


def test_frame_eager_environment_runs_the_original(compile_counter, monkeypatch):
    monkeypatch.setenv("FRAME_EAGER", "1")
    calls = []

    def f(x):
        calls.append(1)  # a side effect: runs each call when eager
        return x + 1
    g = frame.jit(f, backend="cpu")
    g(tensor())
    g(tensor())
    assert calls == [1, 1]
    assert compile_counter.translations == 0


def test_frame_eager_zero_means_compiled(compile_counter, monkeypatch):
    monkeypatch.setenv("FRAME_EAGER", "0")
    frame.jit(lambda x: x + 1, backend="cpu")(tensor())
    assert compile_counter.translations == 1


class _Net(frame.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = frame.nn.Linear(8, 16)
        self.act = frame.nn.ReLU()
        self.fc2 = frame.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def _frozen(module):
    """Parameters that do not require grad: eager records nothing for autograd,
    so the forward is plain inference (capturing autograd is a later step)."""
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def test_nn_module_mlp_is_one_graph():
    fn = assert_captured(lambda m, x: m(x), _frozen(_Net()), tensor((5, 8)))
    assert graph_count(fn) == 1


def test_nn_module_forward_same_as_eager():
    assert_same_as_eager(lambda m, x: m(x), _frozen(_Net()), tensor((5, 8)))


def test_nn_module_with_trainable_parameters_same_as_eager():
    frame.manual_seed(0)
    # captured, or run natively while eager records autograd: either way, what eager returns
    assert_same_as_eager(lambda m, x: m(x), _Net(), tensor((5, 8)), captured=None)


def test_jit_on_nn_module_uses_its_forward(compile_counter):
    model = _frozen(_Net())
    fn = frame.jit(model, backend="cpu")
    x = tensor((5, 8))
    np.testing.assert_allclose(fn(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert fn.__func__.__wrapped__ is _Net.forward
    assert graph_count(fn.__func__) == 1


def test_nn_sequential_is_one_graph():
    seq = _frozen(frame.nn.Sequential(frame.nn.Linear(4, 8), frame.nn.ReLU(), frame.nn.Linear(8, 2)))
    fn = assert_captured(lambda m, x: m(x), seq, tensor((3, 4)))
    assert graph_count(fn) == 1
    assert_same_as_eager(lambda m, x: m(x), seq, tensor((3, 4)))


def test_jitted_helper_called_from_jitted_function_is_inlined():
    helper = frame.jit(lambda x: x * 2 + 1, backend="cpu")
    fn = assert_captured(lambda x: helper(x).relu(), tensor())
    assert graph_count(fn) == 1
    assert helper._frame_cache.entries == []  # inlined, never called on its own
    assert_same_as_eager(lambda x: helper(x).relu(), tensor())


def test_concurrent_calls_from_threads(compile_counter):
    import threading
    f = frame.jit(lambda x, y: (x @ y).relu() + 1, backend="cpu")
    inputs = [(tensor((3, 4), seed=i), tensor((4, 2), seed=i + 50)) for i in range(8)]
    results: dict[int, object] = {}

    def work(i):
        for _ in range(20):
            results[i] = f(*inputs[i])
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, (x, y) in enumerate(inputs):
        np.testing.assert_allclose(results[i].numpy(), ((x @ y).relu() + 1).numpy(), rtol=1e-5)
    assert len(f._frame_cache.entries) == 1   # one translation, however the threads raced
    assert compile_counter.translations == 1
    assert not f._frame_cache.entries[0].native
