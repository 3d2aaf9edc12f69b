"""The standard pipeline, one pass a line, in its fixed order (DESIGN §5)."""
from __future__ import annotations

from ..hal.options import CompileOptions
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


def standard_pipeline(backend, options: CompileOptions | None = None) -> list[Pass]:
    """Fresh pass instances for one compile for ``backend``."""
    options = options or CompileOptions()
    return [
        Canonicalize(),
        ShapeInference(),
        ConstantFolding(),
        CommonSubexpressionElimination(),
        DeadNodeElimination(),
        LayoutAssignment(),
        OperatorFusion(enabled=options.fusion),
        MemoryPlanning(),
        BackendLowering(backend),
    ]


PASS_NAMES = ["canonicalize", "shape_inference", "constant_folding",
              "common_subexpression_elimination", "dead_node_elimination",
              "layout_assignment", "operator_fusion", "memory_planning", "backend_lowering"]


def fusion_summary(graph: Graph, options: CompileOptions | None = None) -> FusionSummary:
    """What ``operator_fusion`` makes of ``graph`` in the standard pipeline (the
    passes before it run on a clone; ``graph`` is not changed).  The passes up
    to fusion do not depend on the backend."""
    options = options or CompileOptions()
    work = clone_graph(graph)
    for p in (Canonicalize(), ShapeInference(), ConstantFolding(),
              CommonSubexpressionElimination(), DeadNodeElimination(), LayoutAssignment(),
              OperatorFusion(enabled=options.fusion)):
        work = p.run(work)
    return work.meta.get("fusion", FusionSummary())
