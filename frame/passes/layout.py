"""layout_assignment: give every layout-sensitive reader its operands in the
memory layout NumPy would give them.

What it decides.  NumPy's result bits can depend on the strides of an
intermediate (``frame/ops/layout.py``): ``lr * X.T`` is Fortran-ordered, so
``lr * X.T @ err`` runs gemv with the transpose flag; ``(X.T * 2).sum(1)`` and
``X[:, 1:5].sum()`` add in memory order.  The pass computes, for every value,
the strides NumPy gives it when the user's code runs op by op
(``ops.layout.numpy_layouts``: views stay views, elementwise results follow
their operands in "K" order, reductions and sorts too, matrix products are
C-ordered; constants as their arrays are, inputs taken C-ordered), and the
strides the value has in the cpu executable (``_frame_layouts``: C order; a
transpose of a C-ordered value its permuted strides; unknown for what is
computed from a value that is not C-ordered).  Before every
layout-sensitive node (``ops.layout.layout_sensitive``: any op but elementwise
ones and data movement) each operand whose two layouts differ is copied by a
``relayout`` node into NumPy's strides, so the node makes the kernel call NumPy
makes on the same strides and gets NumPy's bits.  One relayout serves every
reader of a value.  ``graph.meta['layout']`` records the number of relayouts.

Copies (op ``copy {order}``: NumPy's copy of an array, in NumPy's order) are
replaced: by their input where that has the copy's strides in the executable
and the copy is no graph output, else by a ``relayout`` into NumPy's strides of
the copy (``_lower_copies``); other pipelines drop them.

It also removes the ``dot_operand`` marks ``np.dot`` puts on its operands (NumPy's
dot copies an operand that is neither C- nor Fortran-contiguous to C order): a
reader of a mark reads the mark's input, relayouted into the mark's NumPy
strides where they differ.  Under OpenVINO it only removes them.

Only for the cpu backend (``insert=True``): OpenVINO's kernels are not NumPy's
anyway (docs/openvino.md), so its pipeline records nothing and inserts nothing.
The all-C-ordered graph -- no transposed or sliced operand reaching a
reduction or matmul through an elementwise op -- gets no relayout and runs as
before.

Input layouts are an assumption (C order, or ``inputs``: the arrays' own) that
the cpu executable checks: ``ops.layout.pinned_inputs`` names the inputs whose
layout reaches a layout-sensitive node through another op, and the generated
code compares their strides on entry; other strides run an executable compiled
for them, this pass run again with those arrays' layouts
(``backends/cpu/codegen.py``, ``_LayoutVariants``).

What it does not decide: where a relayout's copy is avoided (the cpu codegen
writes an elementwise result a relayout reads in the relayout's strides, and
the relayout is then a view), and no pass places layout-changing transposes
(NHWC convolution, blocked layouts).  Transposes the cpu codegen reads as
views are ``memory_planning``'s and ``codegen.transpose_view``'s.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..ir.clone import clone_graph
from ..ir.graph import Graph, Node, Value
from ..ops.layout import (element_strides, layout_sensitive, numpy_layouts, same_layout,
                          standard_element_strides)
from ..ops.registry import get_schema
from .base import Pass

__all__ = ["LayoutAssignment", "LayoutFacts", "without_relayouts", "MARKED_GRAPH"]

# graph.meta key: the graph as layout_assignment got it, np.dot's marks included
MARKED_GRAPH = "layout_marked_graph"


# ops whose result is C-ordered in the cpu executable whatever their operands' layout
# (slice, reshape, squeeze and expand_dims are views of a C-ordered operand there,
# and of another operand may be views with its strides: not listed)
_C_RESULTS = frozenset({"matmul"})
# ops the cpu codegen may run as views of their operand (memplan.is_view_node)
_CODEGEN_VIEWS = frozenset({"transpose", "slice", "reshape", "squeeze", "expand_dims"})


class LayoutFacts(NamedTuple):
    """``graph.meta['layout']``: how many ``relayout`` nodes the pass inserted."""
    relayouts: int


def _frame_layouts(graph: Graph, inputs: Sequence[np.ndarray | None] | None,
                   numpy: dict[int, np.ndarray]) -> dict[int, tuple[int, ...] | None]:
    """``id(value) -> element strides`` the value has in the cpu executable (and the
    interpreter) when the inputs have the layouts of ``inputs`` (arrays or
    stand-ins; None, or a None entry: C order), or None where not known; a value
    missing is C-ordered.  A ``copy`` has NumPy's strides of the copy (``numpy``):
    ``_lower_copies`` makes it a relayout into them, or its input where that has
    them already."""
    other: dict[int, tuple[int, ...] | None] = {}   # the values that are not C-ordered
    for i, v in enumerate(graph.inputs):
        a = None if inputs is None else inputs[i]
        if a is not None and not same_layout(v.type.shape, element_strides(a),
                                             standard_element_strides(v.type.shape)):
            other[id(v)] = element_strides(a)
    for node in graph.nodes:
        if node.op == "constant" and node.const is not None and len(node.outputs) == 1:
            c, out = node.const, node.outputs[0]
            if c.shape != out.type.shape:
                other[id(out)] = None
            elif not c.flags.c_contiguous:
                other[id(out)] = element_strides(c)
            continue
        if node.op == "transpose" and node.body is None and id(node.inputs[0]) not in other:
            # the view of a C-ordered array, or the kernel's copy laid out like it
            src = standard_element_strides(node.inputs[0].type.shape)
            other[id(node.outputs[0])] = tuple(src[p] for p in node.attrs["perm"])
            continue
        if node.op == "relayout":
            other[id(node.outputs[0])] = tuple(node.attrs["strides"])
            continue
        if node.op == "copy":
            out = node.outputs[0]
            if not numpy[id(out)].flags.c_contiguous:
                other[id(out)] = element_strides(numpy[id(out)])
            continue
        # C order: a result of C-ordered operands (kernels and the codegen's out=
        # arrays; ops/shape.py), a matrix product, a fresh vector; else a kernel
        # may follow its operands' order (K order), a view their strides
        if node.op in _C_RESULTS or not any(id(v) in other for v in node.inputs):
            continue
        for v in node.outputs:
            if v.type.rank > 1 or node.op in _CODEGEN_VIEWS:
                other[id(v)] = None
    return other


class LayoutAssignment(Pass):
    """Insert ``relayout`` nodes where a layout-sensitive node would read an operand
    in another layout than NumPy's (``insert=True``: the cpu pipeline); see the
    module docstring."""

    name = "layout_assignment"

    def __init__(self, insert: bool = False,
                 inputs: Sequence[np.ndarray | None] | None = None):
        self.insert = insert
        self.inputs = inputs   # the graph inputs' layouts (arrays or stand-ins); None: C order

    def run(self, graph: Graph) -> Graph:
        # an np.dot operand marker is read as its input: through a relayout into the
        # strides it gives, when the input's differ (ops/layout.py)
        marked = {id(n.outputs[0]): n.inputs[0] for n in graph.nodes if n.op == "dot_operand"}
        copies = any(n.op == "copy" for n in graph.nodes)
        if self.insert and (marked or copies):
            # the marks and copies are gone after this pass: an executable compiled
            # again for other input layouts starts from this graph (codegen._LayoutVariants)
            graph.meta[MARKED_GRAPH] = clone_graph(graph)
        if not self.insert:
            _unmark(graph, marked)
            _bypass(graph, "copy")   # the same elements; layouts are the cpu tier's business
            graph.meta["layout"] = LayoutFacts(0)
            return graph
        if not copies and not any(layout_sensitive(n) or n.op == "transpose" for n in graph.nodes) \
                and self.inputs is None:
            # all C-ordered: no reader and no result can see another layout
            _unmark(graph, marked)
            graph.meta["layout"] = LayoutFacts(0)
            return graph
        numpy = numpy_layouts(graph, self.inputs)
        other = _frame_layouts(graph, self.inputs, numpy)
        made: dict[tuple[int, tuple[int, ...]], Value] = {}   # (id(value), strides) -> relayout
        nodes: list[Node] = []
        for node in graph.nodes:
            if layout_sensitive(node):
                inputs = list(node.inputs)
                for i, v in enumerate(inputs):
                    src = marked.get(id(v), v)
                    inputs[i] = src
                    if id(src) not in other and numpy[id(v)].flags.c_contiguous:
                        continue   # C-ordered in both (the common case, checked cheaply)
                    want = element_strides(numpy[id(v)])
                    have = other.get(id(src), standard_element_strides(src.type.shape))
                    if have is not None and same_layout(src.type.shape, want, have):
                        continue
                    if (id(src), want) not in made:
                        copy = Node("relayout", [src], {"strides": want}, device=node.device)
                        copy.backward = node.backward
                        copy.set_output_types(get_schema("relayout").infer([src.type], copy.attrs))
                        nodes.append(copy)
                        made[(id(src), want)] = copy.outputs[0]
                    inputs[i] = made[(id(src), want)]
                node.inputs = tuple(inputs)
            nodes.append(node)
        graph.nodes = nodes
        _unmark(graph, marked)
        made_copies = _lower_copies(graph, numpy, other)
        made_outputs = _relayout_outputs(graph, numpy, other)
        graph.meta["layout"] = LayoutFacts(len(made) + made_copies + made_outputs)
        return graph


def _relayout_outputs(graph: Graph, numpy: dict[int, np.ndarray],
                      other: dict[int, tuple[int, ...] | None]) -> int:
    """Give every graph output that NumPy lays out densely in another order than
    the executable (``x.T * 2`` and ``(g * w).T`` are Fortran-ordered in NumPy) a
    ``relayout`` into NumPy's strides: the caller (``.flags``, ``.strides``,
    ``np.nditer``'s order, ``.tobytes()``...) sees NumPy's array.  A graph input
    returned is the caller's own array; a value NumPy makes as a view with gaps
    (``a[:, 1:-1]`` of a computed ``a``) or reversed strides keeps the executable's
    layout (a relayout makes dense arrays only).  Returns the number of relayouts."""
    inputs = {id(v) for v in graph.inputs}
    made: dict[int, Value] = {}
    for v in graph.outputs:
        if id(v) in inputs or id(v) in made or id(v) not in numpy or v.type.rank < 2:
            continue
        s = numpy[id(v)]
        if s.flags.c_contiguous:
            if id(v) not in other:
                continue   # C-ordered in both (the common case, checked cheaply)
        want = element_strides(s)
        if not same_layout(v.type.shape, want, element_strides(np.empty_like(s))):
            continue   # not dense: a view with gaps or reversed strides
        have = other.get(id(v), standard_element_strides(v.type.shape))
        if have is not None and same_layout(v.type.shape, want, have):
            continue
        node = Node("relayout", [v], {"strides": want}, device=v.producer.device if v.producer is not None else None)
        node.set_output_types(get_schema("relayout").infer([v.type], node.attrs))
        graph.nodes.append(node)
        made[id(v)] = node.outputs[0]
    if made:
        graph.outputs = [made.get(id(v), v) for v in graph.outputs]
    return len(made)


def _lower_copies(graph: Graph, numpy: dict[int, np.ndarray],
                  other: dict[int, tuple[int, ...] | None]) -> int:
    """Replace every ``copy`` node of ``graph`` (in place): a ``relayout`` into
    NumPy's strides of the copy; or, for a copy that is no graph output whose input
    has those strides in the executable already, its input itself (the same elements
    laid out alike: readers cannot tell; ``pinned_inputs`` pins an input a copy
    reads, so the strides assumed are checked).  Returns the number of relayouts."""
    outputs = {id(v) for v in graph.outputs}
    source: dict[int, Value] = {}
    nodes: list[Node] = []
    relayouts = 0
    for node in graph.nodes:
        if source and any(id(v) in source for v in node.inputs):
            node.inputs = tuple(source.get(id(v), v) for v in node.inputs)
        if node.op != "copy" or node.body is not None:
            nodes.append(node)
            continue
        out, src = node.outputs[0], node.inputs[0]
        want = element_strides(numpy[id(out)])
        have = other.get(id(src), standard_element_strides(src.type.shape))
        if id(out) not in outputs and have is not None and same_layout(src.type.shape, want, have):
            source[id(out)] = src
            continue
        copy = Node("relayout", [src], {"strides": want}, device=node.device)
        copy.backward = node.backward
        copy.set_output_types(get_schema("relayout").infer([src.type], copy.attrs))
        nodes.append(copy)
        source[id(out)] = copy.outputs[0]
        relayouts += 1
    graph.nodes = nodes
    graph.outputs = [source.get(id(v), v) for v in graph.outputs]
    return relayouts


def _bypass(graph: Graph, op: str) -> Graph:
    """``graph`` (changed in place) without its top-level ``op`` nodes, ops whose
    result has its input's elements: their readers (and the graph outputs) read
    the input instead."""
    source: dict[int, Value] = {}
    nodes: list[Node] = []
    for node in graph.nodes:
        if source and any(id(v) in source for v in node.inputs):
            node.inputs = tuple(source.get(id(v), v) for v in node.inputs)
        if node.op == op and node.body is None:
            source[id(node.outputs[0])] = node.inputs[0]
        else:
            nodes.append(node)
    if source:
        graph.nodes = nodes
        graph.outputs = [source.get(id(v), v) for v in graph.outputs]
    return graph


def _unmark(graph: Graph, marked: dict[int, Value]) -> None:
    """Remove the ``dot_operand`` nodes; their other readers read their input."""
    if marked:
        _bypass(graph, "dot_operand")


def without_relayouts(graph: Graph) -> Graph:
    """``graph`` (changed in place) with its ``relayout`` nodes removed, their
    readers reading the relayouts' inputs: the same values, no layout decided
    (``layout_assignment`` can then decide again, for other input layouts)."""
    return _bypass(graph, "relayout")


def without_fused(graph: Graph) -> Graph:
    """``graph`` (changed in place) with every ``fused`` node's body inlined in its
    place, recursively: the nodes ``operator_fusion`` grouped, computing the same
    values (``layout_assignment`` sees every node again; fusion can then group
    them anew)."""
    values: dict[int, Value] = {}   # id(value of a replaced node or body) -> its value now
    nodes: list[Node] = []

    def inline(body_nodes: list[Node], outer_of: dict[int, Value], backward: bool) -> None:
        for node in body_nodes:
            inputs = [outer_of.get(id(v), values.get(id(v), v)) for v in node.inputs]
            if node.body is not None and node.op == "fused":
                inner = {id(bv): v for bv, v in zip(node.body.inputs, inputs)}
                inline(node.body.nodes, inner, backward or node.backward)
                for out, bout in zip(node.outputs, node.body.outputs):
                    values[id(out)] = inner.get(id(bout), values.get(id(bout), bout))
                continue
            copy = Node(node.op, inputs, node.attrs, const=node.const, body=node.body,
                        device=node.device, errstate=node.errstate)
            copy.backward = node.backward or backward
            copy.outputs = tuple(Value(v.type, copy, v.index, v.name) for v in node.outputs)
            for old, fresh in zip(node.outputs, copy.outputs):
                values[id(old)] = fresh
            nodes.append(copy)

    inline(graph.nodes, {}, False)
    graph.nodes = nodes
    graph.outputs = [values.get(id(v), v) for v in graph.outputs]
    return graph
