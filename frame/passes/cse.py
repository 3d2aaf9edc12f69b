"""common_subexpression_elimination: one node per distinct computation.

Two nodes are the same when op, inputs, attrs (and a constant's payload, or a
fused node's body) are equal.  For commutative ops the key uses the inputs in
a canonical order, so ``add(a, b)`` and ``add(b, a)`` meet; the node itself
keeps its operand order (x86 returns the first operand's NaN, so reordering
would change NaN signs).  Ops with side effects are never merged.
"""
from __future__ import annotations

import hashlib

from ..ir.graph import Graph, Node
from ..ir.text import dump_text
from ..ops.registry import get_schema
from .base import Pass

__all__ = ["CommonSubexpressionElimination"]


def _payload_key(node: Node):
    if node.const is not None:
        c = node.const
        return ("const", c.dtype.str, c.shape, hashlib.sha256(c.tobytes()).hexdigest())
    if node.body is not None:
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
            if schema.has("has_side_effect"):
                continue
            operands = tuple(id(v) for v in node.inputs)
            if schema.has("commutative") and len(node.inputs) == 2:
                operands = tuple(sorted(operands, key=lambda i: position[i]))
            key = (node.op, operands,
                   tuple(sorted((k, repr(v)) for k, v in node.attrs.items())),
                   node.device, node.errstate, _payload_key(node))
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
