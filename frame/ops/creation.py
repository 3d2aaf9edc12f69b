"""Ops with no tensor inputs: constant (payload on the node), arange, full."""
from __future__ import annotations

import numpy as np

from ..hal.errors import FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema


def _constant_infer(types, attrs):
    return [TensorType(attrs["dtype"], attrs["shape"])]


def _constant_kernel(ins, attrs):
    # A constant's value is its node's payload (Node.const), not an attribute:
    # graph interpreters read it from the node; nothing launches 'constant'.
    raise FrameValueError("constant: the value lives on the node (Node.const); "
                          "it cannot be launched as a kernel")


register(OpSchema("constant", 0, _constant_infer, _constant_kernel,
                  attrs={"dtype": AttrSpec("dtype"), "shape": AttrSpec("shape")},
                  doc="A constant array; the payload is stored on the node."))
