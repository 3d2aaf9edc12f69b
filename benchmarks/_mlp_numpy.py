"""The MLP 784-256-128-10 training step written by hand in NumPy (the baseline
of the training benchmarks), its synthetic data, and the same step written
with frame (``frame_train_step``) and with PyTorch (``torch_train_step``) for
the benchmarks to compile.

Import it after the benchmark has set its thread environment variables:
importing NumPy fixes the BLAS thread pool.
"""
from __future__ import annotations

import numpy as np

SIZES = (784, 256, 128, 10)
BATCH = 128
LR = 0.01


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH).astype(np.int64)
    return x, y


def numpy_step(x: np.ndarray, y: np.ndarray, params: list[np.ndarray]):
    """A closure running one SGD step by hand on copies of ``params`` =
    [W1, b1, W2, b2, W3, b3] (PyTorch layout); it returns the loss."""
    ws = [p.copy() for p in params]
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]
    rows = np.arange(BATCH)

    def step():
        W1, b1, W2, b2, W3, b3 = ws
        z1 = x @ W1.T + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ W2.T + b2
        h2 = np.maximum(z2, 0)
        logits = h2 @ W3.T + b3
        m = logits.max(axis=1, keepdims=True)
        e = np.exp(logits - m)
        s = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(s[:, 0]) + m[:, 0] - logits[rows, y])
        g3 = (e / s - onehot) / BATCH
        gW3, gb3 = g3.T @ h2, g3.sum(0)
        g2 = (g3 @ W3) * (z2 > 0)
        gW2, gb2 = g2.T @ h1, g2.sum(0)
        g1 = (g2 @ W2) * (z1 > 0)
        gW1, gb1 = g1.T @ x, g1.sum(0)
        for w, g in zip(ws, (gW1, gb1, gW2, gb2, gW3, gb3)):
            w -= LR * g
        return loss
    return step


def frame_model(seed: int = 0):
    """The MLP as a frame module, parameters drawn from ``frame.manual_seed(seed)``."""
    import frame
    import frame.nn as nn
    frame.manual_seed(seed)
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def frame_train_step(lr: float = LR, seed: int = 0):
    """``(model, train_step)``: a plain (not jitted) SGD step ``train_step(x, y)
    -> loss`` on its own model (same initial parameters for the same ``seed``)."""
    import frame
    import frame.nn.functional as F
    model = frame_model(seed)
    opt = frame.optim.SGD(model.parameters(), lr=lr)

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, train_step


def torch_train_step(params: list[np.ndarray], lr: float = LR):
    """The same plain SGD step in PyTorch, its model starting from ``params``
    (frame's initial parameters, PyTorch's layout)."""
    import torch
    import torch.nn.functional as TF
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=lr)

    def train_step(x, y):
        opt.zero_grad()
        loss = TF.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return train_step
