"""Gradient rules of the elementwise ops.

Conventions (see registry.py for the rule signature):

- Broadcasting is undone by ``fit`` (``unbroadcast`` + dtype), so each rule
  states the gradient at the output's shape only.
- A derivative factor enters conjugated (``conj``; no node for real values),
  which makes the same rule right for complex inputs.
- Subgradients at kinks: ``relu'(0) = 0``; ``abs'(0) = sign(0) = 0``.
- ``sign`` (of reals), ``floor``, ``ceil`` and ``floordiv`` are piecewise
  constant: their gradient is zero wherever it exists, and the rules return
  None (no contribution; a ``wrt`` reached only through them gets zeros, not
  an error).  ``sign`` of a complex z is z / |z|, which has a gradient.
- ``maximum``/``minimum``: NumPy returns the common value at a tie, so any
  split of the gradient is a subgradient; the rules give half to each operand
  (symmetric, so the commutative op's gradient does not depend on operand
  order, and it equals the central difference at the tie).  Where an operand
  is NaN both get 0.
- ``clip(x, lo, hi)`` (NumPy: ``minimum(maximum(x, lo), hi)``): x receives the
  gradient where ``lo <= x <= hi`` (boundaries included, as PyTorch), lo where
  ``x < lo <= hi``, hi where ``hi < maximum(x, lo)`` (which covers lo > hi,
  where NumPy returns hi).  The three masks partition every position.
- ``pow(a, b)``: ``d/db = a**b * log(a)``, taken as 0 where a == 0 (the limit
  for b > 0); negative a gives NaN there, honestly (a real log is undefined).
- ``cast``: between float/complex dtypes the gradient is cast back (complex to
  real takes the real part); to or from an integer or bool dtype: None.
"""
from __future__ import annotations

import math

from .helpers import conj, differentiable, fit
from .registry import gradient_rule

__all__: list[str] = []

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def _mul_deriv(b, g, d):
    """g * conj(d): the chain rule for a derivative factor d."""
    return b.op("mul", g, conj(b, d))


def _unary(fn):
    """A unary rule from ``fn(b, x, y, g) -> grad`` at the output's shape."""
    def rule(b, inputs, outputs, grads, attrs):
        (x,), (y,), (g,) = inputs, outputs, grads
        if g is None or not differentiable(x):
            return [None]
        return [fit(b, fn(b, x, y, g), x)]
    return rule


def _s(b, value, like):
    return b.scalar(value, like=like)


gradient_rule("neg")(_unary(lambda b, x, y, g: b.op("neg", g)))
gradient_rule("exp")(_unary(lambda b, x, y, g: _mul_deriv(b, g, y)))
gradient_rule("log")(_unary(lambda b, x, y, g: b.op("div", g, conj(b, x))))
gradient_rule("log1p")(_unary(
    lambda b, x, y, g: b.op("div", g, conj(b, b.op("add", x, _s(b, 1.0, x))))))
gradient_rule("expm1")(_unary(lambda b, x, y, g: _mul_deriv(b, g, b.op("exp", x))))
gradient_rule("sqrt")(_unary(
    lambda b, x, y, g: b.op("div", b.op("mul", g, _s(b, 0.5, g)), conj(b, y))))
# d/dx x**-1/2 = -1/2 * y**3
gradient_rule("rsqrt")(_unary(lambda b, x, y, g: _mul_deriv(
    b, g, b.op("mul", _s(b, -0.5, y), b.op("mul", y, b.op("mul", y, y))))))
gradient_rule("reciprocal")(_unary(
    lambda b, x, y, g: b.op("neg", _mul_deriv(b, g, b.op("mul", y, y)))))
gradient_rule("tanh")(_unary(lambda b, x, y, g: _mul_deriv(
    b, g, b.op("sub", _s(b, 1.0, y), b.op("mul", y, y)))))
gradient_rule("sigmoid")(_unary(lambda b, x, y, g: _mul_deriv(
    b, g, b.op("mul", y, b.op("sub", _s(b, 1.0, y), y)))))
gradient_rule("sin")(_unary(lambda b, x, y, g: _mul_deriv(b, g, b.op("cos", x))))
gradient_rule("cos")(_unary(lambda b, x, y, g: b.op("neg", _mul_deriv(b, g, b.op("sin", x)))))
gradient_rule("tan")(_unary(lambda b, x, y, g: _mul_deriv(
    b, g, b.op("add", _s(b, 1.0, y), b.op("mul", y, y)))))
# arcsin' = 1 / sqrt(1 - x^2), arccos' = -arcsin', arctan' = 1 / (1 + x^2)
def _one_minus_square(b, x, y):
    xf = _as_output_dtype(b, x, y)
    return b.op("sub", _s(b, 1.0, y), b.op("mul", xf, xf))


gradient_rule("arcsin")(_unary(lambda b, x, y, g: b.op(
    "div", g, conj(b, b.op("sqrt", _one_minus_square(b, x, y))))))
gradient_rule("arccos")(_unary(lambda b, x, y, g: b.op("neg", b.op(
    "div", g, conj(b, b.op("sqrt", _one_minus_square(b, x, y)))))))
gradient_rule("arctan")(_unary(lambda b, x, y, g: b.op("div", g, conj(b, b.op(
    "add", _s(b, 1.0, y), b.op("mul", _as_output_dtype(b, x, y), _as_output_dtype(b, x, y)))))))
gradient_rule("sinh")(_unary(lambda b, x, y, g: _mul_deriv(b, g, b.op("cosh", x))))
gradient_rule("cosh")(_unary(lambda b, x, y, g: _mul_deriv(b, g, b.op("sinh", x))))
gradient_rule("exp2")(_unary(lambda b, x, y, g: _mul_deriv(
    b, g, b.op("mul", y, _s(b, math.log(2.0), y)))))
gradient_rule("log2")(_unary(lambda b, x, y, g: b.op("div", g, conj(b, b.op(
    "mul", _as_output_dtype(b, x, y), _s(b, math.log(2.0), y))))))
gradient_rule("log10")(_unary(lambda b, x, y, g: b.op("div", g, conj(b, b.op(
    "mul", _as_output_dtype(b, x, y), _s(b, math.log(10.0), y))))))
# cbrt' = 1 / (3 y^2)
gradient_rule("cbrt")(_unary(lambda b, x, y, g: b.op("div", g, b.op(
    "mul", _s(b, 3.0, y), b.op("mul", y, y)))))
gradient_rule("relu")(_unary(
    lambda b, x, y, g: b.op("where", b.op("greater", x, _s(b, 0.0, x)), g, _s(b, 0.0, g))))


def _unit(b, x, r):
    """x / |x| for complex x (0 where x == 0, as NumPy's complex sign), with
    ``r = |x|``; built from div rather than sign so that it differentiates."""
    safe = b.op("where", b.op("equal", r, b.scalar(0.0, like=r)), b.scalar(1.0, like=r), r)
    return b.op("div", x, b.op("cast", safe, dtype=x.type.dtype))


@gradient_rule("abs")
def _abs(b, inputs, outputs, grads, attrs):
    # |x|' = sign(x) for reals; for complex z the gradient of |z| is z / |z| (no conj)
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(x):
        return [None]
    d = _unit(b, x, y) if x.type.dtype.kind == "c" else b.op("sign", x)
    return [fit(b, b.op("mul", g, d), x)]


@gradient_rule("sign")
def _sign(b, inputs, outputs, grads, attrs):
    # real sign is piecewise constant: None.  Complex sign(z) = z / r (r = |z|) is not:
    # G_z = G / r - Re(G conj(z)) z / r^3, taken as 0 at z == 0
    (x,), (g,) = inputs, grads
    if g is None or x.type.dtype.kind != "c":
        return [None]
    r = b.op("abs", x)
    is_zero = b.op("equal", r, b.scalar(0.0, like=r))
    safe = b.op("cast", b.op("where", is_zero, b.scalar(1.0, like=r), r), dtype=x.type.dtype)
    along = b.op("cast", b.op("real", b.op("mul", g, b.op("conj", x))), dtype=x.type.dtype)
    cube = b.op("mul", safe, b.op("mul", safe, safe))
    gz = b.op("sub", b.op("div", g, safe), b.op("div", b.op("mul", along, x), cube))
    return [fit(b, b.op("where", is_zero, b.scalar(0.0, like=gz), gz), x)]




def _as_output_dtype(b, x, y):
    """x in the output's dtype (erf and gelu of integers compute in float)."""
    return x if x.type.dtype is y.type.dtype else b.op("cast", x, dtype=y.type.dtype)


@gradient_rule("erf")
def _erf(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(x):
        return [None]
    xf = _as_output_dtype(b, x, y)
    # erf'(x) = 2 / sqrt(pi) * exp(-x^2)
    d = b.op("mul", _s(b, _TWO_OVER_SQRT_PI, y), b.op("exp", b.op("neg", b.op("mul", xf, xf))))
    return [fit(b, _mul_deriv(b, g, d), x)]


@gradient_rule("floor", "ceil")
def _piecewise_constant(b, inputs, outputs, grads, attrs):
    return [None]


@gradient_rule("gelu")
def _gelu(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(x):
        return [None]
    xf = _as_output_dtype(b, x, y)
    half, one = _s(b, 0.5, y), _s(b, 1.0, y)
    if attrs["approximate"] == "tanh":
        # y = x/2 (1 + t), t = tanh(u), u = c (x + k x^3):
        # y' = (1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2)
        x2 = b.op("mul", xf, xf)
        u = b.op("mul", _s(b, _SQRT_2_OVER_PI, y),
                 b.op("add", xf, b.op("mul", _s(b, _GELU_C, y), b.op("mul", x2, xf))))
        t = b.op("tanh", u)
        du = b.op("mul", _s(b, _SQRT_2_OVER_PI, y),
                  b.op("add", one, b.op("mul", _s(b, 3.0 * _GELU_C, y), x2)))
        left = b.op("mul", half, b.op("add", one, t))
        right = b.op("mul", b.op("mul", half, xf),
                     b.op("mul", b.op("sub", one, b.op("mul", t, t)), du))
        d = b.op("add", left, right)
    else:
        # y = x Phi(x): y' = Phi(x) + x phi(x)
        erf = b.op("erf", b.op("mul", xf, _s(b, _INV_SQRT_2, y)))
        cdf = b.op("mul", half, b.op("add", one, erf))
        pdf = b.op("mul", _s(b, _INV_SQRT_2PI, y),
                   b.op("exp", b.op("mul", _s(b, -0.5, y), b.op("mul", xf, xf))))
        d = b.op("add", cdf, b.op("mul", xf, pdf))
    return [fit(b, b.op("mul", g, d), x)]


# --------------------------------------------------------------------------- binary

def _binary(fn):
    """A binary rule from ``fn(b, x0, x1, y, g) -> (grad0, grad1)`` at the output's
    shape; ``fit`` unbroadcasts, casts, and drops non-differentiable inputs."""
    def rule(b, inputs, outputs, grads, attrs):
        (x0, x1), (y,), (g,) = inputs, outputs, grads
        if g is None:
            return [None, None]
        g0, g1 = fn(b, x0, x1, y, g)
        return [fit(b, g0, x0), fit(b, g1, x1)]
    return rule


# hypot: d/dx = x / h, d/dy = y / h;  logaddexp: d/dx = exp(x - out), d/dy = exp(y - out)
gradient_rule("hypot")(_binary(lambda b, x0, x1, y, g: (
    _mul_deriv(b, g, b.op("div", x0, y)), _mul_deriv(b, g, b.op("div", x1, y)))))
gradient_rule("logaddexp")(_binary(lambda b, x0, x1, y, g: (
    _mul_deriv(b, g, b.op("exp", b.op("sub", x0, y))),
    _mul_deriv(b, g, b.op("exp", b.op("sub", x1, y))))))
# arctan2(y, x): d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2)
gradient_rule("arctan2")(_binary(lambda b, x0, x1, y, g: (
    _mul_deriv(b, g, b.op("div", x1, b.op("add", b.op("mul", x0, x0), b.op("mul", x1, x1)))),
    _mul_deriv(b, g, b.op("neg", b.op("div", x0, b.op(
        "add", b.op("mul", x0, x0), b.op("mul", x1, x1))))))))


def _when(cond, make):
    """Build a gradient only for an input that can carry one."""
    return make() if cond else None


gradient_rule("add")(_binary(lambda b, x0, x1, y, g: (g, g)))
gradient_rule("sub")(_binary(lambda b, x0, x1, y, g: (
    g, _when(differentiable(x1), lambda: b.op("neg", g)))))
gradient_rule("mul")(_binary(lambda b, x0, x1, y, g: (
    _when(differentiable(x0), lambda: _mul_deriv(b, g, x1)),
    _when(differentiable(x1), lambda: _mul_deriv(b, g, x0)))))
# a / b: d/da = 1/b, d/db = -a/b^2 = -y/b
gradient_rule("div")(_binary(lambda b, x0, x1, y, g: (
    _when(differentiable(x0), lambda: b.op("div", g, conj(b, x1))),
    _when(differentiable(x1), lambda: b.op("neg", _mul_deriv(b, g, b.op("div", y, x1)))))))
gradient_rule("floordiv")(_binary(lambda b, x0, x1, y, g: (None, None)))
# a mod b = a - floor(a / b) * b
gradient_rule("mod")(_binary(lambda b, x0, x1, y, g: (
    g, _when(differentiable(x1), lambda: b.op("neg", b.op("mul", g, b.op("floordiv", x0, x1)))))))


@gradient_rule("pow")
def _pow(b, inputs, outputs, grads, attrs):
    (a, e), (y,), (g,) = inputs, outputs, grads
    if g is None:
        return [None, None]
    ga = ge = None
    if differentiable(a):
        ef = e if e.type.dtype is y.type.dtype else b.op("cast", e, dtype=y.type.dtype)
        af = a if a.type.dtype is y.type.dtype else b.op("cast", a, dtype=y.type.dtype)
        d = b.op("mul", ef, b.op("pow", af, b.op("sub", ef, _s(b, 1.0, ef))))
        ga = _mul_deriv(b, g, d)
    if differentiable(e):
        af = a if a.type.dtype is y.type.dtype else b.op("cast", a, dtype=y.type.dtype)
        zero = b.op("equal", af, _s(b, 0.0, af))
        safe = b.op("where", zero, _s(b, 1.0, af), af)  # log(1) = 0 where a == 0
        ge = _mul_deriv(b, g, b.op("mul", y, b.op("log", safe)))
    return [fit(b, ga, a), fit(b, ge, e)]


# float_power is pow computed in float64 (complex128): the same derivatives
gradient_rule("float_power")(_pow)
# deg2rad / rad2deg: multiplication by a constant
gradient_rule("deg2rad")(_unary(lambda b, x, y, g: b.op("mul", g, _s(b, math.pi / 180.0, g))))
gradient_rule("rad2deg")(_unary(lambda b, x, y, g: b.op("mul", g, _s(b, 180.0 / math.pi, g))))
# copysign(a, s) = +-a: the sign flips where the signs of a and s differ (nothing flows to s)
gradient_rule("copysign")(_binary(lambda b, x0, x1, y, g: (
    b.op("where", b.op("equal", b.op("signbit", x0), b.op("signbit", x1)), g, b.op("neg", g)),
    None)))
# fmod(a, m) = a - trunc(a / m) * m; trunc(q) as floor/ceil by sign (their gradient, 0,
# carries to second order)
def _trunc_quotient(b, x0, x1, y):
    q = b.op("div", _as_output_dtype(b, x0, y), _as_output_dtype(b, x1, y))
    return b.op("where", b.op("less", q, _s(b, 0.0, q)), b.op("ceil", q), b.op("floor", q))


gradient_rule("fmod")(_binary(lambda b, x0, x1, y, g: (
    g, b.op("neg", b.op("mul", g, _trunc_quotient(b, x0, x1, y))))))
# ldexp(m, e) = m * 2**e (the exponent is an integer: nothing flows to it)
gradient_rule("ldexp")(_binary(lambda b, x0, x1, y, g: (b.op("ldexp", g, x1), None)))


def _extremum(pick: str):
    """maximum (pick='greater') / minimum (pick='less'): ties split in half."""
    def fn(b, x0, x1, y, g):
        zero, half = _s(b, 0.0, g), b.op("mul", g, _s(b, 0.5, g))
        tie = b.op("where", b.op("equal", x0, x1), half, zero)
        return (_when(differentiable(x0), lambda: b.op("where", b.op(pick, x0, x1), g, tie)),
                _when(differentiable(x1), lambda: b.op("where", b.op(pick, x1, x0), g, tie)))
    return fn


gradient_rule("maximum")(_binary(_extremum("greater")))
gradient_rule("minimum")(_binary(_extremum("less")))


# --------------------------------------------------------------------------- where, cast, clip

@gradient_rule("where")
def _where(b, inputs, outputs, grads, attrs):
    (c, x0, x1), (g,) = inputs, grads
    if g is None:
        return [None, None, None]
    zero = _s(b, 0.0, g)
    g0 = _when(differentiable(x0), lambda: b.op("where", c, g, zero))
    g1 = _when(differentiable(x1), lambda: b.op("where", c, zero, g))
    return [None, fit(b, g0, x0), fit(b, g1, x1)]


@gradient_rule("cast")
def _cast(b, inputs, outputs, grads, attrs):
    (x,), (y,), (g,) = inputs, outputs, grads
    if g is None or not differentiable(x) or not differentiable(y):
        return [None]
    return [fit(b, g, x)]  # fit takes the real part (complex -> real) and casts back


@gradient_rule("clip")
def _clip(b, inputs, outputs, grads, attrs):
    (x, lo, hi), (g,) = inputs, grads
    if g is None:
        return [None, None, None]
    zero = _s(b, 0.0, g)

    def masked(mask):
        return b.op("where", mask, g, zero)

    gx = _when(differentiable(x), lambda: masked(b.op(
        "logical_and", b.op("greater_equal", x, lo), b.op("less_equal", x, hi))))
    glo = _when(differentiable(lo), lambda: masked(b.op(
        "logical_and", b.op("less", x, lo), b.op("less_equal", lo, hi))))
    ghi = _when(differentiable(hi), lambda: masked(b.op("less", hi, b.op("maximum", x, lo))))
    return [fit(b, gx, x), fit(b, glo, lo), fit(b, ghi, hi)]


# --------------------------------------------------------------------------- complex helpers

@gradient_rule("conj")
def _conj(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    return [fit(b, conj(b, g), x)]


@gradient_rule("real")
def _real(b, inputs, outputs, grads, attrs):
    (x,), (g,) = inputs, grads
    if g is None or not differentiable(x):
        return [None]
    if x.type.dtype.kind == "c":
        return [b.op("cast", g, dtype=x.type.dtype)]  # g + 0i: Im z does not reach the loss
    return [fit(b, g, x)]
