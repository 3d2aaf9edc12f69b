"""Elementwise ops: unary math, binary arithmetic with NumPy broadcasting,
comparisons, logical ops, where, cast and clip.

Output dtypes follow NumPy 2: for ops backed by a ufunc, the ufunc's own
loop resolution decides (so a captured NumPy expression gets NumPy's dtype);
ops NumPy lacks (sigmoid, relu, gelu, rsqrt, erf) follow the closest ufunc.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import from_numpy, result_type
from ..errors import FrameTypeError
from ..ir.types import TensorType
from .common import broadcast_shapes, require_dtype, ufunc_result_dtype
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["UNARY_UFUNCS", "BINARY_UFUNCS", "EXTRA_UNARY_UFUNCS", "EXTRA_BINARY_UFUNCS",
           "MATH_UNARY_UFUNCS", "MATH_BINARY_UFUNCS", "TWO_OUTPUT_UFUNCS", "erf_kernel"]

_EW = ("elementwise", "fusable")


# --------------------------------------------------------------------------- unary

def _unary_infer_like(name: str, ufunc: np.ufunc):
    """Type inference for a unary op whose dtype rule is ``ufunc``'s."""
    def infer(types, attrs):
        (t,) = types
        return [TensorType(ufunc_result_dtype(name, ufunc, [t.dtype]), t.shape)]
    return infer


UNARY_UFUNCS = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
    "sin": np.sin, "cos": np.cos, "abs": np.absolute, "sign": np.sign, "floor": np.floor,
    "ceil": np.ceil, "reciprocal": np.reciprocal, "logical_not": np.logical_not,
    "invert": np.invert,
}


def _register_unary_ufuncs(table: dict, nondifferentiable: set) -> None:
    """One op per ``name: ufunc`` of ``table``, the ufunc its reference kernel."""
    for name, uf in table.items():
        def kernel(ins, attrs, _f=uf):
            return (_f(ins[0]),)

        register(OpSchema(name, 1, _unary_infer_like(name, uf), kernel,
                          traits=_EW + (("nondifferentiable",) if name in nondifferentiable
                                        else ()),
                          doc=f"Elementwise numpy.{uf.__name__}."))


_register_unary_ufuncs(UNARY_UFUNCS, {"invert"})


def _float_out(ins, dtype_like=np.sqrt):
    """The dtype NumPy gives a float-valued ufunc for this input (int -> float64)."""
    return dtype_like.resolve_dtypes((ins.dtype, None))[1]


def _rsqrt_kernel(ins, attrs):
    x = ins[0]
    return (np.reciprocal(np.sqrt(x)),)


def _sigmoid_kernel(ins, attrs):
    x = ins[0]
    if x.dtype.kind != "f":
        x = x.astype(_float_out(x))
    # split by sign so exp never overflows
    e = np.exp(-np.abs(x))
    return (np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False),)


def _relu_kernel(ins, attrs):
    x = ins[0]
    return (np.maximum(x, np.zeros((), x.dtype)),)


def _relu_infer(types, attrs):
    (t,) = types
    require_dtype("relu", t, "fiu", "a float or integer")
    return [t]


# erf: W. J. Cody, "Rational Chebyshev approximations for the error function",
# Math. Comp. 23 (1969), 631-638.  Cody's near-minimax rational approximations, with the
# coefficient values he published for them (good to about 18 significant digits; the
# same values ship with his SPECFUN package), evaluated by our own vectorised code:
#   |x| <= 0.5:      erf(x)  = x * P1(x^2) / Q1(x^2)                              (4/4)
#   0.5 < |x| <= 4:  erfc(x) = exp(-x^2) * P2(x) / Q2(x)                          (8/8)
#   |x| > 4:         erfc(x) = exp(-x^2) / x * (1/sqrt(pi) - z P3(z) / Q3(z)), z = 1/x^2
# with erf = 1 - erfc above 0.5: erfc <= 0.48 there, so 1 - erfc is a single rounding
# and erf near 1 never comes from a difference of nearly equal numbers.  Accuracy
# details are ours, not Cody's:
# * below 0.5, P1/Q1 is evaluated as 1 + T with T = (P1 - Q1)/Q1 (0.04 to 0.13) and
#   erf = x + x*T, so the exact x carries the result and T's rounding barely shows;
#   P1 - Q1 is formed exactly from the published decimals and rounded once;
# * exp(-x^2) splits x^2 = h^2 + (x - h)(x + h) with h = x truncated to a multiple of
#   1/64, so h^2 is exact and x*x is never rounded; exp(-h^2) is a hi + lo table built
#   once with the decimal module, and exp(-(x-h)(x+h)) enters through expm1;
# * erfc(6) < 2**-54, so erf(x) rounds to +-1 from |x| = 6 on (the asymptotic form is
#   evaluated on 4 < |x| < 6).
# Measured error: under 1 ulp for |x| <= 0.5 and |x| >= 1.2; up to about 2.5 ulp on
# 0.5 < |x| < 1.2, where the few-ulp rounding error of erfc (~0.2 to 0.48) shows
# through 1 - erfc.  tests/test_erf.py checks it against an exact reference.
# Coefficients are the published decimals, lowest power first.
_ERF_P1_DEC = ("3.20937758913846947e+03", "3.77485237685302021e+02", "1.13864154151050156e+02",
               "3.16112374387056560e+00", "1.85777706184603153e-01")
_ERF_Q1_DEC = ("2.84423683343917062e+03", "1.28261652607737228e+03", "2.44024637934444173e+02",
               "2.36012909523441209e+01", "1")
_ERF_P2 = (1.23033935479799725e+03, 2.05107837782607147e+03, 1.71204761263407058e+03,
           8.81952221241769090e+02, 2.98635138197400131e+02, 6.61191906371416295e+01,
           8.88314979438837594e+00, 5.64188496988670089e-01, 2.15311535474403846e-08)
_ERF_Q2 = (1.23033935480374942e+03, 3.43936767414372164e+03, 4.36261909014324716e+03,
           3.29079923573345963e+03, 1.62138957456669019e+03, 5.37181101862009858e+02,
           1.17693950891312499e+02, 1.57449261107098347e+01, 1.0)
_ERF_P3 = (6.58749161529837803e-04, 1.60837851487422766e-02, 1.25781726111229246e-01,
           3.60344899949804439e-01, 3.05326634961232344e-01, 1.63153871373020978e-02)
_ERF_Q3 = (2.33520497626869185e-03, 6.05183413124413191e-02, 5.27905102951428412e-01,
           1.87295284992346047e+00, 2.56852019228982242e+00, 1.0)
_ERF_INV_SQRT_PI = 0.56418958354775628695   # 1/sqrt(pi)
_ERF_TWO_OVER_SQRT_PI = 1.1283791670955125739  # 2/sqrt(pi), erf'(0)
_ERF_SMALL = 0.5                            # end of the erf range
_ERF_MID = 4.0                              # end of the first erfc range
_ERF_ONE = 6.0                              # erf(x) rounds to +-1 from here on
_ERF_TINY = 2.0 ** -1016                    # below, x*T could be subnormal: use x * 2/sqrt(pi)
_ERF_STEPS = 64                             # h in exp(-x^2) is a multiple of 1/_ERF_STEPS
_ERF_CHUNK = 1 << 16  # elements per pass: keeps the temporaries cache-resident


def _erf_t1_coeffs() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(P1 - Q1, Q1) as floats, the difference taken exactly and rounded once."""
    from fractions import Fraction
    diff = tuple(float(Fraction(p) - Fraction(q)) for p, q in zip(_ERF_P1_DEC, _ERF_Q1_DEC))
    return diff, tuple(float(q) for q in _ERF_Q1_DEC)


def _erf_exp_table() -> tuple[np.ndarray, np.ndarray]:
    """exp(-h^2) for h = k/_ERF_STEPS, k = 0 .. _ERF_STEPS * _ERF_ONE, as hi + lo pairs."""
    import decimal
    ctx = decimal.Context(prec=40)
    hi, lo = [], []
    for k in range(_ERF_STEPS * int(_ERF_ONE) + 1):
        e = ctx.exp(ctx.divide(decimal.Decimal(-k * k), _ERF_STEPS * _ERF_STEPS))
        hi.append(float(e))
        lo.append(float(ctx.subtract(e, decimal.Decimal(hi[-1]))))
    return np.array(hi), np.array(lo)


_ERF_T1, _ERF_Q1 = _erf_t1_coeffs()
_ERF_EXP_HI, _ERF_EXP_LO = _erf_exp_table()


def _erf_rational(t: np.ndarray, num: tuple[float, ...], den: tuple[float, ...]) -> np.ndarray:
    """num(t) / den(t) by Horner's rule; coefficients lowest power first, den monic."""
    p = num[-1] * t
    p += num[-2]
    for c in num[-3::-1]:
        p *= t
        p += c
    q = t + den[-2]
    for c in den[-3::-1]:
        q *= t
        q += c
    p /= q
    return p


def _erf_exp_neg_sq(a: np.ndarray) -> np.ndarray:
    """exp(-a^2) for 0 <= a < _ERF_ONE: E(h) * (1 + expm1(-d)), d = (a - h)(a + h) < 0.19,
    summed as hi + (hi * expm1(-d) + lo) so only the small terms carry rounding error."""
    k = (a * float(_ERF_STEPS)).astype(np.intp)     # truncation: h = k/64 <= a
    h = k * (1.0 / _ERF_STEPS)
    d = a - h                                       # exact
    h += a
    d *= h
    np.negative(d, out=d)
    np.expm1(d, out=d)
    hi = _ERF_EXP_HI.take(k)
    d *= hi
    d += _ERF_EXP_LO.take(k)
    d += hi
    return d


def _erf_small(x: np.ndarray) -> np.ndarray:
    """|x| <= 0.5 (signed x): erf(x) = x + x * T(x^2).  Odd in x and keeps -0."""
    r = _erf_rational(x * x, _ERF_T1, _ERF_Q1)
    r *= x
    r += x
    tiny = np.flatnonzero(np.abs(x) < _ERF_TINY)
    if tiny.size:  # erf(x) = x * 2/sqrt(pi) to far below an ulp; one rounding
        r[tiny] = x[tiny] * _ERF_TWO_OVER_SQRT_PI
    return r


def _erfc_middle(a: np.ndarray) -> np.ndarray:
    """0.5 < a <= 4: erfc(a) = exp(-a^2) * P2(a) / Q2(a)."""
    r = _erf_rational(a, _ERF_P2, _ERF_Q2)
    r *= _erf_exp_neg_sq(a)
    return r


def _erfc_large(a: np.ndarray) -> np.ndarray:
    """4 < a < 6: erfc(a) = exp(-a^2) / a * (1/sqrt(pi) - z * P3(z) / Q3(z)), z = 1/a^2."""
    z = a * a
    np.reciprocal(z, out=z)
    r = _erf_rational(z, _ERF_P3, _ERF_Q3)
    r *= z
    np.subtract(_ERF_INV_SQRT_PI, r, out=r)
    r /= a
    r *= _erf_exp_neg_sq(a)
    return r


def _erf_chunk(x: np.ndarray, out: np.ndarray) -> None:
    a = np.abs(x)
    np.copysign(1.0, x, out=out)  # |x| >= 6 and +-inf; nan is patched below
    small = np.flatnonzero(a <= _ERF_SMALL)
    if small.size:
        out[small] = _erf_small(x[small])
    for mask, erfc in (((a > _ERF_SMALL) & (a <= _ERF_MID), _erfc_middle),
                       ((a > _ERF_MID) & (a < _ERF_ONE), _erfc_large)):
        idx = np.flatnonzero(mask)
        if idx.size:
            r = erfc(a[idx])
            np.subtract(1.0, r, out=r)
            out[idx] = np.copysign(r, x[idx])
    nan = np.isnan(x)
    if nan.any():
        out[nan] = x[nan]


def erf_kernel(x: np.ndarray) -> np.ndarray:
    """erf for real arrays, as a float64 array of ``x``'s shape (Cody's rational
    approximations, see above; within about 2.5 ulp of the exact value).

    Float16/float32 (and integer) inputs are computed in float64; callers round back.
    """
    flat = np.ascontiguousarray(x, dtype=np.float64).ravel()
    out = np.empty_like(flat)
    with np.errstate(under="ignore"):  # x*x for tiny x underflows by design
        for start in range(0, flat.size, _ERF_CHUNK):
            stop = start + _ERF_CHUNK
            _erf_chunk(flat[start:stop], out[start:stop])
    return out.reshape(np.shape(x))


def _erf_kernel(ins, attrs):
    x = ins[0]
    dt = _float_out(x)
    return (erf_kernel(x).astype(dt, copy=False),)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_kernel(ins, attrs):
    x = ins[0]
    if x.dtype.kind != "f":
        x = x.astype(_float_out(x))
    if attrs["approximate"] == "tanh":
        inner = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        return ((0.5 * x * (1.0 + np.tanh(inner))).astype(x.dtype, copy=False),)
    return ((0.5 * x * (1.0 + erf_kernel(x / math.sqrt(2.0)))).astype(x.dtype, copy=False),)


_gelu_float_infer = _unary_infer_like("gelu", np.sqrt)


def _gelu_infer(types, attrs):
    if attrs["approximate"] not in ("none", "tanh"):
        raise FrameTypeError(f"gelu: approximate must be 'none' or 'tanh', got {attrs['approximate']!r}")
    return _gelu_float_infer(types, attrs)


def _gelu_decompose(b, inputs, attrs):
    (x,) = inputs
    if x.type.dtype.kind != "f":
        x = b.op("cast", x, dtype=_gelu_float_infer([x.type], attrs)[0].dtype)
    half = b.scalar(0.5, like=x)
    one = b.scalar(1.0, like=x)
    if attrs["approximate"] == "tanh":
        cube = b.op("mul", b.op("mul", x, x), x)
        inner = b.op("add", x, b.op("mul", b.scalar(0.044715, like=x), cube))
        t = b.op("tanh", b.op("mul", b.scalar(_SQRT_2_OVER_PI, like=x), inner))
    else:
        t = b.op("erf", b.op("mul", x, b.scalar(1.0 / math.sqrt(2.0), like=x)))
    return [b.op("mul", b.op("mul", half, x), b.op("add", one, t))]


for _name, _k in (("rsqrt", _rsqrt_kernel), ("sigmoid", _sigmoid_kernel), ("erf", _erf_kernel)):
    register(OpSchema(_name, 1, _unary_infer_like(_name, np.sqrt), _k, traits=_EW))
register(OpSchema("relu", 1, _relu_infer, _relu_kernel, traits=_EW))
# NumPy ufuncs without a frame function of their own: np.log1p/np.expm1 on frame
# Tensors and traced ndarrays reach them (frame/_numpy_functions.py)
EXTRA_UNARY_UFUNCS = {"log1p": np.log1p, "expm1": np.expm1, "tan": np.tan, "arcsin": np.arcsin,
                      "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
                      "exp2": np.exp2, "log2": np.log2, "log10": np.log10, "cbrt": np.cbrt,
                      "rint": np.rint, "trunc": np.trunc}
# rint and trunc are piecewise constant: no gradient (as floor and ceil)
_register_unary_ufuncs(EXTRA_UNARY_UFUNCS, {"rint", "trunc"})
register(OpSchema("gelu", 1, _gelu_infer, _gelu_kernel, attrs={"approximate": AttrSpec("str", "none")},
                  traits=_EW + ("composite",), decompose=_gelu_decompose))


# --------------------------------------------------------------------------- binary

BINARY_UFUNCS = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
}
_COMMUTATIVE = {"add", "mul", "maximum", "minimum", "equal", "not_equal", "logical_and", "logical_or",
                "bitwise_and", "bitwise_or", "bitwise_xor"}
# ops without a gradient: bool results, and the bitwise ops (integer and bool operands only)
_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor"}


def _binary_infer(name: str, ufunc: np.ufunc):
    def infer(types, attrs):
        a, b = types
        shape = broadcast_shapes(name, a.shape, b.shape)
        return [TensorType(ufunc_result_dtype(name, ufunc, [a.dtype, b.dtype]), shape)]
    return infer


def _register_binary_ufuncs(table: dict, commutative: set, nondifferentiable: set) -> None:
    """One broadcasting op per ``name: ufunc`` of ``table``, the ufunc its kernel."""
    for name, uf in table.items():
        traits = _EW + ("broadcast",)
        if name in commutative:
            traits += ("commutative",)
        if name in nondifferentiable:
            traits += ("nondifferentiable",)

        def kernel(ins, attrs, _f=uf):
            return (_f(ins[0], ins[1]),)

        register(OpSchema(name, 2, _binary_infer(name, uf), kernel, traits=traits,
                          doc=f"Elementwise numpy.{uf.__name__} with broadcasting."))


_register_binary_ufuncs(BINARY_UFUNCS, _COMMUTATIVE, _COMPARISONS)


# NumPy binary ufuncs without a frame function of their own (np.hypot, np.logaddexp,
# np.left_shift / np.right_shift and ``a << k`` on frame Tensors and traced ndarrays
# reach them, frame/_numpy_functions.py); the shifts are NumPy's for every shift
# count (0 from the width on, -1 for a negative value shifted right that far)
EXTRA_BINARY_UFUNCS = {"hypot": np.hypot, "logaddexp": np.logaddexp,
                       "left_shift": np.left_shift, "right_shift": np.right_shift,
                       "arctan2": np.arctan2}
_register_binary_ufuncs(EXTRA_BINARY_UFUNCS, commutative={"hypot", "logaddexp"},
                        nondifferentiable={"left_shift", "right_shift"})

# NumPy's math ufuncs of frame/_numpy_math.py (np.copysign, np.heaviside, np.fmod, ...):
# NumPy's ufuncs as their kernels, so every dtype, signed zero, inf and NaN is NumPy's
MATH_UNARY_UFUNCS = {"signbit": np.signbit, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg,
                     "spacing": np.spacing}
_register_unary_ufuncs(MATH_UNARY_UFUNCS, {"signbit", "spacing"})
MATH_BINARY_UFUNCS = {"copysign": np.copysign, "heaviside": np.heaviside, "fmod": np.fmod,
                      "float_power": np.float_power, "ldexp": np.ldexp, "nextafter": np.nextafter}
# heaviside is piecewise constant, spacing and nextafter step by ulps; the others have
# gradient rules
_register_binary_ufuncs(MATH_BINARY_UFUNCS, commutative=set(),
                        nondifferentiable={"heaviside", "nextafter"})


def _two_output_infer(name: str, ufunc: np.ufunc):
    """Type inference for a one-input, two-output ufunc (``frexp``, ``modf``)."""
    def infer(types, attrs):
        (t,) = types
        try:
            resolved = ufunc.resolve_dtypes((t.dtype.np, None, None))
        except TypeError as e:  # NumPy's 'no loop' error is a TypeError
            raise FrameTypeError(f"{name}: not supported for dtype {t.dtype.name}") from e
        try:
            return [TensorType(from_numpy(d), t.shape) for d in resolved[1:]]
        except TypeError as e:
            raise FrameTypeError(f"{name}: not supported for dtype {t.dtype.name} (NumPy "
                                 f"would produce {resolved[1:]})") from e
    return infer


# frexp: (mantissa, int32 exponent); modf: (fractional part, integral part)
TWO_OUTPUT_UFUNCS = {"frexp": np.frexp, "modf": np.modf}
for _name, _uf in TWO_OUTPUT_UFUNCS.items():
    register(OpSchema(_name, 1, _two_output_infer(_name, _uf),
                      lambda ins, attrs, _f=_uf: tuple(_f(ins[0])),
                      traits=("nondifferentiable",),  # (fusion and the cpu codegen's
                      # elementwise paths take one-output nodes)
                      doc=f"Elementwise numpy.{_name}: its two outputs."))


# --------------------------------------------------------------------------- where, cast, clip

def _where_infer(types, attrs):
    c, a, b = types
    if not c.dtype.is_bool:
        raise FrameTypeError(f"where: condition must be bool, got {c}")
    shape = broadcast_shapes("where", c.shape, a.shape, b.shape)
    return [TensorType(result_type(a.dtype, b.dtype), shape)]


def _where_kernel(ins, attrs):
    return (np.where(ins[0], ins[1], ins[2]),)


register(OpSchema("where", 3, _where_infer, _where_kernel, traits=_EW + ("broadcast",)))


def _cast_infer(types, attrs):
    (t,) = types
    return [TensorType(attrs["dtype"], t.shape)]


def _cast_kernel(ins, attrs):
    return (ins[0].astype(attrs["dtype"].np),)


register(OpSchema("cast", 1, _cast_infer, _cast_kernel, attrs={"dtype": AttrSpec("dtype")},
                  traits=_EW))


def _clip_infer(types, attrs):
    x, lo, hi = types
    shape = broadcast_shapes("clip", x.shape, lo.shape, hi.shape)
    if any(t.dtype.is_complex for t in types):
        raise FrameTypeError(f"clip: complex inputs are not ordered, got {x}")
    return [TensorType(result_type(x.dtype, lo.dtype, hi.dtype), shape)]


def _clip_kernel(ins, attrs):
    return (np.clip(ins[0], ins[1], ins[2]),)


register(OpSchema("clip", 3, _clip_infer, _clip_kernel, traits=_EW + ("broadcast",),
                  doc="clip(x, lo, hi) = minimum(maximum(x, lo), hi), as numpy.clip."))

