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
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import openvino.opset16 as ops

from ...ir.graph import Node
from .table import Lowerer, Out, lowering, out

__all__ = ["float_extremum", "special_lanes"]

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
    if kind == "i":
        return (f"op '{node.op}' on {_types(node)}: NumPy accumulates integers in int64, the "
                f"OpenVINO CPU plugin in int32")
    if kind == "b" and _count(node) > _EXACT_COUNT:
        return f"op '{node.op}' on {_types(node)}: a count over more than 2**24 elements"
    return None


def _reduce(build, x: Out, cx: Lowerer, axes, keepdims: bool) -> Out:
    return out(build(x, cx.ints(axes), keepdims))


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
    build = ops.reduce_sum if node.op == "sum" else ops.reduce_prod
    return [_reduce(build, x, cx, axes, keepdims)]


@lowering("mean")
def _mean(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # integer and bool means are float64 (refused by support.py): inputs are floats here
    axes = node.attrs["axes"]
    if not axes:
        return [ins[0]]
    return [_reduce(ops.reduce_mean, ins[0], cx, axes, node.attrs["keepdims"])]


def _int_extremum_check(node: Node) -> str | None:
    t = node.inputs[0].type
    # max/min over no axes and argmax of a 0-d tensor reduce nothing: exact
    reduces = bool(node.attrs["axes"]) if "axes" in node.attrs else t.rank > 0
    if t.dtype.kind == "i" and reduces:
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
