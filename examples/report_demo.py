"""What ``frame.report()`` shows: run with ``python -m frame run examples/report_demo.py``.

A jitted layer is called a few times (one translation and one compile, then
cache hits), once with a new shape (a recompile, whose failing guard the
report names), and a jitted function with a ``print`` in it runs natively
(a graph break of kind ``unsupported_call``, with its location).

    python -m frame run examples/report_demo.py --steps 5
    FRAME_LOG=recompiles,graph python -m frame run examples/report_demo.py
"""
from __future__ import annotations

import argparse

import numpy as np

import frame


@frame.jit
def layer(x, w, b):
    return frame.relu(x @ w + b) * 0.5


@frame.jit
def noisy(x):
    y = frame.exp(-x * x)
    print(f"noisy: y has shape {tuple(y.shape)}")  # capture cannot trace print: runs natively
    return y.sum()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="calls with the same shapes")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    w = frame.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    b = frame.tensor(np.zeros(4, np.float32))
    total = 0.0
    for _ in range(args.steps):
        x = frame.tensor(rng.standard_normal((2, 8)).astype(np.float32))
        total += float(layer(x, w, b).sum())
    wide = frame.tensor(rng.standard_normal((5, 8)).astype(np.float32))
    total += float(layer(wide, w, b).sum())  # new batch size: a recompile
    total += float(noisy(wide))
    print(f"report_demo: {args.steps} steps, total {total:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
