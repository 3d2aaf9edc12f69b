"""``einsum``, ``dot``, ``inner``, ``convolve`` and ``correlate`` (frame/ops/contract.py)
on OpenVINO.

Their reference kernels are NumPy's own loops; OpenVINO computes the same sums
in another order, which is within float tolerance, not bit for bit (no
OpenVINO result is: the default setting's first tier is the cpu executable).

- ``einsum``: OpenVINO's ``Einsum`` (opset7) takes the op's explicit
  subscripts as they are (``...``, repeated labels, size-1 broadcasting,
  upper-case labels: measured against NumPy).  Floating results only: an
  integer einsum would be computed in float by the plugin (as its MatMul), so
  it is refused and runs on the cpu.
- ``dot``/``inner``: ``Einsum`` of their subscripts (``product_subscripts``).
- ``convolve``/``correlate``: one 1-D ``Convolution`` (a correlation in
  OpenVINO's terms) of the first operand padded by ``m - 1`` on both sides
  with the second (reversed for convolve) gives the full result for any order
  of lengths; the mode's window (``window``) is sliced from it.
"""
from __future__ import annotations

from typing import Sequence

import openvino.opset16 as ops

from ...ir.graph import Node
from ...ops.contract import product_subscripts, window
from .table import Lowerer, Out, lowering, out

__all__: list[str] = []


def _float_only(node: Node) -> str | None:
    if node.outputs[0].type.dtype.kind == "f":
        return None
    types = ", ".join(str(v.type) for v in node.inputs)
    return (f"op '{node.op}' on {types}: the OpenVINO CPU plugin computes integer products in "
            f"float, which is wrong for large values (numpy.{node.op} runs on the cpu)")


def _floats(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [cx.to_kind(x, v.type.dtype, "f") for x, v in zip(ins, node.inputs)]


@lowering("einsum", check=_float_only)
def _einsum(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [out(ops.einsum(_floats(cx, node, ins), node.attrs["subscripts"]))]


@lowering("dot", "inner", check=_float_only)
def _product(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    a, b = node.inputs
    return [out(ops.einsum(_floats(cx, node, ins), product_subscripts(node.op, a.type.rank,
                                                                          b.type.rank)))]


@lowering("convolve", "correlate", check=_float_only)
def _convolution(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    a, v = _floats(cx, node, ins)
    n, m = node.inputs[0].type.shape[0], node.inputs[1].type.shape[0]
    if node.op == "convolve":
        v = out(ops.gather(v, cx.ints(range(m - 1, -1, -1)), cx.i32(0)))
    data = out(ops.reshape(a, cx.ints([1, 1, n]), False))
    filters = out(ops.reshape(v, cx.ints([1, 1, m]), False))
    full = out(ops.convolution(data, filters, [1], [m - 1], [m - 1], [1]))
    offset, length = window(node.op, n, m, node.attrs["mode"])
    flat = out(ops.reshape(full, cx.ints([n + m - 1]), False))
    if length == n + m - 1:
        return [flat]
    return [out(ops.slice(flat, cx.ints([offset]), cx.ints([offset + length]), cx.ints([1])))]
