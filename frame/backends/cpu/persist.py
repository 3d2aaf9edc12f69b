"""The cpu executable as a persistent artifact (``Backend.serialize`` /
``deserialize``, used by the on-disk compile cache).

A ``CpuExecutable`` is generated code over objects (reference kernels, attrs
dicts, constants, thread-local buffers) bound into its module namespace, so
the source alone cannot be run.  The artifact holds what regenerates it
without the pass pipeline: the graph ``compile`` was given (its text and
constant payloads) and the memory plan.  Loading runs the code generator
(~1 ms for 30 nodes) and checks that it wrote exactly the stored source: a
different code generator or a damaged entry is refused, never run.

    meta = {"format": 3, "graph": <dump_text>, "plan": {...}, "source_sha256": <hex>,
            "marked_graph": <dump_text>}          # only when the graph had np.dot marks
    blobs = {"constants": <npz of the payloads the text shows as digests>,
             "marked_constants": <npz>}           # (the same, of marked_graph)

Format 3: plans carry ``donations`` (outputs computed into donated input
arrays).  A format-2 entry is refused (its plans have none; the key of an
executable with donations differs anyway).

Format 2: plans carry ``views`` (transposes read as views of their input,
whose source values live longer).  A format-1 entry is refused, not
reinterpreted: its plan lets a buffer be reused while a transpose the new
code generator reads as a view still shows it.
"""
from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Any

from ...dtypes import as_dtype
from ...hal.backend import Artifact, pack_graph, type_from_json, type_to_json, unpack_graph
from ...errors import ErrorCode, FrameError
from ...ir.graph import Graph
from ...ir.memplan import Buffer, Lifetime, MemoryPlan
from ...passes.layout import MARKED_GRAPH
from .codegen import CpuExecutable, build_executable

__all__ = ["serialize", "deserialize", "plan_to_json", "plan_from_json", "FORMAT"]

FORMAT = 3


def plan_to_json(plan: MemoryPlan) -> dict[str, Any]:
    """A MemoryPlan as JSON-able data (value numbers become string keys)."""
    return {
        "buffers": [[b.dtype.name, b.size] for b in plan.buffers],
        "assignment": {str(n): i for n, i in plan.assignment.items()},
        "lifetimes": {str(n): [lt.start, lt.end] for n, lt in plan.lifetimes.items()},
        "types": {str(n): type_to_json(t) for n, t in plan.types.items()},
        "peak_bytes": plan.peak_bytes,
        "naive_bytes": plan.naive_bytes,
        "max_live_bytes": plan.max_live_bytes,
        "views": {str(n): source for n, source in plan.views.items()},
        "donations": {str(n): source for n, source in plan.donations.items()},
    }


def plan_from_json(data: dict[str, Any]) -> MemoryPlan:
    """The inverse of ``plan_to_json``."""
    return MemoryPlan(
        buffers=tuple(Buffer(as_dtype(str(name)), int(size)) for name, size in data["buffers"]),
        assignment=MappingProxyType({int(n): int(i) for n, i in data["assignment"].items()}),
        lifetimes=MappingProxyType({int(n): Lifetime(int(s), int(e))
                                    for n, (s, e) in data["lifetimes"].items()}),
        types=MappingProxyType({int(n): type_from_json(t) for n, t in data["types"].items()}),
        peak_bytes=int(data["peak_bytes"]),
        naive_bytes=int(data["naive_bytes"]),
        max_live_bytes=int(data["max_live_bytes"]),
        views=MappingProxyType({int(n): int(source) for n, source in data["views"].items()}),
        donations=MappingProxyType({int(n): int(source)
                                    for n, source in data["donations"].items()}),
    )


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def serialize(graph: Graph, executable) -> Artifact | None:
    """The artifact for a ``CpuExecutable`` compiled from ``graph``."""

    if type(executable) is not CpuExecutable:
        return None
    text, payloads = pack_graph(graph)
    meta = {"format": FORMAT, "graph": text, "plan": plan_to_json(executable.plan),
            "source_sha256": _sha256(executable.source)}
    blobs = {"constants": payloads}
    marked = graph.meta.get(MARKED_GRAPH)
    if marked is not None:   # np.dot's marks, for executables of other input layouts
        meta["marked_graph"], blobs["marked_constants"] = pack_graph(marked)
    return Artifact(meta, blobs)


def deserialize(artifact: Artifact):
    """Regenerate the executable; FrameError(INTERNAL) unless the code generator
    writes exactly the source that was stored."""

    meta = artifact.meta
    if meta.get("format") != FORMAT:
        raise FrameError(ErrorCode.INTERNAL, f"cpu artifact format {meta.get('format')!r}, "
                                             f"expected {FORMAT}")
    graph = unpack_graph(meta["graph"], artifact.blobs["constants"])
    if "marked_graph" in meta:
        graph.meta[MARKED_GRAPH] = unpack_graph(meta["marked_graph"],
                                                artifact.blobs["marked_constants"])
    plan = plan_from_json(meta["plan"])
    exe = build_executable(graph, plan)  # validates the plan against the graph
    if _sha256(exe.source) != meta["source_sha256"]:
        raise FrameError(ErrorCode.INTERNAL, "cpu artifact: the code generator no longer writes "
                                             "the stored source (a different frame version?)")
    return exe
