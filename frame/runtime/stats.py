"""Process-wide counters: compiles, cache hits/misses, fallbacks, graph breaks.

``frame.stats()`` returns an immutable snapshot; ``frame.reset_stats()`` zeroes
everything.  Counting is thread-safe.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Any

__all__ = ["StatsSnapshot", "stats", "reset_stats", "record"]


@dataclasses.dataclass(frozen=True)
class StatsSnapshot:
    fallbacks: dict[tuple[str, str], int]      # (op, backend) -> count
    fallback_targets: dict[tuple[str, str, str], int]  # (op, backend, target) -> count
    graph_breaks: dict[str, int]               # kind -> count
    translations: int
    compiles: int                              # backend compiles (cache misses that compiled)
    compiles_by_backend: dict[str, int]
    cache_hits: int
    cache_misses: int
    recompiles: int
    compile_time_s: float
    pass_time_s: float
    extra: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["fallbacks"] = {f"{op}@{be}": n for (op, be), n in self.fallbacks.items()}
        d["fallback_targets"] = {f"{op}@{be}->{t}": n for (op, be, t), n in self.fallback_targets.items()}
        return d


class _Stats:
    def __init__(self):
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with getattr(self, "_lock", threading.Lock()):
            self.fallbacks: collections.Counter = collections.Counter()
            self.fallback_targets: collections.Counter = collections.Counter()
            self.graph_breaks: collections.Counter = collections.Counter()
            self.compiles_by_backend: collections.Counter = collections.Counter()
            self.counters: collections.Counter = collections.Counter()
            self.times: collections.Counter = collections.Counter()

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counters[name] += n

    def add_time(self, name: str, seconds: float) -> None:
        with self._lock:
            self.times[name] += seconds

    def fallback(self, op: str, backend: str, target: str) -> None:
        with self._lock:
            self.fallbacks[(op, backend)] += 1
            self.fallback_targets[(op, backend, target)] += 1

    def graph_break(self, kind: str) -> None:
        with self._lock:
            self.graph_breaks[kind] += 1

    def compiled(self, backend: str, seconds: float) -> None:
        with self._lock:
            self.counters["compiles"] += 1
            self.compiles_by_backend[backend] += 1
            self.times["compile"] += seconds

    def snapshot(self) -> StatsSnapshot:
        with self._lock:
            c = self.counters
            known = {"translations", "compiles", "cache_hits", "cache_misses", "recompiles"}
            return StatsSnapshot(
                fallbacks=dict(self.fallbacks), fallback_targets=dict(self.fallback_targets),
                graph_breaks=dict(self.graph_breaks), translations=c["translations"],
                compiles=c["compiles"], compiles_by_backend=dict(self.compiles_by_backend),
                cache_hits=c["cache_hits"], cache_misses=c["cache_misses"],
                recompiles=c["recompiles"], compile_time_s=float(self.times["compile"]),
                pass_time_s=float(self.times["passes"]),
                extra={k: v for k, v in c.items() if k not in known})


record = _Stats()


def stats() -> StatsSnapshot:
    """A snapshot of frame's counters.

    >>> s = frame.stats(); s.compiles, s.cache_hits  # doctest: +SKIP
    """
    return record.snapshot()


def reset_stats() -> None:
    """Zero every counter."""
    record.reset()
