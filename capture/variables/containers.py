"""Containers: tuples, lists, dicts, and iterators over known items.

Lists and dicts are mutable: a container that came from the frame (it has a
source) is never mutated during simulation; the executor mutates the
Variable's items and records the container as modified, and the final state
is written back to the real object after the graph runs.
"""
from __future__ import annotations

from ..errors import Unsupported
from ..sources import Source
from .base import ConstantVariable, Variable

__all__ = ["TupleVariable", "ListVariable", "DictVariable", "IteratorVariable", "SliceVariable"]


class TupleVariable(Variable):
    __slots__ = ("items",)

    def __init__(self, items, source: Source | None = None):
        super().__init__(source)
        self.items = list(items)

    def python_type(self) -> type:
        return tuple

    def is_constant(self) -> bool:
        return all(i.is_constant() for i in self.items)

    def as_constant(self):
        return tuple(i.as_constant() for i in self.items)

    def truth(self, tx) -> bool:
        return bool(self.items)

    def iterate(self, tx):
        return list(self.items)

    def getattr(self, tx, name: str) -> Variable:
        from .callables import BoundBuiltinMethod
        if name in ("index", "count"):
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Tuple{self.items!r}"


class ListVariable(Variable):
    __slots__ = ("items", "mutated")

    def __init__(self, items, source: Source | None = None):
        super().__init__(source)
        self.items = list(items)
        self.mutated = False

    def python_type(self) -> type:
        return list

    def truth(self, tx) -> bool:
        return bool(self.items)

    def iterate(self, tx):
        return list(self.items)

    def getattr(self, tx, name: str) -> Variable:
        from .callables import BoundBuiltinMethod
        if name in ("append", "extend", "pop", "insert", "index", "count", "reverse", "clear",
                    "copy", "remove"):
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"List{self.items!r}"


class DictVariable(Variable):
    """A dict whose keys are Python constants (strings, ints, tuples of them)."""
    __slots__ = ("items", "mutated")

    def __init__(self, items: dict, source: Source | None = None):
        super().__init__(source)
        self.items = dict(items)  # constant key -> Variable
        self.mutated = False

    def python_type(self) -> type:
        return dict

    def truth(self, tx) -> bool:
        return bool(self.items)

    def iterate(self, tx):
        return [ConstantVariable(k) for k in self.items]

    def getattr(self, tx, name: str) -> Variable:
        from .callables import BoundBuiltinMethod
        if name in ("keys", "values", "items", "get", "pop", "update", "setdefault", "clear",
                    "copy"):
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Dict{self.items!r}"


class IteratorVariable(Variable):
    """An iterator over items known at trace time (range, list, zip, enumerate...)."""
    __slots__ = ("items", "pos")

    def __init__(self, items):
        super().__init__(None)
        self.items = list(items)
        self.pos = 0

    def next(self):
        if self.pos >= len(self.items):
            return None
        item = self.items[self.pos]
        self.pos += 1
        return item

    def iterate(self, tx):
        rest = self.items[self.pos:]
        self.pos = len(self.items)
        return rest

    def python_type(self) -> type:
        return type(iter(()))


class SliceVariable(Variable):
    """A slice whose parts are Variables (constants in practice)."""
    __slots__ = ("parts",)

    def __init__(self, parts):
        super().__init__(None)
        self.parts = list(parts)

    def is_constant(self) -> bool:
        return all(p.is_constant() for p in self.parts)

    def as_constant(self):
        return slice(*(p.as_constant() for p in self.parts))

    def python_type(self) -> type:
        return slice


def unpack_constant_key(var: Variable):
    if not var.is_constant():
        raise Unsupported("unsupported_object", f"dict key {var!r} is not a Python constant")
    key = var.as_constant()
    try:
        hash(key)
    except TypeError as e:
        raise Unsupported("exception", f"unhashable dict key {key!r}") from e
    return key
