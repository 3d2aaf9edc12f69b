"""NumPy statistics and array-manipulation functions written with frame's ops,
with NumPy's own signatures (merged into ``NUMPY_FUNCTIONS``).

- ``np.quantile``, ``np.percentile`` (every ``method`` of NumPy's, ``q`` a
  constant scalar or 1-D sequence) and ``np.median`` follow NumPy's ``_quantile`` and
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

- ``np.searchsorted`` and ``np.interp``: ops of those names (NumPy's own
  kernels); ``np.digitize`` (constant bins) is NumPy's ``searchsorted`` of
  the values in the bins; ``np.isin`` compares with every test element;
  ``np.histogram`` (int ``bins``, constant ``range``) is NumPy's equal-width
  binning step by step, counted per bin; ``np.bincount`` of unsigned values
  with ``minlength`` above the dtype's largest value (its length is then
  ``minlength``): op ``scatter_add``.
- ``np.cross``, ``np.kron``, ``np.trapezoid``, ``np.gradient``,
  ``np.ediff1d``, ``np.convolve``, ``np.linalg.matrix_power``: NumPy's
  formulas and order of operations with elementwise ops, slices, ``take`` and
  ``matmul``.
- ``np.select`` and ``np.piecewise`` (constant values): ``where`` from the
  last condition to the first, in NumPy's result dtype.
- ``np.append``, ``np.insert``, ``np.delete``, ``np.resize``, ``np.block``:
  one ``take`` of the joined flattened operands at positions NumPy computes at
  trace time on arrays of labels (``_layout``), so shapes, broadcasting and
  index rules are NumPy's own.  ``np.partition``/``np.argpartition``: ops
  with NumPy's introselect as the kernel; ``np.lexsort``: stable argsorts.

A use frame does not model (``out=``, another quantile ``method``, ``q``
computed from arrays, ``q`` out of range, which NumPy rejects, ...) raises
``NotModelled``: NumPy runs the call (under capture: a graph break naming the
function).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import functions as F
from ._numpy_functions import (NotModelled, _axes, _cut, _dtype, _flat, _int, _ndim, _no_0d_array,
                               _operand, _shape, argsort, diff, sort,
                               cumprod, cumsum, np_mean, np_prod, np_sum, std, var)
from ._numpy_indices import checked, linspace
from .dtypes import as_dtype, float64, int64
from .functions._core import apply1, as_array, known_value, schema_attrs
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
        q = _known(q, function, "q")
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


def _gamma_mask(shape, default, conditioned, where) -> np.ndarray:
    """NumPy's ``_get_gamma_mask``."""
    out = np.full(shape, default)
    np.copyto(out, conditioned, where=where, casting="unsafe")
    return out


def _to_boundaries(index, condition) -> np.ndarray:
    """NumPy's ``_discrete_interpolation_to_boundaries``: the order statistic below
    ``index`` where ``condition(gamma, index)``, the one above elsewhere."""
    previous = np.floor(index)
    res = _gamma_mask(np.shape(index), previous + 1, previous,
                      condition(index - previous, index)).astype(np.intp)
    res[res < 0] = 0
    return res


def _continuous(alpha: float, beta: float):
    """NumPy's ``_compute_virtual_index`` for Hyndman and Fan's ``alpha``, ``beta``."""
    return lambda n, q: n * q + (alpha + q * (1 - alpha - beta)) - 1


def _identity_gamma(gamma, index):
    return gamma


# NumPy's quantile methods (its ``_QuantileMethods``, written out again: the table is
# private to NumPy): method -> (virtual index of (n, q), gamma correction or None for
# the methods whose index is an integer and which take without interpolating).  The
# index and gamma are NumPy's arithmetic on the constant q, run at trace time.
QUANTILE_METHODS = {
    "inverted_cdf": (lambda n, q: _to_boundaries(n * q - 1, lambda g, _: g == 0), None),
    "averaged_inverted_cdf": (lambda n, q: n * q - 1,
                              lambda g, _: _gamma_mask(g.shape, 1.0, 0.5, g == 0)),
    "closest_observation": (
        lambda n, q: _to_boundaries(n * q - 1 - 0.5, lambda g, i: (g == 0) & (np.floor(i) % 2 == 1)),
        None),
    "interpolated_inverted_cdf": (_continuous(0, 1), _identity_gamma),
    "hazen": (_continuous(0.5, 0.5), _identity_gamma),
    "weibull": (_continuous(0, 0), _identity_gamma),
    "linear": (lambda n, q: (n - 1) * q, _identity_gamma),
    "median_unbiased": (_continuous(1 / 3.0, 1 / 3.0), _identity_gamma),
    "normal_unbiased": (_continuous(3 / 8.0, 3 / 8.0), _identity_gamma),
    "lower": (lambda n, q: np.floor((n - 1) * q).astype(np.intp), None),
    "higher": (lambda n, q: np.ceil((n - 1) * q).astype(np.intp), None),
    "midpoint": (lambda n, q: 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)),
                 lambda g, i: _gamma_mask(g.shape, 0.5, 0.0, i % 1 == 0)),
    "nearest": (lambda n, q: np.around((n - 1) * q).astype(np.intp), None),
}


def _quantile(function: str, a, q, axis, out, overwrite_input, method, keepdims, weights,
              percent: bool):
    if out is not None or weights is not None:
        raise NotModelled(function, "with out= or weights=")
    if not isinstance(method, str) or method not in QUANTILE_METHODS:
        raise NotModelled(function, f"with method={method!r} (NumPy raises)")
    virtual_index, fix_gamma = QUANTILE_METHODS[method]
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
    vi = np.asanyarray(virtual_index(n, qa))
    inexact = dt.kind == "f"
    if fix_gamma is None or (method == "linear" and vi.dtype.kind in "iu"):
        result = F.take(arr, vi.astype(np.int64), axis=0)   # no interpolation
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
        gamma = np.asanyarray(fix_gamma(np.asanyarray(vi - prev_i), vi), dtype=vi.dtype)
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
    """``np.quantile``: NumPy's ``_quantile`` with a constant ``q`` (any method)."""
    if interpolation is not None:
        raise NotModelled("quantile", "with interpolation= (deprecated)")
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
                     False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    """``np.percentile``: ``np.quantile`` at ``q / 100``."""
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
    c = cov_matrix(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    squeezed = tuple(d for d in _shape(c) if d != 1)
    _no_0d_array("cov", squeezed)
    return F.reshape(c, squeezed) if squeezed != _shape(c) else c


def cov_matrix(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
               dtype=None):
    """``np.cov`` before NumPy squeezes its result (a single variable's
    variance is a (1, 1) matrix here, NumPy's 0-d array: capture gives it
    that kind, ``capture/variables/numpy_layout.py``)."""
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
    return c


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



# --------------------------------------------------------------------------- searching, binning

def _known(value: Tensor, function: str, what: str) -> np.ndarray:
    """A Tensor parameter that must be a constant: its value when the function
    made it from constants under capture (``np.array([0., 1.])``,
    ``np.linspace(0, 100, 5)``), else ``NotModelled``."""
    known = known_value(value)
    if known is None:
        raise NotModelled(function, f"with {what} computed from arrays")
    return known


def _constant(value, function: str, what: str) -> np.ndarray:
    """A trace-time constant array (not computed from traced arrays)."""
    if isinstance(value, Tensor):
        value = _known(value, function, what)
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise NotModelled(function, f"with {what} of {arr.dtype} values")
    return arr


def searchsorted(a, v, side="left", sorter=None):
    """``np.searchsorted``: op ``searchsorted`` (NumPy's binary search); a
    ``sorter`` picks ``a``'s elements in its order first (``take``)."""
    if side not in ("left", "right"):
        raise NotModelled("searchsorted", f"with side={side!r}")
    x = _operand(a, "searchsorted")
    if _ndim(x) != 1:
        raise NotModelled("searchsorted", "of an array that is not 1-D (NumPy raises)")
    if sorter is not None:
        order = _operand(sorter, "searchsorted")
        if _dtype(order).kind not in "iu" or _shape(order) != _shape(x):
            raise NotModelled("searchsorted", "with a sorter of another shape or dtype "
                                              "(NumPy raises)")
        if not isinstance(order, Tensor):
            order = np.asarray(order)
            if order.size and (order.min() < -order.size or order.max() >= order.size):
                raise NotModelled("searchsorted", "with a sorter index out of range "
                                                  "(NumPy raises)")
        x = F.take(x, order, axis=0)
    values = _operand(v, "searchsorted")
    return apply1("searchsorted", (as_array(x), as_array(values)),
                  schema_attrs("searchsorted", side=side))


def _traced_digitize(values, b, side: str):
    """``np.digitize`` with bins computed in the graph (``np.quantile`` edges):
    NumPy's monotonicity test (``_monotonicity``: equal leading bins skipped,
    the first other pair gives the direction, a NaN there makes it neither;
    after it a NaN compares as in order) as ops, both searches, and a ``take``
    whose run-time bounds check fails where the bins are neither increasing
    nor decreasing (NumPy raises ValueError; the call then runs natively)."""
    def some(mask):
        return F.greater(F.sum(F.astype(mask, int64)), 0)
    n = _shape(b)[0]
    if n < 2:   # NumPy: one bin is increasing, NaN or not
        return searchsorted(b, values, side=side)
    head, rest = b[:1], b[1:]
    differs = F.not_equal(rest, head)
    first = F.take(rest, F.argmax(differs), axis=0)
    leading = F.reshape(head, ())
    has_pair = some(differs)
    up_ok = F.logical_not(some(F.greater(b[:-1], b[1:])))
    down_ok = F.logical_not(some(F.less(b[:-1], b[1:])))
    increasing = F.logical_or(F.logical_not(has_pair), F.logical_and(F.less(leading, first), up_ok))
    decreasing = F.logical_and(has_pair, F.logical_and(F.greater(leading, first), down_ok))
    monotonic = F.logical_or(increasing, decreasing)
    up = searchsorted(b, values, side=side)
    down = F.sub(n, searchsorted(b[::-1], values, side=side))
    return checked(F.where(decreasing, down, up), F.logical_not(monotonic), "digitize")


def digitize(x, bins, right=False):
    """``np.digitize`` with constant bins: NumPy's ``searchsorted`` of the values
    in the bins (reversed for decreasing bins); with bins computed from arrays,
    ``_traced_digitize``."""
    values = _operand(x, "digitize")
    if isinstance(bins, Tensor) and known_value(bins) is None:
        if _dtype(values).kind == "c" or _dtype(bins).kind not in "biuf" or _ndim(bins) != 1:
            raise NotModelled("digitize", "of complex values or with bins that are not 1-D")
        return _traced_digitize(values, bins, "left" if right else "right")
    b = _constant(bins, "digitize", "bins")
    if _dtype(values).kind == "c" or b.ndim != 1:
        raise NotModelled("digitize", "of complex values or with bins that are not 1-D")
    if b.size > 1:
        delta = np.diff(b)
        increasing, decreasing = bool(np.all(delta >= 0)), bool(np.all(delta <= 0))
    else:
        increasing, decreasing = True, False
    if not (increasing or decreasing):
        raise NotModelled("digitize", "with bins that are not monotonic (NumPy raises)")
    side = "left" if right else "right"
    if increasing:
        return searchsorted(b, values, side=side)
    return F.sub(b.size, searchsorted(b[::-1].copy(), values, side=side))


def interp(x, xp, fp, left=None, right=None, period=None):
    """``np.interp`` of real values: op ``interp`` (NumPy's kernel)."""
    attrs = {}
    for name, value in (("left", left), ("right", right), ("period", period)):
        if value is None:
            continue
        if not isinstance(value, (int, float, np.integer, np.floating)) or \
                isinstance(value, (bool, np.bool_)):
            raise NotModelled("interp", f"with {name}={value!r}")
        attrs[name] = float(value)
        if name != "period":
            attrs[f"has_{name}"] = True
    if attrs.get("period") == 0.0:
        raise NotModelled("interp", "with period=0 (NumPy raises)")
    arrays = [_operand(v, "interp") for v in (x, xp, fp)]
    sx, sxp, sfp = (_shape(v) for v in arrays)
    if len(sxp) != 1 or len(sfp) != 1 or sxp != sfp or not sxp[0]:
        raise NotModelled("interp", "with xp and fp that are not 1-D of one non-zero length "
                                    "(NumPy raises)")
    return apply1("interp", tuple(as_array(v) for v in arrays), schema_attrs("interp", **attrs))


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """``np.isin``: each element compared with every test element."""
    if kind is not None:
        raise NotModelled("isin", f"with kind={kind!r}")
    x = _operand(element, "isin")
    tests = _flat(_operand(test_elements, "isin"))
    shape = _shape(x)
    if _shape(tests)[0] == 0:
        found = F.full(shape, bool(invert), as_dtype(np.dtype(bool)))
        return found if shape else F.reshape(found, ())
    equal = F.equal(F.reshape(x, shape + (1,)), tests)
    found = F.greater(F.sum(equal, axis=-1), 0)
    return F.logical_not(found) if invert else found


_HISTOGRAM_BLOCK = 65536   # NumPy's block: weighted sums are per block, then added


def _histogram_weights(weights, x):
    """(ntype, weights as float64 or None): NumPy's count type (intp, or the
    weights' dtype) and the weights it sums (``bincount`` sums float64)."""
    if weights is None:
        return np.dtype(np.int64), None
    w = _flat(_operand(weights, "histogram"))
    wt = _dtype(w)
    if _shape(w) != _shape(x):
        raise NotModelled("histogram", "with weights of another shape (NumPy raises)")
    if wt.kind not in "biuf" or not np.can_cast(wt, np.double):
        raise NotModelled("histogram", f"with {wt} weights")
    if _shape(x)[0] > _HISTOGRAM_BLOCK:
        raise NotModelled("histogram", "with weights of more than one of NumPy's blocks")
    return wt, w


def _histogram_density(n, edges):
    """NumPy's ``n / db / n.sum()`` with ``db`` the edges' widths as float64."""
    db = F.astype(diff(edges), float64) if isinstance(edges, Tensor) else \
        np.array(np.diff(edges), float)
    return F.div(F.div(n, db), F.sum(n))


def _histogram_edges(x, edges, ntype, w):
    """NumPy's cumulative histogram for explicit edges: the sorted values (and
    weights, by ``argsort``) searched for each edge, the last one inclusive."""
    if w is None:
        sa = sort(x)
        cum = F.concat([searchsorted(sa, edges[:-1], side="left"),
                        searchsorted(sa, edges[-1:], side="right")], axis=0)
        return F.sub(cum[1:], cum[:-1])
    if ntype.kind != "f":
        raise NotModelled("histogram", f"with {ntype} weights and explicit edges")
    order = argsort(x)
    sa, sw = F.take(x, order, axis=0), F.take(w, order, axis=0)
    cw = F.concat([np.zeros(1, ntype), cumsum(sw)], axis=0)
    index = F.concat([searchsorted(sa, edges[:-1], side="left"),
                      searchsorted(sa, edges[-1:], side="right")], axis=0)
    cum = F.add(np.zeros(edges.shape, ntype), F.take(cw, index, axis=0))
    return F.sub(cum[1:], cum[:-1])


def _traced_edges_histogram(x, edges, ntype, w, density):
    """``np.histogram(a, bins=edges)`` with edges computed in the graph (the
    edges of an earlier histogram): NumPy raises ValueError unless they
    increase (NaN compares as in order), checked at run time by a ``take``
    that fails there (the call then runs natively)."""
    et = _dtype(edges)
    if _ndim(edges) != 1 or _shape(edges)[0] < 1 or et.kind not in "iuf":
        raise NotModelled("histogram", "with bins computed from arrays that are not 1-D numbers")
    if _shape(edges)[0] > 1:
        bad = F.greater(F.sum(F.astype(F.greater(edges[:-1], edges[1:]), int64)), 0)
        edges = checked(edges, bad, "histogram")
    counts = _histogram_edges(x, edges, ntype, w)
    return (_histogram_density(counts, edges) if density else counts), edges


def _uniform_counts(xs, first, last, denom, edges, n: int, keep, ntype, w):
    """NumPy's equal-width binning (``first``/``last``/``denom`` constants or
    traced 0-d tensors of the edges' dtype): the index ``(a - first) / denom *
    bins`` truncated and corrected against the edges, the last bin closed,
    counted (or the weights summed, in order, as ``bincount``) per bin."""
    offsets = F.sub(xs, first)
    if _dtype(offsets) != _dtype(edges):
        offsets = F.astype(offsets, as_dtype(_dtype(edges)))
    f_indices = F.mul(F.div(offsets, denom), n)
    indices = F.astype(f_indices, as_dtype(np.dtype(np.int64)))
    indices = F.where(F.equal(indices, n), n - 1, indices)
    indices = F.where(F.less(xs, F.take(edges, indices, axis=0)), F.sub(indices, 1), indices)
    increment = F.logical_and(F.greater_equal(xs, F.take(edges, F.add(indices, 1), axis=0)),
                              F.not_equal(indices, n - 1))
    indices = F.where(increment, F.add(indices, 1), indices)
    if w is None:
        hits = F.equal(F.reshape(indices, (-1, 1)), np.arange(n, dtype=np.int64))
        if keep is not None:
            hits = F.logical_and(hits, F.reshape(keep, (-1, 1)))
        return F.sum(hits, axis=0)
    updates = F.astype(w, float64)
    if keep is not None:   # a dropped value adds -0.0 to bin 0: no change to any sum
        updates = F.where(keep, updates, -0.0)
    base = F.full((n,), 0, dtype=float64)
    sums = apply1("scatter_add", (as_array(base), as_array(indices), as_array(updates)), {"axis": 0})
    return sums if ntype == np.float64 else F.astype(sums, as_dtype(ntype))


def _auto_range_histogram(x, n: int, ntype, w):
    """``np.histogram(a, bins=n)`` of floats: the edges ``np.linspace(a.min(),
    a.max(), n + 1)`` (widened by 0.5 each way when equal) in the graph;
    NumPy raises for a range that is not finite (NaN or inf in the data): a
    ``take`` whose run-time bounds check fails there (the call then runs
    natively)."""
    dt = _dtype(x)
    lo, hi = F.min(x), F.max(x)
    finite = F.logical_and(F.less(F.abs(lo), math.inf), F.less(F.abs(hi), math.inf))
    lo = checked(lo, F.logical_not(finite), "histogram")
    same = F.equal(lo, hi)
    first = F.where(same, F.sub(lo, 0.5), lo)
    last = F.where(same, F.add(hi, 0.5), hi)
    edges = linspace(first, last, n + 1, endpoint=True, dtype=dt)
    counts = _uniform_counts(x, first, last, F.sub(last, first), edges, n, None, ntype, w)
    return counts, edges


def histogram(a, bins=10, range=None, density=None, weights=None):
    """``np.histogram`` written with NumPy's own steps: a number of bins with a
    constant range (equal-width binning, the values outside the range dropped)
    or, for float data, the data's range (``_auto_range_histogram``); explicit
    constant edges (the cumulative histogram: sorted values searched per edge);
    ``weights=`` (summed in NumPy's order, one block of 65536 values at most)
    and ``density=``.  The edges are NumPy's own."""
    x = _flat(_operand(a, "histogram"))
    dt = _dtype(x)
    if dt.kind not in "iuf":
        raise NotModelled("histogram", f"of {dt} values")
    ntype, w = _histogram_weights(weights, x)
    if isinstance(bins, Tensor) and known_value(bins) is None:
        return _traced_edges_histogram(x, bins, ntype, w, density)
    if isinstance(bins, Tensor):
        bins = known_value(bins)
    if not _int(bins):
        edges = np.asarray(bins)
        if edges.ndim != 1 or edges.dtype.kind not in "iuf" or edges.size < 1 or \
                bool(np.any(edges[:-1] > edges[1:])):
            raise NotModelled("histogram", f"with bins={bins!r}")
        counts = _histogram_edges(x, edges, ntype, w)
        return (_histogram_density(counts, edges) if density else counts), F.reshape(edges, edges.shape)
    if int(bins) < 1:
        raise NotModelled("histogram", f"with bins={bins!r}")
    n = int(bins)
    if range is None:
        if dt.kind != "f" or _shape(x)[0] == 0:
            raise NotModelled("histogram", "without range= of integers or of no values")
        counts, edges = _auto_range_histogram(x, n, ntype, w)
        return (_histogram_density(counts, edges) if density else counts), edges
    if isinstance(range, Tensor):
        raise NotModelled("histogram", "with a range computed from arrays")
    try:
        first, last = range
        if isinstance(first, Tensor) or isinstance(last, Tensor):
            raise TypeError
        with np.errstate(all="ignore"):
            _, edges = np.histogram(np.empty(0, dt), bins=n, range=(first, last))
    except (TypeError, ValueError):
        raise NotModelled("histogram", f"with range={range!r} (NumPy raises)") from None
    if first == last:
        first, last = first - 0.5, last + 0.5
    keep = F.logical_and(F.greater_equal(x, first), F.less_equal(x, last))
    xs = x if dt == edges.dtype else F.astype(x, as_dtype(edges.dtype))
    xs = F.where(keep, xs, edges[:1])  # dropped values: bin 0, not counted
    unsigned_subtract = np.lib._histograms_impl._unsigned_subtract
    denom = np.asarray(unsigned_subtract(last, first))
    if denom.dtype.kind == "u":
        denom = denom.astype(np.float64)
    first_ = first if type(first) in (int, float) else np.asarray(first)
    counts = _uniform_counts(xs, first_, last, denom, edges, n, keep, ntype, w)
    return (_histogram_density(counts, edges) if density else counts), F.reshape(edges, edges.shape)


def bincount(x, weights=None, minlength=0):
    """``np.bincount`` when its length does not depend on the values: ``x`` of an
    unsigned dtype (or bool) whose largest value is below ``minlength``, as an
    image histogram's ``np.bincount(img.ravel(), minlength=256)`` of uint8
    pixels.  Counted with op ``scatter_add`` (NumPy's ``add.at``: the weights,
    as float64, summed in the order of ``x``, as bincount sums them)."""
    if not _int(minlength) or int(minlength) < 0:
        raise NotModelled("bincount", f"with minlength={minlength!r}")
    arr = _operand(x, "bincount")
    dt = _dtype(arr)
    if _ndim(arr) != 1:
        raise NotModelled("bincount", "of an array that is not 1-D (NumPy raises)")
    bound = 2 if dt.kind == "b" else int(np.iinfo(dt).max) + 1 if dt.kind == "u" else None
    if bound is None or bound > int(minlength):
        raise NotModelled("bincount", "whose length depends on the values (modelled: unsigned "
                                      "values, minlength above the dtype's largest value)")
    index = F.astype(arr, as_dtype("int64"))
    if weights is None:
        counts = as_dtype("int64")
        updates = F.full(_shape(arr), 1, dtype=counts)
    else:
        w = _operand(weights, "bincount")
        if _shape(w) != _shape(arr):
            raise NotModelled("bincount", "with weights of another shape (NumPy raises)")
        counts = float64
        updates = F.astype(w, float64)
    base = F.full((int(minlength),), 0, dtype=counts)
    return apply1("scatter_add", (as_array(base), as_array(index), as_array(updates)), {"axis": 0})


# --------------------------------------------------------------------------- calculus, products

def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` of 3-vectors: NumPy's three products and differences."""
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _operand(a, "cross"), _operand(b, "cross")
    if _ndim(x) < 1 or _ndim(y) < 1:
        raise NotModelled("cross", "of a 0-d array (NumPy raises)")
    x = F.transpose(x, *_to_end(_axis_of("cross", axisa, _ndim(x)), _ndim(x)))
    y = F.transpose(y, *_to_end(_axis_of("cross", axisb, _ndim(y)), _ndim(y)))
    if _shape(x)[-1] != 3 or _shape(y)[-1] != 3:
        raise NotModelled("cross", "of vectors that are not 3-D (NumPy warns or raises)")
    dt = np.promote_types(_dtype(x), _dtype(y))
    if dt.kind == "b":
        raise NotModelled("cross", "of bools (NumPy raises)")
    x, y = (v if _dtype(v) == dt else F.astype(v, as_dtype(dt)) for v in (x, y))
    xs = [F.take(x, np.int64(i), axis=-1) for i in (0, 1, 2)]
    ys = [F.take(y, np.int64(i), axis=-1) for i in (0, 1, 2)]
    cp = [F.sub(F.mul(xs[1], ys[2]), F.mul(xs[2], ys[1])),
          F.sub(F.mul(xs[2], ys[0]), F.mul(xs[0], ys[2])),
          F.sub(F.mul(xs[0], ys[1]), F.mul(xs[1], ys[0]))]
    shape = np.broadcast_shapes(_shape(xs[0]), _shape(ys[0]))
    cp = [F.broadcast_to(c, shape) if _shape(c) != shape else c for c in cp]
    result = F.stack(cp, axis=-1)
    nd = len(shape) + 1
    c_axis = _axis_of("cross", axisc, nd)
    if c_axis != nd - 1:
        order = list(range(nd - 1))
        order.insert(c_axis, nd - 1)
        result = F.transpose(result, *order)
    return result


def _axis_of(function: str, axis, ndim: int) -> int:
    if not _int(axis) or not -ndim <= int(axis) < ndim:
        raise NotModelled(function, f"with axis {axis!r} of a rank-{ndim} array (NumPy raises)")
    return int(axis) % ndim


def _to_end(axis: int, ndim: int) -> list[int]:
    return [i for i in range(ndim) if i != axis] + [axis]


def kron(a, b):
    """``np.kron``: NumPy 2's broadcast product of interleaved shapes."""
    x, y = _operand(a, "kron"), _operand(b, "kron")
    nda, ndb = _ndim(x), _ndim(y)
    if nda < ndb:
        x = F.reshape(x, (1,) * (ndb - nda) + _shape(x))
        nda = ndb
    if nda == 0 or ndb == 0:
        return F.mul(x, y)
    nd = max(nda, ndb)
    as_ = (1,) * max(0, ndb - nda) + _shape(x)
    bs = (1,) * max(0, nda - ndb) + _shape(y)
    xa = F.reshape(x, tuple(v for d in as_ for v in (d, 1)))
    yb = F.reshape(y, tuple(v for d in bs for v in (1, d)))
    return F.reshape(F.mul(xa, yb), tuple(p * q for p, q in zip(as_, bs)))


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid``: ``(d * (y[1:] + y[:-1]) / 2.0).sum(axis)``."""
    v = _operand(y, "trapezoid")
    nd = _ndim(v)
    ax = _axis_of("trapezoid", axis, nd) if nd else None
    if ax is None:
        raise NotModelled("trapezoid", "of a 0-d array (NumPy raises)")
    if x is None:
        if not isinstance(dx, (int, float, np.integer, np.floating)) or isinstance(dx, bool):
            raise NotModelled("trapezoid", f"with dx={dx!r}")
        d = dx
    else:
        xs = _operand(x, "trapezoid")
        if _ndim(xs) == 1:
            d = F.sub(F.strided_slice(xs, [1], [None], [1]), F.strided_slice(xs, [0], [-1], [1]))
            shape = [1] * nd
            shape[ax] = _shape(d)[0]
            d = F.reshape(d, tuple(shape))
        else:
            d = diff(xs, axis=ax)
    n = _shape(v)[ax]
    upper, lower = _cut(v, ax, 1, None), _cut(v, ax, 0, max(n - 1, 0))
    try:
        np.broadcast_shapes(_shape(d) if not isinstance(d, (int, float, np.number)) else (),
                            _shape(upper))
    except ValueError:
        raise NotModelled("trapezoid", "with x of another shape (NumPy raises)") from None
    return F.sum(F.div(F.mul(d, F.add(upper, lower)), 2.0), axis=ax)


def gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient`` (edge_order 1) with constant spacings: NumPy's central
    differences inside, one-sided differences at the edges."""
    if edge_order != 1:
        raise NotModelled("gradient", f"with edge_order={edge_order!r}")
    v = _operand(f, "gradient")
    nd = _ndim(v)
    axes = tuple(range(nd)) if axis is None else _axes("gradient", axis, nd)
    if _dtype(v).kind == "b":
        raise NotModelled("gradient", "of bools (NumPy raises)")
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len(axes)
    elif n == 1 and np.ndim(varargs[0]) == 0 and not isinstance(varargs[0], Tensor):
        dx = list(varargs) * len(axes)
    elif n == len(axes):
        dx = []
        for i, distances in enumerate(varargs):
            spacing = _constant(distances, "gradient", "spacings")
            if spacing.ndim == 0:
                dx.append(distances)
                continue
            if spacing.ndim != 1 or len(spacing) != _shape(v)[axes[i]]:
                raise NotModelled("gradient", "with spacings of the wrong shape (NumPy raises)")
            if np.issubdtype(spacing.dtype, np.integer):
                spacing = spacing.astype(np.float64)
            diffx = np.diff(spacing)
            if diffx.size and (diffx == diffx[0]).all():
                diffx = diffx[0]
            dx.append(diffx)
    else:
        raise NotModelled("gradient", "with another number of spacings (NumPy raises)")
    if any(isinstance(d, Tensor) for d in dx):
        raise NotModelled("gradient", "with spacings computed from arrays")
    otype = _dtype(v) if _dtype(v).kind == "f" else np.dtype(np.float64)
    if _dtype(v).kind in "iu":
        v = F.astype(v, float64)
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        size = _shape(v)[ax]
        if size < 2:
            raise NotModelled("gradient", "of an axis shorter than 2 (NumPy raises)")
        if np.ndim(ax_dx) == 0:
            inner = F.div(F.sub(_cut(v, ax, 2, None), _cut(v, ax, 0, size - 2)), 2. * ax_dx)
            dx_0 = dx_n = ax_dx
        else:
            dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
            shape = [1] * nd
            shape[ax] = -1
            ca = (-(dx2) / (dx1 * (dx1 + dx2))).reshape(shape)
            cb = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
            cc = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
            inner = F.add(F.add(F.mul(ca, _cut(v, ax, 0, size - 2)),
                                F.mul(cb, _cut(v, ax, 1, size - 1))),
                          F.mul(cc, _cut(v, ax, 2, None)))
            dx_0, dx_n = ax_dx[0], ax_dx[-1]
        first = F.div(F.sub(_cut(v, ax, 1, 2), _cut(v, ax, 0, 1)), dx_0)
        last = F.div(F.sub(_cut(v, ax, size - 1, size), _cut(v, ax, size - 2, size - 1)), dx_n)
        parts = [p if _dtype(p) == otype else F.astype(p, as_dtype(otype))
                 for p in (first, inner, last)]
        outvals.append(F.concat(parts, ax))
    if len(axes) == 1:
        return outvals[0]
    return tuple(outvals)


def ediff1d(ary, to_end=None, to_begin=None):
    """``np.ediff1d``: the differences of the flattened array, with
    ``to_begin``/``to_end`` cast (same_kind) to its dtype around them."""
    x = _flat(_operand(ary, "ediff1d"))
    dt = _dtype(x)
    if dt.kind == "b":
        raise NotModelled("ediff1d", "of bools (NumPy raises)")
    n = _shape(x)[0]
    parts = []
    for extra, name in ((to_begin, "to_begin"), (to_end, "to_end")):
        if extra is None:
            parts.append(None)
            continue
        e = _operand(extra, "ediff1d")
        if not np.can_cast(_dtype(e), dt, casting="same_kind"):
            raise NotModelled("ediff1d", f"with {name} of dtype {_dtype(e)} (NumPy raises)")
        e = _flat(e)
        parts.append(e if _dtype(e) == dt else F.astype(e, as_dtype(dt)))
    d = F.sub(F.strided_slice(x, [1], [None], [1]), F.strided_slice(x, [0], [max(n - 1, 0)], [1]))
    pieces = [p for p in (parts[0], d, parts[1]) if p is not None]
    return pieces[0] if len(pieces) == 1 else F.concat(pieces, 0)


def _convolution_operands(function: str, a, v, mode):
    """The two operands of ``np.convolve``/``np.correlate`` made 1-D (NumPy's
    ``ndmin=1``), or NotModelled where NumPy raises or frame has no op."""
    if mode not in ("full", "same", "valid"):
        raise NotModelled(function, f"in mode {mode!r}")
    xs = [_operand(a, function), _operand(v, function)]
    if any(_ndim(x) > 1 for x in xs):
        raise NotModelled(function, "of an array of rank > 1 (NumPy raises)")
    xs = [_flat(x) if _ndim(x) == 0 else x for x in xs]
    if any(_shape(x)[0] == 0 for x in xs):
        raise NotModelled(function, "of an empty array (NumPy raises)")
    if any(_dtype(x).kind == "b" for x in xs):
        raise NotModelled(function, "of bools")
    return xs


def convolve(a, v, mode="full"):
    """``np.convolve``.  Floats: the ``convolve`` op (frame/ops/contract.py), NumPy's
    own loop (a dot product per window, which no composition rounds alike).
    Integers (exact in any order): NumPy's ``correlate(a, v[::-1], mode)`` (the
    longer operand first) as a gather of shifted windows and one ``matmul``."""
    x, w = _convolution_operands("convolve", a, v, mode)
    if np.result_type(_dtype(x), _dtype(w)).kind == "f":
        return apply1("convolve", (as_array(x), as_array(w)), {"mode": mode})
    if _shape(w)[0] > _shape(x)[0]:
        x, w = w, x
    n, m = _shape(x)[0], _shape(w)[0]
    dt = np.result_type(_dtype(x), _dtype(w))
    x, w = (u if _dtype(u) == dt else F.astype(u, as_dtype(dt)) for u in (x, w))
    left = {"full": m - 1, "same": m // 2, "valid": 0}[mode]
    length = {"full": n + m - 1, "same": n, "valid": n - m + 1}[mode]
    padded = F.concat([F.full((m - 1,), 0, as_dtype(dt)), x, F.full((m - 1,), 0, as_dtype(dt))],
                      0) if m > 1 else x
    starts = np.arange(length, dtype=np.int64) + (m - 1 - left)
    windows = F.take(padded, starts[:, None] + np.arange(m, dtype=np.int64)[None, :], axis=0)
    return F.matmul(windows, F.flip(w, 0))


def correlate(a, v, mode="valid"):
    """``np.correlate`` of real arrays: the ``correlate`` op, NumPy's own loop."""
    x, w = _convolution_operands("correlate", a, v, mode)
    return apply1("correlate", (as_array(x), as_array(w)), {"mode": mode})


def matrix_power(a, n):
    """``np.linalg.matrix_power``: NumPy's binary decomposition of n (inverse first
    for n < 0, the identity for n == 0)."""
    if not _int(n):
        raise NotModelled("linalg.matrix_power", f"with n={n!r} (NumPy raises)")
    n = int(n)
    x = _operand(a, "linalg.matrix_power")
    shape = _shape(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise NotModelled("linalg.matrix_power", "of an array that is not a stack of square "
                                                 "matrices (NumPy raises)")
    if n == 0:
        eye = np.broadcast_to(np.eye(shape[-1], dtype=_dtype(x)), shape).copy()
        return F.add(F.full(shape, 0, as_dtype(_dtype(x))), eye)
    if n < 0:
        x = apply1("inv", (as_array(x),), {})
        n = abs(n)
    if n == 1:
        if x is a:
            raise NotModelled("linalg.matrix_power", "with n=1 (NumPy returns the array itself)")
        return x
    if n == 2:
        return F.matmul(x, x)
    if n == 3:
        return F.matmul(F.matmul(x, x), x)
    z = result = None
    while n > 0:
        z = x if z is None else F.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else F.matmul(result, z)
    return result


# --------------------------------------------------------------------------- selection

def _weak_or_operand(value, function: str):
    """NumPy 2's ``select``: Python int/float stay weak, anything else an array."""
    if type(value) in (int, float):
        return value
    return _operand(value, function)


def _shape_of(value) -> tuple:
    return () if type(value) in (int, float) else _shape(value)


def _dtype_of(value):
    return value if type(value) in (int, float) else _dtype(value)


def select(condlist, choicelist, default=0):
    """``np.select``: the default, overwritten by each choice (last to first)
    where its condition holds."""
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        raise NotModelled("select", "with conditions or choices that are not lists")
    if len(condlist) != len(choicelist) or not condlist:
        raise NotModelled("select", "with different numbers of conditions and choices, or none "
                                    "(NumPy raises)")
    choices = [_weak_or_operand(c, "select") for c in choicelist]
    choices.append(_weak_or_operand(default, "select"))
    conds = [_operand(c, "select") for c in condlist]
    if any(_dtype(c).kind != "b" for c in conds):
        raise NotModelled("select", "with a condition that is not boolean (NumPy raises)")
    try:
        dt = np.result_type(*[_dtype_of(c) for c in choices])
        cond_shape = np.broadcast_shapes(*[_shape(c) for c in conds])
        choice_shape = np.broadcast_shapes(*[_shape_of(c) for c in choices])
        result_shape = cond_shape if not choice_shape else \
            np.broadcast_shapes(cond_shape, choice_shape)
        if np.broadcast_shapes(result_shape, cond_shape, choice_shape) != result_shape:
            raise ValueError
    except (TypeError, ValueError):
        raise NotModelled("select", "with choices or conditions NumPy rejects") from None

    def cast(value):
        if type(value) in (int, float):
            with np.errstate(all="ignore"):
                return np.asarray(value).astype(dt)
        return value if _dtype(value) == dt else F.astype(value, as_dtype(dt))

    result = F.broadcast_to(cast(choices[-1]), result_shape)
    for choice, cond in zip(choices[-2::-1], conds[::-1]):
        result = F.where(cond, cast(choice), result)
    if _shape(result) != result_shape:
        result = F.broadcast_to(result, result_shape)
    return F.reshape(result, result_shape) if result is choices[-1] else result


def piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise`` with constant values (not functions) for the pieces:
    zeros of x's dtype, each value cast into x's dtype where its condition holds
    (later pieces win), NumPy's 'otherwise' piece when one value more is given."""
    v = _operand(x, "piecewise")
    if not isinstance(funclist, (list, tuple)):
        raise NotModelled("piecewise", "with funclist that is not a list")
    if any(callable(fn) for fn in funclist):
        raise NotModelled("piecewise", "with functions (NumPy calls them on the selected "
                                       "elements only)")
    if np.isscalar(condlist) or (not isinstance(condlist, list) and not isinstance(
            condlist, (np.ndarray, Tensor))):
        raise NotModelled("piecewise", "with this condlist")
    if isinstance(condlist, (np.ndarray, Tensor)) or (
            condlist and not isinstance(condlist[0], (list, np.ndarray, Tensor)) and _ndim(v)):
        condlist = [condlist]
    truth = as_dtype(np.dtype(bool))
    conds = []
    for c in condlist:
        c = _operand(c, "piecewise")
        conds.append(c if _dtype(c).kind == "b" else F.astype(c, truth))
    shape = _shape(v)
    if any(np.broadcast_shapes(_shape(c), shape) != shape for c in conds):
        raise NotModelled("piecewise", "with conditions of another shape")
    if len(conds) == len(funclist) - 1:
        taken = conds[0]
        for c in conds[1:]:
            taken = F.logical_or(taken, c)
        conds.append(F.logical_not(taken))
    elif len(conds) != len(funclist):
        raise NotModelled("piecewise", "with mismatched conditions and values (NumPy raises)")
    dt = _dtype(v)
    y = F.full(shape, 0, as_dtype(dt))
    for cond, value in zip(conds, funclist):
        value = np.asarray(value)
        if value.ndim:
            raise NotModelled("piecewise", "with array values")
        with np.errstate(all="ignore"):
            value = value.astype(dt)
        y = F.where(cond, value, y)
    return y



# --------------------------------------------------------------------------- building arrays

def _layout(function: str, arrays: list, arrange, dtype=None):
    """The result of a NumPy function that only moves elements: ``arrange``
    (the NumPy function with the other arguments bound) runs at trace time on
    arrays of labels (each element's position in the concatenation of the
    flattened ``arrays``), and the result is one ``take`` of those positions.
    Shapes, broadcasting, index conventions and errors are NumPy's own; the
    operands are cast to ``dtype`` (default: their result type) first."""
    if dtype is None:
        dtype = np.result_type(*[_dtype(x) for x in arrays])
    labels, offset = [], 0
    for x in arrays:
        size = math.prod(_shape(x))
        labels.append(np.arange(offset, offset + size, dtype=np.int64).reshape(_shape(x)))
        offset += size
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a deprecated use: NumPy warns, and runs it
            positions = np.asarray(arrange(*labels))
    except Exception:  # noqa: BLE001 - NumPy raises (or warns): it runs the call
        raise NotModelled(function, "with these arguments (NumPy raises or warns)") from None
    if positions.dtype != np.int64:
        raise NotModelled(function, "with these arguments")
    _no_0d_array(function, positions.shape)
    flat = [_flat(x if _dtype(x) == dtype else F.astype(x, as_dtype(dtype))) for x in arrays]
    source = flat[0] if len(flat) == 1 else F.concat(flat, 0)
    if positions.size == 0 or offset == 0:  # np.resize of an empty array: zeros
        return F.full(positions.shape, 0, as_dtype(dtype))
    return F.take(source, positions, axis=0)


def append(arr, values, axis=None):
    """``np.append``: both flattened and joined (``axis=None``), or joined along ``axis``."""
    x, v = _operand(arr, "append"), _operand(values, "append")
    return _layout("append", [x, v], lambda p, q: np.append(p, q, axis=axis))


def insert(arr, obj, values, axis=None):
    """``np.insert`` with constant positions: ``values`` cast to ``arr``'s dtype
    and laid out as NumPy lays them out."""
    if isinstance(obj, Tensor):
        obj = _known(obj, "insert", "positions")
    x, v = _operand(arr, "insert"), _operand(values, "insert")
    dt = _dtype(x)
    if _dtype(v) != dt:
        v = F.astype(v, as_dtype(dt))  # NumPy: array(values, dtype=arr.dtype)
    return _layout("insert", [x, v], lambda p, q: np.insert(p, obj, q, axis=axis), dt)


def delete(arr, obj, axis=None):
    """``np.delete`` with constant positions (or a constant mask)."""
    if isinstance(obj, Tensor):
        obj = _known(obj, "delete", "positions")
    x = _operand(arr, "delete")
    return _layout("delete", [x], lambda p: np.delete(p, obj, axis=axis))


def resize(a, new_shape):
    """``np.resize``: the flattened array repeated to fill ``new_shape``."""
    x = _operand(a, "resize")
    return _layout("resize", [x], lambda p: np.resize(p, new_shape))


def _block_leaves(value, depth: int, leaves: list):
    """The list depth of ``np.block``'s argument (NumPy raises for ragged nesting)."""
    if isinstance(value, tuple):
        raise NotModelled("block", "with a tuple (NumPy raises)")
    if isinstance(value, list):
        if not value:
            raise NotModelled("block", "with an empty list (NumPy raises)")
        depths = {_block_leaves(v, depth + 1, leaves) for v in value}
        if len(depths) != 1:
            raise NotModelled("block", "with lists of different depths (NumPy raises)")
        return depths.pop()
    leaves.append(_operand(value, "block"))
    return depth


def block(arrays):
    """``np.block``: NumPy's nested concatenation, laid out by NumPy itself."""
    leaves: list = []
    _block_leaves(arrays, 0, leaves)

    def rebuild(value, labels):
        if isinstance(value, list):
            return [rebuild(v, labels) for v in value]
        return next(labels)

    def arrange(*labels):
        return np.block(rebuild(arrays, iter(labels)))

    return _layout("block", leaves, arrange)


def lexsort(keys, axis=-1):
    """``np.lexsort``: stable argsorts by each key, the last key primary (the
    order NumPy's stable indirect sort gives)."""
    if isinstance(keys, (list, tuple)):
        ks = [_operand(k, "lexsort") for k in keys]
    else:
        x = _operand(keys, "lexsort")
        if _ndim(x) < 1:
            raise NotModelled("lexsort", "of a 0-d array")
        ks = [F.take(x, np.int64(i), axis=0) for i in range(_shape(x)[0])]
    if not ks:
        raise NotModelled("lexsort", "of no keys (NumPy raises)")
    shape = _shape(ks[0])
    if any(_shape(k) != shape for k in ks) or not shape:
        raise NotModelled("lexsort", "of keys of different shapes or 0-d keys (NumPy raises)")
    if any(_dtype(k).kind not in "biuf" for k in ks):
        raise NotModelled("lexsort", "of these dtypes")
    ax = _axis_of("lexsort", axis, len(shape))
    order = None
    for k in ks:
        kk = k if order is None else apply1("take_along_axis", (as_array(k), as_array(order)),
                                             schema_attrs("take_along_axis", axis=ax))
        step = apply1("argsort", (as_array(kk),), schema_attrs("argsort", axis=ax, kind="stable"))
        order = step if order is None else apply1(
            "take_along_axis", (as_array(order), as_array(step)),
            schema_attrs("take_along_axis", axis=ax))
    return order



def _partition(op: str, a, kth, axis, kind, order):
    if kind != "introselect" or order is not None:
        raise NotModelled(op, "with kind= or order=")
    x = _operand(a, op)
    if axis is None:
        x, axis = _flat(x), 0
    nd = _ndim(x)
    if nd == 0:
        raise NotModelled(op, "of a 0-d array (NumPy raises)")
    ax = _axis_of(op, axis, nd)
    if isinstance(kth, Tensor):
        kth = _known(kth, op, "kth")
    ks = np.asarray(kth)
    if ks.dtype.kind not in "iu" or ks.ndim > 1:
        raise NotModelled(op, f"with kth={kth!r} (NumPy raises)")
    n = _shape(x)[ax]
    ks = tuple(int(k) for k in ks.reshape(-1))
    if any(not -n <= k < n for k in ks):
        raise NotModelled(op, f"with kth={kth!r} out of bounds (NumPy raises)")
    return apply1(op, (as_array(x),), schema_attrs(op, kth=ks, axis=ax))


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.partition``: op ``partition`` (NumPy's introselect: NumPy's order)."""
    return _partition("partition", a, kth, axis, kind, order)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """``np.argpartition``: op ``argpartition`` (NumPy's introselect: NumPy's order)."""
    return _partition("argpartition", a, kth, axis, kind, order)


STATS_FUNCTIONS: dict = {
    np.quantile: quantile, np.percentile: percentile, np.median: median,
    np.cov: cov, np.corrcoef: corrcoef,
    np.nansum: nansum, np.nanprod: nanprod, np.nancumsum: nancumsum, np.nancumprod: nancumprod,
    np.nanmax: nanmax, np.nanmin: nanmin, np.nanargmax: nanargmax, np.nanargmin: nanargmin,
    np.nanmean: nanmean, np.nanvar: nanvar, np.nanstd: nanstd, np.nanmedian: nanmedian,
    np.searchsorted: searchsorted, np.digitize: digitize, np.interp: interp, np.isin: isin,
    np.histogram: histogram, np.bincount: bincount,
    np.cross: cross, np.kron: kron, np.trapezoid: trapezoid, np.gradient: gradient,
    np.ediff1d: ediff1d, np.convolve: convolve, np.correlate: correlate,
    np.linalg.matrix_power: matrix_power,
    np.select: select, np.piecewise: piecewise,
    np.append: append, np.insert: insert, np.delete: delete, np.resize: resize,
    np.block: block, np.lexsort: lexsort, np.partition: partition,
    np.argpartition: argpartition,
}
