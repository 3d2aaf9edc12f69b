"""Lowerings of data movement (reshape, transpose, broadcast_to, expand_dims,
squeeze, concat, stack, split, slice, take, pad, flip) and of the creation ops
(constant, full, arange).

These move or select values without computing new ones, so they keep int64
values that fit in int32 exact and pass float16 values through unchanged
(``computes=False``).  ``take`` and ``scatter_add`` check their indices at run
time: OpenVINO's Gather returns zeros for an out-of-range index (and
ScatterElementsUpdate throws) where the reference raises, so an out-of-range
index sends that call to the reference kernels, which raise the reference's
error.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import openvino.opset16 as ops

from ...ir.graph import Node
from ...ops.registry import get_schema
from .support import fits_int32
from .table import Lowerer, Out, lowering, out

__all__ = ["checked_index"]

# "through index 0" for a negative-step Slice: any stop below -dim means that
_BEFORE_START = -(2 ** 62)


def _shape_of(node: Node, i: int = 0) -> tuple[int, ...]:
    return node.outputs[i].type.shape


def _reshape_to(cx: Lowerer, x: Out, shape) -> Out:
    return out(ops.reshape(x, cx.ints(shape), False))


def checked_index(cx: Lowerer, index: Out, low: int, high: int) -> Out:
    """``index`` clamped into [low, high), with a run-time flag for any index
    outside it (the reference kernel raises for those, so the call re-runs there).

    Comparisons are exact integer ones (the plugin's Less on i32 runs in float32);
    the clamp keeps Gather/GatherElements/ScatterElementsUpdate from reading out
    of range or throwing before the flag is looked at.

    An index that is a small graph input as it is (cross_entropy's labels, an
    embedding's token ids) is checked by the executable on the host before the
    model runs (``Lowerer.host_checks``: a min and a max over a few hundred
    values, where the model would spend four nodes and a flag output), and
    needs no clamp."""
    source = index.get_node()
    if source.get_type_name() == "Parameter" and source.get_name() in cx.host_inputs:
        cx.host_checks.append((cx.host_inputs[source.get_name()], low, high))
        return index
    below = cx.int_below(index, low)
    inside = cx.int_below(index, high)
    cx.flag(out(ops.logical_or(below, out(ops.logical_not(inside)))))
    return out(ops.minimum(out(ops.maximum(index, cx.i32(low))), cx.i32(high - 1)))


@lowering("reshape", "expand_dims", "squeeze", int64=True, computes=False)
def _reshape(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [_reshape_to(cx, ins[0], _shape_of(node))]


@lowering("relayout", "dot_operand", "copy", int64=True, computes=False)
def _relayout(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # memory layout is NumPy's business (ops/layout.py); the elements are the input's
    return [ins[0]]


@lowering("transpose", int64=True, computes=False)
def _transpose(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [out(ops.transpose(ins[0], cx.ints(node.attrs["perm"])))]


@lowering("broadcast_to", int64=True, computes=False)
def _broadcast_to(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [out(ops.broadcast(ins[0], cx.ints(node.attrs["shape"])))]


def _to_output_kind(cx: Lowerer, node: Node, ins) -> list[Out]:
    kind = node.outputs[0].type.dtype.kind
    return [cx.to_kind(x, v.type.dtype, kind) for x, v in zip(ins, node.inputs)]


@lowering("concat", int64=True, computes=False)
def _concat(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    parts = _to_output_kind(cx, node, ins)
    if len(parts) == 1:
        return parts
    return [out(ops.concat(parts, node.attrs["axis"]))]


@lowering("stack", int64=True, computes=False)
def _stack(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    axis = node.attrs["axis"]
    parts = [out(ops.unsqueeze(x, cx.ints([axis]))) for x in _to_output_kind(cx, node, ins)]
    if len(parts) == 1:
        return parts
    return [out(ops.concat(parts, axis))]


@lowering("split", int64=True, computes=False)
def _split(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    sizes = node.attrs["sizes"]
    if len(sizes) == 1:
        return [ins[0]]
    parts = ops.variadic_split(ins[0], cx.ints([node.attrs["axis"]]), cx.ints(sizes))
    return [parts.output(i) for i in range(len(sizes))]


@lowering("slice", int64=True, computes=False)
def _slice(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    shape = node.inputs[0].type.shape
    axes, starts, stops, steps = [], [], [], []
    for axis, (s, e, k, d) in enumerate(zip(node.attrs["starts"], node.attrs["stops"],
                                            node.attrs["steps"], shape)):
        if (s, e, k) == (0, d, 1):
            continue  # the whole axis
        axes.append(axis)
        starts.append(s)
        # canonical stop -1 with a negative step means "through index 0", which
        # Slice would read as "the last index"
        stops.append(_BEFORE_START if e < 0 else e)
        steps.append(k)
    if not axes:
        return [ins[0]]
    return [out(ops.slice(ins[0], cx.ints(starts), cx.ints(stops), cx.ints(steps), cx.ints(axes)))]


@lowering("flip", int64=True, computes=False)
def _flip(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    axes = node.attrs["axes"]
    if not axes:
        return [ins[0]]
    k = len(axes)
    return [out(ops.slice(ins[0], cx.ints([-1] * k), cx.ints([_BEFORE_START] * k),
                          cx.ints([-1] * k), cx.ints(axes)))]


@lowering("take", int64=True, computes=False)
def _take(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x, index = ins
    axis = node.attrs["axis"]
    n = node.inputs[0].type.shape[axis]
    index = checked_index(cx, index, -n, n)
    # Gather (v8) wraps negative indices from the end, as numpy.take does
    return [out(ops.gather(x, index, cx.i32(axis)))]


@lowering("scatter_add")
def _scatter_add(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    base, index, updates = ins
    axis = node.attrs["axis"]
    t = node.inputs[0].type
    n = t.shape[axis]
    index = checked_index(cx, index, -n, n)
    # ScatterElementsUpdate pairs every update with an index of its own: flatten the
    # index tensor and broadcast it along the other axes of the updates
    k = node.inputs[1].type.size
    upd_shape = t.shape[:axis] + (k,) + t.shape[axis + 1:]
    updates = out(ops.reshape(updates, cx.ints(upd_shape), False))
    flat = out(ops.reshape(index, cx.ints([k] + [1] * (t.rank - axis - 1)), False))
    index_b = out(ops.broadcast(flat, cx.ints(upd_shape)))
    # negative indices count from the end, as numpy.add.at does
    return [out(ops.scatter_elements_update(base, index_b, updates, cx.i32(axis), "sum", True))]


@lowering("scatter", int64=True, computes=False)
def _scatter(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x, index, updates = ins
    t = node.inputs[0].type
    n, k = t.size, node.inputs[1].type.size
    if k == 0 or n == 0:
        return [x]
    index = checked_index(cx, out(ops.reshape(index, cx.ints([k]), False)), 0, n)
    # ScatterElementsUpdate leaves the order of repeated indices open: the last
    # update of each position is chosen explicitly (max of the update numbers)
    numbers = cx.const(np.arange(k, dtype=np.int32), "i")
    winner = out(ops.scatter_elements_update(cx.const(np.full(n, -1, np.int32), "i"), index,
                                             numbers, cx.i32(0), "max", True))
    picked = out(ops.gather(out(ops.reshape(updates, cx.ints([k]), False)),
                            out(ops.maximum(winner, cx.i32(0))), cx.i32(0)))
    written = out(ops.logical_not(cx.int_below(winner, 0)))
    flat = out(ops.select(written, picked, out(ops.reshape(x, cx.ints([n]), False))))
    return [out(ops.reshape(flat, cx.ints(t.shape), False))]


@lowering("conj", "real", int64=True, computes=False, complex64=True)
def _conj_real(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    if node.inputs[0].type.dtype.kind != "c":
        return [ins[0]]  # real values: both are the identity
    if node.op == "real":  # the first of each (real, imaginary) pair
        return [out(ops.gather(ins[0], cx.i32(0), cx.i32(-1)))]
    return [out(ops.multiply(ins[0], cx.const(np.array([1.0, -1.0], np.float32), "f")))]


@lowering("pad", int64=True, computes=False)
def _pad(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    t = node.inputs[0].type
    if t.rank == 0:
        return [ins[0]]
    pads = node.attrs["pads"]
    # the fill value is stored as NumPy would store it in the array's dtype
    value = np.asarray(node.attrs["value"]).astype(t.dtype.np)
    return [out(ops.pad(ins[0], cx.ints(pads[0::2]), cx.ints(pads[1::2]), "constant",
                        cx.const(value, t.dtype.kind)))]


# --------------------------------------------------------------------------- creation

def _int64_values_check(values: np.ndarray, node: Node) -> str | None:
    if values.dtype == np.int64 and not fits_int32(values):
        return (f"op '{node.op}' with int64 values outside the int32 range, which the "
                f"OpenVINO CPU plugin cannot hold")
    return None


def _constant_check(node: Node) -> str | None:
    if node.const is None:
        return "op 'constant' without a payload"
    return _int64_values_check(np.asarray(node.const), node)


@lowering("constant", check=_constant_check, int64=True, computes=False)
def _constant(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [cx.const(node.const, node.outputs[0].type.dtype.kind)]


def _creation_values(node: Node) -> np.ndarray:
    if node.op == "full":
        attrs = dict(node.attrs, shape=())  # one element, broadcast by the model
        return get_schema("full").reference([], attrs)[0]
    return get_schema(node.op).reference([], node.attrs)[0]


def _creation_check(node: Node) -> str | None:
    return _int64_values_check(_creation_values(node), node)


@lowering("full", "arange", check=_creation_check, int64=True, computes=False)
def _creation(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # the reference kernel computes the values (exactly NumPy's, float16 steps included)
    values = cx.const(_creation_values(node), node.outputs[0].type.dtype.kind)
    if node.op == "full":
        values = out(ops.broadcast(values, cx.ints(_shape_of(node))))
    return [values]
