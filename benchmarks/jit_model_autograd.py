"""Compiled autograd across the jit boundary: one training step (forward,
backward, SGD update) of a model, three ways, interleaved in one process:

* ``eager``: ``loss = F.cross_entropy(model(x), y); loss.backward(); opt.step()``
  op by op;
* ``jit(model)``: the same step with ``model`` replaced by ``frame.jit(model)``:
  the forward is one compiled graph whose result carries one autograd record,
  ``loss.backward()`` (eager, outside the jitted function) runs the compiled
  backward of that graph, the loss and the optimizer step stay eager;
* ``whole-step @jit``: ``frame.jit(train_step)``: forward, backward and SGD
  update in one graph.

Models: the MLP 784-256-128-10 (ReLU) of ``training_step.py``, batch 128, and a
small CNN (conv 1->8 3x3, ReLU, max-pool 2, conv 8->16 3x3, ReLU, max-pool 2,
linear 784->10) on batch 32 of 1x28x28, float32, synthetic data.  frame's
default settings (the jit's default backend, tiered compilation: the OpenVINO
tier is waited for before timing).  Every candidate starts from the same
parameters; the first-step losses must agree.

    python benchmarks/jit_model_autograd.py [--rounds 15] [--number 20] [--model mlp|cnn|both]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import frame  # noqa: E402
import frame.nn as nn  # noqa: E402
import frame.nn.functional as F  # noqa: E402
from _harness import interleaved  # noqa: E402
from _mlp_numpy import frame_model, make_data  # noqa: E402

LR = 0.01


def cnn_model(seed: int = 0):
    frame.manual_seed(seed)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
            self.fc = nn.Linear(16 * 7 * 7, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc(x.reshape(x.shape[0], -1))
    return CNN()


def cnn_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((32, 1, 28, 28)).astype(np.float32),
            rng.integers(0, 10, 32).astype(np.int64))


def candidates(make_model, x, y) -> dict:
    xt, yt = frame.tensor(x), frame.tensor(y)
    out = {}
    for name in ("eager", "jit(model)", "whole-step @jit"):
        model = make_model()
        opt = frame.optim.SGD(model.parameters(), lr=LR)
        forward = frame.jit(model) if name == "jit(model)" else model

        def train_step(x, y, forward=forward, opt=opt):
            opt.zero_grad()
            loss = F.cross_entropy(forward(x), y)
            loss.backward()
            opt.step()
            return loss
        step = frame.jit(train_step) if name == "whole-step @jit" else train_step
        out[name] = (lambda step=step: step(xt, yt))
    return out


def run(label: str, make_model, data, args) -> None:
    x, y = data
    cands = candidates(make_model, x, y)
    first = {}
    for name, fn in cands.items():
        t0 = time.perf_counter()
        first[name] = (float(fn().item()), time.perf_counter() - t0)
    from frame.runtime import tiered
    for fn in cands.values():
        for _ in range(3):
            fn()
    if not tiered.scheduler.idle(timeout=600):
        raise RuntimeError("the OpenVINO tier did not finish compiling within 600 s")
    frame.reset_stats()
    times = interleaved(cands, number=args.number, rounds=args.rounds, warmup=3)
    s = frame.stats()
    print(f"{label}: median ms/step over {args.rounds} interleaved rounds of {args.number} steps")
    base = times["eager"]
    print(f"  {'candidate':<18} {'ms/step':>8} {'vs eager':>9} {'1st step ms':>12} {'1st loss':>10}")
    for name, sec in times.items():
        print(f"  {name:<18} {sec * 1e3:8.3f} {base / sec:8.2f}x {first[name][1] * 1e3:12.1f} "
              f"{first[name][0]:10.5f}")
    print(f"  during the timed rounds: translations {s.translations}, compiles {s.compiles}, "
          f"compiled backward runs {s.extra.get('compiled_backward_runs', 0)}, graph breaks "
          f"{sum(s.graph_breaks.values())}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--number", type=int, default=20, help="steps per candidate per round")
    ap.add_argument("--model", choices=("mlp", "cnn", "both"), default="both")
    args = ap.parse_args(argv)
    print(f"frame backend {frame.config.backend or 'default'}, tiered {frame.config.tiered}")
    if args.model in ("mlp", "both"):
        run("MLP 784-256-128-10, batch 128", frame_model, make_data(), args)
    if args.model in ("cnn", "both"):
        run("CNN conv8-conv16-fc10, batch 32x1x28x28", cnn_model, cnn_data(), args)


if __name__ == "__main__":
    main()
