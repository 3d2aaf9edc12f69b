"""``frame.explain(fn)(*args, **kwargs)``: what capture makes of one call.

The call runs once with fresh capture state of its own (a private set of code
caches, so nothing is reused from, or left in, the caches of other calls), and
every translation it causes is recorded: graphs in the order they were
captured (the top frame's, then its resume functions' and those of functions
called at breaks), graph breaks and native fallbacks with kind, reason and
``file:line``, guards, the time spent translating and compiling, and, per
graph, the tier its executable runs on after the call and why
(``tier_decisions``: a tiered graph's ``describe()``, e.g. the PGO decision
stored for it, or "cpu tier while openvino compiles in the background (then
PGO trial)"), with the process's PGO counters (``pgo_counters``), and, per
graph, the partitions of an executable the fallback chain built
(``partitions``: ``compiled[n nodes]``, ``kernel:<op>``, ``cpu:<op>``, e.g.
OpenVINO's partitions around a cpu ``all_reduce``; None for a graph compiled
whole; of the slow tier once a tiered graph has one).

``fn`` may be what ``frame.jit`` returned (a jitted function, module or bound
method): the call is then explained with that jit's options (its backend;
``eager``), unless ``explain`` is given a backend of its own.  When eager mode
is forced (``FRAME_EAGER=1``, ``frame.config.eager`` or ``eager=True``)
nothing is captured, and ``eager`` says why.

    >>> out = frame.explain(f)(x)
    >>> out.graph_count, out.graph_break_count, [b.kind for b in out.break_reasons]
    (2, 1, ['unsupported_call'])
    >>> print(out)
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import threading
import types

from frame.runtime.stats import stats

from .errors import BreakReason

__all__ = ["explain", "ExplainOutput", "note_translation", "note_break", "note_eager"]

_session = threading.local()


@dataclasses.dataclass
class ExplainOutput:
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = dataclasses.field(default_factory=list)   # BreakReason
    ops_per_graph: list = dataclasses.field(default_factory=list)   # list[list[str]]
    # per graph, the ops of the compiled backward of its results' autograd record
    # (compiled autograd across the jit boundary), or None when its results need none
    backward_ops_per_graph: list = dataclasses.field(default_factory=list)
    guards: list = dataclasses.field(default_factory=list)          # list[str]
    compile_time_s: float = 0.0
    result: object = None           # what the call returned
    exception: BaseException | None = None   # or the exception it raised
    eager: str | None = None        # why nothing was captured: eager mode was forced (by what)
    tier_decisions: list = dataclasses.field(default_factory=list)  # list[str], one per graph
    pgo_counters: dict = dataclasses.field(default_factory=dict)    # name -> process-wide count
    partitions: list = dataclasses.field(default_factory=list)      # list[list[str] | None], per graph
    entries: list = dataclasses.field(default_factory=list, repr=False)  # the entries translated
    # operator_fusion's counts over the graphs, forward and backward
    # (frame.passes.fusion.FusionSummary; None when no graph was captured)
    fusion: object = None

    @property
    def backward_graph_count(self) -> int:
        """How many of the graphs have a compiled backward (their results require grad)."""
        return sum(1 for ops in self.backward_ops_per_graph if ops is not None)

    def __str__(self) -> str:
        lines = []
        if self.eager is not None:
            lines.append(f"Eager mode forced by {self.eager}: nothing was captured, "
                         f"the function ran natively")
        lines += [f"Graph count: {self.graph_count}",
                 f"Graph break count: {self.graph_break_count}",
                 f"Compile time: {self.compile_time_s * 1e3:.1f} ms"]
        if self.break_reasons:
            lines.append("Break reasons:")
            for i, r in enumerate(self.break_reasons, 1):
                lines.append(f"  {i}. {r.kind} at {r.where}: {r.reason}")
                if r.hint:
                    lines.append(f"     hint: {r.hint}")
        if self.ops_per_graph:
            lines.append("Ops per graph:")
            for i, ops in enumerate(self.ops_per_graph, 1):
                lines.append(f"  graph {i} ({len(ops)} ops): {', '.join(ops)}")
                bw = self.backward_ops_per_graph[i - 1] if i <= len(
                    self.backward_ops_per_graph) else None
                if bw is not None:
                    lines.append(f"    its backward ({len(bw)} ops, compiled on the first "
                                 f"backward): {', '.join(bw)}")
        if self.tier_decisions:
            lines.append("Tiers:")
            for i, text in enumerate(self.tier_decisions, 1):
                lines.append(f"  graph {i}: {text}")
        if any(p is not None for p in self.partitions):
            lines.append("Partitions (fallback chain):")
            for i, parts in enumerate(self.partitions, 1):
                if parts is not None:
                    lines.append(f"  graph {i}: {', '.join(parts)}")
        if self.pgo_counters:
            lines.append("PGO counters (process): " + ", ".join(
                f"{k} {v}" for k, v in self.pgo_counters.items()))
        if self.fusion is not None:
            lines.append(f"Fused nodes: {self.fusion}")
        if self.exception is not None:
            lines.append(f"The call raised {type(self.exception).__name__}: {self.exception}")
        if self.guards:
            lines.append("Guards:")
            lines += [f"  - {g}" for g in self.guards]
        return "\n".join(lines)


def note_translation(fn, entry, seconds: float) -> None:
    """Called by ``jit.translate`` for every entry it builds."""
    out = getattr(_session, "out", None)
    if out is None:
        return
    out.compile_time_s += seconds
    if entry.graph is not None:
        out.graph_count += 1
        # constants are data, not work: they are not listed as ops
        out.ops_per_graph.append([n.op for n in entry.graph.nodes if n.op != "constant"])
        backward = getattr(entry, "backward", None)
        out.backward_ops_per_graph.append(backward.ops() if backward is not None else None)
        out.entries.append(entry)
        try:
            # lazy: the compiler (frame.passes, frame.runtime.compile) loads on the first compile
            from frame.passes import fusion_summary
            summary = fusion_summary(entry.graph)
        except Exception:  # noqa: BLE001 - the compile reports a graph the passes reject
            summary = None
        if summary is not None:
            out.fusion = summary if out.fusion is None else out.fusion + summary
    for g in entry.guards:
        if g.text not in out.guards:
            out.guards.append(g.text)


def note_break(reason: BreakReason, graph_break: bool) -> None:
    """Called by ``jit._report`` for every graph break and native fallback."""
    out = getattr(_session, "out", None)
    if out is None:
        return
    out.graph_break_count += 1
    out.break_reasons.append(reason)


def note_eager(why: str) -> None:
    """Called by an eagerly jitted function (``jit.jit``) on every call."""
    out = getattr(_session, "out", None)
    if out is not None and out.eager is None:
        out.eager = why


def _rejit(jit, fn, backend: str | None):
    """``fn`` jitted afresh (with the caches of the explain session): what a
    ``frame.jit`` made is re-made from what it wraps, with its options."""
    if isinstance(fn, types.MethodType) and getattr(fn.__func__, "__frame_jit__", False):
        return types.MethodType(_rejit(jit, fn.__func__, backend), fn.__self__)
    if not getattr(fn, "__frame_jit__", False):
        return jit(fn, backend=backend)
    options = dataclasses.replace(fn._frame_options, full_graph=False)  # a break is reported
    if backend is not None:
        options = dataclasses.replace(options, backend=backend)
    return jit(fn.__wrapped__, **options.as_kwargs())


def explain(fn, *, backend: str | None = None):
    """``explain(fn)(*args, **kwargs) -> ExplainOutput`` (the call's own result
    is in ``.result``; an exception it raised is in ``.exception``, not raised)."""
    @functools.wraps(fn)
    def run(*args, **kwargs) -> ExplainOutput:
        jit_module = importlib.import_module("capture.jit")
        out = ExplainOutput()
        saved = (getattr(_session, "out", None), getattr(jit_module._local, "caches", None))
        _session.out = out
        jit_module._local.caches = jit_module.CodeCaches()
        try:
            out.result = _rejit(jit_module.jit, fn, backend)(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the report is still wanted; the error is kept
            out.exception = e
        finally:
            _session.out, jit_module._local.caches = saved
        _note_tiers(out)
        return out
    return run


PGO_COUNTERS = ("pgo_trials", "pgo_decisions", "pgo_switches", "pgo_stored", "pgo_noisy",
                "pgo_drifts", "cooldown_hits", "backpressure_hits")


def _note_tiers(out: ExplainOutput) -> None:
    """Fill ``tier_decisions`` (what each graph's executable runs on now) and
    ``pgo_counters``."""
    for entry in out.entries:
        exe = getattr(entry, "executable", None)
        backend = getattr(entry, "backend", None)
        describe = getattr(exe, "describe", None)
        if describe is not None:
            out.tier_decisions.append(describe())
        elif exe is not None:
            out.tier_decisions.append(f"{backend} ({type(exe).__name__}, not tiered)")
        else:
            out.tier_decisions.append("no executable (nothing to compute)")
        # a tiered graph's partitions are its slow tier's (the fast tier compiles whole)
        partitioned = getattr(exe, "slow", None) or exe
        out.partitions.append(getattr(partitioned, "partitions", None))
    extra = stats().extra
    out.pgo_counters = {k: extra.get(k, 0) for k in PGO_COUNTERS}
