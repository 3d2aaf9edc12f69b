"""NumPy functions frame models with NumPy's own semantics (``frame._numpy_functions``):
``np.dot``/``vdot``/``inner``/``outer``/``tensordot``, ``np.square``, ``np.log1p``/
``np.expm1``/``np.hypot``/``np.logaddexp`` (ops of their own, as accurate as NumPy's),
``np.left_shift``/``np.right_shift`` (and ``a << k``), ``np.any``/
``np.all``/``np.count_nonzero`` (and the ndarray methods), the stacking and axis
functions, ``np.diff``/``roll``/``repeat``/``tile``/``triu``/``tril``,
``np.isclose``, ``np.round``, ``np.ptp``, ``np.average``, the ``dtype=`` of
``np.sum``/``prod``/``mean``, the ``*_like`` constructors, ``np.meshgrid``, and the
NaN/inf tests ``np.isnan``/``isinf``/``isfinite``/``fmax``/``fmin``/``logical_xor``/
``nan_to_num`` (on values holding NaN, infinities and signed zeros).

Every case runs natively and jitted (``assert_same_as_eager``: values, dtypes,
result types, shapes, exceptions) over several dtypes and shapes (0-d and empty
where NumPy allows them) and axes (negative, None, tuples), and must be one graph
with no break (``frame.explain``).  The same functions on frame Tensors
(``Tensor.__array_function__``) return Tensors with NumPy's values and dtypes.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame

from .helpers import array, assert_same, assert_same_as_eager

DTYPES = ("float32", "float64", "int64", "bool")
NUMERIC = ("float32", "float64", "int64")


def data(shape, dtype="float32", seed=0):
    if shape == ():  # helpers.array makes at least 1-d arrays
        return array((1,), dtype, seed).reshape(())
    return array(shape, dtype, seed)


def _check(fn, args, graphs):
    assert_same_as_eager(fn, *args)
    out = frame.explain(fn)(*copy.deepcopy(args))
    reasons = [f"{r.kind}: {r.reason}" for r in out.break_reasons]
    assert out.graph_break_count == 0, reasons
    assert out.graph_count == graphs, (out.graph_count, reasons)


def _shift_in_place(a):
    a <<= 2
    a >>= 1
    return a


def _cases():
    """(id, fn, argument shapes, dtypes, graphs)."""
    c = []

    def add(name, fn, shapes, dtypes=DTYPES, graphs=1):
        c.append((name, fn, shapes, dtypes, graphs))

    # -- products
    add("dot-2d", lambda a, b: np.dot(a, b), ((3, 4), (4, 2)))
    add("dot-1d", lambda a, b: np.dot(a, b), ((4,), (4,)))
    add("dot-1d-2d", lambda a, b: np.dot(a, b), ((4,), (4, 3)))
    add("dot-nd-1d", lambda a, b: np.dot(a, b), ((2, 3, 4), (4,)))
    add("dot-nd-nd", lambda a, b: np.dot(a, b), ((2, 3, 4), (5, 4, 2)))
    add("dot-0d", lambda a, b: np.dot(a, b), ((), (3, 2)))
    add("dot-python-scalar", lambda a: np.dot(a, 2.0), ((3, 2),))
    add("dot-empty", lambda a, b: np.dot(a, b), ((3, 0), (0, 2)))
    add("dot-method", lambda a, b: a.dot(b), ((3, 4), (4,)))
    add("dot-list", lambda a: np.dot(a, [1, 2, 3, 4]), ((2, 4),))
    add("vdot", lambda a, b: np.vdot(a, b), ((3, 4), (2, 6)))
    add("inner-2d", lambda a, b: np.inner(a, b), ((3, 4), (2, 4)))
    add("inner-1d", lambda a, b: np.inner(a, b), ((4,), (4,)))
    add("inner-nd", lambda a, b: np.inner(a, b), ((2, 3, 4), (5, 4)))
    add("inner-0d", lambda a, b: np.inner(a, b), ((), (2, 3)))
    add("outer", lambda a, b: np.outer(a, b), ((4,), (3,)))
    add("outer-flattens", lambda a, b: np.outer(a, b), ((2, 2), (3, 1)))
    add("outer-empty", lambda a, b: np.outer(a, b), ((0,), (3,)))
    add("tensordot-int", lambda a, b: np.tensordot(a, b, axes=1), ((2, 3), (3, 4)))
    add("tensordot-default", lambda a, b: np.tensordot(a, b), ((2, 3, 4), (3, 4, 5)))
    add("tensordot-pairs", lambda a, b: np.tensordot(a, b, axes=([0, -1], [2, 0])),
        ((2, 3, 4), (4, 5, 2)))
    add("tensordot-0", lambda a, b: np.tensordot(a, b, axes=0), ((2,), (3,)))
    add("square", lambda a: np.square(a), ((3, 4),), NUMERIC)
    add("square-0d", lambda a: np.square(a), ((),), NUMERIC)
    add("log1p", lambda a: np.log1p(np.abs(a)), ((3, 4),))
    add("log1p-tiny", lambda a: np.log1p(a * 1e-6), ((3, 4),), ("float32", "float64"))
    add("expm1", lambda a: np.expm1(a), ((3, 4),))
    add("expm1-tiny", lambda a: np.expm1(a * 1e-6), ((3, 4),), ("float32", "float64"))
    add("log1p-expm1-0d", lambda a: (np.log1p(a * a), np.expm1(a)), ((),), NUMERIC)
    add("hypot", lambda a, b: np.hypot(a, b), ((3, 4), (4,)))
    add("hypot-scalar", lambda a: (np.hypot(a, 3.0), np.hypot(4, a)), ((3, 4),))
    add("hypot-large", lambda a, b: np.hypot(a * 1e30, b * 1e30), ((3, 4), (3, 4)),
        ("float32", "float64"))
    add("logaddexp", lambda a, b: np.logaddexp(a, b), ((3, 4), (3, 1)))
    add("logaddexp-large", lambda a, b: np.logaddexp(a * 100, b * 100), ((3, 4), (3, 4)),
        ("float32", "float64"))
    add("logaddexp-equal", lambda a: np.logaddexp(a, a), ((3, 4),), ("float32", "float64"))
    add("shifts", lambda a, b: (np.left_shift(a, b), np.right_shift(-a, b)), ((3, 4), (4,)),
        ("int64",))
    add("shift-in-place-operators", _shift_in_place, ((3, 4),), ("int64",))
    add("shift-operators", lambda a: (a << 3, a >> 1, (-a) >> 70, a << 64), ((3, 4),), ("int64",))
    # -- truth tests, counts
    for fname, f in (("any", np.any), ("all", np.all)):
        add(f"{fname}", lambda a, f=f: f(a), ((3, 4),))
        add(f"{fname}-axis", lambda a, f=f: f(a, axis=-1), ((3, 4),))
        add(f"{fname}-axes-keepdims", lambda a, f=f: f(a, axis=(0, 2), keepdims=True), ((2, 3, 4),))
        add(f"{fname}-empty", lambda a, f=f: (f(a), f(a, axis=0)), ((0, 3),))
        add(f"{fname}-0d", lambda a, f=f: f(a), ((),))
        add(f"{fname}-comparison", lambda a, f=f: f(a > 1, axis=0), ((3, 4),), NUMERIC)
    add("any-method", lambda a: (a.any(), a.any(axis=1), a.any(0, keepdims=True)), ((3, 4),))
    add("all-method", lambda a: (a.all(), a.all(axis=-1), a.all(keepdims=True)), ((3, 4),))
    add("count_nonzero", lambda a: np.count_nonzero(a), ((3, 4),))
    add("count_nonzero-axis", lambda a: np.count_nonzero(a, axis=(0, -1), keepdims=True),
        ((2, 3, 4),))
    add("count_nonzero-empty", lambda a: np.count_nonzero(a, axis=1), ((0, 3),))
    # -- joining, axes
    add("vstack", lambda a, b: np.vstack([a, b]), ((2, 4), (3, 4)))
    add("vstack-1d", lambda a, b: np.vstack((a, b)), ((4,), (4,)))
    add("vstack-0d", lambda a, b: np.vstack([a, b]), ((), ()))
    add("hstack", lambda a, b: np.hstack([a, b]), ((3, 2), (3, 1)))
    add("hstack-1d", lambda a, b: np.hstack((a, b)), ((4,), (2,)))
    add("hstack-0d", lambda a, b: np.hstack((a, b)), ((), (2,)))
    add("column_stack", lambda a, b, c: np.column_stack([a, b, c]), ((4,), (4, 2), (4,)))
    add("dstack", lambda a, b: np.dstack([a, b]), ((2, 3), (2, 3, 2)))
    add("dstack-1d", lambda a, b: np.dstack((a, b)), ((3,), (3,)))
    add("stack-promotes", lambda a: np.vstack([a, np.ones(3, np.int32)]), ((2, 3),))
    add("swapaxes", lambda a: np.swapaxes(a, 0, -1) + 0, ((2, 3, 4),))
    add("moveaxis", lambda a: np.moveaxis(a, 0, -1) + 0, ((2, 3, 4),))
    add("moveaxis-tuple", lambda a: np.moveaxis(a, (0, 1), (-1, 0)) + 0, ((2, 3, 4),))
    add("swapaxes-moveaxis-views", lambda a: (np.swapaxes(a, 0, 1), np.moveaxis(a, -1, 0)),
        ((2, 3, 4),), graphs=0)
    # -- differences, shifts, repeats
    add("diff", lambda a: np.diff(a), ((3, 5),))
    add("diff-n-axis", lambda a: np.diff(a, n=2, axis=0), ((4, 3),))
    add("diff-n-past-length", lambda a: np.diff(a, n=4), ((2, 3),))
    add("diff-prepend-append", lambda a: np.diff(a, prepend=0, append=a[:, -1:]), ((3, 4),))
    add("roll", lambda a: np.roll(a, 2), ((3, 4),))
    add("roll-negative-axis", lambda a: np.roll(a, -1, axis=-1), ((3, 4),))
    add("roll-axes", lambda a: np.roll(a, (1, 5), axis=(0, 1)), ((3, 4),))
    add("roll-same-axis-twice", lambda a: np.roll(a, (1, 2), axis=(1, 1)), ((3, 4),))
    add("roll-by-size", lambda a: np.roll(a, 4, axis=1), ((3, 4),))
    add("roll-empty", lambda a: np.roll(a, 1), ((0, 3),))
    add("repeat", lambda a: np.repeat(a, 2), ((2, 3),))
    add("repeat-axis", lambda a: np.repeat(a, 3, axis=-1), ((2, 3),))
    add("repeat-list", lambda a: np.repeat(a, [1, 0, 2], axis=0), ((3, 2),))
    add("repeat-zero", lambda a: np.repeat(a, 0, axis=1), ((3, 2),))
    add("repeat-0d", lambda a: np.repeat(a, 3), ((),))
    add("repeat-method", lambda a: a.repeat(2, axis=0), ((2, 3),))
    add("tile", lambda a: np.tile(a, 2), ((2, 3),))
    add("tile-more-reps", lambda a: np.tile(a, (2, 1, 2)), ((2, 3),))
    add("tile-0d", lambda a: np.tile(a, (2, 3)), ((),))
    add("tile-ones", lambda a: np.tile(a, 1), ((3,),))
    add("triu", lambda a: np.triu(a), ((4, 4),))
    add("triu-k", lambda a: (np.triu(a, 1), np.triu(a, -2)), ((3, 5),))
    add("tril", lambda a: np.tril(a), ((4, 3),))
    add("tril-k-batched", lambda a: np.tril(a, k=-1), ((2, 3, 3),))
    add("tril-1d", lambda a: np.tril(a, 1), ((3,),))
    # -- comparisons, rounding, statistics
    add("isclose", lambda a, b: np.isclose(a, b), ((3, 4), (3, 4)), NUMERIC)
    add("isclose-tolerances", lambda a: np.isclose(a, a + 1e-3, rtol=0.0, atol=1e-2), ((3, 4),),
        NUMERIC)
    add("isclose-scalar", lambda a: (np.isclose(a, 1), np.isclose(2.0, a), np.isclose(a, True)),
        ((3, 4),), NUMERIC)
    add("isclose-0d", lambda a, b: np.isclose(a, b), ((), ()), NUMERIC)
    add("isclose-bools", lambda a, b: np.isclose(a, b), ((3, 4), (4,)), ("bool",))
    add("round", lambda a: np.round(a), ((3, 4),), NUMERIC)
    add("round-decimals", lambda a: (np.round(a, 2), np.around(a, 1), np.round(a, -1)),
        ((3, 4),), ("float32", "float64"))
    add("round-method", lambda a: a.round(1), ((3, 4),), NUMERIC)
    add("round-negative-decimals", lambda a: (np.round(a, -1), np.around(a * 7, -2), np.round(a, -3),
                                              np.round(a, -25)), ((3, 4),), NUMERIC)
    add("ptp", lambda a: np.ptp(a), ((3, 4),), NUMERIC)
    add("ptp-axis", lambda a: (np.ptp(a, axis=0), np.ptp(a, axis=-1, keepdims=True)), ((3, 4),),
        NUMERIC)
    add("average", lambda a: np.average(a), ((3, 4),), DTYPES)
    add("average-axis", lambda a: np.average(a, axis=-1, keepdims=True), ((3, 4),), DTYPES)
    add("average-weights", lambda a: np.average(a, axis=1, weights=[1, 2, 3, 4]), ((3, 4),),
        DTYPES)
    add("average-weights-float", lambda a: np.average(a, axis=0, weights=[0.5, 0.25, 1.0]),
        ((3, 4),), DTYPES)
    add("average-weights-full", lambda a: np.average(a, weights=[[1, 2, 3, 4], [0, 0, 1, 0],
                                                                 [2.5, 1, 1, 1]]), ((3, 4),), DTYPES)
    add("average-weights-axes", lambda a: np.average(a, axis=(-1, 0), weights=[[1, 2], [3, 4],
                                                                              [5, 6]]),
        ((2, 4, 3),), DTYPES)
    add("average-returned", lambda a: np.average(a, axis=0, weights=[1, 2, 3], returned=True),
        ((3, 4),), DTYPES)
    add("average-returned-no-weights", lambda a: np.average(a, axis=1, returned=True), ((3, 4),),
        NUMERIC)
    add("mean-dtype", lambda a: (np.mean(a, dtype=np.float32), np.mean(a, axis=0, dtype="f8")),
        ((3, 4),), DTYPES)
    add("mean-int-dtype", lambda a: (np.mean(a, dtype=np.int64), np.mean(a, axis=1, dtype=np.int32)),
        ((3, 4),), ("int64", "bool", "float64"))
    add("sum-dtype", lambda a: (np.sum(a, dtype=np.int32), np.sum(a, axis=0, dtype=np.float64),
                                np.sum(a, axis=-1, dtype="float32")), ((3, 4),), DTYPES)
    add("prod-dtype", lambda a: (np.prod(a, dtype=np.float32), np.prod(a, axis=1, dtype=np.int32)),
        ((3, 4),), DTYPES)
    add("dtype-methods", lambda a: (a.sum(axis=0, dtype=np.int32), a.mean(dtype=np.float32),
                                    a.prod(axis=-1, dtype=np.float64)), ((3, 4),), DTYPES)
    add("sum-keepdims", lambda a: np.sum(a, axis=(0, -1), keepdims=True), ((2, 3, 4),))
    # -- new arrays
    add("zeros_like", lambda a: np.zeros_like(a), ((3, 4),))
    add("ones_like", lambda a: (np.ones_like(a), np.ones_like(a, dtype=np.int32)), ((3, 4),))
    add("full_like", lambda a: (np.full_like(a, 7), np.full_like(a, 2.5),
                                np.full_like(a, 3, dtype=np.float64)), ((3, 4),))
    add("full_like-array", lambda a, b: np.full_like(a, b), ((3, 4), (4,)))
    add("full_like-shape", lambda a: np.full_like(a, 1, shape=(2, 5)), ((3, 4),))
    add("empty_like", lambda a: np.empty_like(a).shape + (np.empty_like(a).dtype,), ((3, 4),),
        graphs=0)
    add("zeros_like-plus", lambda a: np.zeros_like(a) + a, ((3, 4),))
    add("meshgrid", lambda a, b: np.meshgrid(a, b), ((3,), (4,)))
    add("meshgrid-ij", lambda a, b, c: np.meshgrid(a, b, c, indexing="ij"), ((3,), (4,), (2,)))
    add("meshgrid-sparse", lambda a, b: np.meshgrid(a, b, sparse=True), ((3,), (2, 2)))
    return c


CASES = _cases()
PARAMS = [pytest.param(fn, shapes, dt, graphs, id=f"{name}-{dt}")
          for name, fn, shapes, dtypes, graphs in CASES for dt in dtypes]


def _args(shapes, dtype):
    return tuple(data(s, dtype, seed=i) for i, s in enumerate(shapes))


@pytest.mark.parametrize("fn, shapes, dtype, graphs", PARAMS)
def test_jitted_matches_numpy(fn, shapes, dtype, graphs):
    _check(fn, _args(shapes, dtype), graphs)


# -- eager: the same functions on frame Tensors ------------------------------------------------------

def _as_numpy(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_as_numpy(v) for v in value)
    assert isinstance(value, frame.Tensor), f"expected a frame Tensor, got {type(value).__name__}"
    return value.numpy()


def _like_numpy(expected):
    if isinstance(expected, (tuple, list)):
        return type(expected)(_like_numpy(v) for v in expected)
    return np.asarray(expected)


# empty_like: its values are unspecified; the ndarray methods and the shift operators
# are not frame Tensor methods
_EAGER = [p for p in PARAMS if not p.id.startswith("empty_like") and "method" not in p.id
          and "operators" not in p.id]


@pytest.mark.parametrize("fn, shapes, dtype, graphs", _EAGER)
def test_eager_tensor_matches_numpy(fn, shapes, dtype, graphs):
    args = _args(shapes, dtype)
    tensors = [frame.tensor(a.copy()) for a in args]
    expected = fn(*args)
    result = fn(*tensors)
    assert_same(_like_numpy(expected), _as_numpy(result), backend="cpu")


def test_eager_dot_returns_a_tensor():
    a, b = data((3, 4)), data((4, 2), "float64")
    result = np.dot(frame.tensor(a), b)
    assert isinstance(result, frame.Tensor)
    assert_same(np.dot(a, b), result.numpy(), backend="cpu")


# -- operands of different dtypes, Python lists and scalars: NumPy's promotion --------------------

def _mixed():
    f32, f64, i64, b = (data((3, 4), dt, seed=5) for dt in ("float32", "float64", "int64", "bool"))
    v32, vi = data((4,), "float32", seed=6), data((4,), "int64", seed=7)
    return [
        ("dot-f32-i64", lambda a, v: np.dot(a, v), (f32, vi)),
        ("dot-i64-f64", lambda a, c: np.dot(a, c.T), (i64, f64)),
        ("dot-bool-f32", lambda a, v: np.dot(a, v), (b, v32)),
        ("dot-python-int", lambda a: np.dot(a, 3), (f32,)),
        ("inner-f32-i64", lambda a, v: np.inner(a, v), (f32, vi)),
        ("outer-list", lambda v: np.outer(v, [1.5, 2.0]), (v32,)),
        ("tensordot-f32-f64", lambda a, c: np.tensordot(a, c, axes=([0], [0])), (f32, f64)),
        ("vstack-f32-i64", lambda a, c: np.vstack([a, c]), (f32, i64)),
        ("hstack-list", lambda v: np.hstack([v, [7, 8]]), (v32,)),
        ("column_stack-bool-i64", lambda a, c: np.column_stack([a, c]), (b, i64)),
        ("isclose-i64-f32", lambda a, c: np.isclose(a, c), (i64, f32)),
        ("isclose-f32-i64", lambda a, c: np.isclose(a, c, atol=2), (f32, i64)),
        ("isclose-nan", lambda a: np.isclose(a / 0.0, a / 0.0, equal_nan=True), (f32,)),
        ("isclose-inf", lambda a: np.isclose(a / 0.0, np.inf), (f32,)),
        ("any-nan", lambda a: (np.any(a * np.nan, axis=0), np.all(a * np.nan)), (f32,)),
        ("diff-prepend-f64", lambda a, c: np.diff(a, prepend=c[:, :1]), (f32, f64)),
        ("full_like-f32-into-int", lambda a, c: np.full_like(a, c), (i64, f32)),
        ("average-f32-f64-weights", lambda a: np.average(a, axis=0, weights=[1.0, 2.0, 3.0]),
         (f32,)),
        ("average-i64-int-weights", lambda a: np.average(a, axis=-1, weights=[1, 2, 3, 4],
                                                         returned=True), (i64,)),
        ("sum-dtype-wraps", lambda a: np.sum(a * 1_000_000_000, dtype=np.int32), (i64,)),
        ("square-int-wraps", lambda a: np.square(a * 4_000_000_000), (i64,)),
        ("round-large-decimals", lambda a: np.round(a, 12), (f64,)),
        ("meshgrid-mixed", lambda v, w: np.meshgrid(v, w), (v32, vi)),
        ("scalar-round-method", lambda a: a.sum().round(2), (f32,)),
        ("dot-list-left", lambda a: np.dot([1.0, 2.0, 3.0], a), (f32,)),
        ("vstack-list-row", lambda a: np.vstack([a, [1, 2, 3, 4]]), (f32,)),
        ("any-numpy-scalar", lambda a: np.any(a.sum()), (f32,)),
        ("tile-list", lambda a: np.tile([1, 2], (2, 2)) + a[:2], (f32,)),
        ("outer-numpy-scalar", lambda a: np.outer(a.sum(), a[0]), (f32,)),
        ("diff-append-scalar", lambda a: np.diff(a, axis=0, append=0.5), (i64,)),
        ("repeat-tuple", lambda a: np.repeat(a, (1, 2, 3, 0), axis=1), (b,)),
        ("full_like-bool", lambda a: np.full_like(a, True, dtype=bool), (f64,)),
    ]


@pytest.mark.parametrize("fn, args", [pytest.param(fn, args, id=name) for name, fn, args in _mixed()])
def test_mixed_operands_match_numpy(fn, args):
    _check(fn, args, graphs=1)


# -- rounding: NumPy's half-to-even, the sign of zero, huge values, inf and nan ----------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round_special_values(dtype, decimals):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.3, 0.3, -0.0, 0.49999997, -0.49999997,
                  0.125, 0.135, 2.675, -2.675, 1e4, -7e3, 123.456, np.inf, -np.inf, np.nan,
                  2.0 ** np.finfo(dtype).nmant + 1, -(2.0 ** np.finfo(dtype).nmant) - 1.0,
                  np.finfo(dtype).max, np.finfo(dtype).tiny], dtype=dtype)

    def fn(a):
        return np.round(a, decimals)

    with np.errstate(all="ignore"):
        expected = fn(x)
        got = frame.jit(fn)(x.copy())
    assert got.dtype == expected.dtype
    # bit for bit, also the sign of zeros and nan: on the cpu backend, and on
    # OpenVINO, whose CPU plugin would divide by a constant as a product with its
    # reciprocal and lose the sign of zeros in a multiply, but for the lowering
    # (frame/backends/openvino/exact_arith.py)
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))
    out = frame.explain(fn)(x.copy())
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


# -- bad input: the same exception as NumPy ----------------------------------------------------------

ERRORS = [
    ("dot-unaligned", lambda a, b: np.dot(a, b), ((3, 4), (3, 4))),
    ("inner-mismatch", lambda a, b: np.inner(a, b), ((3, 4), (3,))),
    ("tensordot-mismatch", lambda a, b: np.tensordot(a, b, axes=([0], [0])), ((3, 4), (4, 3))),
    ("vdot-sizes", lambda a, b: np.vdot(a, b), ((3,), (4,))),
    ("any-bad-axis", lambda a: np.any(a, axis=2), ((3, 4),)),
    ("count_nonzero-bad-axis", lambda a: np.count_nonzero(a, axis=-3), ((3, 4),)),
    ("swapaxes-bad-axis", lambda a: np.swapaxes(a, 0, 2), ((3, 4),)),
    ("moveaxis-lengths", lambda a: np.moveaxis(a, (0, 1), 0), ((3, 4),)),
    ("diff-0d", lambda a: np.diff(a), ((),)),
    ("diff-negative-n", lambda a: np.diff(a, n=-1), ((3,),)),
    ("repeat-wrong-count", lambda a: np.repeat(a, [1, 2], axis=0), ((3, 2),)),
    ("repeat-negative", lambda a: np.repeat(a, -1), ((3,),)),
    ("triu-0d", lambda a: np.triu(a), ((),)),
    ("ptp-bool", lambda a: np.ptp(a > 0), ((3,),)),
    ("ptp-empty", lambda a: np.ptp(a), ((0,),)),
    ("average-zero-weights", lambda a: np.average(a, axis=0, weights=[1, -1, 0]), ((3, 2),)),
    ("average-weights-length", lambda a: np.average(a, axis=0, weights=[1, 2]), ((3, 2),)),
    ("vstack-shapes", lambda a, b: np.vstack([a, b]), ((2, 3), (2, 4))),
    ("meshgrid-indexing", lambda a, b: np.meshgrid(a, b, indexing="xx"), ((2,), (3,))),
    ("roll-lengths", lambda a: np.roll(a, (1, 2, 3), axis=(0, 1)), ((3, 4),)),
]


@pytest.mark.parametrize("fn, shapes", [pytest.param(fn, shapes, id=name)
                                        for name, fn, shapes in ERRORS])
def test_errors_match_numpy(fn, shapes):
    args = _args(shapes, "float32")
    with pytest.raises(Exception):
        fn(*args)
    assert_same_as_eager(fn, *args)
    tensors = [frame.tensor(a) for a in args]
    with pytest.raises(Exception) as native:
        fn(*args)
    with pytest.raises(Exception) as eager:
        fn(*tensors)
    assert isinstance(eager.value, type(native.value)), (eager.value, native.value)


# -- uses frame does not model: NumPy runs them (eagerly and, as a graph break, under capture) -------

NOT_MODELLED = [
    ("dot-out", lambda a: np.dot(a, a.T, out=np.empty((3, 3), a.dtype)), "out="),
    ("repeat-traced-counts", lambda a: np.repeat(a, np.array([1, 2, 3]) + (a[:, 0] > 9)), "repeats"),
    ("round-bool", lambda a: np.round(a > 0), "round of bools"),
    ("allclose", lambda a: np.allclose(a, a + 1e-9), "allclose"),
    ("tensordot-to-0d-array", lambda a: np.tensordot(a, a, axes=2), "0-d array"),
    ("average-traced-weights", lambda a: np.average(a, axis=1, weights=a[0] * 0 + 1), "weights"),
]


@pytest.mark.parametrize("fn, reason", [pytest.param(fn, reason, id=name)
                                        for name, fn, reason in NOT_MODELLED])
def test_not_modelled_uses_break(fn, reason):
    x = data((3, 4))
    assert_same_as_eager(fn, x, captured=None)
    out = frame.explain(fn)(x.copy())
    assert out.graph_break_count >= 1
    assert any(reason in r.reason for r in out.break_reasons), [r.reason for r in out.break_reasons]


# -- NaN and inf: isnan, isinf, isfinite, fmax, fmin, logical_xor, nan_to_num

def _special(dtype):
    if dtype in ("float32", "float64", "float16"):
        return np.array([1.5, -0.0, np.nan, np.inf, -np.inf, -3.5, 0.0, np.nan], dtype)
    return np.array([1, 0, -2, 5, 0, 3, 7, -1]).astype(dtype)


SPECIAL_FUNCTIONS = {
    "isnan": lambda a: np.isnan(a), "isinf": lambda a: np.isinf(a),
    "isfinite": lambda a: np.isfinite(a), "logical_xor": lambda a: np.logical_xor(a, a[::-1]),
    "fmax": lambda a: np.fmax(a, a[::-1]), "fmin-scalar": lambda a: np.fmin(a, 2),
    "nan_to_num": lambda a: np.nan_to_num(a),
    "nan_to_num-given": lambda a: np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
    "nan_to_num-overflowing": lambda a: np.nan_to_num(a, posinf=1e300),
    "zero-nans-by-mask": lambda a: (lambda b: (b.__setitem__(np.isnan(b), 0), b)[1])(a.copy()),
    "where-finite": lambda a: np.where(np.isfinite(a), a, 0) * 2,
}


@pytest.mark.parametrize("dtype", ("float16", "float32", "float64", "int64", "bool"))
@pytest.mark.parametrize("name", list(SPECIAL_FUNCTIONS))
def test_nan_and_inf_functions_match_numpy(name, dtype):
    fn = SPECIAL_FUNCTIONS[name]
    x = _special(dtype)
    with np.errstate(all="ignore"):
        _check(fn, (x,), graphs=1)
        t = frame.tensor(x)
        got = fn(t) if name != "zero-nans-by-mask" else None
    if got is not None:
        assert isinstance(got, frame.Tensor)
        with np.errstate(all="ignore"):
            assert_same(fn(x), got.numpy())


# -- math ufuncs with ops of their own (NumPy's ufunc as the kernel; cpu kernels on OpenVINO)

MATH_UFUNCS = {
    "tan": lambda a: np.tan(a), "arcsin": lambda a: np.arcsin(a / 4), "arccos": lambda a: np.arccos(a / 4),
    "arctan": lambda a: np.arctan(a), "sinh": lambda a: np.sinh(a), "cosh": lambda a: np.cosh(a),
    "exp2": lambda a: np.exp2(a), "log2": lambda a: np.log2(np.abs(a) + 1),
    "log10": lambda a: np.log10(np.abs(a) + 1), "cbrt": lambda a: np.cbrt(a),
    "rint": lambda a: np.rint(a * 2.5), "trunc": lambda a: np.trunc(a * 2.5),
    "arctan2": lambda a: np.arctan2(a, a[::-1]),
    "decibels": lambda a: 20 * np.log10(np.abs(a) + 1e-3),
    "angles": lambda a: np.arctan2(a[1:], a[:-1]),
}


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64"))
@pytest.mark.parametrize("name", list(MATH_UFUNCS))
def test_math_ufuncs_match_numpy(name, dtype):
    fn = MATH_UFUNCS[name]
    x = np.array([-2.5, -1.0, -0.0, 0.5, 1.5, 3.0]).astype(dtype)
    _check(fn, (x,), graphs=1)
    got = fn(frame.tensor(x))
    assert isinstance(got, frame.Tensor)
    assert_same(fn(x), got.numpy())
