"""A tiny test backend that compiles only a few ops, to drive the fallback chain.

It supports add, mul, relu and constants in compiled graphs; it has an eager
kernel of its own for ``exp`` (fallback hop 1); everything else falls back.
Its compile runs the reference interpreter and counts compiles.
"""
from __future__ import annotations

import threading

import numpy as np

from frame.hal import Backend, Executable, kernel_registry, register_backend
from frame.ops.interpreter import evaluate

SUPPORTED = {"add", "mul", "relu", "constant", "sub"}


class TinyExecutable(Executable):
    def __init__(self, graph):
        self.graph = graph
        self.input_types = tuple(v.type for v in graph.inputs)
        self.output_types = tuple(v.type for v in graph.outputs)

    def run(self, inputs):
        return [np.array(o, copy=True) for o in evaluate(self.graph, inputs)]


class TinyBackend(Backend):
    name = "tiny"

    def __init__(self):
        self.compiled_graphs = []
        self.lock = threading.Lock()

    def supports(self, node) -> bool:
        if node.body is not None:
            return all(self.supports(n) for n in node.body.nodes)
        return node.op in SUPPORTED

    def why_unsupported(self, node):
        return f"tiny compiles only {', '.join(sorted(SUPPORTED))}"

    def compile(self, graph, options):
        with self.lock:
            self.compiled_graphs.append(graph)
        return TinyExecutable(graph)


def _tiny_exp(ins, attrs):
    return (np.exp(ins[0]),)


kernel_registry.register("exp", "tiny", _tiny_exp)
_instance = TinyBackend()
register_backend("tiny", lambda: _instance)


def tiny() -> TinyBackend:
    return _instance
