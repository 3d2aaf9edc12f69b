"""The standard pipeline, one pass a line, in its fixed order (DESIGN §5)."""
from __future__ import annotations

from ..hal.options import CompileOptions
from .base import Pass
from .canonicalize import Canonicalize
from .constant_folding import ConstantFolding
from .cse import CommonSubexpressionElimination
from .dce import DeadNodeElimination
from .fusion import OperatorFusion
from .layout import LayoutAssignment
from .lowering import BackendLowering
from .memory_planning import MemoryPlanning
from .shape_inference import ShapeInference

__all__ = ["standard_pipeline", "PASS_NAMES"]


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
