"""Dynamic ints as indices and slice bounds of a tensor or ndarray.

A dynamic Python int (``scalars.py``: its value guard failed once, so the
code cache made its sources dynamic) used as an integer index or a slice
bound would read its value (a guard per value: a loop ``for i in range(0, n,
bs): xb = X[i:i + bs]`` with a break in its body recompiled per iteration up
to the limit).  Here the graph takes it as a 0-d int64 input instead
(``scalars.scalar_input``) and indexes with ``take`` (a gather: indexing
moves values, so the results are bit for bit the static index's), and the
guards are on what decides the result's shape and the index's validity:

* ``x[i]`` (any axis, ``x[:, i]``, ``x[i, j]``): the outcome of
  ``-n <= i < n`` (``(-640 <= i < 640) is True``); the graph makes a
  negative ``i`` non-negative.  An ``i`` out of range is a miss, and the
  retranslated call reads the value: the native run raises NumPy's
  ``IndexError``.
* ``x[i:j]``, ``x[i:i + k]`` (a static step): the result's length,
  ``len(range(n)[i:j])`` (an expression the entry recomputes), so the shape
  is static; a dynamic start is clamped in the graph by NumPy's rules
  (negative bounds, bounds past the end), and the elements are ``take``\\ n at
  ``start + step * arange(length)``.  A static start with a dynamic stop is a
  static slice of the guarded length.  The last short batch of a loop is a
  new length: its own entry.
* writes ``x[i] = v``, ``x[i:i + k] = v``, ``x[i] += v``: frame's functional
  setitem at the positions the same indexing selects in ``arange(size)``
  (``frame._indexing.setitem_at``), written in place as for static indices.

The result of NumPy basic indexing is a view: it is marked as one, with a
recipe (``DynamicIndexVariable``) remaking it at run time from the call's
values, so a returned view shares memory as NumPy's does and ``x[i] += v``
writes through.  An index with anything else (an array, a bool, a dynamic
float, a dynamic step) reads the values, as before, and so does a use of the
value for anything else (a shape, a ``range()`` bound, a branch).
"""
from __future__ import annotations

import operator

import numpy as np

from frame import functions as F
from frame._indexing import setitem_at

from ..errors import Unsupported
from ..sources import ExprSource
from .base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable
from .scalars import ScalarVariable, _literal, _too_deep, scalar_input

__all__ = ["dynamic_index", "DynamicIndexVariable"]

_INT64 = np.dtype(np.int64)
_INT64_MIN, _INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


def slice_length(start, stop, step, n: int) -> int:
    """``len(range(n)[start:stop:step])``: the length of ``x[start:stop:step]``
    on an axis of size ``n`` (the guard of a dynamic slice: the entry
    recomputes it from the call's values)."""
    return len(range(*slice(start, stop, step).indices(n)))


def build_index(template: tuple, is_tuple: bool, *values):
    """The index ``template`` describes, with ``values`` (the call's dynamic
    ints) in its holes: entries ``("c", constant)``, ``("v", k)``, or
    ``("s", (part, part, part))`` with parts of the first two forms."""
    def part(p):
        return values[p[1]] if p[0] == "v" else p[1]
    entries = tuple(slice(*(part(p) for p in e[1])) if e[0] == "s" else part(e) for e in template)
    return entries if is_tuple else entries[0]


def take_dynamic(x, static_index, takes: tuple, *positions):
    """``x[index]`` in graph ops: the static part of the index (the dynamic
    entries replaced by ``:``), then one ``take`` per dynamic entry, from the
    last result axis to the first.  ``takes``: ``("int", axis, n, k)`` (the
    0-d ``positions[k]``, made non-negative: the axis goes) or
    ``("slice", axis, n, k, step, length)`` (``positions[k]`` the start,
    clamped by NumPy's rules; the axis keeps ``length`` elements)."""
    result = x[static_index] if static_index is not None else x
    for take in takes:
        kind, axis, n, k = take[:4]
        p = F.where(positions[k] < 0, positions[k] + n, positions[k])
        if kind == "slice":
            step, length = take[4:]
            lo, hi = (0, n) if step > 0 else (-1, n - 1)
            p = F.minimum(F.maximum(p, lo), hi)
            p = p + F.arange(length) * step if step != 1 else p + F.arange(length)
        result = F.take(result, p, axis=axis)
    return result


def setitem_dynamic(x, value, static_index, takes: tuple, *positions):
    """The functional ``x[index] = value`` for ``take_dynamic``'s index: the
    positions it selects in ``arange(size)``, written by ``setitem_at``."""
    flat = F.reshape(F.arange(x.size), x.shape)
    return setitem_at(x, take_dynamic(flat, static_index, takes, *positions), value)


class DynamicIndexVariable(Variable):
    """An index of tensors and ndarrays with dynamic ints among its entries
    (``dynamic_index`` makes it): ``index_into`` / ``setitem_value`` put it in the
    graph, ``reconstruct`` rebuilds the Python index from the call's values
    (a view's recipe: ``codegen._Rebuilder.tensor``)."""
    __slots__ = ("template", "is_tuple", "scalars", "static_index", "takes", "positions")

    def __init__(self, template, is_tuple, scalars, static_index, takes, positions):
        super().__init__(None)
        self.template = template
        self.is_tuple = is_tuple
        self.scalars = scalars            # the dynamic ScalarVariables, by hole number
        self.static_index = static_index  # None: nothing static to index
        self.takes = takes
        self.positions = positions        # those the graph takes as inputs (``takes``' k)

    def python_type(self) -> type:
        return tuple if self.is_tuple else slice if self.template[0][0] == "s" else int

    def _operands(self, tx) -> list[Variable]:
        inputs = [scalar_input(tx, s, _INT64) for s in self.positions]
        return [ConstantVariable(self.static_index), ConstantVariable(self.takes), *inputs]

    def index_into(self, tx, t: TensorVariable) -> Variable:
        """``t[index]`` (a view of an ndarray, marked with its recipe)."""
        result = tx.call_real(take_dynamic, [t, *self._operands(tx)], {},
                              numpy_semantics=t.kind != TENSOR)
        if t.kind == NDARRAY and isinstance(result, TensorVariable) and result.kind == NDARRAY:
            tr = tx.tr
            root = t.base if t.base is not None else t
            result.base = root
            tr.views.setdefault(id(root), []).append(result)
            result.recipe = (t, operator.getitem, (self,), {})
        return result

    def setitem_value(self, tx, t: TensorVariable, value: Variable) -> Variable:
        """The functional ``t[index] = value`` (the caller writes it into ``t``)."""
        return tx.call_real(setitem_dynamic, [t, value, *self._operands(tx)], {},
                            numpy_semantics=t.kind != TENSOR)

    def reconstruct(self, rb) -> str:
        values = "".join(f", {rb.expr(s)}" for s in self.scalars)
        return f"{rb.const(build_index)}({rb.const(self.template)}, {self.is_tuple!r}{values})"

    def __repr__(self) -> str:
        return f"DynamicIndex({self.template!r})"


def _dynamic_int(v: Variable) -> bool:
    return isinstance(v, ScalarVariable) and v.dynamic and type(v.concrete) is int \
        and not _too_deep(v)


def _slice_parts(e: Variable) -> list | None:
    """The (start, stop, step) Variables of a slice, or None."""
    parts = getattr(e, "parts", None)
    if parts is None or not isinstance(parts, list):
        return None
    try:
        if e.python_type() is not slice:
            return None
    except Unsupported:
        return None
    if len(parts) == 1:
        return [ConstantVariable(None), parts[0], ConstantVariable(None)]
    return list(parts) + [ConstantVariable(None)] * (3 - len(parts))


def _static(v: Variable):
    """A static entry's constant (a value guard on a static scalar), or raise
    LookupError when it is none capture indexes with here."""
    if isinstance(v, TensorVariable) or not v.is_constant():
        raise LookupError
    return v.as_constant()


def dynamic_index(tx, t: TensorVariable, index: Variable) -> DynamicIndexVariable | None:
    """``index`` as a ``DynamicIndexVariable`` when a dynamic int is among its
    entries (an int, or a slice's start or stop) and the rest is basic
    indexing with constants; None otherwise (the caller's path reads the
    values).  The guards on the shape and validity are added here."""
    if t.kind not in (TENSOR, NDARRAY):
        return None
    items = getattr(index, "items", None)
    try:
        is_tuple = isinstance(items, list) and index.python_type() is tuple
    except Unsupported:
        is_tuple = False
    entries = list(items) if is_tuple else [index]

    def has_dynamic(e):
        parts = _slice_parts(e)
        return _dynamic_int(e) or (parts is not None and any(_dynamic_int(p) for p in parts[:2]))

    if not any(has_dynamic(e) for e in entries):
        return None
    # classify: ("int", var) dynamic | ("slice", parts) with a dynamic bound | ("c", constant)
    classified = []
    try:
        for e in entries:
            parts = _slice_parts(e)
            if _dynamic_int(e):
                classified.append(("int", e))
            elif parts is not None and any(_dynamic_int(p) for p in parts[:2]):
                bounds = [p if _dynamic_int(p) else _static(p) for p in parts[:2]]
                step = _static(parts[2])
                if any(not isinstance(b, Variable) and b is not None
                       and (type(b) is not int) for b in bounds):
                    return None   # a float or NumPy bound next to it: the values are read
                if step is not None and (type(step) is not int or step == 0):
                    return None
                classified.append(("slice", (*bounds, 1 if step is None else step)))
            else:
                c = _static(e)
                if isinstance(c, (bool, np.bool_)) or not (
                        c is None or c is Ellipsis or isinstance(c, (int, np.integer, slice))):
                    return None
                classified.append(("c", c))
    except LookupError:
        return None
    shape = t.shape
    kinds = ["none" if k == "c" and c is None else "ellipsis" if k == "c" and c is Ellipsis
             else "axis" for k, c in classified]
    consumed = kinds.count("axis")
    if kinds.count("ellipsis") > 1 or consumed > len(shape):
        return None   # frame's indexing raises NumPy's error
    template, scalars, static_index, takes, positions = [], [], [], [], []
    holes: dict[int, int] = {}

    def position(v: ScalarVariable) -> int:
        """``v``'s number among the graph's int64 inputs."""
        for k, known in enumerate(positions):
            if known is v:
                return k
        positions.append(v)
        return len(positions) - 1

    def hole(v: ScalarVariable) -> tuple:
        if id(v) not in holes:
            holes[id(v)] = len(scalars)
            scalars.append(v)
        return ("v", holes[id(v)])

    guards = []   # derived ScalarVariables (an outcome, a length), guarded once all are built
    axis = out = dropped = 0
    for (k, c), kind in zip(classified, kinds):
        if kind == "none":
            template.append(("c", None))
            static_index.append(None)
            out += 1
            continue
        if kind == "ellipsis":
            template.append(("c", Ellipsis))
            static_index.append(Ellipsis)
            axis += len(shape) - consumed
            out += len(shape) - consumed
            continue
        n = shape[axis]
        if k == "c":
            template.append(("c", c))
            static_index.append(c)
            if not isinstance(c, (int, np.integer)):
                out += 1
        elif k == "int":
            inside = _derived_bool(c, n)
            if inside.concrete is not True:
                return None   # the value is read: the native run raises NumPy's IndexError
            guards.append(inside)
            template.append(hole(c))
            static_index.append(slice(None))
            takes.append(("int", out, n, position(c)))
            out += 1
            dropped += 1
        else:
            start, stop, step = c
            concrete = [b.concrete if isinstance(b, ScalarVariable) else b for b in (start, stop)]
            length = slice_length(*concrete, step, n)
            guards.append(_derived_length(tx, start, stop, step, n, length))
            template.append(("s", tuple(hole(b) if isinstance(b, ScalarVariable) else ("c", b)
                                        for b in (start, stop, step))))
            if isinstance(start, ScalarVariable) and length:
                if not _INT64_MIN <= start.concrete <= _INT64_MAX:
                    return None   # not an int64 graph input: the values are read
                static_index.append(slice(None))
                takes.append(("slice", out, n, position(start), step, length))
            else:   # the elements are known from the length: a static slice
                first = slice(concrete[0], None, step).indices(n)[0] if length else 0
                last = first + length * step
                static_index.append(slice(first, last if last >= 0 else None, step))
            out += 1
        axis += 1
    if "ellipsis" in kinds and out == dropped:
        return None   # NumPy gives a 0-d array there, not a scalar: read the values
    for g in guards:
        g.value   # noqa: B018 - the outcome / the length is guarded, not the operands
    full = all(isinstance(s, slice) and s == slice(None) for s in static_index)
    var = DynamicIndexVariable(tuple(template), is_tuple, scalars,
                               None if full else tuple(static_index),
                               tuple(sorted(takes, key=lambda x: -x[1])), positions)
    return var


def _derived_bool(i: ScalarVariable, n: int) -> ScalarVariable:
    """``-n <= i < n``, computed by the entry (its outcome is guarded)."""
    return ScalarVariable(-n <= i.concrete < n,
                          ExprSource(f"({-n} <= {{}} < {n})", (i.source,)), i.tr, True)


def _derived_length(tx, start, stop, step: int, n: int, length: int) -> ScalarVariable:
    """``len(range(n)[start:stop:step])``, computed by the entry (guarded)."""
    pooled = tx.tr.guards.const(slice_length)
    sources = tuple(b.source if isinstance(b, ScalarVariable) else _literal(b) for b in (start, stop))
    shown_step = "" if step == 1 else f":{step}"
    like = start if isinstance(start, ScalarVariable) else stop
    return ScalarVariable(length, ExprSource(f"{pooled}({{}}, {{}}, {step}, {n})", sources,
                                             f"len(range({n})[{{}}:{{}}{shown_step}])"),
                          like.tr, True)
