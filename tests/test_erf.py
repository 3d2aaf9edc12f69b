"""erf_kernel (Cody's rational approximations) against the platform's libm (math.erf)
and against an exact reference computed here with the decimal module."""
from __future__ import annotations

import math
from decimal import Decimal, getcontext, localcontext

import numpy as np
import pytest

import frame
from frame.ops.elementwise import erf_kernel

# Tolerances, in units in the last place of the float64 result (ulp = np.spacing of the
# smaller of the two magnitudes compared, so a result just below a power of two is held
# to the finer spacing there).  Measured: the kernel is within about 2.5 ulp of the exact
# value (worst on 0.5 < |x| < 1.2, where erf = 1 - erfc; under 1 ulp elsewhere), and
# glibc's erf within 1, so they can differ by up to ~3.5.
ULP_VS_LIBM = 4
ULP_VS_EXACT = 3            # on 0.5 < |x| < 1.2
ULP_VS_EXACT_ELSEWHERE = 1  # |x| <= 0.5 and |x| >= 1.2


def _libm(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) for v in x.ravel().tolist()], dtype=np.float64).reshape(x.shape)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ulps; 0 where both are equal (+-1, +-0) or both nan, inf on a nan mismatch."""
    got, want = np.broadcast_arrays(np.asarray(got, np.float64), np.asarray(want, np.float64))
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    ulp = np.spacing(np.minimum(np.abs(got), np.abs(want)))
    with np.errstate(invalid="ignore"):
        err = np.abs(got - want) / ulp
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def _assert_close_to_libm(x: np.ndarray, got: np.ndarray) -> None:
    want = _libm(np.asarray(x, dtype=np.float64))
    err = _ulps(got, want)
    bad = err > ULP_VS_LIBM
    assert not bad.any(), (f"{bad.sum()} points over {ULP_VS_LIBM} ulp from math.erf, e.g. "
                           f"x={np.asarray(x)[bad][:5]!r}: {got[bad][:5]!r} vs {want[bad][:5]!r}")


_BOUNDARIES = np.array([0.5, 4.0, 6.0, 2.0 ** -1016])  # ranges of the kernel, and its tiny-x switch


def _near(values: np.ndarray, n: int = 8) -> np.ndarray:
    """values and their n neighbours on each side, one ulp apart."""
    out = [values]
    lo = hi = values
    for _ in range(n):
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
        out += [lo, hi]
    return np.concatenate(out)


def _points() -> np.ndarray:
    g = np.random.default_rng(1234)
    n = 40_000
    signs = g.choice([-1.0, 1.0], n)
    near = _near(_BOUNDARIES)
    specials = np.array([0.0, np.inf, 5e-324, 1e-323, 1e-310, 2.2250738585072014e-308,
                         np.nextafter(2.2250738585072014e-308, 0), 1e-20, 1e-8, 0.25, 1.0, 2.0,
                         3.0, 5.9, 5.95, 26.0, 27.0, 1e300, np.finfo(np.float64).max])
    return np.concatenate([
        g.uniform(-0.5, 0.5, n),                           # erf = x + x*T(x^2)
        g.uniform(0.5, 1.0, n) * signs,                    # 1 - erfc, where erfc's error shows most
        g.uniform(1.0, 4.0, n) * signs,                    # 1 - exp(-x^2) P2/Q2
        g.uniform(4.0, 6.5, n) * signs,                    # 1 - erfc, asymptotic form
        g.uniform(6.0, 40.0, n // 4) * signs[: n // 4],    # saturated at +-1
        np.exp(g.uniform(-745.0, 2.0, n)) * signs,         # every magnitude, subnormals included
        g.standard_normal(n),
        near, -near, specials, -specials, [np.nan, -np.nan],
    ])


def test_matches_libm_everywhere():
    x = _points()
    got = erf_kernel(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    _assert_close_to_libm(x, got)


# ------------------------------------------------------------ exact reference (no libm)

def _decimal_pi() -> Decimal:
    """pi by Machin's formula, 16 atan(1/5) - 4 atan(1/239), in the current context."""
    def atan_inv(k: int) -> Decimal:
        total, power, n, k2 = Decimal(0), Decimal(1) / k, 0, k * k
        while True:
            term = power / (2 * n + 1)
            if term == 0 or term < Decimal(10) ** -(2 * getcontext().prec):
                return total
            total += -term if n % 2 else term
            power /= k2
            n += 1
    return 16 * atan_inv(5) - 4 * atan_inv(239)


def _erf_taylor(x: float, two_over_sqrt_pi: Decimal) -> Decimal:
    """erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)), in the current context."""
    d = Decimal(x)                          # exact: every float is a finite decimal
    if d == 0:
        return d
    d2 = d * d
    term = d                                # (-1)^n x^(2n+1) / n!
    total = d
    n = 0
    eps = abs(d) * Decimal(10) ** -(getcontext().prec - 5)
    while True:
        n += 1
        term = -term * d2 / n
        contrib = term / (2 * n + 1)
        total += contrib
        if abs(contrib) < eps and n > d2:   # past the largest term, and negligible
            return two_over_sqrt_pi * total


def _reference_points() -> np.ndarray:
    g = np.random.default_rng(99)
    near = _near(np.array([0.5, 4.0, 2.0 ** -1016]), 4)
    return np.concatenate([
        g.uniform(-3.0, 3.0, 1500),
        g.uniform(0.5, 1.0, 1500) * g.choice([-1.0, 1.0], 1500),  # the hardest stretch
        g.uniform(-0.5, 0.5, 500),
        g.uniform(3.0, 4.5, 300),                                # the 4.0 boundary, too
        np.exp(g.uniform(-745.0, -1.0, 300)),                     # tiny and subnormal
        near, -near, [0.0, 5e-324, -5e-324, 1e-310, 2.0 ** -1022, 1.0, 2.0, 3.0, -3.0],
    ])


def test_matches_exact_reference():
    """Error against erf summed from its Taylor series with 80 significant digits
    (|x| <= 4.5: terms reach at most ~1e9, so cancellation costs 9 digits, leaving
    ~70).  The reference is independent of libm; errors are measured against the exact
    value, before it is rounded to float64."""
    x = _reference_points()
    got = erf_kernel(x)
    worst = {True: (0.0, 0.0), False: (0.0, 0.0)}
    with localcontext() as ctx:
        ctx.prec = 80
        two_over_sqrt_pi = 2 / _decimal_pi().sqrt()
        assert abs(two_over_sqrt_pi - Decimal(2 / math.sqrt(math.pi))) < Decimal("1e-15")
        for xi, gi in zip(x.tolist(), got.tolist()):
            exact = _erf_taylor(xi, two_over_sqrt_pi)
            nearest = float(exact)          # correctly rounded, subnormals included
            ulp = float(np.spacing(min(abs(gi), abs(nearest))))
            err = float(abs(Decimal(gi) - exact) / Decimal(ulp))
            middle = 0.5 < abs(xi) < 1.2
            limit = ULP_VS_EXACT if middle else ULP_VS_EXACT_ELSEWHERE
            assert err <= limit, f"erf({xi!r}) = {gi!r}: {err:.2f} ulp from exact {exact:.25e}"
            assert math.copysign(1.0, gi) == math.copysign(1.0, xi)
            worst[middle] = max(worst[middle], (err, xi))
    for middle, (err, xi) in worst.items():
        print(f"max error vs exact{' on 0.5 < |x| < 1.2' if middle else ' elsewhere'}: "
              f"{err:.3f} ulp at x={xi!r}")


# ------------------------------------------------------------------ behaviour

def test_special_values():
    got = erf_kernel(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324]))
    assert got[0] == 0.0 and not np.signbit(got[0])
    assert got[1] == 0.0 and np.signbit(got[1])
    assert got[2] == 1.0 and got[3] == -1.0
    assert np.isnan(got[4])
    # subnormals: erf(x) ~ 2x/sqrt(pi), still subnormal, sign kept
    assert 0 < got[5] < 1e-300 and -1e-300 < got[6] < 0
    x = np.array([1e-310, 2.0 ** -1070, 2.0 ** -1040])  # erf(x) = x * 2/sqrt(pi) rounded once
    np.testing.assert_array_equal(erf_kernel(x), x * 1.1283791670955126)
    with np.errstate(all="raise"):  # underflow inside the kernel is by design, not an error
        erf_kernel(np.array([1e-200, 1e-310, 5e-324, -np.inf, np.nan, 0.7, 5.0]))
    # erfc(x) < 2**-54 from 6 on: exactly +-1; just inside 6 the result is already 1.0
    np.testing.assert_array_equal(erf_kernel(np.array([6.0, np.nextafter(6.0, 0), 40.0, -7.0])),
                                  [1.0, 1.0, 1.0, -1.0])


def test_odd_and_bounded():
    x = np.random.default_rng(7).uniform(-10, 10, 10_000)
    np.testing.assert_array_equal(erf_kernel(-x), -erf_kernel(x))
    y = erf_kernel(x)
    assert np.all(np.abs(y) <= 1.0)
    order = np.argsort(x)
    assert np.all(np.diff(y[order]) >= 0)  # monotone


def test_continuous_across_ranges():
    """Each side of a range boundary agrees with libm, so the pieces join up."""
    x = _near(np.array([0.5, 4.0, 6.0]), 64)
    _assert_close_to_libm(x, erf_kernel(x))
    _assert_close_to_libm(-x, erf_kernel(-x))


@pytest.mark.parametrize("shape", [(), (1,), (3, 4), (2, 0, 3), (70_000,)])
def test_shapes_and_chunking(shape):
    x = np.random.default_rng(3).standard_normal(shape)
    got = erf_kernel(x)
    assert got.shape == shape
    _assert_close_to_libm(np.asarray(x), got)


def test_non_contiguous_and_integer_input():
    x = np.random.default_rng(4).standard_normal((6, 8))[:, ::2]
    _assert_close_to_libm(np.ascontiguousarray(x), erf_kernel(x))
    got = erf_kernel(np.arange(-3, 4))
    assert got.dtype == np.float64
    _assert_close_to_libm(np.arange(-3.0, 4.0), got)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_rounds_once(dtype):
    x = np.random.default_rng(5).uniform(-4, 4, 5000).astype(dtype)
    got = frame.erf(x).numpy()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _libm(x.astype(np.float64)).astype(dtype))


def test_op_float64_is_the_kernel():
    x = np.random.default_rng(6).uniform(-3, 3, 1000)
    np.testing.assert_array_equal(frame.erf(x).numpy(), erf_kernel(x))
