"""A node-by-node graph interpreter over reference kernels.

The numerical definition of a graph: tests compare every pass and backend
against it.  Constants come from their node's payload; fused nodes run their
body graph.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import FrameError, ErrorCode
from ..ir.graph import Graph
from .registry import get_schema

__all__ = ["evaluate"]


def evaluate(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``graph`` on host arrays with the reference kernels."""
    if len(inputs) != len(graph.inputs):
        raise FrameError(ErrorCode.INVALID_ARGUMENT,
                         f"graph expects {len(graph.inputs)} inputs, got {len(inputs)}")
    env: dict[int, np.ndarray] = {}
    for v, a in zip(graph.inputs, inputs):
        env[id(v)] = np.asarray(a)
    for node in graph.nodes:
        args = [env[id(v)] for v in node.inputs]
        if node.op == "constant":
            outs = (node.const,)
        elif node.body is not None:
            outs = evaluate(node.body, args)
        else:
            outs = get_schema(node.op).reference(args, node.attrs)
        for v, o in zip(node.outputs, outs):
            o = np.asarray(o)
            if o.dtype != v.type.dtype.np:
                o = o.astype(v.type.dtype.np)
            env[id(v)] = o
    return [env[id(v)] for v in graph.outputs]
