"""Helpers shared by type-inference functions: broadcasting, axes, dtype checks."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..dtypes import DType, from_numpy
from ..errors import FrameAxisError, FrameTypeError, FrameValueError
from ..ir.types import TensorType

__all__ = ["broadcast_shapes", "normalize_axis", "normalize_axes", "require_dtype",
           "ufunc_result_dtype", "fmt_types"]


def fmt_types(types: Sequence[TensorType]) -> str:
    return ", ".join(str(t) for t in types)


def broadcast_shapes(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of static shapes; FrameValueError naming the shapes otherwise."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b:
            return a
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        off = rank - len(s)
        for i, d in enumerate(s):
            cur = out[off + i]
            if cur == 1:
                out[off + i] = d
            elif d != 1 and d != cur:
                shown = " and ".join(str(list(x)) for x in shapes)
                raise FrameValueError(f"{op}: shapes {shown} cannot be broadcast together "
                                      f"(dimension {off + i - rank} is {cur} vs {d})")
    return tuple(out)


def normalize_axis(op: str, axis: int, rank: int) -> int:
    """A non-negative axis; a 0-d tensor accepts 0 and -1 (as NumPy's reductions do)."""
    if rank == 0:
        if axis not in (0, -1):
            raise FrameAxisError(f"{op}: axis {axis} is out of bounds for a tensor of rank 0")
        return 0
    if not -rank <= axis < rank:
        raise FrameAxisError(f"{op}: axis {axis} is out of bounds for a tensor of rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(op: str, axes: Sequence[int], rank: int) -> tuple[int, ...]:
    """Normalise to sorted non-negative axes; rejects out-of-range and repeated axes."""
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise FrameAxisError(f"{op}: axis {a} is out of bounds for a tensor of rank {rank}")
        out.append(a + rank if a < 0 else a)
    if len(set(out)) != len(out):
        raise FrameValueError(f"{op}: repeated axis in {tuple(axes)}")
    return tuple(sorted(out))


def require_dtype(op: str, t: TensorType, kinds: str, what: str) -> None:
    """Reject dtypes whose kind letter is not in ``kinds`` ('f', 'i', 'u', 'b', 'c')."""
    if t.dtype.kind not in kinds:
        raise FrameTypeError(f"{op}: expected {what} input, got {t}")


def ufunc_result_dtype(op: str, ufunc: np.ufunc, dtypes: Sequence[DType]) -> DType:
    """The output dtype NumPy's ufunc loop gives for these input dtypes."""
    try:
        resolved = ufunc.resolve_dtypes(tuple(d.np for d in dtypes) + (None,) * ufunc.nout)
    except TypeError as e:  # NumPy's 'no loop' error is a TypeError
        names = ", ".join(d.name for d in dtypes)
        raise FrameTypeError(f"{op}: not supported for dtype(s) {names}") from e
    try:
        return from_numpy(resolved[ufunc.nin])
    except TypeError as e:
        names = ", ".join(d.name for d in dtypes)
        raise FrameTypeError(f"{op}: not supported for dtype(s) {names} "
                             f"(NumPy would produce {resolved[ufunc.nin]})") from e
