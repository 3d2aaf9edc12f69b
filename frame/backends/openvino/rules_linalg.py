"""The ``numpy.linalg`` ops (frame/ops/linalg.py) on OpenVINO: refused.

OpenVINO has no matrix inverse, linear solve, determinant or decomposition
(LU, Cholesky, QR, SVD, symmetric eigensolver), and a float32 model could not
give NumPy's float64 LAPACK results anyway.  ``inv``, ``solve``, ``det``,
``slogdet``, ``eigh``, ``eigvalsh``, ``cholesky``, ``qr``, ``svd`` and ``pinv``
are refused with a reason
naming the op, so the partitioner runs them on the cpu (NumPy's kernels, with
NumPy's LinAlgError for a singular matrix) between compiled partitions.
``matmul`` is lowered with the shape ops (rules_shape.py); NumPy's
``diagonal``/``trace``/``diag`` are compositions of transpose, reshape, take,
sum and where (frame/_numpy_linalg.py), all lowered.
"""
from __future__ import annotations

from typing import Sequence

from ...ir.graph import Node
from ...ops.linalg import LINALG_OPS
from .table import Lowerer, Out, lowering

__all__: list[str] = []


def _refuse_linalg(node: Node) -> str:
    types = ", ".join(str(v.type) for v in node.inputs)
    return (f"op '{node.op}' on {types}: OpenVINO has no matrix inverse, solve, determinant or "
            f"decomposition (numpy.linalg.{node.op} runs on the cpu)")


@lowering(*LINALG_OPS, check=_refuse_linalg, int64=True, complex64=True)
def _no_build(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")
