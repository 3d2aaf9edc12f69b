"""operator_fusion: group trees of elementwise/broadcast nodes into ``fused`` nodes.

A group grows from a root (a fusable node) towards its inputs.  A producer
joins the group only when every user of its output is already inside the
group and its output is not a graph output; so a group computes exactly one
value that anything outside it sees (the root's output), nothing is computed
twice, and replacing the group by one node at the root's position keeps the
graph topologically ordered (every member and every member's outside input is
defined before the root).  Shared values *inside* a group are fine
(``x * sigmoid(x)`` with ``x`` produced in the group is one group), so groups
are trees or DAGs with a single exit.

Fusable means: the schema has the ``fusable`` trait, no ``has_side_effect``,
one output, no payload and no body (a ``fused`` node is never fused again,
which makes the pass idempotent), and the same ``Node.device`` as the root.
Groups of one node stay as they are.

The new node is ``fused(<outside inputs>)`` with the root's output type and
the group as its body: body input ``i`` stands for the node's input ``i``
(outside values in order of first use), the body's single output is the
root's.  Constants feeding a group stay outside it, as inputs, so equal
constants remain shared and the memory planner sees them.

Algorithm: roots are taken from the last node backwards.  For one root, the
candidate producers are visited in decreasing node position (a heap), which
guarantees that when a producer is examined, every user it has at a higher
position has already been accepted or rejected -- so the "all users inside"
test is final, and a group is found in O(members * log) after one
``users()`` table for the whole graph.
"""
from __future__ import annotations

import heapq

from ..ir.graph import Graph, Node, Value
from ..ops.fused import FUSED
from ..ops.registry import lookup
from .base import Pass

__all__ = ["OperatorFusion", "find_groups"]


def _fusable(node: Node) -> bool:
    if node.body is not None or node.const is not None or len(node.outputs) != 1:
        return False
    schema = lookup(node.op)
    return schema is not None and schema.has("fusable") and not schema.has("has_side_effect")


def find_groups(graph: Graph) -> list[list[Node]]:
    """The fusion groups of ``graph`` (two nodes or more), each in node order,
    its last node being the root whose output the group produces."""
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    users = graph.users()
    escaping = {id(v) for v in graph.outputs}
    fusable = {id(n) for n in graph.nodes if _fusable(n)}
    assigned: set[int] = set()
    groups: list[list[Node]] = []

    for root in reversed(graph.nodes):
        if id(root) not in fusable or id(root) in assigned:
            continue
        members: dict[int, Node] = {id(root): root}
        decided: set[int] = {id(root)}
        heap: list[tuple[int, int, Node]] = []

        def push_producers(node: Node) -> None:
            for v in node.inputs:
                p = v.producer
                if (p is not None and id(p) in fusable and id(p) not in decided
                        and id(p) not in assigned and p.device == root.device):
                    heapq.heappush(heap, (-position[id(p)], id(p), p))

        push_producers(root)
        while heap:
            _, pid, producer = heapq.heappop(heap)
            if pid in decided:
                continue
            decided.add(pid)
            out = producer.outputs[0]
            if id(out) in escaping:
                continue
            if all(id(u) in members for u in users.get(id(out), ())):
                members[pid] = producer
                push_producers(producer)
        if len(members) > 1:
            assigned.update(members)
            groups.append(sorted(members.values(), key=lambda n: position[id(n)]))
    groups.reverse()  # in root order, so fused nodes are built front to back
    return groups


def _fused_node(group: list[Node], resolve: dict[int, Value], device_of_graph: str) -> Node:
    """One ``fused`` node computing ``group`` (members in node order, root last)."""
    inside = {id(v) for n in group for v in n.outputs}
    body = Graph(device_of_graph)
    outer: list[Value] = []
    mapping: dict[int, Value] = {}
    for n in group:
        for v in n.inputs:
            if id(v) not in inside and id(v) not in mapping:
                mapping[id(v)] = body.add_input(v.type, v.name)
                outer.append(resolve.get(id(v), v))
    for n in group:
        copy = Node(n.op, [mapping[id(v)] for v in n.inputs], n.attrs, device=n.device)
        copy.set_output_types(v.type for v in n.outputs)
        body.append(copy)
        for old, new in zip(n.outputs, copy.outputs):
            mapping[id(old)] = new
    root = group[-1]
    body.set_outputs([mapping[id(root.outputs[0])]])
    node = Node(FUSED, outer, {}, body=body, device=root.device)
    node.set_output_types([root.outputs[0].type])
    return node


class OperatorFusion(Pass):
    """Replace maximal single-exit groups of fusable nodes by ``fused`` nodes.

    ``enabled=False`` (``CompileOptions(fusion=False)``) makes it a no-op.
    """

    name = "operator_fusion"

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def run(self, graph: Graph) -> Graph:
        if not self.enabled:
            return graph
        groups = find_groups(graph)
        if not groups:
            return graph
        root_group = {id(g[-1]): g for g in groups}
        absorbed = {id(n) for g in groups for n in g[:-1]}
        resolve: dict[int, Value] = {}   # id(root output) -> the fused node's output
        nodes: list[Node] = []
        for node in graph.nodes:
            if id(node) in absorbed:
                continue
            group = root_group.get(id(node))
            if group is not None:
                fused = _fused_node(group, resolve, graph.device)
                resolve[id(node.outputs[0])] = fused.outputs[0]
                nodes.append(fused)
                continue
            if any(id(v) in resolve for v in node.inputs):
                node.inputs = tuple(resolve.get(id(v), v) for v in node.inputs)
            nodes.append(node)
        graph.nodes = nodes
        graph.outputs = [resolve.get(id(v), v) for v in graph.outputs]
        return graph
