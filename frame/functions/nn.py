"""User-facing nn functions bound as ``frame.<name>`` and Tensor methods:
``frame.softmax`` and ``frame.log_softmax``.  The rest of the nn surface lives
in ``frame.nn.functional``.
"""
from __future__ import annotations

from ..ops.common import normalize_axis
from ._core import apply1, as_array, bind_schema, schema_attrs

__all__ = ["softmax", "log_softmax"]
METHODS = list(__all__)


def _softmax_like(op: str, x, axis: int):
    arr = as_array(x)
    # the op's 'axis' attr is canonical (non-negative): normalise -1 here
    axis = normalize_axis(op, schema_attrs(op, axis=axis)["axis"], arr.ndim)
    return apply1(op, (arr,), schema_attrs(op, axis=axis))


@bind_schema("softmax")
def softmax(x, axis: int = -1):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably (max subtracted).

    >>> frame.softmax(frame.tensor([1.0, 1.0])).tolist()
    [0.5, 0.5]
    """
    return _softmax_like("softmax", x, axis)


@bind_schema("log_softmax")
def log_softmax(x, axis: int = -1):
    """``log(softmax(x, axis))`` without the cancellation of taking log of a softmax.

    >>> frame.log_softmax(frame.tensor([0.0, 0.0])).tolist()  # doctest: +ELLIPSIS
    [-0.693..., -0.693...]
    """
    return _softmax_like("log_softmax", x, axis)
