"""Layers: Linear, Conv2d, ReLU, Sequential, LayerNorm.

Initialisation follows PyTorch's defaults (uniform in +-1/sqrt(fan_in) for
weights and biases), drawn from frame's generator (``frame.manual_seed``).
"""
from __future__ import annotations

import math

from ..functions.random import generator, _lock
from ..errors import FrameValueError
from . import functional as F
from .module import Module, Parameter

__all__ = ["Linear", "Conv2d", "ReLU", "Sequential", "LayerNorm"]


def _uniform(shape, bound: float) -> Parameter:
    import numpy as np
    with _lock:
        data = generator().uniform(-bound, bound, size=shape).astype(np.float32)
    return Parameter(data)


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight`` of shape [out, in]."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True):
        super().__init__()
        if in_features <= 0 or out_features <= 0:
            raise FrameValueError(f"Linear: sizes must be positive, got {in_features}, {out_features}")
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight = _uniform((out_features, in_features), bound)
        self.bias = _uniform((out_features,), bound) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution over NCHW input with OIHW weights."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True):
        super().__init__()
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        if in_channels % groups or out_channels % groups:
            raise FrameValueError(f"Conv2d: channels ({in_channels}, {out_channels}) must be "
                                  f"divisible by groups={groups}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (kh, kw)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        fan_in = in_channels // groups * kh * kw
        bound = 1.0 / math.sqrt(fan_in)
        self.weight = _uniform((out_channels, in_channels // groups, kh, kw), bound)
        self.bias = _uniform((out_channels,), bound) if bias else None

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}")


class ReLU(Module):
    def forward(self, x):
        return F.relu(x)


class Sequential(Module):
    """Modules applied in order."""

    def __init__(self, *layers: Module):
        super().__init__()
        for layer in layers:
            if not isinstance(layer, Module):
                raise FrameValueError(f"Sequential takes modules, got {type(layer).__name__}")
        self.layers = list(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def __getitem__(self, i: int) -> Module:
        return self.layers[i]

    def __len__(self) -> int:
        return len(self.layers)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with an affine map."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True):
        super().__init__()
        import numpy as np
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, np.float32))
            self.bias = Parameter(np.zeros(shape, np.float32))
        else:
            self.weight = None
            self.bias = None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"
