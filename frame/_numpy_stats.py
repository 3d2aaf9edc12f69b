"""NumPy statistics and array-manipulation functions written with frame's ops,
with NumPy's own signatures (merged into ``NUMPY_FUNCTIONS``).

- ``np.quantile``, ``np.percentile`` (method ``'linear'``, ``q`` a constant
  scalar or 1-D sequence) and ``np.median`` follow NumPy's ``_quantile`` and
  ``_median`` step by step: the reduced axes moved first and merged, a
  ``sort`` along them (NumPy partitions; the values at every index are the
  same), the neighbouring order statistics picked with ``take`` at indices
  computed by NumPy's own arithmetic at trace time (``q`` is a constant),
  NumPy's ``_lerp`` (``a + (b - a) * t``, or ``b - (b - a) * (1 - t)`` where
  ``t >= 0.5``) with NumPy's weight dtype (a Python ``q`` is weak), the median
  as ``mean`` of the middle one or two values, and a slice holding NaN giving
  its last sorted value (NaN).  Differentiable (sort, take, where).
- ``np.cov`` (``rowvar``, ``bias``, ``ddof``, ``dtype``; no weights) and
  ``np.corrcoef`` follow NumPy's order of operations: the rows centred by
  their mean, ``X @ X.T`` multiplied by ``1 / fact``, ``squeeze``; corrcoef
  divides by the square roots of the diagonal as a column then as a row and
  clips to [-1, 1].
- ``np.nansum``, ``np.nanprod``, ``np.nancumsum``, ``np.nancumprod``: NaN
  replaced by 0 (1) and the plain function, as NumPy's ``_replace_nan`` does.
- ``np.nanmax``, ``nanmin``, ``nanargmax``, ``nanargmin``, ``nanmean``,
  ``nanvar``, ``nanstd``, ``nanmedian`` of floating arrays: op ``nan_reduce``
  (frame/ops/stats.py), whose kernel is NumPy's function, so an all-NaN slice
  warns (RuntimeWarning) or raises (ValueError) at run time exactly as NumPy
  does; of integer and bool arrays (no NaN) they are the plain functions.

A use frame does not model (``out=``, another quantile ``method``, ``q``
computed from arrays, ``q`` out of range, which NumPy rejects, ...) raises
``NotModelled``: NumPy runs the call (under capture: a graph break naming the
function).
"""
from __future__ import annotations

import math

import numpy as np

from . import functions as F
from ._numpy_functions import (NotModelled, _axes, _dtype, _int, _ndim, _no_0d_array, _operand,
                               _shape,
                               cumprod, cumsum, np_mean, np_prod, np_sum, std, var)
from .dtypes import as_dtype, float64
from .functions._core import apply1, as_array, schema_attrs
from .functions.reduction import reduction_axes
from .tensor import Tensor

__all__ = ["STATS_FUNCTIONS"]

_NO_VALUE = np._NoValue


def _keepdims(value) -> bool:
    return False if value is _NO_VALUE else bool(value)


# --------------------------------------------------------------------------- quantiles, median

def _merged(x, function: str, axis):
    """NumPy's ``_ureduce`` followed by ``moveaxis(axis, 0)``: the reduced axes
    first (in their order), merged into one; returns (array, kept shape, axes)."""
    shape = _shape(x)
    nd = len(shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(sorted(_axes(function, axis, nd)))
    keep = [i for i in range(nd) if i not in axes]
    kept = tuple(shape[i] for i in keep)
    order = list(axes) + keep
    moved = x if order == list(range(nd)) else F.transpose(x, *order)
    count = math.prod(shape[i] for i in axes)
    return F.reshape(moved, (count,) + kept), kept, axes


def _with_keepdims(result, lead: tuple, shape: tuple, axes: tuple, keepdims: bool):
    if not keepdims:
        return result
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    return F.reshape(result, lead + kept)


def _quantile_q(function: str, q, percent: bool):
    """(q as NumPy's ``_quantile`` sees it, weak_q) for a constant ``q``."""
    if isinstance(q, Tensor):
        raise NotModelled(function, "with q computed from arrays")
    weak = type(q) in (int, float)
    try:
        qa = np.asanyarray(np.true_divide(q, 100) if percent else q)
    except (TypeError, ValueError):
        raise NotModelled(function, f"with q={q!r}") from None
    if qa.dtype.kind not in "biuf" or qa.ndim > 1:
        raise NotModelled(function, f"with q={q!r}")
    if qa.size == 0 or not (qa.min() >= 0 and qa.max() <= 1):
        raise NotModelled(function, f"with q={q!r} (NumPy raises)")
    return qa, weak


def _lerp(a, b, t):
    """NumPy's ``_lerp``: ``a + (b - a) * t``, and ``b - (b - a) * (1 - t)`` where
    ``t >= 0.5`` (``t`` a constant: a Python float or an ndarray)."""
    diff = F.sub(b, a)
    low = F.add(a, F.mul(diff, t))
    if isinstance(t, float):
        if t < 0.5:
            return low
        high = F.sub(b, F.mul(diff, 1 - t))
    else:
        upper = t >= 0.5
        if not upper.any():
            return low
        high = F.sub(b, F.mul(diff, 1 - t))
        if _dtype(high) != _dtype(low):
            high = F.astype(high, as_dtype(_dtype(low)))
        if upper.all():
            return high
        return F.where(upper, high, low)
    if _dtype(high) != _dtype(low):
        high = F.astype(high, as_dtype(_dtype(low)))
    return high


def _quantile(function: str, a, q, axis, out, overwrite_input, method, keepdims, weights,
              percent: bool):
    if out is not None or weights is not None:
        raise NotModelled(function, "with out= or weights=")
    if method != "linear":
        raise NotModelled(function, f"with method={method!r}")
    x = _operand(a, function)
    dt = _dtype(x)
    if dt.kind == "b":
        raise NotModelled(function, "of bools (NumPy's interpolation subtracts them)")
    qa, weak = _quantile_q(function, q, percent)
    shape = _shape(x)
    arr, kept, axes = _merged(x, function, axis)
    n = _shape(arr)[0]
    if n == 0:
        raise NotModelled(function, "of no elements (NumPy raises)")
    arr = apply1("sort", (as_array(arr),), schema_attrs("sort", axis=0, kind="quicksort"))
    vi = np.asanyarray((n - 1) * qa)
    inexact = dt.kind == "f"
    if vi.dtype.kind in "iu":  # integral q: no interpolation
        result = F.take(arr, vi.astype(np.int64), axis=0)
    else:
        prev = np.floor(vi)
        nxt = np.asanyarray(prev + 1)
        prev = np.asanyarray(prev)
        above = vi >= n - 1
        prev[above] = -1
        nxt[above] = -1
        below = vi < 0
        prev[below] = 0
        nxt[below] = 0
        prev_i, next_i = prev.astype(np.intp), nxt.astype(np.intp)
        gamma = np.asanyarray(np.asanyarray(vi - prev_i), dtype=vi.dtype)
        if weak:
            t = float(gamma)
        else:
            t = gamma.reshape(vi.shape + (1,) * len(kept))
        lo = F.take(arr, (prev_i % n).astype(np.int64), axis=0)
        hi = F.take(arr, (next_i % n).astype(np.int64), axis=0)
        result = _lerp(lo, hi, t)
    if inexact:
        last = F.take(arr, np.int64(n - 1), axis=0)
        if _ndim(result) == 0 and _dtype(result) != dt:
            raise NotModelled(function, "of a slice that may hold NaN (NumPy then returns "
                                        "the input's dtype)")
        result = F.where(F.not_equal(last, last), last, result)  # never narrower than last
    return _with_keepdims(result, vi.shape, shape, axes, bool(keepdims))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """``np.quantile`` (method 'linear'): NumPy's ``_quantile`` with a constant ``q``."""
    if interpolation is not None:
        raise NotModelled("quantile", "with interpolation= (deprecated)")
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """``np.percentile`` (method 'linear'): ``np.quantile`` at ``q / 100``."""
    if interpolation is not None:
        raise NotModelled("percentile", "with interpolation= (deprecated)")
    return _quantile("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     True)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.median``: NumPy's ``_median``: the mean of the middle one or two sorted
    values, NaN for a slice holding NaN."""
    if out is not None:
        raise NotModelled("median", "with out=")
    x = _operand(a, "median")
    shape = _shape(x)
    if not shape:
        raise NotModelled("median", "of a 0-d array (NumPy returns a Python scalar)")
    arr, kept, axes = _merged(x, "median", axis)
    n = _shape(arr)[0]
    if n == 0:
        raise NotModelled("median", "of no elements (NumPy warns and returns nan)")
    arr = apply1("sort", (as_array(arr),), schema_attrs("sort", axis=0, kind="quicksort"))
    middle = np.arange(n // 2 - 1 + n % 2, n // 2 + 1, dtype=np.int64)
    result = F.mean(F.take(arr, middle, axis=0), axis=0)
    if _dtype(x).kind == "f":
        last = F.take(arr, np.int64(n - 1), axis=0)
        result = F.where(F.not_equal(last, last), last, result)
    return _with_keepdims(result, (), shape, axes, bool(keepdims))


# --------------------------------------------------------------------------- cov, corrcoef

def _cov_rows(function: str, m, y, rowvar, dtype):
    """NumPy's ``cov`` up to the concatenation: X as 2-D rows of variables in
    ``dtype`` (float64 unless given)."""
    x = _operand(m, function)
    if _ndim(x) > 2:
        raise NotModelled(function, "of an array of more than 2 dimensions (NumPy raises)")
    yy = None
    if y is not None:
        yy = _operand(y, function)
        if _ndim(yy) > 2:
            raise NotModelled(function, "of y of more than 2 dimensions (NumPy raises)")
    if dtype is None:
        dt = np.result_type(_dtype(x), np.float64) if yy is None else \
            np.result_type(_dtype(x), _dtype(yy), np.float64)
    else:
        dt = np.dtype(dtype)
        if dt.kind != "f" or dt == np.float16:
            raise NotModelled(function, f"with dtype={dt}")

    def rows(v, transpose):
        if _dtype(v) != dt:
            v = F.astype(v, as_dtype(dt))
        if _ndim(v) < 2:
            v = F.reshape(v, (1,) * (2 - _ndim(v)) + _shape(v))
        return F.transpose(v, 1, 0) if transpose else v

    X = rows(x, not rowvar and _ndim(x) != 1)
    if _shape(X)[0] == 0:
        raise NotModelled(function, "of no variables (NumPy returns an empty array)")
    if yy is not None:
        Y = rows(yy, False)
        Y = F.transpose(Y, 1, 0) if (not rowvar and _shape(Y)[0] != 1) else Y
        if _shape(Y)[1] != _shape(X)[1]:
            raise NotModelled(function, "of x and y with different numbers of observations "
                                        "(NumPy raises)")
        X = F.concat([X, Y], 0)
    return X, dt


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """``np.cov`` without weights: NumPy's order of operations."""
    if fweights is not None or aweights is not None:
        raise NotModelled("cov", "with fweights= or aweights=")
    if ddof is not None and not _int(ddof):
        raise NotModelled("cov", f"with ddof={ddof!r} (NumPy raises)")
    X, dt = _cov_rows("cov", m, y, rowvar, dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    fact = _shape(X)[1] - int(ddof)
    if fact <= 0:
        raise NotModelled("cov", "with degrees of freedom <= 0 (NumPy warns)")
    X = F.sub(X, F.mean(X, axis=1, keepdims=True))
    c = F.matmul(X, F.transpose(X, 1, 0))
    c = F.mul(c, np.true_divide(1, fact))  # c *= 1 / fact: in float64, stored in dt
    if _dtype(c) != dt:
        c = F.astype(c, as_dtype(dt))
    squeezed = tuple(d for d in _shape(c) if d != 1)
    _no_0d_array("cov", squeezed)
    return F.reshape(c, squeezed) if squeezed != _shape(c) else c


def corrcoef(x, y=None, rowvar=True, bias=_NO_VALUE, ddof=_NO_VALUE, *, dtype=None):
    """``np.corrcoef``: ``cov`` divided by the standard deviations (as a column,
    then as a row), clipped to [-1, 1]."""
    if bias is not _NO_VALUE or ddof is not _NO_VALUE:
        raise NotModelled("corrcoef", "with bias= or ddof= (deprecated)")
    c = cov(x, y, rowvar, dtype=dtype)
    n = _shape(c)[0]
    d = F.take(F.reshape(c, (n * n,)), np.arange(n, dtype=np.int64) * (n + 1), axis=0)
    stddev = F.sqrt(d)
    c = F.div(c, F.reshape(stddev, (n, 1)))
    c = F.div(c, F.reshape(stddev, (1, n)))
    return F.clip(c, -1, 1)


# --------------------------------------------------------------------------- NaN-ignoring functions

def _replace_nan(x, value):
    """NumPy's ``_replace_nan``: floats with NaN replaced by ``value``."""
    if _dtype(x).kind != "f":
        return x
    return F.where(F.not_equal(x, x), np.asarray(value, _dtype(x)), x)


def nansum(a, axis=None, dtype=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE,
           where=_NO_VALUE):
    """``np.nansum``: ``np.sum`` with NaN counted as zero."""
    x = _replace_nan(_operand(a, "nansum"), 0)
    return np_sum(x, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE,
            where=_NO_VALUE):
    """``np.nanprod``: ``np.prod`` with NaN counted as one."""
    x = _replace_nan(_operand(a, "nanprod"), 1)
    return np_prod(x, axis, dtype, out, keepdims, initial, where)


def nancumsum(a, axis=None, dtype=None, out=None):
    """``np.nancumsum``: ``np.cumsum`` with NaN counted as zero."""
    return cumsum(_replace_nan(_operand(a, "nancumsum"), 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``np.nancumprod``: ``np.cumprod`` with NaN counted as one."""
    return cumprod(_replace_nan(_operand(a, "nancumprod"), 1), axis, dtype, out)


def _nan_reduce(function: str, a, axis, keepdims, ddof=0, single_axis=False):
    """Op ``nan_reduce``: NumPy's ``np.<function>`` as the kernel."""
    x = _operand(a, function)
    nd = _ndim(x)
    if axis is None:
        axes, flat = tuple(range(nd)), True
    elif single_axis:
        if not _int(axis):
            raise NotModelled(function, f"with axis={axis!r}")
        axes, flat = reduction_axes(function, axis, nd), False
    else:
        axes, flat = reduction_axes(function, axis, nd), False
    attrs = schema_attrs("nan_reduce", function=function, axes=axes, flat=flat,
                         keepdims=bool(keepdims), ddof=float(ddof))
    return apply1("nan_reduce", (as_array(x),), attrs)


def _no(function: str, **given) -> None:
    for name, (value, default) in given.items():
        if not (value is default or (default is _NO_VALUE and value is True and
                                     name == "where")):
            raise NotModelled(function, f"with {name}=")


def _nan_extremum(function: str, plain, a, axis, out, keepdims, initial, where):
    _no(function, out=(out, None), initial=(initial, _NO_VALUE), where=(where, _NO_VALUE))
    x = _operand(a, function)
    if _dtype(x).kind != "f":
        return plain(x, axis=axis, keepdims=_keepdims(keepdims))
    return _nan_reduce(function, x, axis, _keepdims(keepdims))


def nanmax(a, axis=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE, where=_NO_VALUE):
    """``np.nanmax``: NumPy's own kernel (an all-NaN slice warns and gives NaN)."""
    return _nan_extremum("nanmax", F.max, a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=_NO_VALUE, initial=_NO_VALUE, where=_NO_VALUE):
    """``np.nanmin``: NumPy's own kernel (an all-NaN slice warns and gives NaN)."""
    return _nan_extremum("nanmin", F.min, a, axis, out, keepdims, initial, where)


def _nan_arg(function: str, plain, a, axis, out, keepdims):
    _no(function, out=(out, None))
    x = _operand(a, function)
    kd = _keepdims(keepdims)
    if _dtype(x).kind != "f":
        return plain(x, axis=axis, keepdims=kd)
    return _nan_reduce(function, x, axis, kd, single_axis=True)


def nanargmax(a, axis=None, out=None, *, keepdims=_NO_VALUE):
    """``np.nanargmax``: NumPy's own kernel (an all-NaN slice raises ValueError)."""
    return _nan_arg("nanargmax", F.argmax, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=_NO_VALUE):
    """``np.nanargmin``: NumPy's own kernel (an all-NaN slice raises ValueError)."""
    return _nan_arg("nanargmin", F.argmin, a, axis, out, keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=_NO_VALUE, *, where=_NO_VALUE):
    """``np.nanmean``: NumPy's own kernel (an all-NaN slice warns and gives NaN)."""
    _no("nanmean", dtype=(dtype, None), out=(out, None), where=(where, _NO_VALUE))
    x = _operand(a, "nanmean")
    if _dtype(x).kind != "f":
        return np_mean(x, axis=axis, keepdims=keepdims)
    return _nan_reduce("nanmean", x, axis, _keepdims(keepdims))


def _nan_var(function: str, plain, a, axis, dtype, out, ddof, keepdims, where, mean,
             correction):
    _no(function, dtype=(dtype, None), out=(out, None), where=(where, _NO_VALUE),
        mean=(mean, _NO_VALUE), correction=(correction, _NO_VALUE))
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or \
            isinstance(ddof, (bool, np.bool_)):
        raise NotModelled(function, f"with ddof={ddof!r}")
    x = _operand(a, function)
    if _dtype(x).kind != "f":
        return plain(x, axis=axis, ddof=ddof, keepdims=_keepdims(keepdims))
    return _nan_reduce(function, x, axis, _keepdims(keepdims), ddof=ddof)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO_VALUE, *, where=_NO_VALUE,
           mean=_NO_VALUE, correction=_NO_VALUE):
    """``np.nanvar``: NumPy's own kernel (too few values in a slice warn)."""
    return _nan_var("nanvar", var, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO_VALUE, *, where=_NO_VALUE,
           mean=_NO_VALUE, correction=_NO_VALUE):
    """``np.nanstd``: NumPy's own kernel (too few values in a slice warn)."""
    return _nan_var("nanstd", std, a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=_NO_VALUE):
    """``np.nanmedian``: NumPy's own kernel (an all-NaN slice warns and gives NaN)."""
    _no("nanmedian", out=(out, None))
    x = _operand(a, "nanmedian")
    if not _shape(x):
        raise NotModelled("nanmedian", "of a 0-d array")
    if _dtype(x).kind != "f":
        return median(x, axis=axis, keepdims=_keepdims(keepdims))
    if axis is not None:
        _axes("nanmedian", axis, _ndim(x))
    return _nan_reduce("nanmedian", x, axis, _keepdims(keepdims))


STATS_FUNCTIONS: dict = {
    np.quantile: quantile, np.percentile: percentile, np.median: median,
    np.cov: cov, np.corrcoef: corrcoef,
    np.nansum: nansum, np.nanprod: nanprod, np.nancumsum: nancumsum, np.nancumprod: nancumprod,
    np.nanmax: nanmax, np.nanmin: nanmin, np.nanargmax: nanargmax, np.nanargmin: nanargmin,
    np.nanmean: nanmean, np.nanvar: nanvar, np.nanstd: nanstd, np.nanmedian: nanmedian,
}
