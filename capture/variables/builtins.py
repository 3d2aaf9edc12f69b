"""Builtins and ``math`` functions on Variables.

On constants they run at trace time (they are pure); on containers and
tensors they are modelled (``len``, ``isinstance``, ``zip``, ``enumerate``...);
anything with effects (``print``, ``input``, ``open``) is unsupported.
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import types

from ..errors import HINTS, Unsupported, UserCodeRaises
from ..rebuild import iter_at
from .base import ConstantVariable, TensorVariable, Variable
from .containers import (DictVariable, DictViewVariable, GeneratorVariable, IteratorVariable,
                         LazyIteratorVariable,
                         ListVariable, SetVariable, SliceVariable, TupleVariable, constant_value,
                         is_constant_value, unpack_constant_key)
from .container_methods import extreme_item, sort_items
from .flow import ExceptionVariable
from .itertools_calls import itertools_function
from .lazy_scalars import lazy_conversion
from .objects import ObjectVariable, instance_dict
from .ordering import cmp_to_key
from .registry import HOOKS
from .scalars import scalar_builtin_call
from .stdlib import DequeVariable
from .warn_calls import WARN_FUNCTIONS, warnings_warn

__all__ = ["call_builtin", "SUPPORTED_BUILTINS", "EFFECTFUL_BUILTINS", "OBJECT_SLOTS"]

EFFECTFUL_BUILTINS = {builtins.print, builtins.input, builtins.open, builtins.exec, builtins.eval,
                      builtins.breakpoint, builtins.globals, builtins.locals, builtins.vars,
                      builtins.id, builtins.hash, builtins.delattr}


def _const_args(args, kwargs):
    if all(is_constant_value(a) for a in args) and all(is_constant_value(v) for v in kwargs.values()):
        return [constant_value(a) for a in args], {k: constant_value(v) for k, v in kwargs.items()}
    return None


def _run_constant(tx, fn, args, kwargs):
    """Run a pure function on constants at trace time; its result becomes
    Variables (new lists and arrays are new objects on every call)."""
    try:
        result = fn(*args, **kwargs)
    except Exception as e:  # the native run raises it again, at the user's line
        raise UserCodeRaises(f"{getattr(fn, '__name__', fn)}() raises "
                             f"{type(e).__name__}: {e}", exc=e) from e
    return tx.wrap_result(result)


def _items(tx, var: Variable) -> list[Variable]:
    return var.iterate(tx)


def _len(tx, args, kwargs):
    (x,) = args
    if isinstance(x, (ListVariable, TupleVariable, DictVariable)):
        return ConstantVariable(len(x.items))
    if isinstance(x, DictViewVariable):
        return ConstantVariable(len(x.d.items))
    if isinstance(x, SetVariable):
        return ConstantVariable(len(x.values))
    if isinstance(x, DequeVariable):
        return ConstantVariable(x.length())
    if isinstance(x, TensorVariable):
        if not x.shape:
            raise UserCodeRaises("len() of a 0-d tensor")
        return ConstantVariable(x.shape[0])
    if x.is_constant():
        return _run_constant(tx, len, [x.as_constant()], {})
    if isinstance(x, ObjectVariable) and isinstance(getattr(type(x.obj), "__len__", None),
                                                    types.FunctionType):
        return x.getattr(tx, "__len__").call(tx, [], {})  # a Python __len__: inlined
    length = getattr(x, "length", None)   # an instance made in the function (instances.py)
    if length is not None:
        return length(tx)
    raise Unsupported("unsupported_object", f"len() of {x!r}")


def _isinstance(tx, args, kwargs):
    obj, cls = args
    return ConstantVariable(isinstance_of(obj.python_type(), _classes(tx, cls)))


def _classes(tx, v: Variable):
    if isinstance(v, TupleVariable):
        return tuple(_classes(tx, i) for i in v.items)
    value = v.as_constant() if v.is_constant() else tx.real_value(v)
    if not isinstance(value, (type, tuple)):
        raise UserCodeRaises("TypeError: isinstance() arg 2 must be a type or tuple of types")
    return value


def isinstance_of(t: type, classes) -> bool:
    if isinstance(classes, tuple):
        return any(isinstance_of(t, c) for c in classes)
    return issubclass(t, classes)


def _type(tx, args, kwargs):
    (x,) = args
    return tx.wrap_static(x.python_type())


def _range(tx, args, kwargs):
    c = _const_args(args, kwargs)
    if c is None:
        raise Unsupported("data_dependent", "range() bounds that are not Python constants",
                          HINTS["range"] if any(isinstance(a, TensorVariable) for a in args) else "")
    return _run_constant(tx, range, *c)


def _enumerate(tx, args, kwargs):
    start = kwargs.get("start", args[1] if len(args) > 1 else ConstantVariable(0)).as_constant()
    try:   # CPython's checks (an int, by __index__), then its counter: C ints, never a bool
        enumerate((), start)
        start = operator.index(start)
    except Exception as e:  # noqa: BLE001 - the native run raises it again
        raise UserCodeRaises(f"enumerate() raises {type(e).__name__}: {e}", exc=e) from e
    it = args[0].get_iter(tx)
    count = [start]

    def gen(tx):
        item = it.next(tx)
        if item is None:
            return None
        count[0] += 1
        return TupleVariable([ConstantVariable(count[0] - 1), item])

    def remake(rb):
        return f"{rb.const(enumerate)}({rb.expr(it)}, {rb.constant(count[0])})"
    return LazyIteratorVariable(gen, enumerate, remake, [it])


def _zip(tx, args, kwargs):
    strict = kwargs.get("strict", ConstantVariable(False)).as_constant()
    its = [a.get_iter(tx) for a in args]

    def gen(tx):
        row = []
        for k, it in enumerate(its):
            item = it.next(tx)
            if item is None:
                if strict and (k > 0 or any(o.next(tx) is not None for o in its[1:])):
                    raise UserCodeRaises("ValueError: zip() arguments have different lengths")
                return None
            row.append(item)
        return TupleVariable(row)

    def remake(rb):   # the iterators have been advanced exactly as CPython's zip does
        inner = "".join(rb.expr(it) + ", " for it in its)
        return f"{rb.const(zip)}({inner}{'strict=True' if strict else ''})"
    return LazyIteratorVariable(gen, zip, remake, its)


def _map(tx, args, kwargs):
    if kwargs or len(args) < 2:
        raise UserCodeRaises("map() must have at least two arguments")
    fn, its = args[0], [a.get_iter(tx) for a in args[1:]]

    def gen(tx):
        row = []
        for it in its:
            item = it.next(tx)
            if item is None:
                return None
            row.append(item)
        return fn.call(tx, row, {})

    def remake(rb):
        inner = "".join(", " + rb.expr(it) for it in its)
        return f"{rb.const(map)}({rb.expr(fn)}{inner})"
    return LazyIteratorVariable(gen, map, remake, [fn, *its])


def _filter(tx, args, kwargs):
    fn, it = args[0], args[1].get_iter(tx)
    keep_truthy = fn.is_constant() and fn.as_constant() is None

    def gen(tx):
        while True:
            item = it.next(tx)
            if item is None:
                return None
            test = item if keep_truthy else fn.call(tx, [item], {})
            if tx.truth(test):
                return item

    def remake(rb):
        return f"{rb.const(filter)}({rb.expr(fn)}, {rb.expr(it)})"
    return LazyIteratorVariable(gen, filter, remake, [fn, it])


def _reversed(tx, args, kwargs):
    (x,) = args
    t = x.python_type()
    if isinstance(x, IteratorVariable) or not (
            hasattr(t, "__reversed__") or (hasattr(t, "__getitem__") and hasattr(t, "__len__"))):
        message = f"'{t.__name__}' object is not reversible"   # a set, a generator...
        raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
    items = list(reversed(_items(tx, x)))
    if isinstance(x, ListVariable):
        # CPython's reversed(lst) reads the list when asked (list_reverseiterator)
        size = len(x.items)

        def remake(rb, pos):
            if len(x.items) != size:
                raise Unsupported("unsupported_object", "returning or storing reversed() of a "
                                                        "list whose length changed")
            return f"{rb.const(iter_at)}({rb.const(reversed)}({rb.expr(x)}), {size - 1 - pos})"
        return IteratorVariable(items, remake)
    return IteratorVariable(items)


def _iter(tx, args, kwargs):
    (x,) = args
    return x.get_iter(tx)


def _next(tx, args, kwargs):
    it = args[0]
    if not isinstance(it, IteratorVariable):
        raise Unsupported("unsupported_object", f"next() on {it!r}")
    item = it.next(tx)
    if item is None:
        if len(args) > 1:
            return args[1]
        stop = it.stop_iteration() if isinstance(it, GeneratorVariable) else StopIteration()
        raise UserCodeRaises("next() on an exhausted iterator raises StopIteration", exc=stop)
    return item


def _list(tx, args, kwargs):
    return ListVariable(_items(tx, args[0]) if args else [])


def _set(tx, args, kwargs):
    return SetVariable(_items(tx, args[0]) if args else [])


def _frozenset(tx, args, kwargs):
    """``frozenset(iterable)`` of hashable constants: a constant."""
    if kwargs or len(args) > 1:
        return _run_constant(tx, frozenset, [()] * len(args), {k: None for k in kwargs})  # TypeError
    items = _items(tx, args[0]) if args else []
    if not all(i.is_constant() for i in items):
        raise Unsupported("unsupported_object", "frozenset() of values that are not constants")
    return _run_constant(tx, frozenset, [[i.as_constant() for i in items]], {})


_NO_OBJECT = object()
# singletons whose id() is the same in the trace and the native run
_SINGLETONS = (None, True, False, Ellipsis, NotImplemented)


def _id(tx, args, kwargs):
    """``id(obj)`` of an object of the frame (reached through a source): its
    real id, the object guarded by identity, so the value holds for every call
    the entry serves (``Module.named_parameters``' ``seen`` set).  An object
    made in the function has the native run's own address: refused."""
    if len(args) != 1 or kwargs:
        return _run_constant(tx, id, [None] * len(args), {k: None for k in kwargs})  # TypeError
    v = args[0]
    if v.is_constant() and any(v.as_constant() is s for s in _SINGLETONS):
        return ConstantVariable(id(v.as_constant()))
    obj = tx.tr.object_of(v, _NO_OBJECT) if v.source is not None else _NO_OBJECT
    if obj is _NO_OBJECT:
        raise Unsupported("unsupported_call", "id() of an object made in the function (its "
                                              "address is the native run's)")
    tx.tr.guards.identity(v.source, obj)
    return ConstantVariable(id(obj))


def _vars(tx, args, kwargs):
    """``vars(obj)`` (``vars()`` reads the frame's locals: refused)."""
    if len(args) != 1 or kwargs:
        raise Unsupported("unsupported_call", "vars() has effects outside the graph")
    return instance_dict(tx, args[0])


def _tuple(tx, args, kwargs):
    return TupleVariable(_items(tx, args[0]) if args else [])


def _dict(tx, args, kwargs):
    items = {}
    if args:
        src = args[0]
        if isinstance(src, DictVariable):
            items.update(src.items)
        else:
            for pair in _items(tx, src):
                k, v = _items(tx, pair)
                items[unpack_constant_key(k)] = v
    items.update(kwargs)
    return DictVariable(items)


def _minmax(fn):
    def handler(tx, args, kwargs):
        values = _items(tx, args[0]) if len(args) == 1 else list(args)
        key = kwargs.get("key")
        if key is not None and not key.is_none() and set(kwargs) <= {"key", "default"}:
            if not values:
                if "default" in kwargs and len(args) == 1:
                    return kwargs["default"]
                raise UserCodeRaises(f"{fn.__name__}() of an empty sequence")
            return extreme_item(tx, values, key, fn)
        if all(v.is_constant() for v in values) and all(v.is_constant() for v in kwargs.values()):
            c_kwargs = {k: v.as_constant() for k, v in kwargs.items()}
            if len(args) == 1:
                return _run_constant(tx, fn, [[v.as_constant() for v in values]], c_kwargs)
            return _run_constant(tx, fn, [v.as_constant() for v in values], c_kwargs)
        if any(isinstance(v, TensorVariable) for v in values):
            raise Unsupported("data_dependent", f"{fn.__name__}() over tensors compares their values; "
                                                f"use frame.maximum / frame.max")
        if values and (not kwargs or (set(kwargs) == {"default"} and len(args) == 1)):
            return extreme_item(tx, values, None, fn)   # user objects by their __lt__ / __gt__
        raise Unsupported("unsupported_call", f"{fn.__name__}() of non-constant values")
    return handler


def _sum(tx, args, kwargs):
    c = _const_args(args, kwargs)
    if c is not None:
        return _run_constant(tx, sum, *c)
    values = _items(tx, args[0])
    total = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
    for v in values:
        total = tx.binary_op(operator.add, total, v)
    return total


def _abs(tx, args, kwargs):
    (x,) = args
    if isinstance(x, TensorVariable):
        return tx.binary_or_unary(operator.abs, x)
    return _run_constant(tx, abs, [x.as_constant()], {})


def _scalar_conversion(fn):
    def handler(tx, args, kwargs):
        if args and isinstance(args[0], TensorVariable):
            lazy = lazy_conversion(tx, fn, args[0], args[1:], kwargs) if fn in (float, int) else None
            if lazy is not None:   # made after the graph (lazy_scalars.py)
                return lazy
            raise Unsupported("data_dependent", f"{fn.__name__}() of a tensor reads its value",
                              HINTS["format"] if fn in (str, repr) else HINTS["convert"])
        if args:
            args[0].value_needed()   # a lazy number read from a tensor: its .item()'s break
        if fn in (str, repr) and len(args) == 1 and not kwargs and isinstance(args[0], ExceptionVariable):
            return ConstantVariable(args[0].text(fn))
        text = getattr(args[0], "text", None) if fn in (str, repr) and len(args) == 1 and not kwargs \
            else None   # an instance made in the function, of a class with a Python __repr__
        if text is not None and not isinstance(args[0], ExceptionVariable):
            result = text(tx, fn)
            if result is not None:
                return result
        c = _const_args(args, kwargs)
        if c is None:
            raise Unsupported("unsupported_object", f"{fn.__name__}() of {args!r}")
        return _run_constant(tx, fn, *c)
    return handler


def _bool(tx, args, kwargs):
    if not args:
        return ConstantVariable(False)
    return ConstantVariable(tx.truth(args[0]))


def _not_attribute_error(e: UserCodeRaises) -> bool:
    """The attribute load raised an exception the trace knows, other than
    ``AttributeError`` (a property raising ``ValueError``): ``getattr``'s
    default and ``hasattr`` do not catch it."""
    if e.exc is None:
        return False
    raised = e.exc.python_type() if isinstance(e.exc, Variable) else type(e.exc)
    return not issubclass(raised, AttributeError)


def _getattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    try:
        return tx.getattr(obj, name)
    except UserCodeRaises as e:
        if len(args) > 2 and not _not_attribute_error(e):
            return args[2]
        raise


def _setattr(tx, args, kwargs):
    """``setattr(obj, name, value)`` is ``obj.name = value`` (STORE_ATTR)."""
    if len(args) != 3 or kwargs:
        raise UserCodeRaises(f"TypeError: setattr expected 3 arguments, got {len(args)}")
    obj, name, value = args
    if not name.is_constant() or type(name.as_constant()) is not str:
        raise UserCodeRaises("TypeError: attribute name must be string")
    obj.setattr(tx, name.as_constant(), value)
    return ConstantVariable(None)


def _hasattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    try:
        tx.getattr(obj, name)
        return ConstantVariable(True)
    except UserCodeRaises as e:
        if _not_attribute_error(e):
            raise
        return ConstantVariable(False)


def _sorted(tx, args, kwargs):
    values = _items(tx, args[0])
    if all(is_constant_value(v) for v in values) and all(is_constant_value(v) for v in kwargs.values()):
        return _run_constant(tx, sorted, [[constant_value(v) for v in values]],
                             {k: constant_value(v) for k, v in kwargs.items()})
    if set(kwargs) <= {"key", "reverse"} and len(args) == 1:
        reverse = kwargs.get("reverse", ConstantVariable(False))
        if reverse.is_constant():
            return ListVariable(sort_items(tx, values, kwargs.get("key"), bool(reverse.as_constant()),
                                           "sorted"))
    if any(isinstance(v, TensorVariable) for v in values):
        raise Unsupported("data_dependent", "sorted() over tensors compares their values")
    raise Unsupported("unsupported_call", "sorted() over non-constant values")


def _all_any(fn):
    stop_at = fn is any  # any() stops at the first true item, all() at the first false one

    def handler(tx, args, kwargs):
        it = args[0].get_iter(tx)
        while True:
            item = it.next(tx)
            if item is None:
                return ConstantVariable(not stop_at)
            if tx.truth(item) is stop_at:
                return ConstantVariable(stop_at)
    return handler


def _slice(tx, args, kwargs):
    return SliceVariable(args)


def _callable(tx, args, kwargs):
    """``callable(x)`` is whether ``type(x)`` has ``__call__``: asked of the Python
    type every Variable knows (the real object's, where it has one; a Variable
    that cannot tell raises Unsupported)."""
    if kwargs or len(args) != 1:
        raise UserCodeRaises(f"TypeError: callable() takes exactly one argument "
                             f"({len(args) + len(kwargs)} given)")
    return ConstantVariable(instances_callable(args[0].python_type()))


def instances_callable(t: type) -> bool:
    return any("__call__" in vars(klass) for klass in t.__mro__)


def _object_init(tx, args, kwargs):
    """``object.__init__(self)`` (reached by ``super().__init__()``)."""
    if len(args) != 1 or kwargs:
        raise UserCodeRaises("TypeError: object.__init__() takes exactly one argument "
                             "(the instance to initialize)")
    return ConstantVariable(None)


def _object_setattr(tx, args, kwargs):
    """``object.__setattr__(obj, name, value)``: the store without the class's
    ``__setattr__`` (frozen dataclasses' ``__init__``, a ``__setattr__`` calling
    ``super().__setattr__``)."""
    if len(args) != 3 or kwargs or not args[1].is_constant() or type(args[1].as_constant()) is not str:
        raise Unsupported("unsupported_call", "object.__setattr__ with these arguments")
    obj, name, value = args
    store = getattr(obj, "store_attr", None)
    if store is None:
        obj.setattr(tx, name.as_constant(), value)   # an object of the frame: its own checks
    else:
        store(tx, name.as_constant(), value)
    return ConstantVariable(None)


def _process_independent(value) -> bool:
    """Whether ``hash(value)`` is the same in every process (no ``str`` /
    ``bytes``: their hashes are salted per process, and a persisted entry
    would keep another process's value)."""
    if value is None or type(value) in (bool, int, float, complex):
        return True
    return type(value) is tuple and all(_process_independent(v) for v in value)


def _hash(tx, args, kwargs):
    """``hash(x)`` of a constant number or tuple of numbers: run at trace time."""
    if len(args) == 1 and not kwargs and is_constant_value(args[0]):
        value = constant_value(args[0])
        if _process_independent(value):
            return ConstantVariable(hash(value))
    raise Unsupported("unsupported_call", "hash() of anything but constant numbers and tuples of "
                                          "them (a str's hash differs between processes)")


# slot wrappers of ``object`` that capture models (``object.__init__``, ``super().__setattr__``)
OBJECT_SLOTS = {object.__init__: _object_init, object.__setattr__: _object_setattr}


SUPPORTED_BUILTINS = {
    len: _len, isinstance: _isinstance, type: _type, range: _range, enumerate: _enumerate,
    zip: _zip, reversed: _reversed, iter: _iter, next: _next, list: _list, tuple: _tuple,
    dict: _dict, min: _minmax(min), max: _minmax(max), sum: _sum, abs: _abs,
    int: _scalar_conversion(int), float: _scalar_conversion(float), str: _scalar_conversion(str),
    repr: _scalar_conversion(repr), round: _scalar_conversion(round), bool: _bool,
    getattr: _getattr, hasattr: _hasattr, setattr: _setattr, sorted: _sorted, all: _all_any(all),
    any: _all_any(any),
    slice: _slice, callable: _callable, map: _map, filter: _filter, set: _set,
    frozenset: _frozenset, vars: _vars, id: _id, hash: _hash, complex: _scalar_conversion(complex), divmod: _scalar_conversion(divmod),
    pow: _scalar_conversion(pow), chr: _scalar_conversion(chr), ord: _scalar_conversion(ord),
    format: _scalar_conversion(format),
    issubclass: lambda tx, args, kwargs: ConstantVariable(
        isinstance_of(_classes(tx, args[0]), _classes(tx, args[1]))),
    **OBJECT_SLOTS,
}


# -- operator and functools ---------------------------------------------------------------------

_OPERATOR_BINARY = (operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
                    operator.mod, operator.pow, operator.matmul, operator.and_, operator.or_,
                    operator.xor, operator.lshift, operator.rshift, operator.lt, operator.le,
                    operator.eq, operator.ne, operator.gt, operator.ge)
_OPERATOR_UNARY = (operator.neg, operator.pos, operator.invert, operator.abs)
_OPERATOR_INPLACE = {operator.iadd: operator.add, operator.isub: operator.sub,
                     operator.imul: operator.mul, operator.itruediv: operator.truediv,
                     operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
                     operator.ipow: operator.pow, operator.imatmul: operator.matmul,
                     operator.iand: operator.and_, operator.ior: operator.or_,
                     operator.ixor: operator.xor, operator.ilshift: operator.lshift,
                     operator.irshift: operator.rshift}


def _arity(fn, n: int, args, kwargs) -> None:
    if kwargs or len(args) != n:
        raise UserCodeRaises(f"TypeError: {fn.__name__} expected {n} arguments, got {len(args)}")


def _operator_binary(fn):
    def handler(tx, args, kwargs):
        _arity(fn, 2, args, kwargs)
        return tx.binary_op(fn, *args)   # what ``a + b`` / ``a < b`` does
    return handler


def _operator_unary(fn):
    def handler(tx, args, kwargs):
        _arity(fn, 1, args, kwargs)
        return tx.binary_or_unary(fn, args[0])
    return handler


def _operator_inplace(fn, base):
    def handler(tx, args, kwargs):
        _arity(fn, 2, args, kwargs)
        return tx.inplace_op(base, *args)   # what ``a += b`` does
    return handler


def _operator_call(fn, n: int, body):
    def handler(tx, args, kwargs):
        _arity(fn, n, args, kwargs)
        return body(tx, *args)
    return handler


def _setitem(tx, obj, index, value):
    obj.setitem(tx, index, value)
    return ConstantVariable(None)


def _delitem(tx, obj, index):
    obj.delitem(tx, index)
    return ConstantVariable(None)


def _build_class(tx, args, kwargs):
    """A class statement (``__build_class__(body, name, *bases)``): its body
    runs natively at a graph break, making a new class at every call."""
    name = args[1].as_constant() if len(args) > 1 and args[1].is_constant() else "?"
    raise Unsupported("unsupported_call", f"a class statement (class {name}): the class is made "
                                          f"natively, a new class at every call")


def _reduce(tx, args, kwargs):
    """``functools.reduce(fn, iterable[, initial])``, ``fn`` called (inlined) per item."""
    if kwargs or len(args) not in (2, 3):
        raise UserCodeRaises("TypeError: reduce expected 2 or 3 arguments")
    fn, it = args[0], args[1].get_iter(tx)
    acc = args[2] if len(args) > 2 else it.next(tx)
    if acc is None:
        raise UserCodeRaises("TypeError: reduce() of empty iterable with no initial value",
                             exc=TypeError("reduce() of empty iterable with no initial value"))
    while True:
        item = it.next(tx)
        if item is None:
            return acc
        acc = fn.call(tx, [acc, item], {})


OPERATOR_FUNCTIONS = {
    **{fn: _operator_binary(fn) for fn in _OPERATOR_BINARY},
    **{fn: _operator_unary(fn) for fn in _OPERATOR_UNARY},
    **{fn: _operator_inplace(fn, base) for fn, base in _OPERATOR_INPLACE.items()},
    operator.truth: _operator_call(operator.truth, 1, lambda tx, a: ConstantVariable(tx.truth(a))),
    operator.not_: _operator_call(operator.not_, 1, lambda tx, a: ConstantVariable(not tx.truth(a))),
    operator.getitem: _operator_call(operator.getitem, 2, lambda tx, a, i: a.getitem(tx, i)),
    operator.setitem: _operator_call(operator.setitem, 3, _setitem),
    operator.delitem: _operator_call(operator.delitem, 2, _delitem),
    operator.contains: _operator_call(operator.contains, 2,
                                      lambda tx, a, b: ConstantVariable(a.contains(tx, b))),
    functools.reduce: _reduce,
    builtins.__build_class__: _build_class,
    functools.cmp_to_key: cmp_to_key,
}
SUPPORTED_BUILTINS.update(OPERATOR_FUNCTIONS)
SUPPORTED_BUILTINS.update(dict.fromkeys(WARN_FUNCTIONS, warnings_warn))


@HOOKS.provide
def call_builtin(tx, fn, args, kwargs) -> Variable:
    computed = scalar_builtin_call(tx, fn, args, kwargs)   # float(lr), min(1.0, s / n), math.cos(s)
    if computed is not None:
        return computed
    handler = SUPPORTED_BUILTINS.get(fn) or itertools_function(fn)
    if handler is not None:
        return handler(tx, args, kwargs)
    name = getattr(fn, "__name__", repr(fn))
    if fn in EFFECTFUL_BUILTINS:
        raise Unsupported("unsupported_call", f"{name}() has effects outside the graph",
                          HINTS["print"] if fn is builtins.print else "")
    if getattr(fn, "__module__", None) == "math" or fn in vars(math).values():
        if any(isinstance(a, TensorVariable) for a in args):
            raise Unsupported("data_dependent", f"math.{name}() of a tensor reads its value",
                              HINTS["math"])
        c = _const_args(args, kwargs)
        if c is not None:
            return _run_constant(tx, fn, *c)
    raise Unsupported("unsupported_call", f"builtin {name}()")
