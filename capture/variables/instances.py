"""Objects made by the traced function: instances of user classes, their
operators, ``functools.partial`` objects, and the methods of namedtuples.

``MyCls(...)`` makes a ``UserObjectVariable`` and inlines ``__init__`` on it:
its attributes are Variables held by the Variable (nothing real exists while
tracing).  An instance that never leaves the function costs nothing; one that
does (returned, stored into an object of the frame, live at a graph break) is
built by the entry after the graph runs, ``object.__new__(cls)`` and
``object.__setattr__`` of its final attributes (``reconstruct``).  Classes
whose instances this cannot model (a metaclass, ``__new__``,
``__getattribute__``, ``__del__``, a builtin base, a frame ``nn.Module``)
refuse with a reason naming the class.
"""
from __future__ import annotations

import abc
import functools
import operator
import types

from frame.nn.module import Module

from ..errors import Unsupported, UserCodeRaises
from ..sources import AttrSource, ConstSource
from .base import ConstantVariable, Variable
from .builtins import OBJECT_SLOTS, instances_callable
from .callables import BuiltinVariable, MethodVariable
from .containers import DictVariable, NamedTupleVariable, TupleVariable
from .objects import ObjectVariable, _class_lookup, _MISSING, guard_class_attr, python_text
from .registry import HOOKS, wrap_rule

__all__ = ["UserObjectVariable", "PartialVariable", "construct_instance", "make_partial",
           "user_binary_op", "user_inplace_op", "class_attribute", "namedtuple_attr",
           "namedtuple_class_attr", "wrap_partial"]

_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class made by a class statement
# what a class of modelled instances may not define (anywhere in its MRO but object)
_REFUSED_DUNDERS = {
    "__new__": "defines __new__",
    "__getattribute__": "defines __getattribute__",
    "__del__": "defines __del__ (a finalizer would run when the instance dies)",
}
_ALLOWED_METACLASSES = (type, abc.ABCMeta)


def _refusal(cls: type) -> str | None:
    """Why instances of ``cls`` cannot be modelled by ``UserObjectVariable``, or None."""
    if issubclass(cls, Module):
        return ("it is a frame nn.Module: create modules outside the jitted function and "
                "pass them in (or read them from a global)")
    if type(cls) not in _ALLOWED_METACLASSES:
        return f"its metaclass {type(cls).__qualname__} may change how instances are made"
    for klass in cls.__mro__:
        if klass is object:
            continue
        if not klass.__flags__ & _HEAPTYPE:
            return f"it derives from the builtin type {klass.__qualname__}"
        for name, why in _REFUSED_DUNDERS.items():
            if name in klass.__dict__:
                return f"{klass.__qualname__} {why}"
    return None


@HOOKS.provide
def construct_instance(tx, cls_var: Variable, args, kwargs) -> Variable:
    """``cls(*args, **kwargs)`` of a user class: a new instance, ``__init__`` inlined."""
    cls = cls_var.as_constant()
    why = _refusal(cls)
    if why is not None:
        raise Unsupported("unsupported_call", f"creating a {cls.__qualname__} object: {why}")
    if getattr(cls, "__abstractmethods__", None):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        raise UserCodeRaises(f"TypeError: Can't instantiate abstract class {cls.__name__} "
                             f"({missing})")
    obj = UserObjectVariable(cls)
    init = _class_lookup(cls, "__init__")
    if init is object.__init__:
        if args or kwargs:
            raise UserCodeRaises(f"TypeError: {cls.__name__}() takes no arguments")
        return obj
    if not isinstance(init, types.FunctionType):
        raise Unsupported("unsupported_call", f"creating a {cls.__qualname__} object: its __init__ "
                                              f"is a {type(init).__name__}")
    guard_class_attr(tx, cls, "__init__", init)
    result = tx.wrap_static(init).call(tx, [obj, *args], kwargs)
    if not result.is_none():
        raise UserCodeRaises(f"TypeError: __init__() should return None, not "
                             f"'{result.python_type().__name__}'")
    return obj


class AttrDictVariable(DictVariable):
    """``vars(obj)`` of an instance made in the trace: its ``attrs`` themselves
    (an item store is an attribute store, and the other way round); it
    leaves the trace as the rebuilt instance's ``__dict__``."""
    __slots__ = ("owner",)

    def __init__(self, owner: UserObjectVariable):
        super().__init__({})
        self.owner = owner
        self.items = owner.attrs

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        if not (index.is_constant() and type(index.as_constant()) is str):
            raise Unsupported("unsupported_object", f"vars() of an object indexed by {index!r}")
        super().setitem(tx, index, value)

    def update_from(self, tx, other: Variable) -> None:
        raise Unsupported("unsupported_call", "update of vars() of an object")

    def reconstruct(self, rb) -> str:
        return f"{rb.expr(self.owner)}.__dict__"


def _has_dict(cls: type) -> bool:
    return bool(getattr(cls, "__dictoffset__", 0))


def class_attribute(tx, cls: type, name: str, self_var: Variable | None):
    """``name`` found on ``cls`` (for an instance ``self_var``, or the class
    itself when None): a bound method, a static or class method, a property
    (its getter inlined), or a class attribute read through the class.
    ``_MISSING`` when the class has no such attribute; Unsupported for other
    descriptors."""
    pending = tx.side_effects.pending_class_attr(cls, name)   # a class attribute the trace wrote
    if pending is not None:
        return pending
    static = _class_lookup(cls, name)
    if static is _MISSING:
        return _MISSING
    if isinstance(static, (types.FunctionType, staticmethod, classmethod, property)):
        guard_class_attr(tx, cls, name, static)
    if isinstance(static, types.FunctionType):
        return tx.wrap_static(static) if self_var is None else MethodVariable(tx.wrap_static(static),
                                                                              self_var)
    if isinstance(static, staticmethod):
        return tx.wrap_static(static.__func__)
    if isinstance(static, classmethod):
        return MethodVariable(tx.wrap_static(static.__func__), tx.wrap_static(cls))
    if isinstance(static, property):
        if self_var is None:
            raise Unsupported("unsupported_object", f"property {cls.__qualname__}.{name} of the class")
        if static.fget is None:
            raise UserCodeRaises(f"AttributeError: property {name!r} of {cls.__name__!r} object "
                                 f"has no getter")
        return tx.wrap_static(static.fget).call(tx, [self_var], {})
    if any(static is slot for slot in OBJECT_SLOTS):
        fn = BuiltinVariable(static)
        return fn if self_var is None else MethodVariable(fn, self_var)
    if hasattr(type(static), "__get__"):
        raise Unsupported("unsupported_object", f"descriptor {cls.__qualname__}.{name}")
    return tx.wrap(getattr(cls, name),
                   AttrSource(ConstSource(tx.tr.guards.const(cls), cls.__qualname__), name))


# items a Python __iter__ may give when iterated whole at trace time
ITERATE_LIMIT = 1000


@HOOKS.provide
class UserObjectVariable(Variable):
    """An instance of a user class made during the trace: its class and its
    attributes (Variables, in assignment order), no real object."""
    __slots__ = ("user_cls", "attrs")

    def __init__(self, cls: type):
        super().__init__(None)
        self.user_cls = cls
        self.attrs: dict[str, Variable] = {}

    def python_type(self) -> type:
        return self.user_cls

    def is_mutable(self) -> bool:
        return True

    def describe(self) -> str:
        return f"a {self.user_cls.__name__} object"

    def rebuilt_from(self) -> list[Variable]:
        return list(self.attrs.values())

    def instance_dict(self) -> "AttrDictVariable":
        """``vars(obj)``: a dict Variable that is its attributes (the same items)."""
        if not _has_dict(self.user_cls):
            message = "vars() argument must have __dict__ attribute"
            raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
        return AttrDictVariable(self)

    def _dunder(self, tx, name: str):
        """The instance's ``name`` method when the class defines it in Python."""
        static = _class_lookup(self.user_cls, name)
        if isinstance(static, types.FunctionType):
            return class_attribute(tx, self.user_cls, name, self)
        return None

    def truth(self, tx) -> bool:
        for name in ("__bool__", "__len__"):
            method = self._dunder(tx, name)
            if method is not None:
                result = method.call(tx, [], {})
                if name == "__len__":
                    return result.as_constant() != 0
                return result.truth(tx)
            if _class_lookup(self.user_cls, name) is not _MISSING:
                raise Unsupported("unsupported_object", f"truth value of a {self.user_cls.__name__}")
        return True

    def getattr(self, tx, name: str) -> Variable:
        static = _class_lookup(self.user_cls, name)
        if isinstance(static, property):
            return class_attribute(tx, self.user_cls, name, self)
        if name in self.attrs:
            return self.attrs[name]
        if isinstance(static, types.MemberDescriptorType):   # a __slots__ slot not yet set
            raise UserCodeRaises(f"AttributeError: {name!r} (a slot of {self.user_cls.__name__}) is unset")
        if name == "__class__":
            return tx.wrap_static(self.user_cls)
        if name == "__dict__":
            raise Unsupported("unsupported_object", f"__dict__ of a {self.user_cls.__name__} made in "
                                                    f"the function")
        found = class_attribute(tx, self.user_cls, name, self)
        if found is not _MISSING:
            return found
        hook = self._dunder(tx, "__getattr__")
        if hook is not None:   # a Python __getattr__: what Python calls when the lookup fails
            return hook.call(tx, [ConstantVariable(name)], {})
        if _class_lookup(self.user_cls, "__getattr__") is not _MISSING:
            raise Unsupported("unsupported_object", f"{self.user_cls.__qualname__} defines __getattr__")
        raise UserCodeRaises(f"AttributeError: {self.user_cls.__name__!r} object has no attribute {name!r}")

    def setattr(self, tx, name: str, value: Variable) -> None:
        custom = _class_lookup(self.user_cls, "__setattr__")
        if custom is object.__setattr__ or custom is _MISSING:
            self.store_attr(tx, name, value)
        elif isinstance(custom, types.FunctionType):   # a Python __setattr__ (frozen dataclasses)
            self._dunder(tx, "__setattr__").call(tx, [ConstantVariable(name), value], {})
        else:
            raise Unsupported("side_effect", f"{self.user_cls.__qualname__} defines __setattr__")

    def store_attr(self, tx, name: str, value: Variable) -> None:
        """``object.__setattr__(self, name, value)``: properties' setters,
        slots, the instance dict."""
        static = _class_lookup(self.user_cls, name)
        if isinstance(static, property):
            if static.fset is None:
                raise UserCodeRaises(f"AttributeError: property {name!r} of {self.user_cls.__name__!r} "
                                     f"object has no setter")
            guard_class_attr(tx, self.user_cls, name, static)
            tx.wrap_static(static.fset).call(tx, [self, value], {})
            return
        if isinstance(static, types.MemberDescriptorType) or (
                static is _MISSING or not hasattr(type(static), "__set__")) and _has_dict(self.user_cls):
            self.attrs[name] = value
            return
        if static is not _MISSING and hasattr(type(static), "__set__"):
            raise Unsupported("side_effect", f"assignment through descriptor "
                                             f"{self.user_cls.__qualname__}.{name}")
        raise UserCodeRaises(f"AttributeError: {self.user_cls.__name__!r} object has no attribute "
                             f"{name!r} (it has __slots__)")

    def enter_context(self, tx):
        """``with obj:`` of a class whose ``__enter__`` and ``__exit__`` are
        Python code: both inlined, as for an object of the frame
        (``ObjectVariable.enter_context``)."""
        enter, exit_ = self._dunder(tx, "__enter__"), self._dunder(tx, "__exit__")
        if enter is None or exit_ is None:
            return super().enter_context(tx)
        return exit_, enter.call(tx, [], {})

    def length(self, tx) -> Variable:
        """``len(obj)``: a Python ``__len__``, inlined."""
        method = self._dunder(tx, "__len__")
        if method is None:
            raise UserCodeRaises(f"TypeError: object of type {self.user_cls.__name__!r} has no len()")
        return method.call(tx, [], {})

    def text(self, tx, fn) -> Variable | None:
        """``str(obj)`` / ``repr(obj)`` through a Python ``__str__`` / ``__repr__``."""
        return python_text(tx, self.user_cls, self, fn)

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        return user_inplace_op(tx, self, fn, other)

    def call(self, tx, args, kwargs):
        method = self._dunder(tx, "__call__")
        if method is None:
            raise UserCodeRaises(f"TypeError: {self.user_cls.__name__!r} object is not callable")
        return method.call(tx, args, kwargs)

    def get_iter(self, tx) -> Variable:
        method = self._dunder(tx, "__iter__")
        if method is not None:
            return method.call(tx, [], {})
        return super().get_iter(tx)

    def iterate(self, tx) -> list[Variable]:
        """``list(obj)``, ``a, b = obj``: a Python ``__iter__`` (a generator) run to its end,
        up to ``ITERATE_LIMIT`` items (an endless one is left to the native run)."""
        if self._dunder(tx, "__iter__") is None:
            return super().iterate(tx)
        it = self.get_iter(tx)
        items: list[Variable] = []
        item = it.next(tx)
        while item is not None:
            if len(items) == ITERATE_LIMIT:
                raise Unsupported("unsupported_object", f"iterating over a {self.user_cls.__name__} "
                                                        f"of more than {ITERATE_LIMIT} items")
            items.append(item)
            item = it.next(tx)
        return items

    def contains(self, tx, item: Variable) -> bool:
        method = self._dunder(tx, "__contains__")
        if method is not None:
            return method.call(tx, [item], {}).truth(tx)
        return super().contains(tx, item)

    def getitem(self, tx, index: Variable) -> Variable:
        method = self._dunder(tx, "__getitem__")
        if method is None:
            raise UserCodeRaises(f"TypeError: {self.user_cls.__name__!r} object is not subscriptable")
        return method.call(tx, [index], {})

    def reconstruct(self, rb) -> str:
        name = rb.named(self)
        if name is None:
            name = rb.new_name(self)   # named first: an attribute may refer back to the object
            rb.emit(f"{name} = {rb.const(object.__new__)}({rb.const(self.user_cls)})")
            setter = rb.const(object.__setattr__)
            for key, value in self.attrs.items():
                expr = rb.expr(value)
                rb.emit(f"{setter}({name}, {key!r}, {expr})")
        return name

    def __repr__(self) -> str:
        return f"New({self.user_cls.__qualname__})"


# -- functools.partial --------------------------------------------------------------------------

class PartialVariable(Variable):
    """A ``functools.partial``: made in the function (``make_partial``) or one
    of the frame (its ``func``, ``args`` and ``keywords`` read through their
    sources and guarded).  A call calls ``func`` with the bound arguments
    first, the call's keywords overriding the bound ones."""
    __slots__ = ("func", "args", "keywords", "opaque")

    def __init__(self, func: Variable, args: list[Variable], keywords: DictVariable,
                 source=None, opaque: bool = False):
        super().__init__(source)
        self.func = func
        self.args = list(args)
        self.keywords = keywords
        # a partial of a partial of the frame: whether CPython flattened it depends
        # on whether the inner one ever had a __dict__, so .func/.args are not read
        self.opaque = opaque

    def python_type(self) -> type:
        return functools.partial

    def rebuilt_from(self) -> list[Variable]:
        return [self.func, *self.args, self.keywords]

    def call(self, tx, args, kwargs):
        return self.func.call(tx, [*self.args, *args], {**self.keywords.items, **kwargs})

    def getattr(self, tx, name: str) -> Variable:
        if name in ("func", "args", "keywords"):
            if self.opaque:
                raise Unsupported("unsupported_object", f"partial.{name} of a partial of a "
                                                        f"partial of the frame")
            if name == "func":
                return self.func
            return TupleVariable(self.args) if name == "args" else self.keywords
        raise Unsupported("unsupported_object", f"attribute {name!r} of a functools.partial")

    def reconstruct(self, rb) -> str:
        if self.source is not None:
            return rb.source(self)
        name = rb.named(self)
        if name is None:
            parts = [rb.expr(self.func), *(rb.expr(a) for a in self.args)]
            kw = rb.expr(self.keywords)
            name = rb.new_name(self)
            rb.emit(f"{name} = {rb.const(functools.partial)}({', '.join(parts)}, **{kw})")
        return name

    def __repr__(self) -> str:
        return f"Partial({self.func!r})"


@HOOKS.provide
def make_partial(tx, args, kwargs) -> PartialVariable:
    """``functools.partial(func, *args, **kwargs)`` as CPython makes it: a
    partial of a partial made in the function is flattened."""
    if not args:
        raise UserCodeRaises("TypeError: type 'partial' takes at least one argument")
    func, bound = args[0], list(args[1:])
    if not instances_callable(func.python_type()):
        raise UserCodeRaises("TypeError: the first argument must be callable")
    keywords = dict(kwargs)
    opaque = False
    if isinstance(func, PartialVariable):
        if func.source is None and not func.opaque:
            bound = func.args + bound
            keywords = {**func.keywords.items, **keywords}
            func = func.func
        else:
            opaque = True
    return PartialVariable(func, bound, DictVariable(keywords), opaque=opaque)


@wrap_rule(65)
def wrap_partial(tr, value, source) -> PartialVariable | None:
    """A partial of the frame: its parts read through their sources (the
    function by identity, the arguments as any value, the keywords' names)."""
    if type(value) is not functools.partial:
        return None
    tr.guards.type_is(source, value)
    func = tr.wrap(value.func, AttrSource(source, "func"))
    args = tr.wrap(value.args, AttrSource(source, "args"))
    keywords = tr.wrap(value.keywords, AttrSource(source, "keywords"))
    return PartialVariable(func, args.items, keywords, source)


# -- operators of user classes ------------------------------------------------------------------

_REFLECTED = {
    operator.add: ("__add__", "__radd__"), operator.sub: ("__sub__", "__rsub__"),
    operator.mul: ("__mul__", "__rmul__"), operator.truediv: ("__truediv__", "__rtruediv__"),
    operator.floordiv: ("__floordiv__", "__rfloordiv__"), operator.mod: ("__mod__", "__rmod__"),
    operator.pow: ("__pow__", "__rpow__"), operator.matmul: ("__matmul__", "__rmatmul__"),
    operator.and_: ("__and__", "__rand__"), operator.or_: ("__or__", "__ror__"),
    operator.xor: ("__xor__", "__rxor__"), operator.lshift: ("__lshift__", "__rlshift__"),
    operator.rshift: ("__rshift__", "__rrshift__"),
}
_COMPARISONS = {operator.eq: ("__eq__", "__eq__"), operator.ne: ("__ne__", "__ne__"),
                operator.lt: ("__lt__", "__gt__"), operator.le: ("__le__", "__ge__"),
                operator.gt: ("__gt__", "__lt__"), operator.ge: ("__ge__", "__le__")}
_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
            operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
            operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
            operator.rshift: ">>", operator.lt: "<", operator.le: "<=", operator.gt: ">",
            operator.ge: ">="}
# Python numbers: their operators return NotImplemented for an instance of a user class
_NUMBERS = (int, float, complex, bool, type(None))


def _is_user(v: Variable) -> bool:
    return isinstance(v, (UserObjectVariable, ObjectVariable))


def _cls(v: Variable) -> type:
    return v.python_type()


def _not_implemented(v: Variable) -> bool:
    return v.is_constant() and v.as_constant() is NotImplemented


def _call_dunder(tx, self_var: Variable, name: str, other: Variable):
    """``type(self).name(self, other)``, or NotImplemented when the type has
    no such method (a Python number's, for a user object)."""
    if not _is_user(self_var):
        return ConstantVariable(NotImplemented)
    cls = _cls(self_var)
    static = _class_lookup(cls, name)
    if static is _MISSING or static is getattr(object, name, None):
        if name == "__eq__":   # object's: identity
            same = _same(tx, self_var, other)
            return ConstantVariable(True) if same else ConstantVariable(NotImplemented)
        if name == "__ne__":   # object's: the inverse of __eq__
            eq = _call_dunder(tx, self_var, "__eq__", other)
            return eq if _not_implemented(eq) else ConstantVariable(not eq.truth(tx))
        return ConstantVariable(NotImplemented)
    if not isinstance(static, types.FunctionType):
        raise Unsupported("unsupported_object", f"{cls.__qualname__}.{name} is a "
                                                f"{type(static).__name__}")
    return class_attribute(tx, cls, name, self_var).call(tx, [other], {})


def _same(tx, a: Variable, b: Variable) -> bool:
    """``a is b`` (objects of the frame: guarded, as IS_OP does)."""
    if a is b:
        return True
    same = isinstance(a, ObjectVariable) and isinstance(b, ObjectVariable) and a.obj is b.obj
    if a.source is not None and b.source is not None:
        tx.tr.guards.same_outcome(a.source, b.source, same)
    return same


def user_binary_op(tx, fn, a: Variable, b: Variable) -> Variable | None:
    """``a op b`` where an operand is an instance of a user class, by Python's
    rules: the reflected method of a right operand whose class is a subclass
    first, then ``a``'s method, then ``b``'s reflected one; ``==``/``!=`` fall
    back to identity, the others raise TypeError.  None when no operand is a
    user object (or the other operand is not a Python number)."""
    pair = _REFLECTED.get(fn) or _COMPARISONS.get(fn)
    if pair is None or not (_is_user(a) or _is_user(b)):
        return None
    for v in (a, b):
        if not _is_user(v) and not (v.is_constant() and isinstance(v.as_constant(), _NUMBERS)):
            return None
    forward, reflected = pair
    ta, tb = a.python_type(), b.python_type()
    calls = [(a, forward, b), (b, reflected, a)]
    if fn in _REFLECTED and ta is tb:
        calls = calls[:1]   # the reflected method is not tried for operands of one type
    if tb is not ta and issubclass(tb, ta) and _class_lookup(tb, reflected) is not \
            _class_lookup(ta, reflected):
        calls.reverse()
    for self_var, name, other in calls:
        result = _call_dunder(tx, self_var, name, other)
        if not _not_implemented(result):
            return result
    if fn is operator.eq or fn is operator.ne:
        return ConstantVariable(_same(tx, a, b) == (fn is operator.eq))
    raise UserCodeRaises(f"TypeError: unsupported operand type(s) for {_SYMBOLS[fn]}: "
                         f"{ta.__name__!r} and {tb.__name__!r}")


@HOOKS.provide
def user_inplace_op(tx, a: Variable, fn, b: Variable) -> Variable:
    """``a op= b`` of a user object: its Python ``__iop__`` (``__iadd__``...)
    when the class defines one and it does not return NotImplemented, else
    ``a op b``."""
    pair = _REFLECTED.get(fn)
    if pair is not None:
        name = "__i" + pair[0][2:]
        cls = _cls(a)
        static = _class_lookup(cls, name)
        if isinstance(static, types.FunctionType):
            result = class_attribute(tx, cls, name, a).call(tx, [b], {})
            if not _not_implemented(result):
                return result
        elif static is not _MISSING:
            raise Unsupported("unsupported_object", f"{cls.__qualname__}.{name} is a "
                                                    f"{type(static).__name__}")
    return tx.binary_op(fn, a, b)


# -- namedtuple methods -------------------------------------------------------------------------

def _generated(cls: type, name: str) -> bool:
    """Is ``cls.name`` the method ``collections.namedtuple`` made (not a user's override)?"""
    static = _class_lookup(cls, name)
    fn = static.__func__ if isinstance(static, classmethod) else static
    return isinstance(fn, types.FunctionType) and fn.__module__ == "collections"


@HOOKS.provide
def namedtuple_attr(tx, nt: NamedTupleVariable, name: str):
    """``_replace``, ``_asdict``, ``_make`` of a namedtuple, and the methods,
    properties and class attributes a ``typing.NamedTuple`` class defines;
    None when none applies (tuple's own methods)."""
    cls = nt.cls
    if name in ("_replace", "_asdict", "_make") and _generated(cls, name):
        guard_class_attr(tx, cls, name, _class_lookup(cls, name))
        return _NamedTupleMethod(nt, name)
    static = _class_lookup(cls, name)
    if static is _MISSING or not any(name in k.__dict__ for k in cls.__mro__[:cls.__mro__.index(tuple)]):
        return None
    if name in ("_fields", "_field_defaults"):
        return tx.wrap_result(getattr(cls, name))
    return class_attribute(tx, cls, name, nt)


@HOOKS.provide
def namedtuple_class_attr(tx, cls: type, name: str):
    """``Cls._make`` of a namedtuple class; None for anything else."""
    if name == "_make" and _generated(cls, name):
        guard_class_attr(tx, cls, name, _class_lookup(cls, name))
        return _NamedTupleMethod(None, name, cls)
    return None


class _NamedTupleMethod(Variable):
    """``nt._replace`` / ``nt._asdict`` / ``nt._make`` bound to a namedtuple
    (``Cls._make``: ``nt`` is None)."""
    __slots__ = ("nt", "name", "cls")

    def __init__(self, nt: NamedTupleVariable | None, name: str, cls: type | None = None):
        super().__init__(None)
        self.nt = nt
        self.name = name
        self.cls = nt.cls if nt is not None else cls

    def python_type(self) -> type:
        return types.MethodType

    def rebuilt_from(self) -> list[Variable]:
        return [self.nt] if self.nt is not None else []

    def reconstruct(self, rb) -> str:
        owner = rb.expr(self.nt) if self.nt is not None else rb.const(self.cls)
        return f"{owner}.{self.name}"

    def call(self, tx, args, kwargs):
        cls, fields = self.cls, self.cls._fields
        if self.name == "_asdict":
            if args or kwargs:
                raise UserCodeRaises("TypeError: _asdict() takes 1 positional argument")
            return DictVariable(dict(zip(fields, self.nt.items)))
        if self.name == "_replace":
            if args:
                raise UserCodeRaises("TypeError: _replace() takes 1 positional argument")
            unknown = [k for k in kwargs if k not in fields]
            if unknown:
                raise UserCodeRaises(f"ValueError: Got unexpected field names: {unknown!r}")
            return NamedTupleVariable(cls, [kwargs.get(f, item) for f, item in zip(fields, self.nt.items)])
        if len(args) != 1 or kwargs:
            raise UserCodeRaises("TypeError: _make() takes 2 positional arguments")
        items = args[0].iterate(tx)
        if len(items) != len(fields):
            raise UserCodeRaises(f"TypeError: Expected {len(fields)} arguments, got {len(items)}")
        return NamedTupleVariable(cls, items)

    def __repr__(self) -> str:
        return f"Method({self.nt!r}.{self.name})"
