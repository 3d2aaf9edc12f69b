"""The standard pipeline, one pass a line, in its fixed order (docs/design.md §5).

``options`` is a ``frame.hal.CompileOptions`` (or None: the defaults); passes sit
below the HAL (docs/design.md §1), so it is read, not imported.
"""
from __future__ import annotations

from ..ir.clone import clone_graph
from ..ir.graph import Graph
from .base import Pass
from .canonicalize import Canonicalize
from .constant_folding import ConstantFolding
from .cse import CommonSubexpressionElimination
from .dce import DeadNodeElimination
from .fusion import FusionSummary, OperatorFusion
from .layout import LayoutAssignment
from .lowering import BackendLowering
from .memory_planning import MemoryPlanning
from .shape_inference import ShapeInference

__all__ = ["standard_pipeline", "PASS_NAMES", "fusion_summary"]


def _fusion(options) -> OperatorFusion:
    """``operator_fusion`` as ``options`` (a CompileOptions or None) asks."""
    return OperatorFusion() if options is None else OperatorFusion(enabled=options.fusion)


def _runs_numpy_kernels(backend) -> bool:
    """Whether ``backend`` computes with NumPy's kernels (the cpu backend), so that
    ``layout_assignment`` gives layout-sensitive nodes NumPy's operand layouts."""
    return getattr(backend, "name", backend) == "cpu"


def standard_pipeline(backend, options=None) -> list[Pass]:
    """Fresh pass instances for one compile for ``backend`` (``options``: a
    ``CompileOptions``, None for the defaults)."""
    return [
        Canonicalize(),
        ShapeInference(),
        ConstantFolding(),
        CommonSubexpressionElimination(),
        DeadNodeElimination(),
        LayoutAssignment(insert=_runs_numpy_kernels(backend)),
        _fusion(options),
        MemoryPlanning(getattr(options, "donate", ())),
        BackendLowering(backend),
    ]


PASS_NAMES = ["canonicalize", "shape_inference", "constant_folding",
              "common_subexpression_elimination", "dead_node_elimination",
              "layout_assignment", "operator_fusion", "memory_planning", "backend_lowering"]


def fusion_summary(graph: Graph, options=None) -> FusionSummary:
    """What ``operator_fusion`` makes of ``graph`` in the standard pipeline (the
    passes before it run on a clone; ``graph`` is not changed).  The passes up
    to fusion do not depend on the backend."""
    work = clone_graph(graph)
    for p in (Canonicalize(), ShapeInference(), ConstantFolding(),
              CommonSubexpressionElimination(), DeadNodeElimination(), LayoutAssignment(),
              _fusion(options)):
        work = p.run(work)
    return work.meta.get("fusion", FusionSummary())
