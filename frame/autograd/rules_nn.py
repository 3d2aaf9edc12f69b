"""Gradient rules of the nn and fft ops.

- float16 is handled as the nn kernels do: rules compute in float32 and
  round the gradient once at the end.
- ``conv2d`` gradients are conv2d ops themselves (no dedicated backward ops),
  so second derivatives need nothing new:
  input:  the output gradient, dilated by the stride and padded by
          ``dilation * (k - 1)``, correlated with the weight flipped in space
          and transposed per group (in/out channels swapped), then cropped
          to the unpadded input;
  weight: the (padded) input with batch and channels swapped, correlated
          with the output gradient as the kernel (stride and dilation
          exchange roles), cropped to the kernel size;
  bias:   the sum over batch and space.
- ``avg_pool2d``'s input gradient is the conv2d input gradient of a
  depthwise all-``1/(kh*kw)`` kernel (zero padding counts, as in the op).
- ``max_pool2d`` sends each window's gradient to the positions that attain
  its maximum, split evenly among ties (as the ``max`` reduction does);
  overlapping windows add up.  Built per kernel tap from slice, equal, where
  and the slice gradient.
- ``cross_entropy``: gradient to the logits only (labels are indices).
- ``embedding``: gradient to the weight only, a ``scatter_add`` of the rows.
- ``rfft``/``irfft``: the adjoint DFTs, written with the other transform (see
  the rules for the bin weights that account for the half spectrum).
- the collectives (frame/ops/collective.py), for the loss summed over every
  process: ``all_reduce`` is its own adjoint (sum -> sum of the gradients,
  mean -> their mean); ``broadcast`` from a root sends the gradients back
  with ``reduce`` to that root (their sum there, zeros elsewhere), and
  ``reduce``'s gradient is ``broadcast`` from the root.
"""
from __future__ import annotations

import numpy as np

from .helpers import (canonical_triples, differentiable, dilate, fit, make_slice, narrow,
                      slice_backward, sum_axes, widen, zeros)
from .registry import gradient_rule

__all__: list[str] = []


# --------------------------------------------------------------------------- softmax family

@gradient_rule("softmax")
def _softmax(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None:
        return [None]
    yw, gw = widen(b, y), widen(b, g)
    inner = b.op("sum", b.op("mul", gw, yw), axes=(attrs["axis"],), keepdims=True)
    return [narrow(b, b.op("mul", yw, b.op("sub", gw, inner)), x.type.dtype)]


@gradient_rule("log_softmax")
def _log_softmax(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None:
        return [None]
    yw, gw = widen(b, y), widen(b, g)
    total = b.op("sum", gw, axes=(attrs["axis"],), keepdims=True)
    return [narrow(b, b.op("sub", gw, b.op("mul", b.op("exp", yw), total)), x.type.dtype)]


# --------------------------------------------------------------------------- layer_norm

@gradient_rule("layer_norm")
def _layer_norm(b, inputs, outputs, grads, attrs):
    (g,) = grads
    if g is None:
        return [None] * len(inputs)
    x = inputs[0]
    axis, rank = attrs["axis"], x.type.rank
    norm_axes, lead_axes = tuple(range(axis, rank)), tuple(range(axis))
    xw, gw = widen(b, x), widen(b, g)
    centred = b.op("sub", xw, b.op("mean", xw, axes=norm_axes, keepdims=True))
    var = b.op("mean", b.op("mul", centred, centred), axes=norm_axes, keepdims=True)
    inv_std = b.op("rsqrt", b.op("add", var, b.scalar(attrs["eps"], like=var)))
    xhat = b.op("mul", centred, inv_std)
    out = [None] * len(inputs)
    if len(inputs) > 1:
        out[1] = narrow(b, sum_axes(b, b.op("mul", gw, xhat), lead_axes), x.type.dtype)
        gw = b.op("mul", gw, widen(b, inputs[1]))  # the gradient of xhat
    if len(inputs) > 2:
        out[2] = narrow(b, sum_axes(b, widen(b, g), lead_axes), x.type.dtype)
    # dx = inv_std * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))
    mean_g = b.op("mean", gw, axes=norm_axes, keepdims=True)
    mean_gx = b.op("mean", b.op("mul", gw, xhat), axes=norm_axes, keepdims=True)
    dx = b.op("mul", inv_std, b.op("sub", b.op("sub", gw, mean_g), b.op("mul", xhat, mean_gx)))
    out[0] = narrow(b, dx, x.type.dtype)
    return out


# --------------------------------------------------------------------------- conv2d

def conv2d_input_grad(b, g, w, in_shape, stride, padding, dilation, groups):
    """The gradient of conv2d with respect to its input, as a conv2d."""
    n, c, h, wd = in_shape
    o, cg, kh, kw = w.type.shape
    (sh, sw), (dh, dw) = stride, dilation
    top, bottom, left, right = padding
    hp, wp = h + top + bottom, wd + left + right
    gd = dilate(b, dilate(b, g, 2, sh), 3, sw)
    # rows/columns of the padded input no window reached (floor mode) get zeros
    extra_h = hp - (gd.type.shape[2] + dh * (kh - 1))
    extra_w = wp - (gd.type.shape[3] + dw * (kw - 1))
    wt = b.op("reshape", w, shape=(groups, o // groups, cg, kh, kw))
    wt = b.op("transpose", wt, perm=(0, 2, 1, 3, 4))
    wt = b.op("flip", b.op("reshape", wt, shape=(c, o // groups, kh, kw)), axes=(2, 3))
    gx = b.op("conv2d", gd, wt, stride=(1, 1), dilation=(dh, dw), groups=groups,
              padding=(dh * (kh - 1), dh * (kh - 1) + extra_h,
                       dw * (kw - 1), dw * (kw - 1) + extra_w))
    return make_slice(b, gx, [(0, n, 1), (0, c, 1), (top, top + h, 1), (left, left + wd, 1)])


def conv2d_weight_grad(b, x, g, w_shape, stride, padding, dilation, groups):
    """The gradient of conv2d with respect to its weight, as a conv2d."""
    n, c, h, wd = x.type.shape
    o, cg, kh, kw = w_shape
    if groups == 1:
        xt = b.op("transpose", x, perm=(1, 0, 2, 3))                      # [C, N, H, W]
    else:
        xt = b.op("reshape", x, shape=(n, groups, cg, h, wd))
        xt = b.op("transpose", xt, perm=(2, 1, 0, 3, 4))                  # [Cg, G, N, H, W]
        xt = b.op("reshape", xt, shape=(cg, groups * n, h, wd))
    kernel = b.op("transpose", g, perm=(1, 0, 2, 3))                      # [O, N, Ho, Wo]
    gw = b.op("conv2d", xt, kernel, stride=tuple(dilation), dilation=tuple(stride),
              padding=tuple(padding), groups=groups)                      # [Cg, O, >=kh, >=kw]
    gw = make_slice(b, gw, [(0, cg, 1), (0, o, 1), (0, kh, 1), (0, kw, 1)])
    return b.op("transpose", gw, perm=(1, 0, 2, 3))


@gradient_rule("conv2d")
def _conv2d(b, inputs, outputs, grads, attrs):
    (g,) = grads
    if g is None:
        return [None] * len(inputs)
    x, w = inputs[0], inputs[1]
    conv = (attrs["stride"], attrs["padding"], attrs["dilation"], attrs["groups"])
    out = [conv2d_input_grad(b, g, w, x.type.shape, *conv),
           conv2d_weight_grad(b, x, g, w.type.shape, *conv)]
    if len(inputs) == 3:
        out.append(b.op("sum", g, axes=(0, 2, 3), keepdims=False))
    return out


# --------------------------------------------------------------------------- pooling

@gradient_rule("avg_pool2d")
def _avg_pool2d(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None:
        return [None]
    c = x.type.shape[1]
    kh, kw = attrs["kernel"]
    ones = b.constant(np.full((c, 1, kh, kw), 1.0 / (kh * kw), dtype=g.type.dtype.np))
    return [conv2d_input_grad(b, g, ones, x.type.shape, attrs["stride"], attrs["padding"],
                              (1, 1), c)]


def _taps(attrs, padded_shape, out_shape):
    """Per kernel tap (a, e): the slice triples of the padded input it reads."""
    (kh, kw), (sh, sw) = attrs["kernel"], attrs["stride"]
    n, c, hp, wp = padded_shape
    ho, wo = out_shape[2], out_shape[3]
    for a in range(kh):
        for e in range(kw):
            yield [(0, n, 1), (0, c, 1), (a, a + sh * (ho - 1) + 1, sh),
                   (e, e + sw * (wo - 1) + 1, sw)]


@gradient_rule("max_pool2d")
def _max_pool2d(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None:
        return [None]
    top, bottom, left, right = attrs["padding"]
    xp = x
    if any(attrs["padding"]):
        xp = b.op("pad", x, pads=(0, 0, 0, 0, top, bottom, left, right), value=float("-inf"))
    # per tap: which windows it wins; per window: how many taps tie for the max
    windows = list(_taps(attrs, xp.type.shape, y.type.shape))
    hits = [b.op("equal", make_slice(b, xp, t), y) for t in windows]
    count = None
    for hit in hits:
        one = b.op("cast", hit, dtype=g.type.dtype)
        count = one if count is None else b.op("add", count, one)
    share = b.op("div", g, b.op("maximum", count, b.scalar(1.0, like=count)))
    zero = b.scalar(0.0, like=g)
    total = None
    for t, hit in zip(windows, hits):
        part = b.op("where", hit, share, zero)
        part = slice_backward(b, part, xp.type.shape, *canonical_triples(xp.type.shape, t))
        total = part if total is None else b.op("add", total, part)
    n, c, h, w = x.type.shape
    return [make_slice(b, total, [(0, n, 1), (0, c, 1), (top, top + h, 1), (left, left + w, 1)])]


# --------------------------------------------------------------------------- losses

def _loss_scale(b, g, per_item, reduction):
    """The incoming gradient spread over the unreduced per-item loss shape."""
    if reduction == "mean":
        count = max(int(np.prod(per_item)), 1)
        return b.op("mul", g, b.scalar(1.0 / count, like=g))
    return g  # 'sum': a 0-d gradient broadcasts; 'none': already per item


@gradient_rule("cross_entropy")
def _cross_entropy(b, inputs, outputs, grads, attrs):
    (logits, labels), (g,) = inputs, grads
    if g is None:
        return [None, None]
    n, c = logits.type.shape
    gw = widen(b, g)
    p = widen(b, b.op("softmax", logits, axis=1))
    classes = b.constant(np.arange(c, dtype=labels.type.dtype.np))
    onehot = b.op("cast", b.op("equal", b.op("expand_dims", labels, axes=(1,)), classes),
                  dtype=p.type.dtype)
    scale = _loss_scale(b, gw, (n,), attrs["reduction"])
    if attrs["reduction"] == "none":
        scale = b.op("expand_dims", scale, axes=(1,))
    return [narrow(b, b.op("mul", b.op("sub", p, onehot), scale), logits.type.dtype), None]


@gradient_rule("mse_loss")
def _mse_loss(b, inputs, outputs, grads, attrs):
    (x, target), (g,) = inputs, grads
    if g is None:
        return [None, None]
    diff = b.op("sub", widen(b, x), widen(b, target))
    scale = _loss_scale(b, widen(b, g), x.type.shape, attrs["reduction"])
    gx = b.op("mul", b.op("mul", diff, b.scalar(2.0, like=diff)), scale)
    gx = narrow(b, gx, x.type.dtype)
    return [gx, b.op("neg", gx)]


@gradient_rule("embedding")
def _embedding(b, inputs, outputs, grads, attrs):
    (indices, weight), (g,) = inputs, grads
    if g is None or not differentiable(weight):
        return [None, None]
    base = zeros(b, weight.type.shape, g.type.dtype)
    return [None, b.op("scatter_add", base, indices, g, axis=0)]


# --------------------------------------------------------------------------- fft

def _half_spectrum_weights(n: int, bins: int, interior: float, dtype) -> np.ndarray:
    """Per-bin weights of a length-n half spectrum: 1 for the DC bin and (n even)
    the Nyquist bin, ``interior`` for the bins that stand for a conjugate pair."""
    w = np.full(bins, interior)
    w[0] = 1.0
    if n % 2 == 0:
        w[n // 2] = 1.0
    return w.astype(dtype.np)


def _fit_last(b, v, length):
    """Crop or zero-pad the last axis of ``v`` to ``length``."""
    cur = v.type.shape[-1]
    if cur > length:
        return make_slice(b, v, [(0, d, 1) for d in v.type.shape[:-1]] + [(0, length, 1)])
    if cur < length:
        return b.op("pad", v, pads=(0, 0) * (v.type.rank - 1) + (0, length - cur), value=0.0)
    return v


@gradient_rule("rfft")
def _rfft(b, inputs, outputs, grads, attrs):
    # y_k = sum_t x_t e^{-2 pi i k t / n}, so dL/dx_t = Re sum_k G_k e^{+2 pi i k t / n}
    # over the full spectrum's non-negative half; irfft(Z)_t is (1/n) of that sum with
    # the interior bins doubled, hence irfft(G * w) * n with interior weights 1/2.
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(x):
        return [None]
    n = attrs["n"] or x.type.shape[-1]
    bins = y.type.shape[-1]
    w = b.constant(_half_spectrum_weights(n, bins, 0.5, g.type.dtype))
    gx = b.op("irfft", b.op("mul", g, w), n=n)
    gx = b.op("mul", gx, b.scalar(float(n), like=gx))
    return [fit(b, _fit_last(b, gx, x.type.shape[-1]), x)]


@gradient_rule("irfft")
def _irfft(b, inputs, outputs, grads, attrs):
    # x_t = (1/n) [Re Z_0 + 2 sum_interior Re(Z_k e^{2 pi i k t / n}) + Re Z_{n/2} (-1)^t],
    # so dL/dRe Z_k + i dL/dIm Z_k = (c_k / n) rfft(dL/dx)_k, c_k = 2 inside, 1 at the ends
    (z,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(z):
        return [None]
    n = attrs["n"] or 2 * (z.type.shape[-1] - 1)
    spec = b.op("rfft", g, n=n)
    w = b.constant(_half_spectrum_weights(n, spec.type.shape[-1], 2.0, spec.type.dtype) / n)
    return [fit(b, _fit_last(b, b.op("mul", spec, w), z.type.shape[-1]), z)]


# --------------------------------------------------------------------------- collectives

@gradient_rule("all_reduce")
def _all_reduce(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    return [b.op("all_reduce", g, reduction=attrs["reduction"])]


@gradient_rule("broadcast")
def _broadcast(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    return [b.op("reduce", g, root=attrs["root"])]


@gradient_rule("reduce")
def _reduce(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    return [b.op("broadcast", g, root=attrs["root"])]
