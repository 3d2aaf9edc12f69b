"""FFT ops along the last axis: rfft (real -> complex) and irfft (complex -> real).

Dtypes are NumPy 2's ``np.fft``: rfft of float16/float32 gives complex64, of
float64 (and of integers and bool, which NumPy converts to float64) complex128;
irfft of complex64 gives float32, of complex128 float64.  irfft takes complex
input only.  The attr ``n`` is the transform length; ``0`` means the default
(rfft: the input length; irfft: ``2 * (m - 1)`` for ``m`` input bins).  As in
NumPy, a shorter ``n`` crops and a longer one zero-pads the input.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import (DType, bool_, complex64, complex128, float16, float32, float64, int8, int16,
                      int32, int64, uint8, uint16, uint32, uint64)
from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["RFFT_DTYPES", "IRFFT_DTYPES"]

RFFT_DTYPES: dict[DType, DType] = {
    float16: complex64, float32: complex64, float64: complex128,
    int32: complex128, int64: complex128, bool_: complex128, int8: complex128, int16: complex128,
    uint8: complex128, uint16: complex128, uint32: complex128, uint64: complex128,
}
IRFFT_DTYPES: dict[DType, DType] = {complex64: float32, complex128: float64}


def _check_input(op: str, t: TensorType, table: dict[DType, DType], want: str) -> None:
    if t.dtype not in table:
        raise FrameTypeError(f"{op}: expected {want} input, got {t}")
    if t.rank == 0:
        raise FrameValueError(f"{op}: transforms the last axis; a 0-d tensor has none")
    if t.shape[-1] == 0:
        raise FrameValueError(f"{op}: the last axis of {t} is empty")


def _check_n(op: str, n: int) -> None:
    if n < 0:
        raise FrameValueError(f"{op}: n must be positive (or 0 for the default), got {n}")


def _rfft_length(t: TensorType, attrs) -> int:
    return attrs["n"] or t.shape[-1]


def _irfft_length(t: TensorType, attrs) -> int:
    return attrs["n"] or 2 * (t.shape[-1] - 1)


def _rfft_infer(types, attrs):
    (t,) = types
    _check_input("rfft", t, RFFT_DTYPES, "a real (float, int or bool)")
    _check_n("rfft", attrs["n"])
    n = _rfft_length(t, attrs)
    return [TensorType(RFFT_DTYPES[t.dtype], t.shape[:-1] + (n // 2 + 1,))]


def _rfft_kernel(ins, attrs):
    x = ins[0]
    n = attrs["n"] or x.shape[-1]
    return (np.fft.rfft(x, n=n, axis=-1),)


def _irfft_infer(types, attrs):
    (t,) = types
    _check_input("irfft", t, IRFFT_DTYPES, "a complex64 or complex128")
    _check_n("irfft", attrs["n"])
    n = _irfft_length(t, attrs)
    if n < 1:
        raise FrameValueError(f"irfft: the default output length 2 * (m - 1) is 0 for {t}; "
                              f"give n explicitly")
    return [TensorType(IRFFT_DTYPES[t.dtype], t.shape[:-1] + (n,))]


def _irfft_kernel(ins, attrs):
    x = ins[0]
    n = attrs["n"] or 2 * (x.shape[-1] - 1)
    return (np.fft.irfft(x, n=n, axis=-1),)


register(OpSchema("rfft", 1, _rfft_infer, _rfft_kernel, attrs={"n": AttrSpec("int", 0)},
                  doc="numpy.fft.rfft(x, n, axis=-1): the n // 2 + 1 non-negative-frequency "
                      "terms of a real input's DFT."))
register(OpSchema("irfft", 1, _irfft_infer, _irfft_kernel, attrs={"n": AttrSpec("int", 0)},
                  doc="numpy.fft.irfft(x, n, axis=-1): the inverse of rfft, a real signal of "
                      "length n."))
