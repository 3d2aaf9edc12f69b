"""The ``fused`` op: one node standing for a sub-graph of fusable nodes.

``operator_fusion`` (frame/passes/fusion.py) replaces a maximal tree of
elementwise/broadcast nodes by one ``fused`` node whose ``Node.body`` is that
tree as a graph of its own: body input ``i`` is the node's input ``i``, body
output ``j`` is the node's output ``j``.  The op has no attributes; every
piece of information lives in the body.

Type inference.  A schema's ``infer(types, attrs)`` sees input types and
attrs only, never the node, so it cannot know what a body computes.  Types of
fused nodes therefore come from the body, everywhere:

* the fusion pass gives the node its root's (already inferred) output types;
* ``shape_inference`` (``infer_node``) re-infers every body node through the
  body's own schemas and takes the body outputs' types;
* ``verify`` (V4/V5) compares the node's input and output types with its
  body's instead of calling ``infer``.

``infer`` below raises, naming where the types come from, so that building a
``fused`` node through ``GraphBuilder.op`` (which has no way to pass a body)
fails loudly instead of producing an untyped node.  The reference kernel
raises likewise: a fused node is run by running its body (the interpreter,
constant folding and the fallback chain all do so through ``Node.body``).

Trait: ``fused`` -- the node is made of primitive ops (its body); consumers
recognise a fused node by the trait, by ``node.body is not None`` or by
``node.op == FUSED``.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import OpSchema

__all__ = ["FUSED"]

FUSED = "fused"


def _fused_infer(types: Sequence[TensorType], attrs: Mapping[str, Any]) -> list[TensorType]:
    raise FrameTypeError("fused: output types come from the node's body, which infer cannot "
                         "see; fused nodes are built by the operator_fusion pass and typed by "
                         "frame.passes.shape_inference.infer_node(node)")


def _fused_kernel(ins: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> tuple:
    raise FrameValueError("fused: the computation lives in the node's body (Node.body); run "
                          "the body (frame.ops.interpreter.evaluate) instead of a kernel")


register(OpSchema(FUSED, (1, None), _fused_infer, _fused_kernel, traits=("fused",),
                  doc="A fused sub-graph of elementwise/broadcast nodes; see Node.body."))
