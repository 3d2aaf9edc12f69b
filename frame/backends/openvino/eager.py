"""Eager kernels: one op at a time, as a one-op model compiled once per
(op, attrs, input types) and cached.

They serve ``Backend.launch`` and the fallback chain's first hop (the
backend's own eager kernel).  An eager kernel sees materialised host arrays,
so it can do a little more than the same node inside a graph: its float16
inputs are rounded and its int64 inputs are checked on every run.  What it
cannot do exactly it refuses with UNIMPLEMENTED, naming op and dtypes;
``accepts(node)`` answers the same question before any data exists.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ...dtypes import from_numpy
from ...errors import ErrorCode, FrameError, unimplemented
from ...ir.builder import GraphBuilder
from ...ir.graph import Graph, Node
from ...ir.types import TensorType
from .support import unsupported_reason
from .table import RULES

if TYPE_CHECKING:
    from .backend import OpenVinoBackend
    from .executable import OpenVinoExecutable

__all__ = ["EagerCache", "EagerKernel", "NEVER_EAGER"]

# constants are payloads, fused nodes are opened by the fallback chain before it
# looks for kernels, and these rules refuse every dtype
NEVER_EAGER = frozenset({"constant", "floordiv", "mod", "rfft", "irfft"})
_LIMIT = 4096  # cached one-op models; cleared wholesale past it (compile again on demand)


def _one_op_graph(op: str, types: Sequence[TensorType], attrs: Mapping[str, Any]) -> Graph:
    b = GraphBuilder()
    ins = [b.input(t.dtype, t.shape) for t in types]
    outs = b.op_multi(op, ins, dict(attrs))
    return b.build(*outs)


class EagerCache:
    """(op, attrs, input types) -> compiled one-op executable, or the refusal."""

    def __init__(self, backend: "OpenVinoBackend"):
        self._backend = backend
        self._lock = threading.Lock()
        self._entries: dict[tuple, "OpenVinoExecutable | FrameError"] = {}

    def clear(self) -> None:
        """Forget every one-op model and refusal (tests that change the rules)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _key(self, op: str, types: Sequence[TensorType], attrs: Mapping[str, Any]) -> tuple:
        return (op, tuple(sorted(attrs.items())), tuple(types))

    def _build(self, op: str, types: Sequence[TensorType], attrs: Mapping[str, Any]):
        if op in NEVER_EAGER or op not in RULES:
            shown = ", ".join(str(t) for t in types)
            return unimplemented(f"backend 'openvino' has no eager kernel for op '{op}' ({shown})")
        graph = _one_op_graph(op, types, attrs)
        why = unsupported_reason(graph.nodes[-1])
        if why is not None:
            return unimplemented(why)
        return self._backend.compile_exact(graph)

    def entry(self, op: str, types: Sequence[TensorType], attrs: Mapping[str, Any]):
        key = self._key(op, types, attrs)
        found = self._entries.get(key)
        if found is None:
            found = self._build(op, types, attrs)  # compiled outside the lock: ~30 ms
            with self._lock:
                if len(self._entries) >= _LIMIT:
                    self._entries.clear()
                found = self._entries.setdefault(key, found)
        return found

    def run(self, op: str, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list[np.ndarray]:
        arrays = [np.asarray(x) for x in inputs]
        types = [TensorType(from_numpy(a.dtype), a.shape) for a in arrays]
        found = self.entry(op, types, attrs)
        if isinstance(found, FrameError):
            raise found.with_message(found.message)  # a fresh exception each time
        return found.run(arrays)

    def accepts(self, node: Node) -> bool:
        """Would the eager kernel run this node (on materialised inputs) exactly?"""
        if node.body is not None or node.op in NEVER_EAGER:
            return False
        try:
            found = self.entry(node.op, [v.type for v in node.inputs], node.attrs)
        except FrameError as err:
            if err.code is ErrorCode.UNIMPLEMENTED:
                return False
            raise
        return not isinstance(found, FrameError)


class EagerKernel:
    """The kernel ``kernel_registry`` hands out for (op, 'openvino')."""

    __slots__ = ("op", "_cache")

    def __init__(self, op: str, cache: EagerCache):
        self.op = op
        self._cache = cache

    def __call__(self, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list[np.ndarray]:
        return self._cache.run(self.op, inputs, attrs)

    def accepts(self, node: Node) -> bool:
        return self._cache.accepts(node)

    def __repr__(self) -> str:
        return f"<openvino eager kernel {self.op}>"
