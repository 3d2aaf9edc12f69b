"""The run path: one compiled model, one infer request per thread.

Binding is decided once per tensor, from its size (measured in
docs/openvino.md, 4-element and 1024x1024 models, medians of interleaved
rounds):

- small tensors (< 128 KiB) use tensors pre-bound to the request: the input
  is copied into the bound tensor's ``.data`` view and the output copied out
  of its view.  ~0.2 us over the raw pre-bound ``infer()`` call, where
  binding a fresh shared ``ov.Tensor`` costs ~5 us and ``infer(x,
  share_inputs=True)`` ~35 us.
- large tensors are bound without copies: the caller's (contiguous) array
  as a shared input tensor (not bound again when the same array comes back:
  a parameter, a reused batch), and as a shared output tensor a request-owned
  array that is handed out.  For 1024x1024 float32 that saves both copies
  (~0.3 ms of 0.8 ms).

Outputs never alias the request's buffers while the caller can see them:
small outputs are copied; a large one takes turns in a pool of two
request-owned arrays (``POOL_SIZE``) and is written only when nobody but the
pool references it (``sys.getrefcount``), so an output the caller keeps
(a training step's gradients, held until the next step) is never
overwritten, and the arrays OpenVINO writes into stay the same two
(binding memory it has not seen costs a re-setup: the MLP training step was
1.4x slower per call when the caller held its outputs for one call).  Inputs
are never written: OpenVINO cannot compute an output into an input's memory
(its node order is its own), so ``CompileOptions.donate`` is not honoured
here and an in-place update is copied back by the caller.
``compiled_model(...)`` shares one internal
request and is not thread-safe, hence one request per thread
(``threading.local``).
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, Sequence

import numpy as np
import openvino as ov

try:  # the binding class under ov.InferRequest (whose infer() copies every output)
    from openvino._pyopenvino import InferRequest as _RawInferRequest
except ImportError:  # pragma: no cover
    _RawInferRequest = None

from ...hal.backend import Executable
from ...errors import FrameTypeError, FrameValueError
from ...ir.graph import Graph
from ...ir.types import TensorType
from ...hal.fp_errors import GraphErrorStates
from ...ops.interpreter import evaluate
from .lower import (INPUT_COMPLEX, INPUT_DIRECT, INPUT_INT64, INPUT_INT64_COPY, OUT_INPUT,
                    OUT_MODEL, SHARE_BYTES, LoweredGraph)

__all__ = ["OpenVinoExecutable", "SHARE_BYTES"]

POOL_SIZE = 2  # arrays a shared output takes turns in (a caller holds the last one for a step)


def _free_refcount() -> int:
    """``sys.getrefcount(pool[i][0])`` for an array only its pool item holds
    (measured in the same code shape, so it holds for this interpreter)."""
    pool = [[np.empty(1), None]]
    return sys.getrefcount(pool[0][0])


FREE_REFCOUNT = _free_refcount()


class _InputSlot:
    __slots__ = ("graph_index", "param", "mode", "np_dtype", "shape", "share", "ov_type",
                 "bound_shape")

    def __init__(self, graph_index: int, param: int, mode: str, np_dtype: np.dtype,
                 shape: tuple[int, ...], ov_type: ov.Type, bound_shape: list[int]):
        self.graph_index = graph_index
        self.param = param
        self.mode = mode
        self.np_dtype = np_dtype
        self.shape = shape
        self.ov_type = ov_type
        self.bound_shape = bound_shape
        self.share = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize >= SHARE_BYTES


class _Request:
    """One thread's infer request with its pre-bound tensors' numpy views."""

    __slots__ = ("req", "infer", "in_views", "out_views", "copy_in", "shared_out", "bound",
                 "bound_in", "keep_in")

    def __init__(self, compiled: ov.CompiledModel, inputs: list[_InputSlot],
                 outputs: list[tuple[ov.Type, list[int], bool]]):
        self.req = compiled.create_infer_request()
        self.infer = _infer_call(self.req)
        self.in_views: list[np.ndarray | None] = []
        # the caller's array each shared input is bound to now (kept alive by the
        # request's tensor, so identity means the same memory)
        self.bound_in: list[np.ndarray | None] = [None] * len(inputs)
        # the array each shared input's tensor reads, kept alive while bound
        self.keep_in: list[np.ndarray | None] = [None] * len(inputs)
        for slot in inputs:
            if slot.share:
                self.in_views.append(None)
                continue
            t = ov.Tensor(slot.ov_type, slot.bound_shape)
            self.req.set_input_tensor(slot.param, t)
            self.in_views.append(t.data)
        # (graph input, view, dtype, shape) of the plain copied inputs: the fast path's loop
        self.copy_in = [(slot.graph_index, view, slot.np_dtype, slot.shape)
                        for slot, view in zip(inputs, self.in_views)
                        if view is not None and slot.mode == INPUT_DIRECT]
        self.out_views: list[np.ndarray | None] = []
        # each shared output's pool (see OpenVinoExecutable._run_general): [array,
        # the ov.Tensor owning its memory] items, the array a view of the tensor's
        self.shared_out: list[list[list] | None] = [None] * len(outputs)
        self.bound: list[int] = [-1] * len(outputs)   # the pool slot bound to the request
        for k, (ov_type, shape, share) in enumerate(outputs):
            if share:
                self.out_views.append(None)
                continue
            t = ov.Tensor(ov_type, shape)
            self.req.set_output_tensor(k, t)
            self.out_views.append(t.data)


def _infer_call(req: ov.InferRequest) -> Callable[[], None]:
    """A function running ``req`` once on its bound tensors, returning nothing.

    Not ``req.infer()``: the Python wrapper copies every output into a new
    NumPy array for the dict it returns (1.8 MB a call on the MLP training
    step), which this executable never reads.  The binding's ``infer`` with
    ``share_outputs`` gives views, no copies (9.6 us a call on a 4-element
    graph, against 10.7 us through the wrapper).  (``start_async()`` +
    ``wait()`` on the plugin's stream threads was measured faster under heavy
    load only; it is not used: one full-suite run on 3.13 saw an output whose
    first elements were never written, and the cause is not known.)"""
    raw = getattr(_RawInferRequest, "infer", None)
    if raw is None:  # (another binding layout: the wrapper, which copies)
        return req.infer
    no_inputs: dict = {}

    def infer() -> None:
        raw(req, no_inputs, True, True)
    return infer


class OpenVinoExecutable(Executable):
    """A graph compiled by OpenVINO.  ``run`` is thread-safe."""

    def __init__(self, graph: Graph | Callable[[], Graph], lowered: LoweredGraph,
                 compiled: ov.CompiledModel | None,
                 types: tuple[Sequence[TensorType], Sequence[TensorType]] | None = None):
        """``graph`` may be a function making it, with its input and output
        ``types`` given: it is needed only for a reference re-run, and a
        persisted executable then loads without parsing it."""
        if isinstance(graph, Graph):
            types = ([v.type for v in graph.inputs], [v.type for v in graph.outputs])
            self._graph_value: Graph | None = graph
            self._make_graph = None
        else:
            self._graph_value, self._make_graph = None, graph
        self.input_types = tuple(types[0])
        self.output_types = tuple(types[1])
        self._graph_lock = threading.Lock()
        self._compiled = compiled
        self._local = threading.local()
        self._outputs = lowered.outputs
        self._flag = lowered.flag_output
        self._host_checks = list(lowered.host_checks)
        self._errstates = GraphErrorStates(lowered.errstates)
        self._expect = [(t.dtype.np, t.shape) for t in self.input_types]
        self._inputs: list[_InputSlot] = []
        for i, entry in enumerate(lowered.inputs):
            if entry is None:
                continue
            param, mode = entry
            t = self.input_types[i]
            ov_input = compiled.input(param)
            self._inputs.append(_InputSlot(i, param, mode, t.dtype.np, t.shape,
                                           ov_input.get_element_type(),
                                           list(ov_input.get_shape())))
        self._aliases = list(lowered.aliases)
        for i, param in self._aliases:  # the same array bound once more (lower.py)
            t = self.input_types[i]
            ov_input = compiled.input(param)
            self._inputs.append(_InputSlot(i, param, INPUT_DIRECT, t.dtype.np, t.shape,
                                           ov_input.get_element_type(),
                                           list(ov_input.get_shape())))
        # per model output: (element type, shape, numpy dtype, bind without copy)
        self._model_outputs: list[tuple[ov.Type, list[int], np.dtype, bool]] = []
        if compiled is not None:
            for k, port in enumerate(compiled.outputs):
                shape = list(port.get_shape())
                np_dtype = np.dtype(port.get_element_type().to_dtype())
                nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
                share = nbytes >= SHARE_BYTES and k != self._flag
                self._model_outputs.append((port.get_element_type(), shape, np_dtype, share))
        # model outputs that are complex64 values held as float32 pairs
        self._complex_out = {where for (kind, where), t in zip(self._outputs, self.output_types)
                             if kind == OUT_MODEL and t.dtype.is_complex}
        # The common small case gets a lean path (measured: the generic loops cost
        # ~4 us a call on a ~10 us infer): every input copied into its bound tensor,
        # every output copied out of its own, in order, no run-time checks.
        in_order = [(OUT_MODEL, k) for k in range(len(self._model_outputs))]
        self._simple = (compiled is not None and self._flag is None and not self._complex_out
                        and not self._host_checks
                        and all(not s.share and s.mode == INPUT_DIRECT for s in self._inputs)
                        and not any(share for *_, share in self._model_outputs)
                        and list(self._outputs) == in_order)

    @property
    def _graph(self) -> Graph:
        """The graph, for the reference re-run when a run-time check fails."""
        with self._graph_lock:
            if self._graph_value is None:
                self._graph_value = self._make_graph()
            return self._graph_value

    def _request(self) -> _Request:
        state = getattr(self._local, "request", None)
        if state is None:
            state = _Request(self._compiled, self._inputs,
                             [(t, s, share) for t, s, _, share in self._model_outputs])
            self._local.request = state
        return state

    def _checked(self, inputs: Sequence[np.ndarray]) -> Sequence[np.ndarray]:
        """``inputs``, validated against the input types (NumPy scalars become 0-d)."""
        if len(inputs) != len(self._expect):
            raise FrameValueError(f"openvino executable: expected {len(self._expect)} "
                                  f"inputs, got {len(inputs)}")
        for i, (x, (dt, shape)) in enumerate(zip(inputs, self._expect)):
            if x.__class__ is np.ndarray and x.shape == shape and (x.dtype is dt or x.dtype == dt):
                continue
            if not isinstance(x, (np.ndarray, np.generic)):
                raise FrameTypeError(f"openvino executable: input {i} must be a NumPy array "
                                     f"({self.input_types[i]}), got {type(x).__name__}")
            x = np.asarray(x)  # a NumPy scalar, or an ndarray subclass
            if x.dtype != dt or x.shape != shape:
                raise FrameTypeError(f"openvino executable: input {i} must be "
                                     f"{self.input_types[i]}, got {x.dtype}{list(x.shape)}")
            inputs = list(inputs)
            inputs[i] = x
        return inputs

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if self._errstates.raise_requested():
            # NumPy is asked to raise on floating-point errors (np.seterr, np.errstate,
            # a warnings filter) for some op, under the op's own error state where it
            # has one: OpenVINO cannot tell, the reference kernels do
            return self._reference(self._checked(inputs))
        if self._simple and len(inputs) == len(self._expect):
            state = getattr(self._local, "request", None) or self._request()
            for i, view, dt, shape in state.copy_in:
                x = inputs[i]
                if x.__class__ is not np.ndarray or x.shape != shape or (
                        x.dtype is not dt and x.dtype != dt):
                    x = self._checked(inputs)[i]  # converts a NumPy scalar, or raises
                view[...] = x
            state.infer()
            return [view.copy() for view in state.out_views]
        inputs = self._checked(inputs)
        if self._compiled is None:
            return self._assemble(inputs, [])
        return self._run_general(inputs)

    def _run_general(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        for i, low, high in self._host_checks:  # indices the model would clamp: lower.py
            x = inputs[i]
            if x.size and (x.min() < low or x.max() >= high):
                return self._reference(inputs)  # the reference's error (or result)
        state = self._request()
        req = state.req
        bound_in = state.bound_in
        for i, (slot, view) in enumerate(zip(self._inputs, state.in_views)):
            x = inputs[slot.graph_index]
            if view is None and x is bound_in[i]:
                continue  # the array bound last call (a parameter, a reused batch)
            if slot.mode == INPUT_INT64_COPY:
                np.copyto(view, x, casting="unsafe")  # int64 -> int32, wrapping
                if (view != x).any():  # a value outside int32: the reference's result
                    return self._reference(inputs)
                continue
            if slot.mode == INPUT_INT64:
                x = x.reshape(-1).view(np.int32)  # (low, high) word pairs; a view when contiguous
            elif slot.mode == INPUT_COMPLEX:
                x = np.ascontiguousarray(x).view(np.float32).reshape(slot.bound_shape)
            if view is not None:
                np.copyto(view, x.reshape(view.shape) if x.shape != view.shape else x)
            else:
                bound = np.ascontiguousarray(x)
                req.set_input_tensor(slot.param, ov.Tensor(bound, shared_memory=True))
                # The request's tensor does not keep the array alive (the Python
                # ov.Tensor does, and it is gone after this line): keep it here
                # until it is replaced, a copy made just now included.
                state.keep_in[i] = bound
                # only the caller's own array can be bound again as it is
                bound_in[i] = x if bound is x and slot.mode == INPUT_DIRECT else None
        # A large output is computed straight into a NumPy array that is handed out.
        # Each takes turns in a pool of POOL_SIZE arrays, each with its own
        # ov.Tensor: the array bound last is kept while nobody holds it any more
        # (its reference count is back to what the pool alone gives it: the caller
        # dropped it), else another free array of the pool is bound; only when
        # the caller holds them all is a new one made (replacing the first).
        # Binding memory OpenVINO has not seen costs it a re-setup (measured: the
        # MLP training step, whose gradients the caller holds for one step, ran
        # ~2x slower when a new array was bound every call).
        fresh: list[np.ndarray | None] = []
        shared_out, bound = state.shared_out, state.bound
        for k, (_, shape, np_dtype, share) in enumerate(self._model_outputs):
            if not share:
                fresh.append(None)
                continue
            pool = shared_out[k]
            if pool is None:
                pool = shared_out[k] = []
            slot = bound[k]
            if slot < 0 or sys.getrefcount(pool[slot][0]) != FREE_REFCOUNT:
                slot = next((i for i in range(len(pool))
                             if sys.getrefcount(pool[i][0]) == FREE_REFCOUNT), -1)
                if slot < 0:  # all held: a new array (the pool's first is let go)
                    tensor = ov.Tensor(self._model_outputs[k][0], shape)
                    slot = len(pool) if len(pool) < POOL_SIZE else 0
                    if slot == len(pool):
                        pool.append([tensor.data, tensor])
                    else:
                        pool[slot] = [tensor.data, tensor]
                req.set_output_tensor(k, pool[slot][1])
                bound[k] = slot
            fresh.append(pool[slot][0])
        state.infer()
        if self._flag is not None and state.out_views[self._flag].any():
            return self._reference(inputs)
        results = [o if o is not None else view.copy() for o, view in zip(fresh, state.out_views)]
        for k in self._complex_out:  # float32 pairs -> complex64, no copy
            results[k] = results[k].view(np.complex64)[..., 0]
        return self._assemble(inputs, results)

    def _assemble(self, inputs: Sequence[np.ndarray], results: list[np.ndarray]) -> list[np.ndarray]:
        outs = []
        handed: set[int] = set()
        for k, (kind, where) in enumerate(self._outputs):
            if kind == OUT_MODEL:
                value = results[where]
                if id(value) in handed:  # one model output listed twice: two arrays
                    value = value.copy()
                handed.add(id(value))
            elif kind == OUT_INPUT:
                # the input itself, or an identity lowering's cast of it (int64 ->
                # int32 of an input whose range was checked)
                value = np.array(inputs[where], dtype=self.output_types[k].dtype.np, copy=True)
            else:
                value = np.array(where, copy=True)
            outs.append(value)
        return outs

    def _reference(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """A run-time check failed (index out of range, int64 beyond int32): the
        reference kernels give the reference's result or raise its error."""
        return [np.array(o, copy=True) for o in evaluate(self._graph, list(inputs))]
