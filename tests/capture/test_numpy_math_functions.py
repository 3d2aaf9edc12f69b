"""NumPy's math ufuncs, ufunc methods, masked reductions, dtype queries,
constant constructors and flips (``frame/_numpy_math.py``,
``capture/variables/numpy_dtypes.py``) inside jitted functions.

Every case runs natively and jitted (``assert_same_as_eager``: values, dtypes,
result types, shapes, aliasing, argument mutation, exceptions) over several
dtypes, shapes (0-d and empty where NumPy allows them), edge values (signed
zeros, infinities, NaN, huge and tiny numbers) and axes, and must be one graph
with no break (``frame.explain``).  The ufuncs and functions on frame Tensors
(``Tensor.__array_ufunc__`` / ``__array_function__``) return Tensors with
NumPy's values and dtypes.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame

from .helpers import array, assert_same, assert_same_as_eager

DTYPES = ("float32", "float64", "int64", "bool")
NUMERIC = ("float32", "float64", "int64")
FLOATS = ("float32", "float64")
_FLOAT_EDGES = [-0.0, 0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1e-310, 5e-324, -2.5, 3.5,
                0.5, -1.0, 7.0, 180.0, -90.0]
_INT_EDGES = [-7, -3, -1, 0, 1, 2, 3, 5, 9, 2 ** 40, -(2 ** 40), 6, 4, -2, 8, 11]


def data(shape, dtype, seed=0):
    """Edge values first (as many as fit), then deterministic samples."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == "b":
        return array((max(n, 1),), dtype, seed)[:n].reshape(shape)
    edges = _FLOAT_EDGES if dt.kind == "f" else _INT_EDGES
    rest = array((max(n, 1),), dtype, seed)
    with np.errstate(over="ignore"):
        values = np.concatenate([np.array(edges[seed % 3:], dtype=np.float64 if dt.kind == "f"
                                          else np.int64).astype(dt), rest])[:n]
    return values.reshape(shape)


def nonzero(shape, dtype, seed=1):
    x = data(shape, dtype, seed)
    return np.where(x == 0, np.ones((), dtype), x)


def check(fn, *args, graphs=1):
    assert_same_as_eager(fn, *args)
    out = frame.explain(fn)(*copy.deepcopy(args))
    reasons = [f"{r.kind}: {r.reason}" for r in out.break_reasons]
    assert out.graph_break_count == 0, reasons
    assert out.graph_count == graphs, (out.graph_count, reasons)


SHAPES = ((), (0,), (4, 4))

# -- ufunc-like functions: (fn, operand makers, dtypes)
UNARY = {
    "signbit": (np.signbit, DTYPES),
    "deg2rad": (np.deg2rad, DTYPES),
    "rad2deg": (np.rad2deg, DTYPES),
    "radians": (np.radians, DTYPES),
    "degrees": (np.degrees, DTYPES),
    "sinc": (np.sinc, DTYPES),
    "frexp": (np.frexp, DTYPES),
    "modf": (np.modf, DTYPES),
    "positive": (np.positive, NUMERIC),
    "conj": (np.conj, NUMERIC),
    "conjugate": (np.conjugate, NUMERIC),
    "real": (np.real, DTYPES),
    "reciprocal_float": (np.reciprocal, FLOATS),
    "angle_units": (lambda x: np.rad2deg(np.deg2rad(x)) - x, FLOATS),
    "sinc_window": (lambda x: np.sinc(x * 0.5) * 2 + np.sinc(np.float64(0.25)), FLOATS),
    "mantissa_bits": (lambda x: np.ldexp(*np.frexp(x)), FLOATS),
    "split_parts": (lambda x: np.modf(x)[0] + np.modf(x)[1], FLOATS),
    "spacing": (np.spacing, DTYPES),
    "spacing_tolerance": (lambda x: np.abs(x - 1) <= 4 * np.spacing(np.abs(x)), FLOATS),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_math_functions(name, shape):
    fn, dtypes = UNARY[name]
    for dtype in dtypes:
        with np.errstate(all="ignore"):  # np.real of a real array is the array: no graph
            check(lambda x: fn(x), data(shape, dtype), graphs=0 if name == "real" else 1)


def test_reciprocal_of_integers():
    check(lambda x: np.reciprocal(x), nonzero((4, 4), "int64"))


BINARY = {
    "copysign": (np.copysign, DTYPES),
    "heaviside": (np.heaviside, FLOATS),
    "fmod": (np.fmod, NUMERIC),
    "float_power": (lambda a, b: np.float_power(np.abs(a), b), NUMERIC),
    "divmod": (np.divmod, NUMERIC),
    "ldexp_ints": (lambda a, b: np.ldexp(a, b.astype(np.int64) % 8), FLOATS),
    "copysign_scalar": (lambda a, b: np.copysign(a, -1.0) + np.copysign(3, b), FLOATS),
    "heaviside_scalar": (lambda a, b: np.heaviside(a, 0.5), FLOATS),
    "fmod_scalar": (lambda a, b: np.fmod(a, 3) + np.fmod(-7, b), NUMERIC),
    "float_power_scalar": (lambda a, b: np.float_power(np.abs(a), 0.1) + np.float_power(2, b),
                           NUMERIC),
    "ldexp_scalar": (lambda a, b: np.ldexp(a, 3), DTYPES),
    "divmod_scalar": (lambda a, b: np.divmod(a, 4), NUMERIC),
    "nextafter": (np.nextafter, DTYPES),
    "nextafter_steps": (lambda a, b: (np.nextafter(a, np.inf) - a, np.nextafter(a, b) == a,
                                      np.nextafter(np.nextafter(a, -np.inf), np.inf)), FLOATS),
    "nextafter_scalar": (lambda a, b: np.nextafter(a, 0) + np.nextafter(np.float32(1), b), FLOATS),
}


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_math_functions(name, shape):
    fn, dtypes = BINARY[name]
    for dtype in dtypes:
        a = data(shape, dtype, 0)
        b = nonzero(shape, dtype, 2) if name.startswith(("fmod", "divmod")) else data(shape, dtype, 2)
        with np.errstate(all="ignore"):
            check(lambda x, y: fn(x, y), a, b)


def test_binary_math_functions_broadcast_and_mix_dtypes():
    a = data((3, 4), "float32")
    b = data((4,), "float64", 1)
    check(lambda x, y: (np.copysign(x, y), np.heaviside(x, y), np.float_power(np.abs(x), y),
                        np.fmod(x, y)), a, b)
    check(lambda x, y: np.ldexp(x, np.arange(4, dtype=np.int32)), a, b)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_math_functions_on_tensors(name):
    fn, dtypes = UNARY[name]
    for dtype in dtypes:
        x = data((4, 4), dtype)
        with np.errstate(all="ignore"):
            expected = fn(x)
            got = fn(frame.tensor(x))
        got = tuple(g.numpy() for g in got) if isinstance(got, tuple) else got.numpy()
        assert_same(expected, got)


def test_binary_math_functions_on_tensors():
    for dtype in FLOATS:
        a, b = data((4, 4), dtype), nonzero((4, 4), dtype, 2)
        for fn in (np.copysign, np.heaviside, np.fmod, np.float_power, np.divmod):
            with np.errstate(all="ignore"):
                expected = fn(np.abs(a), b)
                got = fn(frame.tensor(np.abs(a)), frame.tensor(b))
            got = tuple(g.numpy() for g in got) if isinstance(got, tuple) else got.numpy()
            assert_same(expected, got)


def test_math_functions_refuse_what_numpy_refuses():
    x = data((3,), "bool")
    assert_same_as_eager(lambda a: np.positive(a), x, captured=None)
    assert_same_as_eager(lambda a: np.fmod(a, 1.5), data((3,), "float32"))
    assert_same_as_eager(lambda a: np.ldexp(a, 1.5), data((3,), "float32"), captured=None)


# -- ufunc methods

ACCUMULATE = {
    "add": lambda x, ax: np.add.accumulate(x, axis=ax),
    "multiply": lambda x, ax: np.multiply.accumulate(x, ax),
    "maximum": lambda x, ax: np.maximum.accumulate(x, axis=ax),
    "minimum": lambda x, ax: np.minimum.accumulate(x, axis=ax),
}


@pytest.mark.parametrize("axis", (0, 1, -1))
@pytest.mark.parametrize("name", list(ACCUMULATE))
def test_ufunc_accumulate(name, axis):
    fn = ACCUMULATE[name]
    for dtype in DTYPES + ("int32",):
        for shape in ((4, 4), (0, 3)):
            with np.errstate(all="ignore"):
                check(lambda x: fn(x, axis), data(shape, dtype, 1))


def test_ufunc_accumulate_running_extremes():
    def drawdown(prices):
        peak = np.maximum.accumulate(prices)
        return (peak - prices) / peak

    check(drawdown, np.abs(data((12,), "float64", 1)) + 1.0)
    check(lambda x: np.minimum.accumulate(x[::-1])[::-1], data((9,), "float32"))
    check(lambda x: np.add.accumulate(x), data((7,), "int32"))


REDUCE = {
    "logical_and": lambda x, ax, kd: np.logical_and.reduce(x, axis=ax, keepdims=kd),
    "logical_or": lambda x, ax, kd: np.logical_or.reduce(x, axis=ax, keepdims=kd),
    "add": lambda x, ax, kd: np.add.reduce(x, axis=ax, keepdims=kd),
    "multiply": lambda x, ax, kd: np.multiply.reduce(x, axis=ax, keepdims=kd),
    "maximum": lambda x, ax, kd: np.maximum.reduce(x, axis=ax, keepdims=kd),
    "minimum": lambda x, ax, kd: np.minimum.reduce(x, axis=ax, keepdims=kd),
}


@pytest.mark.parametrize("axis", (0, -1, None, (0, 1)), ids=str)
@pytest.mark.parametrize("name", list(REDUCE))
def test_ufunc_reduce(name, axis):
    fn = REDUCE[name]
    for dtype in DTYPES:
        for keepdims in (False, True):
            with np.errstate(all="ignore"):
                check(lambda x: fn(x, axis, keepdims), data((4, 4), dtype, 1))
    if name.startswith("logical"):
        check(lambda x: fn(x, axis, False), data((0, 3), "float64"))


OUTER = (np.add, np.subtract, np.multiply, np.equal, np.less, np.maximum, np.logical_and,
         np.copysign, np.hypot, np.fmod)


@pytest.mark.parametrize("ufunc", OUTER, ids=lambda u: u.__name__)
def test_ufunc_outer(ufunc):
    for dtype in FLOATS:
        with np.errstate(all="ignore"):
            check(lambda a, b: ufunc.outer(a, b), data((4,), dtype), nonzero((2, 3), dtype, 2))
            check(lambda a, b: ufunc.outer(a[0], b), data((2,), dtype), nonzero((3,), dtype, 2))
    check(lambda a, b: np.multiply.outer(a, b), data((3,), "int64"), data((2,), "int64", 1))


# -- reductions with where= and initial=

MASKED = {
    "sum_where": lambda x, m: np.sum(x, where=m),
    "sum_where_axis": lambda x, m: np.sum(x, axis=1, where=m, keepdims=True),
    "sum_initial": lambda x, m: np.sum(x, axis=-1, initial=10),
    "prod_where": lambda x, m: np.prod(x, axis=0, where=m),
    "max_where": lambda x, m: np.max(x, where=m, initial=-5),
    "max_where_axis": lambda x, m: np.max(x, axis=(0, 1), where=m, initial=0),
    "min_initial": lambda x, m: np.min(x, axis=0, initial=1),
    "amin_where": lambda x, m: np.amin(x, axis=-1, where=m, initial=3),
    "method_max": lambda x, m: x.max(axis=1, where=m, initial=-1),
    "method_sum": lambda x, m: x.sum(where=m),
    "add_reduce": lambda x, m: np.add.reduce(x, axis=None, where=m, initial=2),
    "maximum_reduce": lambda x, m: np.maximum.reduce(x, where=m, initial=0),
    "row_mask": lambda x, m: np.sum(x, axis=1, where=np.array([True, False, True, False])),
    "masked_mean": lambda x, m: np.sum(x, where=m) / max(1, 1),
}


@pytest.mark.parametrize("name", list(MASKED))
def test_reductions_with_where_and_initial(name):
    fn = MASKED[name]
    for dtype in DTYPES:
        for shape in ((4, 4), (0, 4)):
            x = data(shape, dtype, 1)
            mask = data(shape, "bool", 3)
            with np.errstate(all="ignore"):
                check(lambda a, m: fn(a, m), x, mask)


def test_where_mask_from_the_data():
    def positive_sum(x):
        return np.sum(x, where=x > 0), np.max(x, axis=0, where=~np.isnan(x), initial=-np.inf)

    check(positive_sum, data((4, 4), "float64"))
    # no initial value for a maximum with a mask: NumPy raises ValueError
    assert_same_as_eager(lambda x: np.max(x, where=x > 0), data((4,), "float64"), captured=None)


# -- dtype queries at trace time

def test_dtype_queries_fold_at_trace_time():
    def scale(x):
        dt = np.result_type(x, 1.0)
        eps = np.finfo(dt).eps if np.issubdtype(dt, np.floating) else 1
        big = np.iinfo(np.int32).max
        widened = np.promote_types(x.dtype, np.float32)
        return (x.astype(widened) * eps + np.can_cast(x, np.float64), big,
                np.iscomplexobj(x), np.isrealobj(x), np.finfo(np.float32).tiny,
                np.iinfo(np.int8).min, np.finfo(dt).max, np.common_type(np.abs(x) + 0.5))

    for dtype in NUMERIC:
        check(scale, data((3, 4), dtype))
    check(lambda x: x * np.finfo(x.dtype).eps, data((3,), "float32"))
    check(lambda x: np.result_type(x, np.float32(1), 2) == np.float64 and x + 1,
          data((3,), "float64"))
    check(lambda x: x + 1 if np.isdtype(x.dtype, "real floating") else x, data((3,), "float64"))
    # NumPy's own errors: raised by the native run
    assert_same_as_eager(lambda x: x + np.finfo(np.int64).eps, data((3,), "float64"),
                         captured=None)


# -- constructors with constant arguments

def test_constant_constructors():
    def windows(x):
        lower = np.tri(4, 4, k=-1) * x
        scales = np.logspace(0, 3, 4) + np.logspace(0, 2, 4, base=2.0, endpoint=False)
        ratios = np.geomspace(1, 1000, 4) * np.geomspace(-1, -16, 4, dtype=np.float32)
        return lower @ scales, ratios * x[0], np.tri(3, 5, 1, dtype=bool)

    for dtype in FLOATS:
        check(windows, data((4, 4), dtype))


# -- flips and rotations (views of the argument, as in NumPy)

FLIPS = {
    "fliplr": np.fliplr,
    "flipud": np.flipud,
    "rot90": np.rot90,
    "rot90_k2": lambda m: np.rot90(m, 2),
    "rot90_k3": lambda m: np.rot90(m, k=3, axes=(1, 0)),
    "rot90_k-1": lambda m: np.rot90(m, -1, axes=(-1, 0)),
    "rot90_k4": lambda m: np.rot90(m, 4),
    "rot90_3d": lambda m: np.rot90(m.reshape(2, 2, -1), 1, axes=(0, 2)),
}


@pytest.mark.parametrize("name", list(FLIPS))
def test_flips_and_rotations(name):
    fn = FLIPS[name]
    for dtype in DTYPES:
        for shape in ((4, 6), (0, 2)):
            if name == "rot90_3d" and shape[0] == 0:
                continue
            check(lambda m: fn(m) + 0 if m.dtype != np.bool_ else fn(m) | False,
                  data(shape, dtype))
            assert_same_as_eager(lambda m: fn(m), data(shape, dtype))


def test_flip_views_share_the_array():
    def write_through(m):
        v = np.fliplr(m)
        v[0, 0] = 100.0
        r = np.rot90(m)
        return m.sum() + r[0, 0]

    # a write through a view runs natively (capture's rule for every NumPy view)
    assert_same_as_eager(write_through, data((3, 4), "float64"), captured=None)
    check(lambda m: np.flipud(m)[0] + np.rot90(m, 2)[1], data((3, 3), "float32"))


def test_flips_refuse_what_numpy_refuses():
    assert_same_as_eager(lambda v: np.fliplr(v), data((4,), "float32"), captured=None)
    assert_same_as_eager(lambda v: np.rot90(v, axes=(0, 0)), data((3, 3), "float32"),
                         captured=None)


@pytest.mark.parametrize("name", list(FLIPS))
def test_flips_on_tensors(name):
    x = data((4, 6), "float32")
    got = FLIPS[name](frame.tensor(x))
    assert isinstance(got, frame.Tensor)
    assert_same(FLIPS[name](x), got.numpy())


# -- in place: ndarray.fill, np.fill_diagonal (the caller's array is written, as natively)

def _fill(a, v):
    a.fill(v)
    return a


FILLS = {
    "fill_float": lambda a: _fill(a, 2.5),
    "fill_int": lambda a: _fill(a, 7),
    "fill_bool": lambda a: _fill(a, True),
    "fill_numpy_scalar": lambda a: _fill(a, np.float32(-0.0)),
    "fill_from_data": lambda a: _fill(a, a.max()),
    "fill_view": lambda a: (_fill(a[1:, ::2], 3), a.sum())[1],
    "fill_returns_none": lambda a: a.fill(1),
    "fill_diagonal": lambda a: (np.fill_diagonal(a, 0), a)[1],
    "fill_diagonal_wrap": lambda a: (np.fill_diagonal(a, 9, wrap=True), a)[1],
    "fill_diagonal_array": lambda a: (np.fill_diagonal(a, a[0]), a)[1],
    "fill_diagonal_short": lambda a: (np.fill_diagonal(a, a[0, :2] * 2), a)[1],
    "fill_diagonal_scalar_from_data": lambda a: (np.fill_diagonal(a, a.min()), a.sum())[1],
    "fill_diagonal_row": lambda a: (np.fill_diagonal(a[1:], -1), a)[1],
}


@pytest.mark.parametrize("shape", ((6, 4), (4, 6), (4, 4), (0, 3)), ids=str)
@pytest.mark.parametrize("name", list(FILLS))
def test_in_place_fills(name, shape):
    fn = FILLS[name]
    for dtype in DTYPES:
        if dtype == "bool" and name in ("fill_float", "fill_numpy_scalar", "fill_diagonal_short"):
            continue  # (bools * 2 are int64: their unsafe cast into bools runs natively)
        x = data(shape, dtype, 1)
        if 0 in shape and ("from_data" in name or "array" in name or "short" in name):
            continue
        check(fn, x)


def test_fill_diagonal_of_a_cube():
    check(lambda a: (np.fill_diagonal(a, 5), a)[1], data((3, 3, 3), "int64"))


def test_in_place_fills_refuse_what_numpy_refuses():
    # NumPy raises for these: the native run raises the same exception
    assert_same_as_eager(lambda a: np.fill_diagonal(a, 0), data((4,), "float64"), captured=None)
    assert_same_as_eager(lambda a: np.fill_diagonal(a, 0), data((2, 3, 3), "float64"),
                         captured=None)
    assert_same_as_eager(lambda a: _fill(a, np.nan), data((3,), "int64"), captured=None)
    assert_same_as_eager(lambda a: _fill(a, 2 ** 70), data((3,), "int64"), captured=None)


def test_ufunc_methods_and_masked_reductions_on_tensors():
    x = data((4, 4), "float64", 1)
    mask = data((4, 4), "bool", 3)
    for fn in (lambda a, m: np.maximum.accumulate(a, axis=1),
               lambda a, m: np.add.accumulate(a),
               lambda a, m: np.multiply.outer(a[0], a[1]),
               lambda a, m: np.logical_or.reduce(a, axis=None),
               lambda a, m: np.sum(a, axis=0, where=m),
               lambda a, m: np.max(a, where=m, initial=-1.0),
               lambda a, m: np.rot90(a, 3)):
        with np.errstate(all="ignore"):
            expected = fn(x, mask)
            got = fn(frame.tensor(x), frame.tensor(mask))
        assert isinstance(got, frame.Tensor)
        assert_same(np.asarray(expected), got.numpy())


def test_imag_of_real_arrays():
    for dtype in DTYPES:
        for shape in ((0,), (3, 4)):
            check(lambda x: (np.imag(x), np.imag(x) + x), data(shape, dtype))

    def write_into_imag(x):
        y = np.imag(x)
        y[0] = 1.0  # NumPy's imaginary part of a real array is read-only: ValueError
        return y

    assert_same_as_eager(write_into_imag, data((3,), "float64"), captured=None)
    got = np.imag(frame.tensor(data((3,), "float32")))
    assert isinstance(got, frame.Tensor)
    assert_same(np.imag(data((3,), "float32")), got.numpy())


def test_ufunc_methods_on_lists_and_constants():
    x = data((3, 4), "float64", 1)
    # constants only: NumPy runs at trace time; a list beside an array is np.asarray'd
    check(lambda a: np.add.accumulate([1, 2, 3]) + a[0, :3], x)
    check(lambda a: np.multiply.outer([1, 2], [3, 4, 5]) + a[:2, :3], x)
    check(lambda a: np.add.outer(a[0], [1.5, 2.5]), x)
    check(lambda a: np.maximum.accumulate([0.5, 2.0, 1.0, 3.0] * a[0]), x)
    check(lambda a: np.logical_or.reduce(a > 0, axis=1), x)


# -- np.ascontiguousarray: the input array itself when it is C-contiguous (as NumPy)

def test_ascontiguousarray_of_contiguous_inputs():
    for dtype in DTYPES:
        x = data((3, 4), dtype)
        check(lambda a: np.ascontiguousarray(a), x, graphs=0)  # nothing computed: no graph
        check(lambda a: np.ascontiguousarray(a) + np.ascontiguousarray(a, dtype=np.float32), x)
        check(lambda a: np.ascontiguousarray(a, dtype=a.dtype) * 2, x)

    def write_through(a):
        b = np.ascontiguousarray(a)
        b[0] = 1  # b is a: the caller sees the write
        return b is a, a

    check(write_through, data((3, 4), "float64"))


def test_ascontiguousarray_follows_the_layout_of_each_call():
    jitted = frame.jit(lambda a: np.ascontiguousarray(a))
    x = data((3, 4), "float64")
    assert jitted(x) is x
    t = x.T  # not C-contiguous: NumPy copies (a graph break, NumPy runs it)
    got = jitted(t)
    assert got is not t and got.flags.c_contiguous and np.array_equal(got, t, equal_nan=True)
    assert jitted(x) is x
    # computed arrays, views and 0-d arrays run natively
    for fn, arg in ((lambda a: np.ascontiguousarray(a.T), x),
                    (lambda a: np.ascontiguousarray(a * 2), x),
                    (lambda a: np.ascontiguousarray(a), np.array(2.0))):
        assert_same_as_eager(fn, arg, captured=None)
