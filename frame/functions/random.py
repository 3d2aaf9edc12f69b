"""Random tensors: ``frame.manual_seed``, ``frame.randn``, ``frame.rand``.

Random data is created on the host like ``frame.tensor`` data (a constructor,
not an op), from one process-wide NumPy Generator that ``manual_seed`` resets.
Every draw goes through ``draw`` and the op-handler stack
(``_core.OpLevel.draw``): eagerly it is made now (``host_draw``); under
capture the tracer makes it a graph input that the compiled entry draws with
``host_draws`` just before the graph runs, in program order, so a jitted
function consumes the generator exactly as the plain function does.
"""
from __future__ import annotations

import threading

import numpy as np

from ..dtypes import as_dtype, float32, from_numpy
from ..errors import FrameTypeError
from ..tensor import Tensor
from ._core import current_level

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


DRAW_METHODS = ("uniform", "normal", "keep")


def host_draw(method: str, shape: tuple[int, ...], dtype: str, param=None) -> np.ndarray:
    """One draw from the process-wide generator: ``uniform`` samples in [0, 1),
    ``normal`` standard normal samples, ``keep`` a bool mask that is true where
    a uniform float64 sample is at least ``param`` (dropout's keep mask)."""
    with _lock:
        if method == "uniform":
            return _generator.random(shape).astype(dtype)
        if method == "normal":
            return _generator.standard_normal(shape).astype(dtype)
        if method == "keep":
            return _generator.random(shape) >= param
    raise ValueError(f"unknown random draw {method!r}; expected one of {DRAW_METHODS}")


def host_draws(specs: tuple) -> tuple:
    """The draws ``specs`` (``(method, shape, dtype, param)`` each), in order:
    what a compiled entry runs before its graph."""
    return tuple(host_draw(*spec) for spec in specs)


def draw(method: str, shape: tuple[int, ...], dtype: str, param=None) -> np.ndarray:
    """A draw through the top level of the op-handler stack (see the module
    docstring)."""
    level_draw = current_level().draw
    if level_draw is None:
        return host_draw(method, shape, dtype, param)
    return level_draw(method, shape, dtype, param)


def _shape(shape) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(d) for d in shape)


def randn(*shape, dtype=float32, requires_grad: bool = False):
    """Standard normal samples of the given shape (``frame.randn(2, 3)``)."""
    dt = as_dtype(dtype)
    data = draw("normal", _shape(shape), dt.np.name)
    return Tensor._wrap(data).requires_grad_(requires_grad) if requires_grad else Tensor._wrap(data)


def rand(*shape, dtype=float32, requires_grad: bool = False):
    """Uniform samples in [0, 1) of the given shape."""
    dt = as_dtype(dtype)
    data = draw("uniform", _shape(shape), dt.np.name)
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
