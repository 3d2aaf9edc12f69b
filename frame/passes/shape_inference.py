"""shape_inference: re-infer every node's output types and compare.

Any disagreement between a node's recorded types and what its schema infers,
and any dynamic dimension, is an error: v0 is static-shape only.
"""
from __future__ import annotations

from ..errors import ErrorCode, FrameError
from ..ir.graph import Graph, Node
from ..ops.registry import get_schema
from .base import Pass

__all__ = ["ShapeInference", "infer_node"]


def infer_node(node: Node) -> list:
    """The output types ``node`` should have."""
    if node.body is not None:
        body = node.body
        for outer, inner in zip(node.inputs, body.inputs):
            if outer.type != inner.type:
                raise FrameError(ErrorCode.INVALID_ARGUMENT,
                                 f"{node.op}: input {outer.type} does not match body input {inner.type}")
        for inner_node in body.nodes:
            _check(inner_node)
        return [v.type for v in body.outputs]
    return get_schema(node.op).infer([v.type for v in node.inputs], node.attrs)


def _check(node: Node) -> None:
    for v in node.inputs:
        if not v.type.is_static:
            raise FrameError(ErrorCode.INVALID_ARGUMENT,
                             f"{node.op}: input type {v.type} has a dynamic dimension; "
                             f"only static shapes are supported")
    inferred = infer_node(node)
    recorded = [v.type for v in node.outputs]
    if list(inferred) != recorded:
        shown_r = ", ".join(map(str, recorded))
        shown_i = ", ".join(map(str, inferred))
        raise FrameError(ErrorCode.INVALID_ARGUMENT,
                         f"node {node.op} records output types {shown_r} but they infer as {shown_i}")


class ShapeInference(Pass):
    name = "shape_inference"

    def run(self, graph: Graph) -> Graph:
        for v in graph.inputs:
            if not v.type.is_static:
                raise FrameError(ErrorCode.INVALID_ARGUMENT,
                                 f"graph input type {v.type} has a dynamic dimension; "
                                 f"only static shapes are supported")
        for node in graph.nodes:
            _check(node)
        return graph
