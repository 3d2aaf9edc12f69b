"""The graph side of capture: one Tracer per translation.

While the executor simulates a frame, frame's own API functions run for real
on *meta arrays*: zero-strided, read-only ndarrays with the right dtype and
shape and no memory behind them.  The tracer installs itself as the op
handler of ``frame.functions`` (``op_handler``), so every op those functions
issue becomes a graph node instead of a kernel launch, and comes back as a new
meta array.  ``values`` maps meta arrays (by identity) to graph Values; any
other array reaching an op is a constant.
"""
from __future__ import annotations

import numpy as np

from frame.dtypes import from_numpy
from frame.functions._core import op_handler
from frame.ir import GraphBuilder, TensorType, Value
from frame.tensor import Tensor

__all__ = ["Tracer", "UntracedArray", "TracedTensor"]


class UntracedArray(Exception):
    """An op saw an array derived from a meta array by plain NumPy (not by an
    op): its values are unknown, so the graph would be wrong."""


class TracedTensor(Tensor):
    """The Tensor frame's functions are handed for a traced value: a meta array
    whose values are unknown.  Converting it to an ndarray (``np.asarray``,
    also of a list holding it) would read those made-up values instead of
    issuing an op, so it raises."""
    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        raise UntracedArray("a traced tensor was converted to a NumPy array outside frame's ops")


class Tracer:
    def __init__(self, device: str = "cpu"):
        self.builder = GraphBuilder(device=device)
        self.values: dict[int, Value] = {}
        self._alive: list[np.ndarray] = []       # keeps ids of meta arrays unique
        self._zeros: dict[np.dtype, np.ndarray] = {}
        self._consts: dict[int, Value] = {}
        # autograd (see capture/autograd.py): ids of the meta arrays that stand for
        # tensors that require grad; the ops recorded for autograd, with which of
        # their operands were tracked; and meta arrays overwritten in place after
        # a recorded op read them
        self.tracked: set[int] = set()
        self.records: list[tuple] = []          # (node, operand meta ids, tracked flags)
        self.recorded_operands: set[int] = set()
        self.overwritten: set[int] = set()
        self.grad_enabled = lambda: True        # the translation's grad mode (set by it)

    @property
    def graph(self):
        return self.builder.graph

    @property
    def op_count(self) -> int:
        return sum(1 for n in self.graph.nodes if n.op != "constant")

    # -- meta arrays ------------------------------------------------------------
    def meta(self, value: Value) -> np.ndarray:
        """A fresh meta array standing for ``value``."""
        t = value.type
        dt = t.dtype.np
        zero = self._zeros.get(dt)
        if zero is None:
            zero = self._zeros[dt] = np.zeros((), dtype=dt)
        arr = np.lib.stride_tricks.as_strided(zero, shape=t.shape, strides=(0,) * len(t.shape),
                                              writeable=False)
        self.values[id(arr)] = value
        self._alive.append(arr)
        return arr

    def is_meta(self, arr) -> bool:
        return id(arr) in self.values

    def value_of(self, arr: np.ndarray) -> Value:
        v = self.values.get(id(arr))
        if v is not None:
            return v
        if any(np.shares_memory(arr, z) for z in self._zeros.values()):
            raise UntracedArray("a tensor was transformed by NumPy code outside frame's ops")
        v = self._consts.get(id(arr))
        if v is None:
            v = self.builder.constant(np.array(arr, copy=True))
            self._consts[id(arr)] = v
            self._alive.append(arr)
        return v

    # -- graph building ----------------------------------------------------------
    def add_input(self, type: TensorType, name: str | None = None) -> np.ndarray:
        return self.meta(self.builder.graph.add_input(type, name))

    def input_for(self, array: np.ndarray, name: str | None = None) -> np.ndarray:
        return self.add_input(TensorType(from_numpy(array.dtype), array.shape), name)

    def handle(self, op: str, arrays, attrs) -> list[np.ndarray]:
        """The op handler: append a node, return meta arrays for its outputs."""
        inputs = [self.value_of(a) for a in arrays]
        outs = self.builder.op_multi(op, inputs, attrs)
        metas = [self.meta(v) for v in outs]
        if self.tracked:
            self._record(arrays, outs, metas)
        return metas

    def _record(self, arrays, outs, metas) -> None:
        """Record the node just appended for autograd, as eager's tape does: when
        grad mode is on and an operand stands for a tensor that requires grad,
        its floating outputs require grad too."""
        flags = tuple(id(a) in self.tracked for a in arrays)
        if not any(flags) or not any(v.type.dtype.kind in "fc" for v in outs):
            return
        if not self.grad_enabled():
            return
        node = outs[0].producer
        ids = tuple(id(a) for a in arrays)
        self.records.append((node, ids, flags))
        self.recorded_operands.update(ids)
        for v, m in zip(outs, metas):
            if v.type.dtype.kind in "fc":
                self.tracked.add(id(m))

    def active(self):
        """Context manager: route frame ops in this thread to this tracer."""
        return op_handler(self.handle)
