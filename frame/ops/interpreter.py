"""A node-by-node graph interpreter over reference kernels.

The numerical definition of a graph: tests compare every pass and backend
against it.  Constants come from their node's payload; fused nodes run their
body graph.

Each node runs under its own NumPy error state where it has one
(``Node.errstate``: ``np.errstate`` around its kernel), so it warns or raises
where NumPy does in the traced code's ``with np.errstate(...)`` block.

Values are NumPy's, bit for bit, also where NumPy's bits depend on memory
layout (ops/layout.py): beside each value the interpreter keeps a stand-in with
the strides NumPy would give it (the inputs' own strides, views as views,
elementwise results in K order), and hands every layout-sensitive node (a
reduction, a matmul, a fused body, ...) operands with those strides, copying
(``with_strides``) an operand its kernels laid out otherwise.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import FrameError, ErrorCode
from ..ir.graph import Graph
from .layout import element_strides, layout_sensitive, node_layouts, same_layout, \
    standard_element_strides, stand_in, with_strides
from .registry import get_schema

__all__ = ["evaluate"]


def evaluate(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``graph`` on host arrays with the reference kernels."""
    if len(inputs) != len(graph.inputs):
        raise FrameError(ErrorCode.INVALID_ARGUMENT,
                         f"graph expects {len(graph.inputs)} inputs, got {len(inputs)}")
    env: dict[int, np.ndarray] = {}
    layout: dict[int, np.ndarray] = {}   # id(value) -> a stand-in with NumPy's strides
    for v, a in zip(graph.inputs, inputs):
        a = env[id(v)] = np.asarray(a)
        strides = (element_strides(a) if a.shape == v.type.shape
                   else standard_element_strides(v.type.shape))
        layout[id(v)] = stand_in(v.type.dtype.np, v.type.shape, strides)
    for node in graph.nodes:
        args = [env[id(v)] for v in node.inputs]
        layouts = [layout[id(v)] for v in node.inputs]
        if layout_sensitive(node):
            args = [_as_numpy_lays_out(a, s) for a, s in zip(args, layouts)]
        for v, s in zip(node.outputs, node_layouts(node, layouts)):
            layout[id(v)] = s
        if node.op == "constant":
            outs = (node.const,)
        elif node.errstate is not None:   # a `with np.errstate(...)` block of the traced code
            with np.errstate(**dict(node.errstate)):
                outs = _run(node, args)
        else:
            outs = _run(node, args)
        for v, o in zip(node.outputs, outs):
            o = np.asarray(o)
            if o.dtype != v.type.dtype.np:
                o = o.astype(v.type.dtype.np)
            env[id(v)] = o
    return [env[id(v)] for v in graph.outputs]


def _run(node, args: list) -> Sequence:
    if node.body is not None:
        return evaluate(node.body, args)
    return get_schema(node.op).reference(args, node.attrs)


def _as_numpy_lays_out(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``a``, or its copy with the strides of the stand-in ``like`` when they differ."""
    want = element_strides(like)
    if a.shape != like.shape or same_layout(a.shape, element_strides(a), want):
        return a
    return with_strides(a, want)
