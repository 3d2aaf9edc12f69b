"""User objects, nn.Modules, Python modules and classes.

Attribute loads read the real object (guarded through their source);
attribute stores are side effects recorded by the translator and written back
after the graph runs.  Methods of user classes are inlined with ``self``
bound; properties are inlined through their getter.
"""
from __future__ import annotations

import types

from ..errors import Unsupported
from ..sources import AttrSource, Source
from .base import ConstantVariable, Variable

__all__ = ["ObjectVariable", "PythonModuleVariable", "ClassVariable"]

_MISSING = object()


def _class_lookup(cls: type, name: str):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


class ObjectVariable(Variable):
    """An existing Python object (it always has a source)."""
    __slots__ = ("obj",)

    def __init__(self, obj, source: Source | None = None):
        super().__init__(source)
        self.obj = obj

    def python_type(self) -> type:
        return type(self.obj)

    def truth(self, tx) -> bool:
        cls = type(self.obj)
        if _class_lookup(cls, "__bool__") is _MISSING and _class_lookup(cls, "__len__") is _MISSING:
            return True
        raise Unsupported("unsupported_object", f"truth value of a {cls.__name__} with __bool__/__len__")

    def getattr(self, tx, name: str) -> Variable:
        pending = tx.side_effects.pending_attr(self, name)
        if pending is not None:
            return pending
        cls = type(self.obj)
        static = _class_lookup(cls, name)
        if static is not _MISSING:
            if isinstance(static, types.FunctionType):
                if name in self.obj.__dict__ if hasattr(self.obj, "__dict__") else False:
                    pass  # an instance attribute shadows the method (below)
                else:
                    func = tx.wrap_static(static)
                    return _bind(func, self)
            elif isinstance(static, staticmethod):
                return tx.wrap_static(static.__func__)
            elif isinstance(static, classmethod):
                return _bind(tx.wrap_static(static.__func__), tx.wrap_static(cls))
            elif isinstance(static, property):
                if static.fget is None:
                    raise Unsupported("exception", f"unreadable property {name!r}")
                return tx.wrap_static(static.fget).call(tx, [self], {})
            elif hasattr(type(static), "__get__") and (hasattr(type(static), "__set__")
                                                     or hasattr(type(static), "__delete__")):
                raise Unsupported("unsupported_object", f"data descriptor {cls.__name__}.{name}")
        inst_dict = getattr(self.obj, "__dict__", None)
        if inst_dict is not None and name in inst_dict:
            return tx.wrap(inst_dict[name], AttrSource(self.source, name))
        if static is not _MISSING:
            if isinstance(static, (types.FunctionType, staticmethod, classmethod, property)):
                pass
            else:
                return tx.wrap(static, AttrSource(self.source, name))
        if _class_lookup(cls, "__getattr__") is not _MISSING:
            raise Unsupported("unsupported_object", f"{cls.__name__} defines __getattr__")
        raise Unsupported("exception", f"{cls.__name__!r} object has no attribute {name!r}")

    def setattr(self, tx, name: str, value: Variable) -> None:
        cls = type(self.obj)
        if _class_lookup(cls, "__setattr__") not in (_MISSING, object.__setattr__):
            raise Unsupported("side_effect", f"{cls.__name__} defines __setattr__")
        static = _class_lookup(cls, name)
        if static is not _MISSING and hasattr(type(static), "__set__"):
            raise Unsupported("side_effect", f"assignment through descriptor {cls.__name__}.{name}")
        if not hasattr(self.obj, "__dict__"):
            raise Unsupported("side_effect", f"{cls.__name__} objects have no __dict__")
        tx.side_effects.store_attr(self, name, value)

    def call(self, tx, args, kwargs):
        call = _class_lookup(type(self.obj), "__call__")
        if isinstance(call, types.FunctionType):
            return tx.wrap_static(call).call(tx, [self, *args], kwargs)
        raise Unsupported("unsupported_call", f"calling a {type(self.obj).__name__} object")

    def __repr__(self) -> str:
        return f"Object({type(self.obj).__name__} from {self.source})"


def _bind(func: Variable, self_var: Variable) -> Variable:
    from .callables import MethodVariable
    return MethodVariable(func, self_var)


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
            raise Unsupported("exception", f"module {self.module.__name__!r} has no attribute {name!r}") from e
        source = AttrSource(self.source, name) if self.source is not None else None
        return tx.wrap(value, source) if source is not None else tx.wrap_static(value)

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

    def getattr(self, tx, name: str) -> Variable:
        static = _class_lookup(self.cls, name)
        if static is _MISSING:
            raise Unsupported("exception", f"type object {self.cls.__name__!r} has no attribute {name!r}")
        if isinstance(static, staticmethod):
            return tx.wrap_static(static.__func__)
        if isinstance(static, classmethod):
            return _bind(tx.wrap_static(static.__func__), self)
        return tx.wrap_static(static)

    def call(self, tx, args, kwargs):
        mod = getattr(self.cls, "__module__", "") or ""
        if mod == "numpy" or mod.startswith("numpy."):
            return tx.call_constant(self.cls, args, kwargs)
        if mod.startswith("frame.") and self.cls.__name__ == "Tensor":
            from frame.tensor import tensor
            return tx.call_real(tensor, args, kwargs)
        raise Unsupported("unsupported_call", f"creating a {self.cls.__qualname__} object")

    def __repr__(self) -> str:
        return f"Class({self.cls.__qualname__})"
