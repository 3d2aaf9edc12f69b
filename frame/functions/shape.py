"""User-facing shape functions: ``frame.reshape``, ``frame.transpose``,
``frame.concat``, ``frame.split``, ``frame.take``, ``frame.pad``, ...

NumPy signatures and semantics.  Every function normalises its arguments
(negative axes, ``axis=None``, ``-1`` in shapes, Python slices) into the
canonical attrs of its op and runs it through ``apply``/``apply1``.  Results
never share memory with the input (frame tensors own their data).
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..errors import FrameTypeError, FrameValueError
from ..ops.common import normalize_axes, normalize_axis
from ..ops.shape import canonical_slice, resolve_shape
from ._core import apply, apply1, as_array, bind_schema, schema_attrs

__all__ = ["reshape", "transpose", "broadcast_to", "expand_dims", "squeeze", "concat", "stack",
           "split", "strided_slice", "take", "pad", "flip"]
METHODS = [n for n in __all__ if n not in ("concat", "stack")]

Axis = Any  # None, an int, or a tuple/list of ints


def _is_int(v: Any) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def _ints(op: str, what: str, values: Any) -> tuple[int, ...]:
    """A tuple of Python ints from an int or a sequence of ints."""
    if _is_int(values):
        return (int(values),)
    if isinstance(values, np.ndarray):
        values = values.tolist() if values.ndim else [values.item()]
    if isinstance(values, (tuple, list)) and all(_is_int(v) for v in values):
        return tuple(int(v) for v in values)
    raise FrameTypeError(f"{op}: {what} must be an int or a sequence of ints, got {values!r}")


def _axes(op: str, axis: Axis, rank: int) -> tuple[int, ...]:
    """Canonical axes: None -> every axis, negatives normalised, sorted."""
    if axis is None:
        return tuple(range(rank))
    return normalize_axes(op, _ints(op, "axis", axis), rank)


def _axis(op: str, axis: Any, rank: int) -> int:
    if not _is_int(axis):
        raise FrameTypeError(f"{op}: axis must be an int, got {axis!r}")
    return normalize_axis(op, int(axis), rank)


def _varargs(op: str, what: str, args: tuple) -> tuple[int, ...]:
    """``f(x, 2, 3)`` and ``f(x, (2, 3))`` both mean (2, 3)."""
    if len(args) == 1 and not _is_int(args[0]):
        return _ints(op, what, args[0])
    return _ints(op, what, args)


@bind_schema("reshape")
def reshape(x, *shape, order: str = "C"):
    """A tensor with the same data in a new shape; one dimension may be -1.

    >>> frame.reshape(frame.arange(6), 2, -1).shape
    (2, 3)
    >>> frame.arange(6).reshape((3, 2)).shape
    (3, 2)
    """
    if order != "C":
        raise FrameValueError(f"reshape: only order='C' is supported, got {order!r}")
    a = as_array(x)
    target = resolve_shape("reshape", a.shape, _varargs("reshape", "shape", shape))
    return apply1("reshape", (a,), schema_attrs("reshape", shape=target))


@bind_schema("transpose")
def transpose(x, *axes):
    """Permute the axes; with no axes (or None), reverse them (as numpy.transpose).

    >>> frame.transpose(frame.zeros((2, 3, 4)), 1, 0, 2).shape
    (3, 2, 4)
    >>> frame.zeros((2, 3)).T.shape
    (3, 2)
    """
    a = as_array(x)
    if not axes or (len(axes) == 1 and axes[0] is None):
        perm: tuple[int, ...] = tuple(reversed(range(a.ndim)))
    else:
        perm = _varargs("transpose", "axes", axes)
        if len(perm) != a.ndim:
            raise FrameValueError(f"transpose: axes {perm} do not match a tensor of rank {a.ndim}")
        perm = tuple(normalize_axis("transpose", p, a.ndim) for p in perm)
        if len(set(perm)) != len(perm):
            raise FrameValueError(f"transpose: repeated axis in {_varargs('transpose', 'axes', axes)}")
    return apply1("transpose", (a,), schema_attrs("transpose", perm=perm))


@bind_schema("broadcast_to")
def broadcast_to(x, shape):
    """Broadcast to ``shape`` with NumPy rules (the result is a copy).

    >>> frame.broadcast_to(frame.tensor([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    """
    a = as_array(x)
    return apply1("broadcast_to", (a,), schema_attrs("broadcast_to", shape=_ints(
        "broadcast_to", "shape", shape)))


@bind_schema("expand_dims")
def expand_dims(x, axis: Axis):
    """Insert size-1 axes at positions ``axis`` of the result (int or tuple).

    >>> frame.expand_dims(frame.zeros((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    a = as_array(x)
    wanted = _ints("expand_dims", "axis", axis)
    axes = normalize_axes("expand_dims", wanted, a.ndim + len(wanted))
    return apply1("expand_dims", (a,), schema_attrs("expand_dims", axes=axes))


@bind_schema("squeeze")
def squeeze(x, axis: Axis = None):
    """Remove size-1 axes: all of them (None) or the given ones, which must have size 1.

    >>> frame.squeeze(frame.zeros((1, 3, 1)), 0).shape
    (3, 1)
    """
    a = as_array(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = _axes("squeeze", axis, a.ndim)
    return apply1("squeeze", (a,), schema_attrs("squeeze", axes=axes))


def _tensor_list(op: str, tensors: Any) -> list[np.ndarray]:
    if not isinstance(tensors, (list, tuple)):
        raise FrameTypeError(f"{op}: expected a list or tuple of tensors, got "
                             f"{type(tensors).__name__}")
    if not tensors:
        raise FrameValueError(f"{op}: need at least one tensor")
    return [as_array(t) for t in tensors]


@bind_schema("concat")
def concat(tensors: Sequence, axis: int | None = 0):
    """Join tensors along an existing axis (``axis=None``: flatten them first);
    dtypes promote as numpy.concatenate does.

    >>> frame.concat([frame.zeros((2, 3)), frame.ones((1, 3))]).shape
    (3, 3)
    """
    arrays = _tensor_list("concat", tensors)
    if axis is None:
        arrays = [as_array(reshape(a, -1)) for a in arrays]
        axis = 0
    if any(a.ndim == 0 for a in arrays):
        raise FrameValueError("concat: zero-dimensional tensors cannot be concatenated")
    ax = _axis("concat", axis, arrays[0].ndim)
    return apply1("concat", arrays, schema_attrs("concat", axis=ax))


@bind_schema("stack")
def stack(tensors: Sequence, axis: int = 0):
    """Join equal-shape tensors along a new axis.

    >>> frame.stack([frame.zeros(3), frame.ones(3)], axis=1).shape
    (3, 2)
    """
    arrays = _tensor_list("stack", tensors)
    ax = _axis("stack", axis, arrays[0].ndim + 1)
    return apply1("stack", arrays, schema_attrs("stack", axis=ax))


@bind_schema("split")
def split(x, indices_or_sections, axis: int = 0) -> list:
    """Split into a list of tensors, as numpy.split: an int N makes N equal
    sections; a sequence of indices splits before each index.

    >>> [t.shape for t in frame.split(frame.arange(6), [1, 4])]
    [(1,), (3,), (2,)]
    """
    a = as_array(x)
    if a.ndim == 0:
        raise FrameValueError("split: a zero-dimensional tensor cannot be split")
    ax = _axis("split", axis, a.ndim)
    n = a.shape[ax]
    if _is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise FrameValueError(f"split: the number of sections must be positive, got {sections}")
        if n % sections:
            raise FrameValueError(f"split: axis {ax} of size {n} cannot be split into "
                                  f"{sections} equal sections")
        sizes = (n // sections,) * sections
        return apply("split", (a,), schema_attrs("split", axis=ax, sizes=sizes))
    cuts = _ints("split", "indices_or_sections", indices_or_sections)
    # Each piece is a[start:stop] with Python slice semantics (numpy.split does
    # exactly that), so out-of-order or negative indices work as in NumPy.
    pieces = [slice(s, e).indices(n)[:2] for s, e in zip((0,) + cuts, cuts + (n,))]
    sizes, cursor, contiguous = [], 0, True
    for s, e in pieces:
        size = max(0, e - s)
        if size and s != cursor:
            contiguous = False
        cursor = e if size else cursor
        sizes.append(size)
    if contiguous and cursor == n:
        return apply("split", (a,), schema_attrs("split", axis=ax, sizes=tuple(sizes)))
    # Overlapping pieces (e.g. indices [3, 1]) are not a partition: slice each.
    full = [None] * a.ndim
    return [strided_slice(a, full[:ax] + [s], full[:ax] + [e]) for s, e in pieces]


@bind_schema("slice")
def strided_slice(x, starts: Sequence, stops: Sequence, steps: Sequence | None = None):
    """``x[starts[0]:stops[0]:steps[0], starts[1]:...]`` with Python slice
    semantics; entries may be None, and axes past the given ones are kept whole.

    >>> frame.strided_slice(frame.arange(6), [None], [None], [-2]).tolist()
    [5, 3, 1]
    """
    a = as_array(x)
    if steps is None:
        steps = [None] * len(starts)
    if not len(starts) == len(stops) == len(steps):
        raise FrameValueError(f"slice: starts, stops and steps must have equal lengths, got "
                              f"{len(starts)}, {len(stops)} and {len(steps)}")
    if len(starts) > a.ndim:
        raise FrameValueError(f"slice: {len(starts)} slices given for a tensor of rank {a.ndim}")
    triples = []
    for i, d in enumerate(a.shape):
        if i < len(starts):
            try:
                triples.append(canonical_slice(d, starts[i], stops[i], steps[i]))
            except TypeError as e:
                raise FrameTypeError(f"slice: {e}") from None
            except ValueError as e:  # a zero step
                raise FrameValueError(f"slice: {e}") from None
        else:
            triples.append(canonical_slice(d, None, None, None))
    return slice_canonical(a, triples)


def slice_canonical(x, triples: Sequence[tuple[int, int, int]]):
    """Run the ``slice`` op with one canonical ``(start, stop, step)`` triple per
    axis (``ops.shape.canonical_slice``); used by ``strided_slice`` and indexing."""
    attrs = schema_attrs("slice", starts=tuple(t[0] for t in triples),
                         stops=tuple(t[1] for t in triples), steps=tuple(t[2] for t in triples))
    return apply1("slice", (as_array(x),), attrs)


@bind_schema("take")
def take(x, indices, axis: int | None = None, *, out: Any = None, mode: str = "raise"):
    """Elements of ``x`` at integer ``indices`` along ``axis`` (numpy.take;
    ``axis=None`` indexes the flattened tensor).  Negative indices count from
    the end; out-of-range indices raise an IndexError.

    >>> frame.take(frame.tensor([[1, 2], [3, 4]]), [1, 0], axis=1).tolist()
    [[2, 1], [4, 3]]
    """
    if out is not None:
        raise FrameTypeError("take: the out argument is not supported")
    if mode != "raise":
        raise FrameValueError(f"take: only mode='raise' is supported, got {mode!r}")
    a = as_array(x)
    idx = np.asarray(indices, dtype=np.int64) if isinstance(indices, list) and not indices \
        else as_array(indices)
    if axis is None:
        a, ax = as_array(reshape(a, -1)), 0
    else:
        ax = _axis("take", axis, a.ndim)
    return apply1("take", (a, idx), schema_attrs("take", axis=ax))


@bind_schema("pad")
def pad(x, pad_width, value: float = 0.0):
    """Pad with a constant.  ``pad_width`` takes numpy.pad's forms: ``n``,
    ``(before, after)``, ``((before, after),)`` or one pair per axis.

    >>> frame.pad(frame.ones((2, 2)), ((0, 1), (2, 0))).shape
    (3, 4)
    """
    a = as_array(x)
    try:
        widths = np.asarray(pad_width)
    except (TypeError, ValueError) as e:
        raise FrameTypeError(f"pad: pad_width must be ints, got {pad_width!r}") from e
    if widths.dtype.kind not in "iu" and widths.size:
        raise FrameTypeError(f"pad: pad_width must be ints, got {pad_width!r}")
    try:
        pairs = np.broadcast_to(widths, (a.ndim, 2))
    except ValueError:
        raise FrameValueError(f"pad: pad_width {pad_width!r} cannot be broadcast to one "
                              f"(before, after) pair per axis of a rank-{a.ndim} tensor") from None
    if isinstance(value, (bool, np.bool_)):
        value = float(value)
    pads = tuple(int(v) for v in pairs.ravel())
    return apply1("pad", (a,), schema_attrs("pad", pads=pads, value=value))


@bind_schema("flip")
def flip(x, axis: Axis = None):
    """Reverse the order of elements along ``axis`` (every axis when None).

    >>> frame.flip(frame.tensor([[1, 2], [3, 4]]), 1).tolist()
    [[2, 1], [4, 3]]
    """
    a = as_array(x)
    return apply1("flip", (a,), schema_attrs("flip", axes=_axes("flip", axis, a.ndim)))
