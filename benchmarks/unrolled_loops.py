"""Python loops over array rows, unrolled by capture into one graph, against
the plain function (per-op cost of the cpu executable, docs/performance.md
"Per-op cost of the cpu executable").

    python benchmarks/unrolled_loops.py [--backend cpu]

Interleaved rounds in one process; prints each workload's per-call time and
the ratio jitted / plain (below 1: the jitted function is faster).
"""
from __future__ import annotations

import argparse
import logging

import numpy as np

import frame
from _harness import interleaved


def accumulate_rows(a, w):
    acc = np.zeros(a.shape[1])
    for i in range(a.shape[0]):
        acc += a[i] * w
    return acc


def fill_rows(x, n=40):
    out = np.zeros((n, x.shape[0]))
    for i in range(n):
        out[i] = x * i
    return out


def rnn_steps(xs, h, w, u):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u)
    return h


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default=None, help="frame.jit's backend (default: the jit's)")
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    logging.getLogger("frame").setLevel(logging.ERROR)
    rng = np.random.default_rng(0)
    work = {
        "accumulate 400 rows of 64": (accumulate_rows, (rng.random((400, 64)), rng.random(64))),
        "fill 40 rows of 64": (fill_rows, (rng.random(64),)),
        "rnn 50 steps, 32x64": (rnn_steps, (rng.random((50, 32, 64)).astype(np.float32),
                                            np.zeros((32, 64), np.float32),
                                            rng.random((64, 64)).astype(np.float32) * 0.1,
                                            rng.random((64, 64)).astype(np.float32) * 0.1)),
    }
    for name, (fn, inputs) in work.items():
        jitted = frame.jit(fn, backend=args.backend)
        for _ in range(20):  # compile, and let a tiered graph settle
            jitted(*inputs)
        res = interleaved({"plain": lambda: fn(*inputs), "jitted": lambda: jitted(*inputs)},
                          number=50, rounds=args.rounds, warmup=3)
        print(f"{name:<28} plain {res['plain'] * 1e3:7.3f} ms  jitted {res['jitted'] * 1e3:7.3f} ms"
              f"  ratio {res['jitted'] / res['plain']:.2f}")


if __name__ == "__main__":
    main()
