"""Interleaved timing: candidates run side by side, round after round, in one
process, and each reports the median over rounds of its per-call time.  Ratios
measured this way hold up on a shared, noisy machine better than absolute times."""
from __future__ import annotations

import statistics
import time
from typing import Callable


def per_call_seconds(fn: Callable[[], object], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def interleaved(candidates: dict[str, Callable[[], object]], number: int = 2000,
                rounds: int = 15, warmup: int = 200) -> dict[str, float]:
    """Median per-call seconds for each candidate."""
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples[name].append(per_call_seconds(fn, number))
    return {name: statistics.median(v) for name, v in samples.items()}


def show(results: dict[str, float], baseline: str) -> None:
    base = results[baseline]
    for name, sec in results.items():
        print(f"  {name:<34} {sec * 1e6:9.2f} us/call   x{sec / base:5.2f} vs {baseline}")
