"""Containers: tuples, lists, dicts, and iterators over known items.

Lists and dicts are mutable: a container that came from the frame (it has a
source) is never mutated during simulation; the executor mutates the
Variable's items and records the container as modified, and the final state
is written back to the real object after the graph runs.
"""
from __future__ import annotations

import operator
import sys
import types

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from ..rebuild import dict_iter_at
from ..sources import AttrSource, ItemSource, Source, is_safe_key
from .base import ConstantVariable, TensorVariable, Variable, refuse_tensor_index
from .callables import BoundBuiltinMethod
from .registry import HOOKS, wrap_rule

__all__ = ["TupleVariable", "NamedTupleVariable", "ListVariable", "DictVariable", "SetVariable",
           "SliceVariable", "IteratorVariable", "ListIteratorVariable", "DictIteratorVariable",
           "DictViewVariable", "LazyIteratorVariable", "GeneratorVariable", "is_namedtuple_class",
           "constant_value", "is_constant_value", "unpack_constant_key", "sequence_op",
           "structurally_equal"]


class _Sequence(Variable):
    """What tuples and lists share: items that are Variables, indexing with a
    constant, ``in`` by CPython's identity-then-equality rule."""
    __slots__ = ()

    def children(self) -> list[Variable]:
        return self.items

    def has_frame_tensor(self) -> bool:
        return any(i.has_frame_tensor() for i in self.items)

    def truth(self, tx) -> bool:
        return bool(self.items)

    def iterate(self, tx):
        return list(self.items)

    def getitem(self, tx, index: Variable) -> Variable:
        refuse_tensor_index(index)
        key = index.as_constant()
        try:
            got = self.items[key]
        except (IndexError, TypeError) as e:
            # the error of the real type (a tuple's message names the tuple)
            exc = e if isinstance(self, ListVariable) else None
            raise UserCodeRaises(f"{type(e).__name__}: {e}", exc=exc) from e
        return type(self)(got) if isinstance(key, slice) else got

    def contains(self, tx, item: Variable) -> bool:
        # CPython: identity first, then ==, element by element, stopping at a match
        return any(tx.structurally_equal(i, item) for i in self.items)

    def reconstruct(self, rb) -> str:
        if self.source is not None:  # the object itself (mutations are replayed into it)
            return rb.source(self)
        name = rb.named(self)   # made during the call: built once (its identity is shared
        if name is None:        # by every place it is stored)
            name = rb.new_name(self)
            self.build(rb, name)
        return name

    def build(self, rb, name: str) -> None:
        """Emit the lines making this container, a new object, as ``name``."""
        raise NotImplementedError


class TupleVariable(_Sequence):
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

    def to_python(self, passed: dict | None = None):
        return tuple(i.to_python(passed) for i in self.items)

    def to_numpy(self):
        return tuple(i.to_numpy() for i in self.items)

    def build(self, rb, name: str) -> None:
        if _contains(self, self, set()):
            raise Unsupported("unsupported_object", "a tuple that contains itself")
        rb.emit(f"{name} = ({self._inner(rb)})")

    def _inner(self, rb) -> str:
        return "".join(rb.expr(i) + ", " for i in self.items)

    def getattr(self, tx, name: str) -> Variable:
        if name in ("index", "count"):
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Tuple{self.items!r}"


class NamedTupleVariable(TupleVariable):
    """A ``collections.namedtuple`` (or ``typing.NamedTuple``): a tuple whose
    items are also attributes."""
    __slots__ = ("cls",)

    def __init__(self, cls: type, items, source: Source | None = None):
        super().__init__(items, source)
        self.cls = cls

    def python_type(self) -> type:
        return self.cls

    def getattr(self, tx, name: str) -> Variable:
        fields = self.cls._fields
        if name in fields:
            return self.items[fields.index(name)]
        if name == "_fields":
            return TupleVariable([ConstantVariable(f) for f in fields])
        found = HOOKS.namedtuple_attr(tx, self, name)   # _replace, _asdict, the class's own methods
        if found is not None:
            return found
        return super().getattr(tx, name)

    def build(self, rb, name: str) -> None:
        if _contains(self, self, set()):
            raise Unsupported("unsupported_object", "a tuple that contains itself")
        rb.emit(f"{name} = {rb.const(self.cls)}._make(({self._inner(rb)}))")

    def __repr__(self) -> str:
        return f"{self.cls.__name__}{self.items!r}"


def is_namedtuple_class(cls) -> bool:
    """A plain namedtuple class: a tuple subclass with ``_fields`` and nothing
    that changes indexing or iteration."""
    return (isinstance(cls, type) and issubclass(cls, tuple) and cls is not tuple
            and isinstance(getattr(cls, "_fields", None), tuple)
            and cls.__getitem__ is tuple.__getitem__ and cls.__iter__ is tuple.__iter__
            and cls.__len__ is tuple.__len__ and cls.__eq__ is tuple.__eq__)


# the methods of lists and dicts the executor models (``container_methods.py``)
_LIST_METHODS = frozenset({"append", "extend", "pop", "insert", "index", "count", "reverse", "clear",
                           "copy", "remove", "sort"})
_DICT_METHODS = frozenset({"keys", "values", "items", "get", "pop", "update", "setdefault", "clear",
                           "copy", "popitem"})


class ListVariable(_Sequence):
    """A list.  A list of the frame (``source``) is *unread* until the trace
    reads it: only its type is guarded and its items are not wrapped, so a
    list the call only appends to (``history.append(loss.item())`` in a loop
    with a break) does not guard its length, which grows at every iteration
    and every call (a recompile each, up to the limit).  Appends, ``extend``
    and ``+=`` of an unread list are kept apart and replayed with ``extend``;
    any read (``items``: indexing, ``len``, iteration, ``in``, other methods,
    passing it on) wraps the items then, with the usual type-and-length
    guard."""
    __slots__ = ("_items", "mutated", "_unread")

    def __init__(self, items, source: Source | None = None, unread: tuple | None = None):
        super().__init__(source)
        self._items = list(items)    # while unread: only what the call appended
        self.mutated = False
        self._unread = unread        # (translation, the list) until the items are read

    @property
    def items(self) -> list[Variable]:
        if self._unread is not None:
            tr, value = self._unread
            self._unread = None
            self._items[:0] = _wrap_items(tr, value, self.source)
        return self._items

    def extend(self, tx, new: list[Variable]) -> None:
        """``lst.extend(new)``, ``append``, ``+=``: unread, the items stay unread
        (the appended ones are all ``_items`` holds until the first read)."""
        tx.mutate(self)
        self._items.extend(new)

    def rebuilt_from(self) -> list[Variable]:
        return self._items   # unread: only the appended ones (the rest stay the list's own)

    # ``children()`` (_Sequence) reads the items: who asks looks for tensors or objects
    # among them (contains_tensor, _contains)

    def python_type(self) -> type:
        return list

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        key = index.as_constant()
        tx.mutate(self)
        try:
            if isinstance(key, slice):
                self.items[key] = value.iterate(tx)
            else:
                self.items[key] = value
        except (IndexError, TypeError, ValueError) as e:
            raise UserCodeRaises(f"{type(e).__name__}: {e}") from e

    def delitem(self, tx, index: Variable) -> None:
        tx.mutate(self)
        key = index.as_constant()
        try:
            del self.items[key]
        except (IndexError, KeyError) as e:
            raise UserCodeRaises(f"{type(e).__name__}: {e}", exc=e) from e

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        if fn is operator.add:
            self.extend(tx, other.iterate(tx))
            return self
        return super().inplace_op(tx, fn, other)

    def is_mutable(self) -> bool:
        return True

    def write_back(self, rb) -> list[str]:
        if self._unread is not None:   # only appended to: the items it had stay
            appended = ", ".join(rb.expr(i) for i in self._items)
            return [f"    {rb.source(self)}.extend(({appended}{',' if self._items else ''}))"]
        return [f"    {rb.source(self)}[:] = [{', '.join(rb.expr(i) for i in self.items)}]"]

    def to_python(self, passed: dict | None = None):
        return [i.to_python(passed) for i in self.items]

    def to_numpy(self):
        return [i.to_numpy() for i in self.items]

    def build(self, rb, name: str) -> None:
        rb.emit(f"{name} = []")   # before its items: it may contain itself
        items = ", ".join(rb.expr(i) for i in self.items)
        rb.emit(f"{name}.extend(({items}{',' if self.items else ''}))")

    def get_iter(self, tx) -> IteratorVariable:
        return ListIteratorVariable(self)

    def getattr(self, tx, name: str) -> Variable:
        if name in _LIST_METHODS:
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"List{self.items!r}"


class DictVariable(Variable):
    """A dict whose keys are Python constants (strings, ints, tuples of them)."""
    __slots__ = ("items", "mutated", "entry_keys")

    def __init__(self, items: dict, source: Source | None = None):
        super().__init__(source)
        self.items = dict(items)  # constant key -> Variable
        self.mutated = False
        self.entry_keys = None    # an argument dict's keys at entry (guarded), in order

    def keys_unchanged(self) -> bool:
        """Does this argument dict still have the keys it had at entry, in
        order?  Then its write-back assigns the values key by key (the dict's
        table, and an iterator over it, stay as they are)."""
        return self.entry_keys is not None and tuple(self.items) == self.entry_keys

    def python_type(self) -> type:
        return dict

    def children(self) -> list[Variable]:
        return list(self.items.values())

    def truth(self, tx) -> bool:
        return bool(self.items)

    def iterate(self, tx):
        return [ConstantVariable(k) for k in self.items]

    def getitem(self, tx, index: Variable) -> Variable:
        refuse_tensor_index(index)
        key = unpack_constant_key(index)
        if key not in self.items:
            raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
        return self.items[key]

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        tx.mutate(self)
        self.items[unpack_constant_key(index)] = value

    def delitem(self, tx, index: Variable) -> None:
        tx.mutate(self)
        key = unpack_constant_key(index)
        try:
            del self.items[key]
        except (IndexError, KeyError) as e:
            raise UserCodeRaises(f"{type(e).__name__}: {e}", exc=e) from e

    def contains(self, tx, item: Variable) -> bool:
        return unpack_constant_key(item) in self.items

    def is_mutable(self) -> bool:
        return True

    def write_back(self, rb) -> list[str]:
        if self.keys_unchanged():
            return [f"    {rb.source(self)}[{rb.constant(k)}] = {rb.expr(v)}"
                    for k, v in self.items.items()]
        items = ", ".join(f"{rb.constant(k)}: {rb.expr(v)}" for k, v in self.items.items())
        return [f"    {rb.source(self)}.clear()", f"    {rb.source(self)}.update({{{items}}})"]

    def to_python(self, passed: dict | None = None):
        return {k: i.to_python(passed) for k, i in self.items.items()}

    def reconstruct(self, rb) -> str:
        if self.source is not None:  # the object itself (mutations are replayed into it)
            return rb.source(self)
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)
            rb.emit(f"{name} = {{}}")   # before its items: it may contain itself
            items = ", ".join(f"{rb.constant(k)}: {rb.expr(v)}" for k, v in self.items.items())
            rb.emit(f"{name}.update({{{items}}})")
        return name

    def get_iter(self, tx) -> IteratorVariable:
        return DictIteratorVariable(self)

    def empty_like(self) -> "DictVariable":
        """A new empty dict of this kind (a defaultdict keeps its factory)."""
        return DictVariable({})

    def update_from(self, tx, other: Variable) -> None:
        """``dict.update(other)``'s merge: a dict's items, else an iterable of pairs."""
        tx.mutate(self)
        if isinstance(other, DictVariable):
            self.items.update(other.items)
            return
        for i, pair in enumerate(other.iterate(tx)):
            kv = pair.iterate(tx)
            if len(kv) != 2:
                message = (f"dictionary update sequence element #{i} has length {len(kv)}; "
                           f"2 is required")
                raise UserCodeRaises(f"ValueError: {message}", exc=ValueError(message))
            self.items[unpack_constant_key(kv[0])] = kv[1]

    def dict_op(self, tx, fn, other: "DictVariable") -> Variable | None:
        """``self | other`` of two dicts of the same kind: a new one of that
        kind, ``other``'s values winning (None: not an operator of dicts)."""
        if fn is operator.or_ and type(other) is type(self) and \
                other.python_type() is self.python_type():
            new = self.empty_like()
            new.items = {**self.items, **other.items}
            return new
        return None

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        """``d |= other`` updates ``d`` in place (any mapping or iterable of pairs)."""
        if fn is operator.or_:
            self.update_from(tx, other)
            return self
        return super().inplace_op(tx, fn, other)

    def getattr(self, tx, name: str) -> Variable:
        if name in _DICT_METHODS:
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Dict{self.items!r}"


class SetVariable(Variable):
    """A set made in the function, of hashable constants.  A real set of the
    values keeps CPython's iteration order for the same insertions."""
    __slots__ = ("values",)

    def __init__(self, values=()):
        super().__init__(None)
        self.values = set()
        for v in values:
            self.add(v)

    def add(self, v: Variable) -> None:
        self.values.add(unpack_constant_key(v))

    def python_type(self) -> type:
        return set

    def truth(self, tx) -> bool:
        return bool(self.values)

    def contains(self, tx, item: Variable) -> bool:
        return unpack_constant_key(item) in self.values

    def reconstruct(self, rb) -> str:
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)
            rb.emit(f"{name} = __set({rb.const(tuple(self.values))})")
        return name

    def iterate(self, tx):
        return [ConstantVariable(v) for v in self.values]

    def getattr(self, tx, name: str) -> Variable:
        if name in ("add", "discard", "remove", "update", "union", "intersection", "difference",
                    "issubset", "issuperset", "isdisjoint", "copy", "clear"):
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Set{self.values!r}"


@HOOKS.provide
class IteratorVariable(Variable):
    """An iterator over items known when it is made (tuples, ranges, strings,
    a tensor's first axis).  ``next(tx)`` returns the next item, or None when
    exhausted; ``iterate(tx)`` consumes the rest."""
    __slots__ = ("items", "pos", "remake")

    def __init__(self, items=(), remake=None):
        super().__init__(None)
        self.items = list(items)
        self.pos = 0
        # rb, position -> an expression of the real iterator positioned there
        # (a range's: ``iter_at``), else ``iter(<the remaining items>)``
        self.remake = remake

    def next(self, tx):
        if self.pos >= len(self.items):
            return None
        item = self.items[self.pos]
        self.pos += 1
        return item

    def iterate(self, tx):
        rest = []
        while True:
            item = self.next(tx)
            if item is None:
                return rest
            rest.append(item)

    def get_iter(self, tx) -> "IteratorVariable":
        return self

    def python_type(self) -> type:
        return type(iter(()))

    def rebuilt_from(self) -> list[Variable]:
        return self.items[self.pos:]

    def reconstruct(self, rb) -> str:
        """``iter(<the remaining items>)`` (it lives on the stack at a graph break)."""
        name = rb.named(self)
        if name is None and self.remake is not None:
            expr = self.remake(rb, self.pos)
            name = rb.new_name(self)
            rb.emit(f"{name} = {expr}")
        if name is None:
            rest = self.items[self.pos:]
            if all(isinstance(i, ConstantVariable) for i in rest):
                inner = rb.const(tuple(i.value for i in rest))
            else:
                inner = "(" + "".join(rb.expr(i) + ", " for i in rest) + ")"
            name = rb.new_name(self)
            rb.emit(f"{name} = __iter({inner})")
        return name


class ListIteratorVariable(IteratorVariable):
    """``iter(lst)``: live, like CPython's list iterator (items appended
    during the loop are visited)."""
    __slots__ = ("lst",)

    def __init__(self, lst: "ListVariable"):
        super().__init__()
        self.lst = lst

    def next(self, tx):
        if self.pos < 0 or self.pos >= len(self.lst.items):
            self.pos = -1  # exhausted stays exhausted, even if the list grows later
            return None
        item = self.lst.items[self.pos]
        self.pos += 1
        return item

    def python_type(self) -> type:
        return type(iter([]))

    def rebuilt_from(self) -> list[Variable]:
        return [self.lst]

    def reconstruct(self, rb) -> str:
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)
            if self.pos < 0:  # exhausted stays exhausted
                rb.emit(f"{name} = __iter(())")
            else:
                rb.emit(f"{name} = __iter({rb.expr(self.lst)})")
                rb.emit(f"{name}.__setstate__({self.pos})")
        return name


class DictIteratorVariable(IteratorVariable):
    """Iteration over a dict's keys, values or items; changing the dict's size
    while iterating raises, as in CPython."""
    __slots__ = ("d", "mode", "size")

    def __init__(self, d: "DictVariable", mode: str = "keys"):
        super().__init__(list(d.items))
        self.d = d
        self.mode = mode
        self.size = len(d.items)

    def next(self, tx):
        if len(self.d.items) != self.size:
            raise UserCodeRaises("RuntimeError: dictionary changed size during iteration")
        key = super().next(tx)
        if key is None:
            return None
        if key not in self.d.items:
            raise UserCodeRaises("RuntimeError: dictionary keys changed during iteration")
        if self.mode == "keys":
            return ConstantVariable(key)
        if self.mode == "values":
            return self.d.items[key]
        return TupleVariable([ConstantVariable(key), self.d.items[key]])

    def python_type(self) -> type:
        return type(iter({}))

    def rebuilt_from(self) -> list[Variable]:
        return [self.d]

    def reconstruct(self, rb) -> str:
        """A real iterator over the dict that has yielded the same keys
        (``rebuild.dict_iter_at``), when the trace's dict is still the one it
        started on: same keys in the same order, and not an argument dict
        whose keys the entry rewrites (``clear`` and ``update`` would move the
        iterator; values assigned key by key do not)."""
        name = rb.named(self)
        if name is not None:
            return name
        if len(self.d.items) != self.size or list(self.d.items) != self.items:
            raise Unsupported("unsupported_object", "returning or storing an iterator over a dict "
                                                    "that changed during the iteration")
        if self.d.source is not None and self.d.mutated and not self.d.keys_unchanged():
            raise Unsupported("unsupported_object", "returning or storing an iterator over an "
                                                    "argument dict the function mutates")
        expr = f"{rb.const(dict_iter_at)}({rb.expr(self.d)}, {self.mode!r}, {self.pos})"
        name = rb.new_name(self)
        rb.emit(f"{name} = {expr}")
        return name


class DictViewVariable(Variable):
    """``d.keys()``, ``d.values()``, ``d.items()``: live, re-iterable views."""
    __slots__ = ("d", "mode")

    def __init__(self, d: "DictVariable", mode: str):
        super().__init__(None)
        self.d = d
        self.mode = mode

    def get_iter(self, tx) -> IteratorVariable:
        return DictIteratorVariable(self.d, self.mode)

    def iterate(self, tx):
        return DictIteratorVariable(self.d, self.mode).iterate(tx)

    def truth(self, tx) -> bool:
        return bool(self.d.items)

    def python_type(self) -> type:
        return type(getattr({}, self.mode)())


@HOOKS.provide
class LazyIteratorVariable(IteratorVariable):
    """An iterator computed on demand: ``gen(tx)`` returns the next Variable or
    None.  ``enumerate``, ``zip`` and ``map`` over other iterators stay lazy,
    so side effects interleave as in CPython."""
    __slots__ = ("gen", "kind", "parts")

    def __init__(self, gen, kind: type, remake=None, parts=()):
        super().__init__(remake=remake)
        self.gen = gen        # callable tx -> next Variable or None
        self.kind = kind
        # ``remake(rb)``: an expression of the real iterator in the trace's state
        # (``zip(<its iterators>)``...), from the Variables ``parts``; None: its
        # state cannot be rebuilt in an entry
        self.parts = list(parts)

    def next(self, tx):
        return self.gen(tx)

    def python_type(self) -> type:
        return self.kind

    def rebuilt_from(self) -> list[Variable]:
        return self.parts if self.remake is not None else []

    def reconstruct(self, rb) -> str:
        if self.remake is None:
            return Variable.reconstruct(self, rb)
        name = rb.named(self)
        if name is None:
            expr = self.remake(rb)
            name = rb.new_name(self)
            rb.emit(f"{name} = {expr}")
        return name


class GeneratorVariable(IteratorVariable):
    """A generator function's frame (generator expressions included), run by
    its own translator up to each ``yield``.

    A generator dropped while paused inside a ``try`` (``finally``, ``except``,
    ``with``) runs its handler natively when it is closed (garbage collected),
    which the trace does not model: a translation that ends with such a
    generator is refused (``check_closed``)."""
    __slots__ = ("tx", "started", "finished", "paused_in_try", "made_by")

    def __init__(self, child_tx, made_by=None):
        super().__init__()
        self.tx = child_tx
        self.started = False
        self.finished = False
        self.paused_in_try = False
        # (the generator function's Variable, positional and keyword arguments): an
        # unstarted generator is rebuilt by calling the function again
        self.made_by = made_by
        child_tx.tr.generators.append(self)

    def next(self, tx):
        return self.resume(tx, ConstantVariable(None))

    def resume(self, tx, sent: Variable, exc: Variable | None = None):
        """Run the generator to its next ``yield`` (its value) or its end
        (None), the paused ``yield`` evaluating to ``sent`` or raising ``exc``
        (``.send``, ``.throw``).  An exception leaving its frame finishes it."""
        # (an exception thrown in is restored as it is, as CPython's _gen_throw does: the
        # frames it leaves do not chain it, ``chained_raise``)
        from .flow import chained_raise, stop_iteration_error   # lazy: flow imports this module
        if self.finished:
            self.tx.result = None   # its return value went with the StopIteration that ended it
            if exc is not None:
                raise chained_raise(UserCodeRaises(f"the generator raises {exc.describe()}",
                                                   exc=exc))
            return None
        child = self.tx
        child.yielded = None
        child.done = False
        child.resumer = tx.tr.active   # (the frame running now: the generator's caller)
        if exc is not None:
            if not self.started:
                self.started = self.finished = True
                raise chained_raise(UserCodeRaises(f"the generator raises {exc.describe()}",
                                                   exc=exc))
            if child.ip >= 2 and child.instructions[child.ip - 2].opname == "SEND":
                # CPython throws it into the generator it delegates to (yield from)
                raise Unsupported("unsupported_call", "throw() into a generator paused in a "
                                                      "yield from")
            child.current = child.instructions[child.ip - 1]  # the paused yield raises
            if not child.unwind(UserCodeRaises("thrown into the generator", exc=exc)):
                self.finished = True
                self.paused_in_try = False
                if issubclass(exc.python_type(), StopIteration):   # PEP 479 (3.11: in C)
                    exc = stop_iteration_error(exc)
                raise chained_raise(UserCodeRaises(f"the generator raises {exc.describe()}",
                                                   exc=exc))
        elif self.started:
            child.push(sent)  # the value of the yield expression
        elif not sent.is_none():
            raise UserCodeRaises("TypeError: can't send non-None value to a just-started generator",
                                 exc=TypeError("can't send non-None value to a just-started "
                                               "generator"))
        self.started = True
        try:
            child.run()
        except UserCodeRaises as e:
            if e.exc is not None:  # raised out of the generator: it is finished
                self.finished = True
                self.paused_in_try = False
                raised = e.exc.python_type() if isinstance(e.exc, Variable) else type(e.exc)
                if issubclass(raised, StopIteration):  # PEP 479 (3.11 does it in C)
                    raise chained_raise(UserCodeRaises("RuntimeError: generator raised "
                                                       "StopIteration",
                                                       exc=stop_iteration_error(e.exc))) from e
            raise
        if child.yielded is not None:
            # user handlers start with PUSH_EXC_INFO (3.12+ wraps every generator
            # body in a StopIteration handler that does not)
            h = child.current.handler
            self.paused_in_try = h is not None and child.instructions[h.target].opname == "PUSH_EXC_INFO"
            return child.yielded
        self.finished = True
        self.paused_in_try = False
        return None

    def throw(self, tx, exc: Variable):
        return self.resume(tx, None, exc)

    def close(self, tx) -> Variable:
        """``gen.close()``: ``GeneratorExit`` thrown in at the paused ``yield``
        (its ``finally`` / ``except`` blocks run); a generator that yields
        again raises RuntimeError, one not started or finished just ends.
        Python 3.13 returns the value the generator returned then."""
        if not self.started or self.finished:
            self.started = self.finished = True
            self.paused_in_try = False
            return ConstantVariable(None)
        from .flow import ExceptionVariable, set_context   # lazy: flow imports this module
        stop = ExceptionVariable(GeneratorExit, [])
        set_context(tx.tr.active or tx, stop)   # (raised by close() in its caller, thrown in)
        try:
            item = self.resume(tx, None, stop)
        except UserCodeRaises as e:
            raised = e.exc.python_type() if isinstance(e.exc, Variable) else type(e.exc)
            if e.exc is not None and issubclass(raised, (GeneratorExit, StopIteration)):
                return ConstantVariable(None)
            raise
        if item is not None:
            message = "generator ignored GeneratorExit"
            raise UserCodeRaises(f"RuntimeError: {message}", exc=RuntimeError(message))
        returned, self.tx.result = self.tx.result, None
        if sys.version_info >= (3, 13) and returned is not None:
            return returned
        return ConstantVariable(None)

    def stop_iteration(self):
        """The ``StopIteration`` ending a ``next()`` / ``send()`` of the finished
        generator: its ``value`` is what the generator returned (once: later
        calls raise a bare one, as CPython's do)."""
        returned, self.tx.result = self.tx.result, None
        if returned is None or returned.is_none():
            return StopIteration()
        from .flow import ExceptionVariable   # lazy: flow imports this module
        return ExceptionVariable(StopIteration, [returned])

    def getattr(self, tx, name: str) -> Variable:
        if name in ("send", "__next__", "throw", "close"):
            return GeneratorMethodVariable(self, name)
        return super().getattr(tx, name)

    def check_closed(self) -> None:
        """Refuse a trace that ends while this generator is paused in a ``try``."""
        if self.paused_in_try:
            e = Unsupported("side_effect", f"generator {self.tx.code.co_qualname} is left paused "
                                           f"inside a try block: its finally/except block runs "
                                           f"when the generator is closed")
            e.location = self.tx.location()
            raise e

    def python_type(self) -> type:
        return types.GeneratorType

    def rebuilt_from(self) -> list[Variable]:
        if self.started or self.made_by is None:
            return []    # its state cannot be rebuilt in an entry
        fn, args, kwargs = self.made_by
        return [fn, *args, *kwargs.values()]

    def reconstruct(self, rb) -> str:
        """Unstarted (``sum(x.item() for x in xs)`` breaks before ``sum`` runs
        it), it is the real generator the function makes when called with the
        same arguments: its body has not run, and binding them runs nothing.
        Started, its paused frame cannot be rebuilt."""
        if self.started or self.made_by is None:
            return Variable.reconstruct(self, rb)
        name = rb.named(self)
        if name is None:
            fn, args, kwargs = self.made_by
            call = ", ".join([rb.expr(a) for a in args] + [f"{k}={rb.expr(v)}" for k, v in kwargs.items()])
            name = rb.new_name(self)
            rb.emit(f"{name} = {rb.expr(fn)}({call})")
        return name


class GeneratorMethodVariable(Variable):
    """``gen.send`` / ``gen.__next__`` / ``gen.throw`` of a generator made in
    the function: the generator's return ends the call with ``StopIteration``."""
    __slots__ = ("gen", "name")

    def __init__(self, gen: GeneratorVariable, name: str):
        super().__init__(None)
        self.gen = gen
        self.name = name

    def call(self, tx, args, kwargs):
        if kwargs or len(args) != (0 if self.name in ("__next__", "close") else 1):
            raise Unsupported("unsupported_call", f"generator.{self.name} with these arguments")
        if self.name == "close":
            return self.gen.close(tx)
        if self.name == "throw":
            exc = args[0]
            if exc.is_constant() and isinstance(exc.as_constant(), type):
                exc = exc.call(tx, [], {})
            item = self.gen.throw(tx, exc)
        else:
            item = self.gen.resume(tx, args[0] if args else ConstantVariable(None))
        if item is None:
            raise UserCodeRaises(f"generator.{self.name}: StopIteration",
                                 exc=self.gen.stop_iteration())
        return item

    def __repr__(self) -> str:
        return f"{self.gen!r}.{self.name}"


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

    def getattr(self, tx, name: str) -> Variable:
        """``s.start`` / ``s.stop`` / ``s.step`` (the parts); the methods of a
        constant slice (``s.indices(n)``) run at trace time."""
        parts = dict(zip(("start", "stop", "step"),
                         self.parts if len(self.parts) > 1 else [ConstantVariable(None), *self.parts]))
        if name in ("start", "stop", "step"):
            return parts.get(name, ConstantVariable(None))
        if self.is_constant():
            return ConstantVariable(self.as_constant()).getattr(tx, name)
        return super().getattr(tx, name)

    def to_python(self, passed: dict | None = None):
        if any(isinstance(p, TensorVariable) for p in self.parts):
            # frame's indexing would read the bound with int(): a meta array's
            # made-up value (and the result's shape depends on the data)
            raise Unsupported("data_dependent", "a slice whose bounds are integer tensors or NumPy "
                                                "integers computed in the function")
        return slice(*(p.to_python() for p in self.parts))

    def reconstruct(self, rb) -> str:
        if self.is_constant():
            return rb.const(self.as_constant())
        return super().reconstruct(rb)


def _wrap_items(tr, value, source: Source) -> list[Variable]:
    tr.guards.type_and_len(source, value)
    return [tr.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)]


@wrap_rule(30)
def _wrap_tuple(tr, value, source: Source) -> Variable | None:
    """A tuple: its items, guarded by type and length."""
    return TupleVariable(_wrap_items(tr, value, source), source) if type(value) is tuple else None


@wrap_rule(40)
def _wrap_namedtuple(tr, value, source: Source) -> Variable | None:
    """A namedtuple: its items, guarded by type and length."""
    t = type(value)
    if not is_namedtuple_class(t):
        return None
    return NamedTupleVariable(t, _wrap_items(tr, value, source), source)


@wrap_rule(50)
def _wrap_list(tr, value, source: Source) -> Variable | None:
    """A list, unread: its type guarded; its items wrapped (guarded by length)
    when the trace reads them (``ListVariable``; mutations are replayed)."""
    if type(value) is not list:
        return None
    tr.guards.type_is(source, value)
    return ListVariable([], source, unread=(tr, value))


@wrap_rule(60)
def _wrap_dict(tr, value, source: Source) -> Variable | None:
    """A dict with str/int/tuple keys: its values, guarded by its keys."""
    if type(value) is not dict:
        return None
    if not all(is_safe_key(k) for k in value):
        raise Unsupported("unsupported_object", "dict with keys that are not str/int/tuple")
    tr.guards.dict_keys(source, value)
    var = DictVariable({k: tr.wrap(v, ItemSource(source, k)) for k, v in value.items()}, source)
    var.entry_keys = tuple(value)
    return var


@wrap_rule(66)
def _wrap_container_method(tr, value, source: Source) -> Variable | None:
    """A builtin method bound to a list or a dict (``history.append``: a call
    pending on the stack at a graph break reaches the resume function as this
    object): that container's method, the container wrapped through
    ``__self__`` (one Variable with the frame's other references to it)."""
    if type(value) is not types.BuiltinMethodType:
        return None
    owner = getattr(value, "__self__", None)
    methods = {list: _LIST_METHODS, dict: _DICT_METHODS}.get(type(owner), ())
    name = value.__name__
    if name not in methods:
        return None
    tr.guards.type_is(source, value)
    tr.guards.constant(AttrSource(source, "__name__"), name)
    return BoundBuiltinMethod(tr.wrap(owner, AttrSource(source, "__self__")), name)


@HOOKS.provide
def is_basic_index(index: Variable) -> bool:
    """Is ``index`` NumPy basic indexing (ints, slices, None, Ellipsis): its
    result is a view (``tensor_ops.tensor_getitem``)?"""
    parts = index.items if isinstance(index, TupleVariable) else [index]
    for p in parts:
        if isinstance(p, SliceVariable):
            continue
        if not p.is_constant():
            return False
        v = p.as_constant()
        if not (v is None or v is Ellipsis or isinstance(v, (int, slice, np.integer))) or isinstance(v, bool):
            return False
    return True


def constant_value(var: Variable):
    """A fresh Python value for a Variable made only of constants (lists and
    dicts too: the callee gets new objects, as a pure function needs)."""
    if isinstance(var, (TupleVariable, ListVariable)):
        items = [constant_value(i) for i in var.items]
        return tuple(items) if isinstance(var, TupleVariable) else items
    if isinstance(var, DictVariable):
        return {k: constant_value(v) for k, v in var.items.items()}
    return var.as_constant()


def is_constant_value(var: Variable) -> bool:
    if isinstance(var, (TupleVariable, ListVariable)):
        return all(is_constant_value(i) for i in var.items)
    if isinstance(var, DictVariable):
        return all(is_constant_value(v) for v in var.items.values())
    return var.is_constant()


def _needs_values(var: Variable, seen: set[int]) -> None:
    """``value_needed`` of ``var`` and of every item it holds (a key hashes them all)."""
    if id(var) in seen:
        return
    seen.add(id(var))
    var.value_needed()
    for item in var.children():
        _needs_values(item, seen)


def unpack_constant_key(var: Variable):
    if not var.is_constant():
        _needs_values(var, set())   # a lazy number read from a tensor: its .item()'s break
        raise Unsupported("unsupported_object", f"dict key {var!r} is not a Python constant")
    key = var.as_constant()
    try:
        hash(key)
    except TypeError as e:
        raise UserCodeRaises(f"unhashable dict key {key!r}") from e
    return key


def _contains(var: Variable, target: Variable, seen: set[int]) -> bool:
    """Does ``var`` hold ``target`` (at any depth)?"""
    if id(var) in seen:
        return False
    seen.add(id(var))
    for item in var.children():
        if item is target or _contains(item, target, seen):
            return True
    return False


_SET_OPS = (operator.or_, operator.and_, operator.sub, operator.xor)


def sequence_op(tx, fn, a: Variable, b: Variable) -> Variable:
    """A binary operator on containers (``+``, ``*``, set operators, ``==``)."""
    seq = (ListVariable, TupleVariable)
    a.value_needed()   # an operator on a lazy number read from a tensor: its .item()'s break
    b.value_needed()
    if fn is operator.add and type(a) is type(b) and isinstance(a, seq):
        return type(a)(a.items + b.items)
    if fn is operator.mul and isinstance(a, seq) and b.is_constant():
        return type(a)(a.items * b.as_constant())
    if fn is operator.mul and isinstance(b, seq) and a.is_constant():
        return type(b)(b.items * a.as_constant())
    if fn in _SET_OPS and (isinstance(a, SetVariable) or isinstance(b, SetVariable)):
        values = [set(unpack_constant_key(i) for i in v.iterate(tx)) for v in (a, b)]
        if not all(isinstance(v, (SetVariable, ConstantVariable)) for v in (a, b)):
            raise Unsupported("unsupported_object", f"operator {fn.__name__} on {a!r} and {b!r}")
        out = SetVariable()
        out.values = fn(*values)
        return out
    if isinstance(a, DictVariable) and isinstance(b, DictVariable):
        result = a.dict_op(tx, fn, b)   # d1 | d2, Counter arithmetic
        if result is not None:
            return result
    if fn in (operator.eq, operator.ne):
        same = structurally_equal(tx, a, b)
        return ConstantVariable(same if fn is operator.eq else not same)
    raise Unsupported("unsupported_object", f"operator {fn.__name__} on {a!r} and {b!r}")


def structurally_equal(tx, a: Variable, b: Variable) -> bool:
    """``a == b`` for containers of constants (element identity first, as
    CPython's container comparison does)."""
    containers = (ListVariable, TupleVariable, DictVariable)
    if a is b:
        return True
    a, b = (tx.wrap_result(v.value) if isinstance(v, ConstantVariable) and type(v.value) is tuple
            else v for v in (a, b))
    if isinstance(a, containers) or isinstance(b, containers):
        if isinstance(a, DictVariable) and isinstance(b, DictVariable) and \
                not (type(a) is DictVariable and type(b) is DictVariable):
            # OrderedDicts compare in order, a Counter's missing keys count 0...
            raise Unsupported("unsupported_object", f"comparing {a!r} with {b!r}")
        kinds = [ListVariable if isinstance(v, ListVariable) else TupleVariable
                 if isinstance(v, TupleVariable) else type(v) for v in (a, b)]
        if kinds[0] is not kinds[1]:  # a namedtuple equals a tuple of equal items
            if isinstance(a, containers + (ConstantVariable,)) and \
                    isinstance(b, containers + (ConstantVariable,)):
                return False  # e.g. [1] == (1,) and [] == None
            raise Unsupported("unsupported_object", f"comparing {a!r} with {b!r}")
        if isinstance(a, DictVariable):
            if list(a.items) != list(b.items) and set(a.items) != set(b.items):
                return False
            return all(structurally_equal(tx, a.items[k], b.items[k]) for k in a.items)
        if len(a.items) != len(b.items):
            return False
        return all(structurally_equal(tx, x, y) for x, y in zip(a.items, b.items))
    a.value_needed()   # == of a lazy number read from a tensor: the break at its .item()
    b.value_needed()
    if a.is_constant() and b.is_constant():
        try:
            return bool(a.as_constant() == b.as_constant())
        except Exception as e:
            raise UserCodeRaises(f"== raises {type(e).__name__}: {e}") from e
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        raise Unsupported("data_dependent", "comparing containers of tensors compares their values")
    raise Unsupported("unsupported_object", f"comparing {a!r} with {b!r}")
