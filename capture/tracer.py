"""The graph side of capture: one Tracer per translation.

While the executor simulates a frame, frame's own API functions run for real
on *meta arrays*: zero-strided, read-only ndarrays with the right dtype and
shape and no memory behind them.  The tracer installs itself as the op
level of the op-handler stack of ``frame.functions`` (``push_level``): its
kernels make every op those functions issue a graph node instead of a kernel
launch, which comes back as a new meta array, and its tape (``CaptureTape``,
eager's autograd tape over meta arrays) records them for autograd.  ``values`` maps meta arrays (by identity) to graph Values; any
other array reaching an op is a constant.
"""
from __future__ import annotations

import weakref

import numpy as np

from frame.autograd.tape import Tape, VersionCounter
from frame.dtypes import as_dtype, from_numpy
from frame.functions._core import OpLevel, push_level
from frame.ir import GraphBuilder, TensorType, Value
from frame.tensor import Tensor

__all__ = ["Tracer", "CaptureTape", "UntracedArray", "TracedTensor"]


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
        # autograd (capture/autograd.py): the tape of the tracer's level
        self.tape = CaptureTape()
        # random draws (frame.functions.random.draw; NumPy's generators, host_draw): each
        # a graph input that the entry draws on the host before the graph runs, in
        # program order; a spec is frame's (method, shape, dtype, param) or host code's
        self.draws: list[tuple[object, Value]] = []
        # NumPy's error state the traced code set (``with np.errstate(...)``,
        # capture/variables/errstate.py): each node appended gets it (Node.errstate)
        self.errstate: tuple[tuple[str, str], ...] | None = None
        self.level = OpLevel(self.handle, self.tape, self.handle_gradient, self.fresh, self.draw,
                             known=self.known)

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

    def known(self, arr: np.ndarray) -> np.ndarray | None:
        """The value of a meta array that stands for a constant of the graph
        (an array the function made from constants), read-only; None for any
        other array (``frame.functions._core.known_value``)."""
        v = self.values.get(id(arr))
        if v is None:   # a real array handed to a frame function: a constant (value_of)
            if not isinstance(arr, np.ndarray) or any(np.shares_memory(arr, z) for z in self._zeros.values()):
                return None
            value = np.array(arr, copy=True)
        elif v.producer is None or v.producer.op != "constant" or v.producer.const is None:
            return None
        else:
            value = np.asarray(v.producer.const).view()
        value.flags.writeable = False
        return value

    # -- graph building ----------------------------------------------------------
    def add_input(self, type: TensorType, name: str | None = None) -> np.ndarray:
        return self.meta(self.builder.graph.add_input(type, name))

    def input_for(self, array: np.ndarray, name: str | None = None) -> np.ndarray:
        return self.add_input(TensorType(from_numpy(array.dtype), array.shape), name)

    def draw(self, method: str, shape: tuple[int, ...], dtype: str, param=None) -> np.ndarray:
        """The level's random draws: a new graph input for the sample (see
        ``draws``)."""
        meta = self.add_input(TensorType(as_dtype(dtype), tuple(shape)), f"random{len(self.draws)}")
        self.draws.append(((method, tuple(int(d) for d in shape), dtype, param), self.values[id(meta)]))
        return meta

    def host_draw(self, spec, dtype, shape: tuple[int, ...]) -> np.ndarray:
        """A draw some other host code makes (``spec``: a NumPy generator's
        method call, ``capture/variables/numpy_random.py``): a new graph input
        among ``draws``, in program order with frame's own."""
        meta = self.add_input(TensorType(dtype, tuple(shape)), f"random{len(self.draws)}")
        self.draws.append((spec, self.values[id(meta)]))
        return meta

    def draw_index(self, value: Value) -> int | None:
        """The position in ``draws`` of the draw ``value`` is the input of, if any."""
        return next((i for i, (_, v) in enumerate(self.draws) if v is value), None)

    def handle(self, op: str, arrays, attrs) -> list[np.ndarray]:
        """The kernels of the tracer's level: append a node, return meta arrays
        for its outputs."""
        inputs = [self.value_of(a) for a in arrays]
        outs = self.builder.op_multi(op, inputs, attrs)
        if outs:
            outs[0].producer.errstate = self.errstate
        else:
            self.graph.nodes[-1].errstate = self.errstate
        return [self.meta(v) for v in outs]

    def handle_gradient(self, op: str, arrays, attrs) -> list[np.ndarray]:
        """The kernels of the level for backward's gradient nodes: ``handle``,
        the node marked as a backward one (``Node.backward``)."""
        metas = self.handle(op, arrays, attrs)
        self.values[id(metas[0])].producer.backward = True
        return metas

    def fresh(self, arr: np.ndarray) -> np.ndarray:
        """A new meta array for the value ``arr`` stands for (the level's ``copy``)."""
        return self.meta(self.value_of(arr))

    def active(self):
        """Context manager: push the tracer's level (its kernels and its autograd
        tape) on this thread's op-handler stack."""
        return push_level(self.level)


class CaptureTape(Tape):
    """The autograd tape of the tracer's level: eager's tape (the same records,
    version counters and backward) over meta arrays.  The tensors it tracks
    are stand-ins (``Tensor._wrap(meta)``) that live as long as the
    translation; grad mode is the translation's symbolic one (read, and
    guarded, only when an op would be recorded).  What the traced function
    gets back from a recorded op is a plain tensor: whether a value requires
    grad is known by its meta array (``is_tracked``), and the translation
    turns it into ``TensorVariable.requires_grad``.

    A tracked value updated in place (under ``no_grad``) is at the next
    version of its stand-in, as eager's ``bump_version`` does, so eager's
    version checks decide.  An untracked one has no version in eager either:
    backward reads the overwritten memory, which the graph cannot.  So
    ``read`` holds the ids of the untracked meta arrays recorded ops read, and
    ``overwritten`` those of them whose variable was updated in place since;
    a backward through such a record runs natively."""

    def __init__(self):
        super().__init__({}, self)
        self.keep: list[Tensor] = []
        self.read: set[int] = set()
        self.overwritten: set[int] = set()
        self.grad_enabled = lambda: True        # the translation's grad mode (set by it)

    @property
    def enabled(self) -> bool:
        """The tape's ``mode.enabled``: the translation's grad mode, read (and
        guarded) only when an op would be recorded."""
        return self.grad_enabled()

    def track(self, t: Tensor) -> None:
        t._rg = True
        if t._version is None:
            t._version = VersionCounter()
        self.tensors[id(t._data)] = weakref.ref(t)
        self.keep.append(t)

    def untrack(self, t: Tensor) -> None:
        """``set_requires_grad(t, False)`` of a leaf: later records read it as a constant."""
        t._rg = False
        if self.tensor(t._data) is t:
            del self.tensors[id(t._data)]

    def is_tracked(self, meta: np.ndarray) -> bool:
        return id(meta) in self.tensors

    def tensor(self, meta: np.ndarray) -> Tensor | None:
        """The tracked tensor standing for ``meta`` (None: untracked)."""
        ref = self.tensors.get(id(meta))
        return None if ref is None else ref()

    def leaf(self, meta: np.ndarray) -> Tensor:
        """A tracked leaf standing for ``meta``."""
        t = TracedTensor._wrap(meta)
        self.track(t)
        return t

    def apply(self, run, op, arrays, attrs) -> list:
        return [Tensor._wrap(t._data) if t._rg else t
                for t in super().apply(run, op, arrays, attrs)]

    def _record(self, op, attrs, arrays, sources, outs) -> list:
        self.read.update(id(a) for a, t in zip(arrays, sources) if t is None)
        return super()._record(op, attrs, arrays, sources, outs)
