"""Interleaved timing: candidates run side by side, round after round, in one
process, and each reports the median over rounds of its per-call time.  Ratios
measured this way hold up on a shared, noisy machine better than absolute times."""
from __future__ import annotations

import atexit
import os
import shutil
import statistics
import tempfile
import time
from typing import Callable

_PYCACHE: list[str] = []


def bytecode_cache_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a child process that caches bytecode, under a prefix of this
    benchmark run (removed at exit).

    An installed package has its .pyc files; an environment with
    PYTHONDONTWRITEBYTECODE=1 (this machine's) and frame's editable checkout
    have none, so a child would compile every module frame imports lazily --
    inside a measured first call -- from source (~0.1 s of a first jitted call
    here).  A prefix is all or nothing: the first child on it compiles the
    standard library, NumPy and OpenVINO's Python code too (~2 s), so run one
    throwaway child on it before measuring.  Only for children that import
    frame: a peer's package has its bytecode beside its sources, which a
    prefix would hide."""
    if not _PYCACHE:
        _PYCACHE.append(tempfile.mkdtemp(prefix="frame-bench-pyc-"))
        atexit.register(shutil.rmtree, _PYCACHE[0], True)
    out = dict(env, PYTHONPYCACHEPREFIX=_PYCACHE[0])
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def per_call_seconds(fn: Callable[[], object], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def interleaved_samples(candidates: dict[str, Callable[[], object]], number: int = 2000,
                        rounds: int = 15, warmup: int = 200) -> dict[str, list[float]]:
    """Per-call seconds of each candidate in each round (candidates interleaved)."""
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            samples[name].append(per_call_seconds(fn, number))
    return samples


def interleaved(candidates: dict[str, Callable[[], object]], number: int = 2000,
                rounds: int = 15, warmup: int = 200) -> dict[str, float]:
    """Median per-call seconds for each candidate."""
    samples = interleaved_samples(candidates, number, rounds, warmup)
    return {name: statistics.median(v) for name, v in samples.items()}


def show_steps(samples: dict[str, list[float]], baseline: str, width: int = 28) -> None:
    """Median and minimum ms per step of each candidate, and its speed against ``baseline``."""
    base = statistics.median(samples[baseline])
    for name, v in samples.items():
        med, low = statistics.median(v), min(v)
        print(f"  {name:<{width}} median {med * 1e3:7.3f}  min {low * 1e3:7.3f}  "
              f"x{base / med:5.3f} vs {baseline} (median)")


def show(results: dict[str, float], baseline: str) -> None:
    base = results[baseline]
    for name, sec in results.items():
        print(f"  {name:<34} {sec * 1e6:9.2f} us/call   x{sec / base:5.2f} vs {baseline}")
