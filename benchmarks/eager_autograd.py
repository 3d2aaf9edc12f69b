"""Eager autograd: one MLP training step (784 -> 256 -> 128 -> 10, ReLU, batch
128, float32, softmax cross-entropy, plain SGD) in frame eager mode --
forward, ``loss.backward()``, ``opt.step()`` -- against the same step written
by hand in NumPy.  Synthetic data; the two run interleaved.

    python benchmarks/eager_autograd.py [--threads N]

``--threads`` sets OpenBLAS's thread count before NumPy loads (default: leave
it alone).  Both candidates share the BLAS, so the difference is frame's
overhead: recording, the backward graph (built once, then reused from the
cache), running the gradient nodes op by op, and frame's copying transposes.
"""
from __future__ import annotations

import argparse
import os
import sys


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="OpenBLAS threads")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--number", type=int, default=20)
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and ARGS.threads:
    os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)

import numpy as np  # noqa: E402

import frame  # noqa: E402
import frame.nn as nn  # noqa: E402
import frame.nn.functional as F  # noqa: E402
from _harness import interleaved, show  # noqa: E402

SIZES = (784, 256, 128, 10)
BATCH = 128
LR = 0.01


def make_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return x, y


def frame_step_fn(x: np.ndarray, y: np.ndarray):
    frame.manual_seed(0)
    layers = []
    for i in range(len(SIZES) - 1):
        layers.append(nn.Linear(SIZES[i], SIZES[i + 1]))
        if i < len(SIZES) - 2:
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    opt = frame.optim.SGD(model.parameters(), lr=LR)
    xt, yt = frame.tensor(x), frame.tensor(y)

    def step():
        loss = F.cross_entropy(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return step, model


def numpy_step_fn(x: np.ndarray, y: np.ndarray, params: list[np.ndarray]):
    """The same step by hand; ``params`` = [W1, b1, W2, b2, W3, b3] (PyTorch layout)."""
    ws = [p.copy() for p in params]
    onehot = np.eye(SIZES[-1], dtype=np.float32)[y]

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
        loss = np.mean(np.log(s[:, 0]) + m[:, 0] - logits[np.arange(BATCH), y])
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


def main() -> None:
    x, y = make_data()
    frame_step, model = frame_step_fn(x, y)
    params = [p.numpy().copy() for p in model.parameters()]
    numpy_step = numpy_step_fn(x, y, params)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    res = interleaved({"numpy (hand-written)": numpy_step, "frame eager": frame_step},
                      number=ARGS.number, rounds=ARGS.rounds, warmup=5)
    print(f"MLP {'-'.join(map(str, SIZES))} training step, batch {BATCH}, float32, SGD "
          f"(OpenBLAS threads: {threads}); median of interleaved rounds:")
    for name, sec in res.items():
        print(f"  {name:<24} {sec * 1e3:7.3f} ms/step")
    print(f"  frame / numpy: x{res['frame eager'] / res['numpy (hand-written)']:.2f}")
    show({k: v for k, v in res.items()}, "numpy (hand-written)")


if __name__ == "__main__":
    sys.exit(main())
