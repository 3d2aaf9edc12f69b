"""Builder-level helpers shared by the gradient rules.

Everything here builds graph nodes through ``b.op`` / ``b.scalar``, like the
rules themselves, so gradient graphs stay differentiable.
"""
from __future__ import annotations

from typing import Sequence

from ..dtypes import DType, float16, float32
from ..errors import FrameValueError
from ..ir.builder import GraphBuilder
from ..ir.graph import Value
from ..ops.shape import canonical_slice, slice_length

__all__ = ["differentiable", "unbroadcast", "fit", "conj", "zeros", "sum_axes",
           "expand_reduced", "dilate", "slice_backward", "make_slice", "canonical_triples",
           "widen", "narrow"]


def differentiable(v: Value) -> bool:
    """Can ``v`` carry a gradient?  Floating and complex values can; integer
    and bool values cannot (they break the chain, as in PyTorch and JAX)."""
    return v.type.dtype.kind in "fc"


def unbroadcast(b: GraphBuilder, grad: Value, shape: Sequence[int]) -> Value:
    """Undo NumPy broadcasting: sum ``grad`` over the axes along which a value
    of ``shape`` was broadcast to ``grad``'s shape, and reshape to ``shape``.

        >>> from frame.ir import GraphBuilder
        >>> b = GraphBuilder(); g = b.input("float64", (2, 3))
        >>> bias_grad = unbroadcast(b, g, (3,))   # a (3,) bias added to a (2, 3) batch
        >>> bias_grad.producer.op, bias_grad.type
        ('sum', float64[3])
    """
    shape = tuple(shape)
    gshape = grad.type.shape
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise FrameValueError(f"unbroadcast: a gradient of shape {list(gshape)} cannot come "
                              f"from broadcasting shape {list(shape)} (it has fewer dimensions)")
    axes = list(range(lead))
    for i, d in enumerate(shape):
        gd = gshape[lead + i]
        if d == 1 and gd != 1:
            axes.append(lead + i)
        elif d != gd:
            raise FrameValueError(f"unbroadcast: shape {list(shape)} does not broadcast to the "
                                  f"gradient's shape {list(gshape)}")
    if axes:
        grad = b.op("sum", grad, axes=tuple(axes), keepdims=False)
    if grad.type.shape != shape:
        grad = b.op("reshape", grad, shape=shape)
    return grad


def fit(b: GraphBuilder, grad: Value | None, like: Value) -> Value | None:
    """``grad`` brought to ``like``'s type: None for a value that carries no
    gradient; broadcasting undone; the real part for a real value that received
    a complex gradient; cast to ``like``'s dtype (mixed-dtype ops promote)."""
    if grad is None or not differentiable(like):
        return None
    grad = unbroadcast(b, grad, like.type.shape)
    if grad.type.dtype.kind == "c" and like.type.dtype.kind != "c":
        grad = b.op("real", grad)
    if grad.type.dtype is not like.type.dtype:
        grad = b.op("cast", grad, dtype=like.type.dtype)
    return grad


def conj(b: GraphBuilder, v: Value) -> Value:
    """The complex conjugate of ``v``; ``v`` itself when it is real (no node)."""
    return b.op("conj", v) if v.type.dtype.kind == "c" else v


def zeros(b: GraphBuilder, shape: Sequence[int], dtype: DType) -> Value:
    return b.op("full", shape=tuple(shape), value=0.0, dtype=dtype)


def sum_axes(b: GraphBuilder, v: Value, axes: Sequence[int], keepdims: bool = False) -> Value:
    """``sum`` over ``axes`` (canonical); ``v`` itself when there are none."""
    axes = tuple(axes)
    return b.op("sum", v, axes=axes, keepdims=keepdims) if axes else v


def expand_reduced(b: GraphBuilder, v: Value, axes: Sequence[int], keepdims: bool,
                   shape: Sequence[int]) -> Value:
    """Broadcast the result ``v`` of a reduction over ``axes`` back to the
    reduced input's ``shape``."""
    shape = tuple(shape)
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    if not keepdims and v.type.shape != kept:
        v = b.op("reshape", v, shape=kept)
    return b.op("broadcast_to", v, shape=shape) if kept != shape else v


def canonical_triples(shape: Sequence[int], triples: Sequence[tuple[int, int, int]]
                      ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``slice`` attrs (starts, stops, steps) from per-axis Python slice triples."""
    canon = [canonical_slice(d, s, e, k) for d, (s, e, k) in zip(shape, triples)]
    return (tuple(c[0] for c in canon), tuple(c[1] for c in canon), tuple(c[2] for c in canon))


def make_slice(b: GraphBuilder, v: Value, triples: Sequence[tuple[int, int, int]]) -> Value:
    """A ``slice`` node from per-axis Python (start, stop, step) triples,
    canonicalised; ``v`` itself when the slice selects everything in order."""
    shape = v.type.shape
    starts, stops, steps = canonical_triples(shape, triples)
    if (starts, stops, steps) == canonical_triples(shape, [(None, None, None)] * len(shape)):
        return v
    return b.op("slice", v, starts=starts, stops=stops, steps=steps)


def dilate(b: GraphBuilder, v: Value, axis: int, step: int) -> Value:
    """Insert ``step - 1`` zeros between neighbouring elements along ``axis``:
    n elements become ``(n - 1) * step + 1``.  Built from expand_dims, pad,
    reshape and slice, so it is differentiable."""
    shape = v.type.shape
    n = shape[axis]
    if step == 1 or n <= 1:
        return v
    e = b.op("expand_dims", v, axes=(axis + 1,))
    pads = [0] * (2 * e.type.rank)
    pads[2 * (axis + 1) + 1] = step - 1
    p = b.op("pad", e, pads=tuple(pads), value=0.0)
    flat = b.op("reshape", p, shape=shape[:axis] + (n * step,) + shape[axis + 1:])
    triples = [(0, d, 1) for d in flat.type.shape]
    triples[axis] = (0, (n - 1) * step + 1, 1)
    return make_slice(b, flat, triples)


def slice_backward(b: GraphBuilder, grad: Value, in_shape: Sequence[int],
                   starts: Sequence[int], stops: Sequence[int], steps: Sequence[int]) -> Value:
    """The gradient of a canonical ``slice`` of a value of ``in_shape``: ``grad``
    scattered back to the selected positions, zeros elsewhere (flip for
    negative steps, dilate for strides, pad to the input's extent)."""
    in_shape = tuple(in_shape)
    lengths = [slice_length(s, e, k) for s, e, k in zip(starts, stops, steps)]
    if any(n == 0 for n in lengths):
        return zeros(b, in_shape, grad.type.dtype)
    flipped = tuple(i for i, k in enumerate(steps) if k < 0)
    if flipped:
        grad = b.op("flip", grad, axes=flipped)
    pads = []
    for axis, (s, k, n, d) in enumerate(zip(starts, steps, lengths, in_shape)):
        grad = dilate(b, grad, axis, abs(k))
        low = s if k > 0 else s + (n - 1) * k  # the smallest selected index
        pads += [low, d - low - grad.type.shape[axis]]
    if any(pads):
        grad = b.op("pad", grad, pads=tuple(pads), value=0.0)
    return grad


def widen(b: GraphBuilder, v: Value) -> Value:
    """float16 -> float32, as the nn kernels compute (float16 sums overflow)."""
    return b.op("cast", v, dtype=float32) if v.type.dtype is float16 else v


def narrow(b: GraphBuilder, v: Value, dtype: DType) -> Value:
    return b.op("cast", v, dtype=dtype) if v.type.dtype is not dtype else v
