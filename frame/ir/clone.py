"""clone_graph: a structural deep copy of a graph.

New Graph, Node and Value objects; attrs dicts are copied (their values are
immutable by V7); constant payloads are shared (payloads are treated as
immutable everywhere); fused bodies are cloned recursively; ``Graph.meta`` is
copied shallowly.  Passes clone before rewriting when they must keep the input
graph intact (e.g. the compile cache holds the original).
"""
from __future__ import annotations

from .graph import Graph, Node, Value

__all__ = ["clone_graph", "clone_graph_with_map"]


def clone_graph(graph: Graph) -> Graph:
    """A copy of ``graph`` that shares no mutable structure with it.

        >>> from frame.ir import GraphBuilder, dump_text
        >>> b = GraphBuilder(); x = b.input("float32", (2,))
        >>> g = b.build(b.op("exp", x))
        >>> dump_text(clone_graph(g)) == dump_text(g)
        True
    """
    return clone_graph_with_map(graph)[0]


def clone_graph_with_map(graph: Graph) -> tuple[Graph, dict[Value, Value]]:
    """``(copy, old value -> new value)`` for every value defined in ``graph``
    (not in fused bodies, which are separate scopes).  Values compare by
    identity, so the map is keyed by the original Value objects.

    Raises ValueError if a node or output uses a value the graph does not
    define (``verify`` reports that as V1).
    """
    new = Graph(graph.device)
    meta = getattr(graph, "meta", None)
    if meta is not None:
        new.meta = dict(meta)
    vmap: dict[Value, Value] = {}
    for v in graph.inputs:
        vmap[v] = new.add_input(v.type, v.name)
    for node in graph.nodes:
        try:
            inputs = [vmap[v] for v in node.inputs]
        except KeyError as err:
            raise ValueError(f"clone_graph: node '{node.op}' uses {err.args[0]!r}, which is not "
                             "defined before it in this graph") from None
        body = clone_graph(node.body) if node.body is not None else None
        copy = Node(node.op, inputs, node.attrs, const=node.const, body=body, device=node.device,
                    errstate=node.errstate)
        copy.backward = node.backward
        copy.outputs = tuple(Value(v.type, copy, v.index, v.name) for v in node.outputs)
        for old, fresh in zip(node.outputs, copy.outputs):
            vmap[old] = fresh
        new.append(copy)
    try:
        new.set_outputs([vmap[v] for v in graph.outputs])
    except KeyError as err:
        raise ValueError(f"clone_graph: graph output {err.args[0]!r} is not defined in this "
                         "graph") from None
    return new, vmap
