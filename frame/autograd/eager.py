"""Eager backward: the records reachable from a tensor become a Graph,
``build_backward_graph`` differentiates it (the one engine, docs/design.md §9), and
the gradient nodes run, node by node, through the kernels of the top level of
the op-handler stack (``frame.functions._core.OpLevel``): eager kernels, or,
under capture, the tracer, which appends them to the graph being captured --
capture's ``backward`` and ``frame.grad`` are this code run on the records its
tape left (its ``.grad`` writes go through ``GradSlots``).

The recorded graph.  Records reachable from the root, in creation order (a
topological order), become nodes whose outputs are already known: the arrays
the ops produced, so the forward pass never runs twice.  Graph inputs are the
leaves that require grad -- one input per (leaf, version it was used at), so
a leaf updated in place between two uses is two values -- and the untracked
arrays the ops read.  When an op's saved operand is not its producer's saved
output (an in-place op rebased the tensor and the op kept a private copy of
what it read), an identity ``reshape`` node with that copy as its known output
sits between them, so the gradient still reaches the producer.

Compiled records.  The result tensors of a jitted call carry one
``compiled.CompiledRecord`` (docs/compiler.md, "Compiled autograd across the jit
boundary"); the graph stops there: each of its outputs the graph uses is an
input, whose gradient ``gradients`` asks for too and hands to the record's
compiled backward as its cotangent; what that returns is added to the gradients
of the record's leaves.

Evaluation.  Only the nodes ``build_backward_graph`` appended (and the few
that make the loss from the root) run.  Before a node reads a recorded value,
its version is checked: a value overwritten in place since it was recorded
raises ``AutogradError``.  With ``create_graph`` the nodes run through
the current tape's ``record_call`` on Tensors that stand for the recorded values, so the
gradients are recorded and can be differentiated again; otherwise they run on
bare arrays and nothing is recorded.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..dtypes import from_numpy
from ..errors import FrameTypeError, FrameValueError
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node, Value
from ..ir.types import TensorType
from ..ops.registry import get_schema
from ..tensor import Tensor
from ..functions import _core
from .backward import build_backward_graph
from .compiled import CompiledRecord
from .tape import AutogradError, Record, VersionCounter, current_tape, enable_grad

__all__ = ["backward", "gradients", "RecordedGraph", "GradSlots", "reachable"]


_RESHAPE = get_schema("reshape")
_SUM = get_schema("sum")


def _type(a: np.ndarray) -> TensorType:
    return TensorType(from_numpy(a.dtype), a.shape)


Ref = tuple  # (-1, k): graph input k; (n, j): output j of node n


class RecordedGraph:
    """The records reachable from some tensors, described node by node.

    ``inputs[k]`` is ``(array, leaf Tensor or None, version)`` for graph input
    ``k``; ``nodes[n]`` is ``(op, attrs, input refs)``; ``known[n]`` lists, per
    output of a recorded node, ``(array, edge, version counter, version)``.
    Nodes after the recorded ones (the loss) have no ``known`` entry and are
    evaluated.  ``key()`` identifies the structure, so the differentiated Graph
    can be reused for the next record with the same structure (every training
    step records the same graph).
    """

    def __init__(self, roots: Sequence[Tensor]):
        self.inputs: list[tuple] = []
        self.nodes: list[tuple] = []
        self.known: list[list[tuple]] = []
        self._leaf_inputs: dict[tuple[int, int], Ref] = {}
        self._const_inputs: dict[int, Ref] = {}
        self._node_of: dict[int, int] = {}
        self._shims: dict[tuple[int, int, int], Ref] = {}
        # the outputs of compiled records (calls of jitted functions, compiled.py) are
        # inputs: (id(record), output index) -> ref; the records, in first-use order
        self._results: dict[tuple[int, int], Ref] = {}
        self.compiled: dict[int, CompiledRecord] = {}
        for rec in reachable(roots):
            if type(rec) is not CompiledRecord:  # its outputs become inputs when used
                self._add_record(rec)

    # -- construction -----------------------------------------------------------
    def _leaf_input(self, leaf: Tensor, array: np.ndarray, version: int) -> Ref:
        key = (id(leaf), version)
        ref = self._leaf_inputs.get(key)
        if ref is None:
            ref = self._leaf_inputs[key] = (-1, len(self.inputs))
            self.inputs.append((array, leaf, version))
        return ref

    def const_input(self, array: np.ndarray) -> Ref:
        ref = self._const_inputs.get(id(array))
        if ref is None:
            ref = self._const_inputs[id(array)] = (-1, len(self.inputs))
            self.inputs.append((array, None, None))
        return ref

    def _result_input(self, rec: CompiledRecord, j: int) -> Ref:
        """The input standing for output ``j`` of a compiled record."""
        key = (id(rec), j)
        ref = self._results.get(key)
        if ref is None:
            ref = self._results[key] = (-1, len(self.inputs))
            self.inputs.append((rec.outputs[j], None, None))
            self.compiled.setdefault(id(rec), rec)
        return ref

    def compiled_results(self) -> list[tuple[CompiledRecord, int, Ref]]:
        """``(compiled record, output index, ref)`` of each compiled output the graph uses."""
        return [(self.compiled[rid], j, ref) for (rid, j), ref in self._results.items()]

    def add_node(self, op: str, attrs, inputs: list[Ref], known: list[tuple] | None = None) -> int:
        self.nodes.append((op, attrs, tuple(inputs)))
        if known is not None:
            self.known.append(known)
        return len(self.nodes) - 1

    def _operand(self, array: np.ndarray, edge, version) -> Ref:
        if type(edge) is tuple:
            rec, j = edge
            if type(rec) is CompiledRecord:
                ref = self._result_input(rec, j)
            else:
                ref = (self._node_of[id(rec)], j)
            if array is rec.outputs[j]:
                return ref
            # the op read a private copy (write_recorded): an identity node holding it
            key = (id(rec), j, id(array))
            shim = self._shims.get(key)
            if shim is None:
                attrs = _RESHAPE.normalize_attrs({"shape": array.shape})
                shim = self._shims[key] = (
                    self.add_node("reshape", attrs, [ref], [(array, edge, None, 0)]), 0)
            return shim
        if edge is not None and edge._rg:  # a leaf that still requires grad
            return self._leaf_input(edge, array, version)
        return self.const_input(array)

    def _add_record(self, rec: Record) -> None:
        inputs = [self._operand(a, e, v)
                  for a, e, v in zip(rec.inputs, rec.edges, rec.in_versions)]
        known = [(o, (rec, j), counter, version)
                 for j, (o, (counter, version)) in enumerate(zip(rec.outputs, rec.out_versions))]
        self._node_of[id(rec)] = self.add_node(rec.op, rec.attrs, inputs, known)

    # -- queries ------------------------------------------------------------------
    def refs_of(self, t: Tensor) -> list[Ref]:
        """The values that stand for ``t``: its record's output, or one input per
        version of a leaf; empty when the graph does not use ``t``."""
        if t._grad_fn is not None:
            rec, j = t._grad_fn
            if type(rec) is CompiledRecord:
                ref = self._results.get((id(rec), j))
                return [] if ref is None else [ref]
            n = self._node_of.get(id(rec))
            return [] if n is None else [(n, j)]
        return [ref for (tid, _), ref in self._leaf_inputs.items() if tid == id(t)]

    def root_ref(self, t: Tensor) -> Ref:
        if t._grad_fn is not None and type(t._grad_fn[0]) is CompiledRecord:
            return self._result_input(*t._grad_fn)
        if t._grad_fn is not None:
            return self.refs_of(t)[0]
        return self._leaf_input(t, t._data, t._version.value)

    def leaves(self) -> list[Tensor]:
        """The leaves that require grad, each once, in first-use order (those
        compiled records read last)."""
        seen: dict[int, Tensor] = {}
        for _, leaf, _ in self.inputs:
            if leaf is not None:
                seen.setdefault(id(leaf), leaf)
        for rec in self.compiled.values():
            for leaf in rec.edges:
                if leaf._rg:  # still requires grad, as ``_operand`` asks of a record's edges
                    seen.setdefault(id(leaf), leaf)
        return list(seen.values())

    def has_leaf_other_than(self, excluded: set[int]) -> bool:
        return any(id(leaf) not in excluded for leaf in self.leaves())

    def key(self, loss: Ref, wrt: Sequence[Ref]) -> tuple:
        """Everything ``build_backward_graph`` looks at: types, ops, attrs, wiring."""
        ins = tuple((a.dtype, a.shape) for a, _, _ in self.inputs)
        nodes = tuple((op, tuple(attrs.values()), refs) for op, attrs, refs in self.nodes)
        return (ins, nodes, loss, tuple(wrt))

    def to_graph(self, loss: Ref, wrt: Sequence[Ref]) -> tuple[Graph, list[Value]]:
        """The Graph (outputs: the loss) and the Values of ``wrt``."""
        g = Graph()
        values: list[list[Value]] = []
        inputs = [g.add_input(_type(a)) for a, _, _ in self.inputs]

        def value(ref: Ref) -> Value:
            n, j = ref
            return inputs[j] if n < 0 else values[n][j]

        b = GraphBuilder(g)
        for n, (op, attrs, refs) in enumerate(self.nodes):
            args = [value(r) for r in refs]
            if n < len(self.known):
                node = Node(op, args, attrs)
                node.outputs = tuple(Value(_type(o[0]), node, j)
                                     for j, o in enumerate(self.known[n]))
                g.append(node)
                values.append(list(node.outputs))
            else:
                values.append(list(b.op_multi(op, args, attrs)))
        g.set_outputs([value(loss)])
        return g, [value(r) for r in wrt]


def reachable(roots: Sequence[Tensor]) -> list[Record]:
    """The records ``roots`` were computed from, in creation order."""
    found: dict[int, Record] = {}
    stack = [t._grad_fn[0] for t in roots if t._grad_fn is not None]
    while stack:
        rec = stack.pop()
        if id(rec) in found:
            continue
        found[id(rec)] = rec
        for e in rec.edges:
            if type(e) is tuple and id(e[0]) not in found:
                stack.append(e[0])
    return sorted(found.values(), key=lambda r: r.seq)


# --------------------------------------------------------------------------- the loss

def _loss(rg: RecordedGraph, root: Tensor, gradient, what: str) -> Ref:
    """The scalar to differentiate: the root (one element), or sum(root * gradient)."""
    ref = rg.root_ref(root)
    if root._data.dtype.kind != "f":
        raise FrameTypeError(f"{what}: only floating-point tensors can be differentiated, got "
                             f"{root.dtype}")
    if gradient is None:
        if root.size != 1:
            raise FrameValueError(
                f"{what}: the tensor must have a single element to be differentiated without "
                f"`gradient`, got shape {list(root.shape)}; reduce it first (e.g. .sum() or "
                f".mean()), or pass gradient= of the same shape")
        if root.ndim == 0:
            return ref
        return (rg.add_node("reshape", _RESHAPE.normalize_attrs({"shape": ()}), [ref]), 0)
    g = gradient._data if isinstance(gradient, Tensor) else np.asarray(gradient)
    if g.shape != root.shape:
        raise FrameValueError(f"{what}: gradient has shape {list(g.shape)} but the tensor has "
                              f"shape {list(root.shape)}; they must match")
    if g.dtype != root._data.dtype:
        g = g.astype(root._data.dtype)
    if not g.flags.c_contiguous:  # a fresh copy through the level (capture: a meta array)
        g = _core.current_level().copy(g)
    weighted = (rg.add_node("mul", {}, [ref, rg.const_input(g)]), 0)
    if root.ndim == 0:
        return weighted
    attrs = _SUM.normalize_attrs({"axes": tuple(range(root.ndim)), "keepdims": False})
    return (rg.add_node("sum", attrs, [weighted]), 0)


# --------------------------------------------------------------------------- the transform, cached

_BACKWARD_CACHE: dict[tuple, Graph] = {}
_BACKWARD_CACHE_LIMIT = 64


def _backward_graph(rg: RecordedGraph, loss: Ref, wrt: Sequence[Ref]) -> Graph:
    """``build_backward_graph`` of the recorded graph; reused for records of the
    same structure (the transform looks only at types, ops, attrs and wiring)."""
    try:
        key = rg.key(loss, wrt)
        hash(key)
    except TypeError:  # an unhashable attr value: do not cache
        key = None
    bw = _BACKWARD_CACHE.get(key) if key is not None else None
    if bw is None:
        graph, targets = rg.to_graph(loss, wrt)
        bw = build_backward_graph(graph, 0, targets)
        if key is not None:
            while len(_BACKWARD_CACHE) >= _BACKWARD_CACHE_LIMIT:
                try:  # oldest first; another thread may be evicting too
                    del _BACKWARD_CACHE[next(iter(_BACKWARD_CACHE))]
                except (StopIteration, KeyError, RuntimeError):
                    break
            _BACKWARD_CACHE[key] = bw
    return bw


# --------------------------------------------------------------------------- evaluation

def _evaluate(rg: RecordedGraph, bw: Graph, create_graph: bool) -> list:
    """Run the nodes of ``bw`` (``rg`` differentiated) that are not recorded;
    returns the values of ``bw.outputs[1:]`` (the gradients): Tensors when
    ``create_graph``, else ndarrays."""
    level = _core.current_level()
    run, grad_run, copy = level.run, level.grad_run, level.copy
    record_call = current_tape().record_call
    env: dict[int, object] = {}
    fresh: set[int] = set()      # values a node computed in this evaluation
    stale: dict[int, str] = {}   # recorded values overwritten in place since
    for v, (array, leaf, version) in zip(bw.inputs, rg.inputs):
        env[id(v)] = leaf if create_graph and leaf is not None else array
        if leaf is not None and leaf._version.value != version:
            stale[id(v)] = (f"a leaf tensor of shape {list(array.shape)} ({array.dtype}) used at "
                            f"version {version} is now at version {leaf._version.value}")
    for rec, j, (_, k) in rg.compiled_results():  # the results of jitted calls
        v = bw.inputs[k]
        counter, version = rec.out_versions[j]
        if create_graph:
            env[id(v)] = _standin(rec.outputs[j], (rec, j), counter)
        if counter.value != version:
            stale[id(v)] = (f"result {j} of a jitted function ({v.type}) was made at version "
                            f"{version} and is now at version {counter.value}")
    n_known = len(rg.known)
    for node, outputs in zip(bw.nodes, rg.known):
        for v, (array, edge, counter, version) in zip(node.outputs, outputs):
            env[id(v)] = _standin(array, edge, counter) if create_graph else array
            if counter is not None and counter.value != version:
                stale[id(v)] = (f"output {v.index} of '{edge[0].op}' ({v.type}) was recorded at "
                                f"version {version} and is now at version {counter.value}")
    for node in bw.nodes[n_known:]:
        if stale:
            _check_fresh(node.inputs, stale)
        if node.op == "constant":
            env[id(node.outputs[0])] = node.const
            continue
        args = [env[id(v)] for v in node.inputs]
        kernels = grad_run if node.backward else run
        if create_graph:
            outs = record_call(kernels, node.op, args, node.attrs)
        else:
            outs = kernels(node.op, args, node.attrs)
        for v, o in zip(node.outputs, outs):
            env[id(v)] = o
            fresh.add(id(v))
    if stale:
        _check_fresh(bw.outputs[1:], stale)
    results = []
    handed: set[int] = set()   # the objects handed out so far
    for v in bw.outputs[1:]:
        value = env[id(v)]
        if id(v) not in fresh:  # a recorded value or constant: never hand out its memory
            value = copy(value._data if isinstance(value, Tensor) else value)
            value = Tensor._wrap(value) if create_graph else value
        elif id(value) in handed:  # one value is two gradients (d(a+b)/da, d(a+b)/db): two arrays
            if create_graph:  # a recorded copy, so that both stay differentiable
                value = record_call(run, "reshape", [value], {"shape": tuple(value.shape)})[0]
            else:
                value = copy(value)
        handed.add(id(value))
        results.append(value)
    return results


def _check_fresh(values: Sequence[Value], stale: dict[int, str]) -> None:
    for v in values:
        if id(v) in stale:
            raise AutogradError(
                f"backward: a value needed for gradient computation has been modified by an "
                f"in-place operation: {stale[id(v)]}; compute the value again (or update a "
                f"copy) instead of writing into it before backward")


def _standin(array: np.ndarray, edge, counter) -> Tensor:
    """A tensor standing for a recorded value, so ops on it are recorded against it."""
    t = Tensor._wrap(array)
    t._rg = True
    t._grad_fn = edge
    t._version = counter if counter is not None else VersionCounter()
    return t


# --------------------------------------------------------------------------- entry points

def gradients(root: Tensor, wrt: Sequence[Tensor], *, gradient=None, create_graph: bool = False,
              graph: RecordedGraph | None = None, what: str = "grad") -> list:
    """``d root / d w`` for each ``w`` in ``wrt`` (leaves or recorded results) as a
    list of Tensors (zeros where ``root`` does not depend on ``w``).  Accumulates
    nothing.  With ``create_graph`` the gradients are recorded.

        >>> x = frame.tensor([3.0], requires_grad=True)
        >>> gradients((x * x).sum(), [x])[0].tolist()
        [6.0]
    """
    _check_requires_grad(root, what)
    rg = graph if graph is not None else RecordedGraph([root])
    loss = _loss(rg, root, gradient, what)
    targets, owners = [], []
    for k, w in enumerate(wrt):
        for ref in rg.refs_of(w):
            targets.append(ref)
            owners.append(k)
    # the results of jitted calls the graph uses: their gradients are the cotangents
    # of the calls' compiled backwards (compiled.py), which give their leaves' gradients
    results = rg.compiled_results()
    bw = _backward_graph(rg, loss, targets + [ref for _, _, ref in results])
    if create_graph:
        with enable_grad():
            values = _evaluate(rg, bw, True)
    else:
        values = _evaluate(rg, bw, False)
    n = len(targets)
    values, cotangents = values[:n], values[n:]
    if not create_graph:
        values = [Tensor._wrap(a) for a in values]
    out: list = [None] * len(wrt)
    for k, g in zip(owners, values):
        out[k] = g if out[k] is None else _add(out[k], g, create_graph)
    if results:
        _through_compiled(results, cotangents, wrt, out, create_graph)
    for k, w in enumerate(wrt):
        if out[k] is None:
            out[k] = Tensor._wrap(np.zeros(w.shape, dtype=w._data.dtype))
    return out


def _through_compiled(results, cotangents, wrt, out: list, create_graph: bool) -> None:
    """Add to ``out`` (the gradients of ``wrt``) what each compiled record
    gives its leaves for the cotangents of its results."""
    per_record: dict[int, list] = {}
    for (rec, j, _), g in zip(results, cotangents):
        cots = per_record.get(id(rec))
        if cots is None:
            cots = per_record[id(rec)] = [rec, [None] * len(rec.outputs)]
        cots[1][j] = g
    where: dict[int, list[int]] = {}
    for k, w in enumerate(wrt):
        if w._grad_fn is None and w._rg:  # a leaf that still requires grad (``_operand``)
            where.setdefault(id(w), []).append(k)
    for rec, cots in per_record.values():
        if create_graph:
            with enable_grad():
                grads = rec.recorded_gradients(cots)
        else:
            grads = [Tensor._wrap(g) for g in rec.gradients(cots)]
        for leaf, g in zip(rec.edges, grads):
            for n, k in enumerate(where.get(id(leaf), ())):
                if n:  # a leaf listed twice in wrt: two gradients, not one tensor twice
                    g = _add(g, Tensor._wrap(np.zeros_like(g._data)), create_graph)
                out[k] = g if out[k] is None else _add(out[k], g, create_graph)


def _check_requires_grad(root: Tensor, what: str) -> None:
    if not root._rg:
        raise AutogradError(
            f"{what}: this tensor (shape {list(root.shape)}, {root.dtype}) does not require "
            f"grad and has no grad_fn: none of the tensors it was computed from requires grad, "
            f"or it was computed under frame.no_grad(); create the inputs with "
            f"requires_grad=True (or use frame.nn.Parameter)")


def _add(a: Tensor, b: Tensor, create_graph: bool) -> Tensor:
    """``a + b`` through the op handler (recorded with ``create_graph``)."""
    run = _core.current_op_handler()
    if create_graph:
        return current_tape().record_call(run, "add", [a, b], {})[0]
    return Tensor._wrap(run("add", [a._data, b._data], {})[0])


class GradSlots:
    """Where ``backward`` accumulates: the ``.grad`` of each leaf.  Eager reads and
    writes the attribute; capture replays the writes after its graph ran (a
    subclass of its own)."""

    def read(self, leaf: Tensor) -> Tensor | None:
        return leaf._grad

    def write(self, leaf: Tensor, grad: Tensor) -> None:
        leaf._grad = grad


_GRAD_ATTRIBUTES = GradSlots()


def backward(root: Tensor, gradient=None, create_graph: bool = False,
             slots: GradSlots = _GRAD_ATTRIBUTES) -> None:
    """``Tensor.backward``: accumulate gradients into the ``.grad`` of every leaf
    that requires grad and that ``root`` was computed from (through ``slots``),
    each leaf's gradients summed over the versions of it the record read."""
    _check_requires_grad(root, "backward")
    rg = RecordedGraph([root])
    rg.root_ref(root)  # a leaf root is an input of its own graph
    leaves = rg.leaves()
    if not leaves:
        return
    grads = gradients(root, leaves, gradient=gradient, create_graph=create_graph, graph=rg,
                      what="backward")
    for leaf, g in zip(leaves, grads):
        current = slots.read(leaf)
        slots.write(leaf, g if current is None else _add(current, g, create_graph))
