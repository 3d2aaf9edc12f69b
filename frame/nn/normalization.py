"""Batch normalisation: ``F.batch_norm`` and the ``BatchNorm1d`` / ``BatchNorm2d``
modules, as PyTorch's.

In training mode the input is normalised by its batch's mean and biased
variance over every dim but the channel dim (1), and the running statistics
are updated in place with the batch's mean and *unbiased* variance
(``running = (1 - momentum) * running + momentum * batch``); in eval mode the
running statistics normalise.  The arithmetic is composed of frame ops, so
autograd differentiates it like any other code.

``batch_norm`` lives here and not in ``functional.py`` on purpose: capture runs
the functions of ``frame.nn.functional`` for real on its meta arrays (pure
functions of their tensors), where an in-place write would be lost.  A function
of this module is inlined like user code instead, so the running-statistic
updates are in-place writes on the module's buffers that capture replays after
the graph, as it replays an optimizer step's parameter updates
(docs/capture.md, "Training step").
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..autograd.tape import no_grad
from ..dtypes import DType
from ..errors import FrameTypeError, FrameValueError
from ..functions import mean, rsqrt, sum
from ..tensor import Tensor
from .module import Module, Parameter

__all__ = ["batch_norm", "BatchNorm1d", "BatchNorm2d"]


def batch_norm(x, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum=0.1, eps: float = 1e-5):
    """Batch normalisation of ``x [N, C, ...]`` per channel, PyTorch's ``F.batch_norm``.

    ``training=True``: normalise by the batch's statistics over every dim but
    dim 1 and, when ``running_mean``/``running_var`` (Tensors ``[C]``) are given,
    update them in place with ``momentum`` (a number, or a 0-d tensor as
    ``BatchNorm``'s cumulative average passes).  ``training=False``: normalise by
    the running statistics.  ``weight``/``bias`` ``[C]`` scale and shift.

    >>> x = frame.tensor([[1.0], [3.0]])
    >>> F.batch_norm(x, None, None, training=True).tolist()  # doctest: +ELLIPSIS
    [[-0.99999...], [0.99999...]]
    """
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise FrameValueError(f"batch_norm: expected an input [N, C, ...] of at least 2 "
                              f"dimensions, got shape {list(shape)}")
    channels = shape[1]
    per_channel = math.prod(shape) // channels if channels else 0
    if training and per_channel <= 1:
        raise FrameValueError(f"Expected more than 1 value per channel when training, got "
                              f"input size {list(shape)}")
    _check_tensor("input", x, x, None)
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None:
            _check_tensor(name, t, x, channels)
    if not training and (running_mean is None or running_var is None):
        raise FrameValueError("batch_norm: running_mean and running_var must be given in "
                              "evaluation mode (training=False)")
    if (running_mean is None) != (running_var is None):
        raise FrameValueError("batch_norm: give both running_mean and running_var, or neither")
    if not isinstance(momentum, (numbers.Real, Tensor)) or isinstance(momentum, bool):
        raise FrameTypeError(f"batch_norm: momentum must be a number or a 0-d tensor, "
                             f"got {momentum!r}")
    stats_shape = (1, channels) + (1,) * (len(shape) - 2)
    if training:
        axes = (0,) + tuple(range(2, len(shape)))
        batch_mean = mean(x, axis=axes, keepdims=True)
        centered = x - batch_mean
        squares = sum(centered * centered, axis=axes, keepdims=True)
        out = centered * rsqrt(squares / per_channel + eps)
        if running_mean is not None:
            _update_running_stats(running_mean, running_var, batch_mean, squares, per_channel,
                                  momentum)
    else:
        centered = x - running_mean.reshape(stats_shape)
        out = centered * rsqrt(running_var.reshape(stats_shape) + eps)
    if weight is not None:
        out = out * weight.reshape(stats_shape)
    if bias is not None:
        out = out + bias.reshape(stats_shape)
    return out


def _check_tensor(name: str, t, x, channels: int | None) -> None:
    """PyTorch's argument errors: sizes of ``[C]``, and one floating dtype for all."""
    if channels is not None:
        if not isinstance(t, Tensor):
            raise FrameTypeError(f"batch_norm: {name} must be a frame Tensor, got "
                                 f"{type(t).__name__}")
        if t.ndim != 1 or t.shape[0] != channels:
            raise FrameValueError(f"batch_norm: {name} should contain {channels} elements not "
                                  f"{math.prod(t.shape)}")
    dtype = _np_dtype(t)
    if dtype.kind != "f":
        raise FrameTypeError(f"batch_norm: {name} must be a floating-point tensor, got {dtype}")
    x_dtype = _np_dtype(x)
    if dtype != x_dtype:
        raise FrameTypeError(f"batch_norm: mixed dtype: all inputs must share the same dtype, "
                             f"got input {x_dtype} and {name} {dtype}")


def _np_dtype(t) -> np.dtype:
    """The NumPy dtype of a Tensor or an ndarray."""
    dtype = t.dtype
    return dtype.np if isinstance(dtype, DType) else np.dtype(dtype)


def _update_running_stats(running_mean: Tensor, running_var: Tensor, batch_mean, squares,
                          count: int, momentum) -> None:
    """``running = (1 - momentum) * running + momentum * batch`` in place, with the
    batch's unbiased variance (PyTorch's); outside autograd, as PyTorch's kernel."""
    channels = running_mean.shape[0]
    if isinstance(momentum, Tensor):
        momentum = momentum.astype(running_mean.dtype)
    with no_grad():
        running_mean *= 1.0 - momentum
        running_mean += batch_mean.reshape((channels,)) * momentum
        running_var *= 1.0 - momentum
        running_var += (squares.reshape((channels,)) / (count - 1)) * momentum


class _BatchNorm(Module):
    """Shared by BatchNorm1d and BatchNorm2d: parameters ``weight`` (ones) and
    ``bias`` (zeros) when ``affine``; buffers ``running_mean`` (zeros),
    ``running_var`` (ones) and ``num_batches_tracked`` (an int64 0-d tensor)
    when ``track_running_stats``.  ``momentum=None`` makes the running
    statistics a cumulative average (momentum ``1 / num_batches_tracked``)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True):
        super().__init__()
        if isinstance(num_features, bool) or not isinstance(num_features, numbers.Integral) \
                or num_features <= 0:
            raise FrameValueError(f"{type(self).__name__}: num_features must be a positive "
                                  f"int, got {num_features!r}")
        self.num_features = int(num_features)
        self.eps = eps
        self.momentum = momentum
        self.affine = bool(affine)
        self.track_running_stats = bool(track_running_stats)
        if self.affine:
            self.weight = Parameter(np.ones(self.num_features, np.float32))
            self.bias = Parameter(np.zeros(self.num_features, np.float32))
        else:
            self.weight = None
            self.bias = None
        if self.track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(self.num_features, np.float32)))
            self.register_buffer("running_var", Tensor(np.ones(self.num_features, np.float32)))
            self.register_buffer("num_batches_tracked", Tensor(np.zeros((), np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batch tracked (in place)."""
        if self.track_running_stats:
            self.running_mean.numpy()[...] = 0
            self.running_var.numpy()[...] = 1
            self.num_batches_tracked.numpy()[...] = 0

    def _check_input_dim(self, x) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, x):
        self._check_input_dim(x)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:   # a tensor, not float(): no value read in a jitted step
                factor = 1.0 / self.num_batches_tracked
        batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return batch_norm(x, self.running_mean if track else None,
                          self.running_var if track else None, self.weight, self.bias,
                          batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``[N, C]`` or ``[N, C, L]`` input over each channel.

    >>> bn = frame.nn.BatchNorm1d(3)
    >>> bn(frame.randn(8, 3)).shape
    (8, 3)
    >>> bn.num_batches_tracked.item()
    1
    """

    def _check_input_dim(self, x) -> None:
        if x.ndim not in (2, 3):
            raise FrameValueError(f"expected 2D or 3D input (got {x.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``[N, C, H, W]`` input over each channel."""

    def _check_input_dim(self, x) -> None:
        if x.ndim != 4:
            raise FrameValueError(f"expected 4D input (got {x.ndim}D input)")
