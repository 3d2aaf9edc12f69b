"""The OpenVINO lowering table: op name -> Rule, one entry per op.

A Rule holds everything this backend knows about one op: how to build opset16
nodes for it (``build``) and when that result is *exactly* the reference
kernel's (``check``, plus two traits the honesty analysis in ``support.py``
reads).  The rule files (``rules_*.py``) fill the table when imported.

Inside a lowered model every value has one of three internal element types,
chosen by its frame dtype's kind: floats are ``f32``, integers ``i32`` and
bools ``boolean`` (see ``Lowerer``); complex64 values are f32 pairs on a
trailing axis.  float16 and int64 exist only at the model's boundary: the CPU
plugin computes them in f32 / i32 anyway (FACTS.md), so the model says so
explicitly and ``support.py`` decides when that is exact.  The small integers
(int8, int16, uint8, uint16) are ``i32`` inside too, every value within its
dtype's range: a rule whose result may leave that range (add, mul, neg, a
cast to a narrower integer) wraps it back (``Lowerer.wrap``), as NumPy's
fixed-width arithmetic does.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import numpy as np
import openvino as ov
import openvino.opset16 as ops

from ...dtypes import DType
from ...ir.graph import Node

__all__ = ["Rule", "RULES", "lowering", "Lowerer", "Out", "internal_type", "internal_shape",
           "I32_MIN", "I32_MAX", "SMALL_INTS"]

Out = ov.Output
I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1

# build(lowerer, node, inputs) -> outputs, in the internal element types
Build = Callable[["Lowerer", Node, Sequence[Out]], Sequence[Out]]
# check(node) -> None when the lowering is exact for this node, else the reason
Check = Callable[[Node], "str | None"]


@dataclasses.dataclass(frozen=True)
class Rule:
    """One op's lowering and its exactness conditions.

    ``int64``: given int64 inputs whose values fit in int32, the op's int64
    outputs also fit and are computed exactly (data movement, selection,
    comparison, index results); arithmetic ops leave it False.
    ``computes``: the op creates new values (False for pure data movement),
    so a float16 input that OpenVINO kept in f32 would change its result.
    ``complex64``: the op takes or makes complex64 values, which live in a
    model as f32 tensors with a trailing axis of 2 (real, imaginary).
    """

    op: str
    build: Build
    check: Check | None = None
    int64: bool = False
    computes: bool = True
    complex64: bool = False


RULES: dict[str, Rule] = {}


def lowering(*names: str, check: Check | None = None, int64: bool = False,
             computes: bool = True, complex64: bool = False) -> Callable[[Build], Build]:
    """Register ``build`` as the lowering of the ops ``names``."""
    def deco(build: Build) -> Build:
        for name in names:
            if name in RULES:
                raise ValueError(f"openvino lowering for '{name}' registered twice")
            RULES[name] = Rule(name, build, check, int64, computes, complex64)
        return build
    return deco


_INTERNAL = {"f": ov.Type.f32, "i": ov.Type.i32, "u": ov.Type.i32, "b": ov.Type.boolean,
             "c": ov.Type.f32}

# the integer dtypes narrower than int32 (i32 inside a model, see the module docstring)
SMALL_INTS = frozenset(("int8", "int16", "uint8", "uint16"))


def internal_type(dtype: DType) -> ov.Type:
    """The element type a value of ``dtype`` has inside a lowered model."""
    return _INTERNAL[dtype.kind]


def internal_shape(dtype: DType, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape it has there: complex values carry a trailing (real, imaginary) axis."""
    return shape + (2,) if dtype.kind == "c" else shape


def _np_internal(kind: str) -> np.dtype:
    return {"f": np.dtype(np.float32), "i": np.dtype(np.int32), "u": np.dtype(np.int32),
            "b": np.dtype(np.bool_)}[kind]


class Lowerer:
    """Helpers shared by the rules while one model is built.

    ``flags`` collects boolean outputs that are True when a run-time condition
    of exactness failed (an index out of range, an int64 input outside int32):
    the executable then re-runs that call with the reference kernels, which
    produce the reference result or raise the reference error.
    """

    def __init__(self):
        self.flags: list[Out] = []
        # Parameters of small graph inputs the executable can check on the host
        # (Parameter name -> graph input index), and the checks asked of it:
        # (graph input, low, high), every value of that input in [low, high)
        self.host_inputs: dict[str, int] = {}
        self.host_checks: list[tuple[int, int, int]] = []

    # -- constants --------------------------------------------------------------
    def const(self, value, kind: str) -> Out:
        """A constant in the internal element type of ``kind`` ('f', 'i', 'b')."""
        arr = np.asarray(value)
        target = _np_internal(kind)
        if arr.dtype != target:
            arr = arr.astype(target)
        if not arr.flags.c_contiguous:
            arr = arr.copy()  # (np.ascontiguousarray would make a 0-d array 1-d)
        return ops.constant(arr).output(0)

    def f32(self, value: float) -> Out:
        return self.const(np.float32(value), "f")

    def i32(self, value: int) -> Out:
        return self.const(np.int32(value), "i")

    def ints(self, values: Sequence[int]) -> Out:
        """A 1-D i64 constant: shapes, axes, pads and slice bounds."""
        return ops.constant(np.asarray(list(values), dtype=np.int64).reshape(len(values))).output(0)

    def like(self, value: float, dtype: DType) -> Out:
        """A scalar constant of ``dtype``'s internal type."""
        return self.const(value, dtype.kind)

    # -- conversions ------------------------------------------------------------
    def cast(self, x: Out, src: DType, dst: DType) -> Out:
        """Convert an internal value of ``src`` to ``dst`` with NumPy's ``astype``
        semantics (``support.py`` rejects the conversions this cannot do exactly)."""
        x = self.to_kind(x, src, dst.kind)  # f16/f32 and i32/i64 share internal types
        if dst.name in SMALL_INTS and not (src.is_bool or (src.is_integer and _within(src, dst))):
            x = self.wrap(x, dst)  # a wider integer: NumPy keeps the low bits
        return x

    def to_kind(self, x: Out, src: DType, kind: str) -> Out:
        if src.kind == kind or (src.kind in "iu" and kind in "iu"):
            return x
        if kind == "b" and src.kind == "f":
            # NaN is truthy in NumPy; OpenVINO's Convert(f32 -> boolean) makes it False
            return ops.not_equal(x, self.f32(0.0)).output(0)
        # integers: Convert, never a comparison (see int_equal)
        return ops.convert(x, _INTERNAL[kind]).output(0)

    def wrap(self, x: Out, dtype: DType) -> Out:
        """An i32 value brought into a small integer ``dtype``'s range the way
        NumPy's fixed-width arithmetic wraps it: its low bits (uint8 200 + 100 is
        44, int8 127 + 1 is -128).  Built from Add/BitwiseAnd/Subtract, which the
        plugin computes exactly on i32 (two's complement, wrapping)."""
        bits = dtype.itemsize * 8
        mask = self.i32((1 << bits) - 1)
        if dtype.is_unsigned:
            return ops.bitwise_and(x, mask).output(0)
        half = self.i32(1 << (bits - 1))
        return ops.subtract(ops.bitwise_and(ops.add(x, half), mask), half).output(0)

    # -- exact integer comparisons ---------------------------------------------------
    # The CPU plugin evaluates Equal/Less/Greater/..., Clamp, Relu and ReduceMax/Min
    # on i32 operands in float32 (16777217 == 16777216 is True there), and a fused
    # kernel holding such an op converts all its integer operands to float32 too.
    # Integer comparisons are therefore built from integer-only ops (xor, and,
    # subtract, arithmetic shift, Convert), which the plugin computes exactly.
    def int_equal(self, a: Out, b: Out) -> Out:
        return ops.logical_not(ops.convert(ops.bitwise_xor(a, b), ov.Type.boolean)).output(0)

    def int_less(self, a: Out, b: Out) -> Out:
        """a < b for i32, including when a - b overflows: the sign of
        (a - b) ^ ((a ^ b) & ((a - b) ^ a))."""
        d = ops.subtract(a, b)
        overflow_fix = ops.bitwise_and(ops.bitwise_xor(a, b), ops.bitwise_xor(d, a))
        sign = ops.bitwise_right_shift(ops.bitwise_xor(d, overflow_fix), self.i32(31))
        return ops.convert(sign, ov.Type.boolean).output(0)

    @staticmethod
    def exact_in_float(x: Out) -> bool:
        """Is ``x`` an integer constant whose every value v has |v| < 2**24?  The
        plugin's float32 Equal against such a constant is exact: an int32 that
        rounds to v is v (only beyond 2**24 do neighbours round together)."""
        node = x.get_node()
        if node.get_type_name() != "Constant" or not node.get_element_type().is_integral():
            return False
        data = node.get_data()
        return bool(data.size) and int(np.abs(data.astype(np.int64)).max()) < 1 << 24

    def int_below(self, a: Out, k: int) -> Out:
        """a < k for i32 ``a`` and a constant ``k``.  With |k| <= 2**24 the
        plugin's own Less is exact although it compares in float32: k and k - 1
        are exact floats and rounding is monotonic, so a >= k rounds to >= k and
        a <= k - 1 to <= k - 1 (a JIT kernel, where ``int_less``'s shift runs as
        a reference kernel)."""
        if abs(k) <= 1 << 24 and abs(k - 1) <= 1 << 24:
            return ops.less(a, self.i32(k)).output(0)
        return self.int_less(a, self.i32(k))

    # -- run-time exactness checks -------------------------------------------------
    def flag(self, bad: Out) -> None:
        """Record a boolean tensor that is True where the lowering would be wrong."""
        rank = bad.get_partial_shape().rank.get_length()
        if rank:
            bad = ops.reduce_logical_or(bad, self.ints(range(rank)), False).output(0)
        self.flags.append(bad)


def _within(src: DType, dst: DType) -> bool:
    """Does every value of integer dtype ``src`` fit in integer dtype ``dst``?"""
    a, b = np.iinfo(src.np), np.iinfo(dst.np)
    return b.min <= a.min and a.max <= b.max


def out(node) -> Out:
    """The single output of an opset call."""
    return node.output(0)
