"""memory_planning: lifetimes and buffer reuse for intermediates.

Runs the IR-level analysis (``frame.ir.memplan.plan_memory``) and hands the
plan to backends in ``graph.meta['memory_plan']``; the cpu executable
preallocates one array per planned buffer and writes into them with ``out=``,
and reads the plan's views (transposes that are not graph outputs) without
copying them.  ``donate`` (``CompileOptions.donate``: outputs the caller lets
the executable write into input arrays) is checked against the lifetimes and
kept in ``plan.donations`` where it holds.
"""
from __future__ import annotations

from typing import Sequence

from ..ir.graph import Graph
from ..ir.memplan import plan_memory
from .base import Pass

__all__ = ["MemoryPlanning"]


class MemoryPlanning(Pass):
    name = "memory_planning"

    def __init__(self, donate: Sequence[tuple[int, int]] = ()):
        self.donate = tuple(donate)

    def run(self, graph: Graph) -> Graph:
        graph.meta["memory_plan"] = plan_memory(graph, self.donate)
        return graph
