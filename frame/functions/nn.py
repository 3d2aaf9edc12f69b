"""User-facing nn functions bound as ``frame.<name>`` and Tensor methods:
``frame.softmax`` and ``frame.log_softmax``.  The rest of the nn surface lives
in ``frame.nn.functional``.
"""
from __future__ import annotations

from ..ops.common import normalize_axis
from ..errors import FrameTypeError
from ._core import apply1, as_array, bind_schema, schema_attrs

__all__ = ["softmax", "log_softmax"]
METHODS = list(__all__)


class _DefaultAxis(int):
    """The softmax family's default axis, -1, told apart from an ``axis=-1`` the
    caller gave (so that giving both ``axis`` and PyTorch's ``dim`` is an error)."""

    def __repr__(self) -> str:
        return "-1"


DEFAULT_AXIS = _DefaultAxis(-1)


def axis_or_dim(op: str, axis, dim):
    """``dim=`` is accepted as PyTorch's name for ``axis``; not both."""
    if dim is None:
        return int(axis) if axis is DEFAULT_AXIS else axis
    if axis is not DEFAULT_AXIS:
        raise FrameTypeError(f"{op}() got both 'axis' and 'dim' (PyTorch's name for it); "
                             f"give one")
    return dim


def _softmax_like(op: str, x, axis: int):
    arr = as_array(x)
    # the op's 'axis' attr is canonical (non-negative): normalise -1 here
    axis = normalize_axis(op, schema_attrs(op, axis=axis)["axis"], arr.ndim)
    return apply1(op, (arr,), schema_attrs(op, axis=axis))


@bind_schema("softmax")
def softmax(x, axis: int = DEFAULT_AXIS, *, dim: int | None = None):
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably (max subtracted);
    ``dim`` is PyTorch's name for ``axis`` (``F.softmax(x, dim=1)``).

    >>> frame.softmax(frame.tensor([1.0, 1.0])).tolist()
    [0.5, 0.5]
    """
    return _softmax_like("softmax", x, axis_or_dim("softmax", axis, dim))


@bind_schema("log_softmax")
def log_softmax(x, axis: int = DEFAULT_AXIS, *, dim: int | None = None):
    """``log(softmax(x, axis))`` without the cancellation of taking log of a softmax
    (``dim``: as ``softmax``'s).

    >>> frame.log_softmax(frame.tensor([0.0, 0.0])).tolist()  # doctest: +ELLIPSIS
    [-0.693..., -0.693...]
    """
    return _softmax_like("log_softmax", x, axis_or_dim("log_softmax", axis, dim))
