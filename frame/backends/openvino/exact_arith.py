"""Keep a lowered model's float arithmetic IEEE's (NumPy's) through the CPU
plugin's own rewrites.

The CPU plugin (OpenVINO 2026.4, snippets off: ``backend.SNIPPETS_MODE``)
rewrites some float arithmetic into forms that are not the same computation
(plugin sources read, each case measured; docs/openvino.md):

- ``ConvertToPowerStatic``: Multiply/Add/Subtract by a constant of one element
  (its rank not above the other operand's) become ``PowerStatic(x) = scale * x
  + shift``.  A multiply has ``shift = +0``: a -0.0 product comes back +0.0
  (``x * 0`` for x < 0, ``-0.0 * 2``).  ``x + 0.0`` and ``x - (-0.0)`` run as
  the identity: -0.0 stays -0.0 (IEEE: +0.0).
- ``ConvertNegative`` / ``ConvertSubtract``: ``-x`` and ``a - b`` become
  ``x * -1`` and ``a + b * -1``, that multiply by a scalar again a PowerStatic:
  ``-(+0.0)`` is +0.0 and ``-0.0 - 0.0`` is +0.0.
- ``ConvertDivide``: ``a / b`` becomes ``a * b**-1``: two roundings (1 ulp off
  for ``x / 3``), and wrong for a subnormal ``b`` (``1e-40 / 1e-40`` is inf:
  the reciprocal overflows).
- a Multiply by a per-tensor or per-channel constant that follows a MatMul, a
  convolution, a reduction... (``_POST_OP_CHANNEL``, also through a chain of
  one-input nodes) is fused into that node as a post-op ``scale * x + 0``: the
  same lost -0.0.  A Divide by or into a constant fused that way is wrong
  outright (``1 / x`` after ReduceMax or MatMul, ``x / 3`` after ReduceMean).

What ``keep_exact`` does to the built model, at the cost of a constant read per
element where the plugin had an immediate (none measurable: docs/openvino.md):

- a Multiply by a one-element constant other than 1, and an Add of a
  one-element +0.0, get the constant *spread* along one axis of the other
  operand (``spread``): not a scalar and not per-channel of a post-op producer,
  so neither PowerStatic nor a post-op: an ordinary Eltwise, IEEE's.  A value
  with no such axis gets a one-element constant of one more axis (no
  PowerStatic: its rank is above the value's), and the result is reshaped back.
- ``-x`` is ``x`` times a spread -1; ``a - b`` is ``a + b * (spread -1)``
  (exactly IEEE's ``a - b``, signed zeros included) unless the plugin's own
  form is exact: ``b`` a constant (the plugin folds ``-b`` into it; a scalar
  ``-0.0`` would become an added +0.0, which is spread) or ``a`` a scalar
  constant other than -0.0 (PowerStatic ``-b + a``).
- a float Divide is marked ``nonconvertable_divide`` (the plugin's own run-time
  attribute) and stays a correctly rounded division, except one with a
  constant operand that would be fused as a post-op: there the plugin's
  reciprocal stays (1 ulp, and a zero quotient may lose its sign), since its
  Divide post-op is wrong.

Multiplies by 1, Adds of nonzero constants and Powers stay PowerStatic: those
are exact.  The rewrites assume snippets off: with snippets on, ``0.0 - x`` is
-0.0 for x = +0.0.
"""
from __future__ import annotations

import math

import numpy as np
import openvino as ov
import openvino.opset16 as ops

from .table import Out, out

__all__ = ["keep_exact", "spread", "NONCONVERTIBLE_DIVIDE"]

# The CPU plugin keeps a Divide that carries this run-time attribute
# (ov::NonconvertibleDivide: the key is its type name and version)
NONCONVERTIBLE_DIVIDE = "nonconvertable_divide_0"

# Nodes the plugin fuses a following chain of elementwise nodes into (as
# oneDNN post-ops), and the axis it calls their channel (negative: from the
# end): a post-op by a per-tensor or per-channel constant is computed its own way
_POST_OP_CHANNEL = {"MatMul": -1, "Convolution": 1, "GroupConvolution": 1,
                    "ConvolutionBackpropData": 1, "GroupConvolutionBackpropData": 1,
                    "ReduceMean": 1, "ReduceSum": 1, "ReduceMax": 1, "ReduceMin": 1,
                    "ReduceProd": 1, "ReduceL1": 1, "ReduceL2": 1, "MVN": 1,
                    "NormalizeL2": 1, "Interpolate": 1, "AvgPool": 1, "MaxPool": 1}


def _post_op_root(x: Out) -> str | None:
    """The type of the node ``x`` may be computed as a post-op of: ``x``'s
    producer, or the start of the chain of nodes with one non-constant input
    that leads to it, when that is in ``_POST_OP_CHANNEL``."""
    node = x.get_node()
    while node.get_type_name() not in _POST_OP_CHANNEL:
        variable = [v for v in node.input_values() if not _is_constant(v)]
        if len(variable) != 1:  # (a Parameter has none; a Reshape counts: the plugin may drop it)
            return None
        node = variable[0].get_node()
    return node.get_type_name()


def _shape(x: Out) -> list[int]:
    return [int(d) for d in x.get_partial_shape().to_shape()]


def spread(x: Out, value: float) -> Out | None:
    """A float32 constant holding ``value`` in a shape the plugin treats neither
    as a scalar nor as ``x``'s channel, or None when ``x`` has no axis of two or
    more elements besides that channel."""
    shape = _shape(x)
    rank = len(shape)
    root = _post_op_root(x)
    channel = _POST_OP_CHANNEL[root] % rank if root is not None and rank else None
    for axis in reversed(range(rank)):
        if shape[axis] >= 2 and axis != channel:
            dims = [1] * rank
            dims[axis] = shape[axis]
            return ops.constant(np.full(dims, value, np.float32)).output(0)
    return None


def _binary_spread(build, x: Out, value: float) -> Out:
    """``build(x, c)`` for ``c`` the constant ``value`` broadcast over ``x``.
    Without a ``spread`` for ``x``: against a constant of one element and one
    more axis than ``x`` (no PowerStatic: its rank is above ``x``'s; not fused
    into a MatMul either, measured), the result reshaped back.  A rank-0 ``x``
    is made ``[1]`` first: against a rank-1 constant the plugin gave +0.0 for
    ``-0.0 * 2`` and failed to compile it beside a Concat ("Accessing
    out-of-range dimension")."""
    c = spread(x, value)
    if c is not None:
        return out(build(x, c))
    shape = _shape(x)
    operand = x if shape else out(ops.reshape(x, _ints([1]), False))
    rank = max(len(shape), 1)
    y = out(build(operand, ops.constant(np.full([1] * (rank + 1), value, np.float32)).output(0)))
    return out(ops.reshape(y, _ints(shape), False))


def _ints(values) -> Out:
    return ops.constant(np.asarray(values, np.int64).reshape(len(values))).output(0)


def negate(x: Out) -> Out:
    """``-x``, exactly (``-(+0.0)`` is -0.0)."""
    return _binary_spread(ops.multiply, x, -1.0)


def _scalar(x: Out) -> float | None:
    """The value of a one-element float Constant, else None."""
    node = x.get_node()
    if node.get_type_name() != "Constant" or not node.get_element_type().is_real():
        return None
    data = node.get_data()
    return float(data.reshape(-1)[0]) if data.size == 1 else None


def _is_constant(x: Out) -> bool:
    return x.get_node().get_type_name() == "Constant"


def _powerstatic_operand(op, i: int) -> float | None:
    """The value of input ``i`` when it is a one-element constant the plugin
    would fold into a PowerStatic with the other input ``x`` (its rank not above
    ``x``'s), else None."""
    value = _scalar(op.input_value(i))
    if value is None:
        return None
    other = op.input_value(1 - i)
    if _is_constant(other) or len(_shape(op.input_value(i))) > len(_shape(other)):
        return None
    return value


def _is_negative_zero(value: float | None) -> bool:
    return value == 0.0 and math.copysign(1.0, value) < 0


def _is_positive_zero(value: float | None) -> bool:
    return value == 0.0 and math.copysign(1.0, value) > 0


def _exact(op) -> Out | None:
    """The replacement of ``op``'s output, or None when it is exact as built."""
    kind = op.get_type_name()
    if kind == "Negative":
        return negate(op.input_value(0))
    if kind in ("Multiply", "Add"):
        for i in (0, 1):
            value = _powerstatic_operand(op, i)
            if value is None:
                continue
            if (kind == "Multiply" and value != 1.0) or (kind == "Add" and _is_positive_zero(value)):
                build = ops.multiply if kind == "Multiply" else ops.add
                return _binary_spread(build, op.input_value(1 - i), value)
        return None
    if kind == "Subtract":
        a, b = op.input_value(0), op.input_value(1)
        if _is_constant(b):
            # the plugin adds -b: exact unless b is a scalar -0.0 (an added +0.0)
            if _is_negative_zero(_powerstatic_operand(op, 1)):
                return _binary_spread(ops.add, a, 0.0)
            return None
        a_value = _powerstatic_operand(op, 0)
        if a_value is not None and not _is_negative_zero(a_value):
            return None  # PowerStatic -b + a: exact
        return out(ops.add(a, negate(b)))
    return None


def _divide_may_stay(op) -> bool:
    """May this Divide be kept a division?  Not where it has a constant operand
    and would be fused as a post-op: the plugin computes a Divide post-op wrong
    (measured: ``1 / x`` after ReduceMax, MatMul or ReduceMean, ``x / 3`` after
    ReduceMean, off by up to 100%); the plugin's own reciprocal form is kept there."""
    a, b = op.input_value(0), op.input_value(1)
    if _is_constant(a) == _is_constant(b):
        return True
    return _post_op_root(b if _is_constant(a) else a) is None


def keep_exact(model: ov.Model) -> None:
    """Rewrite ``model``'s float arithmetic in place (module docstring)."""
    changed = False
    for op in model.get_ordered_ops():
        if op.get_output_size() != 1 or op.get_output_element_type(0) != ov.Type.f32:
            continue
        if op.get_type_name() == "Divide":
            if _divide_may_stay(op):
                op.get_rt_info()[NONCONVERTIBLE_DIVIDE] = ""
            continue
        replacement = _exact(op)
        if replacement is None:
            continue
        for target in list(op.output(0).get_target_inputs()):
            target.replace_source_output(replacement)
        changed = True
    if changed:
        model.validate_nodes_and_infer_types()
