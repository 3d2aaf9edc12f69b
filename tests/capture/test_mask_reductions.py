"""Boolean-mask selections that are reduced stay in the graph
(``capture/variables/masked.py``): ``x[x > 0].sum()``, ``np.mean(err[m] ** 2)``,
``(y[m] == p[m]).mean()``.  Each function of the registry runs natively and
jitted over dtypes; where NumPy itself does not raise it must be one graph
with no break, and where the cpu executable runs the first call (settings
cpu and default) its result has NumPy's bits: the reduction is NumPy's own
on the compressed array.  Empty selections warn or raise as NumPy does (a
run-time check runs the plain function); every other use of a selection
breaks the graph at the original ``x[mask]``, as before."""
from __future__ import annotations

import contextlib
import copy
import io
import warnings

import numpy as np
import pytest

import capture
import frame

from .corpus import _setting
from .helpers import assert_same_as_eager

DTYPES = ("float64", "float32", "int64", "int32", "int8", "bool")


def values(shape, dtype, seed, nan=False):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = (rng.standard_normal(shape) * 2).astype(dtype)
        if nan:
            x[rng.random(shape) < 0.15] = np.nan
        return x
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(-4, 5, shape).astype(dtype)


def rmse_valid(y, p):
    valid = ~np.isnan(y) if y.dtype.kind == "f" else y >= -2
    return np.sqrt(np.mean((y[valid] - p[valid]) ** 2))


def accuracy_not_ignored(y, p):
    keep = p != -1
    return (y[keep] == p[keep]).mean()


def masked_normalisation(y, p):
    m = y > 0
    return (y - y[m].mean()) / (y[m].std() + 1)


def clipping_stats(y, p):
    m = np.abs(p) <= 2
    return (np.abs(y[m]) > 1).mean(), np.maximum(y[m], 0).sum(), y[m].min(), y[m].max()


FUNCTIONS = {
    "positive_sum": lambda y, p: y[y > 0].sum(),
    "np_mean_of_selection": lambda y, p: np.mean(y[p > 0]),
    "mean_squared_error": lambda y, p: np.mean((y[p > 0] - p[p > 0]) ** 2),
    "rmse_valid": rmse_valid,
    "max_abs_error": lambda y, p: np.abs(y[p > 0] - p[p > 0]).max(),
    "accuracy_not_ignored": accuracy_not_ignored,
    "sum_of_squares": lambda y, p: np.sum((y[p != 0] - p[p != 0]) ** 2),
    "valid_min": lambda y, p: y[p < 1].min(),
    "any_above": lambda y, p: np.any(y[p >= 0] > 3),
    "all_non_negative": lambda y, p: np.all(y[y != 1] >= 0),
    "std": lambda y, p: y[p > -3].std(),
    "var_ddof": lambda y, p: np.var(y[p > -3], ddof=1),
    "std_ddof_method": lambda y, p: y[p > -3].std(ddof=2),
    "prod": lambda y, p: np.prod(y[np.abs(p) < 2] * 1 + 1),
    "amax_amin": lambda y, p: (np.amax(y[p > 0]), np.amin(y[p > 0])),
    "masked_normalisation": masked_normalisation,
    "clipping_stats": clipping_stats,
    "reflected_ops": lambda y, p: ((1 - y[p > 0]) * 2).sum() + (-y[p > 0]).max(),
    "centred_by_traced_scalar": lambda y, p: (y[p > 0] - y.mean()).sum(),
    "int_division": lambda y, p: (y[p > 0] // 2).sum() + (y[p > 0] % 3).max(),
    "true_division_by_selection": lambda y, p: (y[p > 0] / p[p > 0]).mean(),
    "axis_of_one_d_selection": lambda y, p: (y[p > 0].sum(axis=0), np.max(y[p > 0], -1)),
    "exp_log": lambda y, p: np.log(np.exp(y[p > 1]) + 1).sum(),
    "sqrt_of_positive": lambda y, p: np.sqrt(y[y > 0]).sum(),
    "bool_ops": lambda y, p: ((y[p > 0] > 0) & (p[p > 0] < 3)).sum(),
    "in_place_on_the_selection": lambda y, p: _in_place(y, p),
}


def _run_bitwise(fn, *args):
    capture.reset_caches()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = fn(*copy.deepcopy(args))
        got = frame.jit(fn)(*copy.deepcopy(args))
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert type(w) is type(g) and w.dtype == g.dtype, (w, g)
        assert np.array_equal(w, g, equal_nan=w.dtype.kind == "f"), (w, g)


def _one_graph(fn, *args):
    """``fn`` is one graph, no break, with a ``masked_reduce`` node."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = frame.explain(fn)(*copy.deepcopy(args))
    assert out.graph_count == 1 and out.graph_break_count == 0, \
        [r.reason for r in out.break_reasons]
    assert any("masked_reduce" in ops for ops in out.ops_per_graph)


def _native_raises(fn, *args) -> bool:
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*copy.deepcopy(args))
    except Exception:  # noqa: BLE001
        return True
    return False


def _inputs(dtype):
    return values((9, 7), dtype, 1, nan=True), values((9, 7), dtype, 2)


# (a bool subtraction raises TypeError in NumPy: BREAKING's "bool_subtract")
@pytest.mark.parametrize("name,dtype", [(n, d) for n in sorted(FUNCTIONS) for d in DTYPES
                                        if not _native_raises(FUNCTIONS[n], *_inputs(d))])
def test_reduced_selections(name, dtype):
    fn = FUNCTIONS[name]
    y, p = _inputs(dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_eager(fn, y, p)
    _one_graph(fn, y, p)
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, y, p)


def test_summation_is_numpys_over_the_selected_elements():
    """NumPy's pairwise summation of the compressed array rounds otherwise
    than a masked sum over the whole array: the result is NumPy's bits."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(5000) * 10 ** rng.uniform(-3, 3, 5000)).astype(np.float32)

    def fn(x):
        return x[x > -1].sum(), np.mean(x[x < 1]), x[np.abs(x) < 5].var()
    want = fn(x)
    assert want[0] != np.sum(x, where=x > -1)   # (the two orders round differently here)
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, x)
    assert_same_as_eager(fn, x)
    _one_graph(fn, x)


@pytest.mark.parametrize("layout", ["fortran", "strided", "transposed"])
def test_layouts(layout):
    base = values((12, 10), "float32", 3)
    x = {"fortran": np.asfortranarray(base), "strided": base[::2, 1::3],
         "transposed": base.T}[layout]

    def fn(x):
        m = x > 0.1
        return x[m].sum(), np.mean((x[m] - 1) ** 2), x[m].max()
    assert_same_as_eager(fn, x)
    _one_graph(fn, x)
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, x)


def test_result_dtypes_are_numpys():
    for dtype in ("int8", "int32", "uint16", "bool", "float32"):
        x = values((5, 4), dtype, 4) if dtype != "uint16" else np.arange(20, dtype=np.uint16).reshape(5, 4)

        def fn(x):
            m = x > 0 if x.dtype != np.bool_ else x
            s = x[m]
            return s.sum(), s.prod(), s.mean(), s.max(), s.any(), s.all(), s.std()
        with np.errstate(all="ignore"):
            want, got = fn(x), frame.jit(fn)(x.copy())
        assert [type(v) for v in want] == [type(v) for v in got]
        _one_graph(fn, x)


def _warnings_of(fn, *args):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            result = fn(*args)
        except Exception as e:  # noqa: BLE001
            result = e
    return result, [(w.category, str(w.message)) for w in seen]


EMPTY = {
    "mean": lambda x: x[x > 100].mean(),
    "np_mean_of_squares": lambda x: np.mean((x[x > 100] - 1) ** 2),
    "std": lambda x: x[x > 100].std(),
    "var_one_element_ddof": lambda x: np.var(x[x == x.max()], ddof=1),
    "max": lambda x: x[x > 100].max(),
    "np_min": lambda x: np.min(x[x > 100]),
    "sum": lambda x: x[x > 100].sum(),
    "prod": lambda x: x[x > 100].prod(),
    "any": lambda x: np.any(x[x > 100]),
    "all": lambda x: x[x > 100].all(),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_selections_warn_and_raise_as_numpy(name):
    fn = EMPTY[name]
    x = values((6, 5), "float64", 6)
    jitted = frame.jit(fn)
    for _ in range(2):   # the translating call and a cache hit
        want, want_warned = _warnings_of(fn, x.copy())
        got, got_warned = _warnings_of(jitted, x.copy())
        if isinstance(want, Exception):
            assert type(got) is type(want) and str(got) == str(want)
        else:
            assert type(got) is type(want)
            assert np.array_equal(got, want, equal_nan=True)
        assert got_warned == want_warned
    # a non-empty selection on the same entry: captured, no warning
    y = x * 1000
    want, want_warned = _warnings_of(fn, y.copy())
    got, got_warned = _warnings_of(jitted, y.copy())
    assert got_warned == want_warned
    if not isinstance(want, Exception):
        assert np.array_equal(got, want, equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = frame.explain(fn)(x.copy())
        except ValueError:   # (max/min of nothing: NumPy raises)
            return
    assert out.graph_break_count == 0, [r.reason for r in out.break_reasons]


def test_unselected_elements_raise_no_floating_point_error():
    """NumPy never computes the elements the mask drops: a division by zero or
    a log of a negative number there must not warn nor raise."""
    x = np.array([[1.0, 0.0, -2.0], [4.0, 0.0, 3.0]])

    def fn(x):
        m = x > 0
        return (1 / x[m]).sum(), np.log(x[m]).mean(), np.sqrt(x[m]).max()
    want, want_warned = _warnings_of(fn, x.copy())
    got, got_warned = _warnings_of(frame.jit(fn), x.copy())
    assert got_warned == want_warned == []
    assert want == got
    with np.errstate(all="raise"):
        assert frame.jit(fn)(x.copy()) == fn(x.copy())
    out = frame.explain(fn)(x.copy())
    assert out.graph_break_count == 0, [r.reason for r in out.break_reasons]


def test_selected_elements_still_warn():
    x = np.array([[1.0, 0.0, -2.0], [4.0, 0.0, 3.0]])

    def fn(x):
        return (1 / x[x >= 0]).sum()
    want, want_warned = _warnings_of(fn, x.copy())
    got, got_warned = _warnings_of(frame.jit(fn), x.copy())
    assert want_warned and [w[0] for w in got_warned] == [w[0] for w in want_warned]
    assert want == got
    _one_graph(fn, x)


def test_values_at_the_getitem_are_the_selections():
    """``x[m]`` is a copy: a later in-place write into x does not show."""
    def fn(x):
        s = x[x > 0]
        x *= 10
        x[0, 0] = 100.0
        return s.sum(), x.sum()
    assert_same_as_eager(fn, values((4, 5), "float64", 7))
    out = frame.explain(fn)(values((4, 5), "float64", 7))
    assert out.graph_break_count == 0, [r.reason for r in out.break_reasons]


def _helper_selection(x, m):
    return x[m]


def _helper_sorting(x, m):
    return np.sort(x[m])


BREAKING = {
    "returned": lambda x, y: x[y > 0],
    "sorted": lambda x, y: np.sort(x[y > 0]).sum(),
    "indexed": lambda x, y: x[y > 0][0],
    "len": lambda x, y: len(x[y > 0]),
    "size": lambda x, y: x[y > 0].size,
    "stored_in_list": lambda x, y: [x[y > 0].sum(), x[y > 0]],
    "different_masks": lambda x, y: (x[y > 0] + x[x > 0]).sum(),
    "different_mask_values_same_count": lambda x, y: (x[y > 0] * x[~(y <= 0)]).sum(),
    "printed": lambda x, y: print(x[y > 0]),
    "two_d_mask_of_rows": lambda x, y: x[y[:, 0] > 0].sum(),
    "cumsum": lambda x, y: x[y > 0].cumsum().max(),
    "keepdims": lambda x, y: x[y > 0].sum(keepdims=True),
    "dtype_argument": lambda x, y: x[y > 0].sum(dtype=np.float32),
    "helper_returns_selection_reduced_later": lambda x, y: _helper_selection(x, y > 0).sum(),
    "helper_sorts": lambda x, y: _helper_sorting(x, y > 0).sum(),
    "bound_method_returned": lambda x, y: x[y > 0].sum,
    "bool_subtract": lambda x, y: ((x > 0)[y > 0] - (y > 0)[y > 0]).sum(),   # TypeError
}


def _catching(use, x, y):
    try:
        return use(x, y)
    except TypeError as e:
        return str(e)


def _in_place(x, y):
    s = x[y > 0]
    s *= 2
    return s.sum()


def _after_a_reduced_selection(use):
    def fn(x, y):
        total = x[x > 1].sum()   # a reduced selection: in the graph before the break
        return total, use(x, y)
    return fn


@pytest.mark.parametrize("name", sorted(BREAKING))
def test_other_uses_break_as_before(name):
    """Each use outside the model gives NumPy's results (a graph break at its
    getitem, as before); the reduced selection before it stays in the graph
    that ends at the break."""
    fn = _after_a_reduced_selection(BREAKING[name])
    x, y = values((5, 4), "float64", 8), values((5, 4), "float64", 9)
    if name == "bound_method_returned":
        (t1, got), (t2, want) = frame.jit(fn)(x, y), fn(x, y)
        assert t1 == t2 and got() == want()
    else:
        assert_same_as_eager(fn, x, y, captured=None)
    if name == "bool_subtract":
        fn = _after_a_reduced_selection(lambda x, y: _catching(BREAKING[name], x, y))
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        out = frame.explain(fn)(x, y)
    assert "masked_reduce" in out.ops_per_graph[0]
    # (len() and print() refuse first, in the lambda: the break at its call gives their
    # reason; the lambda's own frame then breaks at its getitem)
    if name not in ("helper_returns_selection_reduced_later", "bound_method_returned",
                    "two_d_mask_of_rows", "size", "keepdims", "dtype_argument", "len",
                    "printed"):
        assert out.graph_break_count >= 1
        assert "boolean mask" in out.break_reasons[0].reason, out.break_reasons[0].reason


def test_a_frame_that_cannot_break_later_still_breaks_at_the_getitem():
    """A selection that is reduced, then one used in a try block (where no
    break can be placed): the translation is done again without selections,
    so the first getitem breaks the graph as before (not the whole function
    running natively)."""
    def fn(x):
        t = x[x > 0].sum()
        try:
            u = np.sort(x[x < 0]).sum()
        except ValueError:
            u = 0.0
        return t + u
    x = values((5, 4), "float64", 10)
    assert_same_as_eager(fn, x, captured=True)
    out = frame.explain(fn)(x)
    assert out.graph_break_count == 1 and "boolean mask" in out.break_reasons[0].reason


def test_full_graph_accepts_reduced_selections():
    def fn(y, p):
        return rmse_valid(y, p)
    y, p = values((9, 7), "float64", 1, nan=True), values((9, 7), "float64", 2)
    assert frame.jit(fn, full_graph=True)(y, p) == fn(y, p)
