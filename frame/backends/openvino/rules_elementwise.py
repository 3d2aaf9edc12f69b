"""Lowerings of the elementwise ops: unary math, binary arithmetic,
comparisons, logical ops, where, cast, clip.

Operands are first brought to the kind the op computes in (the output's kind
for arithmetic, NumPy's common dtype for comparisons), as NumPy's ufunc loops
do.  Where the CPU plugin's own op differs from NumPy, the lowering says how:

- Maximum/Minimum/ReduceMax/Relu/Clamp drop NaN and Exp maps it to inf;
  NumPy propagates it, so NaN operands are selected explicitly.
- Greater and GreaterEqual answer True for NaN operands; Less/LessEqual are
  right, so ``a > b`` is lowered as ``b < a``.
- boolean Add/Multiply/Maximum/Minimum are invalid in OpenVINO; for bools
  NumPy's results are or/and.
- Convert(f32 -> boolean) makes NaN False; NumPy's ``astype(bool)`` makes it
  True, so casts to bool are ``x != 0``.
- Erf is not accurate enough (see ``erf.py``).
- there is no log1p/expm1 op: they are built from Log/Exp with the corrections
  that keep them accurate for tiny x (``log(1 + x)`` would lose it all).
- integer comparisons, Clamp and Relu run in float32 inside the plugin
  (16777217 == 16777216 is True): integer comparisons are built from bitwise
  ops (``Lowerer.int_less``), integer relu/clip from Maximum/Minimum, which
  are exact.
- int8/int16/uint8/uint16 are i32 inside the model: add, sub, mul, neg, abs,
  invert and casts into them wrap the i32 result back into the dtype
  (``Lowerer.wrap``: uint8 200 + 100 is 44, as in NumPy).
- integer floor division, modulo and power go through float in OpenVINO, and
  float Mod/FloorMod compute ``a - trunc(a / b) * b`` rather than NumPy's
  exact fmod (1 mod 0.1 gives 0 instead of 0.0999...): these are refused.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import openvino.opset16 as ops

from ...dtypes import DType, from_numpy, int64
from ...ir.graph import Node
from . import erf as erf_math
from .table import SMALL_INTS, Lowerer, Out, lowering, out

__all__ = ["compare_ints", "maximum", "minimum"]


def _in(node: Node, i: int = 0) -> DType:
    return node.inputs[i].type.dtype


def _out(node: Node) -> DType:
    return node.outputs[0].type.dtype


def _kinds(node: Node) -> str:
    return ", ".join(str(v.type) for v in node.inputs)


def _keep_nan(x: Out, value: Out) -> Out:
    """``value``, except NaN where ``x`` is NaN (NumPy's propagation).  Nothing
    to do for a constant ``x`` without NaN (relu's 0: the plugin would compute
    IsNaN of it and a Select on every call)."""
    node = x.get_node()
    if (node.get_type_name() == "Constant" and node.get_element_type().is_real()
            and not np.isnan(node.get_data()).any()):
        return value
    return out(ops.select(out(ops.is_nan(x)), x, value))


def nan_maximum(a: Out, b: Out) -> Out:
    return _keep_nan(a, _keep_nan(b, out(ops.maximum(a, b))))


def nan_minimum(a: Out, b: Out) -> Out:
    return _keep_nan(a, _keep_nan(b, out(ops.minimum(a, b))))


def maximum(kind: str, a: Out, b: Out) -> Out:
    if kind == "b":
        return out(ops.logical_or(a, b))
    return nan_maximum(a, b) if kind == "f" else out(ops.maximum(a, b))


def minimum(kind: str, a: Out, b: Out) -> Out:
    if kind == "b":
        return out(ops.logical_and(a, b))
    return nan_minimum(a, b) if kind == "f" else out(ops.minimum(a, b))


def _operands(cx: Lowerer, node: Node, ins: Sequence[Out], kind: str) -> list[Out]:
    return [cx.to_kind(x, v.type.dtype, kind) for x, v in zip(ins, node.inputs)]


def _wrapped(cx: Lowerer, node: Node, y: Out) -> Out:
    """``y`` wrapped into the output's dtype when that is a small integer."""
    dtype = _out(node)
    return cx.wrap(y, dtype) if dtype.name in SMALL_INTS else y


# --------------------------------------------------------------------------- unary

def _float_only(node: Node) -> str | None:
    if _out(node).kind != "f":
        return f"op '{node.op}' on {_kinds(node)}: only floating results are lowered"
    return None


_FLOAT_UNARY = {
    "exp": ops.exp, "log": ops.log, "sqrt": ops.sqrt, "tanh": ops.tanh, "sin": ops.sin,
    "cos": ops.cos, "sigmoid": ops.sigmoid,
}


@lowering(*_FLOAT_UNARY, check=_float_only)
def _float_unary(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    (x,) = _operands(cx, node, ins, "f")
    y = out(_FLOAT_UNARY[node.op](x))
    if node.op == "exp":
        y = _keep_nan(x, y)  # the plugin's Exp maps NaN to inf
    return [y]


def _log1p_of(cx: Lowerer, x: Out) -> Out:
    one = cx.f32(1.0)
    u = out(ops.add(one, x))
    um1 = out(ops.subtract(u, one))
    log_u = out(ops.log(u))
    corrected = out(ops.divide(out(ops.multiply(log_u, x)), um1))
    y = out(ops.select(out(ops.equal(um1, cx.f32(0.0))), x, corrected))
    # x = inf: inf * inf / inf is nan, log1p(inf) = log(inf) = inf
    return out(ops.select(out(ops.is_inf(x)), log_u, y))


@lowering("log1p", check=_float_only)
def _log1p(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    """log(1 + x) with Goldberg's correction (Kahan): ``u = 1 + x`` rounds, and
    ``log(u) * x / (u - 1)`` undoes the rounding; where ``u == 1`` the result is
    ``x`` itself (log(1 + x) would be 0 for every float32 x below 6e-8)."""
    (x,) = _operands(cx, node, ins, "f")
    return [_log1p_of(cx, x)]


@lowering("logaddexp", check=_float_only)
def _logaddexp(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    """NumPy's ``npy_logaddexp``: ``x + log(2)`` where ``x == y`` (equal
    infinities too), else ``max + log1p(exp(-|x - y|))``, NaN where ``x - y`` is."""
    x, y = _operands(cx, node, ins, "f")
    diff = out(ops.subtract(x, y))
    larger = out(ops.select(out(ops.greater(diff, cx.f32(0.0))), x, y))
    tail = _log1p_of(cx, out(ops.exp(out(ops.negative(out(ops.abs(diff)))))))
    r = out(ops.add(larger, tail))
    r = out(ops.select(out(ops.is_nan(diff)), diff, r))
    return [out(ops.select(out(ops.equal(x, y)), out(ops.add(x, cx.f32(math.log(2.0)))), r))]


@lowering("hypot", check=_float_only)
def _hypot(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    """``m * sqrt(1 + (n / m)**2)`` for ``m, n`` the larger and smaller of
    ``|x|, |y|`` (no overflow of the squares); 0 where both are 0, inf where either
    is inf (also next to NaN, as C's hypot), else NaN where either is NaN."""
    x, y = _operands(cx, node, ins, "f")
    a, b = out(ops.abs(x)), out(ops.abs(y))
    m, n = out(ops.maximum(a, b)), out(ops.minimum(a, b))
    r = out(ops.divide(n, m))
    h = out(ops.multiply(m, out(ops.sqrt(out(ops.add(cx.f32(1.0), out(ops.multiply(r, r))))))))
    h = out(ops.select(out(ops.equal(m, cx.f32(0.0))), m, h))
    nan = out(ops.logical_or(out(ops.is_nan(x)), out(ops.is_nan(y))))
    h = out(ops.select(nan, out(ops.add(x, y)), h))
    inf = out(ops.logical_or(out(ops.is_inf(x)), out(ops.is_inf(y))))
    return [out(ops.select(inf, cx.f32(math.inf), h))]


@lowering("expm1", check=_float_only)
def _expm1(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    """exp(x) - 1 with Kahan's correction: ``(u - 1) * x / log(u)`` for ``u =
    exp(x)``; ``x`` itself where ``u == 1``, -1 where ``u == 0``, ``u`` where it
    is inf (and NaN kept: the plugin's Exp maps it to inf)."""
    (x,) = _operands(cx, node, ins, "f")
    one = cx.f32(1.0)
    u = _keep_nan(x, out(ops.exp(x)))
    um1 = out(ops.subtract(u, one))
    corrected = out(ops.divide(out(ops.multiply(um1, x)), out(ops.log(u))))
    y = out(ops.select(out(ops.equal(um1, cx.f32(0.0))), x, corrected))
    y = out(ops.select(out(ops.equal(um1, cx.f32(-1.0))), um1, y))
    return [out(ops.select(out(ops.is_inf(u)), u, y))]


@lowering("rsqrt", check=_float_only)
def _rsqrt(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # the reference rounds twice (reciprocal of sqrt); so does this, no fused rsqrt
    (x,) = _operands(cx, node, ins, "f")
    return [out(ops.divide(cx.f32(1.0), out(ops.sqrt(x))))]


@lowering("erf", check=_float_only)
def _erf(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    (x,) = _operands(cx, node, ins, "f")
    return [erf_math.erf(cx, x)]


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@lowering("gelu", check=_float_only)
def _gelu(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    (x,) = _operands(cx, node, ins, "f")
    half_x = out(ops.multiply(cx.f32(0.5), x))
    if node.attrs["approximate"] == "tanh":
        # the reference's own evaluation order, op for op
        cube = out(ops.multiply(out(ops.multiply(out(ops.multiply(cx.f32(0.044715), x)), x)), x))
        inner = out(ops.multiply(cx.f32(_SQRT_2_OVER_PI), out(ops.add(x, cube))))
        return [out(ops.multiply(half_x, out(ops.add(cx.f32(1.0), out(ops.tanh(inner))))))]
    u = out(ops.multiply(x, cx.f32(1.0 / math.sqrt(2.0))))
    return [out(ops.multiply(half_x, erf_math.one_plus_erf(cx, u)))]


@lowering("neg")
def _neg(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [_wrapped(cx, node, out(ops.negative(ins[0])))]


@lowering("abs")
def _abs(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [ins[0] if _in(node).kind == "b" else _wrapped(cx, node, out(ops.abs(ins[0])))]


@lowering("sign", int64=True)
def _sign(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [out(ops.sign(ins[0]))]


@lowering("floor", "ceil", int64=True)
def _round(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    if _in(node).kind != "f":
        return [ins[0]]  # NumPy 2 keeps integer and bool dtypes: the identity
    return [out((ops.floor if node.op == "floor" else ops.ceiling)(ins[0]))]


@lowering("reciprocal")
def _reciprocal(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    if _out(node).kind == "f":
        (x,) = _operands(cx, node, ins, "f")
        return [out(ops.divide(cx.f32(1.0), x))]
    # NumPy computes integer reciprocal as (int)(1.0 / x): 0 for |x| > 1 and, on
    # x86, INT_MIN for 0 (the float->int conversion of inf); Convert does the same
    x = out(ops.convert(ins[0], "f32"))
    return [out(ops.convert(out(ops.divide(cx.f32(1.0), x)), "i32"))]


@lowering("logical_not", int64=True)
def _logical_not(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [out(ops.logical_not(cx.to_kind(ins[0], _in(node), "b")))]


@lowering("relu", int64=True)
def _relu(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = _in(node).kind
    return [maximum(kind, ins[0], cx.const(0, kind))]


# --------------------------------------------------------------------------- binary

def _arith_check(node: Node) -> str | None:
    if node.op in ("pow",) and _out(node).kind != "f":
        return (f"op 'pow' on {_kinds(node)}: OpenVINO computes integer power through "
                f"float, which is wrong for large results")
    return None


@lowering("add", "sub", "mul", "div", "pow", check=_arith_check)
def _arith(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = _out(node).kind
    a, b = _operands(cx, node, ins, kind)
    if kind == "b":  # NumPy: bool + bool is or, bool * bool is and
        return [out((ops.logical_or if node.op == "add" else ops.logical_and)(a, b))]
    build = {"add": ops.add, "sub": ops.subtract, "mul": ops.multiply, "div": ops.divide,
             "pow": ops.power}[node.op]
    return [_wrapped(cx, node, out(build(a, b)))]


def _refuse_divmod(node: Node) -> str:
    if _out(node).kind == "f":
        return (f"op '{node.op}' on {_kinds(node)}: OpenVINO's Mod/FloorMod compute "
                f"a - trunc(a / b) * b, not NumPy's exact fmod-based result (1 mod 0.1)")
    return (f"op '{node.op}' on {_kinds(node)}: OpenVINO computes integer floor division "
            f"and modulo through float, which is wrong for large values")


def _no_build(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    raise AssertionError(f"'{node.op}' is never lowered: its check always refuses")


lowering("floordiv", "mod", check=_refuse_divmod)(_no_build)


def _refuse_shift(node: Node) -> str:
    return (f"op '{node.op}' on {_kinds(node)}: int64 runs in int32 inside OpenVINO, and "
            f"its shifts by the width or more (or by negative counts) are not NumPy's")


lowering("left_shift", "right_shift", check=_refuse_shift)(_no_build)


def _refuse_math(node: Node) -> str:
    return (f"op '{node.op}' on {_kinds(node)}: not lowered to OpenVINO (no op, or one whose "
            f"accuracy against NumPy's was not measured); it runs on the cpu kernels")


lowering("tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "exp2", "log2", "log10", "cbrt",
         "rint", "trunc", "arctan2", "signbit", "deg2rad", "rad2deg", "copysign", "heaviside",
         "fmod", "float_power", "ldexp", "frexp", "modf", "spacing", "nextafter",
         check=_refuse_math)(_no_build)


@lowering("maximum", "minimum", int64=True)
def _extremum(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = _out(node).kind
    a, b = _operands(cx, node, ins, kind)
    return [(maximum if node.op == "maximum" else minimum)(kind, a, b)]


def _common(node: Node) -> DType:
    return from_numpy(np.result_type(*(v.type.dtype.np for v in node.inputs)))


def _compare_check(node: Node) -> str | None:
    common = _common(node)
    if common.name == "float64":
        return (f"op '{node.op}' on {_kinds(node)}: NumPy compares these in float64, which "
                f"the OpenVINO CPU plugin computes in float32")
    return None


# Greater/GreaterEqual are True for NaN operands in the CPU plugin: swap to Less/LessEqual
_COMPARE = {"equal": (ops.equal, False), "not_equal": (ops.not_equal, False),
            "less": (ops.less, False), "less_equal": (ops.less_equal, False),
            "greater": (ops.less, True), "greater_equal": (ops.less_equal, True)}


def compare_ints(cx: Lowerer, op: str, a: Out, b: Out) -> Out:
    """An exact comparison of i32 values (see ``Lowerer.int_equal``)."""
    if op in ("equal", "not_equal"):
        if cx.exact_in_float(a) or cx.exact_in_float(b):  # (one-hot against an iota)
            return out((ops.equal if op == "equal" else ops.not_equal)(a, b))
        eq = cx.int_equal(a, b)
        return eq if op == "equal" else out(ops.logical_not(eq))
    if op in ("greater", "less_equal"):
        a, b = b, a  # a > b is b < a; a <= b is not (b < a)
    lt = cx.int_less(a, b)
    return lt if op in ("less", "greater") else out(ops.logical_not(lt))


@lowering(*_COMPARE, check=_compare_check, int64=True)
def _compare(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = _common(node).kind
    if kind == "b" and node.op in ("equal", "not_equal"):
        a, b = ins
        differ = out(ops.logical_xor(a, b))
        return [differ if node.op == "not_equal" else out(ops.logical_not(differ))]
    if kind == "b":
        kind = "i"  # ordering of bools: False < True, compared as 0 and 1
    a, b = _operands(cx, node, ins, kind)
    if kind in "iu":
        return [compare_ints(cx, node.op, a, b)]
    build, swap = _COMPARE[node.op]
    return [out(build(b, a) if swap else build(a, b))]


@lowering("logical_and", "logical_or", int64=True)
def _logical(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    a, b = _operands(cx, node, ins, "b")
    return [out((ops.logical_and if node.op == "logical_and" else ops.logical_or)(a, b))]


_BITWISE = {"bitwise_and": ops.bitwise_and, "bitwise_or": ops.bitwise_or,
            "bitwise_xor": ops.bitwise_xor}


@lowering(*_BITWISE, int64=True)
def _bitwise(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    # integers are i32 inside the model: bitwise results of values that fit in
    # int32 fit too (two's complement), so int64 is exact under the usual check
    a, b = _operands(cx, node, ins, _out(node).kind)
    return [out(_BITWISE[node.op](a, b))]


@lowering("invert", int64=True)
def _invert(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [_wrapped(cx, node, out(ops.bitwise_not(cx.to_kind(ins[0], _in(node), _out(node).kind))))]


# --------------------------------------------------------------------------- where, cast, clip

@lowering("where", int64=True, computes=False)
def _where(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = _out(node).kind
    cond = ins[0]
    a, b = (cx.to_kind(x, v.type.dtype, kind) for x, v in zip(ins[1:], node.inputs[1:]))
    if kind == "b":
        # Select over boolean data fails inside the CPU plugin once a LogicalNot
        # feeds it ("element types must match": boolean vs u8): use logic instead
        pick_a = out(ops.logical_and(cond, a))
        pick_b = out(ops.logical_and(out(ops.logical_not(cond)), b))
        return [out(ops.logical_or(pick_a, pick_b))]
    return [out(ops.select(cond, a, b))]


def _cast_check(node: Node) -> str | None:
    src, dst = _in(node), _out(node)
    if dst is int64 and src.kind == "f":
        return (f"op 'cast' from {src.name} to int64: values outside the int32 range would "
                f"be wrong, as the OpenVINO CPU plugin keeps int64 in int32")
    if dst.name in SMALL_INTS and src.kind in "fc":
        return (f"op 'cast' from {src.name} to {dst.name}: NumPy's conversion of out-of-range "
                f"floats (C's undefined behaviour) is not the plugin's")
    return None


@lowering("cast", check=_cast_check, int64=True)
def _cast(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    return [cx.cast(ins[0], _in(node), _out(node))]


@lowering("clip", int64=True)
def _clip(cx: Lowerer, node: Node, ins: Sequence[Out]) -> list[Out]:
    kind = _out(node).kind
    x, lo, hi = _operands(cx, node, ins, kind)
    return [minimum(kind, maximum(kind, x, lo), hi)]
