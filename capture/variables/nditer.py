"""``np.nditer`` as a multi-index counter: the numeric gradient check of
course code (CS231n's ``eval_numerical_gradient``)

    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        ...                      # x[ix] = oldval + h; f(x) ...
        it.iternext()

walks the positions of ``x`` in NumPy's iteration order and reads nothing
through the iterator.  An ``NditerVariable`` holds that order (the index
tuples NumPy's own ``nditer`` gives on a C-ordered stand-in of ``x``'s
shape) and a position: ``finished``, ``multi_index``, ``index``,
``iterindex``, ``itersize``, ``shape``, ``ndim`` and ``nop`` are constants,
``iternext()`` and ``reset()`` move the position, so the loop unrolls into
the graph.  Live at a graph break it is rebuilt as a real iterator over the
real array at the same position (``nditer_at``).

The order is NumPy's only where the array's layout is known: ``order="C"``
or ``"F"`` given; else (NumPy's default "K" follows memory order, "A" too) an
input array that is C-contiguous (under a guard), an array computed in the
function that is no view and has at most one dimension longer than 1, or a
0-d or one-element array.

Not modelled (a graph break, NumPy runs it): several operands, flags other
than ``multi_index``, ``c_index``, ``f_index``, ``refs_ok`` and
``zerosize_ok`` (buffering, external loops, ranges), ``op_dtypes``, casting,
``itershape``, reading or writing elements through the iterator (``it[0]``,
``it.value``, ``for v in it``), ``with it:``, and a write ``op_flags`` on an
input array that is read-only (NumPy raises).
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, ConstantVariable, TensorVariable, Variable

__all__ = ["NditerVariable", "make_nditer", "nditer_at"]

_FLAGS = frozenset({"multi_index", "c_index", "f_index", "refs_ok", "zerosize_ok"})
_WRITE_FLAGS = frozenset({"readwrite", "writeonly"})


def _nditer_signature(op, flags=None, op_flags=None, op_dtypes=None, order="K", casting="safe",
                      op_axes=None, itershape=None, buffersize=0): ...


def _constant_strings(tx, name: str, value: Variable | None) -> tuple[str, ...]:
    if value is None or value.is_none():
        return ()
    if not value.is_constant():
        try:
            items = [v.as_constant() for v in value.iterate(tx)]
        except Unsupported:
            raise Unsupported("unsupported_call", f"np.nditer({name}=) that is not a constant") from None
    else:
        items = value.as_constant()
    if isinstance(items, str):
        items = [items]
    if not all(isinstance(s, str) for s in items):
        raise Unsupported("unsupported_call", f"np.nditer({name}=) other than a list of strings")
    return tuple(items)


def _known_order(tx, a: TensorVariable, order: str) -> None:
    """Refuse an iteration order that depends on a layout capture does not know."""
    if order in ("C", "F") or a.meta.size <= 1:
        return
    data = tx.tr.input_arrays.get(id(a))
    if data is not None and a.base is None and a.source is not None:
        if not data.flags.c_contiguous:
            raise Unsupported("unsupported_call", "np.nditer of an input array that is not "
                                                  "C-contiguous (NumPy walks it in memory order)")
        tx.tr.guards.c_contiguous(a.array_source())
        return
    if data is None and a.base is None and sum(d > 1 for d in a.shape) <= 1:
        return
    raise Unsupported("unsupported_call", "np.nditer of an array computed in the function or a "
                                          "view (NumPy walks it in memory order, whose layout "
                                          "capture does not model)")


def _writeable(tx, a: TensorVariable) -> None:
    """A write ``op_flags`` on ``a``: NumPy raises for a read-only array."""
    data = tx.tr.input_arrays.get(id(a))
    if a.base is not None:
        raise Unsupported("unsupported_call", "np.nditer writing through a view")
    if data is not None:
        if not data.flags.writeable:
            raise Unsupported("unsupported_call", "np.nditer writing a read-only array (NumPy raises)")
        tx.tr.guards.writeable(a.array_source(), a.source)


def make_nditer(tx, args: list[Variable], kwargs: dict[str, Variable]) -> "NditerVariable":
    """``np.nditer(a, flags=[...], op_flags=[...], order=...)`` of one ndarray."""
    try:
        bound = dict(zip(("op", "flags", "op_flags", "op_dtypes", "order", "casting", "op_axes",
                          "itershape", "buffersize"), args))
        if set(bound) & set(kwargs):
            raise TypeError
        bound.update(kwargs)
        _nditer_signature(**bound)
    except TypeError:
        raise Unsupported("unsupported_call", "np.nditer with these arguments") from None
    a = bound["op"]
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY:
        raise Unsupported("unsupported_call", "np.nditer of something other than one ndarray")
    for name in ("op_dtypes", "op_axes", "itershape"):
        if name in bound and not bound[name].is_none():
            raise Unsupported("unsupported_call", f"np.nditer({name}=)")
    for name, default in (("order", "K"), ("casting", "safe"), ("buffersize", 0)):
        if name in bound and not bound[name].is_constant():
            raise Unsupported("unsupported_call", f"np.nditer({name}=) that is not a constant")
    order = bound["order"].as_constant() if "order" in bound else "K"
    casting = bound["casting"].as_constant() if "casting" in bound else "safe"
    flags = _constant_strings(tx, "flags", bound.get("flags"))
    op_flags = _constant_strings(tx, "op_flags", bound.get("op_flags"))
    if set(flags) - _FLAGS:
        raise Unsupported("unsupported_call", f"np.nditer(flags={list(flags)})")
    a.check_fresh()
    # NumPy's own iterator on a stand-in checks the arguments (its errors are the user's)
    # and gives the index order of a C-ordered array of this shape
    stand_in = np.zeros(a.shape, a.meta.dtype)
    try:
        it = np.nditer(stand_in, flags=list(flags) + ["multi_index", "zerosize_ok"],
                       op_flags=list(op_flags) or None, order=order, casting=casting)
    except Exception as e:  # noqa: BLE001 - raised again by the native run
        raise UserCodeRaises(f"nditer() raises {type(e).__name__}: {e}", exc=e) from e
    if "zerosize_ok" not in flags and a.meta.size == 0:
        raise Unsupported("unsupported_call", "np.nditer of an empty array (NumPy raises)")
    _known_order(tx, a, order)
    if set(op_flags) & _WRITE_FLAGS:
        _writeable(tx, a)
    positions = []
    while not it.finished:
        positions.append((it.multi_index, it.index if {"c_index", "f_index"} & set(flags) else None))
        it.iternext()
    call = {"flags": list(flags), "op_flags": list(op_flags) or None, "order": order, "casting": casting}
    return NditerVariable(a, tuple(positions), frozenset(flags), tuple(a.shape), call)


def nditer_at(op, call: dict, iterindex: int):
    """A real iterator over ``op`` at position ``iterindex`` (an entry at a
    graph break inside the loop)."""
    it = np.nditer(op, **call)
    if iterindex < it.itersize:
        it.iterindex = iterindex
    else:   # past the end: what iternext() left
        it.iterindex = it.itersize - 1
        it.iternext()
    return it


class NditerVariable(Variable):
    """An ``np.nditer`` made in the function, walked by its position only."""
    __slots__ = ("op", "positions", "flags", "shape", "call", "pos")

    def __init__(self, op: TensorVariable, positions: tuple, flags: frozenset, shape: tuple,
                 call: dict):
        super().__init__(None)
        self.op = op
        self.positions = positions   # (multi_index, flat index or None) per step, NumPy's order
        self.flags = flags
        self.shape = shape
        self.call = call
        self.pos = 0

    def python_type(self) -> type:
        return np.nditer

    def _finished(self) -> bool:
        return self.pos >= len(self.positions)

    def getattr(self, tx, name: str) -> Variable:
        if name == "finished":
            return ConstantVariable(self._finished())
        if name in ("multi_index", "index"):
            if name == "multi_index" and "multi_index" not in self.flags or \
                    name == "index" and not {"c_index", "f_index"} & self.flags:
                message = "Iterator does not have an index" if name == "index" else \
                    "Iterator is not tracking a multi-index"
                raise UserCodeRaises(f"ValueError: {message}", exc=ValueError(message))
            if self._finished():
                message = "Iterator is past the end"
                raise UserCodeRaises(f"ValueError: {message}", exc=ValueError(message))
            multi_index, index = self.positions[self.pos]
            return ConstantVariable(multi_index if name == "multi_index" else index)
        if name == "iterindex":
            return ConstantVariable(self.pos)
        if name == "itersize":
            return ConstantVariable(len(self.positions))
        if name in ("shape", "ndim", "nop"):
            return ConstantVariable({"shape": self.shape, "ndim": len(self.shape), "nop": 1}[name])
        if name in ("iternext", "reset"):
            return NditerMethodVariable(self, name)
        raise Unsupported("unsupported_object", f"np.nditer attribute {name!r} (elements read "
                                                f"or written through the iterator)")

    def method(self, tx, name: str, args, kwargs) -> Variable:
        if args or kwargs:
            message = f"nditer.{name}() takes no arguments"
            raise UserCodeRaises(f"TypeError: {message}")
        if name == "reset":
            self.pos = 0
            return ConstantVariable(None)
        self.pos = min(self.pos + 1, len(self.positions))
        return ConstantVariable(not self._finished())

    def rebuilt_from(self) -> list[Variable]:
        return [self.op]

    def reconstruct(self, rb) -> str:
        """Live at a graph break: a real iterator over the real array, at the
        position the trace reached."""
        return rb.once(self, lambda: f"{rb.const(nditer_at)}({rb.expr(self.op)}, "
                                     f"{rb.const(self.call)}, {self.pos})")

    def __repr__(self) -> str:
        return f"nditer(shape={self.shape}, at {self.pos})"


class NditerMethodVariable(Variable):
    """``it.iternext`` or ``it.reset`` of an ``NditerVariable``."""
    __slots__ = ("obj", "name")

    def __init__(self, obj: NditerVariable, name: str):
        super().__init__(None)
        self.obj = obj
        self.name = name

    def call(self, tx, args, kwargs):
        return self.obj.method(tx, self.name, args, kwargs)

    def rebuilt_from(self) -> list[Variable]:
        return [self.obj]

    def reconstruct(self, rb) -> str:
        return f"{rb.expr(self.obj)}.{self.name}"

    def __repr__(self) -> str:
        return f"{self.obj!r}.{self.name}"
