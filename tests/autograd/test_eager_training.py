"""Training with eager autograd: frame.nn + loss.backward() + frame.optim, step
for step against the same training written by hand in NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F


def numpy_mlp_sgd(params, x, y, lr, steps):
    """MLP (Linear-ReLU-Linear-ReLU-Linear) + mean softmax cross-entropy + SGD,
    forward and backward by hand, in float32 like the frame model."""
    W1, b1, W2, b2, W3, b3 = (p.copy() for p in params)
    n = x.shape[0]
    onehot = np.eye(W3.shape[0], dtype=np.float32)[y]
    losses = []
    for _ in range(steps):
        z1 = x @ W1.T + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ W2.T + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ W3.T + b3
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        s = e.sum(axis=1, keepdims=True)
        losses.append(float(np.mean(np.log(s[:, 0]) + m[:, 0] - logits[np.arange(n), y])))
        g3 = (e / s - onehot) / n
        g2 = (g3 @ W3) * (z2 > 0)
        g1 = (g2 @ W2) * (z1 > 0)
        grads = (g1.T @ x, g1.sum(0), g2.T @ h1, g2.sum(0), g3.T @ h2, g3.sum(0))
        W1, b1, W2, b2, W3, b3 = (w - np.float32(lr) * g for w, g in
                                  zip((W1, b1, W2, b2, W3, b3), grads))
    return [W1, b1, W2, b2, W3, b3], losses


def test_mlp_sgd_training_matches_a_hand_written_numpy_implementation():
    frame.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 12), nn.ReLU(),
                          nn.Linear(12, 5))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 20)).astype(np.float32)
    y = np.argmax(x @ rng.standard_normal((20, 5)), axis=1)  # learnable labels
    start = [p.numpy().copy() for p in model.parameters()]
    opt = frame.optim.SGD(model.parameters(), lr=0.5)
    xt, yt = frame.tensor(x), frame.tensor(y)
    losses = []
    for _ in range(20):
        loss = F.cross_entropy(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    expected, expected_losses = numpy_mlp_sgd(start, x, y, 0.5, 20)
    assert losses[-1] < 0.85 * losses[0]
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5, atol=1e-6)
    for p, e in zip(model.parameters(), expected):
        assert p.is_leaf and p.requires_grad and p.dtype is frame.float32
        np.testing.assert_allclose(p.numpy(), e, rtol=1e-5, atol=1e-5)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        h = F.max_pool2d(frame.relu(self.conv(x)), 2)
        return self.fc(h.reshape(h.shape[0], -1))


def test_cnn_training_step_applies_minus_lr_times_grad_and_reduces_the_loss():
    frame.manual_seed(1)
    model = CNN()
    rng = np.random.default_rng(1)
    x = frame.tensor(rng.standard_normal((6, 1, 8, 8)).astype(np.float32))
    y = frame.tensor(rng.integers(0, 3, 6))
    opt = frame.optim.SGD(model.parameters(), lr=0.1)
    before = [p.numpy().copy() for p in model.parameters()]
    loss0 = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss0.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    assert all(g.shape == b.shape and np.abs(g).sum() > 0 for g, b in zip(grads, before))
    opt.step()
    for p, b, g in zip(model.parameters(), before, grads):
        np.testing.assert_allclose(p.numpy(), b - np.float32(0.1) * g, rtol=1e-6, atol=1e-7)
    for _ in range(10):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert F.cross_entropy(model(x), y).item() < 0.7 * loss0.item()


@pytest.mark.parametrize("make_opt", [
    lambda ps: frame.optim.SGD(ps, lr=0.05, momentum=0.9),
    lambda ps: frame.optim.Adam(ps, lr=0.01),
], ids=["sgd-momentum", "adam"])
def test_optimizers_train_without_recording_their_updates(make_opt):
    frame.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    rng = np.random.default_rng(2)
    x = frame.tensor(rng.standard_normal((16, 4)).astype(np.float32))
    target = x @ frame.tensor(rng.standard_normal((4, 1)).astype(np.float32))
    opt = make_opt(list(model.parameters()))
    first = None
    for _ in range(30):
        loss = F.mse_loss(model(x), target)
        first = loss.item() if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert all(p.is_leaf and p.requires_grad for p in model.parameters())
    assert F.mse_loss(model(x), target).item() < 0.5 * first
