"""Numerical honesty: which nodes the OpenVINO CPU plugin computes *exactly* as
the reference kernels do.  ``unsupported_reason(node)`` is None for those and a
sentence naming the op and the dtype for every other node.

What the CPU plugin does (measured, FACTS.md and tests/backends/openvino):

- float64 is computed in float32, so nothing touching float64 (or
  complex128) is claimed; complex64 has no element type of its own and is
  lowered as float pairs for the few ops that know it (rfft, irfft, conj, real).
- int64 is computed in int32, even when it only passes through a reshape
  (2**40 + 20 comes back as 20).  Inside a lowered model int64 values are
  therefore int32 on purpose, and an int64 value is claimed only while it
  provably fits: graph inputs are checked at run time (``lower.py``),
  constants by value, and results of ops whose rule says int64 is safe (data
  movement, selection, comparison, argmax).  Arithmetic on int64 is refused.
- float16 is computed in float32 and rounded only when a value leaves the
  model; NumPy rounds every float16 intermediate (300*300/300 is inf in
  NumPy, 300 in OpenVINO).  So an op that computes with a float16 input is
  claimed only when that input reaches it already rounded: a graph input, a
  constant, or data movement of those.  Everything else an op may need is its
  rule's own ``check``.
- int8, int16, uint8 and uint16 are i32 inside a model (every value within
  its dtype's range), claimed for the ops in ``SMALL_INT_OPS``: data movement,
  selection, comparison, bitwise and logical ops, max/min and argmax (exact in
  the plugin's float32 below 2**24), casts from integers and bools, and
  add/sub/mul/neg/abs/invert, whose i32 results are wrapped back into the
  dtype as NumPy's fixed-width arithmetic wraps them.  Everything else on them
  (division, shifts, sums, matmul, math, a cast from a float, whose
  out-of-range conversion is C's undefined behaviour) runs on the reference
  kernels.  uint32 and uint64 values do not fit in i32: never claimed.
- tensors of rank above 12 (``MAX_RANK``, oneDNN's ``DNNL_MAX_NDIMS``) are
  refused: measured with OpenVINO 2026.4, Concat at rank 13 fails in
  compile_model ("could not create a primitive descriptor"), ReduceMax and
  Softmax at rank 13 kill the process (SIGFPE), Select of a broadcast scalar
  at rank 19 smashes the stack, and every model above rank 32 fails with an
  empty message.  Such nodes run on the cpu path (fallback chain).
- collectives (ops with the trait ``collective``: all_reduce, broadcast,
  reduce) talk to the other processes of a job through MPI, which a compiled
  OpenVINO model cannot do: they are refused, and the fallback chain runs
  them on the cpu between the partitions OpenVINO compiles.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from ...dtypes import int64
from ...ir.graph import Node, Value
from ...ops.registry import lookup
from .table import I32_MAX, I32_MIN, RULES, SMALL_INTS

__all__ = ["unsupported_reason", "fits_int32", "Analysis", "MAX_RANK", "SMALL_INT_OPS"]

# the ops lowered exactly for int8/int16/uint8/uint16 values (module docstring)
SMALL_INT_OPS = frozenset((
    "reshape", "expand_dims", "squeeze", "transpose", "relayout", "dot_operand", "copy", "broadcast_to", "concat", "stack", "split",
    "slice", "flip", "take", "scatter", "pad", "take_along_axis", "constant", "full", "arange",
    "where", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "maximum", "minimum", "clip", "relu", "sign", "floor", "ceil", "max", "min",
    "argmax", "argmin", "cast", "add", "sub", "mul", "neg", "abs",
))

# the highest tensor rank the CPU plugin handles (oneDNN's DNNL_MAX_NDIMS; see above)
MAX_RANK = 12


def fits_int32(values: np.ndarray) -> bool:
    arr = np.asarray(values)
    return arr.size == 0 or bool(arr.min() >= I32_MIN and arr.max() <= I32_MAX)


def _types(node: Node) -> str:
    return ", ".join(str(v.type) for v in node.inputs) or "no inputs"


class Analysis:
    """One question about a node (and, through producers, its ancestors).

    ``alias`` maps the input values of fused bodies to the outer values they
    stand for, so rounding and range facts flow into and out of fused nodes.
    """

    def __init__(self):
        self.alias: dict[int, Value] = {}
        self._reasons: dict[int, str | None] = {}

    # -- the verdict ---------------------------------------------------------------
    def reason(self, node: Node) -> str | None:
        key = id(node)
        if key not in self._reasons:
            self._reasons[key] = None  # cycle guard; graphs are acyclic (V2)
            self._reasons[key] = self._compute(node)
        return self._reasons[key]

    def _compute(self, node: Node) -> str | None:
        if node.body is not None:
            return self._fused(node)
        schema = lookup(node.op)
        if schema is not None and schema.has("collective"):
            return (f"op '{node.op}' on {_types(node)} is a collective across processes (MPI), "
                    f"which a compiled OpenVINO model cannot run; it runs on the cpu between "
                    f"compiled partitions")
        rule = RULES.get(node.op)
        if rule is None:
            return f"op '{node.op}' has no OpenVINO lowering"
        values = list(node.inputs) + list(node.outputs)
        rank = max((v.type.rank for v in values), default=0)
        if rank > MAX_RANK:
            return (f"op '{node.op}' on {_types(node)}: a rank-{rank} tensor; the OpenVINO CPU "
                    f"plugin handles ranks up to {MAX_RANK}")
        for v in values:
            dt = v.type.dtype
            if dt.name in ("float64", "complex128"):
                return (f"op '{node.op}' on {_types(node)}: the OpenVINO CPU plugin computes "
                        f"{dt.name} in {'complex64' if dt.is_complex else 'float32'}")
            if dt.is_complex and not rule.complex64:
                return (f"op '{node.op}' on {_types(node)}: {dt.name} is lowered only for the "
                        f"fft ops, conj and real")
        for v in values:
            dt = v.type.dtype
            if dt.name in ("uint32", "uint64"):
                return (f"op '{node.op}' on {_types(node)}: {dt.name} values do not fit in the "
                        f"int32 the OpenVINO CPU plugin computes integers in")
            if dt.name in SMALL_INTS and node.op not in SMALL_INT_OPS:
                return (f"op '{node.op}' on {_types(node)}: not lowered to OpenVINO for "
                        f"{dt.name} (NumPy's fixed-width result is not the plugin's int32 one)")
        if any(v.type.size == 0 for v in values):
            return f"op '{node.op}' on {_types(node)}: empty tensors are left to the reference kernels"
        uses_int64 = any(v.type.dtype is int64 for v in values)
        if uses_int64:
            if not rule.int64:
                return (f"op '{node.op}' on {_types(node)}: the OpenVINO CPU plugin computes "
                        f"int64 arithmetic in int32")
            for v in node.inputs:
                if v.type.dtype is int64 and not self.narrow(v):
                    return (f"op '{node.op}' on {_types(node)}: an int64 input may not fit in "
                            f"int32, and OpenVINO's CPU plugin keeps int64 in int32")
        # data movement keeps an unrounded float16 value as it is, and the consumer
        # is checked; any op that computes, or converts float16 to another dtype, is not
        if rule.computes or any(v.type.dtype.name != "float16" for v in node.outputs):
            for v in node.inputs:
                if v.type.dtype.name == "float16" and not self.rounded(v):
                    return (f"op '{node.op}' on {_types(node)}: its float16 input was computed "
                            f"by OpenVINO in float32 and is not rounded to float16 before this "
                            f"op, as NumPy rounds every float16 intermediate")
        if rule.check is not None:
            return rule.check(node)
        return None

    def _fused(self, node: Node) -> str | None:
        body = node.body
        for inner, outer in zip(body.inputs, node.inputs):
            self.alias[id(inner)] = outer
        for inner in body.nodes:
            why = self.reason(inner)
            if why is not None:
                return f"fused node: {why}"
        return None

    # -- value facts ---------------------------------------------------------------
    def _origin(self, v: Value) -> Value:
        while v.producer is None and id(v) in self.alias:
            v = self.alias[id(v)]
        return v

    def _through_fused(self, v: Value) -> Value | None:
        """The body value a fused node's output stands for (aliases registered)."""
        node = v.producer
        if node is None or node.body is None:
            return None
        self._fused(node)  # registers the body's input aliases (result memoised)
        return node.body.outputs[v.index]

    def narrow(self, v: Value) -> bool:
        """Does this int64 value provably fit in int32 (or get checked at run time)?"""
        v = self._origin(v)
        node = v.producer
        if node is None:
            return True  # a graph input: the executable checks its range on every run
        inner = self._through_fused(v)
        if inner is not None:
            return self.narrow(inner) and self.reason(node) is None
        if node.op == "constant":
            return node.const is not None and fits_int32(node.const)
        rule = RULES.get(node.op)
        return rule is not None and rule.int64 and self.reason(node) is None

    def rounded(self, v: Value) -> bool:
        """Is this float16 value rounded to float16 when it reaches its consumer?"""
        v = self._origin(v)
        node = v.producer
        if node is None or node.op == "constant":
            return True
        inner = self._through_fused(v)
        if inner is not None:
            return self.rounded(inner)
        rule = RULES.get(node.op)
        if rule is None or rule.computes:
            return False
        return all(self.rounded(i) for i in node.inputs if i.type.dtype.name == "float16")


def unsupported_reason(node: Node) -> str | None:
    """None when the OpenVINO CPU plugin computes ``node`` exactly as the reference
    kernel does, else why not (naming op and dtypes)."""
    return Analysis().reason(node)


def first_unsupported(nodes: Iterable[Node]) -> list[tuple[Node, str]]:
    """Every node of ``nodes`` that is not supported, with its reason (one analysis)."""
    analysis = Analysis()
    bad = []
    for node in nodes:
        why = analysis.reason(node)
        if why is not None:
            bad.append((node, why))
    return bad
