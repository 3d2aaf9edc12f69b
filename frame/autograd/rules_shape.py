"""Gradient rules of reductions, shape/data-movement ops and matmul.

- ``max``/``min`` reductions: the gradient goes to every position that
  attains the extremum, split evenly among ties (a window with k equal maxima
  gives each 1/k; JAX and PyTorch's ``amax`` do the same).  Positions of a NaN
  extremum get 0.
- ``prod``: the gradient at each position is the product of the other
  elements of its group, computed as exclusive prefix times exclusive suffix
  products (log-depth scans of ``mul``), never as ``prod / x``: zeros need no
  special case, and second and higher derivatives are exact at zeros too.
- ``slice``/``pad``/``flip``/``concat``/``stack``/``split`` scatter back with
  the inverse data movement (see ``helpers.slice_backward``); ``take`` with
  ``scatter_add`` (frame/ops/autograd_ops.py), whose own gradient is ``take``.
- ``matmul`` promotes 1-D operands as NumPy does, and undoes batch
  broadcasting with ``unbroadcast``.
"""
from __future__ import annotations

from ..dtypes import int64
from ..ops.common import broadcast_shapes
from .helpers import (conj, differentiable, expand_reduced, fit, make_slice, slice_backward,
                      sum_axes, unbroadcast, zeros)
from .registry import gradient_rule

__all__: list[str] = []


def _only_first(fn):
    """A rule for a one-input op (or one whose other inputs are indices/sizes):
    ``fn(b, x, y, g, attrs) -> grad``."""
    def rule(b, inputs, outputs, grads, attrs):
        x, g = inputs[0], grads[0]
        if g is None or not differentiable(x):
            return [None] * len(inputs)
        return [fit(b, fn(b, inputs, outputs[0], g, attrs), x)] + [None] * (len(inputs) - 1)
    return rule


def _inverse(perm) -> tuple[int, ...]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


# --------------------------------------------------------------------------- reductions

gradient_rule("sum")(_only_first(lambda b, ins, y, g, attrs: expand_reduced(
    b, g, attrs["axes"], attrs["keepdims"], ins[0].type.shape)))


def _mean(b, ins, y, g, attrs):
    shape = ins[0].type.shape
    count = 1
    for a in attrs["axes"]:
        count *= shape[a]
    # times 1/count rather than divided by count: a float16 count above 65504 is inf
    scaled = b.op("mul", g, b.scalar(1.0 / max(count, 1), like=g))
    return expand_reduced(b, scaled, attrs["axes"], attrs["keepdims"], shape)


gradient_rule("mean")(_only_first(_mean))


def _extremum(b, ins, y, g, attrs):
    x = ins[0]
    axes, keepdims, shape = attrs["axes"], attrs["keepdims"], x.type.shape
    hit = b.op("equal", x, expand_reduced(b, y, axes, keepdims, shape))
    count = sum_axes(b, b.op("cast", hit, dtype=g.type.dtype), axes, keepdims=True)
    count = b.op("maximum", count, b.scalar(1.0, like=count))  # 0 only where y is NaN
    kept = g if keepdims else b.op("reshape", g, shape=count.type.shape)
    share = expand_reduced(b, b.op("div", kept, count), axes, True, shape)
    return b.op("where", hit, share, b.scalar(0.0, like=g))


gradient_rule("max", "min")(_only_first(_extremum))


def _shift_last(b, v, k: int, fill: float):
    """``v`` moved ``k`` places along its last axis, ``fill`` entering at the front."""
    n = v.type.shape[-1]
    lead = [(0, d, 1) for d in v.type.shape[:-1]]
    kept = make_slice(b, v, lead + [(0, n - k, 1)])
    return b.op("pad", kept, pads=(0, 0) * (v.type.rank - 1) + (k, 0), value=fill)


def _exclusive_prefix_products(b, v):
    """out[..., i] = prod(v[..., :i]) by doubling (Hillis-Steele): log2(n) rounds
    of shift-and-multiply, multiplications only."""
    n, step, acc = v.type.shape[-1], 1, v
    while step < n:
        acc = b.op("mul", acc, _shift_last(b, acc, step, 1.0))
        step *= 2
    return _shift_last(b, acc, 1, 1.0)


def _products_of_others(b, x, axes):
    """d prod(x, axes) / dx: at each position, the product of the other elements of
    its reduced group, as prefix * suffix exclusive products (no division, so
    zeros need no special case and the result is differentiable to any order)."""
    shape, rank = x.type.shape, x.type.rank
    kept = tuple(i for i in range(rank) if i not in axes)
    perm = kept + tuple(axes)
    moved = b.op("transpose", x, perm=perm) if perm != tuple(range(rank)) else x
    group = 1
    for a in axes:
        group *= shape[a]
    rows = b.op("reshape", moved, shape=tuple(shape[i] for i in kept) + (group,))
    last = (rows.type.rank - 1,)
    before = _exclusive_prefix_products(b, rows)
    after = b.op("flip", _exclusive_prefix_products(b, b.op("flip", rows, axes=last)), axes=last)
    others = b.op("reshape", b.op("mul", before, after), shape=moved.type.shape)
    if perm == tuple(range(rank)):
        return others
    return b.op("transpose", others, perm=_inverse(perm))


def _prod(b, ins, y, g, attrs):
    x = ins[0]
    axes, keepdims, shape = attrs["axes"], attrs["keepdims"], x.type.shape
    expanded = expand_reduced(b, g, axes, keepdims, shape)
    if not axes or 0 in shape:
        return expanded  # nothing reduced (the product of one element is itself), or empty
    return b.op("mul", expanded, conj(b, _products_of_others(b, x, axes)))


gradient_rule("prod")(_only_first(_prod))


# --------------------------------------------------------------------------- shape ops

def _reshape_back(b, ins, y, g, attrs):
    return b.op("reshape", g, shape=ins[0].type.shape)


gradient_rule("reshape", "expand_dims", "squeeze")(_only_first(_reshape_back))


def _transpose(b, ins, y, g, attrs):
    perm = attrs["perm"]
    return b.op("transpose", g, perm=_inverse(perm)) if list(perm) != sorted(perm) else g


gradient_rule("transpose")(_only_first(_transpose))
# the same elements
gradient_rule("relayout", "dot_operand", "copy")(_only_first(lambda b, ins, y, g, attrs: g))
gradient_rule("broadcast_to")(_only_first(
    lambda b, ins, y, g, attrs: unbroadcast(b, g, ins[0].type.shape)))
gradient_rule("slice")(_only_first(lambda b, ins, y, g, attrs: slice_backward(
    b, g, ins[0].type.shape, attrs["starts"], attrs["stops"], attrs["steps"])))
gradient_rule("flip")(_only_first(
    lambda b, ins, y, g, attrs: b.op("flip", g, axes=attrs["axes"]) if attrs["axes"] else g))


def _pad(b, ins, y, g, attrs):
    pads = attrs["pads"]
    return make_slice(b, g, [(p, p + d, 1) for p, d in zip(pads[0::2], ins[0].type.shape)])


gradient_rule("pad")(_only_first(_pad))


@gradient_rule("take")
def _take(b, inputs, outputs, grads, attrs):
    (x, idx), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None, None]
    base = zeros(b, x.type.shape, g.type.dtype)
    return [fit(b, b.op("scatter_add", base, idx, g, axis=attrs["axis"]), x), None]


@gradient_rule("scatter_add")
def _scatter_add(b, inputs, outputs, grads, attrs):
    (base, idx, upd), (g,) = inputs, grads
    if g is None:
        return [None, None, None]
    gu = b.op("take", g, idx, axis=attrs["axis"]) if differentiable(upd) else None
    return [fit(b, g, base), None, fit(b, gu, upd)]


@gradient_rule("concat")
def _concat(b, inputs, outputs, grads, attrs):
    (g,) = grads
    if g is None:
        return [None] * len(inputs)
    axis = attrs["axis"]
    sizes = tuple(v.type.shape[axis] for v in inputs)
    parts = b.op_multi("split", [g], {"axis": axis, "sizes": sizes})
    return [fit(b, p, v) for p, v in zip(parts, inputs)]


@gradient_rule("stack")
def _stack(b, inputs, outputs, grads, attrs):
    (g,) = grads
    if g is None:
        return [None] * len(inputs)
    parts = b.op_multi("split", [g], {"axis": attrs["axis"], "sizes": (1,) * len(inputs)})
    return [fit(b, b.op("reshape", p, shape=v.type.shape), v) for p, v in zip(parts, inputs)]


@gradient_rule("split")
def _split(b, inputs, outputs, grads, attrs):
    (x,) = inputs
    if not differentiable(x) or all(g is None for g in grads):
        return [None]
    filled = [g if g is not None else zeros(b, y.type.shape, y.type.dtype)
              for g, y in zip(grads, outputs)]
    joined = filled[0] if len(filled) == 1 else b.op("concat", *filled, axis=attrs["axis"])
    return [fit(b, joined, x)]


# --------------------------------------------------------------------------- matmul

def _swap_last(b, v):
    r = v.type.rank
    return b.op("transpose", v, perm=tuple(range(r - 2)) + (r - 1, r - 2))


@gradient_rule("matmul")
def _matmul(b, inputs, outputs, grads, attrs):
    (x0, x1), (g,) = inputs, grads
    if g is None:
        return [None, None]
    # NumPy's 1-D promotion: a vector on the left is [1, k], on the right [k, 1]
    a = x0 if x0.type.rank > 1 else b.op("reshape", x0, shape=(1,) + x0.type.shape)
    c = x1 if x1.type.rank > 1 else b.op("reshape", x1, shape=x1.type.shape + (1,))
    batch = broadcast_shapes("matmul", a.type.shape[:-2], c.type.shape[:-2])
    gp = g
    full = batch + (a.type.shape[-2], c.type.shape[-1])
    if gp.type.shape != full:
        gp = b.op("reshape", g, shape=full)
    ga = gc = None
    if differentiable(x0):
        ga = unbroadcast(b, b.op("matmul", gp, _swap_last(b, conj(b, c))), a.type.shape)
        ga = b.op("reshape", ga, shape=x0.type.shape) if x0.type.rank == 1 else ga
    if differentiable(x1):
        gc = unbroadcast(b, b.op("matmul", _swap_last(b, conj(b, a)), gp), c.type.shape)
        gc = b.op("reshape", gc, shape=x1.type.shape) if x1.type.rank == 1 else gc
    return [fit(b, ga, x0), fit(b, gc, x1)]


@gradient_rule("gram")
def _gram(b, inputs, outputs, grads, attrs):
    # x.T @ x: dx = conj(x) @ (g + g.T); x @ x.T: dx = (g + g.T) @ conj(x)
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    both = b.op("add", g, _swap_last(b, g))
    xc = conj(b, x)
    return [b.op("matmul", xc, both) if attrs["transposed_first"] else b.op("matmul", both, xc)]


@gradient_rule("scatter")
def _scatter(b, inputs, outputs, grads, attrs):
    # out = x with out.flat[positions] = updates (the last update of a repeated
    # position wins): x gets the gradient where nothing was written, each update
    # the gradient of its position if it is the one that won there
    (x, idx, upd), (g,) = inputs, grads
    if g is None:
        return [None, None, None]
    shape = idx.type.shape
    gx = b.op("scatter", g, idx, zeros(b, shape, g.type.dtype)) if differentiable(x) else None
    gu = None
    if differentiable(upd):
        n = x.type.size
        numbers = b.op("reshape", b.op("arange", start=0.0, stop=float(idx.type.size), step=1.0,
                                       dtype=int64), shape=shape)
        winner = b.op("scatter", b.op("full", shape=(n,), value=-1.0, dtype=int64), idx, numbers)
        won = b.op("equal", b.op("take", winner, idx, axis=0), numbers)
        picked = b.op("take", b.op("reshape", g, shape=(n,)), idx, axis=0)
        gu = b.op("where", won, picked, zeros(b, shape, g.type.dtype))
    return [fit(b, gx, x), None, fit(b, gu, upd)]
