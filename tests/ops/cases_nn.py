"""Cases for the nn and fft ops, each with an independent formula: explicit loops
over output positions (conv, pooling), per-row loops (layer_norm,
cross_entropy), pairwise-difference softmax, and an explicit DFT matrix (fft).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .optable import ALL, FLOATS, INTS, Case, cases, sample


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# --------------------------------------------------------------------------- softmax family

def _pairwise(x: np.ndarray, axis: int) -> np.ndarray:
    """d[..., i, j] = x_j - x_i along ``axis`` (moved last)."""
    xm = np.moveaxis(_f64(x), axis, -1)
    return xm[..., None, :] - xm[..., :, None]


def _softmax_formula(ins, attrs):
    # softmax_i = 1 / sum_j exp(x_j - x_i): no max-shift, and no overflow to nan
    p = 1.0 / np.exp(_pairwise(ins[0], attrs["axis"])).sum(axis=-1)
    return [np.moveaxis(p, -1, attrs["axis"])]


def _log_softmax_formula(ins, attrs):
    lp = -np.log(np.exp(_pairwise(ins[0], attrs["axis"])).sum(axis=-1))
    return [np.moveaxis(lp, -1, attrs["axis"])]


SOFTMAX_SHAPES = [((5,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), 1), ((3, 1, 2), 2)]


@cases("softmax", "log_softmax")
def softmax_cases(op):
    formula = _softmax_formula if op == "softmax" else _log_softmax_formula
    for dtype in FLOATS:
        for i, (shape, axis) in enumerate(SOFTMAX_SHAPES):
            yield Case([sample(shape, dtype, i)], {"axis": axis}, formula,
                       id=f"{dtype}-{shape}-axis{axis}")
        # values whose exp overflows: the kernel must subtract the max
        big = (sample((2, 4), dtype, 9) * 100 + np.array([[600.0], [-600.0]])).astype(dtype)
        yield Case([big], {"axis": 1}, formula, rtol=1e-3 if dtype == "float16" else None,
                   id=f"{dtype}-large")


# --------------------------------------------------------------------------- layer_norm

def _layer_norm_formula(ins, attrs):
    x = _f64(ins[0])
    axis = attrs["axis"]
    lead, norm = x.shape[:axis], x.shape[axis:]
    rows = x.reshape(math.prod(lead), math.prod(norm))
    out = np.empty_like(rows)
    for r, row in enumerate(rows):
        mu = math.fsum(row) / row.size
        var = math.fsum((v - mu) ** 2 for v in row) / row.size
        out[r] = (row - mu) / math.sqrt(var + attrs["eps"])
    out = out.reshape(x.shape)
    if len(ins) > 1:
        out = out * _f64(ins[1])
    if len(ins) > 2:
        out = out + _f64(ins[2])
    return [out]


@cases("layer_norm")
def layer_norm_cases(op):
    for dtype in FLOATS:
        yield Case([sample((2, 3, 4), dtype, 1)], {"axis": 2}, _layer_norm_formula,
                   id=f"{dtype}-last")
        yield Case([sample((2, 3, 4), dtype, 2)], {"axis": 1, "eps": 1e-3},
                   _layer_norm_formula, id=f"{dtype}-two-axes")
        x = sample((4, 6), dtype, 3)
        yield Case([x, sample((6,), dtype, 4)], {"axis": 1}, _layer_norm_formula,
                   id=f"{dtype}-weight")
        yield Case([sample((5,), dtype, 5), sample((5,), dtype, 6), sample((5,), dtype, 7)],
                   {"axis": 0}, _layer_norm_formula, id=f"{dtype}-weight-bias")
        yield Case([sample((3, 2, 2), dtype, 8), sample((2, 2), dtype, 9),
                    sample((2, 2), dtype, 10)], {"axis": 1, "eps": 0.5}, _layer_norm_formula,
                   id=f"{dtype}-affine-2d")


# --------------------------------------------------------------------------- conv2d

def _conv2d_formula(ins, attrs):
    x, w = _f64(ins[0]), _f64(ins[1])
    (sh, sw), (dh, dw), groups = attrs["stride"], attrs["dilation"], attrs["groups"]
    top, bottom, left, right = attrs["padding"]
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    ho = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    out = np.zeros((n, o, ho, wo))
    for b, oc, i, j in itertools.product(range(n), range(o), range(ho), range(wo)):
        g = oc // og
        acc = 0.0
        for ci, a, e in itertools.product(range(cg), range(kh), range(kw)):
            row, col = i * sh + a * dh - top, j * sw + e * dw - left
            if 0 <= row < h and 0 <= col < wd:  # outside: zero padding
                acc += x[b, g * cg + ci, row, col] * w[oc, ci, a, e]
        out[b, oc, i, j] = acc
    if len(ins) == 3:
        out += _f64(ins[2])[None, :, None, None]
    return [out]


# (x shape, w shape, with bias, attrs)
CONV_CASES = [
    ((2, 3, 5, 5), (4, 3, 3, 3), False, {}),
    ((1, 2, 5, 6), (3, 2, 3, 2), True, {"padding": (1, 1, 1, 1)}),
    ((1, 2, 6, 5), (2, 2, 2, 3), True, {"padding": (0, 1, 2, 0), "stride": (2, 1)}),
    ((2, 2, 7, 7), (2, 2, 3, 3), False, {"dilation": (2, 2), "stride": (2, 2)}),
    ((1, 4, 4, 5), (6, 2, 3, 3), True, {"groups": 2, "padding": (1, 1, 0, 0)}),
    ((1, 3, 4, 4), (3, 1, 3, 3), False, {"groups": 3, "padding": (1, 1, 1, 1)}),  # depthwise
    ((2, 3, 3, 4), (5, 3, 1, 1), True, {}),
]


@cases("conv2d")
def conv2d_cases(op):
    for dtype in FLOATS:
        for i, (xs, ws, bias, attrs) in enumerate(CONV_CASES):
            ins = [sample(xs, dtype, i, low=-1, high=1), sample(ws, dtype, i + 1, low=-1, high=1)]
            if bias:
                ins.append(sample(ws[:1], dtype, i + 2, low=-1, high=1))
            yield Case(ins, attrs, _conv2d_formula, atol=1e-5 if dtype == "float32" else None,
                       id=f"{dtype}-{i}")


# --------------------------------------------------------------------------- pooling

def _pool_formula(kind: str):
    def formula(ins, attrs):
        x = _f64(ins[0])
        (kh, kw), (sh, sw) = attrs["kernel"], attrs["stride"]
        top, bottom, left, right = attrs["padding"]
        n, c, h, w = x.shape
        ho = (h + top + bottom - kh) // sh + 1
        wo = (w + left + right - kw) // sw + 1
        out = np.empty((n, c, ho, wo))
        for b, ch, i, j in itertools.product(range(n), range(c), range(ho), range(wo)):
            inside = [x[b, ch, r, s]
                      for r in range(i * sh - top, i * sh - top + kh)
                      for s in range(j * sw - left, j * sw - left + kw)
                      if 0 <= r < h and 0 <= s < w]
            # max: padding never wins; avg: padding counts as zeros in kh*kw
            out[b, ch, i, j] = max(inside) if kind == "max" else math.fsum(inside) / (kh * kw)
        return [out]
    return formula


POOL_CASES = [
    ((2, 2, 4, 4), {"kernel": (2, 2), "stride": (2, 2)}),
    ((1, 3, 5, 5), {"kernel": (3, 3), "stride": (1, 1), "padding": (1, 1, 1, 1)}),
    ((1, 2, 5, 4), {"kernel": (3, 2), "stride": (2, 1), "padding": (1, 1, 0, 1)}),
    ((2, 1, 5, 7), {"kernel": (2, 3), "stride": (2, 2)}),  # floor mode drops the remainder
    ((1, 1, 3, 3), {"kernel": (1, 1), "stride": (1, 1)}),
]


@cases("max_pool2d", "avg_pool2d")
def pool_cases(op):
    formula = _pool_formula("max" if op == "max_pool2d" else "avg")
    for dtype in FLOATS:
        for i, (shape, attrs) in enumerate(POOL_CASES):
            yield Case([sample(shape, dtype, i)], attrs, formula, id=f"{dtype}-{i}")
        # all-negative input: -inf padding, not zero padding, for max pooling
        neg = (-sample((1, 1, 3, 3), dtype, 5, positive=True)).astype(dtype)
        yield Case([neg], {"kernel": (2, 2), "stride": (1, 1), "padding": (1, 1, 1, 1)},
                   formula, id=f"{dtype}-negative-padded")


# --------------------------------------------------------------------------- losses

def _reduce_formula(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "none":
        return loss
    total = math.fsum(loss.ravel())
    return np.asarray(total if reduction == "sum" else total / loss.size)


def _cross_entropy_formula(ins, attrs):
    logits, labels = _f64(ins[0]), ins[1]
    loss = np.empty(logits.shape[0])
    for i, row in enumerate(logits):
        m = max(row)
        lse = m + math.log(math.fsum(math.exp(v - m) for v in row))
        loss[i] = lse - row[labels[i]]
    return [_reduce_formula(loss, attrs["reduction"])]


@cases("cross_entropy")
def cross_entropy_cases(op):
    for dtype in FLOATS:
        for j, (label_dtype, (n, c)) in enumerate(itertools.product(INTS, [(4, 5), (1, 3), (6, 10)])):
            logits = sample((n, c), dtype, j)
            labels = np.random.default_rng(j).integers(0, c, n).astype(label_dtype)
            for reduction in ("mean", "sum", "none"):
                yield Case([logits, labels], {"reduction": reduction}, _cross_entropy_formula,
                           id=f"{dtype}-{label_dtype}-{n}x{c}-{reduction}")
        big = (sample((3, 4), dtype, 7) * 50 + 500).astype(dtype)  # exp would overflow
        yield Case([big, np.array([0, 3, 1])], {"reduction": "none"}, _cross_entropy_formula,
                   rtol=1e-2 if dtype == "float16" else None, id=f"{dtype}-large")


def _mse_formula(ins, attrs):
    d = _f64(ins[0]) - _f64(ins[1])
    return [_reduce_formula(d * d, attrs["reduction"])]


@cases("mse_loss")
def mse_loss_cases(op):
    for dtype in FLOATS:
        for i, shape in enumerate([(), (5,), (2, 3, 4)]):
            for reduction in ("mean", "sum", "none"):
                yield Case([sample(shape, dtype, i), sample(shape, dtype, i + 10)],
                           {"reduction": reduction}, _mse_formula,
                           rtol=5e-3 if dtype == "float16" else None,
                           id=f"{dtype}-{shape}-{reduction}")


# --------------------------------------------------------------------------- embedding

def _embedding_formula(ins, attrs):
    indices, weight = ins
    rows = [weight[int(i)] for i in indices.ravel()]
    out = np.array(rows, dtype=weight.dtype).reshape(indices.shape + weight.shape[1:])
    return [out]


@cases("embedding")
def embedding_cases(op):
    for dtype in ALL:
        for j, (index_dtype, shape) in enumerate(itertools.product(INTS, [(), (4,), (2, 3), (0,)])):
            indices = np.random.default_rng(j).integers(0, 5, shape).astype(index_dtype)
            yield Case([indices, sample((5, 3), dtype, j)], {}, _embedding_formula,
                       id=f"{dtype}-{index_dtype}-{shape}")


# --------------------------------------------------------------------------- fft

def _rfft_formula(ins, attrs):
    x = _f64(ins[0])
    n = attrs["n"] or x.shape[-1]
    xn = np.zeros(x.shape[:-1] + (n,))
    m = min(n, x.shape[-1])
    xn[..., :m] = x[..., :m]  # crop or zero-pad to n points
    k = np.arange(n // 2 + 1)[:, None]
    t = np.arange(n)[None, :]
    dft = np.exp(-2j * np.pi * k * t / n)  # explicit DFT matrix
    return [xn @ dft.T]


def _irfft_formula(ins, attrs):
    spec = np.asarray(ins[0], dtype=np.complex128)
    n = attrs["n"] or 2 * (spec.shape[-1] - 1)
    bins = np.zeros(spec.shape[:-1] + (n // 2 + 1,), dtype=np.complex128)
    m = min(n // 2 + 1, spec.shape[-1])
    bins[..., :m] = spec[..., :m]
    t = np.arange(n)
    # x_t = (Re X_0 + 2 sum_k Re(X_k e^{2 pi i k t / n}) [+ Re X_{n/2} (-1)^t]) / n
    out = np.repeat(bins[..., :1].real, n, axis=-1)
    for k in range(1, (n - 1) // 2 + 1):
        out += 2 * (bins[..., k:k + 1] * np.exp(2j * np.pi * k * t / n)).real
    if n % 2 == 0:
        out += bins[..., n // 2:n // 2 + 1].real * (-1.0) ** t
    return [out / n]


@cases("rfft")
def rfft_cases(op):
    shapes = [((8,), 0), ((3, 5), 0), ((2, 2, 6), 0), ((8,), 6), ((4,), 12), ((2, 7), 7)]
    for dtype in FLOATS + INTS + ("bool",):
        for i, (shape, n) in enumerate(shapes):
            yield Case([sample(shape, dtype, i)], {"n": n}, _rfft_formula,
                       atol=1e-5 if dtype in ("float16", "float32") else None,
                       id=f"{dtype}-{shape}-n{n}")


@cases("irfft")
def irfft_cases(op):
    shapes = [((5,), 0), ((3, 4), 7), ((2, 6), 4), ((4,), 10), ((2, 1, 3), 0), ((1,), 1)]
    for dtype in ("complex64", "complex128"):
        for i, (shape, n) in enumerate(shapes):
            yield Case([sample(shape, dtype, i)], {"n": n}, _irfft_formula,
                       atol=1e-5 if dtype == "complex64" else None, id=f"{dtype}-{shape}-n{n}")


# --------------------------------------------------------------------------- collectives

# The registry's tests run in one process (no mpiexec): a world of one process, where
# the sum, the mean and a broadcast or reduce from rank 0 are each the input itself.
# More processes: tests/distributed/test_mpi.py.
import frame.distributed  # noqa: E402,F401  (installs the process group the kernels call)


def _identity(inputs, attrs):
    return [np.array(inputs[0], copy=True)]


@cases("all_reduce")
def all_reduce_cases(op):
    for dtype in ("float32", "float64", "int32", "int64"):
        reductions = ("sum", "mean") if dtype.startswith("float") else ("sum",)
        for reduction in reductions:
            for i, shape in enumerate([(), (7,), (3, 4)]):
                yield Case([sample(shape, dtype, i)], {"reduction": reduction}, _identity,
                           id=f"{dtype}-{reduction}-{shape}")


@cases("broadcast", "reduce")
def rooted_collective_cases(op):
    for dtype in ("float32", "float64", "int32", "int64"):
        for i, shape in enumerate([(5,), (2, 3)]):
            yield Case([sample(shape, dtype, i)], {"root": 0}, _identity, id=f"{dtype}-{shape}")
