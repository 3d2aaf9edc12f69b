"""canonicalize: remove ops that do nothing and merge reshape chains.

Identity ops (a cast to the same dtype, a reshape/broadcast_to to the same
shape, an identity transpose, expand_dims/squeeze/flip with no axes, a full
slice, a zero pad, a one-input concat) are replaced by their input; a reshape
of a reshape reads the innermost input directly.  Only rewrites that are exact
for every value (NaN, -0.0) are made.
"""
from __future__ import annotations

from ..ir.graph import Graph, Node
from .base import Pass

__all__ = ["Canonicalize"]


def _is_identity(node: Node) -> bool:
    op, a = node.op, node.attrs
    if len(node.inputs) != 1 and op != "concat":
        return False
    if len(node.outputs) != 1:
        return False
    src, out = node.inputs[0].type, node.outputs[0].type
    if src != out:
        return False
    if op in ("cast", "reshape", "broadcast_to"):
        return True
    if op == "transpose":
        return a["perm"] == tuple(range(len(a["perm"])))
    if op in ("expand_dims", "squeeze", "flip"):
        return a["axes"] == ()
    if op == "pad":
        return all(p == 0 for p in a["pads"])
    if op == "slice":
        return all(st == 1 for st in a["steps"])  # same type and step 1: the whole axis
    if op == "concat":
        return len(node.inputs) == 1
    return False


class Canonicalize(Pass):
    name = "canonicalize"

    def run(self, graph: Graph) -> Graph:
        dead = []
        for node in graph.nodes:
            if _is_identity(node):
                graph.replace_all_uses(node.outputs[0], node.inputs[0])
                dead.append(node)
            elif node.op == "reshape":
                src = node.inputs[0].producer
                if src is not None and src.op == "reshape":
                    node.inputs = (src.inputs[0],)
        if dead:
            graph.remove_nodes(dead)
        return graph
