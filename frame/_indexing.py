"""``Tensor.__getitem__``: NumPy indexing lowered to frame ops.

Supported: ints (negative too), slices with any step, ``None``, ``...``, and
integer index arrays (Tensors, ndarrays, lists of ints or ``range`` objects).  Basic indexing
becomes ``slice`` + ``squeeze`` + ``expand_dims``; one integer array becomes
``take``; several are broadcast together and become one ``take`` of flat
positions on their axes merged into one (``_several_arrays``); each step goes
through the user-facing functions, so it runs on the eager launch path (and is
captured like any other op).

Boolean masks give results whose shape depends on the data, so they raise a
clear error.

NumPy's placement rule is kept: the index array's dimensions replace its axis
in place, unless an int and the array are separated by a slice, ``None`` or
``...`` in the index, in which case they go first (ints count as "advanced"
indices next to an array: ``a[0, :, [1, 2]]`` has shape ``(2, a.shape[1])``).
"""
from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .functions import (arange, astype, broadcast_to, expand_dims, reshape, squeeze, take, transpose,
                        where)
from .functions._core import apply1, as_array, operands
from .functions.shape import slice_canonical
from .errors import FrameTypeError
from .errors import FrameIndexError
from .ops.shape import canonical_slice
from .tensor import Tensor
from .dtypes import int64 as _INT64

__all__ = ["getitem", "setitem", "setitem_at", "add_at", "UnsupportedIndexError"]


class UnsupportedIndexError(FrameTypeError, IndexError):
    """An index frame does not support (a TypeError and an IndexError)."""


_VALID = ("only integers, slices (`:`), ellipsis (`...`), None and integer tensors or "
          "lists of ints are valid indices")


def _bool_mask_error(what: str) -> UnsupportedIndexError:
    return UnsupportedIndexError(
        f"index: boolean {what} indexing is not supported (the result's shape would depend "
        f"on the data); use frame.where, or index with integer positions")


def _classify(entry: Any) -> tuple[str, Any]:
    """('int', i) | ('slice', s) | ('none', None) | ('ellipsis', None) | ('array', ndarray)."""
    if entry is None:
        return ("none", None)
    if entry is Ellipsis:
        return ("ellipsis", None)
    if isinstance(entry, slice):
        return ("slice", entry)
    if isinstance(entry, (bool, np.bool_)):
        raise _bool_mask_error("scalar")
    if isinstance(entry, (numbers.Integral, np.integer)):
        return ("int", int(entry))
    if isinstance(entry, Tensor):
        arr = entry.numpy()
    elif isinstance(entry, np.ndarray):
        arr = entry
    elif isinstance(entry, (list, tuple, range)):  # a range is a sequence of ints to NumPy
        try:
            arr = np.asarray(entry)
        except ValueError as e:  # ragged nesting
            raise FrameIndexError(f"index: {_VALID}; got the ragged list {entry!r}") from e
        if arr.size == 0:
            arr = arr.astype(np.int64)  # as NumPy: an empty list selects nothing
    elif hasattr(entry, "__index__"):
        return ("int", entry.__index__())
    else:
        raise FrameIndexError(f"index: {_VALID}; got {type(entry).__name__} {entry!r}")
    if arr.dtype.kind == "b":
        raise _bool_mask_error("mask")
    if arr.dtype.kind not in "iu":
        raise FrameIndexError(f"index: arrays used as indices must be of integer type, "
                              f"got {arr.dtype}")
    if arr.ndim == 0:
        return ("int", int(arr))  # NumPy treats a 0-d integer array as an int
    if arr.dtype.kind == "u":  # through frame's astype: a traced index stays traced
        arr = astype(arr, _INT64).numpy()
    return ("array", arr)


def getitem(tensor, index: Any):
    """``tensor[index]`` with NumPy semantics (values, shape and dtype)."""
    entries = [_classify(e) for e in (index if type(index) is tuple else (index,))]
    kinds = [k for k, _ in entries]
    if kinds.count("ellipsis") > 1:
        raise FrameIndexError("index: an index can only have a single ellipsis ('...')")
    shape = tensor.shape
    consumed = sum(k in ("int", "slice", "array") for k in kinds)
    if consumed > len(shape):
        raise FrameIndexError(f"index: too many indices for tensor: tensor is "
                              f"{len(shape)}-dimensional, but {consumed} were indexed")
    if kinds.count("array") > 1:
        return _several_arrays(tensor, entries)
    return _one_array(tensor, entries)


def _axes_of(entries: list, ndim: int) -> list:
    """The input axis each entry indexes (None for ``None`` and ``...``)."""
    consumed = sum(k in ("int", "slice", "array") for k, _ in entries)
    axes: list[int | None] = []
    axis = 0
    for k, _ in entries:
        if k == "ellipsis":
            axes.append(None)
            axis += ndim - consumed
        elif k == "none":
            axes.append(None)
        else:
            axes.append(axis)
            axis += 1
    return axes


def _several_arrays(tensor, entries: list):
    """``tensor[i, :, j]`` with several integer arrays (ints next to them are
    "advanced" too, as 0-d arrays).  The indexed axes are brought together
    (``transpose``) and merged into one (``reshape``), which one array of flat
    positions indexes: ``sum(i_k * stride_k)`` over the arrays broadcast
    together, each first checked and made non-negative by ``take`` from
    ``arange`` of its axis.  NumPy's placement rule holds: the broadcast block
    replaces the indexed axes where they are, or goes first when a slice,
    ``None`` or ``...`` separates them in the index."""
    shape = tensor.shape
    axes = _axes_of(entries, len(shape))
    adv = [n for n, (k, _) in enumerate(entries) if k in ("int", "array")]
    adv_axes = [axes[n] for n in adv]
    arrays = [entries[n][1] for n in adv if entries[n][0] == "array"]
    try:
        block = np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise FrameIndexError("shape mismatch: indexing arrays could not be broadcast together "
                              "with shapes " + "".join(f"{a.shape} " for a in arrays)) from None
    flat: Any = None
    stride = 1
    for n, ax in reversed(list(zip(adv, adv_axes))):
        k, v = entries[n]
        d = shape[ax]
        if k == "int":
            if not -d <= v < d:
                raise FrameIndexError(f"index {v} is out of bounds for axis {ax} with size {d}")
            part: Any = (v + d if v < 0 else v) * stride
        else:
            bad = (v < -d) | (v >= d)  # the values of a constant index (a traced one: at run time)
            if bad.any():
                raise FrameIndexError(f"index {int(v[bad].flat[0])} is out of bounds for axis "
                                      f"{ax} with size {d}")
            part = take(arange(d), v)
            if stride != 1:
                part = part * stride
        flat = part if flat is None else part + flat
        stride *= d
    if as_array(flat).shape != block:
        flat = broadcast_to(flat, block)
    first = adv_axes[0]
    rest = [a for a in range(len(shape)) if a not in adv_axes]
    perm = [a for a in rest if a < first] + adv_axes + [a for a in rest if a > first]
    merged = tensor if perm == list(range(len(shape))) else transpose(tensor, tuple(perm))
    merged = reshape(merged, shape[:first] + (stride,) + tuple(shape[a] for a in rest if a > first))
    one = [("array", as_array(flat)) if n == adv[0] else e
           for n, e in enumerate(entries) if n == adv[0] or n not in adv]
    result = _one_array(merged, one)
    if adv[-1] - adv[0] + 1 != len(adv):  # separated: the block goes first
        before = sum(1 if k in ("slice", "none") else 0 for k, _ in one[:adv[0]])
        if any(k == "ellipsis" for k, _ in one[:adv[0]]):
            before += len(merged.shape) - sum(k in ("int", "slice", "array") for k, _ in one)
        if before:
            nd = len(block)
            order = list(range(before, before + nd)) + list(range(before)) + \
                list(range(before + nd, len(result.shape)))
            result = transpose(result, tuple(order))
    return result


def _one_array(tensor, entries: list):
    """``tensor[index]`` for classified entries with at most one array."""
    shape = tensor.shape
    consumed = sum(k in ("int", "slice", "array") for k, _ in entries)

    # Walk the index: one (start, stop, step) per input axis, the axes whose
    # ints are squeezed away, the array's axis, and the result layout as labels
    # ("axis", i) for kept input axes, "adv" for the array's block, "new" for None.
    triples = [canonical_slice(d, None, None, None) for d in shape]
    int_axes: list[int] = []
    array_axis, array = -1, None
    layout: list[Any] = []
    axis = 0
    for k, v in entries:
        if k == "ellipsis":
            for _ in range(len(shape) - consumed):
                layout.append(("axis", axis))
                axis += 1
        elif k == "none":
            layout.append("new")
        elif k == "int":
            d = shape[axis]
            if not -d <= v < d:
                raise FrameIndexError(f"index {v} is out of bounds for axis {axis} with size {d}")
            v = v + d if v < 0 else v
            triples[axis] = (v, v + 1, 1)
            int_axes.append(axis)
            axis += 1
        elif k == "slice":
            try:
                triples[axis] = canonical_slice(shape[axis], v.start, v.stop, v.step)
            except TypeError:
                raise FrameTypeError(f"index: slice indices must be integers or None, got "
                                     f"{v}") from None
            except ValueError:
                raise FrameIndexError("index: slice step cannot be zero") from None
            layout.append(("axis", axis))
            axis += 1
        else:
            array_axis, array = axis, v
            layout.append("adv")
            axis += 1
    layout.extend(("axis", i) for i in range(axis, len(shape)))

    if array is not None and int_axes:
        # ints and the array are all "advanced": apart in the index, their
        # block goes first (NumPy's rule).
        positions = [i for i, (k, _) in enumerate(entries) if k in ("int", "array")]
        if positions[-1] - positions[0] + 1 != len(positions):
            layout.remove("adv")
            layout.insert(0, "adv")

    result = tensor
    full = [canonical_slice(d, None, None, None) for d in shape]
    if triples != full:
        result = slice_canonical(result, triples)
    current: list[Any] = [("axis", i) for i in range(len(shape))]
    if array is not None:
        result = take(result, array, axis=array_axis)
        current[array_axis] = "adv"  # the array's dimensions, one label for the block
    if int_axes:
        result = squeeze(result, tuple(current.index(("axis", i)) + _adv_extra(current, i, array)
                                       for i in int_axes))
        current = [c for c in current if not (isinstance(c, tuple) and c[1] in int_axes)]
    target = [c for c in layout if c != "new"]
    if target != current:
        result = transpose(result, _perm(current, target, 0 if array is None else array.ndim))
    news = [i for i, c in enumerate(_expanded(layout, array)) if c == "new"]
    if news:
        result = expand_dims(result, tuple(news))
    if result is tensor:
        # A plain t[...] / t[:] still returns a new tensor, never the same one.
        result = slice_canonical(result, full)
    return result


def setitem(tensor, index, value):
    """The functional ``tensor[index] = value``: a new tensor equal to ``tensor``
    except at the elements ``tensor[index]`` selects, which hold ``value``.

    The selected elements are found by indexing a tensor of flat positions
    (``arange(size)`` in ``tensor``'s shape) with ``index`` -- the same ops as
    ``getitem``, so every index ``getitem`` accepts works, with its errors --
    and written by one ``scatter`` op.  As in NumPy, ``value`` broadcasts to the
    selection's shape and is cast to ``tensor``'s dtype (unsafely: ``2.7``
    stored into an int tensor is ``2``); a Python scalar keeps its full precision
    (NEP 50).  When an integer array repeats a position, the last value wins.
    A boolean mask (``t[t < 0] = 0``) takes one value, written by ``where``.
    ``Tensor.__setitem__`` writes this result in place.
    """
    mask = _bool_mask(index)
    if mask is not None:
        return _masked_setitem(tensor, mask, _in_dtype_of(tensor, value))
    return setitem_at(tensor, _positions(tensor, index), value)


def setitem_at(tensor, positions, value):
    """``setitem``'s write, given the flat ``positions`` of the selected
    elements (an integer tensor in the selection's shape: ``tensor[index]`` of
    ``arange(size)`` in ``tensor``'s shape): ``value`` cast, broadcast and
    scattered there."""
    v = _in_dtype_of(tensor, value)
    shape = positions.shape
    vshape = as_array(v).shape
    if len(vshape) > len(shape) and all(d == 1 for d in vshape[:len(vshape) - len(shape)]):
        v = reshape(v, vshape[len(vshape) - len(shape):])  # NumPy drops leading unit dims
    if as_array(v).shape != shape:
        v = broadcast_to(v, shape)
    return apply1("scatter", (as_array(tensor), as_array(positions), as_array(v)), {})


def add_at(tensor, index, value):
    """The functional ``numpy.add.at(tensor, index, value)``: a new tensor equal
    to ``tensor`` plus ``value`` at the elements ``tensor[index]`` selects,
    unbuffered: a position an integer array repeats gets every addition
    (``t[index] += value`` keeps one), in the order of the selection.

    The positions are found as ``setitem`` finds them (the same indices and
    errors) and the additions are one ``scatter_add`` over the flat tensor.
    ``value`` broadcasts to the selection's shape and is added in ``tensor``'s
    dtype: the caller makes sure NumPy's loop runs in that dtype (a float64
    value added into a float32 array is added in float64 by NumPy, then
    rounded).  A boolean mask is refused (``where(mask, t + v, t)`` would add,
    and may warn, at every element).
    """
    v = _in_dtype_of(tensor, value)
    if _bool_mask(index) is not None:   # where(mask, t + v, t) would add at every element
        raise _bool_mask_error("numpy.add.at with a boolean mask")
    positions = _positions(tensor, index)
    shape = positions.shape
    if as_array(v).shape != shape:
        v = broadcast_to(v, shape)
    flat = apply1("scatter_add", (as_array(reshape(tensor, (tensor.size,))),
                                  as_array(reshape(positions, (positions.size,))),
                                  as_array(reshape(v, (positions.size,)))), {"axis": 0})
    return reshape(flat, tensor.shape)


def _in_dtype_of(tensor, value):
    """``value`` cast to ``tensor``'s dtype; a Python scalar as NumPy would hold
    it next to ``tensor`` first (its full precision, NEP 50)."""
    v = operands(tensor, value)[1] if type(value) in (bool, int, float, complex) else value
    return astype(v, tensor.dtype) if as_array(v).dtype != tensor.dtype.np else v


def _positions(tensor, index):
    """The flat positions of the elements ``tensor[index]`` selects, in its shape
    (the same indexing ops as ``getitem``, so the same indices and errors)."""
    return getitem(reshape(arange(tensor.size), tensor.shape), index)


def _bool_mask(index: Any):
    """The boolean array ``index`` is (alone, or alone in a 1-tuple), else None."""
    if type(index) is tuple and len(index) == 1:
        index = index[0]
    if isinstance(index, Tensor):
        arr = as_array(index)
    elif isinstance(index, np.ndarray):
        arr = index
    elif isinstance(index, list) and index and all(isinstance(b, (bool, np.bool_)) for b in index):
        arr = np.asarray(index)
    else:
        return None
    return arr if arr.dtype == np.bool_ and arr.ndim >= 1 else None


def _masked_setitem(tensor, mask, v):
    """``tensor[mask] = v`` for a boolean mask over ``tensor``'s leading axes and
    a single value (the selection's shape depends on the data, so a value that
    is not one element would too): ``where(mask, v, tensor)``."""
    shape = tensor.shape
    for axis, (d, m) in enumerate(zip(shape, mask.shape)):
        if d != m:
            raise FrameIndexError(f"boolean index did not match indexed array along axis "
                                  f"{axis}; size of axis is {d} but size of corresponding "
                                  f"boolean axis is {m}")
    if mask.ndim > len(shape):
        raise FrameIndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                              f"but {mask.ndim} were indexed")
    vshape = as_array(v).shape
    if math.prod(vshape) != 1:
        raise _bool_mask_error("mask assignment of more than one value")
    if vshape:
        v = reshape(v, ())
    if mask.ndim < len(shape):
        mask = reshape(mask, mask.shape + (1,) * (len(shape) - mask.ndim))
    return where(mask, v, tensor)


def _adv_extra(current: list, axis: int, array) -> int:
    """Dimension offset of input axis ``axis`` caused by the array block before it."""
    if array is None or "adv" not in current:
        return 0
    return array.ndim - 1 if current.index("adv") < current.index(("axis", axis)) else 0


def _expanded(labels: list, array) -> list:
    """``labels`` with the array block written as one label per dimension."""
    out: list[Any] = []
    for c in labels:
        out.extend(["adv"] * array.ndim if c == "adv" else [c])
    return out


def _perm(current: list, target: list, adv_ndim: int) -> tuple[int, ...]:
    """The transpose taking dims laid out as ``current`` to ``target`` (labels;
    "adv" stands for ``adv_ndim`` consecutive dimensions)."""
    starts, pos = {}, 0
    for c in current:
        starts[c] = pos
        pos += adv_ndim if c == "adv" else 1
    perm: list[int] = []
    for c in target:
        width = adv_ndim if c == "adv" else 1
        perm.extend(range(starts[c], starts[c] + width))
    return tuple(perm)
