"""frame.fft: ``rfft`` and ``irfft`` along the last axis, with NumPy 2's dtypes.

    >>> x = frame.tensor([1.0, 0.0, 0.0, 0.0])
    >>> frame.fft.rfft(x).tolist()
    [(1+0j), (1+0j), (1+0j)]
    >>> frame.fft.irfft(frame.fft.rfft(x), n=4).tolist()
    [1.0, 0.0, 0.0, 0.0]
"""
from __future__ import annotations

import numbers

from .functions._core import apply1, as_array, bind_schema, schema_attrs
from .errors import FrameTypeError, FrameValueError

__all__ = ["rfft", "irfft"]


def _length(op: str, n) -> int:
    """The op's ``n`` attr: None -> 0 (the op's default length)."""
    if n is None:
        return 0
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise FrameTypeError(f"{op}: n must be None or a positive int, got {n!r}")
    if n < 1:
        raise FrameValueError(f"{op}: n must be a positive number of points, got {n}")
    return int(n)


@bind_schema("rfft")
def rfft(x, n: int | None = None):
    """DFT of a real signal along the last axis: the ``n // 2 + 1`` non-negative
    frequency terms (``n`` defaults to the input length; shorter crops, longer
    zero-pads).  float32 gives complex64, float64 complex128, as ``np.fft.rfft``."""
    return apply1("rfft", (as_array(x),), schema_attrs("rfft", n=_length("rfft", n)))


@bind_schema("irfft")
def irfft(x, n: int | None = None):
    """Inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``
    for ``m`` input bins) from complex64 (-> float32) or complex128 (-> float64)."""
    return apply1("irfft", (as_array(x),), schema_attrs("irfft", n=_length("irfft", n)))
