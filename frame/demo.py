"""``python -m frame demo``: the flagship example, run briefly.

Until training lands (autograd issue), the demo runs an MLP forward pass
(784 -> 256 -> 128 -> 10, batch 128) on synthetic data three ways: plain
NumPy, frame eager, and ``frame.jit`` (one captured graph), checks that they
agree, and prints per-call times.
"""
from __future__ import annotations

import statistics
import time

import numpy as np


def _median_time(fn, repeat: int = 30) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run_demo(backend: str | None = None) -> int:
    from rich.console import Console
    from rich.table import Table

    import frame

    console = Console(stderr=False)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    params = [
        (rng.standard_normal((784, 256)).astype(np.float32) * 0.05, np.zeros(256, np.float32)),
        (rng.standard_normal((256, 128)).astype(np.float32) * 0.05, np.zeros(128, np.float32)),
        (rng.standard_normal((128, 10)).astype(np.float32) * 0.05, np.zeros(10, np.float32)),
    ]

    def mlp_numpy(x):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = np.maximum(h, 0)
        h = h - h.max(axis=-1, keepdims=True)
        e = np.exp(h)
        return e / e.sum(axis=-1, keepdims=True)

    tparams = [(frame.tensor(w), frame.tensor(b)) for w, b in params]

    def mlp(x, layers):
        h = x
        for i, (w, b) in enumerate(layers):
            h = h @ w + b
            if i < len(layers) - 1:
                h = frame.relu(h)
        return frame.softmax(h, axis=-1)

    if backend is None:
        from .backends import default_backend_name
        backend = default_backend_name()
    jitted = frame.jit(mlp, backend=backend)
    tx = frame.tensor(x)
    expected = mlp_numpy(x)
    eager_out = mlp(tx, tparams).numpy()
    jit_out = jitted(tx, tparams).numpy()
    ok = np.allclose(eager_out, expected, atol=1e-5) and np.allclose(jit_out, expected, atol=1e-5)

    # interleaved rounds: the three paths see the same machine load
    samples = {"np": [], "eager": [], "jit": []}
    for _ in range(10):
        samples["np"].append(_median_time(lambda: mlp_numpy(x), 3))
        samples["eager"].append(_median_time(lambda: mlp(tx, tparams), 3))
        samples["jit"].append(_median_time(lambda: jitted(tx, tparams), 3))
    t_np, t_eager, t_jit = (statistics.median(samples[k]) for k in ("np", "eager", "jit"))
    stats = frame.runtime.stats.stats()

    table = Table(title="MLP 784-256-128-10 forward, batch 128 (synthetic data)")
    table.add_column("path")
    table.add_column("ms / call", justify="right")
    table.add_row("NumPy by hand", f"{t_np * 1e3:.3f}")
    table.add_row("frame eager", f"{t_eager * 1e3:.3f}")
    table.add_row(f"frame.jit ({backend})", f"{t_jit * 1e3:.3f}")
    console.print(table)
    console.print(f"results agree with NumPy: {'yes' if ok else 'NO'}; graphs compiled: {stats.compiles}; "
                  f"translations: {stats.translations}")
    console.print("Training (autograd, optimizers, the MNIST example) is not available yet.")
    return 0 if ok else 1
