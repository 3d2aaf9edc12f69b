"""Random tensors: ``frame.manual_seed``, ``frame.randn``, ``frame.rand``.

Random data is created on the host like ``frame.tensor`` data (a constructor,
not an op), from one process-wide NumPy Generator that ``manual_seed`` resets.
"""
from __future__ import annotations

import threading

import numpy as np

from ..dtypes import as_dtype, float32, from_numpy
from ..errors import FrameTypeError
from ..tensor import Tensor

__all__ = ["manual_seed", "randn", "rand", "rand_like", "randn_like"]
METHODS: list[str] = []

_lock = threading.Lock()
_generator = np.random.default_rng()


def generator() -> np.random.Generator:
    """The process-wide generator behind frame's random functions."""
    return _generator


def manual_seed(seed: int) -> None:
    """Make ``randn``/``rand`` (and dropout) reproducible.

    >>> frame.manual_seed(0); a = frame.randn(2)
    >>> frame.manual_seed(0); bool((a == frame.randn(2)).all() if hasattr(a, 'all') else True)
    True
    """
    global _generator
    with _lock:
        _generator = np.random.default_rng(int(seed))


def _shape(shape) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(d) for d in shape)


def randn(*shape, dtype=float32, requires_grad: bool = False):
    """Standard normal samples of the given shape (``frame.randn(2, 3)``)."""
    dt = as_dtype(dtype)
    with _lock:
        data = _generator.standard_normal(_shape(shape)).astype(dt.np)
    return Tensor._wrap(data).requires_grad_(requires_grad) if requires_grad else Tensor._wrap(data)


def rand(*shape, dtype=float32, requires_grad: bool = False):
    """Uniform samples in [0, 1) of the given shape."""
    dt = as_dtype(dtype)
    with _lock:
        data = _generator.random(_shape(shape)).astype(dt.np)
    return Tensor._wrap(data).requires_grad_(requires_grad) if requires_grad else Tensor._wrap(data)


def _like(x, dtype):
    arr = x._data if isinstance(x, Tensor) else np.asarray(x)
    dt = as_dtype(dtype) if dtype is not None else from_numpy(arr.dtype)
    if dt.kind != "f":
        raise FrameTypeError(f"random samples need a floating dtype, got {dt.name}")
    return arr.shape, dt


def rand_like(x, dtype=None, requires_grad: bool = False):
    """Uniform samples in [0, 1) with ``x``'s shape and (floating) dtype."""
    shape, dt = _like(x, dtype)
    return rand(*shape, dtype=dt, requires_grad=requires_grad) if shape else \
        rand((), dtype=dt, requires_grad=requires_grad)


def randn_like(x, dtype=None, requires_grad: bool = False):
    """Standard normal samples with ``x``'s shape and (floating) dtype."""
    shape, dt = _like(x, dtype)
    return randn(*shape, dtype=dt, requires_grad=requires_grad) if shape else \
        randn((), dtype=dt, requires_grad=requires_grad)
