"""constant_folding: evaluate nodes whose inputs are all constants with the
reference kernels and replace them by constant nodes.

Ops with side effects are never folded, nor a node whose kernel raises for its
constant inputs (it raises when the graph runs).  A fold that would materialise a
large constant much bigger than its inputs (a broadcast of a scalar to a big
shape, say) is skipped: it would bloat the graph text and the cache key for
no gain.
"""
from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node
from ..ops.registry import get_schema
from ..ops.interpreter import evaluate
from .base import Pass

__all__ = ["ConstantFolding", "MAX_FOLDED_ELEMENTS"]

MAX_FOLDED_ELEMENTS = 1 << 16


def _foldable(node: Node) -> bool:
    if node.op == "constant":
        return False
    if node.body is None and get_schema(node.op).has("has_side_effect"):
        return False
    if node.body is not None and any(get_schema(n.op).has("has_side_effect") for n in node.body.nodes):
        return False
    if not all(v.producer is not None and v.producer.op == "constant" for v in node.inputs):
        return False
    out_size = sum(v.type.size for v in node.outputs)
    in_size = sum(v.type.size for v in node.inputs)
    return out_size <= MAX_FOLDED_ELEMENTS or out_size <= in_size


def _run_node(node: Node, args: list[np.ndarray]) -> list[np.ndarray]:
    if node.body is not None:
        return evaluate(node.body, args)
    return [np.asarray(o) for o in get_schema(node.op).reference(args, node.attrs)]


def _folding_state(node: Node):
    """Folding must not warn where running would not.  A node of a ``with
    np.errstate(...)`` block (``Node.errstate``) folds only where its state
    ignores what happens (an error it would warn about or raise is raised here,
    and the node is kept, to warn or raise when the graph runs); others fold
    silently."""
    if node.errstate is None:
        return np.errstate(all="ignore")
    ignored = {category: "ignore" for category, mode in node.errstate if mode == "ignore"}
    return np.errstate(**{"all": "raise", **ignored})


class ConstantFolding(Pass):
    name = "constant_folding"

    def run(self, graph: Graph) -> Graph:
        new_nodes: list[Node] = []
        for node in graph.nodes:
            if not _foldable(node):
                new_nodes.append(node)
                continue
            args = [v.producer.const for v in node.inputs]
            try:
                with _folding_state(node):
                    results = _run_node(node, args)
            except Exception:  # noqa: BLE001 - the kernel's own check (a singular matrix,
                # an index out of range): the node raises when the graph runs, where the
                # caller handles it (capture runs the call natively), not at compile time
                new_nodes.append(node)
                continue
            for out, value in zip(node.outputs, results):
                value = np.array(value, dtype=out.type.dtype.np, order="C")  # keeps 0-d
                const = Node("constant", (), {"dtype": out.type.dtype, "shape": out.type.shape},
                             const=value)
                const.set_output_types([out.type])
                new_nodes.append(const)
                graph.replace_all_uses(out, const.outputs[0])
        graph.nodes = new_nodes
        return graph
