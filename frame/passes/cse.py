"""common_subexpression_elimination: one node per distinct computation.

Two nodes are the same when op, inputs, attrs (and a constant's payload, or a
fused node's body) are equal.  Inputs of commutative ops are put in a
canonical order (by definition position) first, so ``add(a, b)`` and
``add(b, a)`` meet.  Ops with side effects are never merged.
"""
from __future__ import annotations

import hashlib

from ..ir.graph import Graph, Node
from ..ops.registry import get_schema
from .base import Pass

__all__ = ["CommonSubexpressionElimination"]


def _payload_key(node: Node):
    if node.const is not None:
        c = node.const
        return ("const", c.dtype.str, c.shape, hashlib.sha256(c.tobytes()).hexdigest())
    if node.body is not None:
        from ..ir.text import dump_text
        return ("body", dump_text(node.body))
    return None


class CommonSubexpressionElimination(Pass):
    name = "common_subexpression_elimination"

    def run(self, graph: Graph) -> Graph:
        position = {id(v): i for i, v in enumerate(graph.values())}
        seen: dict[tuple, Node] = {}
        dead: list[Node] = []
        for node in graph.nodes:
            schema = get_schema(node.op)
            if schema.has("commutative") and len(node.inputs) == 2:
                a, b = node.inputs
                if position[id(a)] > position[id(b)]:
                    node.inputs = (b, a)
            if schema.has("has_side_effect"):
                continue
            key = (node.op, tuple(id(v) for v in node.inputs),
                   tuple(sorted((k, repr(v)) for k, v in node.attrs.items())),
                   node.device, _payload_key(node))
            first = seen.get(key)
            if first is None:
                seen[key] = node
                continue
            for old, new in zip(node.outputs, first.outputs):
                graph.replace_all_uses(old, new)
            dead.append(node)
        if dead:
            graph.remove_nodes(dead)
        return graph
