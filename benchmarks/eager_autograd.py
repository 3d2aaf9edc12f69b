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

from _mlp_numpy import BATCH, LR, SIZES, make_data, numpy_step  # noqa: E402


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


def main() -> None:
    x, y = make_data()
    frame_step, model = frame_step_fn(x, y)
    params = [p.numpy().copy() for p in model.parameters()]
    by_hand = numpy_step(x, y, params)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    res = interleaved({"numpy (hand-written)": by_hand, "frame eager": frame_step},
                      number=ARGS.number, rounds=ARGS.rounds, warmup=5)
    print(f"MLP {'-'.join(map(str, SIZES))} training step, batch {BATCH}, float32, SGD "
          f"(OpenBLAS threads: {threads}); median of interleaved rounds:")
    for name, sec in res.items():
        print(f"  {name:<24} {sec * 1e3:7.3f} ms/step")
    print(f"  frame / numpy: x{res['frame eager'] / res['numpy (hand-written)']:.2f}")
    show({k: v for k, v in res.items()}, "numpy (hand-written)")


if __name__ == "__main__":
    sys.exit(main())
