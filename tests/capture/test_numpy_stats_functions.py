"""NumPy statistics and array-manipulation functions frame models with NumPy's own
semantics (``frame._numpy_stats``): ``np.median``/``percentile``/``quantile``
(method 'linear'), ``np.cov``/``corrcoef``, the NaN-ignoring functions
(``nansum``, ``nanprod``, ``nancumsum``, ``nancumprod``, ``nanmax``, ``nanmin``,
``nanargmax``, ``nanargmin``, ``nanmean``, ``nanvar``, ``nanstd``, ``nanmedian``)
and the search, calculus and building functions of the module.

Every case runs natively and jitted (``assert_same_as_eager``: values, dtypes,
result types, shapes, exceptions) over several dtypes, shapes (1-D, 3-D, empty
where NumPy allows them), axes (negative, None, tuples) and NaN-holding inputs,
and must be one graph with no break (``frame.explain``).  The same functions on
frame Tensors (``Tensor.__array_function__``) return Tensors with NumPy's values
and dtypes.  All-NaN slices warn (or raise) exactly as NumPy does, jitted and
eager.  ``frame.grad`` of median, percentile and cov matches a numeric gradient.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import frame
from frame._numpy_stats import QUANTILE_METHODS

from .helpers import array, assert_same, assert_same_as_eager

FLOATS = ("float32", "float64")
NUMERIC = ("float32", "float64", "int64")
DTYPES = ("float32", "float64", "int64", "bool")


def data(shape, dtype="float32", seed=0):
    if shape == ():
        return array((1,), dtype, seed).reshape(())
    return array(shape, dtype, seed)


def with_nans(shape, dtype="float64", seed=0):
    """Floats with NaN in some places (no slice along any axis all-NaN for these shapes)."""
    x = data(shape, dtype, seed)
    if x.dtype.kind == "f":
        x.reshape(-1)[1::5] = np.nan
    return x


def _check(fn, args, graphs=1):
    assert_same_as_eager(fn, *args)
    out = frame.explain(fn)(*copy.deepcopy(args))
    reasons = [f"{r.kind}: {r.reason}" for r in out.break_reasons]
    assert out.graph_break_count == 0, reasons
    assert out.graph_count == graphs, (out.graph_count, reasons)


def _cases():
    """(id, fn, argument shapes, dtypes, make) with make(shape, dtype, seed) the data."""
    c = []

    def add(name, fn, shapes, dtypes=NUMERIC, make=data):
        c.append((name, fn, shapes, dtypes, make))

    # -- median, percentile, quantile
    add("median-odd", lambda a: np.median(a), ((7,),), DTYPES)
    add("median-even", lambda a: np.median(a), ((3, 4),), DTYPES)
    add("median-axis", lambda a: (np.median(a, axis=0), np.median(a, axis=-1)), ((3, 4),), DTYPES)
    add("median-3d-tuple", lambda a: np.median(a, axis=(0, 2)), ((2, 3, 4),))
    add("median-keepdims", lambda a: (np.median(a, axis=1, keepdims=True),
                                      np.median(a, keepdims=True)), ((2, 3, 4),))
    add("median-empty-rows", lambda a: np.median(a, axis=1), ((0, 3),))
    add("median-method", lambda a: a.mean() - np.median(a), ((5, 2),))
    add("median-nan", lambda a: (np.median(a), np.median(a, axis=0), np.median(a, axis=1)),
        ((3, 4),), FLOATS, with_nans)
    add("percentile-scalar", lambda a: (np.percentile(a, 30), np.percentile(a, 50.0),
                                        np.percentile(a, 100)), ((9,),))
    add("percentile-list", lambda a: np.percentile(a, [10, 50, 90], axis=1), ((3, 5),))
    add("percentile-axes", lambda a: (np.percentile(a, 25, axis=(0, -1)),
                                      np.percentile(a, [5, 95], axis=-2, keepdims=True)),
        ((2, 3, 4),))
    add("percentile-np-scalar-q", lambda a: np.percentile(a, np.float64(40), axis=0), ((6, 2),))
    add("percentile-nan", lambda a: (np.percentile(a, 75, axis=0), np.percentile(a, [0, 60])),
        ((3, 4),), FLOATS, with_nans)
    add("quantile-scalar", lambda a: (np.quantile(a, 0.25), np.quantile(a, 0.5, axis=0),
                                      np.quantile(a, 0.999)), ((4, 3),))
    add("quantile-int-q", lambda a: (np.quantile(a, 0), np.quantile(a, 1, axis=1),
                                     np.quantile(a, [0, 1], axis=0)), ((3, 4),))
    add("quantile-float32-q", lambda a: np.quantile(a, [np.float32(0.1), np.float32(0.7)],
                                                    axis=-1), ((2, 5),))
    add("quantile-keepdims", lambda a: np.quantile(a, [0.2, 0.8], axis=None, keepdims=True),
        ((2, 3),))
    add("quantile-method-linear", lambda a: np.quantile(a, 0.3, method="linear"), ((8,),))
    for method in QUANTILE_METHODS:   # NumPy's own names, every one of them
        add(f"quantile-method-{method}",
            lambda a, m=method: (np.quantile(a, 0.3, method=m), np.quantile(a, [0, 0.5, 1], axis=0, method=m),
                                 np.percentile(a, [12.5, 99], axis=1, method=m)), ((5, 4),))
    # -- cov, corrcoef
    add("cov", lambda a: np.cov(a), ((3, 6),), DTYPES)
    add("cov-rowvar", lambda a: (np.cov(a, rowvar=False), np.cov(a, rowvar=False, bias=True)),
        ((6, 3),))
    add("cov-ddof", lambda a: (np.cov(a, ddof=0), np.cov(a, ddof=2)), ((2, 5),))
    add("cov-1d-y", lambda a, b: np.cov(a, b), ((6,), (6,)))
    add("cov-y", lambda a, b: (np.cov(a, b.T), np.cov(a.T, b, rowvar=False)), ((2, 5), (5, 2)))
    add("cov-dtype", lambda a: np.cov(a, dtype=np.float32), ((3, 5),))
    add("corrcoef", lambda a: np.corrcoef(a), ((3, 6),), DTYPES[:3])
    add("corrcoef-rowvar-y", lambda a, b: np.corrcoef(a, b, rowvar=False), ((6, 2), (6,)))
    # -- NaN-ignoring functions
    for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                 "nanmedian"):
        fn = getattr(np, name)
        add(name, lambda a, fn=fn: (fn(a), fn(a, axis=0), fn(a, axis=-1, keepdims=True)),
            ((3, 4),), DTYPES[:3], with_nans)
        add(f"{name}-3d", lambda a, fn=fn: (fn(a, axis=(0, 2)), fn(a, axis=1)), ((2, 3, 4),),
            FLOATS, with_nans)
    for name in ("nancumsum", "nancumprod"):
        fn = getattr(np, name)
        add(name, lambda a, fn=fn: (fn(a), fn(a, axis=0), fn(a, axis=-1)), ((3, 4),),
            DTYPES[:3], with_nans)
    for name in ("nanargmax", "nanargmin"):
        fn = getattr(np, name)
        add(name, lambda a, fn=fn: (fn(a), fn(a, axis=0), fn(a, axis=-1, keepdims=True)),
            ((3, 4),), DTYPES[:3], with_nans)
    add("nanvar-ddof", lambda a: (np.nanvar(a, ddof=1), np.nanstd(a, axis=0, ddof=1)),
        ((4, 3),), NUMERIC, with_nans)
    add("nansum-bool", lambda a: (np.nansum(a), np.nanmax(a, axis=0), np.nanmean(a)),
        ((3, 4),), ("bool",))
    add("nansum-dtype", lambda a: np.nansum(a, axis=0, dtype=np.float64), ((3, 4),), FLOATS,
        with_nans)
    # -- searching and binning
    add("searchsorted", lambda a, v: (np.searchsorted(np.sort(a), v),
                                      np.searchsorted(np.sort(a), v, side="right")),
        ((7,), (2, 3)), DTYPES)
    add("searchsorted-scalar", lambda a: (np.searchsorted(np.sort(a), 2.5),
                                          np.searchsorted(np.sort(a), [1, 3])), ((6,),))
    add("searchsorted-sorter", lambda a, v: np.searchsorted(a, v, sorter=np.argsort(a)),
        ((6,), (4,)))
    add("searchsorted-const-sorter", lambda a: np.searchsorted(a[:3], a, sorter=[2, 0, 1]),
        ((5,),))
    add("searchsorted-method", lambda a, v: np.sort(a).searchsorted(v, "right"), ((6,), (3,)))
    add("searchsorted-nan", lambda a: np.searchsorted(np.sort(a), a), ((7,),), FLOATS,
        with_nans)
    add("digitize", lambda a: (np.digitize(a, [-2, 0, 1.5, 3]),
                               np.digitize(a, [-2, 0, 1.5, 3], right=True)), ((3, 4),))
    add("digitize-decreasing", lambda a: (np.digitize(a, [3, 1, 1, -2]),
                                          np.digitize(a, (3.5, 1, -2), right=True)),
        ((2, 5),))
    add("interp", lambda a: (np.interp(a, [-2, 0, 1, 3], [0, 1, -1, 2]),
                             np.interp(a, [-2.0, 0.0, 1.0], [0.0, 5.0, 4.0], left=-9, right=9.5)),
        ((3, 4),))
    add("interp-arrays", lambda a, xp: np.interp(a, np.sort(xp), xp * 2), ((2, 3), (5,)))
    add("interp-period", lambda a: np.interp(a, [0, 1, 2, 5], [3, 1, 2, 0], period=4),
        ((7,),))
    add("interp-nan", lambda a: np.interp(a, [-1, 0, 1], [1, 0, 2]), ((3, 4),), FLOATS,
        with_nans)
    add("isin", lambda a: (np.isin(a, [1, 2, 0.5]), np.isin(a, [3], invert=True)), ((3, 4),),
        DTYPES)
    add("isin-arrays", lambda a, b: np.isin(a, b), ((2, 3, 2), (4,)), DTYPES)
    add("isin-empty", lambda a: np.isin(a, []), ((3,),))
    add("histogram", lambda a: np.histogram(a, bins=4, range=(-3, 3)), ((20,),))
    add("histogram-2d", lambda a: np.histogram(a, bins=7, range=(-1.5, 2.25)), ((4, 5),))
    add("histogram-edge-values", lambda a: np.histogram(np.floor(a), bins=3, range=(-2, 1)),
        ((30,),), FLOATS)
    add("histogram-int", lambda a: np.histogram(a, bins=4, range=(1, 4)), ((12,),), ("int64",))
    add("histogram-nan", lambda a: np.histogram(a, bins=3, range=(-3.0, 3.0)), ((3, 4),),
        FLOATS, with_nans)
    # -- calculus and products
    add("cross", lambda a, b: (np.cross(a, b), np.cross(a[0], b)), ((4, 3), (4, 3)))
    add("cross-axes", lambda a, b: (np.cross(a, b, axisa=0, axisb=-1),
                                    np.cross(a, a, axis=0), np.cross(a, b, axisa=0, axisc=0)),
        ((3, 2), (2, 3)))
    add("cross-3d", lambda a, b: np.cross(a, b), ((2, 1, 3), (4, 3)))
    add("kron", lambda a, b: (np.kron(a, b), np.kron(b, a)), ((2, 3), (3, 2)), DTYPES)
    add("kron-ranks", lambda a, b: (np.kron(a, b), np.kron(b, a), np.kron(a, 2)),
        ((3,), (2, 2, 2)))
    add("trapezoid", lambda a: (np.trapezoid(a), np.trapezoid(a, dx=0.5, axis=0),
                                np.trapezoid(a, x=[0, 1, 3, 4.5])), ((3, 4),), DTYPES)
    add("trapezoid-x-nd", lambda a, x: np.trapezoid(a, x, axis=-2), ((2, 4, 3), (2, 4, 3)))
    add("trapezoid-1d", lambda a: (np.trapezoid(a), np.trapezoid(a[:1])), ((6,),))
    add("gradient", lambda a: np.gradient(a), ((3, 4),))
    add("gradient-1d", lambda a: (np.gradient(a), np.gradient(a, 0.5), np.gradient(a[:2])),
        ((6,),))
    add("gradient-axis", lambda a: (np.gradient(a, axis=-1), np.gradient(a, 2.0, axis=(0, 2)),
                                    np.gradient(a, np.float32(2), axis=1)), ((3, 2, 4),))
    add("gradient-coordinates", lambda a: (np.gradient(a, [0, 1, 3, 3.5], axis=1),
                                           np.gradient(a, [0, 2, 4], [0, 1, 2, 3])), ((3, 4),))
    add("ediff1d", lambda a: (np.ediff1d(a), np.ediff1d(a, to_begin=-1, to_end=[7, 8])),
        ((3, 4),))
    add("ediff1d-short", lambda a: (np.ediff1d(a), np.ediff1d(a, to_end=0)), ((1,),))
    add("convolve", lambda a, v: (np.convolve(a, v), np.convolve(a, v, "same"),
                                  np.convolve(a, v, mode="valid"), np.convolve(v, a)),
        ((7,), (3,)))
    add("convolve-list", lambda a: (np.convolve(a, [1, -1]), np.convolve([0.5, 1, 2], a, "same")),
        ((5,),))
    add("matrix_power", lambda a: (np.linalg.matrix_power(a, 2), np.linalg.matrix_power(a, 5),
                                   np.linalg.matrix_power(a, 0), np.linalg.matrix_power(a, 4)),
        ((3, 3),))
    add("matrix_power-stack", lambda a: (np.linalg.matrix_power(a, 3),
                                         np.linalg.matrix_power(a, 6)), ((2, 2, 2),))
    add("matrix_power-inverse", lambda a: np.linalg.matrix_power(a + 3 * np.eye(3), -2),
        ((3, 3),), FLOATS)
    # -- selection
    add("select", lambda a: (np.select([a < 0, a > 1], [a, a * 2]),
                             np.select([a < 0, a > 1], [a, a * 2], default=-1.5)), ((3, 4),),
        NUMERIC)
    add("select-scalars", lambda a: (np.select([a < 0, a > 2], [1, 2.5]),
                                     np.select([a > 1], [a], default=a[0])), ((3, 4),), NUMERIC)
    add("select-bool", lambda a: np.select([a, ~a], [a, True], default=False), ((3, 4),),
        ("bool",))
    add("select-broadcast", lambda a, b: np.select([a > 0, b > 0], [b, a]), ((3, 1), (4,)))
    add("piecewise", lambda a: (np.piecewise(a, [a < 0, a > 1], [-1, 1]),
                                np.piecewise(a, [a < 0, a > 1], [-1.5, 1.5, 0.25])), ((3, 4),),
        NUMERIC)
    add("piecewise-one-condition", lambda a: np.piecewise(a, a > 0, [7, 3]), ((5,),), NUMERIC)
    # -- building arrays
    add("append", lambda a, b: (np.append(a, b), np.append(a, b, axis=0),
                                np.append(a, [[9, 9, 9]], axis=-2)), ((2, 3), (1, 3)), DTYPES)
    add("append-scalar", lambda a: (np.append(a, 2.5), np.append(a, [])), ((4,),), DTYPES)
    add("insert", lambda a: (np.insert(a, 1, 5), np.insert(a, [0, 2, 2], 9, axis=1),
                             np.insert(a, -1, a[:1], axis=0), np.insert(a, 1, 2.7, axis=-1),
                             np.insert(a, slice(0, 3), [[1], [2], [3]], axis=1)),
        ((3, 4),), DTYPES)
    add("insert-1d", lambda a: (np.insert(a, [1, 5], [7, 8]), np.insert(a, 0, a[-2:])),
        ((5,),), DTYPES)
    add("delete", lambda a: (np.delete(a, 1), np.delete(a, [0, -1], axis=1),
                             np.delete(a, slice(None, None, 2), axis=0),
                             np.delete(a, [True, False, True], axis=0)), ((3, 4),), DTYPES)
    add("resize", lambda a: (np.resize(a, (5, 3)), np.resize(a, 4), np.resize(a, (2, 0)),
                             np.resize(a, (2, 2, 4))), ((3, 2),), DTYPES)
    add("block", lambda a, b: (np.block([a, b]), np.block([[a], [b]]),
                               np.block([[a, b], [b, a]])), ((2, 2), (2, 2)), DTYPES)
    add("block-mixed", lambda a, b: (np.block([[a, np.zeros((2, 1))], [b, 1.5]]),
                                     np.block([1, a[0], b[0]])), ((2, 3), (1, 3)), DTYPES)
    add("lexsort", lambda a, b: (np.lexsort((a, b)), np.lexsort((b, a)), np.lexsort(a[None])),
        ((8,), (8,)), DTYPES)
    add("partition", lambda a: (np.partition(a, 2), np.partition(a, (0, -1), axis=0),
                                 np.partition(a, 5, axis=None)), ((3, 4),), DTYPES)
    add("argpartition", lambda a: (np.argpartition(a, 1), np.argpartition(a, [1, 2], axis=-2),
                                   np.argpartition(a, -3, axis=None)), ((3, 4),), DTYPES)
    add("partition-3d", lambda a: (np.partition(a, 1, axis=1), np.argpartition(a, 3)),
        ((2, 3, 5),), FLOATS, with_nans)
    add("lexsort-2d", lambda a: (np.lexsort(a), np.lexsort((a[0], a[1]), axis=0)), ((3, 5),),
        NUMERIC)
    return c


CASES = _cases()
PARAMS = [pytest.param(fn, shapes, dt, make, id=f"{name}-{dt}")
          for name, fn, shapes, dtypes, make in CASES for dt in dtypes]


def _args(shapes, dtype, make):
    return tuple(make(s, dtype, seed=i) for i, s in enumerate(shapes))


@pytest.mark.parametrize("fn, shapes, dtype, make", PARAMS)
def test_jitted_matches_numpy(fn, shapes, dtype, make):
    _check(fn, _args(shapes, dtype, make))


def _as_numpy(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_as_numpy(v) for v in value)
    assert isinstance(value, frame.Tensor), f"expected a frame Tensor, got {type(value).__name__}"
    return value.numpy()


def _like_numpy(expected):
    if isinstance(expected, (tuple, list)):
        return type(expected)(_like_numpy(v) for v in expected)
    return np.asarray(expected)


_EAGER = [p for p in PARAMS if "method" not in p.id]


@pytest.mark.parametrize("fn, shapes, dtype, make", _EAGER)
def test_eager_tensor_matches_numpy(fn, shapes, dtype, make):
    args = _args(shapes, dtype, make)
    tensors = [frame.tensor(a.copy()) for a in args]
    expected = fn(*args)
    result = fn(*tensors)
    assert_same(_like_numpy(expected), _as_numpy(result), backend="cpu")


# -- all-NaN slices: NumPy's warnings and errors, at run time -----------------------------------

def _all_nan_rows():
    x = np.arange(12.0).reshape(3, 4)
    x[1] = np.nan
    x[2, 1] = np.nan
    return x


def _warnings_of(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [(w.category, str(w.message)) for w in caught]


ALL_NAN = {
    "nanmax": lambda a: np.nanmax(a, axis=1),
    "nanmin": lambda a: np.nanmin(a, axis=1, keepdims=True),
    "nanmean": lambda a: np.nanmean(a, axis=1),
    "nanvar": lambda a: np.nanvar(a, axis=1, ddof=1),
    "nanstd": lambda a: np.nanstd(a, axis=-1),
    "nanmedian": lambda a: np.nanmedian(a, axis=1),
    "nanmedian-all": lambda a: np.nanmedian(a[1]),
    "nanmax-no-nan-slice": lambda a: np.nanmax(a, axis=0),
    "nanmean-result-unused": lambda a: (np.nanmean(a, axis=1), a * 2)[1],
    "nanmin-twice": lambda a: np.nanmin(a, axis=1) + np.nanmin(a, axis=1),
}


@pytest.mark.parametrize("name", list(ALL_NAN))
def test_all_nan_slice_warns_like_numpy(name):
    fn = ALL_NAN[name]
    x = _all_nan_rows()
    expected, native_warnings = _warnings_of(lambda: fn(x.copy()))
    jitted = frame.jit(fn)
    for _ in range(2):  # the first call compiles, the second runs the compiled graph
        got, jit_warnings = _warnings_of(lambda: jitted(x.copy()))
        assert_same(expected, got)
        assert jit_warnings == native_warnings
    got, eager_warnings = _warnings_of(lambda: fn(frame.tensor(x.copy())))
    assert_same(np.asarray(expected), got.numpy(), backend="cpu")
    assert eager_warnings == native_warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = frame.explain(fn)(x.copy())
    assert out.graph_break_count == 0 and out.graph_count == 1, out.break_reasons


@pytest.mark.parametrize("fn", [lambda a: np.nanargmax(a, axis=1), lambda a: np.nanargmin(a, axis=-1, keepdims=True),
                                lambda a: np.nanargmin(a[1])], ids=["axis", "keepdims", "row"])
def test_all_nan_slice_raises_like_numpy(fn):
    x = _all_nan_rows()
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        fn(x.copy())
    assert_same_as_eager(fn, x, captured=None)  # the graph raises: capture runs the function
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        fn(frame.tensor(x.copy()))
    ok = np.arange(12.0).reshape(3, 4)  # the same graph on values without an all-NaN slice
    assert_same_as_eager(fn, ok)


def test_median_nan_result_of_slices():
    """A slice holding NaN gives NaN (its last sorted value); the others their median."""
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 5.0, 7.0, 6.0], [np.nan, np.nan, 0.0, 1.0]])
    fn = lambda a: (np.median(a, axis=1), np.percentile(a, [20, 50], axis=1),  # noqa: E731
                    np.quantile(a, 0.5))
    _check(fn, (x,))


# -- what frame refuses runs in NumPy (a break naming the function) ----------------------------

NOT_MODELLED = [
    ("quantile-method", lambda a: np.quantile(a, 0.3, method="nearest_rank"), "(NumPy raises)"),
    ("percentile-out-of-range", lambda a: np.percentile(a, 120), "NumPy raises"),
    ("quantile-empty", lambda a: np.quantile(a[:0], 0.5), "of no elements"),
    ("median-empty", lambda a: np.median(a[:, :0], axis=1), "of no elements"),
    ("quantile-np-q-0d-float32", lambda a: np.quantile(a.astype(np.float32), np.float64(0.5)),
     "may hold NaN"),
    ("corrcoef-1d", lambda a: np.corrcoef(a[0]), "0-d array"),
    ("cov-weights", lambda a: np.cov(a, fweights=[1, 2, 1, 1]), "fweights"),
    ("cov-ddof-too-large", lambda a: np.cov(a, ddof=4), "degrees of freedom"),
    ("matrix_power-1", lambda a: np.linalg.matrix_power(a[:, :3], 1), "NumPy returns the array"),
    ("piecewise-functions", lambda a: np.piecewise(a, [a < 1], [np.sin, np.cos]), "functions"),
    ("histogram-no-range", lambda a: np.histogram(a.astype(np.int64), bins=3), "without range="),
    ("cross-2d-vectors", lambda a: np.cross(a[:, :2], a[:, 1:3]), "not 3-D"),
    ("quantile-q-from-array", lambda a: np.quantile(a, a[0, 0] / 10), "q computed from arrays"),
]


@pytest.mark.parametrize("fn, reason", [pytest.param(fn, reason, id=name)
                                        for name, fn, reason in NOT_MODELLED])
def test_not_modelled_uses_break(fn, reason):
    x = np.abs(data((3, 4), "float64"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # cov with ddof >= N warns
        warnings.simplefilter("ignore", DeprecationWarning)  # np.cross of 2-D vectors
        assert_same_as_eager(fn, x, captured=None)
        out = frame.explain(fn)(x.copy())
    assert out.graph_break_count >= 1
    assert any(reason in r.reason for r in out.break_reasons), [r.reason for r in out.break_reasons]


ERRORS = [
    ("percentile-bad-axis", lambda a: np.percentile(a, 50, axis=3)),
    ("median-bad-axis", lambda a: np.median(a, axis=(0, 0))),
    ("cov-3d", lambda a: np.cov(a.reshape(1, 3, 4))),
    ("quantile-bad-q", lambda a: np.quantile(a, [0.5, -0.1])),
    ("nanmax-bad-axis", lambda a: np.nanmax(a, axis=2)),
]


@pytest.mark.parametrize("fn", [pytest.param(fn, id=name) for name, fn in ERRORS])
def test_errors_match_numpy(fn):
    x = data((3, 4), "float64")
    with pytest.raises(Exception) as native:
        fn(x.copy())
    assert_same_as_eager(fn, x, captured=None)
    with pytest.raises(Exception) as eager:
        fn(frame.tensor(x.copy()))
    assert isinstance(eager.value, type(native.value)), (eager.value, native.value)


# -- gradients ------------------------------------------------------------------------------------

def _numeric_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


GRADS = {
    "median": lambda a: np.sum(np.median(a, axis=0) * np.array([1.0, 2.0, 3.0, 4.0])),
    "median-odd": lambda a: np.median(a),
    "percentile": lambda a: np.sum(np.percentile(a, [30, 80], axis=1)),
    "quantile": lambda a: np.quantile(a, 0.35),
    "cov": lambda a: np.sum(np.cov(a) * np.arange(9.0).reshape(3, 3)),
    "corrcoef": lambda a: np.sum(np.corrcoef(a) * np.arange(9.0).reshape(3, 3)),
    "nansum": lambda a: np.nansum(a * a),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_grad_matches_numeric(name):
    fn = GRADS[name]
    x = np.random.default_rng(3).uniform(-2, 2, (3, 4))  # distinct values: no ties
    expected = _numeric_grad(lambda v: float(fn(v)), x)
    got = frame.grad(fn)(frame.tensor(x))
    np.testing.assert_allclose(np.asarray(got.numpy() if isinstance(got, frame.Tensor) else got),
                               expected, rtol=1e-5, atol=1e-6)


# -- float64 bit for bit on the cpu backend: NumPy's own order of operations --------------------

EXACT = {
    "median": lambda a: (np.median(a), np.median(a, axis=0), np.median(a, axis=(0, 2))),
    "percentile": lambda a: (np.percentile(a, 37.5), np.percentile(a, [3, 50, 91.7], axis=-1)),
    "quantile": lambda a: (np.quantile(a, 0.123), np.quantile(a, [0.6, 0.999], axis=1),
                           np.quantile(a, np.float64(0.77))),
    "gradient": lambda a: np.gradient(a, 0.3, axis=1),
    "trapezoid": lambda a: np.trapezoid(a, dx=0.7, axis=0),
    "select": lambda a: np.select([a < 0, a > 1], [a * 3, a], default=0.5),
}


@pytest.mark.parametrize("name", list(EXACT))
def test_float64_bit_for_bit_on_cpu(name):
    fn = EXACT[name]
    x = np.random.default_rng(7).standard_normal((3, 5, 4))
    expected, got = fn(x.copy()), frame.jit(fn, backend="cpu")(x.copy())
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for e, g in zip(expected, got):
        assert np.asarray(e).dtype == np.asarray(g).dtype
        assert np.array_equal(np.asarray(e), np.asarray(g)), (e, g)
    out = frame.explain(fn, backend="cpu")(x.copy())
    assert out.graph_count == 1 and out.graph_break_count == 0, out.break_reasons
