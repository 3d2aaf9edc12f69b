"""Builtins and ``math`` functions on Variables.

On constants they run at trace time (they are pure); on containers and
tensors they are modelled (``len``, ``isinstance``, ``zip``, ``enumerate``...);
anything with effects (``print``, ``input``, ``open``) is unsupported.
"""
from __future__ import annotations

import builtins
import math
import operator

from ..errors import Unsupported
from .base import ConstantVariable, TensorVariable, Variable
from .containers import (DictVariable, IteratorVariable, ListVariable, SliceVariable,
                         TupleVariable)

__all__ = ["call_builtin", "SUPPORTED_BUILTINS", "EFFECTFUL_BUILTINS"]

EFFECTFUL_BUILTINS = {builtins.print, builtins.input, builtins.open, builtins.exec, builtins.eval,
                      builtins.breakpoint, builtins.globals, builtins.locals, builtins.vars,
                      builtins.id, builtins.hash, builtins.setattr, builtins.delattr}


def _const_args(args, kwargs):
    if all(a.is_constant() for a in args) and all(v.is_constant() for v in kwargs.values()):
        return [a.as_constant() for a in args], {k: v.as_constant() for k, v in kwargs.items()}
    return None


def _run_constant(fn, args, kwargs):
    try:
        return ConstantVariable(fn(*args, **kwargs))
    except Exception as e:  # the native run raises it again, at the user's line
        raise Unsupported("exception", f"{getattr(fn, '__name__', fn)}() raises "
                                       f"{type(e).__name__}: {e}") from e


def _items(tx, var: Variable) -> list[Variable]:
    return var.iterate(tx)


def _len(tx, args, kwargs):
    (x,) = args
    if isinstance(x, (ListVariable, TupleVariable, DictVariable)):
        return ConstantVariable(len(x.items))
    if isinstance(x, TensorVariable):
        if not x.shape:
            raise Unsupported("exception", "len() of a 0-d tensor")
        return ConstantVariable(x.shape[0])
    if x.is_constant():
        return _run_constant(len, [x.as_constant()], {})
    raise Unsupported("unsupported_object", f"len() of {x!r}")


def _isinstance(tx, args, kwargs):
    obj, cls = args
    classes = cls.as_constant() if cls.is_constant() else tx.real_value(cls)
    return ConstantVariable(isinstance_of(obj.python_type(), classes))


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
        raise Unsupported("data_dependent", "range() bounds that are not Python constants")
    return _run_constant(range, *c)


def _enumerate(tx, args, kwargs):
    start = kwargs.get("start", args[1] if len(args) > 1 else ConstantVariable(0)).as_constant()
    items = _items(tx, args[0])
    return IteratorVariable(TupleVariable([ConstantVariable(start + i), v]) for i, v in enumerate(items))


def _zip(tx, args, kwargs):
    if kwargs.get("strict", ConstantVariable(False)).as_constant():
        lens = {len(_items(tx, a)) for a in args}
        if len(lens) > 1:
            raise Unsupported("exception", "zip(strict=True) over arguments of different lengths")
    columns = [_items(tx, a) for a in args]
    return IteratorVariable(TupleVariable(list(row)) for row in zip(*columns))


def _reversed(tx, args, kwargs):
    (x,) = args
    return IteratorVariable(list(reversed(_items(tx, x))))


def _iter(tx, args, kwargs):
    (x,) = args
    if isinstance(x, IteratorVariable):
        return x
    return IteratorVariable(_items(tx, x))


def _next(tx, args, kwargs):
    it = args[0]
    if not isinstance(it, IteratorVariable):
        raise Unsupported("unsupported_object", f"next() on {it!r}")
    item = it.next()
    if item is None:
        if len(args) > 1:
            return args[1]
        raise Unsupported("exception", "next() on an exhausted iterator raises StopIteration")
    return item


def _list(tx, args, kwargs):
    return ListVariable(_items(tx, args[0]) if args else [])


def _tuple(tx, args, kwargs):
    return TupleVariable(_items(tx, args[0]) if args else [])


def _dict(tx, args, kwargs):
    from .containers import unpack_constant_key
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
        c = _const_args(args, kwargs)
        if c is not None:
            return _run_constant(fn, *c)
        if len(args) == 1 and not kwargs:
            values = _items(tx, args[0])
        else:
            values = list(args)
        if all(v.is_constant() for v in values):
            return _run_constant(fn, [v.as_constant() for v in values], {})
        raise Unsupported("data_dependent", f"{fn.__name__}() over tensors compares their values; "
                                            f"use frame.maximum / frame.max")
    return handler


def _sum(tx, args, kwargs):
    c = _const_args(args, kwargs)
    if c is not None:
        return _run_constant(sum, *c)
    values = _items(tx, args[0])
    total = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
    for v in values:
        total = tx.binary_op(operator.add, total, v)
    return total


def _abs(tx, args, kwargs):
    (x,) = args
    if isinstance(x, TensorVariable):
        return tx.binary_or_unary(operator.abs, x)
    return _run_constant(abs, [x.as_constant()], {})


def _scalar_conversion(fn):
    def handler(tx, args, kwargs):
        if args and isinstance(args[0], TensorVariable):
            raise Unsupported("data_dependent", f"{fn.__name__}() of a tensor reads its value")
        c = _const_args(args, kwargs)
        if c is None:
            raise Unsupported("unsupported_object", f"{fn.__name__}() of {args!r}")
        return _run_constant(fn, *c)
    return handler


def _bool(tx, args, kwargs):
    if not args:
        return ConstantVariable(False)
    return ConstantVariable(tx.truth(args[0]))


def _getattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    try:
        return tx.getattr(obj, name)
    except Unsupported as e:
        if len(args) > 2 and e.kind == "exception":
            return args[2]
        raise


def _hasattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    try:
        tx.getattr(obj, name)
        return ConstantVariable(True)
    except Unsupported as e:
        if e.kind == "exception":
            return ConstantVariable(False)
        raise


def _sorted(tx, args, kwargs):
    values = _items(tx, args[0])
    if all(v.is_constant() for v in values) and all(v.is_constant() for v in kwargs.values()):
        out = sorted((v.as_constant() for v in values), **{k: v.as_constant() for k, v in kwargs.items()})
        return ListVariable([ConstantVariable(v) for v in out])
    raise Unsupported("data_dependent", "sorted() over non-constant values")


def _all_any(fn):
    def handler(tx, args, kwargs):
        return ConstantVariable(fn(tx.truth(v) for v in _items(tx, args[0])))
    return handler


def _slice(tx, args, kwargs):
    return SliceVariable(args)


def _callable(tx, args, kwargs):
    from .callables import BuiltinVariable, FrameApiVariable, NumpyFunctionVariable, UserFunctionVariable
    return ConstantVariable(isinstance(args[0], (BuiltinVariable, FrameApiVariable,
                                                 NumpyFunctionVariable, UserFunctionVariable)))


SUPPORTED_BUILTINS = {
    len: _len, isinstance: _isinstance, type: _type, range: _range, enumerate: _enumerate,
    zip: _zip, reversed: _reversed, iter: _iter, next: _next, list: _list, tuple: _tuple,
    dict: _dict, min: _minmax(min), max: _minmax(max), sum: _sum, abs: _abs,
    int: _scalar_conversion(int), float: _scalar_conversion(float), str: _scalar_conversion(str),
    repr: _scalar_conversion(repr), round: _scalar_conversion(round), bool: _bool,
    getattr: _getattr, hasattr: _hasattr, sorted: _sorted, all: _all_any(all), any: _all_any(any),
    slice: _slice, callable: _callable, divmod: _scalar_conversion(divmod),
    pow: _scalar_conversion(pow), chr: _scalar_conversion(chr), ord: _scalar_conversion(ord),
    issubclass: _scalar_conversion(issubclass),
}


def call_builtin(tx, fn, args, kwargs) -> Variable:
    handler = SUPPORTED_BUILTINS.get(fn)
    if handler is not None:
        return handler(tx, args, kwargs)
    name = getattr(fn, "__name__", repr(fn))
    if fn in EFFECTFUL_BUILTINS:
        raise Unsupported("unsupported_call", f"{name}() has effects outside the graph")
    if getattr(fn, "__module__", None) == "math" or fn in vars(math).values():
        if any(isinstance(a, TensorVariable) for a in args):
            raise Unsupported("data_dependent", f"math.{name}() of a tensor reads its value")
        c = _const_args(args, kwargs)
        if c is not None:
            return _run_constant(fn, *c)
    raise Unsupported("unsupported_call", f"builtin {name}()")
