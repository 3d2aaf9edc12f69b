"""``nan_reduce`` (frame/ops/stats.py) on OpenVINO: refused.

Its kernel is NumPy's nanmax/nanmin/nanargmax/nanargmin/nanmean/nanvar/nanstd/
nanmedian, which warn (RuntimeWarning) or raise (ValueError) for an all-NaN
slice; a compiled model can do neither.  The op is refused with a reason naming
it, so the partitioner runs NumPy's kernel on the cpu between compiled
partitions.
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


@lowering("nan_reduce", check=_refuse_nan_reduce)
def _no_build(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")
