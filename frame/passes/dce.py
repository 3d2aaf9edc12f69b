"""dead_node_elimination: drop nodes no output depends on.

Graph inputs are always kept (they are the executable's calling convention),
and so are nodes with side effects.
"""
from __future__ import annotations

from ..ir.graph import Graph
from ..ops.registry import get_schema
from .base import Pass

__all__ = ["DeadNodeElimination"]


class DeadNodeElimination(Pass):
    name = "dead_node_elimination"

    def run(self, graph: Graph) -> Graph:
        live = {id(v) for v in graph.outputs}
        kept = []
        for node in reversed(graph.nodes):
            needed = any(id(v) in live for v in node.outputs)
            if not needed and node.body is None and get_schema(node.op).has("has_side_effect"):
                needed = True
            if needed:
                kept.append(node)
                live.update(id(v) for v in node.inputs)
        kept.reverse()
        graph.nodes = kept
        return graph
