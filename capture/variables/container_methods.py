"""Methods of containers and constants, simulated on Variables.

Mutating methods change the Variable's items, never the real object; the
translator records the container as mutated so its final state is written
back after the graph runs.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import ConstantVariable, Variable
from .callables import BuiltinVariable, NumpyFunctionVariable
from .containers import (DictViewVariable, DictVariable, ListVariable, SetVariable, TupleVariable,
                         constant_value, is_constant_value, unpack_constant_key)
from .numpy_calls import numpy_call
from .ordering import order_by_comparisons
from .registry import HOOKS

__all__ = ["call_container_method"]


def _const(v: Variable):
    return v.as_constant()


def _index_of(tx, items, target, name):
    for i, item in enumerate(items):
        if tx.structurally_equal(item, target):
            return i
    return -1


def sort_items(tx, items: list[Variable], key: Variable | None, reverse: bool,
               what: str = "sort") -> list[Variable]:
    """``items`` in the order ``sorted(items, key=key, reverse=reverse)``
    gives: the key function is called on each item in order (inlined); keys
    that are Python constants are sorted with Python's own comparisons and
    errors, others (user objects, ``cmp_to_key`` keys) by Python's own sort
    asking for comparisons the trace simulates (``ordering.py``)."""
    if key is None or key.is_none():
        keys = items
    else:
        keys = [key.call(tx, [item], {}) for item in items]
    if not all(is_constant_value(k) for k in keys):
        _refuse_tensor_keys(keys, what)
        order = order_by_comparisons(
            tx, keys, lambda stand_ins: sorted(stand_ins, reverse=reverse), what)
        return [items[i] for i in order]
    values = [constant_value(k) for k in keys]
    try:
        order = sorted(range(len(items)), key=values.__getitem__, reverse=reverse)
    except Exception as e:  # noqa: BLE001 - Python's own comparison error, raised natively too
        raise UserCodeRaises(f"{what}() raises {type(e).__name__}: {e}", exc=e) from e
    return [items[i] for i in order]


def _refuse_tensor_keys(keys: list[Variable], what: str) -> None:
    if any(k.has_frame_tensor() or k.tensor_kind() is not None for k in keys):
        raise Unsupported("data_dependent", f"{what}() compares tensors by their values")


def extreme_item(tx, items: list[Variable], key: Variable | None, fn) -> Variable:
    """``min``/``max`` (``fn``) of ``items`` by ``key`` (None: the items
    themselves): the first extreme one."""
    keys = items if key is None else [key.call(tx, [item], {}) for item in items]
    if not all(is_constant_value(k) for k in keys):
        _refuse_tensor_keys(keys, fn.__name__)
        return items[order_by_comparisons(tx, keys, fn, fn.__name__)]
    values = [constant_value(k) for k in keys]
    try:
        return items[fn(range(len(items)), key=values.__getitem__)]
    except Exception as e:  # noqa: BLE001 - Python's own comparison error, raised natively too
        raise UserCodeRaises(f"{fn.__name__}() raises {type(e).__name__}: {e}", exc=e) from e


def _list_method(tx, lst: ListVariable, name: str, args, kwargs) -> Variable:
    if name in ("append", "extend"):   # the list's items are not read (ListVariable)
        lst.extend(tx, [args[0]] if name == "append" else args[0].iterate(tx))
        return ConstantVariable(None)
    items = lst.items
    if name == "sort":
        if args or set(kwargs) - {"key", "reverse"}:
            raise UserCodeRaises("TypeError: sort() takes no positional arguments")
        reverse = kwargs.get("reverse", ConstantVariable(False))
        if not reverse.is_constant():
            raise Unsupported("unsupported_call", "list.sort(reverse=) that is not a constant")
        ordered = sort_items(tx, list(items), kwargs.get("key"), bool(reverse.as_constant()))
        tx.mutate(lst)
        items[:] = ordered
        return ConstantVariable(None)
    if name in ("index", "count"):
        if name == "count":
            return ConstantVariable(sum(1 for it in items if _index_of(tx, [it], args[0], name) == 0))
        i = _index_of(tx, items, args[0], name)
        if i < 0:
            raise UserCodeRaises("list.index(x): x not in list")
        return ConstantVariable(i)
    if name == "copy":
        return ListVariable(list(items))
    tx.mutate(lst)
    if name == "insert":
        items.insert(_const(args[0]), args[1])
    elif name == "pop":
        if not items:
            raise UserCodeRaises("pop from empty list", exc=IndexError("pop from empty list"))
        idx = _const(args[0]) if args else -1
        try:
            return items.pop(idx)
        except IndexError as e:
            raise UserCodeRaises(f"list.pop: {e}", exc=e) from e
    elif name == "remove":
        i = _index_of(tx, items, args[0], name)
        if i < 0:
            raise UserCodeRaises("list.remove(x): x not in list")
        del items[i]
    elif name == "reverse":
        items.reverse()
    elif name == "clear":
        items.clear()
    else:
        raise Unsupported("unsupported_call", f"list.{name}()")
    return ConstantVariable(None)


def _dict_method(tx, d: DictVariable, name: str, args, kwargs) -> Variable:
    items = d.items
    if name in ("keys", "values", "items") and not args and not kwargs:
        return DictViewVariable(d, name)
    if name == "get":
        key = unpack_constant_key(args[0])
        default = args[1] if len(args) > 1 else ConstantVariable(None)
        return items.get(key, default)
    if name == "copy":
        return DictVariable(dict(items))
    tx.mutate(d)
    if name == "pop":
        key = unpack_constant_key(args[0])
        if key in items:
            return items.pop(key)
        if len(args) > 1:
            return args[1]
        raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
    if name == "popitem":
        if args or kwargs:
            raise UserCodeRaises("TypeError: popitem() takes no arguments")
        if not items:
            raise UserCodeRaises("KeyError: 'popitem(): dictionary is empty'",
                                 exc=KeyError("popitem(): dictionary is empty"))
        key, value = items.popitem()
        return TupleVariable([ConstantVariable(key), value])
    if name == "setdefault":
        key = unpack_constant_key(args[0])
        if key not in items:
            items[key] = args[1] if len(args) > 1 else ConstantVariable(None)
        return items[key]
    if name == "update":
        if args:
            other = args[0]
            if isinstance(other, DictVariable):
                items.update(other.items)
            else:
                for pair in other.iterate(tx):
                    k, v = pair.iterate(tx)
                    items[unpack_constant_key(k)] = v
        items.update(kwargs)
        return ConstantVariable(None)
    if name == "clear":
        items.clear()
        return ConstantVariable(None)
    raise Unsupported("unsupported_call", f"dict.{name}()")


def _set_method(tx, st: SetVariable, name: str, args, kwargs) -> Variable:
    if kwargs:
        raise Unsupported("unsupported_call", f"set.{name}() with keyword arguments")
    if name == "add":
        st.add(args[0])
    elif name in ("discard", "remove"):
        key = unpack_constant_key(args[0])
        if name == "remove" and key not in st.values:
            raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
        st.values.discard(key)
    elif name == "update":
        for other in args:
            for item in other.iterate(tx):
                st.add(item)
    elif name == "clear":
        st.values.clear()
    else:  # pure: union, intersection, difference, is*, copy
        others = [{unpack_constant_key(i) for i in a.iterate(tx)} for a in args]
        result = getattr(st.values, name)(*others)
        if isinstance(result, set):
            out = SetVariable()
            out.values = result
            return out
        return ConstantVariable(result)
    return ConstantVariable(None)


@HOOKS.provide
def call_container_method(tx, obj: Variable, name: str, args, kwargs) -> Variable:
    if isinstance(obj, SetVariable):
        return _set_method(tx, obj, name, args, kwargs)
    if isinstance(obj, ListVariable):
        return _list_method(tx, obj, name, args, kwargs)
    if isinstance(obj, DictVariable):
        return _dict_method(tx, obj, name, args, kwargs)
    if isinstance(obj, TupleVariable) and name in ("index", "count"):
        return _list_method(tx, ListVariable(obj.items), name, args, kwargs)
    if obj.is_constant():
        if name == "join" and isinstance(obj.as_constant(), (str, bytes)) and len(args) == 1 \
                and not kwargs and not is_constant_value(args[0]):
            args = [ListVariable(args[0].iterate(tx))]   # join consumes its iterable first
        if not all(is_constant_value(a) for a in args) or \
                not all(is_constant_value(v) for v in kwargs.values()):
            raise Unsupported("unsupported_call", f"{type(obj.as_constant()).__name__}.{name}() "
                                                  f"with non-constant arguments")
        method = getattr(obj.as_constant(), name)
        try:
            result = method(*[constant_value(a) for a in args],
                            **{k: constant_value(v) for k, v in kwargs.items()})
        except Exception as e:  # raised again by the native run
            raise UserCodeRaises(f"{name}() raises {type(e).__name__}: {e}", exc=e) from e
        return tx.wrap_result(result)
    if isinstance(obj, BuiltinVariable) and obj.fn is dict and name == "fromkeys":
        if kwargs or not 1 <= len(args) <= 2:
            raise UserCodeRaises("TypeError: fromkeys expected 1 or 2 arguments")
        value = args[1] if len(args) > 1 else ConstantVariable(None)
        return DictVariable({unpack_constant_key(k): value for k in args[0].iterate(tx)})
    if isinstance(obj, NumpyFunctionVariable) and name == "at" and obj.fn is np.add:
        return HOOKS.ufunc_add_at(tx, args, kwargs)
    if isinstance(obj, NumpyFunctionVariable) and name in ("reduce", "accumulate", "outer"):
        if not tx.contains_tensor(args, kwargs):  # pure: NumPy runs it on the constants
            return tx.call_constant(getattr(obj.fn, name), args, kwargs)
        return numpy_call(tx, getattr(obj.fn, name), args, kwargs)
    raise Unsupported("unsupported_call", f"method {name} of {obj!r}")
