"""Shape and data-movement ops: reshape, transpose, broadcast_to, expand_dims,
squeeze, concat, stack, split, slice, take, pad, flip.

Attributes are canonical, so that two nodes meaning the same thing carry equal
attrs (CSE and the compile cache compare attrs): axes are normalised
non-negative and sorted, slices are stored in the normal form computed by
``canonical_slice``.  The user-facing functions normalise; type inference
rejects attrs that are not canonical, naming the op.

Reference kernels return fresh arrays, never views of their inputs: a frame
tensor owns its data, so an in-place update of one result (``y += 1``) can
never change another tensor, eager or compiled alike.  They are C-contiguous,
except transpose's: it copies its input in the input's own memory order and
returns that copy transposed, so the result is laid out exactly like
``np.transpose(x, perm)`` of a C-contiguous ``x`` (same strides).  Kernels
that read it (BLAS through ``np.matmul``, reductions) then take the same path
as on a view, which is what lets the cpu executable pass transposes as views
and still match the interpreter bit for bit.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..dtypes import DType, result_type
from ..errors import ErrorCode, FrameAxisError, FrameError, FrameIndexError, FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["FrameIndexError", "check_axes", "check_axis", "resolve_shape", "canonical_slice",
           "slice_length", "check_fill_value"]

_SHAPE = ("shape_op",)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# --------------------------------------------------------------------------- attr helpers

def check_axes(op: str, axes: Sequence[int], rank: int, what: str = "axes") -> None:
    """Reject an axes attr that is not canonical: in range, non-negative, strictly increasing."""
    for a in axes:
        if -rank <= a < 0:
            raise FrameAxisError(f"{op}: axis {a} in attribute '{what}' is negative; axes "
                                 f"attributes are canonical (non-negative, sorted), the "
                                 f"user-facing functions normalise them")
        if not 0 <= a < rank:
            raise FrameAxisError(f"{op}: axis {a} is out of bounds for a tensor of rank {rank}")
    if any(b <= a for a, b in zip(axes, axes[1:])):
        raise FrameValueError(f"{op}: attribute '{what}' must be sorted without repeats, "
                              f"got {tuple(axes)}")


def check_axis(op: str, axis: int, rank: int, what: str = "axis") -> None:
    """Reject a single-axis attr that is out of range or negative."""
    check_axes(op, (axis,), rank, what)


def resolve_shape(op: str, in_shape: Sequence[int], shape: Sequence[int]) -> tuple[int, ...]:
    """``shape`` with its one ``-1`` resolved so the size matches ``in_shape``."""
    size = math.prod(in_shape)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    bad = [d for d in shape if d < -1]
    if bad:
        raise FrameValueError(f"{op}: negative dimension {bad[0]} in shape {list(shape)}")
    if len(unknown) > 1:
        raise FrameValueError(f"{op}: can only specify one unknown dimension (-1), "
                              f"got shape {list(shape)}")
    out = list(shape)
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise FrameValueError(f"{op}: cannot reshape a tensor of shape {_fmt(in_shape)} "
                                  f"(size {size}) into shape {list(shape)}")
        out[unknown[0]] = size // known
    if math.prod(out) != size:
        raise FrameValueError(f"{op}: cannot reshape a tensor of shape {_fmt(in_shape)} "
                              f"(size {size}) into shape {_fmt(out)} (size {math.prod(out)})")
    return tuple(out)


def slice_length(start: int, stop: int, step: int) -> int:
    return len(range(start, stop, step))


def canonical_slice(dim: int, start: int | None, stop: int | None,
                    step: int | None) -> tuple[int, int, int]:
    """The normal form of the Python slice ``start:stop:step`` over an axis of size ``dim``.

    The result ``(s, e, k)`` selects exactly the indices ``range(s, e, k)``, all
    in ``[0, dim)``.  Empty selections are ``(0, 0, 1)``, single elements
    ``(i, i + 1, 1)``, and otherwise ``e`` is one step past the last index
    (``-1`` when a negative step ends at index 0), so two slices selecting the
    same elements have equal triples.

    >>> canonical_slice(5, None, None, -1)
    (4, -1, -1)
    """
    s, e, k = slice(start, stop, step).indices(dim)
    return _normal(s, slice_length(s, e, k), k)


def _normal(s: int, n: int, k: int) -> tuple[int, int, int]:
    """The canonical triple for ``n`` indices starting at ``s`` with step ``k``."""
    if n == 0:
        return (0, 0, 1)
    if n == 1:
        return (s, s + 1, 1)
    return (s, s + (n - 1) * k + (1 if k > 0 else -1), k)


def check_fill_value(op: str, value: float, dtype: DType) -> None:
    """Reject a float fill value that NumPy cannot store in an integer ``dtype``."""
    if dtype.kind not in "iu":
        return
    if not math.isfinite(value):
        raise FrameValueError(f"{op}: cannot fill an {dtype.name} tensor with {value}")
    info = np.iinfo(dtype.np)
    if not info.min <= int(value) <= info.max:
        raise FrameValueError(f"{op}: value {value} is out of bounds for {dtype.name}")


def _copy(a: np.ndarray) -> np.ndarray:
    return np.array(a, order="C", copy=True)


# --------------------------------------------------------------------------- reshape, transpose

def _reshape_infer(types, attrs):
    (t,) = types
    return [t.with_shape(resolve_shape("reshape", t.shape, attrs["shape"]))]


def _reshape_kernel(ins, attrs):
    x = ins[0]
    return (_copy(x.reshape(resolve_shape("reshape", x.shape, attrs["shape"]))),)


register(OpSchema("reshape", 1, _reshape_infer, _reshape_kernel,
                  attrs={"shape": AttrSpec("shape")}, traits=_SHAPE,
                  doc="numpy.reshape; one dimension may be -1 (inferred)."))


def _transpose_infer(types, attrs):
    (t,) = types
    perm = attrs["perm"]
    if sorted(perm) != list(range(t.rank)):
        raise FrameValueError(f"transpose: perm {tuple(perm)} is not a permutation of the axes "
                              f"of a rank-{t.rank} tensor {t}")
    return [t.with_shape(tuple(t.shape[p] for p in perm))]


def _transpose_kernel(ins, attrs):
    # a fresh copy in x's memory order (C order for a C-contiguous x, with the
    # same strides), transposed: the strides of np.transpose(x, perm); see above
    return (np.transpose(np.array(ins[0], copy=True, order="K"), attrs["perm"]),)


register(OpSchema("transpose", 1, _transpose_infer, _transpose_kernel,
                  attrs={"perm": AttrSpec("ints")}, traits=_SHAPE,
                  doc="numpy.transpose with an explicit permutation."))


# --------------------------------------------------------------------------- broadcast_to

def _broadcast_to_infer(types, attrs):
    (t,) = types
    shape = attrs["shape"]
    off = len(shape) - t.rank
    if any(d < 0 for d in shape) or off < 0 or any(
            d != 1 and d != shape[off + i] for i, d in enumerate(t.shape)):
        raise FrameValueError(f"broadcast_to: cannot broadcast a tensor of shape {_fmt(t.shape)} "
                              f"to shape {_fmt(shape)}")
    return [t.with_shape(shape)]


def _broadcast_to_kernel(ins, attrs):
    return (_copy(np.broadcast_to(ins[0], attrs["shape"])),)


register(OpSchema("broadcast_to", 1, _broadcast_to_infer, _broadcast_to_kernel,
                  attrs={"shape": AttrSpec("shape")}, traits=_SHAPE + ("broadcast",),
                  doc="numpy.broadcast_to."))


# --------------------------------------------------------------------------- expand_dims, squeeze

def _expand_dims_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple[int, ...]:
    rest = iter(shape)
    return tuple(1 if i in axes else next(rest) for i in range(len(shape) + len(axes)))


def _expand_dims_infer(types, attrs):
    (t,) = types
    axes = attrs["axes"]
    check_axes("expand_dims", axes, t.rank + len(axes))
    return [t.with_shape(_expand_dims_shape(t.shape, axes))]


def _expand_dims_kernel(ins, attrs):
    x = ins[0]
    return (_copy(x.reshape(_expand_dims_shape(x.shape, attrs["axes"]))),)


def _reshape_decompose(b, inputs, attrs, *, infer):
    """expand_dims and squeeze are reshapes to the inferred shape."""
    (x,) = inputs
    return [b.op("reshape", x, shape=infer([x.type], attrs)[0].shape)]


register(OpSchema("expand_dims", 1, _expand_dims_infer, _expand_dims_kernel,
                  attrs={"axes": AttrSpec("ints")}, traits=_SHAPE,
                  decompose=lambda b, i, a: _reshape_decompose(b, i, a, infer=_expand_dims_infer),
                  doc="Insert size-1 axes at the given (output) positions."))


def _squeeze_infer(types, attrs):
    (t,) = types
    axes = attrs["axes"]
    check_axes("squeeze", axes, t.rank)
    for a in axes:
        if t.shape[a] != 1:
            raise FrameValueError(f"squeeze: cannot squeeze axis {a} of size {t.shape[a]} "
                                  f"(shape {_fmt(t.shape)}); only size-1 axes can be removed")
    return [t.with_shape(tuple(d for i, d in enumerate(t.shape) if i not in axes))]


def _squeeze_kernel(ins, attrs):
    return (_copy(np.squeeze(ins[0], axis=attrs["axes"])),)


register(OpSchema("squeeze", 1, _squeeze_infer, _squeeze_kernel,
                  attrs={"axes": AttrSpec("ints")}, traits=_SHAPE,
                  decompose=lambda b, i, a: _reshape_decompose(b, i, a, infer=_squeeze_infer),
                  doc="Remove the given size-1 axes."))


# --------------------------------------------------------------------------- concat, stack

def _concat_infer(types, attrs):
    axis = attrs["axis"]
    first = types[0]
    if any(t.rank == 0 for t in types):
        raise FrameValueError("concat: zero-dimensional tensors cannot be concatenated")
    check_axis("concat", axis, first.rank)
    total = 0
    for i, t in enumerate(types):
        if t.rank != first.rank or any(d != e for j, (d, e) in enumerate(zip(t.shape, first.shape))
                                       if j != axis):
            raise FrameValueError(f"concat: all inputs must have the same shape except along "
                                  f"axis {axis}: input 0 has shape {_fmt(first.shape)}, input "
                                  f"{i} has shape {_fmt(t.shape)}")
        total += t.shape[axis]
    shape = first.shape[:axis] + (total,) + first.shape[axis + 1:]
    return [TensorType(result_type(*(t.dtype for t in types)), shape)]


def _concat_kernel(ins, attrs):
    return (np.concatenate(ins, axis=attrs["axis"]),)


register(OpSchema("concat", (1, None), _concat_infer, _concat_kernel,
                  attrs={"axis": AttrSpec("int")}, traits=_SHAPE,
                  doc="numpy.concatenate along one axis; dtypes promote as NumPy does."))


def _stack_infer(types, attrs):
    axis = attrs["axis"]
    first = types[0]
    check_axis("stack", axis, first.rank + 1)
    for i, t in enumerate(types):
        if t.shape != first.shape:
            raise FrameValueError(f"stack: all inputs must have the same shape: input 0 has "
                                  f"shape {_fmt(first.shape)}, input {i} has shape "
                                  f"{_fmt(t.shape)}")
    shape = first.shape[:axis] + (len(types),) + first.shape[axis:]
    return [TensorType(result_type(*(t.dtype for t in types)), shape)]


def _stack_kernel(ins, attrs):
    return (np.stack(ins, axis=attrs["axis"]),)


def _stack_decompose(b, inputs, attrs):
    axis = attrs["axis"]
    parts = [b.op("expand_dims", v, axes=(axis,)) for v in inputs]
    return [b.op("concat", *parts, axis=axis)]


register(OpSchema("stack", (1, None), _stack_infer, _stack_kernel,
                  attrs={"axis": AttrSpec("int")}, traits=_SHAPE + ("composite",),
                  decompose=_stack_decompose,
                  doc="numpy.stack: join equal-shape tensors along a new axis."))


# --------------------------------------------------------------------------- split

def _split_infer(types, attrs):
    (t,) = types
    axis, sizes = attrs["axis"], attrs["sizes"]
    if t.rank == 0:
        raise FrameValueError("split: a zero-dimensional tensor cannot be split")
    check_axis("split", axis, t.rank)
    if not sizes:
        raise FrameValueError("split: 'sizes' must name at least one section")
    if any(s < 0 for s in sizes) or sum(sizes) != t.shape[axis]:
        raise FrameValueError(f"split: section sizes {tuple(sizes)} must be non-negative and sum "
                              f"to the size of axis {axis} ({t.shape[axis]}) of {t}")
    return [t.with_shape(t.shape[:axis] + (s,) + t.shape[axis + 1:]) for s in sizes]


def _split_kernel(ins, attrs):
    cuts = np.cumsum(attrs["sizes"])[:-1]
    return tuple(_copy(p) for p in np.split(ins[0], cuts, axis=attrs["axis"]))


def _split_decompose(b, inputs, attrs):
    (x,) = inputs
    axis = attrs["axis"]
    full = [canonical_slice(d, None, None, None) for d in x.type.shape]
    outs, begin = [], 0
    for size in attrs["sizes"]:
        triples = list(full)
        triples[axis] = canonical_slice(x.type.shape[axis], begin, begin + size, 1)
        outs.append(b.op("slice", x, starts=tuple(t[0] for t in triples),
                         stops=tuple(t[1] for t in triples), steps=tuple(t[2] for t in triples)))
        begin += size
    return outs


register(OpSchema("split", 1, _split_infer, _split_kernel,
                  attrs={"axis": AttrSpec("int"), "sizes": AttrSpec("ints")},
                  traits=_SHAPE, decompose=_split_decompose,
                  doc="Split one axis into consecutive sections of the given sizes."))


# --------------------------------------------------------------------------- slice

def _slice_infer(types, attrs):
    (t,) = types
    starts, stops, steps = attrs["starts"], attrs["stops"], attrs["steps"]
    if not len(starts) == len(stops) == len(steps) == t.rank:
        raise FrameValueError(f"slice: starts, stops and steps need one entry per axis of {t}, "
                              f"got {len(starts)}, {len(stops)} and {len(steps)}")
    shape = []
    for axis, (s, e, k, d) in enumerate(zip(starts, stops, steps, t.shape)):
        if k == 0:
            raise FrameValueError(f"slice: step of axis {axis} must not be zero")
        n = slice_length(s, e, k)
        if n and not (0 <= s < d and 0 <= s + (n - 1) * k < d):
            raise FrameValueError(f"slice: range({s}, {e}, {k}) leaves axis {axis} of size {d}")
        if (s, e, k) != _normal(s, n, k):
            raise FrameValueError(f"slice: axis {axis} has non-canonical attrs ({s}, {e}, {k}); "
                                  f"expected {_normal(s, n, k)} (see ops.shape.canonical_slice)")
        shape.append(n)
    return [t.with_shape(tuple(shape))]


def _slice_kernel(ins, attrs):
    index = tuple(slice(s, e if e >= 0 else None, k)
                  for s, e, k in zip(attrs["starts"], attrs["stops"], attrs["steps"]))
    return (_copy(ins[0][index]),)


register(OpSchema("slice", 1, _slice_infer, _slice_kernel,
                  attrs={"starts": AttrSpec("ints"), "stops": AttrSpec("ints"),
                         "steps": AttrSpec("ints")}, traits=_SHAPE,
                  doc="Static strided slice; axis i keeps indices range(starts[i], stops[i], "
                      "steps[i]) in canonical form (ops.shape.canonical_slice)."))


# --------------------------------------------------------------------------- take

def _take_infer(types, attrs):
    x, idx = types
    axis = attrs["axis"]
    if x.rank == 0:
        raise FrameValueError("take: cannot take along an axis of a zero-dimensional tensor")
    check_axis("take", axis, x.rank)
    if idx.dtype.kind not in "iu":
        raise FrameTypeError(f"take: indices must be an integer tensor, got {idx}")
    return [x.with_shape(x.shape[:axis] + idx.shape + x.shape[axis + 1:])]


def check_indices_in_bounds(op: str, idx: np.ndarray, axis: int, n: int) -> None:
    """Raise FrameIndexError, naming the first bad index, when ``idx`` holds an
    index outside [-n, n) for ``axis`` (of size ``n``)."""
    if idx.size:
        bad = idx[(idx < -n) | (idx >= n)]
        if bad.size:
            raise FrameIndexError(f"{op}: index {int(bad.flat[0])} is out of bounds for axis "
                                  f"{axis} with size {n}")


def _take_kernel(ins, attrs):
    x, idx = ins
    axis = attrs["axis"]
    check_indices_in_bounds("take", idx, axis, x.shape[axis])
    return (np.take(x, idx, axis=axis),)


register(OpSchema("take", 2, _take_infer, _take_kernel, attrs={"axis": AttrSpec("int")},
                  doc="numpy.take(x, indices, axis) (gather); negative indices count from "
                      "the end, out-of-range indices raise."))


# --------------------------------------------------------------------------- scatter

def _scatter_infer(types, attrs):
    x, idx, upd = types
    if idx.dtype.kind not in "iu":
        raise FrameTypeError(f"scatter: indices must be an integer tensor, got {idx}")
    if upd.dtype is not x.dtype:
        raise FrameTypeError(f"scatter: updates must have the input's dtype {x.dtype}, got {upd}")
    if upd.shape != idx.shape:
        raise FrameValueError(f"scatter: updates {upd} must have the shape of the indices {idx}")
    return [x]


def _check_scatter_positions(idx: np.ndarray, n: int) -> None:
    """Raise unless every flat position in ``idx`` is in ``[0, n)``."""
    if idx.size:
        bad = idx[(idx < 0) | (idx >= n)]
        if bad.size:
            raise FrameIndexError(f"scatter: position {int(bad.flat[0])} is out of bounds for "
                                  f"a tensor of {n} elements")


def scatter_into(out: np.ndarray, idx: np.ndarray, upd: np.ndarray) -> None:
    """``out.flat[idx] = upd`` in place, positions checked: ``np.put`` counts
    positions in C order whatever ``out``'s memory layout, and writes the
    updates in C order over ``idx``, so where a position repeats the last
    update wins."""
    _check_scatter_positions(idx, out.size)
    np.put(out, idx, upd)


def _scatter_kernel(ins, attrs):
    x, idx, upd = ins
    out = np.array(x, dtype=x.dtype, order="C", copy=True)
    scatter_into(out, idx, upd)
    return (out,)


register(OpSchema("scatter", 3, _scatter_infer, _scatter_kernel,
                  doc="scatter(input, positions, updates): a copy of input with "
                      "input.flat[positions] = updates (positions are flat C-order indices in "
                      "[0, input.size), updates have their shape and input's dtype); when a "
                      "position repeats, its last update wins (NumPy's assignment order). "
                      "The functional form of ``t[index] = value``."))


# --------------------------------------------------------------------------- pad, flip

def _pad_infer(types, attrs):
    (t,) = types
    pads = attrs["pads"]
    if len(pads) != 2 * t.rank:
        raise FrameValueError(f"pad: 'pads' needs a (before, after) pair per axis of {t}, "
                              f"got {len(pads)} values")
    if any(p < 0 for p in pads):
        raise FrameValueError(f"pad: pad widths must be non-negative, got {tuple(pads)}")
    check_fill_value("pad", attrs["value"], t.dtype)
    return [t.with_shape(tuple(d + pads[2 * i] + pads[2 * i + 1]
                               for i, d in enumerate(t.shape)))]


def _pad_kernel(ins, attrs):
    x = ins[0]
    if x.ndim == 0:
        return (_copy(x),)
    widths = np.asarray(attrs["pads"], dtype=np.int64).reshape(x.ndim, 2)
    return (np.pad(x, widths, mode="constant", constant_values=attrs["value"]),)


register(OpSchema("pad", 1, _pad_infer, _pad_kernel,
                  attrs={"pads": AttrSpec("ints"), "value": AttrSpec("float", 0.0)},
                  traits=_SHAPE,
                  doc="Constant padding; pads = (before_0, after_0, before_1, after_1, ...)."))


def _flip_infer(types, attrs):
    (t,) = types
    check_axes("flip", attrs["axes"], t.rank)
    return [t]


def _flip_kernel(ins, attrs):
    return (_copy(np.flip(ins[0], axis=attrs["axes"])),)


def _flip_decompose(b, inputs, attrs):
    (x,) = inputs
    axes = attrs["axes"]
    triples = [canonical_slice(d, None, None, -1 if i in axes else 1)
               for i, d in enumerate(x.type.shape)]
    return [b.op("slice", x, starts=tuple(t[0] for t in triples),
                 stops=tuple(t[1] for t in triples), steps=tuple(t[2] for t in triples))]


register(OpSchema("flip", 1, _flip_infer, _flip_kernel, attrs={"axes": AttrSpec("ints")},
                  traits=_SHAPE, decompose=_flip_decompose,
                  doc="Reverse the order of elements along the given axes."))
