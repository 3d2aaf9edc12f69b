"""The cpu codegen's lowering table: ops whose result can be written into a
preallocated array (``out=``) with exactly the reference kernel's result.

Exactness rests on one NumPy fact: a ufunc picks its inner loop from its
*inputs* only; ``out`` is written with that loop's result (``np.add(int8,
int8, out=int16_array)`` still adds in int8).  The codegen only passes an
``out`` of the node's inferred dtype and shape, which is the dtype and shape
the reference produces, so ``f(a, b, out=o)`` performs the same operations
in the same order as the reference's ``f(a, b)``.  Reductions (``np.sum`` is
``np.add.reduce(x, axes, None, None, keepdims)`` for arrays) and
``np.matmul`` follow the same rule; ``astype`` and ``np.copyto(...,
'unsafe')`` use the same cast loops.

Every entry is tied to the reference kernel registered when this table was
built: if an op is re-registered with another kernel, its lowering is
dropped and the codegen calls the new reference kernel instead, so the table
can never disagree with the definition.  Ops not listed (sigmoid, gelu,
erf, mean, argmax, shape ops, nn ops, ...) run their reference kernel; so does
a ``where`` whose two branches and result are not all of one dtype.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...ir.graph import Node
from ...ops.elementwise import (BINARY_UFUNCS, EXTRA_BINARY_UFUNCS, EXTRA_UNARY_UFUNCS,
                                UNARY_UFUNCS)
from ...ops.registry import lookup

__all__ = ["Namespace", "Emitter", "REREADS_ARGUMENTS", "out_lowering", "elementwise_out",
           "slice_index"]


class Namespace:
    """The globals of one generated module: each object bound once, under a
    readable name (``np_add``, ``c3``, ``zero_float32``)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self._names: dict[Any, str] = {}

    def bind(self, obj: Any, hint: str, key: Any = None) -> str:
        """The global name of ``obj`` (deduplicated by ``key``, default identity)."""
        key = ("id", id(obj)) if key is None else ("key", key)
        name = self._names.get(key)
        if name is not None:
            return name
        name, i = hint, 1
        while name in self.values:
            name, i = f"{hint}_{i}", i + 1
        self.values[name] = obj
        self._names[key] = name
        return name


# (node, argument expressions, out expression, namespace) -> lines of code.
# Ufuncs take ``out`` by position (``np.add(a, b, o)``): the same call as
# ``out=o``, ~0.2 us cheaper on small arrays (no keyword parsing; measured
# 0.56 against 0.75 us for a 64-element multiply); ``np.maximum`` and
# ``np.minimum`` keep ``out=`` (NumPy 2.4 deprecates their positional out).
# An emitter must stay exact when ``out`` is one of its arguments of the same
# dtype and shape (the codegen writes fused intermediates in place): it may
# read its arguments only in its first call, as rsqrt below does.  An emitter
# that recognises that case only by the expressions being equal (``where``:
# it reads an argument again after writing ``out``) is marked
# ``REREADS_ARGUMENTS``: the codegen never lets it write into an array that is
# one of its arguments under another name (a donated input, ``codegen.donor``).
Emitter = Callable[[Node, Sequence[str], str, Namespace], list[str]]
REREADS_ARGUMENTS: set[Emitter] = set()


def _ufunc_name(ns: Namespace, uf: np.ufunc) -> str:
    return ns.bind(uf, "np_" + uf.__name__)


# NumPy 2.4 deprecates a third positional argument of these two (DeprecationWarning)
_OUT_BY_KEYWORD = frozenset({np.maximum, np.minimum})


def _out(uf: np.ufunc, out: str) -> str:
    """``out`` as the ufunc's last argument: by position where NumPy allows it."""
    return f"out={out}" if uf in _OUT_BY_KEYWORD else out


def _ufunc_emitter(uf: np.ufunc) -> Emitter:
    def emit(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
        return [f"{_ufunc_name(ns, uf)}({', '.join(args)}, {_out(uf, out)})"]
    return emit


def _zero_of(ns: Namespace, dtype: np.dtype) -> str:
    zero = np.zeros((), dtype)
    zero.setflags(write=False)
    return ns.bind(zero, f"zero_{dtype.name}", key=("zero", dtype.str))


def _relu(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    # the reference: np.maximum(x, np.zeros((), x.dtype)) -- a 0-d array, not a
    # Python 0, so promotion is the same as the reference's
    zero = _zero_of(ns, node.inputs[0].type.dtype.np)
    return [f"{_ufunc_name(ns, np.maximum)}({args[0]}, {zero}, out={out})"]


def _rsqrt(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    # the reference: np.reciprocal(np.sqrt(x)); sqrt's dtype is rsqrt's dtype
    sqrt, recip = _ufunc_name(ns, np.sqrt), _ufunc_name(ns, np.reciprocal)
    return [f"{sqrt}({args[0]}, {out})", f"{recip}({out}, {out})"]


def _clip(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    return [f"{ns.bind(np.clip, 'np_clip')}({', '.join(args)}, out={out})"]


def _cast(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    # x.astype(dtype) and copyto(..., 'unsafe') run the same cast loop
    return [f"{ns.bind(np.copyto, 'np_copyto')}({out}, {args[0]}, casting='unsafe')"]


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _where_applies(node: Node) -> bool:
    dt = node.outputs[0].type.dtype
    return (node.inputs[1].type.dtype is dt and node.inputs[2].type.dtype is dt
            and dt.itemsize in _BITS)


def _where(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    # The reference, np.where(c, a, b), copies each element's bits from a or b.
    # With a, b and out of one dtype (_where_applies; mixed dtypes cast and run
    # the kernel) the same bits come from integer arithmetic on their bit
    # patterns, branch-free and with no temporary (5x faster than np.where on
    # the relu gradient ``where(x > 0, g, 0)``):
    #     out = b ^ ((a ^ b) * c)        (c is 0 or 1: (a ^ b) or 0, xor b: a or b)
    # read through same-size unsigned views.  It reads b after writing out, so
    # out == b takes a masked copy instead, and a bool result over its own
    # condition calls np.where.
    c, a, b = args
    copyto = ns.bind(np.copyto, "np_copyto")
    if out == c:
        return [f"{copyto}({out}, {ns.bind(np.where, 'np_where')}({c}, {a}, {b}))"]
    if out == a == b:
        return []
    if out == b:
        return [f"{copyto}({out}, {a}, where={c})"]
    bits = _BITS[node.outputs[0].type.dtype.itemsize]
    u = ns.bind(bits, f"bits_{np.dtype(bits).name}", key=("bits", np.dtype(bits).str))
    xor, mul = _ufunc_name(ns, np.bitwise_xor), _ufunc_name(ns, np.multiply)
    ob, bb = f"{out}.view({u})", f"{b}.view({u})"
    return [f"{xor}({a}.view({u}), {bb}, {ob})",
            f"{mul}({ob}, {c}, {ob})",
            f"{xor}({ob}, {bb}, {ob})"]


REREADS_ARGUMENTS.add(_where)


def _matmul(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    return [f"{_ufunc_name(ns, np.matmul)}({args[0]}, {args[1]}, {out})"]


def _reduction(uf: np.ufunc) -> Emitter:
    """``uf.reduce`` into ``out``, a C-ordered array.  NumPy's own result follows
    its operand's memory order, and the order of the result decides the order
    in which the iterator adds (``np.add.reduce(x, 2)`` of a view of a
    Fortran-ordered array is a pairwise sum per element into an F-ordered
    result, a running sum across elements into a C-ordered ``out``): an operand
    that is not C-contiguous is reduced into NumPy's own result, then copied."""
    def emit(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
        reduce = ns.bind(uf.reduce, f"np_{uf.__name__}_reduce")
        axes, keepdims = node.attrs["axes"], node.attrs["keepdims"]
        x = args[0]
        if len(node.outputs[0].type.shape) < 2:   # a vector or a scalar has one order
            return [f"{reduce}({x}, {axes!r}, None, {out}, {keepdims!r})"]
        copyto = ns.bind(np.copyto, "np_copyto")
        return [f"{reduce}({x}, {axes!r}, None, {out}, {keepdims!r}) if {x}.flags.c_contiguous "
                f"else {copyto}({out}, {reduce}({x}, {axes!r}, None, None, {keepdims!r}))"]
    return emit


def slice_index(node: Node, ns: Namespace) -> str:
    """The global name of a ``slice`` node's index, ``x[index]`` (a stop of -1: to the end)."""
    a = node.attrs
    index = tuple(slice(s, e if e >= 0 else None, k)
                  for s, e, k in zip(a["starts"], a["stops"], a["steps"]))
    return ns.bind(index, "index", key=("index", repr(index)))


def _slice(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    # the reference copies x[index] into a new C-ordered array: the same values
    # copied into the out array, without the kernel call
    return [f"{ns.bind(np.copyto, 'np_copyto')}({out}, {args[0]}[{slice_index(node, ns)}])"]


def _reshaped(node: Node, args: Sequence[str], out: str, ns: Namespace) -> list[str]:
    # squeeze, expand_dims and reshape keep the elements in C order: the
    # reference's C-ordered copy is a copy of x reshaped to the output's shape
    shape = node.outputs[0].type.shape
    return [f"{ns.bind(np.copyto, 'np_copyto')}({out}, {args[0]}.reshape({shape!r}))"]


def _build_table() -> dict[str, tuple[Callable, Emitter]]:
    """op -> (the reference kernel this lowering mirrors, emitter)."""
    emitters: dict[str, Emitter] = {}
    for name, uf in {**UNARY_UFUNCS, **EXTRA_UNARY_UFUNCS, **BINARY_UFUNCS,
                     **EXTRA_BINARY_UFUNCS}.items():
        emitters[name] = _ufunc_emitter(uf)
    emitters.update(relu=_relu, rsqrt=_rsqrt, clip=_clip, cast=_cast, matmul=_matmul,
                    where=_where, slice=_slice, squeeze=_reshaped, expand_dims=_reshaped,
                    reshape=_reshaped)
    # np.sum/np.max/np.min/np.prod on an ndarray are exactly these reduces;
    # mean divides afterwards and argmax/argmin convert dtypes: reference kernels
    for name, uf in (("sum", np.add), ("max", np.maximum), ("min", np.minimum),
                     ("prod", np.multiply)):
        emitters[name] = _reduction(uf)
    table = {}
    for name, emit in emitters.items():
        schema = lookup(name)
        if schema is not None:
            table[name] = (schema.reference, emit)
    return table


_TABLE: dict[str, tuple[Callable, Emitter]] | None = None


def elementwise_out(node: Node) -> bool:
    """Is ``node`` elementwise with an ``out=`` lowering: a ufunc call that writes
    position by position into whatever array it is given?"""
    schema = lookup(node.op)
    return schema is not None and "elementwise" in schema.traits and out_lowering(node) is not None


def out_lowering(node: Node) -> Emitter | None:
    """The emitter that writes ``node``'s single output into an ``out`` array
    exactly as its reference kernel computes it, or None (call the kernel)."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _build_table()
    entry = _TABLE.get(node.op)
    if entry is None or len(node.outputs) != 1 or node.body is not None:
        return None
    reference, emit = entry
    if node.op == "where" and not _where_applies(node):
        return None
    schema = lookup(node.op)
    if schema is None or schema.reference is not reference:
        return None  # re-registered with another kernel: that kernel is the definition now
    return emit
