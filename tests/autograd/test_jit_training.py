"""A whole training step under frame.jit (issue 7, build item 5): eager backward vs
the jitted step, parameter for parameter after 20 steps; one graph, no break;
no translation or compile after warm-up.

Tolerance: parameters after 20 steps agree within rtol=1e-4, atol=1e-5 (float32
state; the compiled backends may reassociate sums, the cpu backend usually
matches exactly).
"""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import capture
import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.runtime.stats import record, stats

RTOL, ATOL = 1e-4, 1e-5

BACKENDS = ["cpu"] + (["openvino"] if importlib.util.find_spec("openvino") is not None else [])


@pytest.fixture(autouse=True)
def _fresh():
    capture.reset_caches()
    yield
    capture.reset_caches()


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 10)

    def forward(self, x):
        h = F.relu(self.conv(x))
        h = F.max_pool2d(h, 2)
        return self.fc(frame.reshape(h, (h.shape[0], -1)))


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def make_opt(kind, params):
    if kind == "sgd":
        return frame.optim.SGD(params, lr=0.05, momentum=0.9)
    return frame.optim.Adam(params, lr=0.01)


def twin(make_model, seed=0):
    frame.manual_seed(seed)
    a = make_model()
    b = make_model()
    for p, q in zip(a.parameters(), b.parameters()):
        q._data[...] = p._data
    return a, b


def data(shape, classes, n, seed=1):
    rng = np.random.default_rng(seed)
    x = frame.tensor(rng.standard_normal((n, *shape)).astype(np.float32))
    y = frame.tensor(rng.integers(0, classes, n))
    return x, y


MODELS = {
    "mlp": (lambda: mlp([64, 32, 16, 10]), (64,)),
    "cnn": (CNN, (1, 8, 8)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("opt_kind", ["sgd", "adam"])
@pytest.mark.parametrize("model_name", ["mlp", "cnn"])
def test_jitted_step_matches_eager_after_20_steps(model_name, opt_kind, backend):
    make_model, shape = MODELS[model_name]
    eager_model, jit_model = twin(make_model)
    eager_opt = make_opt(opt_kind, list(eager_model.parameters()))
    jit_opt = make_opt(opt_kind, list(jit_model.parameters()))
    step = frame.jit(train_step, backend=backend)
    x, y = data(shape, 10, 16)
    before = [p.numpy().copy() for p in jit_model.parameters()]
    # counts compiles: a background (tiered) compile would land at any step
    with frame.config.override(tiered=False):
        for i in range(20):
            le = train_step(eager_model, eager_opt, x, y)
            lj = step(jit_model, jit_opt, x, y)
            np.testing.assert_allclose(lj.item(), le.item(), rtol=RTOL, atol=ATOL)
            if i == 1:
                warm = (stats().translations, stats().compiles)
    assert (stats().translations, stats().compiles) == warm  # steps 3..20: cache hits only
    for p, q, b in zip(eager_model.parameters(), jit_model.parameters(), before):
        assert not np.array_equal(q.numpy(), b)  # it trained
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=RTOL, atol=ATOL)
        assert type(q) is nn.Parameter and q.requires_grad and q.is_leaf
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=RTOL, atol=ATOL)
    # the loss leaves the compiled step with its autograd record, as eager's (docs/compiler.md)
    assert lj.requires_grad and le.requires_grad and not lj.is_leaf and lj.grad_fn is not None


def test_full_size_mlp_sgd_matches_eager():
    eager_model, jit_model = twin(lambda: mlp([784, 256, 128, 10]))
    eager_opt = frame.optim.SGD(list(eager_model.parameters()), lr=0.1, momentum=0.9)
    jit_opt = frame.optim.SGD(list(jit_model.parameters()), lr=0.1, momentum=0.9)
    step = frame.jit(train_step, backend="cpu")
    x, y = data((784,), 10, 128)
    for _ in range(20):
        train_step(eager_model, eager_opt, x, y)
        step(jit_model, jit_opt, x, y)
    for p, q in zip(eager_model.parameters(), jit_model.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("opt_kind", ["sgd", "adam"])
def test_one_graph_no_break_and_cache_hits_after_warmup(opt_kind):
    model = mlp([64, 32, 10])
    opt = make_opt(opt_kind, list(model.parameters()))
    x, y = data((64,), 10, 8)
    # first step (optimizer state still None) and a later one: one graph each
    first = frame.explain(train_step)(model, opt, x, y)
    assert (first.graph_count, first.graph_break_count) == (1, 0), str(first)
    later = frame.explain(train_step)(model, opt, x, y)
    assert (later.graph_count, later.graph_break_count) == (1, 0), str(later)
    ops = later.ops_per_graph[0]
    assert "cross_entropy" in ops and "matmul" in ops

    step = frame.jit(train_step, backend="cpu")
    record.reset()
    step(model, opt, x, y)
    step(model, opt, x, y)   # optimizer state exists from here on
    assert stats().translations <= 2
    t, c = stats().translations, stats().compiles
    for _ in range(5):
        step(model, opt, x, y)
    assert (stats().translations, stats().compiles) == (t, c)
    assert stats().graph_breaks == {} and stats().fallbacks == {}


def test_adam_step_count_is_state_not_a_guard():
    model = mlp([8, 4])
    opt = frame.optim.Adam(list(model.parameters()), lr=0.01)
    x, y = data((8,), 4, 4)
    step = frame.jit(train_step, backend="cpu")
    for _ in range(6):
        step(model, opt, x, y)
    assert opt.steps == 6
    assert len(step._frame_cache.entries) == 2   # state None at step 1, tensors after


def test_adam_eager_matches_numpy_reference():
    """Adam keeps its eager numbers with the step count as a tensor."""
    w0 = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    p = nn.Parameter(frame.tensor(w0))
    opt = frame.optim.Adam([p], lr=0.1)
    m = v = np.zeros(3, np.float32)
    w = w0.copy()
    for t in range(1, 6):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        g = (2 * w).astype(np.float32)
        m = np.float32(0.9) * m + g * np.float32(0.1)
        v = np.float32(0.999) * v + (g * g) * np.float32(1 - 0.999)
        c1, c2 = np.float32(1 - 0.9 ** t), np.float32(1 - 0.999 ** t)
        w = w - (m / c1) / (np.sqrt(v / c2) + np.float32(1e-8)) * np.float32(0.1)
    np.testing.assert_allclose(p.numpy(), w, rtol=1e-6, atol=1e-7)
