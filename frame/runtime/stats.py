"""Process-wide counters: compiles, cache hits/misses, fallbacks, graph breaks.

``frame.stats()`` returns an immutable snapshot; ``frame.reset_stats()`` zeroes
everything.  Counting is thread-safe.  ``frame.report()``
(``frame/runtime/report.py``) renders a snapshot.

Two records are bounded so that a long-running process cannot grow them
without limit: graph-break sites (the first ``MAX_BREAK_SITES`` distinct
(kind, location) pairs keep per-location counts; later sites still count in
``graph_breaks``) and recompile reasons (the ``MAX_RECOMPILE_REASONS`` most
recently seen (function, failing guard) pairs, with their counts).  Tier
decisions (PGO, ``tiered.py``) keep the ``MAX_TIER_DECISIONS`` most recent
graphs' decisions.
"""
from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Any

__all__ = ["StatsSnapshot", "stats", "reset_stats", "record", "MAX_BREAK_SITES",
           "MAX_RECOMPILE_REASONS", "MAX_TIER_DECISIONS"]

MAX_BREAK_SITES = 1000
MAX_RECOMPILE_REASONS = 64
MAX_TIER_DECISIONS = 64


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
    translation_time_s: float = 0.0
    # (kind, location "file.py:12") -> count, and the last reason seen there
    graph_break_sites: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    graph_break_reasons: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    # (function, failing guard text) -> count; the most recent MAX_RECOMPILE_REASONS pairs
    recompile_reasons: dict[tuple[str, str], int] = dataclasses.field(default_factory=dict)
    extra_times: dict[str, float] = dataclasses.field(default_factory=dict)  # seconds, by name
    # graph label -> the PGO tier decision (a sentence); the most recent MAX_TIER_DECISIONS
    tier_decisions: dict[str, str] = dataclasses.field(default_factory=dict)
    # auto-jit's units (capture/autojit.py): label -> {kind, state, calls, hits, misses,
    # compiles, compile_s, eager_ms, compiled_ms, saved_s, reason}; live, not reset
    auto_jit: dict[str, dict] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["fallbacks"] = {f"{op}@{be}": n for (op, be), n in self.fallbacks.items()}
        d["fallback_targets"] = {f"{op}@{be}->{t}": n for (op, be, t), n in self.fallback_targets.items()}
        d["graph_break_sites"] = {f"{k}@{loc}": n for (k, loc), n in self.graph_break_sites.items()}
        d["graph_break_reasons"] = {f"{k}@{loc}": r for (k, loc), r in self.graph_break_reasons.items()}
        d["recompile_reasons"] = {f"{fn}: {g}": n for (fn, g), n in self.recompile_reasons.items()}
        return d


class _Stats:
    def __init__(self):
        self._lock = threading.Lock()
        self._gauges: dict[str, Any] = {}   # name -> zero-argument reader (not reset)
        self._providers: dict[str, Any] = {}  # snapshot field -> zero-argument reader
        self.reset()

    def reset(self) -> None:
        with getattr(self, "_lock", threading.Lock()):
            self.fallbacks: collections.Counter = collections.Counter()
            self.fallback_targets: collections.Counter = collections.Counter()
            self.graph_breaks: collections.Counter = collections.Counter()
            self.compiles_by_backend: collections.Counter = collections.Counter()
            self.counters: collections.Counter = collections.Counter()
            self.times: collections.Counter = collections.Counter()
            self.break_sites: collections.Counter = collections.Counter()
            self.break_reasons: dict[tuple[str, str], str] = {}
            self.recompile_reasons: collections.OrderedDict = collections.OrderedDict()
            self.tier_decisions: collections.OrderedDict = collections.OrderedDict()

    def gauge(self, name: str, read) -> None:
        """Report ``read()`` as ``extra[name]`` in every snapshot: a current value
        (e.g. background compiles pending) that ``reset`` does not zero.  ``read``
        must not take locks (it runs under the stats lock)."""
        with self._lock:
            self._gauges[name] = read

    def provider(self, field: str, read) -> None:
        """Fill the snapshot field ``field`` with ``read()`` (a layer above the
        runtime reports its own records: auto-jit's units).  ``read`` runs
        outside the stats lock."""
        self._providers[field] = read

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

    def graph_break(self, kind: str, location: str | None = None, reason: str | None = None) -> None:
        """Count a graph break of ``kind``; with ``location`` ("file.py:12") also
        per site, remembering the last ``reason`` sentence seen there."""
        with self._lock:
            self.graph_breaks[kind] += 1
            if location is None:
                return
            site = (kind, location)
            if site in self.break_sites or len(self.break_sites) < MAX_BREAK_SITES:
                self.break_sites[site] += 1
                if reason:
                    self.break_reasons[site] = reason

    def recompile(self, fn_name: str, guard_text: str) -> None:
        """Count a recompile of ``fn_name`` caused by the failing guard ``guard_text``."""
        with self._lock:
            self.counters["recompiles"] += 1
            key = (fn_name, guard_text)
            self.recompile_reasons[key] = self.recompile_reasons.pop(key, 0) + 1  # now the newest
            if len(self.recompile_reasons) > MAX_RECOMPILE_REASONS:
                self.recompile_reasons.popitem(last=False)

    def tier_decision(self, label: str, text: str) -> None:
        """Remember the tier decision ``text`` for the graph ``label`` (the newest wins)."""
        with self._lock:
            self.tier_decisions.pop(label, None)
            self.tier_decisions[label] = text
            if len(self.tier_decisions) > MAX_TIER_DECISIONS:
                self.tier_decisions.popitem(last=False)

    def compiled(self, backend: str, seconds: float) -> None:
        with self._lock:
            self.counters["compiles"] += 1
            self.compiles_by_backend[backend] += 1
            self.times["compile"] += seconds

    def snapshot(self) -> StatsSnapshot:
        provided = {name: read() for name, read in list(self._providers.items())}
        with self._lock:
            c = self.counters
            known = {"translations", "compiles", "cache_hits", "cache_misses", "recompiles"}
            known_times = {"compile", "passes", "translation"}
            return StatsSnapshot(
                fallbacks=dict(self.fallbacks), fallback_targets=dict(self.fallback_targets),
                graph_breaks=dict(self.graph_breaks), translations=c["translations"],
                compiles=c["compiles"], compiles_by_backend=dict(self.compiles_by_backend),
                cache_hits=c["cache_hits"], cache_misses=c["cache_misses"],
                recompiles=c["recompiles"], compile_time_s=float(self.times["compile"]),
                pass_time_s=float(self.times["passes"]),
                extra={**{k: v for k, v in c.items() if k not in known},
                       **{k: read() for k, read in self._gauges.items()}},
                translation_time_s=float(self.times["translation"]),
                graph_break_sites=dict(self.break_sites),
                graph_break_reasons=dict(self.break_reasons),
                recompile_reasons=dict(self.recompile_reasons),
                extra_times={k: float(v) for k, v in self.times.items() if k not in known_times},
                tier_decisions=dict(self.tier_decisions), **provided)


record = _Stats()


def stats() -> StatsSnapshot:
    """A snapshot of frame's counters.

    >>> s = frame.stats(); s.compiles, s.cache_hits  # doctest: +SKIP
    """
    return record.snapshot()


def reset_stats() -> None:
    """Zero every counter."""
    record.reset()
