"""TensorType: a dtype and a static shape."""
from __future__ import annotations

import math

from ..dtypes import DType

__all__ = ["TensorType", "DYNAMIC"]

DYNAMIC = -1  # exists only so that verify can reject it: v0 is static-shape only


class TensorType:
    """Immutable (dtype, shape) pair.  ``str(t)`` is ``float32[2,3]``."""

    __slots__ = ("dtype", "shape", "_hash")

    def __init__(self, dtype: DType, shape):
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "_hash", hash((dtype, self.shape)))

    def __setattr__(self, name, value):
        raise AttributeError("TensorType is immutable")

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def is_static(self) -> bool:
        return all(type(d) is int and d >= 0 for d in self.shape)

    def with_shape(self, shape) -> "TensorType":
        return TensorType(self.dtype, shape)

    def with_dtype(self, dtype: DType) -> "TensorType":
        return TensorType(dtype, self.shape)

    def __eq__(self, other) -> bool:
        return (isinstance(other, TensorType) and self.dtype is other.dtype
                and self.shape == other.shape)

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"{self.dtype.name}[{','.join('?' if d == DYNAMIC else str(d) for d in self.shape)}]"

    __repr__ = __str__

    def __reduce__(self):
        return (TensorType, (self.dtype, self.shape))
