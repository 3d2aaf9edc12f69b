"""Lowerings of the scans, sorting and gathers along one axis
(frame/ops/scan.py).

- ``cumsum`` of float32/float64 is CumSum (a float32 running sum; the
  reference's is NumPy's, equal within the float tolerance).  Integer and bool
  running sums are refused: int64 results would be computed in i32 and wrap;
  so is float16, whose NumPy sum rounds to float16 at every step.
- ``take_along_axis`` is GatherElements on operands broadcast to the result's
  shape, with a run-time index check (``checked_index``): an out-of-range
  index sends the call to the reference kernels, which raise NumPy's error.
- ``cumprod`` (no OpenVINO op), ``sort`` and ``argsort`` (TopK does not order
  ties -- equal values, -0.0 and 0.0 -- as NumPy's sort kinds do, and places
  NaN differently) are refused, so they run on the cpu between compiled
  partitions.
"""
from __future__ import annotations

from typing import Sequence

import openvino.opset16 as ops

from ...ir.graph import Node
from .rules_shape import checked_index
from .table import Lowerer, Out, lowering, out

__all__: list[str] = []


def _types(node: Node) -> str:
    return ", ".join(str(v.type) for v in node.inputs)


def _cumsum_check(node: Node) -> str | None:
    if node.inputs[0].type.dtype.kind != "f":
        return (f"op 'cumsum' on {_types(node)}: an integer running sum would be computed in "
                f"i32 by OpenVINO and wrap where NumPy's int64 does not")
    if node.inputs[0].type.dtype.itemsize == 2:
        return (f"op 'cumsum' on {_types(node)}: OpenVINO keeps a float16 running sum in more "
                f"precision than NumPy, whose float16 sum rounds at every step (after a few "
                f"hundred terms the two differ beyond float16's tolerance)")
    return None


@lowering("cumsum", check=_cumsum_check)
def _cumsum(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [out(ops.cumsum(ins[0], cx.i32(node.attrs["axis"]), False, False))]


def _refuse_cumprod(node: Node) -> str:
    return f"op 'cumprod' on {_types(node)}: OpenVINO has no running-product op"


def _refuse_sort(node: Node) -> str:
    return (f"op '{node.op}' on {_types(node)}: OpenVINO's TopK does not order ties (and NaN) "
            f"as NumPy's {node.attrs['kind']} sort does")


def _no_build(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")


lowering("cumprod", check=_refuse_cumprod)(_no_build)


def _refuse_masked(node: Node) -> str:
    return (f"op '{node.op}' on {_types(node)}: no running maximum/minimum op, and no masked "
            f"reduction that visits the elements in NumPy's order")


lowering("cummax", "cummin", "reduce_where", "masked_reduce", check=_refuse_masked)(_no_build)
lowering("sort", "argsort", check=_refuse_sort, int64=True)(_no_build)


@lowering("take_along_axis", int64=True, computes=False)
def _take_along_axis(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    x, index = ins
    axis = node.attrs["axis"]
    out_shape = node.outputs[0].type.shape
    n = node.inputs[0].type.shape[axis]
    if node.inputs[0].type.shape[:axis] + node.inputs[0].type.shape[axis + 1:] != \
            out_shape[:axis] + out_shape[axis + 1:]:
        x = out(ops.broadcast(x, cx.ints(out_shape[:axis] + (n,) + out_shape[axis + 1:])))
    if node.inputs[1].type.shape != out_shape:
        index = out(ops.broadcast(index, cx.ints(out_shape)))
    index = checked_index(cx, index, -n, n)
    negative = cx.int_below(index, 0)
    index = out(ops.select(negative, out(ops.add(index, cx.i32(n))), index))
    return [out(ops.gather_elements(x, index, axis))]
