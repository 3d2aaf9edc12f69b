"""layout_assignment: decide the memory layout of every value.

v0 has one layout, row-major (C order), for every value on every backend;
the pass records that decision in ``graph.meta['layout']`` so backends read
it instead of assuming it.  When a backend wants another layout (NHWC conv
on some device), this is where the transposes will be placed.
"""
from __future__ import annotations

from ..ir.graph import Graph
from .base import Pass

__all__ = ["LayoutAssignment", "ROW_MAJOR"]

ROW_MAJOR = "row-major"


class LayoutAssignment(Pass):
    name = "layout_assignment"

    def run(self, graph: Graph) -> Graph:
        graph.meta["layout"] = ROW_MAJOR
        return graph
