"""The fallback chain: what happens to nodes a backend cannot compile.

Only UNIMPLEMENTED reaches here.  For each unsupported node, in order:

1. ``kernel``: the target backend's own eager kernel (``KernelRegistry``);
2. ``decomposition``: the op's decomposition into primitives; primitives the
   backend supports are compiled with their neighbours, the others try (1)
   then (3) (never a second decomposition);
3. ``cpu``: the cpu reference kernel.

An unsupported fused node is first opened up into its body nodes.  Maximal
runs of supported nodes are compiled by the target backend as subgraphs
(partitioning); the rest run one op at a time through ``Backend.launch``.

When ``Backend.compile`` refused the graph as a whole (an UNIMPLEMENTED
without a list of nodes), nothing is trusted to that backend's compiler: not
the graph's nodes and not the body nodes of the fused nodes opened up
either (they would be sent back to the same compiler, which would refuse
them again).  A partition the backend still refuses at compile time is
planned again the same way, one op at a time.  An op with no way to run at
all (no compiled support, no eager kernel on the backend, no decomposition,
no cpu reference kernel) is an UNIMPLEMENTED error naming the op here, at
compile time, rather than at its first run.

Every hop counts ``(op, backend)`` (and ``(op, backend, target)``) and logs
one INFO line on ``frame.fallbacks`` (``FRAME_LOG=fallbacks`` shows them).  The
user sees one WARN per compiled graph: whose graph it is (``origin``, the
jitted function and its line, when the caller knows it), the ops that left the
backend and their dtypes, why, where they run instead, and the backend's
advice when it has one (``Backend.fallback_advice``: e.g. float64 on OpenVINO
-> use float32 or ``backend="cpu"``).  All of it happens once, at compile time.
"""
from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from ..hal.backend import Backend, Executable, KernelInvocation, get_backend, kernel_registry
from ..errors import ErrorCode, FrameError
from ..hal.options import CompileOptions
from ..ir.builder import GraphBuilder
from ..ir.graph import Graph, Node, Value
from ..ops.registry import get_schema
from ..passes import PassManager
from ..passes.lowering import BackendLowering
from ..passes.memory_planning import MemoryPlanning
from ..settings import config
from . import trace
from .stats import record

__all__ = ["FallbackExecutable", "build_fallback", "SHOWN_OPS"]

log = logging.getLogger("frame.fallbacks")

COMPILED, KERNEL, CPU = "compiled", "kernel", "cpu"
SHOWN_OPS = 8  # distinct op names the graph's WARN lists before "and N more"
_VIA = {KERNEL: "the backend's eager kernels", "decomposition": "decompositions into primitives",
        CPU: "the cpu reference kernels"}


def _why(backend: Backend, node: Node, default: str) -> str:
    explain = getattr(backend, "why_unsupported", None)
    reason = explain(node) if explain is not None else None
    if reason:
        return reason
    types = ", ".join(str(v.type) for v in node.inputs)
    return default or f"the backend does not support {node.op}({types})"


class _Planner:
    """Assigns every node a placement and rewrites decompositions in place."""

    def __init__(self, graph: Graph, backend: Backend, unsupported: set[int], reason: str,
                 whole: bool = False):
        self.graph = graph
        self.backend = backend
        self.unsupported = unsupported
        self.reason = reason
        self.whole = whole  # Backend.compile refused the whole graph: compile nothing
        self.placed: list[tuple[str, Node]] = []
        self.renamed: dict[int, Value] = {}   # id(old value) -> replacement (decompositions)
        self.hops: list[tuple[Node, str, str]] = []  # (node, target, reason), in order

    def _resolve(self, v: Value) -> Value:
        while id(v) in self.renamed:
            v = self.renamed[id(v)]
        return v

    def _hop(self, node: Node, target: str, reason: str) -> None:
        record.fallback(node.op, self.backend.name, target)
        self.hops.append((node, target, reason))
        if config.trace_dir:  # FRAME_TRACE_DIR (trace.py)
            trace.emit("fallback", op=node.op, backend=self.backend.name, target=target,
                       reason=reason)
        where = {KERNEL: f"backend '{self.backend.name}''s eager kernel",
                 "decomposition": "its decomposition into primitives",
                 CPU: "the cpu reference kernel"}[target]
        log.info("fallback: op '%s' cannot be compiled by backend '%s' (%s); running it via %s",
                 node.op, self.backend.name, reason, where)

    def place(self, node: Node, allow_decompose: bool = True) -> None:
        node.inputs = tuple(self._resolve(v) for v in node.inputs)
        refused = self.whole or id(node) in self.unsupported
        if not refused and self.backend.supports(node):
            self.placed.append((COMPILED, node))
            return
        reason = _why(self.backend, node, self.reason if refused else "")
        if node.body is not None:
            self._open_fused(node)
            return
        if node.op == "constant":
            self.placed.append((CPU, node))  # a constant needs no kernel; materialised at build
            return
        kernel = kernel_registry.get(node.op, self.backend.name)
        accepts = getattr(kernel, "accepts", None)  # a backend kernel may refuse some dtypes
        if kernel is not None and (accepts is None or accepts(node)):
            self._hop(node, KERNEL, reason)
            self.placed.append((KERNEL, node))
            return
        schema = get_schema(node.op)
        if allow_decompose and schema.decompose is not None:
            self._hop(node, "decomposition", reason)
            self._decompose(node, schema)
            return
        if kernel_registry.get(node.op, "cpu") is None:
            raise FrameError(ErrorCode.UNIMPLEMENTED,
                             f"op '{node.op}' cannot run: backend '{self.backend.name}' cannot "
                             f"compile it ({reason}), and it has no eager kernel there, no "
                             f"decomposition and no cpu reference kernel")
        self._hop(node, CPU, reason)
        self.placed.append((CPU, node))

    def _open_fused(self, node: Node) -> None:
        body = node.body
        mapping = {id(bi): v for bi, v in zip(body.inputs, node.inputs)}
        for inner in body.nodes:
            copy = Node(inner.op, [mapping[id(v)] for v in inner.inputs], inner.attrs,
                        const=inner.const, body=inner.body, device=inner.device,
                        errstate=inner.errstate)
            copy.set_output_types(v.type for v in inner.outputs)
            for old, new in zip(inner.outputs, copy.outputs):
                mapping[id(old)] = new
            self.place(copy)
        for old, inner_out in zip(node.outputs, body.outputs):
            self.renamed[id(old)] = mapping[id(inner_out)]

    def _decompose(self, node: Node, schema) -> None:
        b = GraphBuilder(Graph(self.graph.device))
        outs = schema.decompose(b, list(node.inputs), dict(node.attrs))
        for old, new in zip(node.outputs, outs):
            if old.type != new.type:
                raise FrameError(ErrorCode.INTERNAL,
                                 f"decomposition of {node.op} produced {new.type}, expected {old.type}")
            self.renamed[id(old)] = new
        for inner in b.graph.nodes:
            inner.errstate = node.errstate   # its parts run in the op's error state
            self.place(inner, allow_decompose=False)


class _Step:
    __slots__ = ("kind", "run", "ins", "outs", "label")

    def __init__(self, kind, run, ins, outs, label):
        self.kind, self.run, self.ins, self.outs, self.label = kind, run, ins, outs, label


class FallbackExecutable(Executable):
    """A graph run as compiled subgraphs and single eager ops, in order."""

    def __init__(self, steps: list[_Step], n_slots: int, input_slots: list[int],
                 output_slots: list[int], constants: dict[int, np.ndarray], input_types, output_types):
        self.steps = steps
        self.n_slots = n_slots
        self.input_slots = input_slots
        self.output_slots = output_slots
        for value in constants.values():
            value.setflags(write=False)  # a view of a constant can never be written through
        self.constants = constants
        self._copy_out = frozenset(input_slots)
        self.input_types = tuple(input_types)
        self.output_types = tuple(output_types)

    @property
    def partitions(self) -> list[str]:
        """One label per step: ``compiled[n nodes]``, ``kernel:<op>``, ``cpu:<op>``."""
        return [s.label for s in self.steps]

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        env: list = [None] * self.n_slots
        for slot, value in self.constants.items():
            env[slot] = value
        for slot, value in zip(self.input_slots, inputs):
            env[slot] = value
        for step in self.steps:
            results = step.run([env[i] for i in step.ins])
            for slot, value in zip(step.outs, results):
                env[slot] = value
        # never hand out the caller's input arrays or read-only (constant) memory
        return [np.array(env[i], copy=True) if i in self._copy_out or not env[i].flags.writeable
                else env[i] for i in self.output_slots]


def _launcher(backend: Backend, node: Node):
    op, attrs = node.op, node.attrs
    if node.errstate is not None:   # an op of a `with np.errstate(...)` block
        modes = dict(node.errstate)

        def run_in_state(args):
            with np.errstate(**modes):
                return backend.launch(KernelInvocation(op, args, attrs))
        return run_in_state

    def run(args):
        return backend.launch(KernelInvocation(op, args, attrs))
    return run


def _segment_graph(nodes: list[Node], slot_of, later_uses: set[int], device: str):
    """A standalone graph for a run of nodes: its inputs are the values it reads
    from outside, its outputs the values read after it."""
    g = Graph(device)
    mapping: dict[int, Value] = {}
    in_slots, out_slots = [], []
    defined = {id(v) for n in nodes for v in n.outputs}
    for n in nodes:
        for v in n.inputs:
            if id(v) not in defined and id(v) not in mapping:
                mapping[id(v)] = g.add_input(v.type)
                in_slots.append(slot_of[id(v)])
        copy = Node(n.op, [mapping[id(v)] for v in n.inputs], n.attrs, const=n.const,
                    body=n.body, device=n.device, errstate=n.errstate)
        copy.set_output_types(v.type for v in n.outputs)
        g.append(copy)
        for old, new in zip(n.outputs, copy.outputs):
            mapping[id(old)] = new
            if id(old) in later_uses:
                g.outputs.append(new)
                out_slots.append(slot_of[id(old)])
    return g, in_slots, out_slots


def _dtypes(nodes: Sequence[Node]) -> list[str]:
    """The dtype names the nodes read and write, in order of appearance."""
    names: dict[str, None] = {}
    for node in nodes:
        for v in (*node.inputs, *node.outputs):
            names.setdefault(v.type.dtype.name, None)
    return list(names)


def _graph_warning(backend: Backend, graph: Graph, hops: list[tuple[Node, str, str]],
                   whole_reason: str, origin: str | None) -> str:
    """The one WARN of a graph the backend could not compile whole: whose graph,
    which ops (and dtypes) left the backend, where they run, why, and the fix."""
    whose = f"the graph of {origin}" if origin else f"a {len(graph.nodes)}-node graph"
    if not hops:  # only constants or opened fused bodies: nothing runs elsewhere
        return (f"fallback: backend '{backend.name}' cannot compile {whose} as a whole "
                f"({whole_reason}); it compiles it in parts")
    names = list(dict.fromkeys(node.op for node, _, _ in hops))
    shown = ", ".join(names[:SHOWN_OPS]) + (f" and {len(names) - SHOWN_OPS} more"
                                             if len(names) > SHOWN_OPS else "")
    targets: dict[str, int] = {}
    for _, target, _ in hops:
        targets[target] = targets.get(target, 0) + 1
    via = ", ".join(f"{_VIA[t]} ({n})" for t, n in targets.items())
    nodes = [node for node, _, _ in hops]
    advice_of = getattr(backend, "fallback_advice", None)
    advice = advice_of(nodes) if advice_of is not None else None
    why = advice or f"Why ({hops[0][0].op}): {hops[0][2]}; FRAME_LOG=fallbacks lists every op."
    return (f"fallback: backend '{backend.name}' cannot compile {len(hops)} op(s) of {whose} "
            f"({shown} on {', '.join(_dtypes(nodes))}); they run via {via}. {why}")


def build_fallback(graph: Graph, backend: Backend, options: CompileOptions,
                   err: FrameError, origin: str | None = None) -> FallbackExecutable:
    """Partition ``graph`` around what ``backend`` cannot compile (see module doc).
    ``origin`` names the graph for the user (``"f (train.py:12)"``) when known."""
    listed = getattr(err, "unsupported", None)
    unsupported = {id(n) for n in listed} if listed else set()
    # without a list, Backend.compile refused the graph as a whole: nothing can be
    # trusted to it (neither these nodes nor the bodies of fused ones)
    whole = not listed
    reason = err.message
    log.info("fallback: backend '%s' cannot compile this %d-node graph as a whole (%s); "
             "partitioning it", backend.name, len(graph.nodes), reason)

    cpu = get_backend("cpu")  # loaded first: it serves every op's reference kernel
    planner = _Planner(graph, backend, unsupported, reason, whole)
    for node in list(graph.nodes):
        planner.place(node)
    log.warning("%s", _graph_warning(backend, graph, planner.hops, reason, origin))
    outputs = [planner._resolve(v) for v in graph.outputs]

    # slots for every value
    slot_of: dict[int, int] = {}
    for v in graph.inputs:
        slot_of[id(v)] = len(slot_of)
    for _, n in planner.placed:
        for v in n.outputs:
            slot_of[id(v)] = len(slot_of)

    constants: dict[int, np.ndarray] = {}
    steps: list[_Step] = []
    placed = planner.placed
    i = 0
    while i < len(placed):
        kind, node = placed[i]
        if kind == COMPILED:
            j = i
            while j < len(placed) and placed[j][0] == COMPILED:
                j += 1
            run_nodes = [n for _, n in placed[i:j]]
            if all(n.op == "constant" for n in run_nodes):
                for n in run_nodes:
                    constants[slot_of[id(n.outputs[0])]] = n.const.copy()
            else:
                later = {id(v) for _, n in placed[j:] for v in n.inputs} | {id(v) for v in outputs}
                sub, ins, outs = _segment_graph(run_nodes, slot_of, later, graph.device)
                if sub.outputs:
                    sub = PassManager([MemoryPlanning(), BackendLowering(backend)]).run(sub)
                    try:
                        exe = backend.compile(sub, options)
                    except FrameError as refusal:
                        if refusal.code is not ErrorCode.UNIMPLEMENTED:
                            raise
                        # claimed by supports() but refused by compile: run this part
                        # op by op (a refusal without a node list compiles nothing)
                        exe = build_fallback(sub, backend, options,
                                             refusal.with_message(refusal.message), origin)
                    steps.append(_Step(COMPILED, exe.run, ins, outs,
                                       f"compiled[{len(run_nodes)} nodes]"))
            i = j
            continue
        if node.op == "constant":
            constants[slot_of[id(node.outputs[0])]] = node.const.copy()
        else:
            target = backend if kind == KERNEL else cpu
            steps.append(_Step(kind, _launcher(target, node), [slot_of[id(v)] for v in node.inputs],
                               [slot_of[id(v)] for v in node.outputs], f"{kind}:{node.op}"))
        i += 1

    return FallbackExecutable(steps, len(slot_of), [slot_of[id(v)] for v in graph.inputs],
                              [slot_of[id(v)] for v in outputs], constants,
                              [v.type for v in graph.inputs], [v.type for v in outputs])
