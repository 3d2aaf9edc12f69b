"""Ordering by comparisons the trace simulates: ``sorted``, ``list.sort``,
``min`` and ``max`` of values that are not Python constants (user objects
ordered by their ``__lt__``, keys made by ``functools.cmp_to_key``, Python
scalars of the frame), and the key objects of ``functools.cmp_to_key``.

Python's own algorithm runs at trace time over stand-ins (``_Compared``):
each comparison it asks for is the user's ``a < b`` (or ``a > b`` for
``max``), simulated by the translator (the user's ``__lt__`` inlined, with
Python's reflection rules).  So the comparisons happen in the order, and as
often, as they do natively, and their side effects and errors are the
native ones; a comparison the trace cannot decide (of tensor values) is a
graph break.
"""
from __future__ import annotations

import functools
import operator

from ..errors import Unsupported, UserCodeRaises
from .base import ConstantVariable, Variable

__all__ = ["order_by_comparisons", "cmp_to_key", "CmpToKeyVariable", "CmpKeyVariable"]


class _Compared:
    """One item handed to Python's ``sorted``/``min``/``max`` at trace time;
    its comparisons are simulated on the Variables."""
    __slots__ = ("tx", "var", "index")

    def __init__(self, tx, var: Variable, index: int):
        self.tx, self.var, self.index = tx, var, index

    def _compare(self, op, other: "_Compared") -> bool:
        compare = getattr(self.var, "compare", None)   # a cmp_to_key object (below)
        result = compare(self.tx, op, other.var) if compare is not None else None
        if result is None:
            result = self.tx.binary_op(op, self.var, other.var)
        return self.tx.truth(result)

    def __lt__(self, other: "_Compared") -> bool:
        return self._compare(operator.lt, other)

    def __gt__(self, other: "_Compared") -> bool:
        return self._compare(operator.gt, other)


def order_by_comparisons(tx, keys: list[Variable], run, what: str):
    """``run`` (Python's ``sorted``/``min``/``max`` with its keyword
    arguments) over stand-ins of ``keys``; the positions it gives (a list
    for ``sorted``, one for ``min``/``max``)."""
    stand_ins = [_Compared(tx, k, i) for i, k in enumerate(keys)]
    try:
        result = run(stand_ins)
    except Unsupported:
        raise
    except Exception as e:  # noqa: BLE001 - Python's own error (none expected from the stand-ins)
        raise UserCodeRaises(f"{what}() raises {type(e).__name__}: {e}", exc=e) from e
    if isinstance(result, list):
        return [s.index for s in result]
    return result.index


# -- functools.cmp_to_key -------------------------------------------------------------------

class CmpToKeyVariable(Variable):
    """``functools.cmp_to_key(cmp)`` made in the function: calling it makes a
    key object (``CmpKeyVariable``)."""
    __slots__ = ("cmp",)

    def __init__(self, cmp: Variable):
        super().__init__(None)
        self.cmp = cmp

    def python_type(self) -> type:
        return type(functools.cmp_to_key(lambda a, b: 0))

    def call(self, tx, args, kwargs):
        if len(args) != 1 or kwargs:
            raise UserCodeRaises("TypeError: a cmp_to_key key takes exactly one argument")
        return CmpKeyVariable(self.cmp, args[0])

    def rebuilt_from(self) -> list[Variable]:
        return [self.cmp]

    def reconstruct(self, rb) -> str:
        return f"{rb.const(functools.cmp_to_key)}({rb.expr(self.cmp)})"

    def __repr__(self) -> str:
        return f"cmp_to_key({self.cmp!r})"


class CmpKeyVariable(Variable):
    """A key object of ``cmp_to_key(cmp)`` around ``obj``: ``a < b`` is
    ``cmp(a.obj, b.obj) < 0`` (the same for ``>``, ``<=``, ``>=``, ``==``,
    ``!=``), as ``functools.KeyWrapper`` does."""
    __slots__ = ("cmp", "obj")

    def __init__(self, cmp: Variable, obj: Variable):
        super().__init__(None)
        self.cmp = cmp
        self.obj = obj

    def python_type(self) -> type:
        return type(functools.cmp_to_key(lambda a, b: 0)(None))

    def compare(self, tx, op, other: Variable) -> Variable | None:
        """``self op other`` when ``other`` is a key object too (else None:
        Python raises TypeError, and so does the general path)."""
        if not isinstance(other, CmpKeyVariable):
            return None
        result = self.cmp.call(tx, [self.obj, other.obj], {})
        return tx.binary_op(op, result, ConstantVariable(0))

    def getattr(self, tx, name: str) -> Variable:
        if name == "obj":
            return self.obj
        return super().getattr(tx, name)

    def rebuilt_from(self) -> list[Variable]:
        return [self.cmp, self.obj]

    def reconstruct(self, rb) -> str:
        return f"{rb.const(functools.cmp_to_key)}({rb.expr(self.cmp)})({rb.expr(self.obj)})"

    def __repr__(self) -> str:
        return f"cmp_to_key key({self.obj!r})"


def cmp_to_key(tx, args, kwargs) -> Variable:
    """The ``functools.cmp_to_key`` builtin."""
    if kwargs and set(kwargs) != {"mycmp"} or len(args) + len(kwargs) != 1:
        raise UserCodeRaises("TypeError: cmp_to_key() takes exactly one argument (mycmp)")
    return CmpToKeyVariable(args[0] if args else kwargs["mycmp"])
