"""frame.nn.functional: the PyTorch-style functional nn API.

    import frame.nn.functional as F
    y = F.relu(F.conv2d(x, w, b, stride=1, padding=1))
    loss = F.cross_entropy(logits, labels)

Every function runs frame ops through the eager launch path (or capture, inside
a jitted function); none does arithmetic on tensor data itself.  Argument forms
follow PyTorch: strides, dilations and kernels are an int or an (h, w) pair;
padding is an int, an (h, w) pair, four ints (top, bottom, left, right), or for
conv2d ``"valid"`` / ``"same"``.  The ops store padding as four ints.
"""
from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np

from ..functions._core import apply1, as_array, bind_schema, schema_attrs
from ..functions.elementwise import gelu, relu, sigmoid, tanh
from ..functions.nn import log_softmax, softmax
from ..errors import FrameTypeError, FrameValueError
from ..functions import (abs, add, arange, exp, full, log, matmul, maximum, mean, minimum, mul, neg,
                         sub, sum, transpose, where)
from ..functions.random import draw
from .normalization import batch_norm  # (inlined by capture: it writes the running statistics)

__all__ = ["relu", "gelu", "sigmoid", "tanh", "leaky_relu", "silu", "softplus", "softmax",
           "log_softmax", "linear", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "binary_cross_entropy_with_logits", "conv2d", "max_pool2d", "avg_pool2d", "layer_norm",
           "batch_norm", "embedding", "dropout"]

IntOrPair = Any  # an int or a sequence of two ints


def _is_int(v: Any) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, bool)


def _pair(op: str, name: str, value: IntOrPair) -> tuple[int, int]:
    if _is_int(value):
        return int(value), int(value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_is_int(v) for v in value):
        return int(value[0]), int(value[1])
    raise FrameTypeError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")


def _padding4(op: str, value: Any) -> tuple[int, int, int, int]:
    """int -> all sides; (h, w) -> (h, h, w, w); four ints are (top, bottom, left, right)."""
    if isinstance(value, (tuple, list)) and len(value) == 4 and all(_is_int(v) for v in value):
        top, bottom, left, right = (int(v) for v in value)
        return top, bottom, left, right
    try:
        ph, pw = _pair(op, "padding", value)
    except FrameTypeError:
        raise FrameTypeError(f"{op}: padding must be an int, an (h, w) pair or four ints "
                             f"(top, bottom, left, right), got {value!r}") from None
    return ph, ph, pw, pw


def _same_padding(op: str, kernel: tuple[int, int], stride: tuple[int, int],
                  dilation: tuple[int, int]) -> tuple[int, int, int, int]:
    """Padding that keeps H and W (stride 1); an odd total puts the extra row/column
    at the bottom/right, as PyTorch does."""
    if stride != (1, 1):
        raise FrameValueError(f"{op}: padding='same' needs stride 1, got stride {stride}")
    total_h, total_w = dilation[0] * (kernel[0] - 1), dilation[1] * (kernel[1] - 1)
    return total_h // 2, total_h - total_h // 2, total_w // 2, total_w - total_w // 2


def _check_float_arg(op: str, arr: np.ndarray, what: str) -> None:
    if arr.dtype.kind != "f":
        raise FrameTypeError(f"{op}: {what} must be a floating-point tensor, got {arr.dtype}")


# --------------------------------------------------------------------------- linear

def linear(x, weight, bias=None):
    """``x @ weight.T + bias`` with weight ``[out_features, in_features]`` (PyTorch's layout).

    >>> F.linear(frame.ones((2, 3)), frame.ones((4, 3))).shape
    (2, 4)
    """
    xa, wa = as_array(x), as_array(weight)
    if wa.ndim != 2:
        raise FrameValueError(f"linear: weight must be 2-D [out_features, in_features], got "
                              f"shape {list(wa.shape)}")
    if xa.ndim < 1 or xa.shape[-1] != wa.shape[1]:
        raise FrameValueError(f"linear: input's last dimension must be in_features="
                              f"{wa.shape[1]} (weight shape {list(wa.shape)}), got input shape "
                              f"{list(xa.shape)}")
    out = matmul(x, transpose(weight))
    if bias is None:
        return out
    ba = as_array(bias)
    if ba.shape != (wa.shape[0],):
        raise FrameValueError(f"linear: bias must have shape [{wa.shape[0]}] (out_features), "
                              f"got {list(ba.shape)}")
    return add(out, bias)


# --------------------------------------------------------------------------- activations

def leaky_relu(x, negative_slope: float = 0.01):
    """``x`` where positive, ``negative_slope * x`` elsewhere (PyTorch's default slope)."""
    _check_float_arg("leaky_relu", as_array(x), "the input")
    return where(x >= 0, x, mul(x, float(negative_slope)))


def silu(x):
    """``x * sigmoid(x)`` (swish)."""
    _check_float_arg("silu", as_array(x), "the input")
    return mul(x, sigmoid(x))


def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x >
    threshold`` (PyTorch's form; the exponential is taken of the clipped value,
    so the unused branch never overflows)."""
    _check_float_arg("softplus", as_array(x), "the input")
    if not beta > 0:
        raise FrameValueError(f"softplus: beta must be positive, got {beta!r}")
    bx = mul(x, float(beta))
    soft = mul(np.log1p(exp(minimum(bx, float(threshold)))), 1.0 / float(beta))
    return where(bx > float(threshold), x, soft)


# --------------------------------------------------------------------------- losses

def _reduce(op: str, loss, reduction: str):
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    if reduction == "none":
        return loss
    raise FrameValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


@bind_schema("cross_entropy")
def cross_entropy(logits, int_labels, reduction: str = "mean", *, weight=None,
                  ignore_index: int | None = None, label_smoothing: float = 0.0):
    """Softmax cross-entropy of ``logits [N, C]`` against class indices ``int_labels [N]``
    (any integer dtype, in ``[0, C)``); ``reduction`` is ``"mean"``, ``"sum"`` or ``"none"``.

    PyTorch's options: ``weight`` (a float tensor ``[C]``, each sample's loss
    weighed by its class's weight, a weighted mean), ``ignore_index`` (samples
    with that label count for nothing; a mean over no sample is NaN) and
    ``label_smoothing`` (``(1 - e) * nll + e / C * (the mean over classes)``).
    One difference: ``ignore_index`` defaults to None, not PyTorch's -100, so a
    label out of range is an error unless it is the one asked to be ignored.

    >>> F.cross_entropy(frame.zeros((2, 4)), frame.tensor([0, 3])).item()  # log(4)
    1.3862943649291992
    """
    if weight is None and ignore_index is None and not label_smoothing:
        arrays = (as_array(logits), as_array(int_labels))
        return apply1("cross_entropy", arrays, schema_attrs("cross_entropy", reduction=reduction))
    return _weighted_cross_entropy(logits, int_labels, reduction, weight, ignore_index,
                                   label_smoothing)


def _weighted_cross_entropy(logits, labels, reduction, weight, ignore_index, smoothing):
    """PyTorch's cross entropy with class weights, an ignored label and label
    smoothing, composed of frame ops (aten's ``cross_entropy_loss_label_smoothing``)."""
    la, ya = as_array(logits), as_array(labels)
    _check_float_arg("cross_entropy", la, "logits")
    if la.ndim != 2 or ya.shape != la.shape[:1] or ya.dtype.kind not in "iu":
        raise FrameValueError(f"cross_entropy: expected logits [N, C] and integer labels [N], got "
                              f"{list(la.shape)} and {ya.dtype}{list(ya.shape)}")
    if reduction not in ("mean", "sum", "none"):
        raise FrameValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', "
                              f"got {reduction!r}")
    if not isinstance(smoothing, (int, float, np.floating)) or not 0.0 <= smoothing <= 1.0:
        raise FrameValueError(f"cross_entropy: label_smoothing must lie in [0, 1], "
                              f"got {smoothing!r}")
    if ignore_index is not None and not _is_int(ignore_index):
        raise FrameTypeError(f"cross_entropy: ignore_index must be an int, got {ignore_index!r}")
    n, classes = la.shape
    if weight is not None:
        wa = as_array(weight)
        if wa.shape != (classes,) or wa.dtype.kind != "f":
            raise FrameValueError(f"cross_entropy: weight must be a float tensor of shape "
                                  f"[{classes}], got {wa.dtype}{list(wa.shape)}")
    logp = log_softmax(logits, axis=-1)
    if ignore_index is None:
        safe, keep = labels, None
    else:
        keep = labels != int(ignore_index)
        safe = where(keep, labels, 0)
    picked = logp[arange(n), safe]
    if weight is not None:
        w = weight[safe]
        w = where(keep, w, 0.0) if keep is not None else w
    elif keep is not None:
        w = where(keep, 1.0, 0.0).astype(la.dtype)
    else:
        w = None
    nll = neg(picked) if w is None else neg(picked) * w
    if smoothing:
        smooth = neg(sum(logp * weight, axis=-1) if weight is not None else sum(logp, axis=-1))
        if keep is not None:
            smooth = where(keep, smooth, 0.0)
    if reduction == "none":
        out = nll
        if smoothing:
            out = nll * (1.0 - smoothing) + smooth * (smoothing / classes)
        return out
    if reduction == "sum":
        total = sum(nll)
        if smoothing:
            total = total * (1.0 - smoothing) + sum(smooth) * (smoothing / classes)
        return total
    denominator = sum(w) if w is not None else n
    loss = sum(nll) / denominator
    if smoothing:
        loss = loss * (1.0 - smoothing) + (sum(smooth) / denominator) * (smoothing / classes)
    return loss


def nll_loss(log_probs, int_labels, reduction: str = "mean"):
    """Negative log-likelihood of ``log_probs [N, C]`` (log-probabilities, e.g.
    ``log_softmax``'s) at class indices ``int_labels [N]``: ``cross_entropy`` is
    ``nll_loss(log_softmax(logits), labels)``.  A label outside ``[0, C)`` is an
    index error."""
    la, ya = as_array(log_probs), as_array(int_labels)
    _check_float_arg("nll_loss", la, "log_probs")
    if la.ndim != 2 or ya.shape != la.shape[:1] or ya.dtype.kind not in "iu":
        raise FrameValueError(f"nll_loss: expected log_probs [N, C] and integer labels [N], got "
                              f"{list(la.shape)} and {ya.dtype}{list(ya.shape)}")
    picked = log_probs[arange(la.shape[0]), int_labels]
    return _reduce("nll_loss", neg(picked), reduction)


def l1_loss(a, b, reduction: str = "mean"):
    """Mean absolute error between two same-shape float tensors."""
    aa, ba = as_array(a), as_array(b)
    if aa.shape != ba.shape:
        raise FrameValueError(f"l1_loss: shapes must match, got {list(aa.shape)} and {list(ba.shape)}")
    _check_float_arg("l1_loss", aa, "the input")
    return _reduce("l1_loss", abs(sub(a, b)), reduction)


def binary_cross_entropy_with_logits(logits, targets, reduction: str = "mean", pos_weight=None):
    """Sigmoid cross-entropy of ``logits`` against ``targets`` in ``[0, 1]`` (same
    shape), in the stable form ``max(x, 0) - x * t + log(1 + exp(-|x|))``;
    ``pos_weight`` weighs the positive term as PyTorch's does."""
    xa, ta = as_array(logits), as_array(targets)
    if xa.shape != ta.shape:
        raise FrameValueError(f"binary_cross_entropy_with_logits: shapes must match, got "
                              f"{list(xa.shape)} and {list(ta.shape)}")
    _check_float_arg("binary_cross_entropy_with_logits", xa, "logits")
    tail = np.log1p(exp(neg(abs(logits))))                  # log(1 + e^-|x|)
    if pos_weight is None:
        loss = add(sub(maximum(logits, 0.0), mul(logits, targets)), tail)
    else:   # (1 - t) x + w log(1 + e^-x), w = 1 + (pos_weight - 1) t
        weight = add(mul(targets, sub(pos_weight, 1.0)), 1.0)
        loss = add(mul(sub(1.0, targets), logits), mul(weight, add(maximum(neg(logits), 0.0), tail)))
    return _reduce("binary_cross_entropy_with_logits", loss, reduction)


@bind_schema("mse_loss")
def mse_loss(a, b, reduction: str = "mean"):
    """Mean squared error between two same-shape float tensors (``reduction`` as above)."""
    return apply1("mse_loss", (as_array(a), as_array(b)),
                  schema_attrs("mse_loss", reduction=reduction))


# --------------------------------------------------------------------------- convolution, pooling

@bind_schema("conv2d")
def conv2d(x, w, b=None, stride: IntOrPair = 1, padding: Any = 0, dilation: IntOrPair = 1,
           groups: int = 1):
    """2-D convolution (cross-correlation, as in PyTorch): x ``[N, C, H, W]``, w
    ``[O, C / groups, kh, kw]``, optional b ``[O]``.

    >>> F.conv2d(frame.ones((1, 1, 4, 4)), frame.ones((2, 1, 3, 3)), padding=1).shape
    (1, 2, 4, 4)
    """
    arrays = [as_array(x), as_array(w)]
    if b is not None:
        arrays.append(as_array(b))
    stride2 = _pair("conv2d", "stride", stride)
    dilation2 = _pair("conv2d", "dilation", dilation)
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if arrays[1].ndim != 4:
                raise FrameValueError(f"conv2d: weight must be 4-D [O, C/groups, kh, kw], got "
                                      f"shape {list(arrays[1].shape)}")
            pads = _same_padding("conv2d", arrays[1].shape[2:], stride2, dilation2)
        else:
            raise FrameValueError(f"conv2d: padding must be 'valid', 'same' or ints, got {padding!r}")
    else:
        pads = _padding4("conv2d", padding)
    if not _is_int(groups):
        raise FrameTypeError(f"conv2d: groups must be an int, got {groups!r}")
    attrs = schema_attrs("conv2d", stride=stride2, padding=pads, dilation=dilation2,
                         groups=int(groups))
    return apply1("conv2d", arrays, attrs)


def _pool(op: str, x, k: IntOrPair, stride: IntOrPair | None, padding: Any):
    kernel = _pair(op, "kernel size", k)
    stride2 = kernel if stride is None else _pair(op, "stride", stride)
    attrs = schema_attrs(op, kernel=kernel, stride=stride2, padding=_padding4(op, padding))
    return apply1(op, (as_array(x),), attrs)


@bind_schema("max_pool2d")
def max_pool2d(x, k: IntOrPair, stride: IntOrPair | None = None, padding: Any = 0):
    """Max over ``k`` windows of ``x [N, C, H, W]``; stride defaults to ``k``; padding
    counts as ``-inf`` (at most half the kernel per side); floor mode."""
    return _pool("max_pool2d", x, k, stride, padding)


@bind_schema("avg_pool2d")
def avg_pool2d(x, k: IntOrPair, stride: IntOrPair | None = None, padding: Any = 0):
    """Mean over ``k`` windows; stride defaults to ``k``; zero padding is counted in
    the average (PyTorch's default ``count_include_pad=True``); floor mode."""
    return _pool("avg_pool2d", x, k, stride, padding)


# --------------------------------------------------------------------------- normalisation, embedding

@bind_schema("layer_norm")
def layer_norm(x, shape: int | Sequence[int], w=None, b=None, eps: float = 1e-5):
    """Normalise ``x`` over its trailing dims ``shape`` (PyTorch's ``normalized_shape``),
    then scale by ``w`` and shift by ``b`` (both shaped ``shape``, optional).

    >>> F.layer_norm(frame.tensor([[1.0, 3.0]]), (2,)).tolist()  # doctest: +ELLIPSIS
    [[-0.99999..., 0.99999...]]
    """
    xa = as_array(x)
    norm_shape = (int(shape),) if _is_int(shape) else tuple(int(d) for d in shape)
    k = len(norm_shape)
    if k == 0 or k > xa.ndim or tuple(xa.shape[xa.ndim - k:]) != norm_shape:
        raise FrameValueError(f"layer_norm: normalized shape {list(norm_shape)} must be a "
                              f"non-empty suffix of the input shape {list(xa.shape)}")
    arrays = [xa]
    if w is None and b is not None:
        w = full(norm_shape, 1.0, dtype=xa.dtype)  # the op takes bias only after a weight
    if w is not None:
        arrays.append(as_array(w))
    if b is not None:
        arrays.append(as_array(b))
    attrs = schema_attrs("layer_norm", axis=xa.ndim - k, eps=eps)
    return apply1("layer_norm", arrays, attrs)


@bind_schema("embedding")
def embedding(indices, weight):
    """Rows of ``weight [V, D]`` picked by an integer tensor of any shape -> ``[..., D]``;
    indices outside ``[0, V)`` are an error."""
    return apply1("embedding", (as_array(indices), as_array(weight)), {})


# --------------------------------------------------------------------------- dropout

def dropout(x, p: float = 0.5, training: bool = True):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Returns ``x`` itself when ``training`` is false or ``p == 0``.  The mask comes
    from frame's generator, so ``frame.manual_seed`` makes it reproducible.
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p < 1.0:
        raise FrameValueError(f"dropout: p must be a probability in [0, 1), got {p!r}")
    if not training or p == 0:
        return x
    xa = as_array(x)
    _check_float_arg("dropout", xa, "the input")
    # uniform draws in float64 whatever x's dtype, so keep-probability is exactly 1 - p;
    # the mask is drawn on the host (a graph input under capture: random.draw)
    keep = draw("keep", tuple(xa.shape), "bool", float(p))
    return where(keep, mul(x, 1.0 / (1.0 - float(p))), 0.0)
