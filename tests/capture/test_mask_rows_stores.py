"""Row masks reduced over axis 0 (``X[labels == k].mean(axis=0)``, the
k-means / LDA / naive-Bayes idiom) and masked stores computed from
selections (``x[m] += 1``, ``x[m] = np.sqrt(x[m])``, ``X[m] = row``): one
graph (``capture/variables/masked.py``), NumPy's bits where the cpu
executable runs the call (settings cpu and default), NumPy's warnings and
exceptions, the caller's array mutated as NumPy mutates it."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import frame

from .corpus import _setting
from .helpers import assert_same_as_eager
from .test_mask_reductions import _native_raises, _run_bitwise, _warnings_of, values

DTYPES = ("float64", "float32", "int64", "int32", "int8", "bool")


def _one_graph(fn, *args, op="masked_reduce"):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = frame.explain(fn)(*copy.deepcopy(args))
    assert out.graph_count == 1 and out.graph_break_count == 0, \
        [r.reason for r in out.break_reasons]
    assert any(op in ops for ops in out.ops_per_graph), out.ops_per_graph


def class_means(X, y):
    return np.stack([X[y == k].mean(axis=0) for k in range(3)])


def kmeans_update(X, y):
    centres = np.zeros((3, X.shape[1]))
    for k in range(3):
        centres[k] = X[y == k].sum(0) / np.count_nonzero(y == k)
    return centres


def scatter_within(X, y):
    mu = X.mean(axis=0)
    m = y == 1
    return ((X[m] - mu) ** 2).sum(axis=0), np.sum((X[m] - X[0]) * 2, axis=0)


def naive_bayes(X, y):
    m = y == 2
    return X[m].mean(0), X[m].var(axis=0), X[m].std(0, ddof=1)


ROWS = {
    "class_means": class_means,
    "kmeans_update": kmeans_update,
    "scatter_within": scatter_within,
    "naive_bayes": naive_bayes,
    "sum_axis0": lambda X, y: X[y == 0].sum(0),
    "np_mean_axis0": lambda X, y: np.mean(X[y == 1], axis=0),
    "max_min_axis0": lambda X, y: (X[y != 1].max(0), np.min(X[y > 0], axis=0)),
    "prod_any_all": lambda X, y: (X[y == 0].prod(axis=0), X[y == 0].any(0), np.all(X[y == 0], 0)),
    "negative_axis": lambda X, y: X[y == 1].sum(axis=-2),
    "all_elements": lambda X, y: (X[y == 1].sum(), np.mean(X[y == 2]), X[y == 0].std(ddof=1)),
    "broadcast_row_1d": lambda X, y: (X[y == 1] * X[2, None]).sum(0),
    "selections_of_one_mask": lambda X, y: (X[y == 1] * X[y == 1] + 1).max(axis=0),
}


def _rows_inputs(dtype, layout="C"):
    X = values((23, 4), dtype, 11, nan=True)
    y = np.random.default_rng(12).integers(0, 3, 23)
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "strided":
        X = np.ascontiguousarray(values((46, 9), dtype, 13, nan=True))[::2, 1::2]
    return X, y


@pytest.mark.parametrize("name,dtype", [(n, d) for n in sorted(ROWS) for d in DTYPES
                                        if not _native_raises(ROWS[n], *_rows_inputs(d))])
def test_row_selections_reduced_over_axis_0(name, dtype):
    fn = ROWS[name]
    X, y = _rows_inputs(dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_eager(fn, X, y)
    _one_graph(fn, X, y)
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, X, y)


@pytest.mark.parametrize("layout", ["F", "strided"])
@pytest.mark.parametrize("name", ["class_means", "scatter_within", "naive_bayes"])
def test_row_selections_of_other_layouts(name, layout):
    fn = ROWS[name]
    X, y = _rows_inputs("float32", layout)
    assert_same_as_eager(fn, X, y)
    _one_graph(fn, X, y)
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, X, y)


def test_axis_0_is_numpys_row_by_row_summation():
    """NumPy sums axis 0 of the compressed rows one row after another, which
    rounds otherwise than its pairwise sum of a column: the result is NumPy's."""
    rng = np.random.default_rng(14)
    X = (rng.standard_normal((3000, 3)) * 10 ** rng.uniform(-3, 3, (3000, 3))).astype(np.float32)
    y = rng.integers(0, 2, 3000)

    def fn(X, y):
        return X[y == 1].sum(axis=0), X[y == 0].mean(0)
    want = fn(X, y)
    assert not np.array_equal(want[0], np.sort(X[y == 1], axis=0).sum(axis=0))
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, X, y)
    assert_same_as_eager(fn, X, y)
    _one_graph(fn, X, y)


def test_three_d_array_with_a_mask_of_two_axes():
    X = values((5, 6, 3), "float64", 15)

    def fn(X):
        m = X[:, :, 0] > 0
        return X[m].mean(axis=0), (X[m] - X[0, 0]).max(0), X[m].sum()
    assert_same_as_eager(fn, X)
    _one_graph(fn, X)
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, X)


def test_int_mean_over_rows_is_float64():
    X = values((10, 3), "int8", 16)

    def fn(X):
        return X[X[:, 0] > 0].mean(axis=0), X[X[:, 1] > 0].sum(0)
    want, got = fn(X), frame.jit(fn)(X.copy())
    assert [(type(w), w.dtype) for w in want] == [(type(g), g.dtype) for g in got]
    assert all(np.array_equal(w, g) for w, g in zip(want, got))
    _one_graph(fn, X)


EMPTY_ROWS = {
    "mean": lambda X, y: X[y > 5].mean(axis=0),
    "std_ddof": lambda X, y: X[y == y[0]].std(axis=0, ddof=30),
    "var_one_row": lambda X, y: np.var(X[y == 9], 0, ddof=1),
    "max": lambda X, y: X[y > 5].max(0),
    "sum": lambda X, y: X[y > 5].sum(0),
    "all_elements_mean": lambda X, y: X[y > 5].mean(),
    "zero_width_mean": lambda X, y: X[:, :0][y > 0].mean(axis=0),
}


@pytest.mark.parametrize("name", sorted(EMPTY_ROWS))
def test_too_few_rows_warn_and_raise_as_numpy(name):
    fn = EMPTY_ROWS[name]
    X, y = _rows_inputs("float64")
    y[3] = 9
    jitted = frame.jit(fn)
    for _ in range(2):   # the translating call and a cache hit
        want, want_warned = _warnings_of(fn, X.copy(), y.copy())
        got, got_warned = _warnings_of(jitted, X.copy(), y.copy())
        if isinstance(want, Exception):
            assert type(got) is type(want) and str(got) == str(want)
        else:
            assert type(got) is type(want) and np.array_equal(got, want, equal_nan=True)
        assert got_warned == want_warned
    # enough rows on the same entry: captured, no warning
    y2 = np.full_like(y, 9)
    want, want_warned = _warnings_of(fn, X.copy(), y2)
    got, got_warned = _warnings_of(jitted, X.copy(), y2)
    assert got_warned == want_warned
    if not isinstance(want, Exception):
        assert np.array_equal(got, want, equal_nan=True)
    _one_graph(fn, X, y2)


ROWS_BREAKING = {
    "axis_1": lambda X, y: X[y == 1].sum(axis=1),
    "keepdims": lambda X, y: X[y == 1].sum(axis=0, keepdims=True),
    "full_array_operand": lambda X, y: (X[y == 1] - X).sum(0),
    "column_operand": lambda X, y: (X[y == 1] - X[:, :1]).sum(0),
    "division_by_row": lambda X, y: (X[y == 1] / X[0]).sum(0),
    "two_axes_left": lambda X, y: X.reshape(23, 2, 2)[y == 1].sum(0),
}


@pytest.mark.parametrize("name", sorted(ROWS_BREAKING))
def test_other_row_uses_break_at_the_getitem(name):
    fn = ROWS_BREAKING[name]
    X, y = _rows_inputs("float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_eager(fn, X, y, captured=None)
        out = frame.explain(fn)(X, y)
    assert out.graph_break_count >= 1
    assert "boolean mask" in out.break_reasons[0].reason, out.break_reasons[0].reason


# -- masked stores computed from selections ---------------------------------------------------

def add_one(x, y):
    x[x > 0] += 1
    return x


def scaled(x, y):
    m = y > 0
    x[m] *= 3
    x[~m] -= 2
    return x


def copied_from_other(x, y):
    x[y > 0] = y[y > 0]
    return x


def square_root_in_place(x, y):
    x[x > 0] = np.sqrt(x[x > 0])
    return x


def sgd_step(x, y):
    m = np.abs(y) < 2
    x[m] -= 0.5 * y[m]
    return x


def expression_of_selections(x, y):
    m = y != 0
    x[m] = x[m] ** 2 + y[m]
    return x


def rows_scaled(x, y):
    x[x[:, 0] > 0] *= 2
    return x


def row_stored(x, y):
    x[y[:, 1] > 0] = x[0]
    return x


def rows_centred(x, y):
    m = y[:, 0] > 0
    x[m] -= x.mean(axis=0)
    return x


def through_a_view(x, y):
    v = x[1:]
    v[v > 0] += 1
    return x


def aliases_see_the_store(x, y):
    z = x
    x[y > 0] *= 2
    return z.sum(), x


def selection_names_see_in_place(x, y):
    s = x[y > 0]
    t = s
    f = s.max
    s += 1
    return t.sum(), f(), x


# name -> (function, the dtype kinds it is one graph for)
STORES = {
    "add_one": (add_one, "iuf"),
    "scaled": (scaled, "iuf"),
    "copied_from_other": (copied_from_other, "biuf"),
    "square_root_in_place": (square_root_in_place, "f"),
    "sgd_step": (sgd_step, "f"),
    "expression_of_selections": (expression_of_selections, "iuf"),
    "rows_scaled": (rows_scaled, "iuf"),
    "row_stored": (row_stored, "biuf"),
    "rows_centred": (rows_centred, "f"),
    "through_a_view": (through_a_view, "iuf"),
    "aliases_see_the_store": (aliases_see_the_store, "iuf"),
    "selection_names_see_in_place": (selection_names_see_in_place, "iuf"),
}


@pytest.mark.parametrize("name,dtype", [(n, d) for n in sorted(STORES) for d in DTYPES])
def test_masked_stores(name, dtype):
    """Stores NumPy refuses (a bool ``+= 1``, a float into an int array) or
    that cast unsafely break as before and still give NumPy's results; the
    others are one graph with NumPy's bits, the argument mutated."""
    fn, kinds = STORES[name]
    x, y = values((9, 5), dtype, 17, nan=True), values((9, 5), dtype, 18)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_eager(fn, x, y, captured=None)
    if np.dtype(dtype).kind not in kinds:
        return
    _one_graph(fn, x, y, op="where")
    if _setting() in ("cpu", "default"):
        _run_bitwise(fn, x, y)


def _store_layouts(x):
    m = x > 0.2
    x[m] = x[m] * 2 - 1
    x[x[:, 0] < 0] += x[0]
    return x.sum(axis=0)


@pytest.mark.parametrize("layout", ["F", "strided"])
def test_store_into_an_f_ordered_and_a_strided_argument(layout):
    """The argument itself is written (its base too, for a strided view), bit
    for bit as NumPy writes it."""
    def argument():
        base = values((12, 10), "float32", 19)
        return (np.asfortranarray(base), None) if layout == "F" else (base[::2, 1::3], base)
    x_native, base_native = argument()
    x_jit, base_jit = argument()
    want = _store_layouts(x_native)
    got = frame.jit(_store_layouts)(x_jit)
    pairs = [(got, want), (x_jit, x_native)] + ([] if base_native is None else
                                                [(base_jit, base_native)])
    for g, w in pairs:   # (OpenVINO from the first call: its own rounding)
        assert np.array_equal(g, w) if _setting() in ("cpu", "default") else \
            np.allclose(g, w, rtol=1e-5, atol=1e-6)
    _one_graph(_store_layouts, argument()[0], op="where")


def test_caller_and_its_views_see_the_store():
    x = values((6, 4), "float64", 20)
    x0 = x.copy()
    view = x[2:]

    def fn(x):
        x[x < 0] = np.exp(x[x < 0])
    frame.jit(fn)(x)
    want = x0.copy()
    fn(want)
    assert np.array_equal(x, want) and np.array_equal(view, want[2:])
    _one_graph(fn, x0.copy(), op="where")


def test_unselected_elements_do_not_warn_in_stores():
    x = np.array([[1.0, 0.0, -2.0], [4.0, 0.0, 3.0]])

    def fn(x):
        m = x > 0
        x[m] = 1 / x[m]
        x[m] = np.log(x[m])
        x[m] /= x[m] - 5
        return x
    want, want_warned = _warnings_of(fn, x.copy())
    got, got_warned = _warnings_of(frame.jit(fn), x.copy())
    assert got_warned == want_warned == []
    assert np.array_equal(want, got)
    with np.errstate(all="raise"):
        assert np.array_equal(frame.jit(fn)(x.copy()), fn(x.copy()))
    _one_graph(fn, x, op="where")


def test_selected_elements_warn_in_stores():
    x = np.array([[1.0, 0.0, -2.0], [4.0, 0.0, 3.0]])

    def fn(x):
        x[x >= 0] = 1 / x[x >= 0]
        return x
    want, want_warned = _warnings_of(fn, x.copy())
    got, got_warned = _warnings_of(frame.jit(fn), x.copy())
    assert want_warned and got_warned == want_warned
    assert np.array_equal(want, got)
    _one_graph(fn, x, op="where")


STORES_BREAKING = {
    "float_into_int": lambda x, y: x.astype(np.int64).__setitem__(y > 0, y[y > 0]),
    "narrowing_cast": lambda x, y: x.astype(np.float32).__setitem__(y > 0, y[y > 0]),
    "other_mask": lambda x, y: x.__setitem__(y > 0, y[x > 0]),
    "int_plus_float_in_place": lambda x, y: _in_place_add(x.astype(np.int64), 1.5),
    "full_array_value": lambda x, y: x.__setitem__(y > 0, y),
}


def _in_place_add(a, v):
    a[a > 0] += v
    return a


@pytest.mark.parametrize("name", sorted(STORES_BREAKING))
def test_other_stores_as_before(name):
    fn = STORES_BREAKING[name]
    x, y = values((5, 4), "float64", 21), values((5, 4), "float64", 22)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_as_eager(fn, x, y, captured=None)
        out = frame.explain(fn)(x.copy(), y.copy())
    assert out.graph_break_count >= 1


# -- selections live at a later graph break -------------------------------------------------

def live_in_a_local(x):
    nz = x[x > 0]
    t = nz.sum()
    if t > 3:   # a break on the data, nz live
        return nz, t
    return nz * 2, t


def written_after_the_getitem(x):
    s = x[x > 0]
    x[0, 0] = 100.0
    x[x < 0] = 0
    x *= 2
    if x.sum() > 0:
        pass
    return s, x


def updated_named_twice_and_bound(x):
    s = x[x > 0]
    s *= 2
    f = s.max
    keep = [s, 1]
    if x.sum() > 0:
        pass
    return keep[0] is s, f(), s.shape, keep[0]


def _returns_its_selection(x):
    s = x[x > 0]
    if s.sum() > 1:
        return s
    return s - 1


def live_in_a_called_function(x):
    return _returns_its_selection(x).mean() + 1


def rows_live(x):
    rows = x[x[:, 0] > 0]
    if rows.sum() > 0:
        rows = rows + 1
    return rows.sum(0), len(rows)


LIVE = {
    "live_in_a_local": live_in_a_local,
    "written_after_the_getitem": written_after_the_getitem,
    "updated_named_twice_and_bound": updated_named_twice_and_bound,
    "live_in_a_called_function": live_in_a_called_function,
    "rows_live": rows_live,
}


@pytest.mark.parametrize("name", sorted(LIVE))
def test_selection_live_at_a_later_break(name):
    """The graph before the break keeps the selection's work; the resume
    function gets NumPy's ``x[mask]`` of the values at the getitem (no
    break at the getitem itself)."""
    fn = LIVE[name]
    x = values((6, 5), "float64", 23)
    assert_same_as_eager(fn, x, captured=None)
    out = frame.explain(fn)(x.copy())
    assert out.graph_break_count >= 1
    assert not any("boolean mask" in r.reason for r in out.break_reasons), \
        [r.reason for r in out.break_reasons]
    assert any(op in out.ops_per_graph[0] for op in ("masked_reduce", "where")), out.ops_per_graph
