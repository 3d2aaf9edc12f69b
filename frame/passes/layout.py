"""layout_assignment: record the layout of every value -- and, exactly, what
it does not decide.

What it decides: nothing beyond one fact.  Every value of the graph, on every
backend, is row-major (C order, the strides ``np.empty`` gives its type); the
pass writes ``graph.meta['layout'] = "row-major"`` and changes nothing else.
No backend reads that entry today: the cpu executable, the OpenVINO lowering
and the reference interpreter all assume row-major already, so the entry is a
statement, not an input.

What decides the layouts that do vary, elsewhere:

* whether a matmul operand runs as a transposed view or as a copy: the
  ``memory_planning`` pass (``plan.views``: a ``transpose`` that is not a graph
  output is a view of its input) and the cpu codegen (``codegen.transpose_view``:
  it checks the source's strides at run time, and copies when a reader would
  read the same memory through another operand);
* the layout of a region's array: the cpu codegen writes a matmul head's
  product into the fused node's own row-major array (``operator_fusion``).

No pass places layout-changing transposes (NHWC convolution, blocked layouts);
a backend that wants one would need this pass to decide and record it per value.
"""
from __future__ import annotations

from ..ir.graph import Graph
from .base import Pass

__all__ = ["LayoutAssignment", "ROW_MAJOR"]

ROW_MAJOR = "row-major"


class LayoutAssignment(Pass):
    """``graph.meta['layout'] = "row-major"``; the graph is unchanged (see the
    module docstring for what this does and does not decide)."""

    name = "layout_assignment"

    def run(self, graph: Graph) -> Graph:
        graph.meta["layout"] = ROW_MAJOR
        return graph
