"""erf_kernel against the platform's libm (math.erf), point by point."""
from __future__ import annotations

import math

import numpy as np
import pytest

import frame
from frame.ops.elementwise import erf_kernel

RTOL = 2e-16
ATOL = 1e-300


def _libm(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) for v in x.ravel().tolist()], dtype=np.float64).reshape(x.shape)


def _points() -> np.ndarray:
    g = np.random.default_rng(1234)
    n = 40_000
    signs = g.choice([-1.0, 1.0], n)
    boundaries = np.array([2.0 ** -28, 0.84375, 1.25, float.fromhex("0x1.6db6e00000000p+1"),
                           6.0, 2.0 ** -1015])
    near = np.concatenate([np.nextafter(boundaries, -np.inf), boundaries,
                           np.nextafter(boundaries, np.inf)])
    specials = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e-310, 2.2250738585072014e-308,
                         1e-20, 0.5, 1.0, 2.0, 3.0, 5.9, 26.0, 1e300, -1e300, np.finfo(np.float64).max])
    return np.concatenate([
        g.uniform(-0.84375, 0.84375, n),                   # x + x*R/S
        g.uniform(0.84375, 1.25, n) * signs,               # erx + P/Q
        g.uniform(1.25, 6.5, n) * signs,                   # 1 - erfc tails
        g.uniform(6.0, 40.0, n // 4) * signs[: n // 4],    # saturated at +-1
        np.exp(g.uniform(-745.0, 2.0, n)) * signs,         # every magnitude, subnormals included
        g.standard_normal(n),
        near, -near, specials, -specials,
    ])


def test_matches_libm_everywhere():
    x = _points()
    got = erf_kernel(x)
    want = _libm(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    bad = ~((np.abs(got - want) <= ATOL + RTOL * np.abs(want)) | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), (f"{bad.sum()} points differ from math.erf, e.g. x={x[bad][:5]!r}: "
                           f"{got[bad][:5]!r} vs {want[bad][:5]!r}")


def test_special_values():
    got = erf_kernel(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324]))
    assert got[0] == 0.0 and not np.signbit(got[0])
    assert got[1] == 0.0 and np.signbit(got[1])
    assert got[2] == 1.0 and got[3] == -1.0
    assert np.isnan(got[4])
    # subnormals: erf(x) ~ 2x/sqrt(pi), still subnormal, sign kept
    assert 0 < got[5] < 1e-300 and -1e-300 < got[6] < 0


def test_odd_and_bounded():
    x = np.random.default_rng(7).uniform(-10, 10, 10_000)
    np.testing.assert_array_equal(erf_kernel(-x), -erf_kernel(x))
    y = erf_kernel(x)
    assert np.all(np.abs(y) <= 1.0)
    order = np.argsort(x)
    assert np.all(np.diff(y[order]) >= 0)  # monotone


@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 0, 3), (70_000,)])
def test_shapes_and_chunking(shape):
    x = np.random.default_rng(3).standard_normal(shape)
    got = erf_kernel(x)
    assert got.shape == shape
    np.testing.assert_allclose(got, _libm(np.asarray(x)), rtol=RTOL, atol=ATOL)


def test_non_contiguous_and_integer_input():
    x = np.random.default_rng(4).standard_normal((6, 8))[:, ::2]
    np.testing.assert_allclose(erf_kernel(x), _libm(np.ascontiguousarray(x)), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(erf_kernel(np.arange(-3, 4)), _libm(np.arange(-3.0, 4.0)), rtol=RTOL)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_rounds_once(dtype):
    x = np.random.default_rng(5).uniform(-4, 4, 5000).astype(dtype)
    got = frame.erf(x).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _libm(x.astype(np.float64)).astype(dtype))


def test_op_float64_is_the_kernel():
    x = np.random.default_rng(6).uniform(-3, 3, 1000)
    np.testing.assert_array_equal(frame.erf(x).numpy(), erf_kernel(x))
