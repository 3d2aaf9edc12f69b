"""frame.nn.init: PyTorch's parameter initialisers.

Each ``*_`` function fills a tensor in place with values drawn from frame's
generator (``frame.manual_seed`` makes them reproducible) and returns it.  The
fill is not recorded by autograd (PyTorch runs its initialisers under
``no_grad``): it is a plain write that bumps the tensor's version, so it works
on parameters (leaves that require grad).  The formulas (gains, fans, bounds)
are PyTorch's documented ones.

    >>> w = frame.nn.Parameter(frame.zeros((4, 3)))
    >>> frame.nn.init.xavier_uniform_(w) is w
    True
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..autograd.tape import bump_version
from ..errors import FrameTypeError, FrameValueError
from ..functions.random import _lock, generator
from ..tensor import Tensor

__all__ = ["calculate_gain", "uniform_", "normal_", "zeros_", "ones_", "constant_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _fill(tensor: Tensor, values) -> Tensor:
    if not isinstance(tensor, Tensor):
        raise FrameTypeError(f"nn.init: expected a Tensor, got {type(tensor).__name__}")
    with np.errstate(all="ignore"):
        np.copyto(tensor._data, np.asarray(values).astype(tensor._data.dtype, copy=False),
                  casting="unsafe")
    bump_version(tensor)
    return tensor


def _float(name: str, tensor: Tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise FrameTypeError(f"nn.init.{name}: expected a Tensor, got {type(tensor).__name__}")
    if tensor._data.dtype.kind != "f":
        raise FrameTypeError(f"nn.init.{name}: random values need a floating tensor, got "
                             f"{tensor.dtype.name}")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table): 1 for linear
    layers, convolutions and sigmoid, 5/3 for tanh, sqrt(2) for relu,
    sqrt(2 / (1 + slope**2)) for leaky_relu (slope ``param``, default 0.01),
    3/4 for selu."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = float(param)
        else:
            raise FrameValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise FrameValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _fans(name: str, tensor: Tensor) -> tuple[int, int]:
    shape = tensor.shape
    if len(shape) < 2:
        raise FrameValueError(f"nn.init.{name}: fan in and fan out cannot be computed for a "
                              f"tensor with fewer than 2 dimensions (shape {list(shape)})")
    receptive = int(np.prod(shape[2:], dtype=np.int64)) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples of U(a, b)."""
    _float("uniform_", tensor)
    with _lock:
        values = generator().uniform(a, b, size=tensor.shape)
    return _fill(tensor, values)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples of N(mean, std**2)."""
    _float("normal_", tensor)
    with _lock:
        values = generator().normal(mean, std, size=tensor.shape)
    return _fill(tensor, values)


def constant_(tensor: Tensor, val) -> Tensor:
    """Fill with ``val``."""
    return _fill(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    return _fill(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    return _fill(tensor, 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-a, a), ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans("xavier_uniform_", tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std**2), ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _fans("xavier_normal_", tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def _kaiming_std(name: str, tensor: Tensor, a, mode: str, nonlinearity: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise FrameValueError(f"nn.init.{name}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(name, tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He uniform: U(-bound, bound), ``bound = gain * sqrt(3 / fan)``."""
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He normal: N(0, std**2), ``std = gain / sqrt(fan)``."""
    return normal_(tensor, 0.0, _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity))
