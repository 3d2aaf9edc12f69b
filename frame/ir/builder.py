"""GraphBuilder: the small builder interface used by tests, decompositions,
gradient rules and the capture frontend.

    b = GraphBuilder()
    x = b.input(frame.float32, (2, 3))
    y = b.op("relu", b.op("add", x, b.scalar(1.0, like=x)))
    graph = b.build(y)

``op`` looks the schema up, normalises attrs and infers output types, so every
node a builder makes is well-typed by construction.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import DType, as_dtype, from_numpy
from .graph import Graph, Node, Value
from .schemas import get_schema
from .types import TensorType

__all__ = ["GraphBuilder"]


class GraphBuilder:
    def __init__(self, graph: Graph | None = None, device: str = "cpu"):
        self.graph = graph if graph is not None else Graph(device)

    def input(self, dtype, shape, name: str | None = None) -> Value:
        return self.graph.add_input(TensorType(as_dtype(dtype), tuple(shape)), name)

    def op(self, name: str, *inputs: Value, **attrs: Any) -> Value | tuple[Value, ...]:
        """Append one node; returns its output, or a tuple for multi-output ops."""
        outs = self.op_multi(name, inputs, attrs)
        return outs[0] if len(outs) == 1 else outs

    def op_multi(self, name: str, inputs, attrs) -> tuple[Value, ...]:
        schema = get_schema(name)
        schema.check_arity(len(inputs))
        attrs = schema.normalize_attrs(attrs)
        types = schema.infer([v.type for v in inputs], attrs)
        node = Node(name, inputs, attrs)
        node.set_output_types(types)
        self.graph.append(node)
        return node.outputs

    def constant(self, value, dtype=None) -> Value:
        """A constant node holding a copy of ``value`` (array or scalar)."""
        arr = np.array(value, dtype=as_dtype(dtype).np if dtype is not None else None)
        dt = from_numpy(arr.dtype)
        node = Node("constant", (), {"dtype": dt, "shape": tuple(arr.shape)}, const=arr)
        node.set_output_types([TensorType(dt, arr.shape)])
        self.graph.append(node)
        return node.outputs[0]

    def scalar(self, value, like: Value | None = None, dtype: DType | None = None) -> Value:
        """A 0-d constant with ``like``'s dtype (or ``dtype``)."""
        dt = dtype if dtype is not None else like.type.dtype
        return self.constant(np.asarray(value, dtype=dt.np), dt)

    def build(self, *outputs: Value) -> Graph:
        self.graph.set_outputs(outputs)
        return self.graph
