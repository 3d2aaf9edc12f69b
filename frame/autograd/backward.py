"""Reverse mode as a graph-to-graph transform (docs/design.md §9).

``build_backward_graph(graph, loss_index, wrt)`` clones ``graph`` and appends
the nodes that compute the gradient of one scalar output with respect to the
values in ``wrt``; the result's outputs are the forward outputs followed by
one gradient per ``wrt`` entry.  It is not a pass: it changes what the graph
computes, and it leaves its input untouched.

How the gradient graph is built:

1. Activity.  A value is *active* when it depends on a ``wrt`` value and the
   loss depends on it, both through floating or complex values only: integer
   and bool values carry no gradient (as in PyTorch and JAX), so
   ``where(x > 0, x, 0)`` or ``cast(argmax(x), float32)`` are fine --
   the comparison and the argmax are not on a gradient path.
2. Sweep.  Nodes are visited in reverse order.  A node with an active output
   that received a gradient and an active input calls its op's rule
   (``OpSchema.gradient``, registered by ``frame.autograd``); the rule's
   result for each active input is added to that input's gradient, so a
   value used several times gets the sum of its uses' contributions.
   Reaching an op that is non-differentiable, or has no rule, is a
   ``NonDifferentiableError`` naming the op and showing its line of IR.
3. Outputs.  A ``wrt`` value the loss does not depend on gets zeros of its
   shape and dtype.  Backward nodes no gradient output needs are dropped
   (rules build every input's gradient; the forward nodes are kept as they
   are); the result is checked with ``frame.ir.verify``.

Higher-order derivatives: gradient rules are built from ordinary ops, so the
result can be differentiated again -- add a node that makes a scalar from a
gradient output (a ``sum``, say), make it an output, and call
``build_backward_graph`` on that graph.
"""
from __future__ import annotations

import numbers
from typing import Sequence

from ..errors import ErrorCode, FrameError, FrameTypeError, FrameValueError
from ..ir.builder import GraphBuilder
from ..ir.clone import clone_graph_with_map
from ..ir.graph import Graph, Node, Value
from ..ir.text import dump_lines_with_sites
from ..ir.verify import verify
from ..ops.registry import get_schema
from .helpers import differentiable, zeros
from .registry import NonDifferentiableError, nondifferentiable_reason

__all__ = ["build_backward_graph"]


def build_backward_graph(graph: Graph, loss_index: int, wrt: Sequence[int | Value] | int | Value
                         ) -> Graph:
    """A new graph computing ``graph``'s outputs and then ``d loss / d w`` for each
    ``w`` in ``wrt``, where ``loss = graph.outputs[loss_index]``.

    ``loss_index`` indexes ``graph.outputs`` (negative counts from the end); the
    loss must be a 0-d floating-point value.  ``wrt`` is a list whose entries are
    graph input indices (ints) or Values of ``graph`` (graph inputs, or node
    outputs: the gradient with respect to an intermediate value); a single int
    or Value stands for a list of one.  Each must be floating or complex.

        >>> import numpy as np, frame
        >>> from frame.ir import GraphBuilder
        >>> from frame.ops.interpreter import evaluate
        >>> b = GraphBuilder(); x = b.input(frame.float64, (3,))
        >>> g = b.build(b.op("sum", b.op("mul", x, x), axes=(0,)))
        >>> grad = build_backward_graph(g, 0, [0])      # outputs: (loss, d loss / d x)
        >>> evaluate(grad, [np.array([1.0, 2.0, 3.0])])[1]
        array([2., 4., 6.])
    """
    loss = _loss_value(graph, loss_index)
    targets = _wrt_values(graph, wrt)
    result, vmap = clone_graph_with_map(graph)
    origin = dict(zip((id(n) for n in result.nodes), graph.nodes))
    forward_nodes = list(result.nodes)
    loss_c = vmap[loss]
    targets_c = [vmap[v] for v in targets]
    active = _active(forward_nodes, targets_c, loss_c)

    b = GraphBuilder(result)
    grads: dict[int, Value] = {id(loss_c): b.scalar(1.0, like=loss_c)}
    for node in reversed(forward_nodes):
        _backprop_node(b, node, active, grads, graph, origin)

    outputs = [grads[id(v)] if id(v) in grads else zeros(b, v.type.shape, v.type.dtype)
               for v in targets_c]
    result.set_outputs(list(result.outputs) + outputs)
    _drop_dead(result, len(forward_nodes))
    _mark_backward(result.nodes[len(forward_nodes):])
    verify(result)
    return result


# --------------------------------------------------------------------------- arguments

def _loss_value(graph: Graph, loss_index: int) -> Value:
    if isinstance(loss_index, bool) or not isinstance(loss_index, numbers.Integral):
        raise FrameTypeError(f"build_backward_graph: loss_index must be an int, got "
                             f"{type(loss_index).__name__} {loss_index!r}")
    n = len(graph.outputs)
    if not -n <= loss_index < n:
        raise FrameValueError(f"build_backward_graph: loss_index {loss_index} is out of range "
                              f"for a graph with {n} output(s)")
    loss = graph.outputs[loss_index]
    t = loss.type
    if t.dtype.kind != "f":
        raise FrameTypeError(f"build_backward_graph: the loss (output {loss_index}) must have a "
                             f"floating-point dtype, got {t}")
    if t.shape != ():
        raise FrameValueError(f"build_backward_graph: the loss (output {loss_index}) must be a "
                              f"scalar (0-d), got shape {list(t.shape)} ({t}); reduce it first, "
                              f"e.g. with sum or mean")
    return loss


def _wrt_values(graph: Graph, wrt) -> list[Value]:
    if isinstance(wrt, (Value, numbers.Integral)) and not isinstance(wrt, bool):
        wrt = [wrt]
    defined = {id(v) for v in graph.values()}
    out = []
    for k, w in enumerate(wrt):
        if isinstance(w, Value):
            if id(w) not in defined:
                raise FrameValueError(f"build_backward_graph: wrt[{k}] {w!r} is not a value of "
                                      f"this graph")
            what = f"wrt[{k}] ({w.type})"
        elif isinstance(w, numbers.Integral) and not isinstance(w, bool):
            n = len(graph.inputs)
            if not -n <= w < n:
                raise FrameValueError(f"build_backward_graph: wrt[{k}] = {w} is not an input "
                                      f"index of a graph with {n} input(s)")
            what = f"wrt[{k}] (graph input {w}, {graph.inputs[w].type})"
            w = graph.inputs[w]
        else:
            raise FrameTypeError(f"build_backward_graph: wrt entries are graph input indices or "
                                 f"Values, got {type(w).__name__} {w!r} at position {k}")
        if not differentiable(w):
            raise FrameTypeError(f"build_backward_graph: cannot differentiate with respect to "
                                 f"{what}: only floating and complex values have gradients")
        out.append(w)
    return out


# --------------------------------------------------------------------------- the sweep

def _active(nodes: list[Node], targets: list[Value], loss: Value) -> set[int]:
    """ids of the values on a floating/complex path from a target to the loss."""
    depends = {id(v) for v in targets}
    for node in nodes:
        if any(id(v) in depends for v in node.inputs):
            depends.update(id(v) for v in node.outputs if differentiable(v))
    needed = {id(loss)}
    for node in reversed(nodes):
        if any(id(v) in needed for v in node.outputs):
            needed.update(id(v) for v in node.inputs if differentiable(v))
    return depends & needed


def _backprop_node(b: GraphBuilder, node: Node, active: set[int], grads: dict[int, Value],
                   original: Graph, origin: dict[int, Node]) -> None:
    out_grads = [grads.get(id(v)) if id(v) in active else None for v in node.outputs]
    if all(g is None for g in out_grads):
        return
    wanted = [i for i, v in enumerate(node.inputs) if id(v) in active]
    if not wanted:
        return  # the node produces a wrt value from inputs that do not depend on any
    schema = get_schema(node.op)
    why = nondifferentiable_reason(schema)
    if why is None and schema.gradient is None:
        why = "it has no gradient rule (register one with frame.autograd.gradient_rule)"
    if why is not None:
        raise NonDifferentiableError(
            node.op, f"build_backward_graph: '{node.op}' is on the path from a wrt value to the "
            f"loss, but {why}:\n{_context(original, origin[id(node)])}")
    try:
        in_grads = schema.gradient(b, list(node.inputs), list(node.outputs), out_grads,
                                   node.attrs)
    except NonDifferentiableError:
        raise
    except Exception as err:
        raise FrameError(ErrorCode.INTERNAL, f"build_backward_graph: the gradient rule of "
                         f"'{node.op}' failed: {type(err).__name__}: {err}\n"
                         f"{_context(original, origin[id(node)])}") from err
    if len(in_grads) != len(node.inputs):
        raise FrameError(ErrorCode.INTERNAL, f"build_backward_graph: the gradient rule of "
                         f"'{node.op}' returned {len(in_grads)} gradients for "
                         f"{len(node.inputs)} inputs")
    for i in wanted:
        g, v = in_grads[i], node.inputs[i]
        if g is None:
            continue
        if g.type != v.type:
            raise FrameError(ErrorCode.INTERNAL, f"build_backward_graph: the gradient rule of "
                             f"'{node.op}' returned {g.type} for input {i} of type {v.type}\n"
                             f"{_context(original, origin[id(node)])}")
        prev = grads.get(id(v))
        grads[id(v)] = g if prev is None else b.op("add", prev, g)


def _mark_backward(nodes: Sequence[Node]) -> None:
    """Mark gradient nodes (``Node.backward``: the forward/backward statistics)."""
    for node in nodes:
        node.backward = True


def _drop_dead(graph: Graph, n_forward: int) -> None:
    """Remove backward nodes (those after the first ``n_forward``) that no
    output needs; forward nodes stay as they were."""
    live = {id(v) for v in graph.outputs}
    kept: list[Node] = []
    for node in reversed(graph.nodes[n_forward:]):
        if any(id(v) in live for v in node.outputs):
            kept.append(node)
            live.update(id(v) for v in node.inputs)
    kept.reverse()
    graph.nodes = graph.nodes[:n_forward] + kept


def _context(graph: Graph, node: Node) -> str:
    """``graph``'s text around ``node``, the node's line marked ``>>``."""
    try:
        lines, sites = dump_lines_with_sites(graph)
    except Exception as err:  # a graph too broken to print: keep the error readable
        return f"    (IR could not be printed: {type(err).__name__}: {err})"
    at = sites.get(id(node))
    if at is None:
        return "\n".join("   " + ln for ln in lines[:7])
    lo, hi = max(0, at - 3), min(len(lines), at + 4)
    return "\n".join((">> " if i == at else "   ") + lines[i] for i in range(lo, hi))
