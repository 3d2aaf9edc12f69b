"""NumPy's contraction loops under capture (task HC): ``np.einsum``,
``np.convolve``, ``np.correlate`` -- and the products ``np.vdot``, ``np.inner``,
``np.tensordot`` checked the same way -- jitted against plain NumPy.

``np.einsum`` (optimize=False) runs its own sum-of-products loops and
``np.convolve``/``np.correlate`` a dot product per window; a composition of
frame's ops rounds floats differently, so floats become the ``einsum``,
``convolve`` and ``correlate`` ops, whose kernels are NumPy's
(frame/ops/contract.py).  Every case is checked with the corpus helper
(types, values within the backend's tolerance, mutation, captured) on C-ordered
arguments, and then bit for bit on C-ordered, Fortran-ordered and transposed
(reversed, strided for 1-D) arguments -- the very same objects, so a view stays
a view -- where a jitted function's first call runs on the cpu executable
(``FRAME_TEST_SETTING=cpu`` and ``default``); under ``untiered`` OpenVINO
computes, within tolerance.  ``full_graph=True``: no graph break either.
"""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame

from .corpus import _setting
from .helpers import assert_grad_matches_central_differences, assert_same, assert_same_as_eager


def _runs_cpu_first() -> bool:
    return _setting() in ("cpu", "default")


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _laid_out(x: np.ndarray, layout: str) -> np.ndarray:
    """``x``'s values in ``layout``: C, F (Fortran order), T (a transposed view of
    a C-ordered array; a reversed view for 1-D), S (a strided view with gaps)."""
    if layout == "C" or x.ndim == 0:
        return x
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "T":
        return np.ascontiguousarray(x.T).T if x.ndim > 1 else np.ascontiguousarray(x[::-1])[::-1]
    buf = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    buf[..., ::2] = x
    return buf[..., ::2]


def _bits(a) -> tuple:
    a = np.asarray(a)
    return a.dtype, a.shape, np.ascontiguousarray(a).tobytes()


def _bit_equal(native, jitted, path="result"):
    assert type(native) is type(jitted), f"{path}: {type(jitted)} != {type(native)}"
    if isinstance(native, tuple):
        for i, (a, b) in enumerate(zip(native, jitted)):
            _bit_equal(a, b, f"{path}[{i}]")
        return
    assert _bits(native) == _bits(jitted), (
        f"{path}: not NumPy's bits (max difference "
        f"{np.max(np.abs(np.asarray(native, np.float64) - np.asarray(jitted, np.float64)))!r})")


def check(fn, arrays, layouts=("C", "F", "T")):
    """The corpus check on C-ordered ``arrays``, then NumPy's bits (cpu first) or
    its tolerance (OpenVINO) for every layout, with no graph break."""
    capture.reset_caches()
    assert_same_as_eager(fn, *arrays)
    for layout in layouts:
        args = [_laid_out(a, layout) for a in arrays]
        capture.reset_caches()
        native = fn(*args)
        jitted = frame.jit(fn, full_graph=True)(*args)
        if _runs_cpu_first():
            _bit_equal(native, jitted, f"{layout} layout")
        else:
            assert_same(native, jitted, f"{layout} layout")


def _einsum(subscripts, **kwargs):
    return lambda *xs: np.einsum(subscripts, *xs, **kwargs)


# (id, function, operand shapes)
EINSUM = [
    ("matmul", _einsum("ij,jk->ik"), [(5, 7), (7, 6)]),
    ("matmul-implicit", _einsum("ij,jk"), [(5, 7), (7, 6)]),
    ("dot", _einsum("i,i->"), [(40,), (40,)]),
    ("dot-implicit", _einsum("i,i"), [(40,), (40,)]),
    ("matvec", _einsum("ij,j->i"), [(4, 6), (6,)]),
    ("vecmat", _einsum("j,ij->i"), [(6,), (4, 6)]),
    ("batched", _einsum("bij,bjk->bik"), [(2, 3, 4), (2, 4, 5)]),
    ("rowdot", _einsum("ij,ij->i"), [(4, 5), (4, 5)]),
    ("rowdot-broadcast", _einsum("ij,ij->i"), [(1, 5), (4, 5)]),
    ("frobenius", _einsum("ij,ij->"), [(4, 5), (4, 5)]),
    ("hadamard", _einsum("ij,ij->ij"), [(4, 5), (4, 5)]),
    ("trace", _einsum("ii->"), [(30, 30)]),
    ("trace-implicit", _einsum("ii"), [(30, 30)]),
    ("diagonal", _einsum("ii->i"), [(5, 5)]),
    ("sum", _einsum("ij->"), [(4, 6)]),
    ("colsum", _einsum("ij->j"), [(40, 3)]),
    ("rowsum", _einsum("ij->i"), [(6, 40)]),
    ("outer", _einsum("i,j->ij"), [(3,), (4,)]),
    ("outer-implicit", _einsum("i,j"), [(3,), (4,)]),
    ("ellipsis-matmul", _einsum("...ij,...jk->...ik"), [(2, 3, 4), (4, 5)]),
    ("ellipsis-dot", _einsum("...i,...i->..."), [(3, 30), (30,)]),
    ("ellipsis-sum", _einsum("i...->..."), [(4, 2, 3)]),
    ("chain", _einsum("ab,bc,cd->ad"), [(3, 4), (4, 5), (5, 2)]),
    ("triple-dot", _einsum("i,i,i->"), [(6,), (6,), (6,)]),
    ("diagonal-sum", _einsum("iij->j"), [(3, 3, 4)]),
    ("matrix-diagonal", _einsum("ij,jj->i"), [(4, 20), (20, 20)]),
    ("transpose", _einsum("ijk->kji"), [(2, 3, 4)]),
    ("bilinear", _einsum("bn,anm,bm->ba"), [(2, 3), (4, 3, 5), (2, 5)]),
    ("upper-case", _einsum("Ij,jK->IK"), [(3, 4), (4, 2)]),
    ("sublist", lambda a, b: np.einsum(a, [0, 1], b, [1, 2], [0, 2]), [(3, 4), (4, 5)]),
    ("sublist-implicit", lambda a, b: np.einsum(a, [0, 1], b, [1, 2]), [(3, 4), (4, 5)]),
    ("optimize-true", _einsum("ij,jk->ik", optimize=True), [(3, 4), (4, 5)]),
    ("optimize-optimal", _einsum("ij,jk,kl->il", optimize="optimal"), [(3, 4), (4, 5), (5, 2)]),
    ("of-transpose", lambda a, b: np.einsum("ij,jk->ik", a.T, b), [(7, 5), (7, 6)]),
    ("of-scaled", lambda a, b: np.einsum("ij,jk->ik", a * 2, b), [(5, 7), (7, 6)]),
    ("then-sum", lambda a, b: np.einsum("ij,kj->ik", a, b).sum(axis=0), [(5, 7), (6, 7)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("fn,shapes", [pytest.param(f, s, id=i) for i, f, s in EINSUM])
def test_einsum(fn, shapes, dtype):
    check(fn, [_data(s, dtype, k) for k, s in enumerate(shapes)])


@pytest.mark.parametrize("dtypes", [("float32", "int32"), ("float32", "float64"),
                                    ("int64", "float32")])
def test_einsum_mixed_dtypes(dtypes):
    check(_einsum("ij,jk->ik"), [_data((4, 30), dtypes[0], 0), _data((30, 3), dtypes[1], 1)])
    check(_einsum("i,i->"), [_data((40,), dtypes[0], 2), _data((40,), dtypes[1], 3)])


LENGTHS = [(9, 4), (4, 9), (6, 6), (8, 3), (3, 8), (1, 5), (5, 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float32+int16"])
@pytest.mark.parametrize("mode", ["full", "same", "valid", None])
@pytest.mark.parametrize("function", [np.convolve, np.correlate])
def test_convolve_correlate(function, mode, dtype):
    first, _, second = dtype.partition("+")

    def fn(a, v):
        return function(a, v) if mode is None else function(a, v, mode)
    for n, m in LENGTHS:
        check(fn, [_data((n,), first, n), _data((m,), second or first, m + 10)],
              layouts=("C", "T", "S"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_convolve_of_a_computed_operand(dtype):
    def smooth(x, w):
        return np.convolve(x * 2.0 - 1.0, w / w.sum(), mode="same")
    check(smooth, [_data((50,), dtype, 0), np.abs(_data((5,), dtype, 1)) + 0.5])


PRODUCTS = [
    ("vdot", lambda a, b: np.vdot(a, b), [(4, 6), (4, 6)]),
    ("vdot-1d", lambda a, b: np.vdot(a, b), [(11,), (11,)]),
    ("inner", lambda a, b: np.inner(a, b), [(4, 6), (5, 6)]),
    ("inner-1d", lambda a, b: np.inner(a, b), [(11,), (11,)]),
    ("inner-3d", lambda a, b: np.inner(a, b), [(2, 3, 6), (5, 6)]),
    ("tensordot-1", lambda a, b: np.tensordot(a, b, 1), [(4, 6), (6, 5)]),
    ("tensordot-2", lambda a, b: np.tensordot(a, b), [(3, 4, 6), (4, 6, 2)]),
    ("tensordot-axes", lambda a, b: np.tensordot(a, b, axes=([0], [1])), [(6, 4), (5, 6)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn,shapes", [pytest.param(f, s, id=i) for i, f, s in PRODUCTS])
def test_products(fn, shapes, dtype):
    check(fn, [_data(s, dtype, k) for k, s in enumerate(shapes)])


def test_correlate_is_captured_with_no_break():
    out = frame.explain(lambda a, v: np.correlate(a, v, "full"))(_data((6,), "float64", 0),
                                                                   _data((3,), "float64", 1))
    assert out.graph_count == 1 and not out.break_reasons


@pytest.mark.parametrize("call", [lambda a: np.convolve(a, a.reshape(2, 3)),
                                  lambda a: np.correlate(a, a[:0])])
def test_where_numpy_raises_the_jitted_function_raises_too(call):
    assert_same_as_eager(call, _data((6,), "float64", 0), captured=None)


def test_eager_tensors_get_numpy_bits_and_gradients():
    """On frame Tensors (NumPy's protocol, eager) the same ops run: NumPy's bits,
    and gradients (the rules of frame/autograd/rules_contract.py) that agree
    with central differences."""
    x = _data((4, 4), "float64", 0)
    w = _data((4, 3), "float64", 1)
    v = _data((3,), "float64", 2)

    def loss(t):
        return (frame.sum(np.einsum("ii,ij->j", t, w) * np.arange(1.0, 4.0))
                + frame.sum(np.einsum("...i,...i->...", t, t))
                + frame.sum(np.convolve(t[0], v, "same") * t[1])
                + frame.sum(np.correlate(v, t[2], "full") ** 2)
                + frame.sum(np.inner(t, w.T) * 0.5))

    t = frame.tensor(x)
    for fn in (lambda a: np.einsum("ij,jk->ik", a, w), lambda a: np.convolve(a[0], v),
               lambda a: np.correlate(a[1], v, "same"), lambda a: np.inner(a, w.T)):
        got = fn(t)
        assert isinstance(got, frame.Tensor)
        assert _bits(got.numpy()) == _bits(fn(x))
    assert_grad_matches_central_differences(loss, x)
