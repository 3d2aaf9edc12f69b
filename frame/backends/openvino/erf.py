"""erf and 1 + erf in float32 opset16 arithmetic.

Why: OpenVINO's own Erf is not accurate enough to stand in for the reference
kernel (measured: erf(1e-5) is 1.7% off, erf(1e-8) is 0, and about 16 ulp of
absolute error near |x| = 2.4, which gelu's ``1 + erf(x / sqrt(2))`` turns
into a 1e-3 relative error for x near -3.45).  Its Exp is not correctly
rounded either (up to 3 float32 ulp, measured), so exp(-x^2) is built here too.
Every region below is evaluated on every element and the right one selected.
(The CPU plugin's Divide is x * (1/y), two roundings; the figures below include that.)

|x| <= 0.5: W. J. Cody, "Rational Chebyshev approximations for the error
function", Math. Comp. 23 (1969), 631-638, as the reference kernel uses it:
erf(x) = x + x * T(x^2), T = (P1 - Q1) / Q1, with Cody's published 4/4
coefficients (imported from ``frame.ops.elementwise``, the project's one copy
of his table, and rounded to float32 as graph constants).  T's size (at most
0.13) keeps its rounding far below the exact x it is added to; x*x underflowing
to 0 leaves T(0) = 2/sqrt(pi) - 1, the right slope for tiny and subnormal x.

0.5 < |x| < 6: our own form for a = |x|, built to round well in float32:

    erfc(a) = G(a) / (a + s(a)),   G(a) = exp(-a^2) / sqrt(pi),

where s(a) = 1 / (sqrt(pi) exp(a^2) erfc(a)) - a is the tail of the continued
fraction of erfc (it falls smoothly from 0.42 at a = 0.5 to 0.08 at a = 6, and
s/(a + s) <= 0.46 shrinks its relative error in the sum).  s ~ N(a) / D(a):

    N = 0.56416 + 0.43691862 a + 0.16958794 a^2 + 0.03050146 a^3
    D = 1 + 1.4180932 a + 0.9420303 a^2 + 0.33856633 a^3 + 0.061025694 a^4

(float32 values; all positive, so Horner's rule on a > 0 never cancels).
Derivation, as run (numpy 2, mpmath): s at 2000 Chebyshev nodes of [0.5, 6]
from mpmath at 40 digits; the 3/4 rational with D(0) = 1 fitted for relative
error by linearised least squares, first reweighted by 1/D of the previous
pass (Sanathanan-Koerner, 20 passes), then by the running relative error
(Lawson, 180 more) toward the minimax fit; rounded to float32::

    s = lambda a: float(1 / (mp.sqrt(mp.pi) * mp.exp(a * a) * mp.erfc(a)) - a)
    x = 3.25 - 2.75 * np.cos(np.pi * (np.arange(2000) + 0.5) / 2000)
    y = np.array([s(mp.mpf(v)) for v in x]); V = np.vander(x, 5, increasing=True)
    d = w = np.ones_like(x)
    for it in range(200):
        A = np.hstack([V[:, :4], -y[:, None] * V[:, 1:]]) / (y * d)[:, None]
        c = np.linalg.lstsq(A * np.sqrt(w)[:, None], np.sqrt(w) / d, rcond=None)[0]
        num, den = c[:4], np.r_[1.0, c[4:]]
        d = V @ den
        if it >= 20:
            w = w * np.abs(V[:, :4] @ num / d / y - 1); w /= w.sum()

Its relative error on a 200001-point grid is 3.3e-8 with float64 coefficients
and 6.5e-8 (1.1 ulp of s, so under 0.5 ulp of erfc) with the float32 ones.

G(a) = exp(-a^2 - ln sqrt(pi)), 0.5 <= a <= 6, is ours too: float32 a*a alone
would be off by up to 36 * 2^-24 relative (~20 ulp of exp), and the plugin's
Exp is not accurate enough.  With h = floor(128 a) / 128, a^2 = h^2 + t where
h^2 is exact (a multiple of 2^-14 below 37) and t = (a - h)(a + h) < 0.094 is
small.  Then u = -h^2 - c_hi (c = ln sqrt(pi) = c_hi + c_lo, c_hi a multiple
of 2^-14) is exact, n = round(u / ln 2) in [-53, -1], and
r = (u - n ln2_hi) - (n ln2_lo + t + c_lo) with ln2_hi = ln 2 to 17 bits, so
that n ln2_hi and u - n ln2_hi are exact and |r| < 0.44; exp(r) is its Taylor
polynomial to r^8 (truncation under 0.44^9 / 9! < 2e-9 relative), and
G = exp(r) 2^n, 2^n from Power (exact on this plugin: the tests check it).
Measured: within 1 ulp of exp(-a^2)/sqrt(pi).  (A hi + lo table of exp(-h^2)
read with Gather was tried first and dropped: the CPU plugin's Gather returns
wrong elements at the end of index tensors of 2^25 or more elements when it
runs on two threads.)

erf(x) = sign(x) (1 - erfc(|x|)) above 0.5; a is clamped to 4 there, as
erfc(4) < 2^-25 makes 1 - erfc round to exactly 1 from 4 on (erf(+-inf) = +-1).
-0 stays -0, NaN stays NaN.

``one_plus_erf`` is what gelu needs: 1 + erf(x) for |x| <= 0.5, 2 - erfc(|x|)
for x > 0.5 and erfc(|x|) itself for x < -0.5 (never 1 - erf, which cancels).
From |x| = 6 on it is exactly 2 or 0, as in the reference (whose float64
1 + erf is 0 there, so gelu(-inf) is NaN in both).

Accuracy, in float32 ulp of the result, measured on every float32 with
2^-8 <= |x| < 6 (both signs) and on ~2.7e7 more points (every 97th float32 from
the smallest subnormal to 10, both signs; a uniform grid on [-7, 7]; 4000
float32 either side of 0.5, 1, 2, 4 and 6; +-0, +-inf, NaN):

* erf: within 2 ulp of the reference kernel rounded to float32; 2 only on
  0.5 < |x| < 1, where erfc's error shows through 1 - erfc, 1 elsewhere
  (tiny and subnormal x included), exact at +-0, +-inf, NaN and |x| >= 4.
* one_plus_erf: within 1 ulp of 1 + erf for x > -0.5; for x < -0.5 within 4
  ulp of the exact erfc(-x) (3 except at 10 of the 8.4e6 float32 in
  (-1, -0.5)).  Against the reference's float64 1 + erf the same holds down to
  x = -4; below, that 1 + erf keeps only an absolute 2^-53 of erfc.

``tests/backends/openvino/test_erf_lowering.py`` checks these bounds.
"""
from __future__ import annotations

import math
from typing import Sequence

import openvino.opset16 as ops

from ...ops.elementwise import _ERF_MID, _ERF_ONE, _ERF_Q1, _ERF_SMALL, _ERF_T1
from .table import Lowerer, Out, out

__all__ = ["erf", "one_plus_erf"]

# s(a) ~ N(a) / D(a) on [0.5, 6] (fitted as the module docstring says; float32 values)
_S_NUM = (0.56416, 0.43691862, 0.16958794, 0.03050146)
_S_DEN = (1.0, 1.4180932, 0.9420303, 0.33856633, 0.061025694)
# G(a) = exp(-a^2) / sqrt(pi) = 2^n exp(r): a^2 = h^2 + t with h = floor(a * _STEPS) / _STEPS,
# and ln(sqrt(pi)) and ln(2) split so that the leading part of the reduction is exact
_STEPS = 128
_LN_SQRT_PI = 0.5 * math.log(math.pi)
_LN_SQRT_PI_HI = round(_LN_SQRT_PI * 2.0 ** 14) / 2.0 ** 14   # a multiple of 2^-14, like h^2
_LN_SQRT_PI_LO = _LN_SQRT_PI - _LN_SQRT_PI_HI
_LN2_HI = round(math.log(2.0) * 2.0 ** 17) / 2.0 ** 17         # 17 bits: n * _LN2_HI is exact
_LN2_LO = math.log(2.0) - _LN2_HI
# exp(r) = sum_{n=0..8} r^n / n!, lowest power first
_EXP_TAYLOR = tuple(1.0 / math.factorial(n) for n in range(9))


def _horner(cx: Lowerer, t: Out, coeffs: Sequence[float]) -> Out:
    """coeffs[0] + coeffs[1] t + ... (lowest power first)."""
    acc = cx.f32(coeffs[-1])
    for c in coeffs[-2::-1]:
        acc = out(ops.add(out(ops.multiply(acc, t)), cx.f32(c)))
    return acc


def _rational(cx: Lowerer, t: Out, num: Sequence[float], den: Sequence[float]) -> Out:
    return out(ops.divide(_horner(cx, t, num), _horner(cx, t, den)))


def _erf_small(cx: Lowerer, x: Out) -> Out:
    """|x| <= 0.5 (signed x): Cody's x + x * T(x^2).  Odd, keeps -0."""
    t = _rational(cx, out(ops.multiply(x, x)), _ERF_T1, _ERF_Q1)
    return out(ops.add(x, out(ops.multiply(x, t))))


def _pow2(cx: Lowerer, n: Out) -> Out:
    """2^n for an integer-valued float n (the CPU plugin's Power gives these exactly,
    checked by the tests; it is far faster than building 2^n from integer shifts)."""
    return out(ops.power(cx.f32(2.0), n))


def _gauss(cx: Lowerer, a: Out) -> Out:
    """exp(-a^2) / sqrt(pi) for 0 <= a <= _ERF_ONE (see the module docstring)."""
    h = out(ops.multiply(out(ops.floor(out(ops.multiply(a, cx.f32(_STEPS))))), cx.f32(1.0 / _STEPS)))
    t = out(ops.multiply(out(ops.subtract(a, h)), out(ops.add(a, h))))
    # u = -h^2 - ln(sqrt(pi))_hi: exact (multiples of 2^-14 below 2^6)
    u = out(ops.subtract(out(ops.negative(out(ops.multiply(h, h)))), cx.f32(_LN_SQRT_PI_HI)))
    n = out(ops.round(out(ops.multiply(u, cx.f32(1.0 / math.log(2.0)))), "half_to_even"))
    # r = u - n ln2 - ln(sqrt(pi))_lo - t; u - n * ln2_hi is exact (multiples of 2^-17, |.| < 1)
    head = out(ops.subtract(u, out(ops.multiply(n, cx.f32(_LN2_HI)))))
    tail = out(ops.add(out(ops.multiply(n, cx.f32(_LN2_LO))), out(ops.add(t, cx.f32(_LN_SQRT_PI_LO)))))
    r = out(ops.subtract(head, tail))
    return out(ops.multiply(_horner(cx, r, _EXP_TAYLOR), _pow2(cx, n)))


def _erfc(cx: Lowerer, a: Out, top: float) -> Out:
    """erfc(a) for a = |x| in (0.5, top], top <= 6; a is clamped to [0.5, top]
    (so no lane overflows; the callers select the lanes this is for and restore NaN)."""
    a = out(ops.clamp(a, _ERF_SMALL, top))
    w = out(ops.add(a, _rational(cx, a, _S_NUM, _S_DEN)))
    return out(ops.divide(_gauss(cx, a), w))


def _keep_nan(x: Out, value: Out) -> Out:
    return out(ops.select(out(ops.is_nan(x)), x, value))


def erf(cx: Lowerer, x: Out) -> Out:
    """erf of an f32 tensor (NaN stays NaN, erf(+-inf) = +-1, erf(-0) = -0)."""
    a = out(ops.abs(x))
    sign = out(ops.select(out(ops.less(x, cx.f32(0.0))), cx.f32(-1.0), cx.f32(1.0)))
    # from 4 on, 1 - erfc(4) rounds to 1 (erfc(4) < 2^-25)
    large = out(ops.multiply(sign, out(ops.subtract(cx.f32(1.0), _erfc(cx, a, _ERF_MID)))))
    result = out(ops.select(out(ops.less_equal(a, cx.f32(_ERF_SMALL))), _erf_small(cx, x), large))
    return _keep_nan(x, result)


def one_plus_erf(cx: Lowerer, x: Out) -> Out:
    """1 + erf(x), accurate in relative terms for negative x too (it is erfc(-x) there)."""
    a = out(ops.abs(x))
    small = out(ops.add(cx.f32(1.0), _erf_small(cx, x)))
    erfc = _erfc(cx, a, _ERF_ONE)
    negative = out(ops.less(x, cx.f32(0.0)))
    large = out(ops.select(negative, erfc, out(ops.subtract(cx.f32(2.0), erfc))))
    # from 6 on, 1 + erf is exactly 0 or 2 in the reference (so gelu(-inf) is nan there too)
    limit = out(ops.select(negative, cx.f32(0.0), cx.f32(2.0)))
    large = out(ops.select(out(ops.less(a, cx.f32(_ERF_ONE))), large, limit))
    result = out(ops.select(out(ops.less_equal(a, cx.f32(_ERF_SMALL))), small, large))
    return _keep_nan(x, result)
