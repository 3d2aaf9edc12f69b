"""Coverage corpus, autograd across the jit boundary (issue 15 item 1): model
forwards, losses and functional code run in grad mode with parameters or inputs
that require grad, written the way other frameworks' tests write them
(TorchDynamo's test_modules / test_functions, Paddle SOT's test_*.py, PyTorch's
tutorials), training steps (backward and optimizer inside) among them.  Each is
one graph with no break (``graphs=1``; a step that prints its loss has its two
inherent breaks), its results carry
the entry's autograd record, and a backward outside the jitted function gives
eager's gradients: ``test_coverage_autograd`` checks the results
(``corpus.Case.check``), then runs a backward from the results of a native and
a jitted call (each on its own, identically made arguments) and compares the
``.grad`` of every tensor argument and module parameter."""
from __future__ import annotations

import math

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F

from .corpus import BACKEND, Corpus
from .helpers import _TOLERANCE, array, resolved_backend

case = Corpus()


def param(shape, seed):
    return frame.tensor(array(shape, seed=seed) * 0.3, requires_grad=True)


def data(shape, seed=0):
    return frame.tensor(array(shape, seed=seed))


def labels(n, classes, seed=0):
    return frame.tensor(np.random.default_rng(seed).integers(0, classes, n).astype(np.int64))


def built(make):
    """A model made from frame's seeded generator: the same weights every time."""
    def make_args():
        frame.manual_seed(0)
        return make()
    return make_args


# -- models --------------------------------------------------------------------------------

class TwoLayerNet(nn.Module):
    def __init__(self, d_in=6, hidden=10, d_out=3):
        super().__init__()
        self.linear1 = nn.Linear(d_in, hidden)
        self.linear2 = nn.Linear(hidden, d_out)

    def forward(self, x):
        h_relu = F.relu(self.linear1(x))
        return self.linear2(h_relu)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, 3, padding=1)
        self.conv2 = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6 * 2 * 2, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.reshape(x.shape[0], -1)
        return self.fc(x)


class ResidualBlock(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(frame.gelu(self.fc1(self.norm(x))))


class SelfAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = 1.0 / math.sqrt(dim)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        att = frame.softmax(q @ k.transpose(0, 2, 1) * self.scale, axis=-1)
        return att @ v


class Experts(nn.Module):
    def __init__(self, dim=6, n=3):
        super().__init__()
        self.gate = nn.Linear(dim, n)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n)])

    def forward(self, x):
        gates = frame.softmax(self.gate(x), axis=-1)
        out = 0.0
        for i, expert in enumerate(self.experts):
            out = out + gates[:, i:i + 1] * expert(x)
        return out


class Scaled(nn.Module):
    """A module with a tensor attribute that does not require grad (a buffer)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.scale = frame.tensor(np.linspace(0.5, 1.5, 5).astype(np.float32))

    def forward(self, x):
        return self.fc(x) * self.scale


class TinyEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 8)
        self.blocks = nn.Sequential(ResidualBlock(8), ResidualBlock(8))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)).mean(axis=1))


# -- module forwards under grad mode ---------------------------------------------------------

@case(built(lambda: (TwoLayerNet(), data((4, 6)))), graphs=1)
def two_layer_net_forward(model, x):
    return model(x)


@case(built(lambda: (nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2)), data((3, 6)))),
      graphs=1)
def sequential_forward(model, x):
    return model(x)


@case(built(lambda: (ConvNet(), data((2, 1, 8, 8)))), graphs=1)
def convnet_forward(model, x):
    return model(x)


@case(built(lambda: (ResidualBlock(), data((2, 5, 8)))), graphs=1)
def residual_block_forward(block, x):
    return block(x)


@case(built(lambda: (SelfAttention(), data((2, 4, 8)))), graphs=1)
def self_attention_forward(att, x):
    return att(x)


@case(built(lambda: (Experts(), data((5, 6)))), graphs=1)
def mixture_of_experts_forward(moe, x):
    return moe(x)


@case(built(lambda: (Scaled(), data((3, 5)))), graphs=1)
def module_with_buffer_forward(model, x):
    return model(x)


@case(built(lambda: (TinyEncoder(), data((2, 3, 4)))), graphs=1)
def nested_modules_forward(model, x):
    return model(x)


@case(built(lambda: (TwoLayerNet(), data((4, 6)))), graphs=1)
def predict_probabilities(model, x):
    logits = model(x)
    return frame.softmax(logits, axis=-1)


@case(built(lambda: (TwoLayerNet(), data((4, 6)))), graphs=1)
def logits_and_log_probs(model, x):
    logits = model(x)
    return logits, frame.log_softmax(logits, axis=-1)


@case(built(lambda: (TwoLayerNet(), data((4, 6)))), graphs=1)
def outputs_in_a_dict(model, x):
    logits = model(x)
    return {"logits": logits, "probs": frame.softmax(logits, axis=-1), "n": x.shape[0]}


@case(built(lambda: (TwoLayerNet(), data((4, 6)))), graphs=1)
def output_and_detached_copy(model, x):
    out = model(x)
    return out, out.detach() * 2.0


@case(built(lambda: (TwoLayerNet(), TwoLayerNet(6, 10, 3), data((4, 6)))), graphs=1)
def two_towers(a, b, x):
    return a(x), b(x).sum(axis=-1)


@case(built(lambda: (TwoLayerNet(6, 10, 6), data((4, 6)))), graphs=1)
def model_applied_twice(model, x):
    return model(model(x))


# -- losses ---------------------------------------------------------------------------------

@case(built(lambda: (TwoLayerNet(), data((5, 6)), labels(5, 3))), graphs=1)
def cross_entropy_loss(model, x, y):
    return F.cross_entropy(model(x), y)


@case(built(lambda: (TwoLayerNet(6, 10, 1), data((5, 6)), data((5, 1), 1))), graphs=1)
def mse_regression_loss(model, x, target):
    return F.mse_loss(model(x), target)


@case(built(lambda: (TwoLayerNet(), data((5, 6)), labels(5, 3))), graphs=1)
def loss_with_l2_penalty(model, x, y):
    loss = F.cross_entropy(model(x), y)
    penalty = 0.0
    for p in model.parameters():
        penalty = penalty + (p * p).sum()
    return loss + 1e-3 * penalty


@case(built(lambda: (ConvNet(), data((2, 1, 8, 8)), labels(2, 4))), graphs=1)
def convnet_loss_and_accuracy_inputs(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits, y), logits.argmax(axis=1)


@case(lambda: (param((4, 1), 1), param((1,), 2), data((6, 4)), data((6, 1), 3)), graphs=1)
def huber_loss(w, b, x, y):
    d = x @ w + b - y
    small = frame.abs(d) < 1.0
    return frame.where(small, 0.5 * d * d, frame.abs(d) - 0.5).mean()


@case(lambda: (param((4,), 1), data((6, 4)), frame.tensor(np.array([1, -1, 1, 1, -1, -1],
                                                                      dtype=np.float32))),
      graphs=1)
def hinge_loss(w, x, y):
    margins = 1.0 - y * (x @ w)
    return frame.maximum(margins, 0.0).mean()


@case(lambda: (param((4, 3), 1), param((3,), 2), data((6, 4)), labels(6, 3)), graphs=1)
def softmax_regression_nll(w, b, x, y):
    logp = frame.log_softmax(x @ w + b, axis=1)
    onehot = (y.reshape(-1, 1) == frame.arange(3).reshape(1, -1)).astype(frame.float32)
    return -(logp * onehot).sum() / x.shape[0]


# -- functional code with requires_grad inputs ----------------------------------------------

@case(lambda: (param((4, 3), 1), param((3,), 2), data((5, 4))), graphs=1)
def linear_regression_prediction(w, b, x):
    return x @ w + b


@case(lambda: (param((4,), 1), param((), 2), data((5, 4))), graphs=1)
def logistic_regression(w, b, x):
    return frame.sigmoid(x @ w + b)


@case(lambda: (param((4, 8), 1), param((8, 2), 2), data((5, 4))), graphs=1)
def functional_gelu_mlp(w1, w2, x):
    return frame.gelu(x @ w1) @ w2


@case(lambda: (param((3, 5), 1), param((5, 5), 2), data((4, 2, 3))), graphs=1)
def unrolled_tanh_rnn(wx, wh, xs):
    h = frame.zeros((2, 5))
    outputs = []
    for t in range(xs.shape[0]):
        h = frame.tanh(xs[t] @ wx + h @ wh)
        outputs.append(h)
    return frame.stack(outputs, axis=0), h


@case(lambda: (param((4,), 1), data((7,))), graphs=1)
def polynomial_in_x(coeffs, x):
    y = 0.0
    for i in range(coeffs.shape[0]):
        y = y + coeffs[i] * x ** i
    return y


@case(lambda: (param((3, 4), 1), data((5, 3)), data((6, 4), 2)), graphs=1)
def bilinear_scores(w, x, y):
    return x @ w @ y.T


@case(lambda: (param((5, 3), 1), data((6, 5))), graphs=1)
def standardize_then_project(w, x):
    z = (x - x.mean(axis=0)) / frame.sqrt(((x - x.mean(axis=0)) ** 2).mean(axis=0) + 1e-5)
    return z @ w


@case(lambda: (param((4, 3), 1), param((4, 3), 2), data((5, 4))), graphs=1)
def concat_features(w1, w2, x):
    return frame.concat([frame.relu(x @ w1), frame.tanh(x @ w2)], axis=1)


@case(lambda: (param((4, 6), 1), data((5, 4))), graphs=1)
def max_over_features(w, x):
    h = x @ w
    return h.max(axis=1), frame.exp(h).sum(axis=1)


@case(lambda: (frame.tensor(array((3, 4), seed=4), requires_grad=True),), graphs=1)
def input_that_requires_grad(x):
    return (x ** 2).sum(), frame.sin(x) * x


@case(lambda: (param((10, 4), 1), frame.tensor(np.array([[1, 2], [3, 9]], dtype=np.int64))),
      graphs=1)
def embedding_lookup_mean(table, idx):
    return F.embedding(idx, table).mean(axis=1)


@case(lambda: (param((4, 4), 1), data((3, 4))), graphs=1)
def no_grad_block_inside(w, x):
    with frame.no_grad():
        scale = (x * x).sum()
    return (x @ w) / scale


# -- training steps: backward and the optimizer inside, the loss returned ------------------

def with_sgd(model, *rest, momentum=0.0):
    return (model, frame.optim.SGD(list(model.parameters()), lr=0.1, momentum=momentum), *rest)


def with_adam(model, *rest):
    return (model, frame.optim.Adam(list(model.parameters()), lr=0.01), *rest)


@case(built(lambda: with_sgd(TwoLayerNet(), data((5, 6)), labels(5, 3))), graphs=1)
def sgd_train_step_returns_loss(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


@case(built(lambda: with_adam(TwoLayerNet(), data((4, 6)), labels(4, 3))), graphs=1)
def adam_train_step_returns_loss_and_logits(model, optimizer, x, y):
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    optimizer.step()
    return loss, logits


@case(built(lambda: with_sgd(TwoLayerNet(6, 10, 1), data((5, 6)), data((5, 1), 1),
                             momentum=0.9)), graphs=1)
def momentum_train_step_returns_metrics_dict(model, optimizer, x, target):
    optimizer.zero_grad()
    pred = model(x)
    loss = F.mse_loss(pred, target)
    loss.backward()
    optimizer.step()
    return {"loss": loss, "pred": pred.detach(), "mae": (pred - target).abs().mean()}


@case(built(lambda: with_sgd(TwoLayerNet(), data((5, 6)), labels(5, 3))), graphs=2,
      breaks=(".item()", "print()"))
def train_step_prints_the_loss(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print(f"loss {loss.item():.1f}")
    optimizer.step()
    return loss


@pytest.mark.parametrize("c", case.params())
def test_coverage_autograd(c):
    c.check()
    _check_backward(c)


def _tensors(value, out):
    """The tensors in a result (nested containers) or argument (modules: their parameters)."""
    if isinstance(value, frame.Tensor):
        out.append(value)
    elif isinstance(value, nn.Module):
        out.extend(value.parameters())
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors(v, out)
    return out


def _backward_grads(fn, args):
    results = [t for t in _tensors(fn(*args), []) if t.requires_grad]
    assert results, "no result requires grad"
    loss = None
    for k, t in enumerate(results):
        term = (t * t).sum() * (k + 1.0) + t.sum()
        loss = term if loss is None else loss + term
    loss.backward()
    return [None if t.grad is None else t.grad.numpy() for t in _tensors(args, [])]


def _check_backward(c):
    """The gradients of a backward from the results of a native and a jitted call."""
    native = _backward_grads(c.fn, c.args())
    jitted = frame.jit(c.fn, backend=BACKEND)
    _backward_grads(jitted, c.args())           # the first call translates
    entry = jitted._frame_cache.entries[0]
    assert not entry.native and entry.backward is not None, entry.reason
    got = _backward_grads(jitted, c.args())     # a cache hit
    for k, (a, b) in enumerate(zip(native, got)):
        assert (a is None) == (b is None), f"{c.name}: grad {k}: {a} vs {b}"
        if a is not None:
            rtol, atol = _TOLERANCE.get(resolved_backend(BACKEND), _TOLERANCE["cpu"])[a.dtype]
            np.testing.assert_allclose(b, a, rtol=rtol * 10, atol=atol * 10,
                                       err_msg=f"{c.name}: grad {k}")
