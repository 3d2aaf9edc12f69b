"""Profile-guided tier choice (frame/runtime/tiered.py): the default backend
(``frame.jit`` without ``backend=``: cpu tier first, OpenVINO in the
background, then PGO keeps the faster) against each tier pinned
(``backend="cpu"``, ``backend="openvino"``), interleaved, on the three
workloads of issue 13: the MLP 784-256-128-10 SGD train step (batch 128),
tanh-GELU on 1024x1024 float32, and a 20-node elementwise graph on 64x64.

    python benchmarks/pgo.py                       # a fresh cache: PGO measures
    python benchmarks/pgo.py --cache-dir DIR       # run twice with one DIR: the second
                                                   # process starts on the stored winner

Prints, per workload, the median per-call time of each candidate, the PGO
decision (measured or stored) and the default's ratio to the best pinned tier
(acceptance: at most 1.05).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from _harness import per_call_seconds  # noqa: E402

C = math.sqrt(2.0 / math.pi)


def gelu(x):
    import frame
    return 0.5 * x * (1.0 + frame.tanh(C * (x + 0.044715 * (x * x * x))))


def chain20(x, y):
    import frame
    h = x
    for _ in range(4):   # 5 ops a round: 20 nodes
        h = frame.tanh(h * 0.5 + y) - h * 0.25
        h = h * y
    return h


def mlp_step_factory():
    import frame
    from _mlp_numpy import frame_train_step

    def make(backend):
        _, train_step = frame_train_step(0.01)
        return frame.jit(train_step) if backend == "default" else frame.jit(train_step, backend=backend)
    rng = np.random.default_rng(0)
    x = frame.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = frame.tensor(rng.integers(0, 10, 128).astype(np.int64))
    return make, (x, y)


def workloads():
    import frame
    rng = np.random.default_rng(0)
    g = frame.tensor(rng.standard_normal((1024, 1024)).astype(np.float32))
    a = frame.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    b = frame.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    mlp_make, mlp_args = mlp_step_factory()

    def plain(fn):
        return lambda backend: frame.jit(fn) if backend == "default" else frame.jit(fn, backend=backend)
    return {"MLP train step b128": (mlp_make, mlp_args, 20),
            "tanh-GELU 1024x1024": (plain(gelu), (g,), 10),
            "20-node 64x64 graph": (plain(chain20), (a, b), 500)}


def rotated(candidates: dict, number: int, rounds: int) -> dict[str, float]:
    """Median per-call seconds, interleaved round by round with the order
    rotated every round: each candidate follows each other one equally often
    (on 2 cores the candidate run after OpenVINO pays for its spinning pool)."""
    import statistics
    names = list(candidates)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            samples[name].append(per_call_seconds(candidates[name], number))
    return {n: statistics.median(v) for n, v in samples.items()}


def settle(fn, args, calls=80):  # a noisy trial may take 3x pgo_trial_calls per tier
    from frame.runtime import tiered
    for _ in range(3):
        fn(*args)
    tiered.scheduler.idle(120)
    for _ in range(calls):   # through the PGO trials
        fn(*args)
    tiered.scheduler.idle(120)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()
    os.environ.pop("FRAME_BACKEND", None)   # the default must be the default
    os.environ["FRAME_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="frame-pgo-")
    import frame
    print(f"load: {os.getloadavg()}, cache dir {os.environ['FRAME_CACHE_DIR']}")
    for name, (make, fargs, number) in workloads().items():
        frame.reset_stats()
        cands = {}
        for backend in ("default", "cpu", "openvino"):
            fn = make(backend)
            settle(fn, fargs)
            cands[backend] = (lambda fn=fn: fn(*fargs))
        s = frame.stats()
        decisions = list(s.tier_decisions.values())
        res = rotated(cands, number=number, rounds=args.rounds)
        best = min(res["cpu"], res["openvino"])
        print(f"{name}:")
        for k, v in res.items():
            print(f"  {k:<10} {v * 1e3:8.3f} ms/call")
        print(f"  default / best pinned tier: {res['default'] / best:.3f}   "
              f"(pgo_trials {s.extra.get('pgo_trials', 0)}, pgo_stored {s.extra.get('pgo_stored', 0)})")
        for d in decisions:
            print(f"  decision: {d}")
    print(f"load: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
