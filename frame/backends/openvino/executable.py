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
  as a shared input tensor, and a fresh array per call as a shared output
  tensor that OpenVINO writes into.  For 1024x1024 float32 that saves both
  copies (~0.3 ms of 0.8 ms).

Outputs never alias the request's buffers: small outputs are copied, large
ones are fresh arrays the request lets go of before the next call (a new
output tensor is bound first).  ``compiled_model(...)`` shares one internal
request and is not thread-safe, hence one request per thread
(``threading.local``).
"""
from __future__ import annotations

import threading
from typing import Sequence

import numpy as np
import openvino as ov

from ...hal.backend import Executable
from ...hal.errors import FrameTypeError, FrameValueError
from ...ir.graph import Graph
from ...ops.registry import get_schema
from .lower import INPUT_INT64, OUT_CONST, OUT_INPUT, OUT_MODEL, LoweredGraph

__all__ = ["OpenVinoExecutable", "SHARE_BYTES", "evaluate_reference"]

SHARE_BYTES = 1 << 17  # at and above this size, bind without copying (crossover measured)


class _InputSlot:
    __slots__ = ("graph_index", "param", "int64", "np_dtype", "shape", "share", "ov_type",
                 "bound_shape")

    def __init__(self, graph_index: int, param: int, int64: bool, np_dtype: np.dtype,
                 shape: tuple[int, ...], ov_type: ov.Type, bound_shape: list[int]):
        self.graph_index = graph_index
        self.param = param
        self.int64 = int64
        self.np_dtype = np_dtype
        self.shape = shape
        self.ov_type = ov_type
        self.bound_shape = bound_shape
        self.share = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize >= SHARE_BYTES


class _Request:
    """One thread's infer request with its pre-bound tensors' numpy views."""

    __slots__ = ("req", "in_views", "out_views")

    def __init__(self, compiled: ov.CompiledModel, inputs: list[_InputSlot],
                 outputs: list[tuple[ov.Type, list[int], bool]]):
        self.req = compiled.create_infer_request()
        self.in_views: list[np.ndarray | None] = []
        for slot in inputs:
            if slot.share:
                self.in_views.append(None)
                continue
            t = ov.Tensor(slot.ov_type, slot.bound_shape)
            self.req.set_input_tensor(slot.param, t)
            self.in_views.append(t.data)
        self.out_views: list[np.ndarray | None] = []
        for k, (ov_type, shape, share) in enumerate(outputs):
            if share:
                self.out_views.append(None)
                continue
            t = ov.Tensor(ov_type, shape)
            self.req.set_output_tensor(k, t)
            self.out_views.append(t.data)


class OpenVinoExecutable(Executable):
    """A graph compiled by OpenVINO.  ``run`` is thread-safe."""

    def __init__(self, graph: Graph, lowered: LoweredGraph, compiled: ov.CompiledModel | None):
        self.input_types = tuple(v.type for v in graph.inputs)
        self.output_types = tuple(v.type for v in graph.outputs)
        self._graph = graph  # the reference re-run when a run-time check fails
        self._compiled = compiled
        self._local = threading.local()
        self._outputs = lowered.outputs
        self._flag = lowered.flag_output
        self._inputs: list[_InputSlot] = []
        for i, entry in enumerate(lowered.inputs):
            if entry is None:
                continue
            param, mode = entry
            t = graph.inputs[i].type
            int64 = mode == INPUT_INT64
            ov_input = compiled.input(param)
            self._inputs.append(_InputSlot(i, param, int64, t.dtype.np, t.shape,
                                           ov_input.get_element_type(),
                                           list(ov_input.get_shape())))
        # per model output: (element type, shape, bind without copy)
        self._model_outputs: list[tuple[ov.Type, list[int], np.dtype | None, bool]] = []
        if compiled is not None:
            for k, port in enumerate(compiled.outputs):
                shape = list(port.get_shape())
                np_dtype = np.dtype(port.get_element_type().to_dtype())
                nbytes = int(np.prod(shape, dtype=np.int64)) * np_dtype.itemsize
                share = nbytes >= SHARE_BYTES and k != self._flag
                self._model_outputs.append((port.get_element_type(), shape, np_dtype, share))

    def _request(self) -> _Request:
        state = getattr(self._local, "request", None)
        if state is None:
            state = _Request(self._compiled, self._inputs,
                             [(t, s, share) for t, s, _, share in self._model_outputs])
            self._local.request = state
        return state

    def _check_inputs(self, inputs: Sequence[np.ndarray]) -> None:
        if len(inputs) != len(self.input_types):
            raise FrameValueError(f"openvino executable: expected {len(self.input_types)} "
                                  f"inputs, got {len(inputs)}")
        for i, (x, t) in enumerate(zip(inputs, self.input_types)):
            if not isinstance(x, np.ndarray) or x.dtype != t.dtype.np or x.shape != t.shape:
                got = f"{x.dtype}{list(x.shape)}" if isinstance(x, np.ndarray) else type(x).__name__
                raise FrameTypeError(f"openvino executable: input {i} must be {t}, got {got}")

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        self._check_inputs(inputs)
        if self._compiled is None:
            return self._assemble(inputs, [])
        state = self._request()
        req = state.req
        for slot, view in zip(self._inputs, state.in_views):
            x = inputs[slot.graph_index]
            if slot.int64:
                x = x.reshape(-1).view(np.int32)  # (low, high) word pairs; a view when contiguous
            if view is not None:
                np.copyto(view, x.reshape(view.shape) if x.shape != view.shape else x)
            else:
                req.set_input_tensor(slot.param, ov.Tensor(np.ascontiguousarray(x),
                                                            shared_memory=True))
        fresh: list[np.ndarray | None] = []
        for k, (_, shape, np_dtype, share) in enumerate(self._model_outputs):
            if share:
                o = np.empty(shape, np_dtype)
                req.set_output_tensor(k, ov.Tensor(o, shared_memory=True))
                fresh.append(o)
            else:
                fresh.append(None)
        req.infer()
        if self._flag is not None and state.out_views[self._flag].any():
            return self._reference(inputs)
        results = [o if o is not None else np.array(view, copy=True)
                   for o, view in zip(fresh, state.out_views)]
        return self._assemble(inputs, results)

    def _assemble(self, inputs: Sequence[np.ndarray], results: list[np.ndarray]) -> list[np.ndarray]:
        outs = []
        handed: set[int] = set()
        for kind, where in self._outputs:
            if kind == OUT_MODEL:
                value = results[where]
                if id(value) in handed:  # one model output listed twice: two arrays
                    value = value.copy()
                handed.add(id(value))
            elif kind == OUT_INPUT:
                value = np.array(inputs[where], copy=True)
            else:
                value = np.array(where, copy=True)
            outs.append(value)
        return outs

    def _reference(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """A run-time check failed (index out of range, int64 beyond int32): the
        reference kernels give the reference's result or raise its error."""
        return [np.array(o, copy=True) for o in evaluate_reference(self._graph, inputs)]


def evaluate_reference(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``graph`` node by node with the reference kernels (fused bodies included).

    The runtime's interpreter does the same; backends sit below the runtime and
    do not import it."""
    env: dict[int, np.ndarray] = {id(v): np.asarray(a) for v, a in zip(graph.inputs, inputs)}
    for node in graph.nodes:
        args = [env[id(v)] for v in node.inputs]
        if node.op == "constant":
            results = (node.const,)
        elif node.body is not None:
            results = evaluate_reference(node.body, args)
        else:
            results = get_schema(node.op).reference(args, node.attrs)
        for v, r in zip(node.outputs, results):
            env[id(v)] = np.asarray(r, dtype=v.type.dtype.np)
    return [env[id(v)] for v in graph.outputs]
