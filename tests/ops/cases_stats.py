"""Op table: nan_reduce (frame/ops/stats.py).

Expected values are written independently of NumPy's nan-functions: every
slice's non-NaN values collected in Python, then the Python maximum, minimum,
position of the first extremum, ``math.fsum`` mean, two-pass variance (and its
square root), and the middle of ``sorted``.  No slice is all-NaN (NumPy warns
there; tests/capture/test_numpy_stats_functions.py compares that case with
NumPy itself).
"""
from __future__ import annotations

import math

import numpy as np

from .optable import Case, cases, sample

FUNCTIONS = ("nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean", "nanvar", "nanstd",
             "nanmedian")


def _reduce_values(function: str, values: list, ddof: float):
    finite = [(i, v) for i, v in enumerate(values) if not math.isnan(v)]
    vs = [v for _, v in finite]
    if function == "nanmax":
        return max(vs)
    if function == "nanmin":
        return min(vs)
    if function == "nanargmax":
        best = max(vs)
        return next(i for i, v in finite if v == best)
    if function == "nanargmin":
        best = min(vs)
        return next(i for i, v in finite if v == best)
    mean = math.fsum(vs) / len(vs)
    if function == "nanmean":
        return mean
    if function in ("nanvar", "nanstd"):
        v = math.fsum((x - mean) ** 2 for x in vs) / (len(vs) - ddof)
        return v if function == "nanvar" else math.sqrt(v)
    s = sorted(vs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _expected(ins, attrs):
    x = ins[0].astype(np.float64)
    function = attrs["function"]
    nd = x.ndim
    axes = tuple(range(nd)) if attrs["flat"] else attrs["axes"]
    keep = [i for i in range(nd) if i not in axes]
    moved = np.transpose(x, keep + list(axes)).reshape(
        tuple(x.shape[i] for i in keep) + (-1,))
    out = np.empty(moved.shape[:-1], np.float64)
    for pos in np.ndindex(*moved.shape[:-1]):
        out[pos] = _reduce_values(function, [float(v) for v in moved[pos]], attrs["ddof"])
    if attrs["keepdims"]:
        out = out.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    dtype = np.int64 if function in ("nanargmax", "nanargmin") else ins[0].dtype
    return [out.astype(dtype)]


CASES = [((6,), (0,), False), ((3, 4), (1,), False), ((3, 4), (0,), True),
         ((2, 3, 4), (0, 2), False), ((2, 3, 4), (0, 1, 2), True), ((2, 3), (0, 1), False)]


@cases("nan_reduce")
def nan_reduce_cases(op):
    for dtype in ("float32", "float64", "float16"):
        for i, (shape, axes, keepdims) in enumerate(CASES):
            x = sample(shape, dtype, i)
            flat = x.reshape(-1)
            flat[::3] = np.nan  # every slice keeps non-NaN values
            for function in FUNCTIONS:
                if function in ("nanargmax", "nanargmin") and len(axes) != 1:
                    attrs = {"function": function, "axes": axes, "flat": True,
                             "keepdims": keepdims}
                else:
                    attrs = {"function": function, "axes": axes, "flat": False,
                             "keepdims": keepdims}
                if function in ("nanvar", "nanstd"):
                    attrs["ddof"] = float(i % 2)
                loose = dtype == "float16"
                yield Case([x], attrs, _expected, rtol=1e-2 if loose else 1e-5,
                           atol=1e-2 if loose else 1e-6,
                           id=f"{function}-{dtype}-{shape}-{axes}-{attrs['flat']}-{keepdims}")


def _searched(ins, attrs):
    """Binary search as NumPy's: the first i with not less(a[i], v) (left) or
    less(v, a[i]) (right), NaN ordered last."""
    a, v = ins

    def less(p, q):
        return (p < q) or (q != q and p == p)

    out = np.empty(v.shape, np.int64)
    for pos in np.ndindex(*v.shape):
        value = v[pos]
        lo, hi = 0, a.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            go_right = less(a[mid], value) if attrs["side"] == "left" else not less(value, a[mid])
            lo, hi = (mid + 1, hi) if go_right else (lo, mid)
        out[pos] = lo
    return [out]


@cases("searchsorted")
def searchsorted_cases(op):
    for dtype in ("float32", "float64", "int64"):
        a = np.sort(sample((7,), dtype, 1))
        for i, shape in enumerate([(), (5,), (2, 3), (0,)]):
            v = sample(shape, dtype, i + 2)
            for side in ("left", "right"):
                yield Case([a, v], {"side": side}, _searched, id=f"{dtype}-{shape}-{side}")
    a = np.array([1.0, 2.0, 2.0, np.nan], np.float64)
    v = np.array([2.0, np.nan, 0.5, 3.0])
    for side in ("left", "right"):
        yield Case([a, v], {"side": side}, _searched, id=f"nan-{side}")


def _interpolated(ins, attrs):
    x, xp, fp = (np.asarray(v, np.float64) for v in ins)
    out = np.empty(x.shape, np.float64)
    for pos in np.ndindex(*x.shape):
        value = float(x[pos])
        if value < xp[0]:
            out[pos] = attrs["left"] if attrs.get("has_left") else fp[0]
        elif value > xp[-1]:
            out[pos] = attrs["right"] if attrs.get("has_right") else fp[-1]
        elif value == xp[-1]:
            out[pos] = fp[-1]
        else:
            j = max(k for k in range(len(xp)) if xp[k] <= value)
            slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
            out[pos] = slope * (value - xp[j]) + fp[j]
    return [out]


@cases("interp")
def interp_cases(op):
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, -1.0, 2.0, 0.5])
    for dtype in ("float32", "float64", "int64"):
        for i, shape in enumerate([(), (6,), (2, 3)]):
            x = sample(shape, dtype, i, low=-1.0, high=5.0)
            yield Case([x, xp, fp], {}, _interpolated, id=f"{dtype}-{shape}")
            yield Case([x, xp.astype(dtype), fp], {"left": -7.0, "has_left": True,
                                                   "right": 9.0, "has_right": True},
                       _interpolated, id=f"{dtype}-{shape}-left-right")


def _partitioned(op):
    """What a partition guarantees, checked against a full sort; the expected
    output is the kernel's own once the guarantee holds (the order of the
    other elements is the algorithm's), so a violation fails the case."""
    def expected(ins, attrs):
        x, axis, kth = ins[0], attrs["axis"], attrs["kth"]
        out = getattr(np, op)(x, list(kth), axis=axis)
        values = out if op == "partition" else np.take_along_axis(x, out, axis)
        if op == "argpartition":
            moved = np.moveaxis(out, axis, -1)
            for pos in np.ndindex(*moved.shape[:-1]):
                assert sorted(moved[pos].tolist()) == list(range(moved.shape[-1]))
        full = np.moveaxis(x, axis, -1)
        got = np.moveaxis(values, axis, -1)
        for pos in np.ndindex(*full.shape[:-1]):
            ordered = sorted(full[pos].tolist())
            row = got[pos].tolist()
            for k in kth:
                k %= len(row)
                assert row[k] == ordered[k]
                assert all(v <= row[k] for v in row[:k]) and all(v >= row[k] for v in row[k + 1:])
        return [out.astype(np.int64) if op == "argpartition" else out]
    return expected


@cases("partition", "argpartition")
def partition_cases(op):
    for dtype in ("float32", "float64", "int64", "bool"):
        for i, (shape, axis, kth) in enumerate([((7,), 0, (3,)), ((3, 5), 1, (0, 4)),
                                                ((4, 3), 0, (1, 2)), ((2, 3, 4), 2, (-1,))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"kth": kth, "axis": axis}, _partitioned(op),
                       id=f"{dtype}-{shape}-{axis}-{kth}")
