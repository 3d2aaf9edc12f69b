"""Neural-network ops: softmax, log_softmax, layer_norm, conv2d, max_pool2d,
avg_pool2d, cross_entropy, mse_loss, embedding.

Conventions shared by these ops:

- Attributes are canonical, as in ``shape.py``: a single ``axis`` is
  non-negative (the user-facing functions normalise ``-1``), and spatial
  padding is always four ints ``(top, bottom, left, right)`` -- the
  (before, after) pair of H, then of W, the same order as the ``pad`` op's
  ``pads``.  Strides, dilations and kernels are (h, w) pairs.
- Only floating inputs (embedding's weight excepted).  float16 is computed in
  float32 and rounded once at the end, by the reference kernels and by the
  decompositions alike: float16 sums overflow and ``eps=1e-5`` is subnormal
  in float16.
- Pooling is floor mode.  ``max_pool2d`` pads with ``-inf``; ``avg_pool2d``
  pads with zeros and always divides by ``kh * kw`` (PyTorch's default
  ``count_include_pad=True``).  Each side's padding is at most half the
  kernel (PyTorch's rule), so every window holds at least one real element.
- Reference kernels return fresh C-contiguous arrays, never input views.

``softmax``, ``log_softmax``, ``layer_norm``, ``cross_entropy`` and
``mse_loss`` are composites: each has a decomposition into primitives
(reductions, exp, log, rsqrt, ...) in the numerically stable form (the max is
subtracted before exponentiating).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..dtypes import DType, float16, float32
from ..errors import FrameAxisError, FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .common import require_dtype
from .registry import register
from .schema import REQUIRED, AttrSpec, OpSchema

__all__ = ["LOSS_REDUCTIONS", "conv2d_output_size", "pool2d_output_size",
           "softmax_cross_entropy"]

LOSS_REDUCTIONS = ("mean", "sum", "none")
_COMPOSITE = ("composite",)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _compute_np(dtype: np.dtype) -> np.dtype:
    """The dtype a kernel computes in: float16 is widened to float32."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _require_float(op: str, t: TensorType, what: str = "a floating-point") -> None:
    require_dtype(op, t, "f", what)


def _require_same_dtype(op: str, ref: TensorType, other: TensorType, what: str) -> None:
    if other.dtype is not ref.dtype:
        raise FrameTypeError(f"{op}: {what} must have the input's dtype {ref.dtype}, got {other}")


def _check_axis(op: str, axis: int, rank: int) -> None:
    """A canonical single axis: in range and non-negative (functions normalise -1)."""
    if rank == 0:
        raise FrameValueError(f"{op}: expected a tensor of rank >= 1, got a 0-d tensor")
    if -rank <= axis < 0:
        raise FrameAxisError(f"{op}: axis {axis} is negative; the 'axis' attribute is canonical "
                             f"(non-negative), the user-facing functions normalise it")
    if not 0 <= axis < rank:
        raise FrameAxisError(f"{op}: axis {axis} is out of bounds for a tensor of rank {rank}")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in LOSS_REDUCTIONS:
        raise FrameValueError(f"{op}: reduction must be one of {', '.join(LOSS_REDUCTIONS)}, "
                              f"got {reduction!r}")


def _reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    """Apply a loss reduction in the compute dtype (mean of nothing is nan, silently)."""
    if reduction == "none":
        return loss
    total = loss.sum()
    if reduction == "sum":
        return total
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / loss.dtype.type(loss.size)


# Decomposition helpers: the same float16 -> float32 widening as the kernels.

def _widen(b, v):
    return b.op("cast", v, dtype=float32) if v.type.dtype is float16 else v


def _narrow(b, v, dtype: DType):
    return b.op("cast", v, dtype=dtype) if v.type.dtype is not dtype else v


def _reduce_value(b, loss, reduction: str):
    if reduction == "none" or loss.type.rank == 0:
        return loss
    return b.op(reduction, loss, axes=tuple(range(loss.type.rank)), keepdims=False)


# --------------------------------------------------------------------------- softmax family

def _softmax_infer(name: str):
    def infer(types, attrs):
        (t,) = types
        _require_float(name, t)
        _check_axis(name, attrs["axis"], t.rank)
        return [t]
    return infer


def _shifted(x: np.ndarray, axis: int) -> np.ndarray:
    """x - max(x, axis) in the compute dtype: exp of it never overflows."""
    xc = x.astype(_compute_np(x.dtype), copy=False)
    return xc - xc.max(axis=axis, keepdims=True)


def _softmax_kernel(ins, attrs):
    x = ins[0]
    if x.size == 0:
        return (np.empty(x.shape, x.dtype),)
    e = np.exp(_shifted(x, attrs["axis"]))
    e /= e.sum(axis=attrs["axis"], keepdims=True)
    return (e.astype(x.dtype, copy=False),)


def _log_softmax_kernel(ins, attrs):
    x = ins[0]
    if x.size == 0:
        return (np.empty(x.shape, x.dtype),)
    z = _shifted(x, attrs["axis"])
    z -= np.log(np.exp(z).sum(axis=attrs["axis"], keepdims=True))
    return (z.astype(x.dtype, copy=False),)


def _shifted_value(b, x, axis: int):
    xc = _widen(b, x)
    return b.op("sub", xc, b.op("max", xc, axes=(axis,), keepdims=True))


def _softmax_decompose(b, inputs, attrs):
    (x,) = inputs
    e = b.op("exp", _shifted_value(b, x, attrs["axis"]))
    y = b.op("div", e, b.op("sum", e, axes=(attrs["axis"],), keepdims=True))
    return [_narrow(b, y, x.type.dtype)]


def _log_softmax_decompose(b, inputs, attrs):
    (x,) = inputs
    z = _shifted_value(b, x, attrs["axis"])
    lse = b.op("log", b.op("sum", b.op("exp", z), axes=(attrs["axis"],), keepdims=True))
    return [_narrow(b, b.op("sub", z, lse), x.type.dtype)]


register(OpSchema("softmax", 1, _softmax_infer("softmax"), _softmax_kernel,
                  attrs={"axis": AttrSpec("int", REQUIRED)}, traits=_COMPOSITE,
                  decompose=_softmax_decompose,
                  doc="exp(x - max) / sum(exp(x - max)) along 'axis'."))
register(OpSchema("log_softmax", 1, _softmax_infer("log_softmax"), _log_softmax_kernel,
                  attrs={"axis": AttrSpec("int", REQUIRED)}, traits=_COMPOSITE,
                  decompose=_log_softmax_decompose,
                  doc="(x - max) - log(sum(exp(x - max))) along 'axis'."))


# --------------------------------------------------------------------------- layer_norm

def _layer_norm_infer(types, attrs):
    x = types[0]
    _require_float("layer_norm", x)
    _check_axis("layer_norm", attrs["axis"], x.rank)
    eps = attrs["eps"]
    if not eps >= 0 or eps == float("inf"):
        raise FrameValueError(f"layer_norm: eps must be a finite non-negative number, got {eps}")
    norm_shape = x.shape[attrs["axis"]:]
    for what, t in zip(("weight", "bias"), types[1:]):
        _require_same_dtype("layer_norm", x, t, what)
        if t.shape != norm_shape:
            raise FrameValueError(f"layer_norm: {what} shape {_fmt(t.shape)} must equal the "
                                  f"normalised shape {_fmt(norm_shape)} (input {x}, axis "
                                  f"{attrs['axis']})")
    return [x]


def _layer_norm_kernel(ins, attrs):
    x = ins[0]
    if x.size == 0:
        return (np.empty(x.shape, x.dtype),)
    ct = _compute_np(x.dtype)
    axes = tuple(range(attrs["axis"], x.ndim))
    xc = x.astype(ct, copy=False)
    centred = xc - xc.mean(axis=axes, keepdims=True)
    var = np.mean(centred * centred, axis=axes, keepdims=True)
    y = centred * (1.0 / np.sqrt(var + ct.type(attrs["eps"])))
    for param, combine in zip(ins[1:], (np.multiply, np.add)):
        combine(y, param.astype(ct, copy=False), out=y)
    return (y.astype(x.dtype, copy=False),)


def _layer_norm_decompose(b, inputs, attrs):
    x = inputs[0]
    xc = _widen(b, x)
    axes = tuple(range(attrs["axis"], x.type.rank))
    centred = b.op("sub", xc, b.op("mean", xc, axes=axes, keepdims=True))
    var = b.op("mean", b.op("mul", centred, centred), axes=axes, keepdims=True)
    inv_std = b.op("rsqrt", b.op("add", var, b.scalar(attrs["eps"], like=var)))
    y = b.op("mul", centred, inv_std)
    for param, combine in zip(inputs[1:], ("mul", "add")):
        y = b.op(combine, y, _widen(b, param))
    return [_narrow(b, y, x.type.dtype)]


register(OpSchema("layer_norm", (1, 3), _layer_norm_infer, _layer_norm_kernel,
                  attrs={"axis": AttrSpec("int", REQUIRED), "eps": AttrSpec("float", 1e-5)},
                  traits=_COMPOSITE, decompose=_layer_norm_decompose,
                  doc="Normalise over axes axis..end (biased variance), then * weight + bias; "
                      "inputs (x[, weight[, bias]]), weight/bias shaped x.shape[axis:]."))


# --------------------------------------------------------------------------- conv2d

def _check_pair(op: str, name: str, value: tuple[int, ...], minimum: int) -> None:
    if len(value) != 2 or any(v < minimum for v in value):
        raise FrameValueError(f"{op}: '{name}' must be two ints >= {minimum} (h, w), got {value}")


def _check_padding(op: str, padding: tuple[int, ...]) -> None:
    if len(padding) != 4 or any(p < 0 for p in padding):
        raise FrameValueError(f"{op}: 'padding' must be four non-negative ints (top, bottom, "
                              f"left, right), got {padding}; the user-facing functions accept "
                              f"an int or an (h, w) pair")


def conv2d_output_size(size: int, pad_before: int, pad_after: int, kernel: int, stride: int,
                       dilation: int = 1) -> int:
    """Output length of one spatial axis (floor mode); < 1 when the window does not fit."""
    span = dilation * (kernel - 1) + 1
    return (size + pad_before + pad_after - span) // stride + 1


pool2d_output_size = conv2d_output_size


def _conv2d_infer(types, attrs):
    x, w = types[0], types[1]
    stride, padding, dilation, groups = (attrs["stride"], attrs["padding"], attrs["dilation"],
                                         attrs["groups"])
    _require_float("conv2d", x)
    if x.rank != 4:
        raise FrameValueError(f"conv2d: input must be 4-D [N, C, H, W], got {x}")
    if w.rank != 4:
        raise FrameValueError(f"conv2d: weight must be 4-D [O, C/groups, kh, kw], got {w}")
    _require_same_dtype("conv2d", x, w, "weight")
    _check_pair("conv2d", "stride", stride, 1)
    _check_pair("conv2d", "dilation", dilation, 1)
    _check_padding("conv2d", padding)
    if groups < 1:
        raise FrameValueError(f"conv2d: groups must be >= 1, got {groups}")
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    if c != cg * groups:
        raise FrameValueError(f"conv2d: input has {c} channels but weight {w} with groups="
                              f"{groups} expects {cg * groups} (weight is [O, C/groups, kh, kw])")
    if o % groups:
        raise FrameValueError(f"conv2d: {o} output channels are not divisible by groups={groups}")
    if kh < 1 or kw < 1:
        raise FrameValueError(f"conv2d: kernel size must be at least 1x1, got weight {w}")
    if len(types) == 3:
        bias = types[2]
        _require_same_dtype("conv2d", x, bias, "bias")
        if bias.shape != (o,):
            raise FrameValueError(f"conv2d: bias must have shape [{o}] (one per output "
                                  f"channel), got {bias}")
    ho = conv2d_output_size(h, padding[0], padding[1], kh, stride[0], dilation[0])
    wo = conv2d_output_size(wd, padding[2], padding[3], kw, stride[1], dilation[1])
    if ho < 1 or wo < 1:
        raise FrameValueError(f"conv2d: the {kh}x{kw} kernel (dilation {dilation}) does not fit "
                              f"in the padded {h}x{wd} input (padding {padding})")
    return [TensorType(x.dtype, (n, o, ho, wo))]


def _windows(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
             dilation: Sequence[int] = (1, 1)) -> np.ndarray:
    """A [N, C, Ho, Wo, kh, kw] view of the (already padded) NCHW input."""
    span = (dilation[0] * (kernel[0] - 1) + 1, dilation[1] * (kernel[1] - 1) + 1)
    view = sliding_window_view(x, span, axis=(2, 3))
    return view[:, :, ::stride[0], ::stride[1], ::dilation[0], ::dilation[1]]


def _pad_hw(x: np.ndarray, padding: Sequence[int], value: float) -> np.ndarray:
    if not any(padding):
        return x
    return np.pad(x, ((0, 0), (0, 0), tuple(padding[:2]), tuple(padding[2:])),
                  constant_values=value)


def _conv2d_kernel(ins, attrs):
    x, w = ins[0], ins[1]
    ct = _compute_np(x.dtype)
    groups = attrs["groups"]
    n = x.shape[0]
    o, cg, kh, kw = w.shape
    og = o // groups
    xc = _pad_hw(x.astype(ct, copy=False), attrs["padding"], 0.0)
    win = _windows(xc, (kh, kw), attrs["stride"], attrs["dilation"])
    ho, wo = win.shape[2], win.shape[3]
    # im2col with the output positions innermost: per group and image, a
    # [Cg*kh*kw, Ho*Wo] patch matrix, so the product with the [Og, Cg*kh*kw]
    # weight lands directly in NCHW order (no transpose copy of the result for
    # groups=1) and the gather reads input rows contiguously.
    cols = (win.reshape(n, groups, cg, ho, wo, kh, kw)
            .transpose(1, 0, 2, 5, 6, 3, 4)
            .reshape(groups, n, cg * kh * kw, ho * wo))
    wm = w.astype(ct, copy=False).reshape(groups, 1, og, cg * kh * kw)
    out = np.matmul(wm, cols)                                   # [G, N, Og, Ho*Wo]
    out = np.ascontiguousarray(out.transpose(1, 0, 2, 3)).reshape(n, o, ho, wo)
    if len(ins) == 3:
        out += ins[2].astype(ct, copy=False).reshape(o, 1, 1)
    return (out.astype(x.dtype, copy=False),)


register(OpSchema("conv2d", (2, 3), _conv2d_infer, _conv2d_kernel,
                  attrs={"stride": AttrSpec("ints", (1, 1)),
                         "padding": AttrSpec("ints", (0, 0, 0, 0)),
                         "dilation": AttrSpec("ints", (1, 1)),
                         "groups": AttrSpec("int", 1)},
                  doc="2-D cross-correlation, x NCHW, weight [O, C/groups, kh, kw], optional "
                      "bias [O]; padding = (top, bottom, left, right) zeros."))


# --------------------------------------------------------------------------- pooling

def _pool_infer(op: str):
    def infer(types, attrs):
        (x,) = types
        kernel, stride, padding = attrs["kernel"], attrs["stride"], attrs["padding"]
        _require_float(op, x)
        if x.rank != 4:
            raise FrameValueError(f"{op}: input must be 4-D [N, C, H, W], got {x}")
        _check_pair(op, "kernel", kernel, 1)
        _check_pair(op, "stride", stride, 1)
        _check_padding(op, padding)
        for side, p in zip(("top", "bottom", "left", "right"), padding):
            k = kernel[0] if side in ("top", "bottom") else kernel[1]
            if 2 * p > k:
                raise FrameValueError(f"{op}: {side} padding {p} must be at most half the "
                                      f"kernel size {k}")
        n, c, h, w = x.shape
        ho = pool2d_output_size(h, padding[0], padding[1], kernel[0], stride[0])
        wo = pool2d_output_size(w, padding[2], padding[3], kernel[1], stride[1])
        if ho < 1 or wo < 1:
            raise FrameValueError(f"{op}: the {kernel[0]}x{kernel[1]} window does not fit in "
                                  f"the padded {h}x{w} input (padding {padding})")
        return [TensorType(x.dtype, (n, c, ho, wo))]
    return infer


def _pool_taps(x: np.ndarray, attrs, combine: np.ufunc) -> np.ndarray:
    """Fold ``combine`` over the kh*kw strided tap slices of padded ``x``: kh*kw
    whole-output ufunc calls, much faster than reducing a window view's tiny axes."""
    (kh, kw), (sh, sw) = attrs["kernel"], attrs["stride"]
    h, w = x.shape[2], x.shape[3]
    ho, wo = (h - kh) // sh + 1, (w - kw) // sw + 1
    out = None
    for a in range(kh):
        for e in range(kw):
            tap = x[:, :, a:a + sh * (ho - 1) + 1:sh, e:e + sw * (wo - 1) + 1:sw]
            if out is None:
                out = np.array(tap, order="C")
            else:
                combine(out, tap, out=out)
    return out


def _max_pool2d_kernel(ins, attrs):
    x = ins[0]
    return (_pool_taps(_pad_hw(x, attrs["padding"], -np.inf), attrs, np.maximum),)


def _avg_pool2d_kernel(ins, attrs):
    x = ins[0]
    kh, kw = attrs["kernel"]
    xc = _pad_hw(x.astype(_compute_np(x.dtype), copy=False), attrs["padding"], 0.0)
    total = _pool_taps(xc, attrs, np.add)
    total /= kh * kw  # count_include_pad=True: padding zeros count as elements
    return (total.astype(x.dtype, copy=False),)


_POOL_ATTRS = {"kernel": AttrSpec("ints", REQUIRED), "stride": AttrSpec("ints", REQUIRED),
               "padding": AttrSpec("ints", (0, 0, 0, 0))}
register(OpSchema("max_pool2d", 1, _pool_infer("max_pool2d"), _max_pool2d_kernel,
                  attrs=_POOL_ATTRS,
                  doc="Max over kernel windows (floor mode); padding is -inf."))
register(OpSchema("avg_pool2d", 1, _pool_infer("avg_pool2d"), _avg_pool2d_kernel,
                  attrs=_POOL_ATTRS,
                  doc="Mean over kernel windows (floor mode); zero padding counts "
                      "(count_include_pad=True)."))


# --------------------------------------------------------------------------- losses

def _cross_entropy_infer(types, attrs):
    logits, labels = types
    _check_reduction("cross_entropy", attrs["reduction"])
    _require_float("cross_entropy", logits, "floating-point logits as")
    if logits.rank != 2:
        raise FrameValueError(f"cross_entropy: logits must be 2-D [N, C], got {logits}")
    if labels.dtype.kind not in "iu":
        raise FrameTypeError(f"cross_entropy: labels must be an integer tensor of "
                             f"class indices, got {labels}")
    if labels.shape != logits.shape[:1]:
        raise FrameValueError(f"cross_entropy: labels must have shape [{logits.shape[0]}] "
                              f"(one class index per row of the logits {logits}), got {labels}")
    if logits.shape[1] == 0:
        raise FrameValueError(f"cross_entropy: logits {logits} have no classes")
    shape = logits.shape[:1] if attrs["reduction"] == "none" else ()
    return [TensorType(logits.dtype, shape)]


def _cross_entropy_kernel(ins, attrs):
    logits, labels = ins
    n, c = logits.shape
    bad = (labels < 0) | (labels >= c)
    if bad.any():
        raise FrameValueError(f"cross_entropy: label {int(labels[bad][0])} is out of range for "
                              f"{c} classes (labels must lie in [0, {c}))")
    z = _shifted(logits, 1)
    lse = np.log(np.exp(z).sum(axis=1))
    loss = lse - z[np.arange(n), labels]
    return (np.asarray(_reduce(loss, attrs["reduction"]), dtype=logits.dtype),)


def softmax_cross_entropy(logits: np.ndarray, labels: np.ndarray, reduction: str
                          ) -> tuple[np.ndarray, np.ndarray]:
    """``(cross_entropy(logits, labels), softmax(logits, axis=1))`` computing the
    shifted logits and their exponentials once: bit for bit the two reference
    kernels' results (the same operations on the same arrays, in the same
    order; ``e.sum(axis=1, keepdims=True)`` adds exactly as ``e.sum(axis=1)``).
    For backends that run both ops on one input (the cpu executable)."""
    n, c = logits.shape
    if logits.size == 0:
        return (_cross_entropy_kernel((logits, labels), {"reduction": reduction})[0],
                _softmax_kernel((logits,), {"axis": 1})[0])
    bad = (labels < 0) | (labels >= c)
    if bad.any():
        raise FrameValueError(f"cross_entropy: label {int(labels[bad][0])} is out of range for "
                              f"{c} classes (labels must lie in [0, {c}))")
    z = _shifted(logits, 1)
    e = np.exp(z)
    total = e.sum(axis=1, keepdims=True)
    loss = np.log(total[:, 0]) - z[np.arange(n), labels]
    e /= total
    return (np.asarray(_reduce(loss, reduction), dtype=logits.dtype),
            e.astype(logits.dtype, copy=False))


def _cross_entropy_decompose(b, inputs, attrs):
    logits, labels = inputs
    n, c = logits.type.shape
    z = _shifted_value(b, logits, 1)
    lse = b.op("log", b.op("sum", b.op("exp", z), axes=(1,), keepdims=True))
    log_probs = b.op("sub", z, lse)
    # one-hot pick: labels[:, None] == arange(C); 'where' rather than a multiply so
    # that -inf log-probabilities of other classes do not turn into nan
    classes = b.constant(np.arange(c, dtype=labels.type.dtype.np))
    onehot = b.op("equal", b.op("expand_dims", labels, axes=(1,)), classes)
    picked = b.op("where", onehot, log_probs, b.scalar(0.0, like=log_probs))
    loss = b.op("neg", b.op("sum", picked, axes=(1,), keepdims=False))
    return [_narrow(b, _reduce_value(b, loss, attrs["reduction"]), logits.type.dtype)]


register(OpSchema("cross_entropy", 2, _cross_entropy_infer, _cross_entropy_kernel,
                  attrs={"reduction": AttrSpec("str", "mean")}, traits=_COMPOSITE,
                  decompose=_cross_entropy_decompose,
                  doc="-log_softmax(logits)[i, labels[i]], reduced by 'reduction' "
                      "(mean | sum | none); labels out of [0, C) are an error."))


def _mse_loss_infer(types, attrs):
    a, b = types
    _check_reduction("mse_loss", attrs["reduction"])
    _require_float("mse_loss", a)
    _require_same_dtype("mse_loss", a, b, "the target")
    if a.shape != b.shape:
        raise FrameValueError(f"mse_loss: input {a} and target {b} must have the same shape")
    return [a if attrs["reduction"] == "none" else TensorType(a.dtype, ())]


def _mse_loss_kernel(ins, attrs):
    a, b = ins
    ct = _compute_np(a.dtype)
    d = a.astype(ct) - b.astype(ct, copy=False)
    d *= d
    return (np.asarray(_reduce(d, attrs["reduction"]), dtype=a.dtype),)


def _mse_loss_decompose(b, inputs, attrs):
    x, target = inputs
    d = b.op("sub", _widen(b, x), _widen(b, target))
    loss = _reduce_value(b, b.op("mul", d, d), attrs["reduction"])
    return [_narrow(b, loss, x.type.dtype)]


register(OpSchema("mse_loss", 2, _mse_loss_infer, _mse_loss_kernel,
                  attrs={"reduction": AttrSpec("str", "mean")}, traits=_COMPOSITE,
                  decompose=_mse_loss_decompose,
                  doc="(input - target)**2, reduced by 'reduction' (mean | sum | none)."))


# --------------------------------------------------------------------------- embedding

def _embedding_infer(types, attrs):
    indices, weight = types
    if indices.dtype.kind not in "iu":
        raise FrameTypeError(f"embedding: indices must be an integer tensor, got {indices}")
    if weight.rank != 2:
        raise FrameValueError(f"embedding: weight must be 2-D [num_embeddings, dim], got {weight}")
    return [TensorType(weight.dtype, indices.shape + weight.shape[1:])]


def _embedding_kernel(ins, attrs):
    indices, weight = ins
    v = weight.shape[0]
    bad = (indices < 0) | (indices >= v)
    if bad.any():
        raise FrameValueError(f"embedding: index {int(indices[bad].flat[0])} is out of range "
                              f"for {v} embeddings (indices must lie in [0, {v}))")
    return (np.take(weight, indices, axis=0),)


register(OpSchema("embedding", 2, _embedding_infer, _embedding_kernel,
                  doc="weight[indices]: rows of weight [V, D] gathered into [..., D]; "
                      "indices outside [0, V) are an error."))

