"""A NumPy-only function compiled by frame: one k-means step with standardised
features, einsum distances and a top-k of the nearest points per centre.

The function ``kmeans_step`` below is plain NumPy -- it never mentions frame --
and ``frame.jit`` is applied where it is called::

    step = frame.jit(kmeans_step, backend="cpu")
    labels, centres, nearest = step(points, centres)

Its NumPy calls (``np.std``, ``np.einsum``, ``np.linalg.norm``, ``np.argsort``,
``np.take_along_axis``, ``np.cumsum``, ``np.clip``, three-argument ``np.where``)
become the ops of one graph; the results are ndarrays again, equal to the
plain function's.

    python examples/numpy_only.py                # 5 k-means iterations, cpu backend
    python examples/numpy_only.py --backend openvino --iterations 10
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def kmeans_step(points, centres, k_nearest=3):
    """One Lloyd iteration on standardised features.  Returns the label of every
    point, the new centres (a centre without points stays where it was) and, per
    centre, the indices of its ``k_nearest`` closest points."""
    mean = points.mean(axis=0)
    std = np.std(points, axis=0) + 1e-6
    x = (points - mean) / std
    c = (centres - mean) / std
    # squared distances |x|^2 - 2 x.c + |c|^2, written with einsum
    d2 = (np.einsum("nd,nd->n", x, x)[:, None] - 2.0 * np.einsum("nd,kd->nk", x, c)
          + np.einsum("kd,kd->k", c, c)[None, :])
    d = np.sqrt(np.clip(d2, 0.0, None))
    labels = np.argmin(d, axis=1)
    one_hot = (labels[:, None] == np.arange(centres.shape[0])[None, :]).astype(points.dtype)
    counts = one_hot.sum(axis=0)
    sums = np.einsum("nk,nd->kd", one_hot, points)
    new_centres = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1.0)[:, None], centres)
    order = np.argsort(d, axis=0, kind="stable")[:k_nearest]          # [k_nearest, K]
    nearest_d = np.take_along_axis(d, order, axis=0)
    spread = np.cumsum(nearest_d, axis=0)[-1] / k_nearest
    shift = np.linalg.norm(new_centres - centres, axis=1)
    return labels, new_centres, order.T, spread, shift


def make_data(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    true_centres = rng.uniform(-5.0, 5.0, size=(k, 2)).astype(np.float32)
    points = (true_centres[rng.integers(0, k, n)]
              + rng.normal(0.0, 0.7, size=(n, 2))).astype(np.float32)
    centres = points[rng.choice(n, k, replace=False)]
    return points, centres


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="examples/numpy_only.py", description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu", choices=("cpu", "openvino"))
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--points", type=int, default=600)
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import frame  # the function above never imports it: jit is applied here

    points, centres = make_data(args.points, args.clusters, args.seed)
    step = frame.jit(kmeans_step, backend=args.backend)
    explained = frame.explain(kmeans_step, backend=args.backend)(points, centres)
    print(f"kmeans_step captured as {explained.graph_count} graph(s), "
          f"{len(explained.break_reasons)} graph break(s)")

    plain_c, jit_c = centres, centres
    worst = 0.0
    for i in range(args.iterations):
        plain = kmeans_step(points, plain_c)
        jitted = step(points, jit_c)
        assert all(type(a) is type(b) for a, b in zip(plain, jitted))
        assert np.array_equal(plain[0], jitted[0]), "labels differ"
        assert np.array_equal(plain[2], jitted[2]), "nearest points differ"
        worst = max(worst, max(float(np.max(np.abs(a - b))) for a, b in
                               zip((plain[1], plain[3], plain[4]), (jitted[1], jitted[3], jitted[4]))))
        plain_c, jit_c = plain[1], jitted[1]
        print(f"iteration {i + 1}: centres moved by at most {float(plain[4].max()):.4f}, "
              f"sizes {np.bincount(plain[0], minlength=args.clusters).tolist()}")
    print(f"plain NumPy and frame.jit ({args.backend}) agree: labels and nearest points equal, "
          f"floats within {worst:.1e}")

    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        kmeans_step(points, jit_c)
    t1 = time.perf_counter()
    for _ in range(reps):
        step(points, jit_c)
    t2 = time.perf_counter()
    print(f"{(t1 - t0) / reps * 1e3:.3f} ms / call plain NumPy, "
          f"{(t2 - t1) / reps * 1e3:.3f} ms / call frame.jit ({args.backend})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
