"""Lowerings of matmul, the neural-network ops and the fft ops.

- matmul: float and bool; integer MatMul goes through float in the CPU
  plugin (measured: (2**20 + 1) * (2**10 + 1) comes back rounded), so it is
  refused.  A bool product is computed as a float count, exact below 2**24.
- softmax/log_softmax map to the opset ops, whose max-subtraction drops NaN
  and starts from -FLT_MAX: a row whose max is not finite (a NaN, a +inf,
  or nothing but -inf) is all NaN in the reference (``x - max`` is NaN), so
  such rows are selected as NaN (one extra reduction of a per-element code,
  ``special_lanes``); cross_entropy's log_softmax too.  layer_norm,
  cross_entropy and mse_loss are built the way their reference kernels
  compute them.
- conv2d is Convolution/GroupConvolution; pooling is MaxPool/AvgPool in floor
  mode (AvgPool from opset14: opset16's crashes the plugin).  MaxPool drops
  NaN and never returns -inf, NumPy's window max does both, so a second pool
  of a NaN/-inf code restores them.
- cross_entropy and embedding check their indices at run time (the
  reference raises for labels or indices out of range).
- rfft/irfft are RDFT/IRDFT over complex64 values held as float pairs.
"""
from __future__ import annotations

from typing import Sequence

import openvino.opset14 as opset14
import openvino.opset16 as ops

from ...ir.graph import Node
from .rules_reduction import float_sum, special_lanes
from .rules_shape import checked_index
from .table import Lowerer, Out, lowering, out

__all__: list[str] = []

_EXACT_FLOAT_COUNT = 2 ** 24


def _types(node: Node) -> str:
    return ", ".join(str(v.type) for v in node.inputs)


# --------------------------------------------------------------------------- matmul

def _matmul_check(node: Node) -> str | None:
    kind = node.outputs[0].type.dtype.kind
    if kind in "iu":
        return (f"op 'matmul' on {_types(node)}: the OpenVINO CPU plugin computes integer "
                f"MatMul in float, which is wrong for large values")
    if kind == "b" and node.inputs[1].type.shape[0 if node.inputs[1].type.rank == 1 else -2] \
            >= _EXACT_FLOAT_COUNT:
        return f"op 'matmul' on {_types(node)}: a bool product over 2**24 terms or more"
    return None


@lowering("matmul", check=_matmul_check)
def _matmul(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = node.outputs[0].type.dtype.kind
    compute = "f" if kind == "b" else kind
    a, b = (cx.to_kind(x, v.type.dtype, compute) for x, v in zip(ins, node.inputs))
    product = out(ops.matmul(a, b, False, False))  # NumPy's 1-D promotion rules
    if kind == "b":
        return [out(ops.greater(product, cx.f32(0.0)))]
    return [product]


def _gram_check(node: Node) -> str | None:
    if node.outputs[0].type.dtype.kind == "c":
        return f"op 'gram' on {_types(node)}: complex values"
    return None


@lowering("gram", check=_gram_check)
def _gram(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    """``x.T @ x`` / ``x @ x.T``: one MatMul reading ``x`` twice, one side transposed."""
    first = node.attrs["transposed_first"]
    return [out(ops.matmul(ins[0], ins[0], first, not first))]


# --------------------------------------------------------------------------- softmax family

def nan_correct_softmax(cx: Lowerer, op: str, x: Out, axis: int) -> Out:
    """Softmax / LogSoftmax of the f32 value ``x`` along ``axis``, NaN on every row
    whose max is NaN, +inf or -inf, as the reference's ``x - max(x)`` makes it."""
    y = out((ops.softmax if op == "softmax" else ops.log_softmax)(x, axis))
    has_nan, only_neg_inf = special_lanes(cx, x, "max", [axis], True, nan_if_inf=True)
    bad = out(ops.logical_or(has_nan, only_neg_inf))
    return out(ops.select(bad, cx.f32(float("nan")), y))


@lowering("softmax", "log_softmax")
def _softmax(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [nan_correct_softmax(cx, node.op, ins[0], node.attrs["axis"])]


@lowering("layer_norm")
def _layer_norm(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
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
def _conv2d(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
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
def _max_pool2d(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x = ins[0]
    args = _pool_args(node)
    pooled = _max_pool(x, args)
    # MaxPool skips NaN and starts from -FLT_MAX, where NumPy's window max is NaN if
    # any element is, and -inf over -inf: pool a code too (2: NaN, 1: above -inf)
    code = out(ops.add(out(ops.multiply(out(ops.convert(out(ops.is_nan(x)), "f32")), cx.f32(2.0))),
                       out(ops.convert(out(ops.less(cx.f32(float("-inf")), x)), "f32"))))
    window = _max_pool(code, args)
    result = out(ops.select(out(ops.less(window, cx.f32(0.5))), cx.f32(float("-inf")), pooled))
    return [out(ops.select(out(ops.greater(window, cx.f32(1.5))), cx.f32(float("nan")), result))]


@lowering("avg_pool2d")
def _avg_pool2d(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    args = _pool_args(node)
    # exclude_pad=False: padding zeros count, as count_include_pad=True does.
    # AvgPool-16 crashes the CPU plugin's compile_model (segfault, OpenVINO 2026.4.1,
    # any arguments); AvgPool-14 is the same op without the crash.
    return [out(opset14.avg_pool(ins[0], args["strides"], args["pads_begin"], args["pads_end"],
                             args["kernel_shape"], False, "floor", "explicit"))]


# --------------------------------------------------------------------------- losses, embedding

def _reduce_loss(cx: Lowerer, loss: Out, count: int, reduction: str) -> Out:
    if reduction == "none":
        return loss
    shape = [int(d) for d in loss.get_partial_shape().to_shape()]
    total = float_sum(cx, loss, shape, range(len(shape)), []) if shape else loss
    if reduction == "sum":
        return total
    return out(ops.divide(total, cx.f32(float(count))))


@lowering("cross_entropy", int64=True)
def _cross_entropy(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    logits, labels = ins
    n, c = node.inputs[0].type.shape
    labels = checked_index(cx, labels, 0, c)
    log_probs = nan_correct_softmax(cx, "log_softmax", logits, 1)
    picked = out(ops.gather_elements(log_probs, out(ops.reshape(labels, cx.ints([n, 1]), False)), 1))
    loss = out(ops.negative(out(ops.reshape(picked, cx.ints([n]), False))))
    return [_reduce_loss(cx, loss, n, node.attrs["reduction"])]


@lowering("mse_loss")
def _mse_loss(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    diff = out(ops.subtract(ins[0], ins[1]))
    loss = out(ops.multiply(diff, diff))
    return [_reduce_loss(cx, loss, node.inputs[0].type.size, node.attrs["reduction"])]


@lowering("embedding", int64=True, computes=False)
def _embedding(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    indices, weight = ins
    indices = checked_index(cx, indices, 0, node.inputs[1].type.shape[0])
    return [out(ops.gather(weight, indices, cx.i32(0)))]


# --------------------------------------------------------------------------- fft

def _length(node: Node) -> int:
    t = node.inputs[0].type
    if node.op == "rfft":
        return node.attrs["n"] or t.shape[-1]
    return node.attrs["n"] or 2 * (t.shape[-1] - 1)


@lowering("rfft", complex64=True)
def _rfft(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # float16/float32 in, complex64 out (integers and bool give complex128: refused)
    x = ins[0]
    t = node.inputs[0].type
    n, last = _length(node), t.rank - 1
    if n > t.shape[-1]:
        # RDFT cannot zero-pad itself ("signal size greater than input size is not
        # supported yet"): pad first, as numpy.fft.rfft's n does
        zeros = [0] * t.rank
        x = out(ops.pad(x, cx.ints(zeros), cx.ints(zeros[:-1] + [n - t.shape[-1]]), "constant",
                        cx.f32(0.0)))
    return [out(ops.rdft(x, cx.ints([last]), cx.ints([n])))]


@lowering("irfft", complex64=True)
def _irfft(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # IRDFT crops the bins to n // 2 + 1 and ignores the imaginary parts NumPy
    # ignores (measured equal to numpy.fft.irfft).  Fewer bins are zero-padded
    # here: IRDFT's own padding read memory it had not written (measured,
    # OpenVINO 2026.4, irfft of 4 bins with n=10: 2 of 60 fresh compiles gave
    # 1e30 or wrong values)
    x = ins[0]
    t = node.inputs[0].type
    n, bins = _length(node), t.shape[-1]
    if n // 2 + 1 > bins:
        zeros = [0] * (t.rank + 1)   # the (real, imaginary) pairs are a trailing axis
        after = zeros[:]
        after[t.rank - 1] = n // 2 + 1 - bins
        x = out(ops.pad(x, cx.ints(zeros), cx.ints(after), "constant", cx.f32(0.0)))
    return [out(ops.irdft(x, cx.ints([t.rank - 1]), cx.ints([n])))]
