"""NumPy's memory layouts, and the ``relayout`` op that reproduces one.

A graph's values are value-semantic: two arrays with equal elements are the same
value.  NumPy's *bits* are not always: a reduction or a BLAS call reads its operand
in memory order, and NumPy's operands are often not C-ordered -- ``X.T`` is a view,
``lr * X.T`` is laid out in the "K" order of its operand (Fortran order here),
``X[:, 1:5]`` is a view with gaps.  ``X.T @ err`` then runs gemv with the transpose
flag, ``(X.T * 2).sum(axis=1)`` adds in another order than on a C-ordered copy, and
the last bits differ.

``numpy_layouts`` follows, through a graph, the strides NumPy gives every value when
the user's code runs op by op: it replays each layout-moving op on a *stand-in*, an
array of the value's dtype, shape and NumPy's strides over a single element of
memory (``np.lib.stride_tricks.as_strided``), so NumPy itself computes the layout
and no data is read:

* ``transpose``, ``slice``, ``flip``, ``squeeze``, ``expand_dims``, ``broadcast_to``
  are views in NumPy: the stand-in's view; ``reshape`` is a view when NumPy can make
  one (``reshape(copy=False)``), else a C-ordered copy;
* an elementwise op (trait ``elementwise``) allocates its result the way a ufunc
  does, in "K" order over its operands: ``np.nditer`` over the operands' stand-ins
  with an allocated output (the iterator every ufunc call runs on) gives its strides;
* every other op returns a fresh array: C-ordered when its operands are (or it is a
  scalar or a vector); else laid out as its reference kernel -- NumPy's function
  for the ops NumPy has -- lays it out, run once on zeros of the operands' strides
  (NumPy's reductions, cumulative sums, sorts and concatenations keep their
  operands' order; a matrix product is C-ordered);
* a graph input or constant has the strides of its array;
* ``relayout`` is not a NumPy op: it keeps its input's layout, so the analysis of a
  graph that already holds relayouts gives the same answer;
* ``copy`` is NumPy's copy of an array (``ndarray.copy``, ``np.copy``, ``np.array``,
  ``astype`` to its own dtype, ``flatten``): the same elements in a new array laid
  out in its ``order`` (``np.empty_like(x, order=order)``: "C", "F", "A" -- Fortran
  order when ``x`` is Fortran-contiguous and not C-contiguous, else C -- or "K",
  the order of ``x``'s strides without gaps or reversals).  Inside a graph a copy
  is the same value; its layout is what downstream readers see (``X.T.copy() @ W``
  runs gemm on a C-ordered array, ``X @ X.copy().T`` reads two arrays: gemm, not
  syrk).  ``layout_assignment`` turns it into a ``relayout`` into those strides;
* ``dot_operand`` marks an operand of ``np.dot`` (``ndarray.dot``, ``np.tensordot``),
  which NumPy hands to BLAS as it is when it is C- or Fortran-contiguous or a
  vector with positive strides, and copies to C order otherwise (``dot_copies``) --
  where ``a @ b`` runs a strided array (a reversed or transposed-and-sliced one)
  through its own loop instead: the two functions round differently on such
  operands.  ``layout_assignment`` removes it.

``layout_sensitive(node)`` says which nodes read their operands' memory order in a
way that can change bits: every op except elementwise ones (position by position)
and data movement (copies).  Before such a node, an operand whose strides differ
from NumPy's is copied with ``relayout`` (``with_strides``) into NumPy's strides, so
the node runs the very kernel call NumPy's does.  Both the reference interpreter
(at run time, on the arrays it has) and the cpu backend (at compile time, as
``relayout`` nodes that ``layout_assignment`` inserts) do this.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from ..errors import FrameValueError
from ..ir.graph import Graph, Node
from ..ir.types import TensorType
from .registry import lookup, register
from .schema import AttrSpec, OpSchema

__all__ = ["numpy_layouts", "node_layouts", "dot_copies", "COPY_ORDERS", "copy_layout", "ALWAYS_VIEWS", "pinned_inputs", "layout_sensitive", "with_strides", "element_strides",
           "standard_element_strides", "same_layout", "stand_in"]

# ops whose result is a view in NumPy (replayed on the stand-in), or a copy of the
# elements in C order when reshape cannot view
_VIEW_OPS = frozenset({"transpose", "slice", "flip", "squeeze", "expand_dims", "broadcast_to",
                       "reshape"})
# the ones whose result is always a view (reshape may copy)
ALWAYS_VIEWS = _VIEW_OPS - {"reshape"}
# ops whose NumPy result is C-ordered whatever their operands' layout (np.matmul
# allocates its output so, batched or not)
_C_ORDERED = frozenset({"matmul", "gram"})
# data movement: the result's elements are the operand's, whatever its layout
_MOVES = _VIEW_OPS | {"relayout", "dot_operand", "constant", "concat", "stack", "split", "pad", "take", "tile",
                      "repeat", "copy"}


def element_strides(a: np.ndarray) -> tuple[int, ...]:
    """``a.strides`` in elements."""
    item = a.dtype.itemsize
    return tuple(s // item for s in a.strides)


def standard_element_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The element strides of a C-ordered array of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def _normal(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """Strides with those of length-1 axes zeroed (no kernel reads them); None for an
    empty array (no layout to speak of)."""
    if any(d == 0 for d in shape):
        return None
    return tuple(0 if d == 1 else s for d, s in zip(shape, strides))


def same_layout(shape: Sequence[int], a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether element strides ``a`` and ``b`` lay out an array of ``shape`` alike."""
    return _normal(shape, a) == _normal(shape, b)


def stand_in(dtype: np.dtype, shape: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """An array of ``dtype`` and ``shape`` with element ``strides`` over one element of
    memory: its layout is real, its data must never be read (views and iterator set-up
    read none)."""
    one = np.zeros(1, dtype)
    return np.lib.stride_tricks.as_strided(one, tuple(shape),
                                           tuple(s * one.itemsize for s in strides),
                                           writeable=False)


@functools.lru_cache(maxsize=4096)
def _c_stand_in(t: TensorType) -> np.ndarray:
    """The stand-in of a C-ordered value of type ``t`` (read-only: shared)."""
    return stand_in(t.dtype.np, t.shape, standard_element_strides(t.shape))


def _elementwise_result(operands: list[np.ndarray], t: TensorType) -> np.ndarray:
    """The stand-in of a ufunc's result: the output ``np.nditer`` allocates in K order."""
    if t.rank == 0 or all(_is_c(o) for o in operands):
        return _c_stand_in(t)   # C order wins every tie of the iterator's axis ordering
    ops = [np.broadcast_to(o, t.shape) if o.shape != t.shape else o for o in operands]
    try:
        it = np.nditer(ops + [None], flags=["zerosize_ok", "refs_ok"],
                       op_flags=[["readonly"]] * len(ops) + [["writeonly", "allocate"]],
                       op_dtypes=[o.dtype for o in ops] + [t.dtype.np], order="K")
    except (ValueError, TypeError):
        return _c_stand_in(t)
    out = it.operands[-1]
    return stand_in(t.dtype.np, t.shape, element_strides(out))


def _view(node: Node, x: np.ndarray, t: TensorType) -> np.ndarray:
    a = node.attrs
    op = node.op
    if op == "transpose":
        return x.transpose(a["perm"])
    if op == "slice":
        return x[tuple(slice(s, e if e >= 0 else None, k)
                       for s, e, k in zip(a["starts"], a["stops"], a["steps"]))]
    if op == "flip":
        return np.flip(x, a["axes"])
    if op == "broadcast_to":
        return np.broadcast_to(x, t.shape)
    try:  # reshape, squeeze, expand_dims: a view when NumPy can make one
        return x.reshape(t.shape, copy=False)
    except (ValueError, AttributeError):
        return _c_stand_in(t)


def node_layouts(node: Node, ins: list[np.ndarray]) -> list[np.ndarray]:
    """The stand-ins of ``node``'s outputs, from its operands' stand-ins ``ins``."""
    outs = [v.type for v in node.outputs]
    if node.op == "constant" and node.const is not None:
        c = np.asarray(node.const)
        if c.shape == outs[0].shape and c.dtype.itemsize:
            return [stand_in(outs[0].dtype.np, c.shape, element_strides(c))]
        return [_c_stand_in(outs[0])]
    if node.op == "relayout":
        return [ins[0]]
    if node.op == "copy":
        return [copy_layout(ins[0], node.attrs["order"])]
    if node.op == "dot_operand":
        return [_c_stand_in(outs[0]) if dot_copies(ins[0]) else ins[0]]
    if node.body is not None:
        inner = numpy_layouts(node.body, ins)
        return [inner[id(v)] for v in node.body.outputs]
    if len(outs) == 1 and len(ins) == 1 and node.op in _VIEW_OPS:
        try:
            r = _view(node, ins[0], outs[0])
        except (ValueError, TypeError, IndexError):
            r = _c_stand_in(outs[0])
        if r.shape == outs[0].shape:
            return [r]
        return [_c_stand_in(outs[0])]
    schema = lookup(node.op)
    if (schema is not None and "elementwise" in schema.traits and len(outs) == 1
            and ins and all(i.ndim <= outs[0].rank for i in ins)):
        return [_elementwise_result(ins, outs[0])]
    if node.op in _C_ORDERED or all(t.rank <= 1 for t in outs) or all(_is_c(i) for i in ins):
        return [_c_stand_in(t) for t in outs]
    return _kernel_layouts(node, ins)


def dot_copies(x: np.ndarray) -> bool:
    """Whether NumPy's dot copies its operand ``x`` (to C order) before calling BLAS
    (``cblas_matrixproduct``): when a stride is negative or zero along an axis longer
    than 1 (``_bad_strides``), and when ``x`` is a matrix (two axes longer than 1)
    that is neither C- nor Fortran-contiguous.  A vector with positive strides (a
    column ``X[:, j]``, ``x[::2]``) goes to BLAS as it is, with its stride."""
    if any(s < 0 or (s == 0 and d > 1) for s, d in zip(x.strides, x.shape)):
        return True
    matrix = x.ndim == 2 and min(x.shape) > 1
    return matrix and not (x.flags.c_contiguous or x.flags.f_contiguous)


def _is_c(a: np.ndarray) -> bool:
    return a.flags.c_contiguous and not any(s < 0 for s in a.strides)


def _kernel_layouts(node: Node, ins: list[np.ndarray]) -> list[np.ndarray]:
    """The stand-ins of what ``node``'s reference kernel -- NumPy's function, for the
    ops NumPy has -- returns from operands laid out like ``ins`` (zeros): reductions,
    cumulative sums, sorts and concatenations keep their operands' order."""
    outs = [v.type for v in node.outputs]
    schema = lookup(node.op)
    if schema is None or schema.reference is None:
        return [_c_stand_in(t) for t in outs]
    args = [with_strides(np.zeros(i.shape, i.dtype), element_strides(i)) for i in ins]
    try:
        with np.errstate(all="ignore"):
            results = schema.reference(args, node.attrs)
    except Exception:  # noqa: BLE001 -- the op's own errors (zeros are no valid input for some)
        return [_c_stand_in(t) for t in outs]
    layouts = []
    for r, t in zip(results, outs):
        r = np.asarray(r)
        ok = r.shape == t.shape and r.dtype.itemsize and not any(
            s % r.dtype.itemsize for s in r.strides)
        layouts.append(stand_in(t.dtype.np, t.shape, element_strides(r)) if ok else _c_stand_in(t))
    return layouts


def numpy_layouts(graph: Graph, inputs: Sequence[np.ndarray | None] | None = None
                  ) -> dict[int, np.ndarray]:
    """``id(value) -> stand-in`` with NumPy's strides for every value of ``graph``
    (a fused node's outputs: its body's, followed on its operands).  ``inputs``: arrays
    (or stand-ins) with the graph inputs' layouts; None or a None entry: C order."""
    env: dict[int, np.ndarray] = {}
    for i, v in enumerate(graph.inputs):
        a = None if inputs is None else inputs[i]
        env[id(v)] = (_c_stand_in(v.type) if a is None or a.shape != v.type.shape
                      else stand_in(v.type.dtype.np, a.shape, element_strides(a)))
    for node in graph.nodes:
        for v, s in zip(node.outputs, node_layouts(node, [env[id(v)] for v in node.inputs])):
            env[id(v)] = s
    return env


def layout_sensitive(node: Node) -> bool:
    """Whether ``node`` can compute other bits from operands with other strides: any
    op but elementwise ones and data movement (see the module docstring)."""
    if node.op in _MOVES or not node.inputs:
        return False
    if node.body is not None:
        return True
    schema = lookup(node.op)
    return schema is None or "elementwise" not in schema.traits


def _passes_layout_on(node: Node) -> bool:
    """Whether the layout of ``node``'s result can follow its operands' (see
    ``node_layouts``): views, elementwise ops and fused bodies; any other op whose
    results are not C-ordered for every operand layout (a matrix product, fresh
    scalars and vectors are): a reduction, a sort, a concatenation or stack keeps
    its operands' order.  A copy too: the cpu executable reads its input itself
    where that has the copy's strides (``passes/layout.py::_lower_copies``), so
    the input's layout is the one assumed."""
    if node.op in _VIEW_OPS or node.op in ("relayout", "dot_operand", "copy") or node.body is not None:
        return True
    schema = lookup(node.op)
    if schema is not None and "elementwise" in schema.traits:
        return True
    if node.op in _C_ORDERED or node.op == "constant":
        return False
    return any(v.type.rank > 1 for v in node.outputs)


def pinned_inputs(graph: Graph) -> list[int]:
    """The positions of ``graph``'s inputs whose layout can reach a layout-sensitive
    node through another op (a view, an elementwise op, a relayout, a fused body):
    with other strides than C order, NumPy's layout there differs from the one the
    graph's relayouts were made for.  A sensitive node reading an input itself
    reads it as it is, as NumPy does."""
    start = [frozenset((i,)) if v.type.rank else frozenset() for i, v in enumerate(graph.inputs)]
    return sorted(_pinned(graph, start, [True] * len(start))[0])


def _pinned(graph: Graph, reach_in: list[frozenset[int]], direct_in: list[bool]
            ) -> tuple[set[int], list[frozenset[int]]]:
    """(pinned inputs, reach of each output): ``reach_in[i]`` are the outer inputs whose
    layout the graph's input ``i`` carries, ``direct_in[i]`` whether it is one as is."""
    reach = {id(v): r for v, r in zip(graph.inputs, reach_in)}
    direct = {id(v) for v, d in zip(graph.inputs, direct_in) if d}
    pinned: set[int] = set()
    empty: frozenset[int] = frozenset()
    for node in graph.nodes:
        ins = [reach.get(id(v), empty) for v in node.inputs]
        if node.body is not None:
            inner, outs = _pinned(node.body, ins, [id(v) in direct for v in node.inputs])
            pinned |= inner
            for v, r in zip(node.outputs, outs):
                reach[id(v)] = r
            continue
        if layout_sensitive(node):
            for v, r in zip(node.inputs, ins):
                if id(v) not in direct:
                    pinned |= r
        if node.op == "dot_operand":   # NumPy's dot copies by the strides, an input's too
            pinned |= ins[0]
        if _passes_layout_on(node):
            found = empty.union(*ins)
            for v in node.outputs:
                reach[id(v)] = found
    return pinned, [reach.get(id(v), empty) for v in graph.outputs]


def with_strides(x: np.ndarray, strides: Sequence[int]) -> np.ndarray:
    """A fresh copy of ``x`` laid out with element ``strides`` (NumPy's, from
    ``numpy_layouts``: they never overlap, except a zero stride, along which the
    elements are equal)."""
    shape = x.shape
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    if x.size == 0:
        return np.empty(shape, x.dtype)
    # dense strides (a C, Fortran or other axis order, NumPy's copies): an array of
    # its own (``base`` None, as NumPy's copy is), allocated by np.empty_like
    out = np.empty_like(stand_in(x.dtype, shape, strides), order="K")
    if element_strides(out) == tuple(strides):
        np.copyto(out, x)
        return out
    buf = np.empty(hi - lo + 1, x.dtype)
    out = np.lib.stride_tricks.as_strided(buf[-lo:], shape,
                                          tuple(s * buf.itemsize for s in strides))
    np.copyto(out, x)
    return out


def _relayout_infer(types, attrs):
    (t,) = types
    if len(attrs["strides"]) != t.rank:
        raise FrameValueError(f"relayout: {len(attrs['strides'])} strides for {t}")
    return [t]


def _relayout_kernel(ins, attrs):
    return (with_strides(np.asarray(ins[0]), attrs["strides"]),)


register(OpSchema("relayout", 1, _relayout_infer, _relayout_kernel,
                  attrs={"strides": AttrSpec("ints")}, traits=("shape_op",),
                  doc="A copy of x laid out with the given element strides (NumPy's layout "
                      "of the value, ops/layout.py); the same elements."))


# the orders of NumPy's copies (ndarray.copy, np.copy, np.array, astype)
COPY_ORDERS = ("C", "F", "A", "K")


def copy_layout(x: np.ndarray, order: str) -> np.ndarray:
    """The stand-in of NumPy's copy of an array laid out like ``x`` in ``order``:
    the strides ``np.empty_like`` gives (the allocation ``ndarray.copy`` and
    ``np.copy`` make; no data is read or written)."""
    if x.ndim <= 1 or x.size <= 1 or (order == "C" and _is_c(x)):
        return stand_in(x.dtype, x.shape, standard_element_strides(x.shape))
    return stand_in(x.dtype, x.shape, element_strides(np.empty_like(x, order=order)))


def _copy_infer(types, attrs):
    if attrs["order"] not in COPY_ORDERS:
        raise FrameValueError(f"copy: order must be one of {COPY_ORDERS}, not {attrs['order']!r}")
    return [types[0]]


def _copy_kernel(ins, attrs):
    return (np.array(np.asarray(ins[0]), order=attrs["order"], copy=True),)


register(OpSchema("copy", 1, _copy_infer, _copy_kernel,
                  attrs={"order": AttrSpec("str", "K")}, traits=("shape_op",),
                  doc="numpy.copy(x, order): the same elements in a new array laid out in "
                      "order C, F, A or K (ops/layout.py; layout_assignment makes it a "
                      "relayout into NumPy's strides of the copy)."))


def _dot_operand_kernel(ins, attrs):
    x = np.asarray(ins[0])
    return (np.array(x, order="C" if dot_copies(x) else "K", copy=True),)


register(OpSchema("dot_operand", 1, lambda types, attrs: [types[0]], _dot_operand_kernel,
                  traits=("shape_op",),
                  doc="An operand of numpy.dot (and tensordot): NumPy hands BLAS a C- or "
                      "Fortran-contiguous array or a vector with positive strides as it is and "
                      "a C-ordered copy of any other (where the @ operator runs its own loop); "
                      "the same elements. "
                      "layout_assignment removes it (ops/layout.py)."))
