"""frame's dtypes and their NumPy mapping.

A :class:`DType` is an interned, immutable wrapper around a NumPy dtype.  Only
the dtypes listed here exist in frame; anything else is rejected with a
``TypeError`` that names the supported set.  Promotion follows NumPy 2
(NEP 50): arrays are strongly typed, Python scalars are weak.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "DType", "float16", "float32", "float64", "int32", "int64", "bool_",
    "complex64", "complex128", "int8", "int16", "uint8", "uint16", "uint32", "uint64",
    "all_dtypes", "from_numpy", "as_dtype",
    "result_type", "weak_scalar_dtype",
]


class DType:
    """One of frame's dtypes.  Compare with ``is`` or ``==``; hashable."""

    __slots__ = ("name", "np", "kind", "itemsize")

    def __init__(self, name: str, np_dtype: np.dtype):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.kind = self.np.kind  # 'f', 'i', 'u', 'b', 'c'
        self.itemsize = self.np.itemsize

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_integer(self) -> bool:
        """Signed or unsigned integer."""
        return self.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    def __repr__(self) -> str:
        return f"frame.{self.name}"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (as_dtype, (self.name,))

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self is other
        try:
            return self.np == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
bool_ = DType("bool", np.bool_)
# complex dtypes exist for the fft ops (rfft output, irfft input).
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
# the small and unsigned integers (images are uint8); kind 'u' for the unsigned ones.
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)

all_dtypes: tuple[DType, ...] = (float16, float32, float64, int32, int64, bool_, complex64, complex128,
                                 int8, int16, uint8, uint16, uint32, uint64)
_BY_NP: dict[np.dtype, DType] = {d.np: d for d in all_dtypes}
_BY_NAME: dict[str, DType] = {d.name: d for d in all_dtypes}
_BY_NAME["bool_"] = bool_


def _unsupported(what) -> TypeError:
    names = ", ".join(d.name for d in all_dtypes)
    return TypeError(f"dtype {what} is not supported by frame (supported: {names}); "
                     f"convert it first, e.g. with .astype(np.float32)")


def from_numpy(np_dtype) -> DType:
    """The frame dtype for a NumPy dtype; ``TypeError`` for unsupported ones."""
    d = _BY_NP.get(np_dtype)
    if d is not None:
        return d
    try:
        d = _BY_NP.get(np.dtype(np_dtype))
    except TypeError:
        d = None
    if d is None:
        raise _unsupported(np_dtype)
    return d


def as_dtype(value) -> DType:
    """Accept a DType, a name (``"float32"``), a NumPy dtype or a scalar type."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        d = _BY_NAME.get(value)
        if d is not None:
            return d
    if value is float:
        return float32
    if value is int:
        return int64
    if value is bool:
        return bool_
    return from_numpy(value)


def result_type(*dtypes: DType) -> DType:
    """NumPy promotion of strongly typed operands."""
    return from_numpy(np.result_type(*(d.np for d in dtypes)))


def weak_scalar_dtype(tensor_dtype: DType, scalar) -> DType:
    """The dtype a Python scalar takes when combined with a tensor (NEP 50).

    ``float32 tensor * 2.5`` stays float32; ``int32 tensor + 2.5`` becomes
    float64, exactly as NumPy 2 does.
    """
    return from_numpy(np.result_type(tensor_dtype.np, scalar))
