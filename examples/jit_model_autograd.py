"""``frame.jit(model)`` under grad mode: inference, and training with an eager
backward (compiled autograd across the jit boundary).

    python examples/jit_model_autograd.py                 # the jit's default backend
    python examples/jit_model_autograd.py --backend cpu --steps 30

1. Inference.  ``predict = frame.jit(model)`` called without ``frame.no_grad()``:
   the parameters require grad, so the result does too -- and the forward is
   still one compiled graph.  Its backward graph is built, not compiled: a
   function only used for inference never pays for it.
2. Training.  The forward runs through ``predict``; the loss, ``loss.backward()``
   and the optimizer step are ordinary eager code.  The backward runs the
   compiled backward of the forward graph (one Executable) and accumulates into
   the parameters' ``.grad`` exactly as eager does: a twin model trained eagerly
   from the same parameters ends with the same parameters.
"""
from __future__ import annotations

import argparse
import copy
import sys

import numpy as np

import frame
import frame.nn as nn
import frame.nn.functional as F


def make_data(n: int = 256, seed: int = 0):
    """Two interleaved spirals in 2-D, labels 0 / 1 (synthetic)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.5, 3.0, n)
    label = rng.integers(0, 2, n)
    angle = t * 2.5 + np.pi * label
    x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1) + rng.normal(0, 0.1, (n, 2))
    return frame.tensor(x.astype(np.float32)), frame.tensor(label.astype(np.int64))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default=None, help="cpu or openvino (default: the jit's default)")
    ap.add_argument("--steps", type=int, default=60)
    args = ap.parse_args(argv)

    frame.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 2))
    twin = copy.deepcopy(model)           # trained eagerly, for comparison
    predict = frame.jit(model, backend=args.backend)
    x, y = make_data()

    # 1. inference under grad mode: one graph, the result requires grad
    probs = frame.softmax(predict(x), axis=-1)
    explained = frame.explain(predict)(x)
    print(f"inference under grad mode: graphs {explained.graph_count}, graph breaks "
          f"{explained.graph_break_count}, backward graphs {explained.backward_graph_count} "
          f"({len(explained.backward_ops_per_graph[0])} ops, compiled on the first backward)")
    print(f"result requires grad: {probs.requires_grad}; compiled backwards so far: "
          f"{frame.stats().extra.get('compiled_backward_compiles', 0)}")

    # 2. training: jitted forward, eager loss / backward / SGD step
    opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_twin = frame.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    for step in range(args.steps):
        for forward, optimizer in ((predict, opt), (twin, opt_twin)):
            optimizer.zero_grad()
            loss = F.cross_entropy(forward(x), y)
            loss.backward()
            optimizer.step()
            if forward is predict and (step % 20 == 0 or step == args.steps - 1):
                print(f"step {step:3d}: loss {float(loss.item()):.4f}")
    with frame.no_grad():
        accuracy = float((predict(x).argmax(axis=1) == y).astype(frame.float32).mean().item())
    diff = max(float(np.abs(p.numpy() - q.numpy()).max())
               for p, q in zip(model.parameters(), twin.parameters()))
    print(f"training accuracy: {100 * accuracy:.1f}%")
    print(f"final parameters of jit(model) and eager training differ by at most {diff:.3g}")
    print(f"compiled backward runs: {frame.stats().extra.get('compiled_backward_runs', 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
