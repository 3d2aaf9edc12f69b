"""Gradient rules of the scans and gathers along one axis (frame/ops/scan.py).

- ``cumsum``: the gradient of a running sum is the running sum of the
  gradient taken from the other end (``flip(cumsum(flip(g)))``).
- ``take_along_axis``: each picked element sends its gradient back to the
  position it was read from, with ``scatter_add`` over the flattened input
  (positions read twice accumulate); the broadcasting of the other axes is
  undone by ``fit``.
- ``sort``: the gradient of each sorted element goes back to where it came
  from, found by a stable ``argsort`` of the input (tied elements are equal,
  so which of them receives it does not change the sorted values).
- ``argsort`` is non-differentiable (its result is an index, schema trait);
  ``cumprod`` is declared non-differentiable here (``NONDIFFERENTIABLE_OPS``):
  differentiating it raises rather than give a gradient that is wrong at zeros.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import int64
from .helpers import differentiable, fit, zeros
from .registry import NONDIFFERENTIABLE_OPS, gradient_rule

__all__: list[str] = []

NONDIFFERENTIABLE_OPS["cumprod"] = ("the gradient of a running product at a zero factor is not "
                                    "a ratio of its results; frame has no exact rule for it")


@gradient_rule("cumsum")
def _cumsum(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    axes = (attrs["axis"],)
    back = b.op("flip", b.op("cumsum", b.op("flip", g, axes=axes), axis=attrs["axis"]), axes=axes)
    return [fit(b, back, x)]


@gradient_rule("take_along_axis")
def _take_along_axis(b, inputs, outputs, grads, attrs):
    (x, idx), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None, None]
    return [fit(b, _scatter_along_axis(b, x, idx, g, attrs["axis"]), x), None]


@gradient_rule("sort")
def _sort(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    idx = b.op("argsort", x, axis=attrs["axis"], kind="stable")
    return [fit(b, _scatter_along_axis(b, x, idx, g, attrs["axis"]), x)]


def _scatter_along_axis(b, x, idx, g, axis: int):
    """The gradient ``g`` of ``take_along_axis(x, idx, axis)`` sent back to the
    positions it read (summed where one is read twice), in the shape of ``x``
    broadcast to the result outside ``axis``."""
    out_shape = g.type.shape
    n = x.type.shape[axis]
    # the input as the gather saw it: broadcast to the result's shape outside axis
    src_shape = out_shape[:axis] + (n,) + out_shape[axis + 1:]
    strides = [int(np.prod(src_shape[i + 1:], dtype=np.int64)) for i in range(len(src_shape))]
    if idx.type.shape != out_shape:
        idx = b.op("broadcast_to", idx, shape=out_shape)
    if idx.type.dtype is not int64:
        idx = b.op("cast", idx, dtype=int64)
    negative = b.op("less", idx, b.scalar(0, like=idx))
    idx = b.op("where", negative, b.op("add", idx, b.scalar(n, like=idx)), idx)
    offsets = np.zeros(out_shape, np.int64)
    for d, index in enumerate(np.indices(out_shape, dtype=np.int64)):
        if d != axis:
            offsets += index * strides[d]
    flat = b.op("add", b.op("mul", idx, b.scalar(strides[axis], like=idx)),
                b.constant(np.ascontiguousarray(offsets, dtype=np.int64), dtype=int64))
    size = int(np.prod(src_shape, dtype=np.int64))
    base = zeros(b, (size,), g.type.dtype)
    back = b.op("scatter_add", base, flat, g, axis=0)
    return b.op("reshape", back, shape=src_shape)
