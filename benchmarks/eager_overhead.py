"""Eager overhead: a 4-element ``add`` through ``frame.add`` vs ``np.add``.

    python benchmarks/eager_overhead.py

Target (issue 2): under 3 us of frame overhead per eager op.
"""
from __future__ import annotations

import numpy as np

import frame
from _harness import interleaved, show


def main() -> None:
    a_np = np.arange(4, dtype=np.float32)
    b_np = np.ones(4, dtype=np.float32)
    a, b = frame.tensor(a_np), frame.tensor(b_np)
    res = interleaved({
        "np.add (4 x float32)": lambda: np.add(a_np, b_np),
        "frame.add (4 x float32)": lambda: frame.add(a, b),
        "tensor + tensor": lambda: a + b,
        "tensor * 2.5 (weak scalar)": lambda: a * 2.5,
        "frame.relu": lambda: frame.relu(a),
    })
    print("eager overhead, median of interleaved rounds:")
    show(res, "np.add (4 x float32)")
    overhead = res["frame.add (4 x float32)"] - res["np.add (4 x float32)"]
    print(f"frame.add overhead over np.add: {overhead * 1e6:.2f} us per op (target < 3 us)")


if __name__ == "__main__":
    main()
