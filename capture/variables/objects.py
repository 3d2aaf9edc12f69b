"""User objects, nn.Modules, Python modules and classes.

Attribute loads read the real object (guarded through their source);
attribute stores are side effects recorded by the translator and written back
after the graph runs.  Methods of user classes are inlined with ``self``
bound; properties are inlined through their getter.
"""
from __future__ import annotations

import enum
import functools
import itertools
import threading
import types

import numpy as np

from frame.tensor import Tensor

from ..errors import Unsupported, UserCodeRaises
from ..side_effects import DELETED
from ..sources import AttrSource, ConstSource, Source
from .base import (NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable,
                   refuse_tensor_index)
from .callables import BuiltinVariable, MethodVariable
from .containers import DictVariable, NamedTupleVariable, is_namedtuple_class
from .flow import (ExceptionVariable, initialised_exception_class, make_exception,
                   make_initialised_exception, modelled_exception_class)
from .registry import HOOKS, wrap_rule
from .stdlib import make_instance
from .tensor_ops import construct_tensor

__all__ = ["ObjectVariable", "PythonModuleVariable", "ClassVariable", "ExceptionVariable"]

_MISSING = object()
_OBJECT_CLASS = object.__dict__["__class__"]
_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (its attributes settable)


def _class_lookup(cls: type, name: str):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


# builtin iterator types (``iter(it) is it``)
_BUILTIN_ITERATORS = frozenset(type(i) for i in (
    iter([]), iter(()), iter(range(0)), iter(range(1 << 64)), iter(""), iter({}), iter({}.values()),
    iter({}.items()), iter(set()), reversed([]), reversed(range(0)), iter(np.zeros(0)), zip(),
    enumerate(()), map(abs, ()), filter(None, ()), (_ for _ in ())))


class ObjectVariable(Variable):
    """An existing Python object (it always has a source)."""
    __slots__ = ("obj",)

    def __init__(self, obj, source: Source | None = None):
        super().__init__(source)
        self.obj = obj

    def python_type(self) -> type:
        return type(self.obj)

    def is_mutable(self) -> bool:
        return True

    def truth(self, tx) -> bool:
        cls = type(self.obj)
        if _class_lookup(cls, "__bool__") is _MISSING and _class_lookup(cls, "__len__") is _MISSING:
            return True
        raise Unsupported("unsupported_object", f"truth value of a {cls.__name__} with __bool__/__len__")

    def get_iter(self, tx) -> Variable:
        """``iter(obj)`` of a class whose ``__iter__`` is Python code: inlined.
        A builtin iterator handed to a resume function (one rebuilt at a graph
        break) is its own iterator: a loop over it advances it natively
        (``next``)."""
        if isinstance(_class_lookup(type(self.obj), "__iter__"), types.FunctionType):
            return self.getattr(tx, "__iter__").call(tx, [], {})
        if type(self.obj) in _BUILTIN_ITERATORS and tx.tr.is_resume:
            return self
        return super().get_iter(tx)

    def contains(self, tx, item: Variable) -> bool:
        """``item in obj`` of a class whose ``__contains__`` is Python code: inlined."""
        if isinstance(_class_lookup(type(self.obj), "__contains__"), types.FunctionType):
            return self.getattr(tx, "__contains__").call(tx, [item], {}).truth(tx)
        return super().contains(tx, item)

    def getattr(self, tx, name: str) -> Variable:
        pending = tx.side_effects.pending_attr(self, name)
        if pending is DELETED:
            if _class_lookup(type(self.obj), name) is _MISSING and \
                    _class_lookup(type(self.obj), "__getattr__") is _MISSING:
                raise UserCodeRaises(f"{type(self.obj).__name__!r} object has no attribute {name!r}")
            raise Unsupported("unsupported_object", f"attribute {name!r} read after its del")
        if pending is not None:
            return pending
        cls = type(self.obj)
        pending = tx.side_effects.pending_class_attr(cls, name)   # a class attribute the trace wrote
        if pending is not None and name not in getattr(self.obj, "__dict__", {}):
            if hasattr(self.obj, "__dict__"):
                tx.tr.guards.no_instance_attr(self.source, name)
            return pending
        static = _class_lookup(cls, name)
        if name == "__class__" and static is _OBJECT_CLASS:   # its type (guarded by the wrap)
            return tx.wrap_static(cls)
        inst_dict = getattr(self.obj, "__dict__", None)
        if isinstance(static, (types.FunctionType, staticmethod, classmethod, property)):
            data_descriptor = isinstance(static, property)
            if data_descriptor or inst_dict is None or name not in inst_dict:
                guard_class_attr(tx, cls, name, static)
                if not data_descriptor and inst_dict is not None and self.source is not None:
                    tx.tr.guards.no_instance_attr(self.source, name)
                if isinstance(static, types.FunctionType):
                    return _bind(tx.wrap_static(static), self)
                if isinstance(static, staticmethod):
                    return tx.wrap_static(static.__func__)
                if isinstance(static, classmethod):
                    return _bind(tx.wrap_static(static.__func__), tx.wrap_static(cls))
                if static.fget is None:
                    raise UserCodeRaises(f"unreadable property {name!r}")
                return tx.wrap_static(static.fget).call(tx, [self], {})
        elif isinstance(static, types.MemberDescriptorType):  # a __slots__ slot: read the object
            try:
                value = getattr(self.obj, name)
            except AttributeError as e:
                raise UserCodeRaises(f"AttributeError: {e}") from e
            return tx.wrap(value, AttrSource(self.source, name))
        elif static is not _MISSING and hasattr(type(static), "__get__") and (
                hasattr(type(static), "__set__") or hasattr(type(static), "__delete__")):
            raise Unsupported("unsupported_object", f"data descriptor {cls.__name__}.{name}")
        if inst_dict is not None and name in inst_dict:
            return tx.wrap(inst_dict[name], AttrSource(self.source, name))
        if static is not _MISSING:
            if issubclass(cls, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
                raise Unsupported("unsupported_call", f"numpy.random.{cls.__name__}.{name} makes "
                                                      f"random numbers (NumPy's generators run "
                                                      f"natively)")
            if hasattr(type(static), "__get__"):
                raise Unsupported("unsupported_object", f"descriptor {cls.__name__}.{name}")
            return tx.wrap(static, AttrSource(self.source, name))
        if _class_lookup(cls, "__getattr__") is not _MISSING:
            raise Unsupported("unsupported_object", f"{cls.__name__} defines __getattr__")
        raise UserCodeRaises(f"{cls.__name__!r} object has no attribute {name!r}")

    def setattr(self, tx, name: str, value: Variable) -> None:
        cls = type(self.obj)
        if _class_lookup(cls, "__setattr__") not in (_MISSING, object.__setattr__):
            raise Unsupported("side_effect", f"{cls.__name__} defines __setattr__")
        static = _class_lookup(cls, name)
        if isinstance(static, types.MemberDescriptorType):  # a __slots__ slot: replayed by setattr
            tx.side_effects.store_attr(self, name, value)
            return
        if static is not _MISSING and hasattr(type(static), "__set__"):
            raise Unsupported("side_effect", f"assignment through descriptor {cls.__name__}.{name}")
        if not hasattr(self.obj, "__dict__"):
            raise Unsupported("side_effect", f"{cls.__name__} objects have no __dict__")
        tx.side_effects.store_attr(self, name, value)

    def enter_context(self, tx):
        """``with obj:`` of a class whose ``__enter__`` and ``__exit__`` are
        Python code: both inlined (looked up on the class, as ``with`` does)."""
        cls = type(self.obj)
        enter, exit_ = _class_lookup(cls, "__enter__"), _class_lookup(cls, "__exit__")
        if not (isinstance(enter, types.FunctionType) and isinstance(exit_, types.FunctionType)):
            what = ("a lock: its block must run while the lock is held, not as part of a graph"
                    if _is_lock(self.obj) else "its __enter__/__exit__ are not Python code")
            raise Unsupported("unsupported_object", f"with on a {cls.__name__} object ({what})")
        guard_class_attr(tx, cls, "__enter__", enter)
        guard_class_attr(tx, cls, "__exit__", exit_)
        exit_fn = _bind(tx.wrap_static(exit_), self)
        return exit_fn, _bind(tx.wrap_static(enter), self).call(tx, [], {})

    def text(self, tx, fn) -> Variable | None:
        """``str(obj)`` / ``repr(obj)`` through a Python ``__str__`` / ``__repr__``."""
        return python_text(tx, type(self.obj), self, fn)

    def delattr(self, tx, name: str) -> None:
        """``del obj.name`` of an instance attribute: a pending deletion,
        replayed with ``delattr`` after the graph runs."""
        cls = type(self.obj)
        if _class_lookup(cls, "__delattr__") not in (_MISSING, object.__delattr__):
            raise Unsupported("side_effect", f"{cls.__name__} defines __delattr__")
        static = _class_lookup(cls, name)
        if static is not _MISSING:
            raise Unsupported("side_effect", f"del {cls.__name__}.{name}, which the class also "
                                             f"defines")
        pending = tx.side_effects.pending_attr(self, name)
        if pending is DELETED or (pending is None and name not in getattr(self.obj, "__dict__", {})):
            raise UserCodeRaises(f"AttributeError: del of the missing attribute {name!r}")
        if pending is None:
            self.getattr(tx, name)  # guards the attribute the trace found
        tx.side_effects.store_attr(self, name, DELETED)

    def getitem(self, tx, index: Variable) -> Variable:
        if self.obj is not np.r_:   # np.r_[0, a] concatenates traced arrays (NumpyFunctionVariable)
            refuse_tensor_index(index)
        method = tx.getattr(self, "__getitem__")
        return method.call(tx, [index], {})

    def next(self, tx):
        if self.source is not None and hasattr(type(self.obj), "__next__"):
            # a real iterator handed to a resume function (a loop whose body broke
            # the graph): the entry advances it natively, one iteration at a time
            raise Unsupported("resume_loop", "next() of a loop's iterator")
        return super().next(tx)

    def inplace_op(self, tx, fn, other: Variable) -> Variable:
        """``obj op= other``: the class's Python ``__iadd__``... first."""
        return HOOKS.user_inplace_op(tx, self, fn, other)

    def call(self, tx, args, kwargs):
        call = _class_lookup(type(self.obj), "__call__")
        if isinstance(call, types.FunctionType):
            guard_class_attr(tx, type(self.obj), "__call__", call)
            return tx.wrap_static(call).call(tx, [self, *args], kwargs)
        raise Unsupported("unsupported_call", f"calling a {type(self.obj).__name__} object")

    def __repr__(self) -> str:
        return f"Object({type(self.obj).__name__} from {self.source})"


class InstanceDictVariable(Variable):
    """``vars(obj)`` / ``obj.__dict__`` of an object of the frame: a view of its
    instance attributes as they stand in the trace (the real ``__dict__``,
    keys guarded, with the pending attribute stores and deletions applied).
    Item stores and deletions are the object's attribute stores and
    deletions; ``keys()``/``values()``/``items()``/``get``/``copy`` read a
    snapshot."""
    __slots__ = ("obj",)

    def __init__(self, obj: ObjectVariable):
        super().__init__(None)
        self.obj = obj

    def python_type(self) -> type:
        return dict

    def _keys(self, tx) -> list[str]:
        obj = self.obj
        real = obj.obj.__dict__
        tx.tr.guards.dict_keys(AttrSource(obj.source, "__dict__"), real)
        keys = list(real)
        for (owner, name), (_, _, value) in tx.side_effects.attrs.items():
            if owner != id(obj):
                continue
            if value is DELETED:
                if name in keys:
                    keys.remove(name)
            elif name not in keys:
                keys.append(name)
        return keys

    def _key(self, index: Variable) -> str:
        key = index.as_constant() if index.is_constant() else None
        if type(key) is not str:
            raise Unsupported("unsupported_object", f"vars() of an object indexed by {index!r}")
        return key

    def snapshot(self, tx) -> Variable:
        return DictVariable({k: self.getitem(tx, ConstantVariable(k)) for k in self._keys(tx)})

    def getitem(self, tx, index: Variable) -> Variable:
        key = self._key(index)
        pending = tx.side_effects.pending_attr(self.obj, key)
        if pending is not None and pending is not DELETED:
            return pending
        real = self.obj.obj.__dict__
        if pending is DELETED or key not in real:
            raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
        tx.tr.guards.dict_keys(AttrSource(self.obj.source, "__dict__"), real)
        return tx.wrap(real[key], AttrSource(self.obj.source, key))

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        self.obj.setattr(tx, self._key(index), value)

    def delitem(self, tx, index: Variable) -> None:
        key = self._key(index)
        if key not in self._keys(tx):
            raise UserCodeRaises(f"KeyError: {key!r}", exc=KeyError(key))
        self.obj.delattr(tx, key)

    def contains(self, tx, item: Variable) -> bool:
        return item.is_constant() and item.as_constant() in self._keys(tx)

    def length(self, tx) -> Variable:
        return ConstantVariable(len(self._keys(tx)))

    def truth(self, tx) -> bool:
        return bool(self._keys(tx))

    def iterate(self, tx) -> list[Variable]:
        return [ConstantVariable(k) for k in self._keys(tx)]

    def getattr(self, tx, name: str) -> Variable:
        if name in ("keys", "values", "items", "get", "copy"):
            return tx.getattr(self.snapshot(tx), name)
        raise Unsupported("unsupported_object", f"method {name!r} of vars() of an object")

    def reconstruct(self, rb) -> str:
        return f"{rb.expr(self.obj)}.__dict__"

    def __repr__(self) -> str:
        return f"Vars({self.obj!r})"


def instance_dict(tx, obj: Variable) -> Variable:
    """``vars(obj)`` of an object of the frame or made in the trace."""
    if isinstance(obj, ObjectVariable) and obj.source is not None:
        cls = type(obj.obj)
        if type(getattr(obj.obj, "__dict__", None)) is not dict or \
                _class_lookup(cls, "__dict__") is not _MISSING and \
                not isinstance(_class_lookup(cls, "__dict__"), types.GetSetDescriptorType):
            raise Unsupported("unsupported_call", f"vars() of a {cls.__name__} object")
        return InstanceDictVariable(obj)
    made = getattr(obj, "instance_dict", None)   # an instance made in the trace (instances.py)
    if made is not None:
        return made()
    raise Unsupported("unsupported_call", f"vars() of {obj!r}")


_LOCK_TYPES = (type(threading.Lock()), type(threading.RLock()), threading.Semaphore,
               threading.Condition)


def _is_lock(obj) -> bool:
    return isinstance(obj, _LOCK_TYPES)


def guard_class_attr(tx, cls: type, name: str, static) -> None:
    """Guard that ``cls.name`` still resolves to what the trace used (classes
    are guarded by identity or by ``type(obj) is cls``; their attributes can
    still be reassigned)."""
    tx.tr.guards.class_attr(cls, name, static)


def _bind(func: Variable, self_var: Variable) -> Variable:
    return MethodVariable(func, self_var)


def python_text(tx, cls: type, self_var: Variable, fn) -> Variable | None:
    """``str(obj)`` / ``repr(obj)`` (``fn``) of an instance of ``cls`` whose class writes
    them in Python: the method inlined (``str`` falls back to ``__repr__`` through
    ``object.__str__``), each lookup guarded; None when they are not Python code."""
    for name in ("__str__", "__repr__") if fn is str else ("__repr__",):
        static = _class_lookup(cls, name)
        if static is not getattr(object, name) and not isinstance(static, types.FunctionType):
            return None
        guard_class_attr(tx, cls, name, static)
        if isinstance(static, types.FunctionType):
            result = _bind(tx.wrap_static(static), self_var).call(tx, [], {})
            if not (result.is_constant() and type(result.as_constant()) is str):
                raise Unsupported("unsupported_object", f"{cls.__name__}.{name} returned {result!r}")
            return result
    return None


class PythonModuleVariable(Variable):
    __slots__ = ("module",)

    def __init__(self, module: types.ModuleType, source: Source | None = None):
        super().__init__(source)
        self.module = module

    def python_type(self) -> type:
        return types.ModuleType

    def getattr(self, tx, name: str) -> Variable:
        try:
            value = getattr(self.module, name)
        except AttributeError as e:
            raise UserCodeRaises(f"module {self.module.__name__!r} has no attribute {name!r}") from e
        base = self.source
        if base is None:
            base = ConstSource(tx.tr.guards.const(self.module), self.module.__name__)
        return tx.wrap(value, AttrSource(base, name))

    def reconstruct(self, rb) -> str:
        if self.source is not None:
            return rb.source(self)
        return rb.const(self.module)

    def __repr__(self) -> str:
        return f"Module({self.module.__name__})"


class ClassVariable(Variable):
    __slots__ = ("cls",)

    def __init__(self, cls: type, source: Source | None = None):
        super().__init__(source)
        self.cls = cls

    def python_type(self) -> type:
        return type(self.cls)

    def is_constant(self) -> bool:
        return True

    def as_constant(self):
        return self.cls

    def describe(self) -> str:
        return self.cls.__name__

    def to_python(self, passed: dict | None = None):
        return self.cls

    def reconstruct(self, rb) -> str:
        if self.source is not None:
            return rb.source(self)
        return rb.const(self.cls)

    def getattr(self, tx, name: str) -> Variable:
        pending = tx.side_effects.pending_class_attr(self.cls, name)
        if pending is not None:   # written by the trace (setattr below)
            return pending
        static = _class_lookup(self.cls, name)
        if name in ("__name__", "__qualname__", "__module__") and not self.cls.__flags__ & _HEAPTYPE:
            return ConstantVariable(getattr(self.cls, name))   # a static type's names are fixed
        if static is _MISSING and name in ("__name__", "__qualname__", "__module__", "__doc__"):
            base = self.source or ConstSource(tx.tr.guards.const(self.cls), self.cls.__qualname__)
            return tx.wrap(getattr(self.cls, name), AttrSource(base, name))
        if static is _MISSING:
            if _class_lookup(type(self.cls), name) is not _MISSING:  # the metaclass's (type.mro...)
                raise Unsupported("unsupported_object", f"attribute {name!r} of the metaclass of "
                                                        f"{self.cls.__qualname__}")
            raise UserCodeRaises(f"type object {self.cls.__name__!r} has no attribute {name!r}")
        if is_namedtuple_class(self.cls):
            found = HOOKS.namedtuple_class_attr(tx, self.cls, name)   # Point._make(iterable)
            if found is not None:
                return found
        if isinstance(static, (types.FunctionType, staticmethod, classmethod)):
            guard_class_attr(tx, self.cls, name, static)
            if isinstance(static, staticmethod):
                return tx.wrap_static(static.__func__)
            if isinstance(static, classmethod):
                return _bind(tx.wrap_static(static.__func__), self)
            return tx.wrap_static(static)
        if static is object.__init__ or static is object.__setattr__:  # object.__setattr__(self, ...)
            return BuiltinVariable(static)
        if name == "__init__" and self.cls.__module__ == "builtins" and \
                issubclass(self.cls, BaseException):   # Exception.__init__(self, ...) in an __init__
            return BoundExceptionInit(None)
        if self.cls is itertools.chain and name == "from_iterable":   # a builtin classmethod
            return BuiltinVariable(itertools.chain.from_iterable)
        if hasattr(type(static), "__get__"):
            raise Unsupported("unsupported_object", f"descriptor {self.cls.__qualname__}.{name}")
        base = self.source
        if base is None:
            base = ConstSource(tx.tr.guards.const(self.cls), self.cls.__qualname__)
        return tx.wrap(getattr(self.cls, name), AttrSource(base, name))

    def setattr(self, tx, name: str, value: Variable) -> None:
        """``Cls.name = value`` of a plain data attribute (a counter, a
        registry): a side effect replayed after the graph like an instance's
        attribute (``SideEffects.store_class_attr``), read back by the trace
        through the class and its instances.  Methods, descriptors, dunder
        names and classes with a custom metaclass ``__setattr__`` are not
        modelled."""
        cls = self.cls
        what = f"setting attribute {name!r} on the class {cls.__qualname__}"
        if not cls.__flags__ & _HEAPTYPE:
            raise UserCodeRaises(f"TypeError: cannot set {name!r} attribute of immutable type "
                                 f"{cls.__name__!r}",
                                 exc=TypeError(f"cannot set {name!r} attribute of immutable type "
                                               f"{cls.__name__!r}"))
        if _class_lookup(type(cls), "__setattr__") is not type.__setattr__ or \
                (name.startswith("__") and name.endswith("__")):
            raise Unsupported("side_effect", f"{what} (a special name or metaclass)")
        static = _class_lookup(cls, name)
        meta = _class_lookup(type(cls), name)
        if hasattr(type(meta), "__set__") or (static is not _MISSING and hasattr(type(static), "__get__")):
            raise Unsupported("side_effect", f"{what}, a method or descriptor")
        if value.python_type() in (types.FunctionType, staticmethod, classmethod, property):
            raise Unsupported("side_effect", f"{what} to a function or descriptor")
        target = self if self.source is not None else \
            ClassVariable(cls, ConstSource(tx.tr.guards.const(cls), cls.__qualname__))
        tx.side_effects.store_class_attr(target, cls, name, value)

    def truth(self, tx) -> bool:
        """A class is true unless its metaclass says otherwise (``__bool__`` or
        ``__len__``: an enum); ``exc_type is not None and issubclass(...)`` in
        an ``__exit__``."""
        meta = type(self.cls)
        if _class_lookup(meta, "__bool__") is _MISSING and _class_lookup(meta, "__len__") is _MISSING:
            return True
        return super().truth(tx)

    def iterate(self, tx) -> list[Variable]:
        if isinstance(self.cls, enum.EnumMeta):   # the members, in definition order
            return [tx.wrap_static(member) for member in self.cls]
        return super().iterate(tx)

    def call(self, tx, args, kwargs):
        if modelled_exception_class(self.cls) and not kwargs:
            return make_exception(tx, self.cls, args)
        if initialised_exception_class(self.cls):   # a user exception class with an __init__
            return make_initialised_exception(tx, self.cls, args, kwargs)
        if issubclass(self.cls, BaseException) and (self.cls.__module__ == "builtins" or (
                not isinstance(_class_lookup(self.cls, "__init__"), types.FunctionType)
                and not isinstance(_class_lookup(self.cls, "__new__"), types.FunctionType))):
            return ExceptionVariable(self.cls, args, kwargs)   # a user exception class too (raised)
        made = make_instance(tx, self.cls, args, kwargs)
        if made is not None:
            return made
        if self.cls is super:
            return SuperVariable.from_call(tx, args, kwargs)
        if is_namedtuple_class(self.cls) and self.cls.__new__.__module__.startswith("namedtuple_"):
            fields = self.cls._fields
            values = dict(zip(fields, args))
            if len(args) > len(fields) or set(kwargs) - set(fields) or set(values) & set(kwargs):
                raise UserCodeRaises(f"TypeError: bad arguments for {self.cls.__name__}()")
            values.update(kwargs)
            defaults = self.cls._field_defaults
            missing = [f for f in fields if f not in values and f not in defaults]
            if missing:
                raise UserCodeRaises(f"TypeError: {self.cls.__name__}() missing {missing}")
            return NamedTupleVariable(self.cls, [values[f] if f in values else tx.wrap_result(defaults[f])
                                                 for f in fields])
        mod = getattr(self.cls, "__module__", "") or ""
        if isinstance(self.cls, type) and issubclass(self.cls, (np.number, np.bool_)) and \
                len(args) == 1 and not kwargs and isinstance(args[0], TensorVariable) and \
                args[0].kind != TENSOR:
            # np.float32(x.sum()): NumPy converts an array or a NumPy scalar as astype does,
            # and a 0-d array to a NumPy scalar
            result = args[0].getattr(tx, "astype").call(tx, [ConstantVariable(np.dtype(self.cls))], {})
            if isinstance(result, TensorVariable) and result.kind == NDARRAY and not result.shape:
                result = TensorVariable(result.meta, NPSCALAR)
            return result
        if mod == "numpy" or mod.startswith("numpy."):
            return tx.call_constant(self.cls, args, kwargs)
        if self.cls is Tensor:
            return construct_tensor(tx, args, kwargs)
        if self.cls is functools.partial:
            return HOOKS.make_partial(tx, args, kwargs)
        if isinstance(self.cls, type) and self.cls.__module__ != "builtins":
            return HOOKS.construct_instance(tx, self, args, kwargs)
        raise Unsupported("unsupported_call", f"creating a {self.cls.__qualname__} object")

    def __repr__(self) -> str:
        return f"Class({self.cls.__qualname__})"


class SuperVariable(Variable):
    """``super()`` / ``super(C, obj)`` for a user object: attribute lookup in
    ``type(obj).__mro__`` after ``C``."""
    __slots__ = ("cls_var", "self_var")

    def __init__(self, cls_var: Variable, self_var: Variable):
        super().__init__(None)
        self.cls_var = cls_var
        self.self_var = self_var

    @staticmethod
    def from_call(tx, args, kwargs) -> "SuperVariable":
        if kwargs or len(args) not in (0, 2):
            raise Unsupported("unsupported_call", "super() with these arguments")
        if len(args) == 2:
            return SuperVariable(args[0], args[1])
        code = tx.code  # zero-argument form: the __class__ cell and the first argument
        if "__class__" not in tx.cells or not code.co_argcount:
            raise UserCodeRaises("RuntimeError: super(): no arguments")
        return SuperVariable(tx.load_cell("__class__"), tx.locals[code.co_varnames[0]])

    def getattr(self, tx, name: str) -> Variable:
        cls = self.cls_var.as_constant() if isinstance(self.cls_var, ClassVariable) else None
        if isinstance(self.self_var, ExceptionVariable) and self.self_var.initialised \
                and isinstance(cls, type) and name == "__init__":
            return self._exception_init(tx, cls)
        if not isinstance(self.self_var, (ObjectVariable, HOOKS.UserObjectVariable)) or not isinstance(cls, type):
            raise Unsupported("unsupported_object", f"super() of {self.self_var!r}")
        mro = self.self_var.python_type().__mro__
        if cls not in mro:
            raise UserCodeRaises("TypeError: super(type, obj): obj must be an instance "
                                 "or subtype of type")
        for klass in mro[mro.index(cls) + 1:]:
            if name in klass.__dict__:
                static = klass.__dict__[name]
                break
        else:
            raise UserCodeRaises(f"'super' object has no attribute {name!r}")
        if isinstance(static, types.FunctionType):
            guard_class_attr(tx, klass, name, static)
            return _bind(tx.wrap_static(static), self.self_var)
        if isinstance(static, staticmethod):
            guard_class_attr(tx, klass, name, static)
            return tx.wrap_static(static.__func__)
        if isinstance(static, classmethod):
            guard_class_attr(tx, klass, name, static)
            return _bind(tx.wrap_static(static.__func__), tx.wrap_static(self.self_var.python_type()))
        if static is object.__init__ or static is object.__setattr__:
            return _bind(BuiltinVariable(static), self.self_var)
        raise Unsupported("unsupported_object", f"super().{name} is a {type(static).__name__}")

    def _exception_init(self, tx, cls: type) -> Variable:
        """``super().__init__`` in the ``__init__`` of an exception made in the
        trace: the next user ``__init__`` (inlined), or the builtin base's,
        which sets ``args``."""
        exc = self.self_var
        mro = exc.exc_type.__mro__
        if cls not in mro:
            raise UserCodeRaises("TypeError: super(type, obj): obj must be an instance "
                                 "or subtype of type")
        klass = next(k for k in mro[mro.index(cls) + 1:] if "__init__" in vars(k))
        init = vars(klass)["__init__"]
        if isinstance(init, types.FunctionType):
            guard_class_attr(tx, klass, "__init__", init)
            return _bind(tx.wrap_static(init), exc)
        return BoundExceptionInit(exc)

    def __repr__(self) -> str:
        return f"Super({self.cls_var!r}, {self.self_var!r})"


class BoundExceptionInit(Variable):
    """``BaseException.__init__`` bound to an exception made in the trace, or
    unbound (``exc`` None: ``Exception.__init__(self, ...)``, the first argument
    is the exception)."""
    __slots__ = ("exc",)

    def __init__(self, exc: ExceptionVariable | None):
        super().__init__(None)
        self.exc = exc

    def call(self, tx, args, kwargs):
        exc = self.exc
        if exc is None:
            exc, args = (args[0] if args else None), args[1:]
            if not isinstance(exc, ExceptionVariable) or not exc.initialised:
                raise Unsupported("unsupported_call", f"BaseException.__init__ of {exc!r}")
        exc.set_args(tx, args, kwargs)
        return ConstantVariable(None)

    def __repr__(self) -> str:
        return f"{self.exc!r}.__init__"


# -- wrapping existing objects (capture/variables/registry.py) ------------------------------

@wrap_rule(76, static=True)
def _wrap_module(tr, value, source: Source | None) -> Variable | None:
    """A Python module (guarded by identity)."""
    return PythonModuleVariable(value, source) if isinstance(value, types.ModuleType) else None


@wrap_rule(94)
def _wrap_class(tr, value, source: Source) -> Variable | None:
    """A class (guarded by identity)."""
    if not isinstance(value, type):
        return None
    tr.guards.identity(source, value)
    return ClassVariable(value, source)


@wrap_rule(100)
def _wrap_object(tr, value, source: Source) -> Variable:
    """Any other object: its attributes are read through it (guarded by type)."""
    tr.guards.type_is(source, value)
    return ObjectVariable(value, source)
