"""Standard-library objects made inside the traced code: ``collections``'
``deque``, ``OrderedDict``, ``defaultdict`` and ``Counter``; ``operator``'s
``itemgetter``, ``attrgetter`` and ``methodcaller``; a bare ``object()``
(a sentinel).  ``make_instance`` is what ``ClassVariable.call`` asks for a
class whose instances are modelled here (or in ``flow.py``: ``contextlib``).

They exist only inside the trace: each rebuilds itself in the entry when it
leaves the function (``reconstruct``), never mutating an object of the caller.
"""
from __future__ import annotations

import collections
import enum
import heapq
import operator
import types

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from ..sources import AttrSource, ItemSource, is_safe_key
from .base import ConstantVariable, Variable
from .callables import BoundBuiltinMethod
from .containers import (DictVariable, IteratorVariable, ListVariable, TupleVariable,
                         unpack_constant_key)
from .flow import make_context_manager
from .itertools_calls import make_itertools
from .nditer import make_nditer
from .registry import wrap_rule

__all__ = ["make_instance", "DequeVariable", "OrderedDictVariable", "DefaultDictVariable",
           "CounterVariable", "OperatorGetterVariable", "SentinelVariable"]


class _DictKind(DictVariable):
    """A ``dict`` subclass made in the function: a dict that rebuilds itself
    as its class (``rb.const(cls)(...)``)."""
    __slots__ = ()
    dict_type: type = dict

    def python_type(self) -> type:
        return self.dict_type

    def make_expr(self, rb) -> str:
        return f"{rb.const(self.dict_type)}()"

    def empty_like(self) -> DictVariable:
        return type(self)({})

    def reconstruct(self, rb) -> str:
        if self.source is not None:   # an argument's (mutations are replayed into it)
            return rb.source(self)
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)
            rb.emit(f"{name} = {self.make_expr(rb)}")
            items = ", ".join(f"{rb.constant(k)}: {rb.expr(v)}" for k, v in self.items.items())
            rb.emit(f"{name}.update({{{items}}})")   # (the class's own update keeps its order)
        return name


class OrderedDictVariable(_DictKind):
    """``collections.OrderedDict()``, with ``move_to_end`` and ``popitem(last=)``."""
    __slots__ = ()
    dict_type = collections.OrderedDict

    def getattr(self, tx, name: str) -> Variable:
        if name in ("move_to_end", "popitem"):
            return StdlibMethodVariable(self, name)
        return super().getattr(tx, name)

    def method(self, tx, name, args, kwargs) -> Variable:
        last = kwargs.get("last", args[1] if name == "move_to_end" and len(args) > 1
                          else args[0] if name == "popitem" and args else ConstantVariable(True))
        last = bool(last.as_constant())
        tx.mutate(self)
        if name == "move_to_end":
            key = unpack_constant_key(args[0])
            if key not in self.items:
                raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
            value = self.items.pop(key)
            if last:
                self.items[key] = value
            else:
                self.items = {key: value, **self.items}
            return ConstantVariable(None)
        if not self.items:
            raise UserCodeRaises("KeyError: 'dictionary is empty'", exc=KeyError("dictionary is empty"))
        key = next(reversed(self.items)) if last else next(iter(self.items))
        return TupleVariable([ConstantVariable(key), self.items.pop(key)])


class DefaultDictVariable(_DictKind):
    """``collections.defaultdict(factory)``: a missing key is the factory's
    call (inlined), stored."""
    __slots__ = ("factory",)
    dict_type = collections.defaultdict

    def __init__(self, factory: Variable, items: dict, source=None):
        super().__init__(items, source)
        self.factory = factory

    def rebuilt_from(self) -> list[Variable]:
        return [*self.items.values(), self.factory]

    def make_expr(self, rb) -> str:
        return f"{rb.const(self.dict_type)}({rb.expr(self.factory)})"

    def empty_like(self) -> DictVariable:
        return DefaultDictVariable(self.factory, {})

    def getitem(self, tx, index: Variable) -> Variable:
        key = unpack_constant_key(index)
        if key not in self.items:
            if self.factory.is_none():
                raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
            tx.mutate(self)
            self.items[key] = self.factory.call(tx, [], {})
        return self.items[key]


class CounterVariable(_DictKind):
    """``collections.Counter(iterable or mapping)`` of constant keys and counts:
    a missing key counts 0, ``most_common`` and ``update`` as ``Counter``'s."""
    __slots__ = ()
    dict_type = collections.Counter

    def getitem(self, tx, index: Variable) -> Variable:
        key = unpack_constant_key(index)
        return self.items.get(key, ConstantVariable(0))

    def count(self, tx, source: Variable) -> None:
        if isinstance(source, DictVariable):
            pairs = list(source.items.items())
        else:
            pairs = [(unpack_constant_key(k), ConstantVariable(1)) for k in source.iterate(tx)]
        for key, n in pairs:
            if not n.is_constant():
                raise Unsupported("unsupported_object", "a Counter with counts that are not constants")
            have = self.items.get(key, ConstantVariable(0)).as_constant()
            self.items[key] = ConstantVariable(have + n.as_constant())

    def counts(self, what: str) -> collections.Counter:
        """A real ``Counter`` of the (constant) counts."""
        if not all(v.is_constant() for v in self.items.values()):
            raise Unsupported("unsupported_object", f"{what} of a Counter with counts that are not "
                                                    f"constants")
        return collections.Counter({k: v.as_constant() for k, v in self.items.items()})

    def dict_op(self, tx, fn, other: DictVariable) -> Variable | None:
        """``+``, ``-``, ``|``, ``&`` of two Counters: Counter's own arithmetic on
        the constant counts."""
        if fn not in _COUNTER_OPS or not isinstance(other, CounterVariable):
            return None
        result = CounterVariable({})
        for k, n in fn(self.counts(f"operator {fn.__name__}"), other.counts(fn.__name__)).items():
            result.items[k] = ConstantVariable(n)
        return result

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        """``c += d`` (and ``-=``, ``|=``, ``&=``): in place, as Counter's ``__iadd__``..."""
        if fn not in _COUNTER_OPS or not isinstance(other, CounterVariable):
            return super().inplace_op(tx, fn, other)
        counts = self.counts(f"operator {fn.__name__}")
        counts = _COUNTER_OPS[fn](counts, other.counts(fn.__name__))
        tx.mutate(self)
        self.items = {k: ConstantVariable(n) for k, n in counts.items()}
        return self

    def getattr(self, tx, name: str) -> Variable:
        if name in ("most_common", "update", "total"):
            return StdlibMethodVariable(self, name)
        return super().getattr(tx, name)

    def method(self, tx, name, args, kwargs) -> Variable:
        if kwargs:
            raise Unsupported("unsupported_call", f"Counter.{name} with keyword arguments")
        if name == "update":
            tx.mutate(self)
            for a in args:
                self.count(tx, a)
            return ConstantVariable(None)
        counts = {k: v.as_constant() for k, v in self.items.items()}
        if name == "total":
            return ConstantVariable(sum(counts.values()))
        n = args[0].as_constant() if args else None
        pairs = (sorted(counts.items(), key=operator.itemgetter(1), reverse=True) if n is None
                 else heapq.nlargest(n, counts.items(), key=operator.itemgetter(1)))
        return ListVariable([TupleVariable([ConstantVariable(k), ConstantVariable(c)]) for k, c in pairs])


_COUNTER_OPS = {operator.add: operator.iadd, operator.sub: operator.isub,
                operator.or_: operator.ior, operator.and_: operator.iand}


class DequeVariable(Variable):
    """``collections.deque(iterable, maxlen)``: items and ``maxlen`` (appends
    past it drop from the other end).  A deque of the frame (``source``) is
    written back after the graph when the trace changed it."""
    __slots__ = ("items", "maxlen", "mutated")

    def __init__(self, items, maxlen: int | None, source=None):
        super().__init__(source)
        self.maxlen = maxlen
        self.mutated = False
        self.items: list[Variable] = []
        for item in items:
            self._push(item, left=False)

    def _push(self, item, left: bool) -> None:
        if self.maxlen == 0:
            return
        if left:
            self.items.insert(0, item)
            if self.maxlen is not None and len(self.items) > self.maxlen:
                self.items.pop()
        else:
            self.items.append(item)
            if self.maxlen is not None and len(self.items) > self.maxlen:
                self.items.pop(0)

    def python_type(self) -> type:
        return collections.deque

    def children(self) -> list[Variable]:
        return list(self.items)

    def truth(self, tx) -> bool:
        return bool(self.items)

    def length(self) -> int:
        return len(self.items)

    def iterate(self, tx):
        return list(self.items)

    def get_iter(self, tx):
        return IteratorVariable(list(self.items))

    def contains(self, tx, item: Variable) -> bool:
        return any(tx.structurally_equal(i, item) for i in self.items)

    def getitem(self, tx, index: Variable) -> Variable:
        key = index.as_constant() if index.is_constant() else None
        if not isinstance(key, int) or isinstance(key, bool):
            raise Unsupported("unsupported_object", f"deque index {index!r}")
        try:
            return self.items[key]
        except IndexError as e:
            raise UserCodeRaises("IndexError: deque index out of range",
                                 exc=IndexError("deque index out of range")) from e

    def getattr(self, tx, name: str) -> Variable:
        if name in ("append", "appendleft", "pop", "popleft", "extend", "extendleft", "clear",
                    "rotate", "count"):
            return StdlibMethodVariable(self, name)
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        return super().getattr(tx, name)

    def is_mutable(self) -> bool:
        return True

    def write_back(self, rb) -> list[str]:
        items = "".join(rb.expr(i) + ", " for i in self.items)
        return [f"    {rb.source(self)}.clear()", f"    {rb.source(self)}.extend(({items}))"]

    def method(self, tx, name, args, kwargs) -> Variable:
        if kwargs:
            raise Unsupported("unsupported_call", f"deque.{name} with keyword arguments")
        if name != "count":
            tx.mutate(self)
        if name in ("append", "appendleft"):
            self._push(args[0], left=name == "appendleft")
        elif name in ("extend", "extendleft"):
            for item in args[0].iterate(tx):
                self._push(item, left=name == "extendleft")
        elif name in ("pop", "popleft"):
            if not self.items:
                raise UserCodeRaises("IndexError: pop from an empty deque",
                                     exc=IndexError("pop from an empty deque"))
            return self.items.pop() if name == "pop" else self.items.pop(0)
        elif name == "clear":
            self.items.clear()
        elif name == "rotate":
            n = args[0].as_constant() if args else 1
            if self.items:
                n %= len(self.items)
                self.items[:] = self.items[-n:] + self.items[:-n] if n else self.items
        elif name == "count":
            return ConstantVariable(sum(tx.structurally_equal(i, args[0]) for i in self.items))
        return ConstantVariable(None)

    def reconstruct(self, rb) -> str:
        if self.source is not None:
            return rb.source(self)
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)
            rb.emit(f"{name} = {rb.const(collections.deque)}(maxlen={self.maxlen!r})")
            rb.emit(f"{name}.extend(({''.join(rb.expr(i) + ', ' for i in self.items)}))")
        return name

    def __repr__(self) -> str:
        return f"Deque{self.items!r}"


class StdlibMethodVariable(BoundBuiltinMethod):
    """A bound method of one of the Variables above (``obj.method(...)``): a
    bound builtin method whose call the object runs itself."""
    __slots__ = ()

    def call(self, tx, args, kwargs):
        return self.obj.method(tx, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"{self.obj!r}.{self.name}"


class OperatorGetterVariable(Variable):
    """``operator.itemgetter(*items)``, ``attrgetter(*names)`` (dotted names
    too) and ``methodcaller(name, *args, **kwargs)``: calling it is the
    subscripts, attribute loads or method call it stands for."""
    __slots__ = ("getter", "args", "kwargs")

    def __init__(self, cls: type, args, kwargs):
        super().__init__(None)
        self.getter = cls
        self.args = list(args)
        self.kwargs = dict(kwargs)

    def python_type(self) -> type:
        return self.getter

    def call(self, tx, args, kwargs):
        if kwargs or len(args) != 1:
            raise UserCodeRaises(f"TypeError: {self.getter.__name__} expected 1 argument")
        (obj,) = args
        if self.getter is operator.methodcaller:
            name = self.args[0].as_constant()
            return tx.getattr(obj, name).call(tx, self.args[1:], self.kwargs)
        if self.getter is operator.itemgetter:
            got = [obj.getitem(tx, i) for i in self.args]
        else:
            got = []
            for dotted in self.args:
                value = obj
                for part in dotted.as_constant().split("."):
                    value = tx.getattr(value, part)
                got.append(value)
        return got[0] if len(got) == 1 else TupleVariable(got)

    def __repr__(self) -> str:
        return f"{self.getter.__name__}{self.args!r}"


class SentinelVariable(Variable):
    """A bare ``object()`` made in the function: only its identity matters."""
    __slots__ = ()

    def python_type(self) -> type:
        return object

    def truth(self, tx) -> bool:
        return True

    def reconstruct(self, rb) -> str:
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)
            rb.emit(f"{name} = __object()")
        return name

    def __repr__(self) -> str:
        return "object()"


def _is_callable(v: Variable) -> bool:
    try:
        return any("__call__" in vars(klass) for klass in v.python_type().__mro__)
    except Unsupported:
        return True   # (a Variable that cannot tell its type: called later, it says why)


def _filled(tx, d: DictVariable, args, kwargs) -> DictVariable:
    """A new dict of a kind, filled as ``dict(*args, **kwargs)`` fills one."""
    if len(args) > 1:
        message = f"{d.python_type().__name__} expected at most 1 argument, got {len(args)}"
        raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
    if args:
        d.update_from(tx, args[0])
    d.items.update(kwargs)
    return d


@wrap_rule(62)
def _wrap_dict_kind(tr, value, source) -> Variable | None:
    """An ``OrderedDict``, ``defaultdict`` (its factory read through it) or
    ``Counter`` of the frame with str/int/tuple keys: its values, guarded by
    its type and keys (mutations are written back)."""
    t = type(value)
    if t not in (collections.OrderedDict, collections.defaultdict, collections.Counter):
        return None
    if not all(is_safe_key(k) for k in value):
        raise Unsupported("unsupported_object", f"{t.__name__} with keys that are not str/int/tuple")
    tr.guards.dict_keys(source, value)
    items = {k: tr.wrap(v, ItemSource(source, k)) for k, v in value.items()}
    if t is collections.OrderedDict:
        return OrderedDictVariable(items, source)
    if t is collections.Counter:
        return CounterVariable(items, source)
    factory = tr.wrap(value.default_factory, AttrSource(source, "default_factory"))
    return DefaultDictVariable(factory, items, source)


@wrap_rule(64)
def _wrap_deque(tr, value, source) -> Variable | None:
    """A ``collections.deque`` of the frame: its items (guarded by type and
    length) and its ``maxlen`` (guarded by value)."""
    if type(value) is not collections.deque:
        return None
    tr.guards.type_and_len(source, value)
    tr.guards.constant(AttrSource(source, "maxlen"), value.maxlen)
    items = [tr.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)]
    deque = DequeVariable((), value.maxlen, source)
    deque.items = items
    return deque


def _plain_enum(cls: type) -> bool:
    """No Python dunder method of the user's (``__eq__``, ``__bool__``,
    ``__str__``...) would run when a member is compared, tested or shown at
    trace time (a member's ``__init__`` ran when the class was made)."""
    for klass in cls.__mro__:
        if klass.__module__ in ("enum", "builtins"):
            continue
        for name, v in vars(klass).items():
            if name.startswith("__") and name.endswith("__") and name != "__init__" and \
                    isinstance(v, types.FunctionType) and v.__module__ != "enum":
                return False
    return True


@wrap_rule(88, static=True)
def _wrap_enum_member(tr, value, source) -> Variable | None:
    """An ``enum`` member (guarded by identity) of a class without Python
    dunders: a constant whose ``name`` and ``value`` fold; an ``IntEnum``'s
    arithmetic is its int's."""
    if isinstance(value, enum.Enum) and _plain_enum(type(value)):
        return ConstantVariable(value, source)
    return None


def _enum_lookup(tx, cls, args, kwargs) -> Variable | None:
    """``Color(2)``: the member of that value, found at trace time (the lookup
    is pure unless the class defines its own ``_missing_`` or metaclass call)."""
    if type(cls).__call__ is not enum.EnumMeta.__call__ or kwargs or len(args) != 1 \
            or not args[0].is_constant():
        return None
    missing = getattr(cls._missing_, "__func__", None)
    if missing not in (enum.Enum._missing_.__func__, enum.Flag._missing_.__func__):
        return None
    for name in ("_missing_", "__new__"):
        static = next(vars(k)[name] for k in cls.__mro__ if name in vars(k))
        tx.tr.guards.class_attr(cls, name, static)
    try:
        member = cls(args[0].as_constant())
    except Exception as e:  # noqa: BLE001 - Python's own ValueError, raised natively too
        raise UserCodeRaises(f"{cls.__name__}() raises {type(e).__name__}: {e}", exc=e) from e
    return tx.wrap_static(member)


def make_instance(tx, cls: type, args, kwargs) -> Variable | None:
    """The Variable of ``cls(*args, **kwargs)`` for a class modelled here or in
    ``flow.py`` (None: not one of them)."""
    if cls is object and not args and not kwargs:
        return SentinelVariable()
    if isinstance(cls, enum.EnumMeta):
        return _enum_lookup(tx, cls, args, kwargs)
    if cls in (operator.itemgetter, operator.attrgetter, operator.methodcaller):
        if not args or (kwargs and cls is not operator.methodcaller) or not args[0].is_constant():
            raise UserCodeRaises(f"TypeError: bad arguments for {cls.__name__}")
        if cls is operator.attrgetter and not all(
                a.is_constant() and isinstance(a.as_constant(), str) for a in args):
            raise UserCodeRaises("TypeError: attribute name must be a string")
        return OperatorGetterVariable(cls, args, kwargs)
    if cls is collections.deque:
        if set(kwargs) - {"iterable", "maxlen"} or len(args) > 2:
            raise UserCodeRaises("TypeError: bad arguments for deque")
        iterable = args[0] if args else kwargs.get("iterable")
        maxlen = args[1] if len(args) > 1 else kwargs.get("maxlen", ConstantVariable(None))
        if not maxlen.is_constant():
            raise Unsupported("unsupported_object", "deque(maxlen=) that is not a constant")
        return DequeVariable(iterable.iterate(tx) if iterable is not None else (),
                             maxlen.as_constant())
    if cls is collections.OrderedDict:
        return _filled(tx, OrderedDictVariable({}), args, kwargs)
    if cls is collections.defaultdict:
        factory = args[0] if args else ConstantVariable(None)
        if not factory.is_none() and not _is_callable(factory):
            message = "first argument must be callable or None"
            raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
        return _filled(tx, DefaultDictVariable(factory, {}), args[1:], kwargs)
    if cls is collections.Counter and len(args) <= 1:
        counter = CounterVariable({})
        if args:
            counter.count(tx, args[0])
        if kwargs:
            counter.count(tx, DictVariable(kwargs))
        return counter
    if cls is np.nditer:
        return make_nditer(tx, list(args), dict(kwargs))
    made = make_itertools(tx, cls, args, kwargs)   # chain, islice, groupby... (lazy)
    if made is not None:
        return made
    return make_context_manager(tx, cls, args, kwargs)

