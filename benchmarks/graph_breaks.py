"""A function with one ``print`` in the middle of 40 ops on 256x256 inputs:
jitted (two graphs around the break, a resume function in between) vs fully
eager frame vs plain NumPy, interleaved in one process (``_harness.py``).

    python benchmarks/graph_breaks.py
"""
from __future__ import annotations

import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import frame  # noqa: E402
from benchmarks._harness import interleaved, show  # noqa: E402

_OUT = io.StringIO()


def model(x, y):
    for _ in range(5):                     # 20 ops
        x = frame.tanh(x * 0.5 + y) - y * 0.25
    print("halfway", file=_OUT)            # the graph break
    for _ in range(5):                     # 20 ops
        x = frame.tanh(x * 0.5 + y) - y * 0.25
    return x


def numpy_model(x, y):
    for _ in range(5):
        x = np.tanh(x * 0.5 + y) - y * 0.25
    print("halfway", file=_OUT)
    for _ in range(5):
        x = np.tanh(x * 0.5 + y) - y * 0.25
    return x


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    x, y = frame.tensor(a), frame.tensor(b)
    jitted = frame.jit(model)
    out = frame.explain(model)(x, y)
    print(f"explain: {out.graph_count} graphs, {out.graph_break_count} break(s), "
          f"ops per graph {[len(o) for o in out.ops_per_graph]}")
    np.testing.assert_allclose(jitted(x, y).numpy(), numpy_model(a, b), rtol=1e-4, atol=1e-5)
    results = interleaved({
        "jitted (2 graphs + break)": lambda: jitted(x, y),
        "eager frame": lambda: model(x, y),
        "plain NumPy": lambda: numpy_model(a, b),
    }, number=200, rounds=9, warmup=20)
    _OUT.seek(0)
    _OUT.truncate()
    print("one print in the middle of 40 ops, 256x256 float32:")
    show(results, "plain NumPy")


if __name__ == "__main__":
    main()
