"""operator_fusion: group elementwise chains, with the contraction they start
from or the reduction they end in, into ``fused`` nodes (regions).

A group grows from a root towards its inputs.  A producer joins the group
only when every user of its output is already inside the group and its
output is not a graph output; so a group computes exactly one value that
anything outside it sees (the root's output), nothing is computed twice, and
replacing the group by one node at the root's position keeps the graph
topologically ordered (every member and every member's outside input is
defined before the root).  Shared values *inside* a group are fine
(``x * sigmoid(x)`` with ``x`` produced in the group is one group), so groups
are trees or DAGs with a single exit.

Members, by kind (all: no ``has_side_effect``, one output, no payload, no
body -- a ``fused`` node is never fused again, which makes the pass
idempotent -- and the root's ``Node.device``).  Members keep their NumPy error
state (``Node.errstate``) in the body; the fused node carries it when all
share one, else None, and the cpu code switches the state between the body's
ufunc calls (the reference interpreter runs each body node in its own):

* elementwise: the schema has the ``fusable`` trait; roots and producers.
* a contraction head (``HEAD_OPS``: ``matmul``): joins as a producer, at most
  one per group, and its own operands stay outside (the region starts at
  it).  ``relu(x @ w + b)`` is one region; so is the backward's
  ``where(h > 0, g @ w, 0)`` (the activation gradient applied to the
  upstream gradient's matmul).  The cpu executable runs the head as BLAS with
  ``out=`` into the region's own array (a planned buffer) and the epilogue in
  place on it; OpenVINO gets the body inlined and applies its own
  MatMul+Add+activation fusions.
* a reduction root (``REDUCTION_ROOTS``: sum, mean, max, min, prod): a
  reduction may be the root of a group of elementwise producers (a reduction
  consuming an elementwise chain, e.g. ``sum((x - y) ** 2)``); a reduction is
  never a producer inside a group.

Groups whose members are all elementwise or a reduction root with its chain
are what this pass has always made; a group of one node stays as it is.

The new node is ``fused(<outside inputs>)`` with the root's output type and
the group as its body: body input ``i`` stands for the node's input ``i``
(outside values in order of first use), the body's single output is the
root's.  Constants feeding a group stay outside it, as inputs, so equal
constants remain shared and the memory planner sees them.  The fused node is
``Node.backward`` when its root is.

Statistics: ``graph.meta["fusion"]`` is a ``FusionSummary`` (op nodes before
the pass, fused nodes made, op nodes inside them, per phase: forward,
backward by ``Node.backward``, update: what reads a gradient after it); the runtime adds it to ``frame.stats()`` and
``frame.explain`` shows it.

Algorithm: roots are taken from the last node backwards.  For one root, the
candidate producers are visited in decreasing node position (a heap), which
guarantees that when a producer is examined, every user it has at a higher
position has already been accepted or rejected -- so the "all users inside"
test is final, and a group is found in O(members * log) after one
``users()`` table for the whole graph.
"""
from __future__ import annotations

import dataclasses
import heapq

from ..ir.graph import Graph, Node, Value
from ..ops.fused import FUSED
from ..ops.registry import lookup
from .base import Pass

__all__ = ["OperatorFusion", "find_groups", "FusionSummary", "PhaseCounts", "HEAD_OPS",
           "REDUCTION_ROOTS", "PHASES", "phases", "summarize"]

# ops that may start a region (a producer whose operands stay outside it)
HEAD_OPS = frozenset({"matmul"})
# reductions that may end a region of elementwise producers
REDUCTION_ROOTS = frozenset({"sum", "mean", "max", "min", "prod"})


def _plain(node: Node) -> bool:
    if node.body is not None or node.const is not None or len(node.outputs) != 1:
        return False
    schema = lookup(node.op)
    return schema is not None and not schema.has("has_side_effect")


def _fusable(node: Node) -> bool:
    return _plain(node) and lookup(node.op).has("fusable")


def _head(node: Node) -> bool:
    return node.op in HEAD_OPS and _plain(node)


def _reduction_root(node: Node) -> bool:
    return node.op in REDUCTION_ROOTS and _plain(node)


@dataclasses.dataclass(frozen=True)
class PhaseCounts:
    """One phase's fusion: ``ops`` op nodes before the pass (constants not
    counted), ``fused`` fused nodes made (rooted in the phase), ``fused_ops``
    of the phase's op nodes that went into fused nodes (of any phase: a
    gradient's matmul may head an update region)."""
    ops: int = 0
    fused: int = 0
    fused_ops: int = 0

    @property
    def fraction(self) -> float:
        """The share of the phase's op nodes that run inside fused nodes."""
        return self.fused_ops / self.ops if self.ops else 0.0

    def __add__(self, other: "PhaseCounts") -> "PhaseCounts":
        return PhaseCounts(self.ops + other.ops, self.fused + other.fused,
                           self.fused_ops + other.fused_ops)


PHASES = ("forward", "backward", "update")


@dataclasses.dataclass(frozen=True)
class FusionSummary:
    """``operator_fusion``'s counts per phase: ``backward`` nodes are those
    autograd appended (``Node.backward``); ``update`` nodes are the others that
    read a gradient (directly or not: an optimizer step after a backward);
    ``forward`` is the rest."""
    forward: PhaseCounts = PhaseCounts()
    backward: PhaseCounts = PhaseCounts()
    update: PhaseCounts = PhaseCounts()

    def __add__(self, other: "FusionSummary") -> "FusionSummary":
        return FusionSummary(*(getattr(self, p) + getattr(other, p) for p in PHASES))

    def __str__(self) -> str:
        def one(name: str, c: PhaseCounts) -> str:
            return (f"{name} {c.fused} fused nodes, {c.fused_ops} of {c.ops} ops fused "
                    f"({c.fraction:.0%})")
        return "; ".join(one(p, getattr(self, p)) for p in PHASES)


def _is_op(node: Node) -> bool:
    return node.const is None and node.op != "constant"


def phases(graph: Graph) -> dict[int, str]:
    """id(node) -> its phase (see ``FusionSummary``)."""
    phase: dict[int, str] = {}
    after = set()   # ids of values that depend on a gradient
    for n in graph.nodes:
        if n.backward:
            phase[id(n)] = "backward"
        elif any(id(v) in after for v in n.inputs):
            phase[id(n)] = "update"
        else:
            phase[id(n)] = "forward"
        if phase[id(n)] != "forward":
            after.update(id(v) for v in n.outputs)
    return phase


def summarize(graph: Graph, groups: list[list[Node]]) -> FusionSummary:
    """The counts for fusing ``groups`` in ``graph`` (before the rewrite)."""
    phase = phases(graph)
    counts = {p: [0, 0, 0] for p in PHASES}
    for n in graph.nodes:
        if _is_op(n):
            counts[phase[id(n)]][0] += 1
    for g in groups:
        counts[phase[id(g[-1])]][1] += 1   # a fused node is in its root's phase
        for n in g:                        # its members each in their own
            counts[phase[id(n)]][2] += 1
    return FusionSummary(*(PhaseCounts(*counts[p]) for p in PHASES))


def find_groups(graph: Graph) -> list[list[Node]]:
    """The fusion groups of ``graph`` (two nodes or more), each in node order,
    its last node being the root whose output the group produces."""
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    users = graph.users()
    escaping = {id(v) for v in graph.outputs}
    fusable = {id(n) for n in graph.nodes if _fusable(n)}
    heads = {id(n) for n in graph.nodes if _head(n)}
    assigned: set[int] = set()
    groups: list[list[Node]] = []

    for root in reversed(graph.nodes):
        if id(root) in assigned or not (id(root) in fusable or _reduction_root(root)):
            continue
        members: dict[int, Node] = {id(root): root}
        decided: set[int] = {id(root)}
        heap: list[tuple[int, int, Node]] = []
        has_head = False

        def push_producers(node: Node) -> None:
            for v in node.inputs:
                p = v.producer
                if (p is not None and (id(p) in fusable or id(p) in heads)
                        and id(p) not in decided and id(p) not in assigned
                        and p.device == root.device):
                    heapq.heappush(heap, (-position[id(p)], id(p), p))

        push_producers(root)
        while heap:
            _, pid, producer = heapq.heappop(heap)
            if pid in decided:
                continue
            is_head = pid in heads
            if is_head and has_head:
                continue   # one contraction per region: this one stays outside
            decided.add(pid)
            out = producer.outputs[0]
            if id(out) in escaping:
                continue
            readers = users.get(id(out), ())
            # all readers inside; none a head (a head's operands stay outside)
            if all(id(u) in members and id(u) not in heads for u in readers):
                members[pid] = producer
                if is_head:
                    has_head = True   # its operands stay outside the region
                else:
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
        copy = Node(n.op, [mapping[id(v)] for v in n.inputs], n.attrs, device=n.device,
                    errstate=n.errstate)
        copy.set_output_types(v.type for v in n.outputs)
        body.append(copy)
        for old, new in zip(n.outputs, copy.outputs):
            mapping[id(old)] = new
    root = group[-1]
    body.set_outputs([mapping[id(root.outputs[0])]])
    # one error state for the region where its members share one; else each member
    # keeps its own in the body, and the backends switch between them
    same = all(n.errstate == root.errstate for n in group)
    node = Node(FUSED, outer, {}, body=body, device=root.device,
                errstate=root.errstate if same else None)
    node.backward = root.backward
    node.set_output_types([root.outputs[0].type])
    return node


class OperatorFusion(Pass):
    """Replace maximal single-exit groups (regions) by ``fused`` nodes and
    record their counts in ``graph.meta["fusion"]``.

    ``enabled=False`` (``CompileOptions(fusion=False)``) makes it a no-op.
    """

    name = "operator_fusion"

    def __init__(self, enabled: bool = True):
        self.enabled = enabled

    def run(self, graph: Graph) -> Graph:
        if not self.enabled:
            return graph
        groups = find_groups(graph)
        graph.meta["fusion"] = summarize(graph, groups)
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
