"""backend_lowering: every node must be supported by the target backend.

Otherwise ``FrameError(UNIMPLEMENTED)`` names the first unsupported op and the
backend; ``err.unsupported`` lists every unsupported node and ``err.graph`` is
the planned graph, so the runtime's fallback chain can partition it without
running the pipeline again.
"""
from __future__ import annotations

from ..errors import ErrorCode, FrameError
from ..ir.graph import Graph
from .base import Pass

__all__ = ["BackendLowering", "UnsupportedOps"]


class UnsupportedOps(FrameError):
    """UNIMPLEMENTED, with the unsupported nodes attached."""

    def __init__(self, message: str, backend: str, nodes: list, graph: Graph | None = None):
        super().__init__(ErrorCode.UNIMPLEMENTED, message)
        self.backend = backend
        self.unsupported = nodes
        self.graph = graph

    def with_message(self, message: str) -> "UnsupportedOps":
        return UnsupportedOps(message, self.backend, self.unsupported, self.graph)


class BackendLowering(Pass):
    name = "backend_lowering"

    def __init__(self, backend):
        self.backend = backend

    def run(self, graph: Graph) -> Graph:
        bad = [n for n in graph.nodes if not self.backend.supports(n)]
        if bad:
            # name an op that computes: a constant the backend refuses (say, float64)
            # is only a value, materialised by the fallback chain, never a kernel
            first = next((n for n in bad if n.op != "constant"), bad[0])
            types = ", ".join(str(v.type) for v in first.inputs) or "no inputs"
            more = f" (and {len(bad) - 1} more node(s))" if len(bad) > 1 else ""
            raise UnsupportedOps(f"op '{first.op}' ({types}) is not supported by backend "
                                 f"'{self.backend.name}'{more}", self.backend.name, bad, graph)
        return graph
