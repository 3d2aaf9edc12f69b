"""Compiled autograd across the jit boundary (docs/compiler.md, "Compiled
autograd across the jit boundary").

A jitted function whose result requires grad (``jit(model)(x)`` with
parameters that require grad, grad mode on) hands out tensors that carry one
``CompiledRecord``: the autograd record of the whole compiled call.  Its
edges are the leaves the call read (parameters, inputs that require grad), its
outputs the result tensors' arrays, and what its backward needs is
``CompiledBackward``: the backward graph capture built from the forward with
``build_backward_graph`` at trace time (inputs: the saved activations, then one
cotangent per result; outputs: one gradient per leaf), compiled into one
Executable on the first backward that reaches it, and shared by every call of
the same cache entry.  The saved activations are extra outputs of the forward
graph (or the input arrays themselves).

Eager's backward (``eager.py``) treats a compiled record's outputs as inputs of
the recorded graph it differentiates (the ops run on the results after the
call), asks for their gradients too, then runs each compiled record's backward
with them as cotangents and adds the gradients it returns to those of its
leaves.  Compiled records have only leaves as edges (capture runs a call whose
input requires grad but is not a leaf natively), so this second step never
feeds another record.

Version checks are eager's: a saved leaf, or a saved result, that was updated
in place after the call makes a backward that needs it raise
``AutogradError``; an untracked input read through its memory at backward
time, as eager reads it.  A leaf the call itself updated in place after using
it (an optimizer step after a traced backward) is an edge once per version the
call read, at that version (``attach``'s offsets), as eager's recorded graph has
one input per (leaf, version).
"""
from __future__ import annotations

import threading
from typing import Callable, Sequence

import numpy as np

from ..runtime.stats import record as _stats
from ..functions import _core
from ..tensor import Tensor
from .tape import AutogradError, EAGER_TAPE, Record, current_tape

__all__ = ["CompiledBackward", "CompiledRecord", "attach"]


class CompiledBackward:
    """The backward of one captured forward graph (one per cache entry).

    ``graph``: inputs are the saved values (``layout``) then one cotangent per
    result; outputs one gradient per leaf.  ``layout[i]`` says where saved
    value ``i`` comes from at run time: ``("saved", s)`` the ``s``-th array
    the entry hands to ``attach``, ``("leaf", k)`` the data of leaf ``k``,
    ``("result", j)`` the array of result ``j``.  ``compile(graph)`` returns
    the Executable; it is called once, on the first backward (a function run
    for inference under grad mode never pays for it).  ``graph`` and ``joint``
    may be given as functions that make them, called on first use (an entry
    loaded from the persistent cache parses them only if a backward needs
    them)."""

    def __init__(self, graph, layout: Sequence[tuple], result_types: Sequence,
                 compile: Callable, joint=None, joint_layout: Sequence[tuple] = (),
                 origin: str = ""):
        self._graph = graph
        self.layout = tuple(layout)
        self._joint = joint
        self.joint_layout = tuple(joint_layout)
        self.result_types = tuple(result_types)   # (np.dtype, shape) of each result
        self.origin = origin
        self._compile = compile
        self._executable = None
        self._lock = threading.Lock()
        self.runs = 0

    @property
    def graph(self):
        graph = self._graph
        if callable(graph):
            graph = self._graph = graph()
        return graph

    @property
    def joint(self):
        joint = self._joint
        if callable(joint):
            joint = self._joint = joint()
        return joint

    @property
    def compiled(self) -> bool:
        return self._executable is not None

    def executable(self):
        exe = self._executable
        if exe is None:
            with self._lock:
                exe = self._executable
                if exe is None:
                    exe = self._executable = self._compile(self.graph)
                    _stats.count("compiled_backward_compiles")
        return exe

    def ops(self) -> list[str]:
        return [n.op for n in self.graph.nodes if n.op != "constant"]


class CompiledRecord(Record):
    """The autograd record of one call of a jitted function (module docstring).
    ``edges`` are its leaves, ``in_versions`` their versions at the call,
    ``outputs`` the results' arrays; ``saved`` the saved arrays the entry
    handed over; ``backward`` the entry's ``CompiledBackward``."""

    __slots__ = ("backward", "saved")

    def __init__(self, backward: CompiledBackward, leaves: tuple, saved: tuple,
                 outputs: tuple, offsets: tuple = ()):
        versions = tuple(t._version.value for t in leaves)
        if offsets:  # leaves used before the call updated them in place
            versions = tuple(v + d for v, d in zip(versions, offsets))
        super().__init__("jit", {}, tuple(t._data for t in leaves), leaves, versions, outputs)
        self.backward = backward
        self.saved = saved

    def gradients(self, cotangents: Sequence) -> list[np.ndarray]:
        """The gradient of each leaf (``edges``) given one cotangent per output
        (an array, or None for zeros), through the compiled backward."""
        bw = self.backward
        inputs = []
        for kind, i in bw.layout:
            if kind == "saved":
                inputs.append(self.saved[i])
            elif kind == "leaf":
                leaf = self.edges[i]
                if leaf._version.value != self.in_versions[i]:
                    self._stale(f"a leaf tensor of shape {list(leaf.shape)} ({leaf.dtype}) "
                                f"used at version {self.in_versions[i]} is now at version "
                                f"{leaf._version.value}")
                inputs.append(self.inputs[i])
            else:
                counter, version = self.out_versions[i]
                if counter.value != version:
                    self._stale(f"result {i} of the jitted function {bw.origin} was made at "
                                f"version {version} and is now at version {counter.value}")
                inputs.append(self.outputs[i])
        for (dtype, shape), g in zip(bw.result_types, cotangents):
            inputs.append(np.zeros(shape, dtype) if g is None else g)
        outs = bw.executable().run(inputs)
        bw.runs += 1
        _stats.count("compiled_backward_runs")
        grads, handed = [], set()
        for g in outs:  # every gradient its own array (an output may be an input, or repeat)
            if id(g) in handed or any(g is a for a in inputs):
                g = np.array(g, copy=True)
            handed.add(id(g))
            grads.append(g)
        return grads

    def recorded_gradients(self, cotangents: Sequence) -> list[Tensor]:
        """``gradients`` for ``create_graph``: recorded, so that they can be
        differentiated again.  The compiled backward cannot be recorded, so the
        joint graph (``CompiledBackward.joint``: the forward ops recorded by the
        trace, the weighting by the cotangents, their gradient nodes) runs op by
        op through the current tape, from the leaves: the forward is computed
        again, as eager recorded it (the inputs that do not require grad are
        saved arrays), and what comes back depends on the leaves and the
        cotangents as eager's gradients do."""
        bw = self.backward
        if bw.joint is None:
            raise AutogradError(f"backward(create_graph=True) through the result of the jitted "
                                f"function {bw.origin}: its forward was not kept for a recorded "
                                f"backward; call the function without frame.jit")
        for i, leaf in enumerate(self.edges):
            if leaf._version.value != self.in_versions[i]:  # the forward runs again from it
                self._stale(f"a leaf tensor of shape {list(leaf.shape)} ({leaf.dtype}) used at "
                            f"version {self.in_versions[i]} is now at version "
                            f"{leaf._version.value} (a backward with create_graph=True through "
                            f"a jitted function computes its forward again)")
        level = _core.current_level()
        record_call = current_tape().record_call
        env: dict[int, object] = {}
        for v, (kind, i) in zip(bw.joint.inputs, bw.joint_layout):
            if kind == "leaf":
                env[id(v)] = self.edges[i]
            elif kind == "saved":
                env[id(v)] = self.saved[i]
            elif kind == "cotangent":
                g = cotangents[i]
                dtype, shape = bw.result_types[i]
                env[id(v)] = np.zeros(shape, dtype) if g is None else g
            else:  # a constant the trace read
                env[id(v)] = i
        given = set(id(x) for x in env.values())
        for node in bw.joint.nodes:
            if node.op == "constant":
                env[id(node.outputs[0])] = node.const
                continue
            kernels = level.grad_run if node.backward else level.run
            outs = record_call(kernels, node.op, [env[id(v)] for v in node.inputs], node.attrs)
            for v, o in zip(node.outputs, outs):
                env[id(v)] = o
        grads, handed = [], set()
        for v in bw.joint.outputs[1:]:
            g = env[id(v)]
            if not isinstance(g, Tensor):  # a constant: a new array
                g = Tensor._wrap(np.array(g, copy=True))
            elif id(g) in handed or id(g) in given:  # a recorded copy, differentiable
                g = record_call(level.run, "reshape", [g], {"shape": tuple(g.shape)})[0]
            handed.add(id(g))
            grads.append(g)
        return grads

    @staticmethod
    def _stale(what: str) -> None:
        raise AutogradError(
            f"backward: a value needed for gradient computation has been modified by an "
            f"in-place operation: {what}; compute the value again (or update a copy) instead "
            f"of writing into it before backward")


def attach(backward: CompiledBackward, leaves: tuple, saved: tuple, results: tuple,
           offsets: tuple = ()) -> None:
    """Give the result tensors of one call of a jitted entry their autograd
    record (what the entry's code calls after its graph ran, after its in-place
    writes bumped the versions of the tensors they updated).  A leaf is listed
    once per version the call read; ``offsets[k]``: the version leaf ``k`` was
    read at minus its version now (0 unless the call updated it afterwards,
    as an optimizer step after a backward does)."""
    rec = CompiledRecord(backward, leaves, saved, tuple(t._data for t in results), offsets)
    versions = []
    for j, t in enumerate(results):
        t._grad_fn = (rec, j)
        EAGER_TAPE.track(t)
        versions.append((t._version, 0))
    rec.out_versions = tuple(versions)
