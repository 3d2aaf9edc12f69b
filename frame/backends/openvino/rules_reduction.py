"""Lowerings of the reductions: sum, mean, max, min, prod, argmax, argmin.

NumPy accumulates integer sums and products in int64 (sum of int32 is
int64); the CPU plugin would accumulate in int32, so those are refused.  Bool
sums are counts and bool products are "all": both are lowered exactly.
ReduceMax/ReduceMin run in float32 on integers (wrong beyond 2**24), so
integer max/min/argmax/argmin are refused.  On floats they ignore NaN where
NumPy propagates it, and they start from -FLT_MAX / +FLT_MAX rather than
-inf / +inf (the max of a lane of -inf comes back as -3.4e38): one reduction
of a small per-element code (``special_lanes``) finds the lanes with a NaN
and the lanes holding nothing but the infinity at the far end, and both are
selected explicitly (``float_extremum``).  argmax/argmin are built from
comparisons with that exact extremum, so that ties and NaN pick the first
index, as NumPy does.

Float sums: the CPU plugin's ReduceSum accumulates each output lane almost
sequentially in float32, so its error grows with the count (measured on 4M
values of normal(100, 1): 2.7e-2 relative, NumPy's pairwise sum 2.5e-8; and
it runs single-threaded, 6x slower than the blocked form).  Sums and means
over more than ``_FLAT_SUM`` elements per output are therefore blocked: the
reduced axes are flattened, split into blocks of ``_BLOCK`` and summed level
by level (padded with -0.0, the additive identity, when the count is not a
multiple), a tree like NumPy's pairwise summation (``float_sum``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import openvino.opset16 as ops

from ...ir.graph import Node
from .table import Lowerer, Out, lowering, out

__all__ = ["float_extremum", "special_lanes", "float_sum"]

# bool sums are counted in i32, which the plugin may accumulate in f32: exact to 2**24
_EXACT_COUNT = 2 ** 24


def _types(node: Node) -> str:
    return ", ".join(str(v.type) for v in node.inputs)


def _count(node: Node) -> int:
    shape = node.inputs[0].type.shape
    n = 1
    for a in node.attrs["axes"]:
        n *= shape[a]
    return n


def _sum_prod_check(node: Node) -> str | None:
    kind = node.inputs[0].type.dtype.kind
    if kind in "iu":
        return (f"op '{node.op}' on {_types(node)}: NumPy accumulates integers in int64, the "
                f"OpenVINO CPU plugin in int32")
    if kind == "b" and _count(node) > _EXACT_COUNT:
        return f"op '{node.op}' on {_types(node)}: a count over more than 2**24 elements"
    return None


def _reduce(build, x: Out, cx: Lowerer, axes, keepdims: bool) -> Out:
    return out(build(x, cx.ints(axes), keepdims))


# a float sum over at most this many elements per output is one ReduceSum (its
# error is then within ~2e-6 relative, measured); above it, blocks of _BLOCK
_FLAT_SUM = 4096
_BLOCK = 64


def _prod(dims) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _sum_axis_blocked(cx: Lowerer, x: Out, shape: list[int], axis: int) -> tuple[Out, list[int]]:
    """Sum the f32 value ``x`` (static ``shape``) over ``axis``, block by block."""
    n = shape[axis]
    while n > _BLOCK:
        groups = -(-n // _BLOCK)
        if groups * _BLOCK != n:  # pad with -0.0: x + -0.0 is x, also for x = +-0.0
            begin = [0] * len(shape)
            end = [0] * len(shape)
            end[axis] = groups * _BLOCK - n
            x = out(ops.pad(x, cx.ints(begin), cx.ints(end), "constant", cx.f32(-0.0)))
        split = shape[:axis] + [groups, _BLOCK] + shape[axis + 1:]
        x = out(ops.reduce_sum(out(ops.reshape(x, cx.ints(split), False)), cx.ints([axis + 1]),
                               False))
        shape = shape[:axis] + [groups] + shape[axis + 1:]
        n = groups
    x = out(ops.reduce_sum(x, cx.ints([axis]), False))
    return x, shape[:axis] + shape[axis + 1:]


def float_sum(cx: Lowerer, x: Out, shape, axes, out_shape) -> Out:
    """NumPy-accurate ``x.sum(axes)`` of the f32 value ``x`` of static ``shape``,
    reshaped to ``out_shape`` (keepdims or not): one ReduceSum for small counts,
    a blocked tree above ``_FLAT_SUM`` elements per output (module doc)."""
    axes = sorted(int(a) for a in axes)
    if _prod(shape[a] for a in axes) <= _FLAT_SUM:
        total = out(ops.reduce_sum(x, cx.ints(axes), False))
        return out(ops.reshape(total, cx.ints(list(out_shape)), False))
    runs: list[list[int]] = []  # maximal runs of consecutive reduced axes
    for a in axes:
        if runs and runs[-1][-1] == a - 1:
            runs[-1].append(a)
        else:
            runs.append([a])
    shape = [int(d) for d in shape]
    for run in reversed(runs):  # the last run first: earlier axes keep their index
        first, last = run[0], run[-1]
        shape = shape[:first] + [_prod(shape[first:last + 1])] + shape[last + 1:]
        x = out(ops.reshape(x, cx.ints(shape), False))
        x, shape = _sum_axis_blocked(cx, x, shape, first)
    return out(ops.reshape(x, cx.ints(list(out_shape)), False))


def special_lanes(cx: Lowerer, x: Out, op: str, axes, keepdims: bool,
                  nan_if_inf: bool = False) -> tuple[Out, Out]:
    """``(has_nan, only_far_inf)`` per reduced lane of the f32 value ``x``, from one
    ReduceMax of a per-element code: 2 for NaN, 0 for the infinity a ``max``
    (``op``) starts from (-inf; +inf for ``min``), 1 otherwise.  With
    ``nan_if_inf``, the other infinity counts as NaN too (softmax's rows)."""
    far = cx.f32(float("-inf") if op == "max" else float("inf"))
    # Less/LessEqual are right for NaN operands (False), Greater is not
    beyond = out(ops.less(far, x) if op == "max" else ops.less(x, far))
    nan = out(ops.is_nan(x))
    if nan_if_inf:
        near = cx.f32(float("inf") if op == "max" else float("-inf"))
        nan = out(ops.logical_or(nan, out(ops.equal(x, near))))
    code = out(ops.add(out(ops.multiply(out(ops.convert(nan, "f32")), cx.f32(2.0))),
                       out(ops.convert(beyond, "f32"))))
    worst = _reduce(ops.reduce_max, code, cx, axes, keepdims)
    return (out(ops.greater(worst, cx.f32(1.5))), out(ops.less(worst, cx.f32(0.5))))


def float_extremum(cx: Lowerer, x: Out, op: str, axes, keepdims: bool) -> Out:
    """NumPy's ``x.max(axes)`` / ``x.min(axes)`` of the f32 value ``x``: NaN when a
    lane holds one, -inf (+inf) when a lane holds only -inf (+inf)."""
    result = _reduce(ops.reduce_max if op == "max" else ops.reduce_min, x, cx, axes, keepdims)
    has_nan, only_far = special_lanes(cx, x, op, axes, keepdims)
    result = out(ops.select(only_far, cx.f32(float("-inf") if op == "max" else float("inf")),
                            result))
    return out(ops.select(has_nan, cx.f32(float("nan")), result))


@lowering("sum", "prod", check=_sum_prod_check, int64=True)
def _sum_prod(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x = ins[0]
    axes, keepdims = node.attrs["axes"], node.attrs["keepdims"]
    if node.inputs[0].type.dtype.kind == "b":
        if node.op == "prod":  # a product of bools is "all", as an int64 0/1
            if axes:
                x = _reduce(ops.reduce_logical_and, x, cx, axes, keepdims)
            return [out(ops.convert(x, "i32"))]
        x = out(ops.convert(x, "i32"))
    if not axes:
        return [x]  # reducing over no axes only changes the dtype
    if node.op == "sum" and node.inputs[0].type.dtype.kind == "f":
        return [float_sum(cx, x, node.inputs[0].type.shape, axes, node.outputs[0].type.shape)]
    build = ops.reduce_sum if node.op == "sum" else ops.reduce_prod
    return [_reduce(build, x, cx, axes, keepdims)]


@lowering("vector_norm")
def _vector_norm(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    shape = node.inputs[0].type.shape
    squares = out(ops.multiply(ins[0], ins[0]))
    if not shape:
        return [out(ops.sqrt(squares))]
    return [out(ops.sqrt(float_sum(cx, squares, shape, tuple(range(len(shape))), ())))]


@lowering("mean")
def _mean(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # integer and bool means are float64 (refused by support.py): inputs are floats here
    axes = node.attrs["axes"]
    if not axes:
        return [ins[0]]
    shape = node.inputs[0].type.shape
    if _prod(shape[a] for a in axes) <= _FLAT_SUM:
        return [_reduce(ops.reduce_mean, ins[0], cx, axes, node.attrs["keepdims"])]
    total = float_sum(cx, ins[0], shape, axes, node.outputs[0].type.shape)
    return [out(ops.divide(total, cx.f32(float(_prod(shape[a] for a in axes)))))]


def _int_extremum_check(node: Node) -> str | None:
    t = node.inputs[0].type
    # max/min over no axes and argmax of a 0-d tensor reduce nothing: exact
    reduces = bool(node.attrs["axes"]) if "axes" in node.attrs else t.rank > 0
    # (int8/int16/uint8/uint16 values are exact in float32)
    if t.dtype.kind in "iu" and t.dtype.itemsize >= 4 and reduces:
        return (f"op '{node.op}' on {_types(node)}: the OpenVINO CPU plugin computes integer "
                f"ReduceMax/ReduceMin in float32, which is wrong beyond 2**24")
    return None


@lowering("max", "min", check=_int_extremum_check, int64=True)
def _extremum(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x = ins[0]
    axes, keepdims = node.attrs["axes"], node.attrs["keepdims"]
    if not axes:
        return [x]
    kind = node.inputs[0].type.dtype.kind
    if kind == "b":
        build = ops.reduce_logical_or if node.op == "max" else ops.reduce_logical_and
        return [_reduce(build, x, cx, axes, keepdims)]
    if kind == "f":
        return [float_extremum(cx, x, node.op, axes, keepdims)]
    return [_reduce(ops.reduce_max if node.op == "max" else ops.reduce_min, x, cx, axes, keepdims)]


@lowering("argmax", "argmin", check=_int_extremum_check, int64=True)
def _argextremum(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x = ins[0]
    t = node.inputs[0].type
    keepdims = node.attrs["keepdims"]
    if t.rank == 0:
        return [cx.i32(0)]
    axis = node.attrs["axis"]
    n = t.shape[axis]
    if t.dtype.kind == "b":
        x = out(ops.convert(x, "i32"))
    op = "max" if node.op == "argmax" else "min"
    if t.dtype.kind == "f":
        best = float_extremum(cx, x, op, (axis,), True)
        # NumPy treats NaN as the extremum: the first NaN wins when a lane has one
        hits = out(ops.select(out(ops.is_nan(best)), out(ops.is_nan(x)), out(ops.equal(x, best))))
    else:
        best = _reduce(ops.reduce_max if op == "max" else ops.reduce_min, x, cx, (axis,), True)
        hits = out(ops.equal(x, best))
    index_shape = [n] + [1] * (t.rank - axis - 1)
    index = cx.const(np.arange(n, dtype=np.int32).reshape(index_shape), "i")
    candidates = out(ops.select(hits, index, cx.i32(n)))
    return [_reduce(ops.reduce_min, candidates, cx, (axis,), keepdims)]
