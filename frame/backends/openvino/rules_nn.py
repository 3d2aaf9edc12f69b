"""Lowerings of matmul, the neural-network ops and the fft ops.

- matmul: float and bool; integer MatMul goes through float in the CPU
  plugin (measured: (2**20 + 1) * (2**10 + 1) comes back rounded), so it is
  refused.  A bool product is computed as a float count, exact below 2**24.
- softmax/log_softmax map to the opset ops; layer_norm, cross_entropy and
  mse_loss are built the way their reference kernels compute them.
- conv2d is Convolution/GroupConvolution; pooling is MaxPool/AvgPool in floor
  mode.  MaxPool drops NaN, NumPy's window max keeps it, so a second pool of
  the NaN mask restores it.
- cross_entropy and embedding check their indices at run time (the
  reference raises for labels or indices out of range).
- rfft/irfft: complex tensors have no element type in this backend.
"""
from __future__ import annotations

import numpy as np
import openvino.opset16 as ops

from ...ir.graph import Node
from .rules_shape import bounds_flag
from .table import Lowerer, Out, lowering, out

__all__: list[str] = []

_EXACT_FLOAT_COUNT = 2 ** 24


def _types(node: Node) -> str:
    return ", ".join(str(v.type) for v in node.inputs)


# --------------------------------------------------------------------------- matmul

def _matmul_check(node: Node) -> str | None:
    kind = node.outputs[0].type.dtype.kind
    if kind == "i":
        return (f"op 'matmul' on {_types(node)}: the OpenVINO CPU plugin computes integer "
                f"MatMul in float, which is wrong for large values")
    if kind == "b" and node.inputs[1].type.shape[0 if node.inputs[1].type.rank == 1 else -2] \
            >= _EXACT_FLOAT_COUNT:
        return f"op 'matmul' on {_types(node)}: a bool product over 2**24 terms or more"
    return None


@lowering("matmul", check=_matmul_check)
def _matmul(cx, node, ins):
    kind = node.outputs[0].type.dtype.kind
    compute = "f" if kind == "b" else kind
    a, b = (cx.to_kind(x, v.type.dtype, compute) for x, v in zip(ins, node.inputs))
    product = out(ops.matmul(a, b, False, False))  # NumPy's 1-D promotion rules
    if kind == "b":
        return [out(ops.greater(product, cx.f32(0.0)))]
    return [product]


# --------------------------------------------------------------------------- softmax family

@lowering("softmax", "log_softmax")
def _softmax(cx, node, ins):
    build = ops.softmax if node.op == "softmax" else ops.log_softmax
    return [out(build(ins[0], node.attrs["axis"]))]


@lowering("layer_norm")
def _layer_norm(cx, node, ins):
    x = ins[0]
    rank = node.inputs[0].type.rank
    axes = cx.ints(range(node.attrs["axis"], rank))
    centred = out(ops.subtract(x, out(ops.reduce_mean(x, axes, True))))
    var = out(ops.reduce_mean(out(ops.multiply(centred, centred)), axes, True))
    inv_std = out(ops.divide(cx.f32(1.0), out(ops.sqrt(out(ops.add(var, cx.f32(node.attrs["eps"])))))))
    y = out(ops.multiply(centred, inv_std))
    if len(ins) > 1:
        y = out(ops.multiply(y, ins[1]))
    if len(ins) > 2:
        y = out(ops.add(y, ins[2]))
    return [y]


# --------------------------------------------------------------------------- conv, pooling

def _pads(padding) -> tuple[list[int], list[int]]:
    top, bottom, left, right = padding
    return [top, left], [bottom, right]


@lowering("conv2d")
def _conv2d(cx, node, ins):
    x, w = ins[0], ins[1]
    groups = node.attrs["groups"]
    begin, end = _pads(node.attrs["padding"])
    stride, dilation = list(node.attrs["stride"]), list(node.attrs["dilation"])
    if groups == 1:
        y = out(ops.convolution(x, w, stride, begin, end, dilation))
    else:
        o, cg, kh, kw = node.inputs[1].type.shape
        filters = out(ops.reshape(w, cx.ints([groups, o // groups, cg, kh, kw]), False))
        y = out(ops.group_convolution(x, filters, stride, begin, end, dilation))
    if len(ins) == 3:
        o = node.inputs[1].type.shape[0]
        y = out(ops.add(y, out(ops.reshape(ins[2], cx.ints([1, o, 1, 1]), False))))
    return [y]


def _pool_args(node: Node) -> dict:
    begin, end = _pads(node.attrs["padding"])
    return dict(strides=list(node.attrs["stride"]), pads_begin=begin, pads_end=end,
                kernel_shape=list(node.attrs["kernel"]))


def _max_pool(x: Out, args: dict) -> Out:
    return ops.max_pool(x, args["strides"], [1, 1], args["pads_begin"], args["pads_end"],
                        args["kernel_shape"], "floor", "explicit").output(0)


@lowering("max_pool2d")
def _max_pool2d(cx, node, ins):
    x = ins[0]
    args = _pool_args(node)
    pooled = _max_pool(x, args)
    nan_in_window = _max_pool(out(ops.convert(out(ops.is_nan(x)), "f32")), args)
    has_nan = out(ops.greater(nan_in_window, cx.f32(0.0)))
    return [out(ops.select(has_nan, cx.f32(float("nan")), pooled))]


@lowering("avg_pool2d")
def _avg_pool2d(cx, node, ins):
    args = _pool_args(node)
    # exclude_pad=False: padding zeros count, as count_include_pad=True does
    return [out(ops.avg_pool(ins[0], args["strides"], args["pads_begin"], args["pads_end"],
                             args["kernel_shape"], False, "floor", "explicit"))]


# --------------------------------------------------------------------------- losses, embedding

def _reduce_loss(cx: Lowerer, loss: Out, count: int, reduction: str) -> Out:
    if reduction == "none":
        return loss
    rank = loss.get_partial_shape().rank.get_length()
    total = out(ops.reduce_sum(loss, cx.ints(range(rank)), False)) if rank else loss
    if reduction == "sum":
        return total
    return out(ops.divide(total, cx.f32(float(count))))


@lowering("cross_entropy", int64=True)
def _cross_entropy(cx, node, ins):
    logits, labels = ins
    n, c = node.inputs[0].type.shape
    bounds_flag(cx, labels, 0, c)
    log_probs = out(ops.log_softmax(logits, 1))
    picked = out(ops.gather_elements(log_probs, out(ops.reshape(labels, cx.ints([n, 1]), False)), 1))
    loss = out(ops.negative(out(ops.reshape(picked, cx.ints([n]), False))))
    return [_reduce_loss(cx, loss, n, node.attrs["reduction"])]


@lowering("mse_loss")
def _mse_loss(cx, node, ins):
    diff = out(ops.subtract(ins[0], ins[1]))
    loss = out(ops.multiply(diff, diff))
    return [_reduce_loss(cx, loss, node.inputs[0].type.size, node.attrs["reduction"])]


@lowering("embedding", int64=True, computes=False)
def _embedding(cx, node, ins):
    indices, weight = ins
    bounds_flag(cx, indices, 0, node.inputs[1].type.shape[0])
    return [out(ops.gather(weight, indices, cx.i32(0)))]


# --------------------------------------------------------------------------- fft

def _refuse_complex(node: Node) -> str:
    return (f"op '{node.op}' on {_types(node)}: complex tensors have no OpenVINO element "
            f"type in this backend")


def _no_build(cx, node, ins):
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")


lowering("rfft", "irfft", check=_refuse_complex)(_no_build)
