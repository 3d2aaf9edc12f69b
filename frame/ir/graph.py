"""Graph, Node and Value: frame's SSA intermediate representation.

A Graph holds its input Values, a topologically ordered list of Nodes and its
output Values.  Values are identified by object identity; textual ids (``%3``)
are assigned by ``dump_text`` in definition order, so two builds of the same
graph print the same text.  Mutation goes through the few named methods here.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .types import TensorType

__all__ = ["Value", "Node", "Graph", "ERR_CATEGORIES", "ERR_MODES", "errstate_ok"]

# NumPy's floating-point error categories and modes (np.seterr), for Node.errstate
ERR_CATEGORIES = ("divide", "over", "under", "invalid")
ERR_MODES = ("ignore", "warn", "raise", "call", "print", "log")


def errstate_ok(errstate: Any) -> bool:
    """Is ``errstate`` a valid ``Node.errstate``: None, or a non-empty tuple of
    ``(category, mode)`` pairs sorted by category, each category at most once?"""
    if errstate is None:
        return True
    return (type(errstate) is tuple and len(errstate) > 0
            and all(type(p) is tuple and len(p) == 2 and p[0] in ERR_CATEGORIES
                    and p[1] in ERR_MODES for p in errstate)
            and [p[0] for p in errstate] == sorted({p[0] for p in errstate}))


class Value:
    """An SSA value: produced by one node output or one graph input."""

    __slots__ = ("type", "producer", "index", "name")

    def __init__(self, type: TensorType, producer: "Node | None" = None, index: int = 0,
                 name: str | None = None):
        self.type = type
        self.producer = producer      # None for graph inputs
        self.index = index            # output index on the producer, or input position
        self.name = name              # optional hint (capture sources); not printed

    def __repr__(self) -> str:
        where = self.producer.op if self.producer is not None else "input"
        return f"<Value {self.type} from {where}#{self.index}>"


class Node:
    """One operation.  ``const`` holds a constant node's payload; ``body`` a fused
    node's sub-graph; ``device`` is None to inherit the graph's device.

    ``backward`` marks a node that autograd appended to compute gradients
    (``frame.autograd.backward``); passes carry it to the nodes they derive
    from marked ones.  It only feeds statistics (the forward/backward fused
    node counts); it is not part of the graph's text or identity, so a graph
    parsed back from text has every node unmarked.

    ``errstate`` is NumPy's floating-point error state the node runs under
    where the traced code set one (``with np.errstate(divide="ignore")``):
    the modes it sets, as sorted ``(category, mode)`` pairs (a category not
    named keeps the caller's mode), or None for the caller's state.  It is
    part of the graph's text and identity (`` !errstate(...)``); passes carry
    it to the nodes they derive from a node, never merge nodes of different
    states, and a fused body keeps each member's (docs/compiler.md, "Passes")."""

    __slots__ = ("op", "inputs", "outputs", "attrs", "const", "body", "device", "backward",
                 "errstate")

    def __init__(self, op: str, inputs: Sequence[Value], attrs: Mapping[str, Any] | None = None,
                 const: np.ndarray | None = None, body: "Graph | None" = None,
                 device: str | None = None,
                 errstate: "tuple[tuple[str, str], ...] | None" = None):
        self.op = op
        self.inputs: tuple[Value, ...] = tuple(inputs)
        self.outputs: tuple[Value, ...] = ()
        self.attrs: dict[str, Any] = dict(attrs or {})
        self.const = const
        self.body = body
        self.device = device
        self.backward = False
        self.errstate = errstate

    @property
    def output(self) -> Value:
        """The single output (most ops have exactly one)."""
        if len(self.outputs) != 1:
            raise ValueError(f"node '{self.op}' has {len(self.outputs)} outputs, not one")
        return self.outputs[0]

    def set_output_types(self, types: Iterable[TensorType]) -> tuple[Value, ...]:
        self.outputs = tuple(Value(t, self, i) for i, t in enumerate(types))
        return self.outputs

    def __repr__(self) -> str:
        ins = ", ".join(str(v.type) for v in self.inputs)
        outs = ", ".join(str(v.type) for v in self.outputs)
        return f"<Node {self.op}({ins}) -> {outs}>"


class Graph:
    """Inputs, topologically ordered nodes, outputs, and one device.

    ``meta`` holds analysis results that passes hand to backends (the memory
    plan, the layout decision); it is not part of the graph's text or identity.
    """

    __slots__ = ("inputs", "nodes", "outputs", "device", "meta")

    def __init__(self, device: str = "cpu"):
        self.inputs: list[Value] = []
        self.nodes: list[Node] = []
        self.outputs: list[Value] = []
        self.device = device
        self.meta: dict = {}

    # -- construction -------------------------------------------------------
    def add_input(self, type: TensorType, name: str | None = None) -> Value:
        v = Value(type, None, len(self.inputs), name)
        self.inputs.append(v)
        return v

    def append(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def set_outputs(self, values: Iterable[Value]) -> None:
        self.outputs = list(values)

    # -- rewriting ------------------------------------------------------------
    def replace_all_uses(self, old: Value, new: Value) -> None:
        """Make every user of ``old`` (nodes and graph outputs) use ``new``."""
        for node in self.nodes:
            if old in node.inputs:
                node.inputs = tuple(new if v is old else v for v in node.inputs)
        self.outputs = [new if v is old else v for v in self.outputs]

    def remove_nodes(self, dead: Iterable[Node]) -> None:
        dead_ids = {id(n) for n in dead}
        self.nodes = [n for n in self.nodes if id(n) not in dead_ids]

    def users(self) -> dict[int, list[Node]]:
        """id(value) -> nodes that use it, in node order."""
        table: dict[int, list[Node]] = {}
        for node in self.nodes:
            for v in node.inputs:
                lst = table.setdefault(id(v), [])
                if not lst or lst[-1] is not node:
                    lst.append(node)
        return table

    # -- queries ----------------------------------------------------------------
    def values(self) -> list[Value]:
        """Every defined value in definition order (inputs, then node outputs)."""
        out = list(self.inputs)
        for node in self.nodes:
            out.extend(node.outputs)
        return out

    def op_names(self) -> list[str]:
        return [n.op for n in self.nodes]

    def errstates(self) -> tuple:
        """The NumPy error states its nodes run under (``Node.errstate``,
        fused bodies included), each once, in node order; None stands for the
        caller's state.  Constants compute nothing and are left out.

            >>> from frame.ir import GraphBuilder
            >>> b = GraphBuilder(); x = b.input("float32", (2,))
            >>> b.build(b.op("log", x)).errstates()
            (None,)
        """
        seen: list = []
        for node in self.nodes:
            if node.body is not None:
                inner = node.body.errstates()
            elif node.op == "constant":
                continue
            else:
                inner = (node.errstate,)
            for state in inner:
                if state not in seen:
                    seen.append(state)
        return tuple(seen)

    # ``str(graph)`` is its ``dump_text`` (installed by text.py, which imports this module)

    def __repr__(self) -> str:
        return f"<Graph {len(self.inputs)} inputs, {len(self.nodes)} nodes, {len(self.outputs)} outputs>"
