"""Capture overhead on the cpu backend.

    python benchmarks/capture_overhead.py

(a) Per-call overhead of a jitted ``(x + y).relu() * 2`` on 4-element float32
    tensors against calling its cached Executable directly (interleaved rounds,
    medians).  Target (issue 5): under 5 us of overhead per call.
(b) First-call latency (translation + compile) of a 30-op function, each in a
    fresh subprocess (median of 5).  Target: under 50 ms.  Measured after a
    1-op warm-up call that performs frame's lazy imports (with
    PYTHONDONTWRITEBYTECODE=1 those recompile every module from source), and
    once more cold, imports included.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import frame  # noqa: E402
from _harness import interleaved, show  # noqa: E402


def tiny(x, y):
    return (x + y).relu() * 2


def thirty_ops(x, w):
    h = x @ w                                   # 1 op
    for _ in range(9):                          # 27 ops (unrolled by capture)
        h = (h * 0.5 + 0.25).tanh()
    return h.sum(axis=-1) - 1.0                 # 2 ops


def per_call() -> None:
    x = frame.tensor(np.arange(4, dtype=np.float32))
    y = frame.tensor(np.ones(4, dtype=np.float32))
    jitted = frame.jit(tiny, backend="cpu")
    jitted(x, y)
    entry = jitted._frame_cache.entries[0]
    exe = entry.executable
    run = exe.run
    wrap = frame.Tensor._wrap
    xd, yd = x._data, y._data
    res = interleaved({
        "Executable.run (raw)": lambda: run((xd, yd)),
        "Executable.run + Tensor wrap": lambda: wrap(run((x._data, y._data))[0]),
        "frame.jit(f)(x, y)": lambda: jitted(x, y),
        "eager f(x, y)": lambda: tiny(x, y),
    }, number=5000, rounds=15)
    print("(a) per-call overhead, (x + y).relu() * 2 on 4 x float32, cpu backend:")
    show(res, "Executable.run (raw)")
    overhead = res["frame.jit(f)(x, y)"] - res["Executable.run (raw)"]
    print(f"    capture overhead over the raw executable: {overhead * 1e6:.2f} us per call "
          f"(target < 5 us)")


_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r}); sys.path.insert(0, {here!r})
import numpy as np
import frame
from capture_overhead import thirty_ops
x = frame.tensor(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32))
w = frame.tensor(np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32))
f = frame.jit(thirty_ops, backend="cpu")
if {warm}:  # import what the first compile imports lazily (passes, cpu codegen) first
    frame.jit(lambda a: a + 1, backend="cpu")(frame.tensor([1.0]))
t0 = time.perf_counter()
f(x, w)
first = time.perf_counter() - t0
t0 = time.perf_counter()
f(x, w)
second = time.perf_counter() - t0
entry = f._frame_cache.entries[0]
ops = sum(1 for n in entry.graph.nodes if n.op != "constant")
print(json.dumps({{"first": first, "second": second, "ops": ops, "native": entry.native}}))
"""


def first_call(repeats: int = 5, warm: bool = True) -> None:
    code = _CHILD.format(root=ROOT, here=HERE, warm=warm)
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={**os.environ, "FRAME_EAGER": "0",
                                              "FRAME_CACHE": "0"})  # a cold first call
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert not any(r["native"] for r in runs), "the 30-op function was not captured"
    first = statistics.median(r["first"] for r in runs)
    second = statistics.median(r["second"] for r in runs)
    what = ("after a 1-op warm-up call (lazy imports done)" if warm
            else "cold: includes frame's lazy imports")
    print(f"(b) first call (translation + compile) of a {runs[0]['ops']}-op function on 64x64, "
          f"cpu backend, fresh process, median of {repeats}, {what}:")
    shown = ", ".join(f"{r['first'] * 1e3:.1f}" for r in runs)
    print(f"    first call {first * 1e3:.1f} ms (target < 50 ms); "
          f"second call {second * 1e6:.0f} us; runs: {shown} ms")


def main() -> None:
    per_call()
    first_call(warm=True)
    first_call(warm=False)


if __name__ == "__main__":
    main()
