"""memory_planning: lifetimes and buffer reuse for intermediates.

Runs the IR-level analysis (``frame.ir.memplan.plan_memory``) and hands the
plan to backends in ``graph.meta['memory_plan']``; the cpu executable
preallocates one array per planned buffer and writes into them with ``out=``,
and reads the plan's views (transposes that are not graph outputs) without
copying them.
"""
from __future__ import annotations

from ..ir.graph import Graph
from ..ir.memplan import plan_memory
from .base import Pass

__all__ = ["MemoryPlanning"]


class MemoryPlanning(Pass):
    name = "memory_planning"

    def run(self, graph: Graph) -> Graph:
        graph.meta["memory_plan"] = plan_memory(graph)
        return graph
