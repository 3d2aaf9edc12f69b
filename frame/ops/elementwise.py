"""Elementwise ops: unary math, binary arithmetic with NumPy broadcasting,
comparisons, logical ops, where, cast and clip.

Output dtypes follow NumPy 2: for ops backed by a ufunc, the ufunc's own
loop resolution decides (so a captured NumPy expression gets NumPy's dtype);
ops NumPy lacks (sigmoid, relu, gelu, rsqrt, erf) follow the closest ufunc.
"""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import result_type
from ..hal.errors import FrameTypeError
from ..ir.types import TensorType
from .common import broadcast_shapes, require_dtype, ufunc_result_dtype
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["UNARY_UFUNCS", "BINARY_UFUNCS", "erf_kernel"]

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
}
for _name, _uf in UNARY_UFUNCS.items():
    def _kernel(ins, attrs, _f=_uf):
        return (_f(ins[0]),)

    register(OpSchema(_name, 1, _unary_infer_like(_name, _uf), _kernel, traits=_EW,
                      doc=f"Elementwise numpy.{_uf.__name__}."))


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
    require_dtype("relu", t, "fi", "a float or integer")
    return [t]




def erf_kernel(x: np.ndarray) -> np.ndarray:
    """erf for float arrays, exact to the platform's libm (math.erf per element).

    Float16/float32 inputs are computed in float64 and rounded back.
    """
    flat = np.asarray(x, dtype=np.float64).ravel()
    out = np.fromiter((math.erf(v) for v in flat.tolist()), dtype=np.float64, count=flat.size)
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
}
_COMMUTATIVE = {"add", "mul", "maximum", "minimum", "equal", "not_equal", "logical_and", "logical_or"}
_COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or"}


def _binary_infer(name: str, ufunc: np.ufunc):
    def infer(types, attrs):
        a, b = types
        shape = broadcast_shapes(name, a.shape, b.shape)
        return [TensorType(ufunc_result_dtype(name, ufunc, [a.dtype, b.dtype]), shape)]
    return infer


for _name, _uf in BINARY_UFUNCS.items():
    _traits = _EW + ("broadcast",)
    if _name in _COMMUTATIVE:
        _traits += ("commutative",)
    if _name in _COMPARISONS:
        _traits += ("nondifferentiable",)

    def _kernel(ins, attrs, _f=_uf):
        return (_f(ins[0], ins[1]),)

    register(OpSchema(_name, 2, _binary_infer(_name, _uf), _kernel, traits=_traits,
                      doc=f"Elementwise numpy.{_uf.__name__} with broadcasting."))


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

