"""The ops of frame/ops/stats.py on OpenVINO: refused.

- ``nan_reduce``: its kernel is NumPy's nanmax/nanmin/nanargmax/nanargmin/
  nanmean/nanvar/nanstd/nanmedian, which warn (RuntimeWarning) or raise
  (ValueError) for an all-NaN slice; a compiled model can do neither.
- ``searchsorted``: OpenVINO's SearchSorted agrees with NumPy on sorted input
  only; NumPy's binary search also answers (its own way) for unsorted input
  and orders NaN last.
- ``partition``, ``argpartition``: the order of the elements besides the kth
  ones is that of NumPy's introselect.
- ``interp``: NumPy's kernel computes in float64 with its own handling of NaN,
  infinities and repeated xp, which a float32 model cannot reproduce.

Each is refused with a reason naming it, so the partitioner runs NumPy's
kernel on the cpu between compiled partitions.
"""
from __future__ import annotations

from typing import Sequence

from ...ir.graph import Node
from .table import Lowerer, Out, lowering

__all__: list[str] = []


def _refuse_nan_reduce(node: Node) -> str:
    types = ", ".join(str(v.type) for v in node.inputs)
    return (f"op '{node.op}' ({node.attrs['function']}) on {types}: NumPy warns or raises for an "
            f"all-NaN slice, which a compiled model cannot (numpy.{node.attrs['function']} runs "
            f"on the cpu)")


def _refuse_search(node: Node) -> str:
    types = ", ".join(str(v.type) for v in node.inputs)
    return (f"op '{node.op}' on {types}: NumPy's own kernel (numpy.{node.op}) gives results "
            f"a compiled model cannot reproduce (unsorted input, introselect's order, NaN, "
            f"float64); it runs on the cpu")


@lowering("searchsorted", "interp", "partition", "argpartition", check=_refuse_search)
def _no_build_search(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")


@lowering("nan_reduce", check=_refuse_nan_reduce)
def _no_build(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")
