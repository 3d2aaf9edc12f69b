"""What one translation shares across inlined calls, and how real objects
become Variables.

``Translation`` holds the tracer (graph), the guards, the side-effect log and
the identity map of wrapped objects: ``wrap(value, source)`` builds the
Variable for an object of the frame and the guards its use needs (type,
shape and dtype of tensors, value of constants, identity of functions,
modules and classes, type and length of containers); the same object reached
twice is one Variable (with an aliasing guard).
"""
from __future__ import annotations

import functools
import types

import numpy as np

from frame.autograd import tape
from frame.autograd.tape import is_grad_enabled
from frame.dtypes import DType, from_numpy
from frame.tensor import Tensor

from .autograd import grad_mode_static
from .errors import Unsupported, UserCodeRaises
from .guards import GuardSet
from .side_effects import SideEffects
from .sources import AttrSource, ConstSource, ItemSource, Source, is_safe_key
from .tracer import Tracer
from .variables.base import (CONSTANT_TYPES, NDARRAY, NPSCALAR, TENSOR, ConstantVariable,
                             TensorVariable, Variable)
from .variables.callables import (BuiltinVariable, FrameApiVariable, MethodVariable,
                                  NumpyFunctionVariable, UserFunctionVariable, is_frame_api)
from .variables.containers import (DictVariable, ListVariable, NamedTupleVariable, TupleVariable,
                                   is_namedtuple_class)
from .variables.instances import wrap_partial
from .variables.objects import ClassVariable, ObjectVariable, PythonModuleVariable

__all__ = ["Translation", "Cell", "plain_tensor_subclass"]


class Cell:
    """A closure cell during simulation: symbolic contents, or a real cell read
    through its source."""
    __slots__ = ("value", "real", "source")

    def __init__(self, value: Variable | None = None, real=None, source: Source | None = None):
        self.value = value
        self.real = real
        self.source = source


class Translation:
    def __init__(self, fn: types.FunctionType, device: str = "cpu"):
        self.fn = fn
        self.tracer = Tracer(device)
        self.guards = GuardSet()
        self.side_effects = SideEffects()
        self.wrapped: dict[int, Variable] = {}
        self._wrapping: set[int] = set()   # containers being wrapped (a cycle is refused)
        self.keepalive: list = []
        self.instruction_count = 0
        self.codes: set = set()    # every code object the trace ran (capture/persist.py)
        self.input_by_value: dict[int, TensorVariable] = {}  # id(graph input Value) -> variable
        self.views: dict[int, list[TensorVariable]] = {}    # id(base variable) -> its views
        self.generators: list = []   # GeneratorVariables made by the trace (checked at its end)
        # autograd under capture (capture/autograd.py)
        self.grad_mode: bool | None = None       # None: the caller's grad mode (guarded when read)
        self.entry_grad_mode: bool | None = None
        self.leaves: dict[int, TensorVariable] = {}      # id(meta) -> leaf input that requires grad
        self.tensor_objects: dict[int, object] = {}     # id(input variable) -> the real tensor
        self.input_arrays: dict[int, np.ndarray] = {}   # id(input variable) -> its real array
        self.backward_done = False
        self.tracer.tape.grad_enabled = self.grad_enabled

    def globals_ref(self, f_globals: dict, top: bool) -> str:
        """The entry's expression for a frame's globals dict.  The top frame's
        are ``__G``, the called function's ``__globals__`` (functions of one
        code object share a cache; each reads its own globals).  A called
        function's globals are its own (its identity is guarded): a pooled
        constant, or ``__G`` under a guard when they are the top frame's dict
        (one dict, as the trace assumed when it saw writes of one visible to
        the other)."""
        if f_globals is self.fn.__globals__:
            if not top:
                self.guards.globals_are(f_globals)
            return "__G"
        return self.guards.const(f_globals)

    def grad_enabled(self) -> bool:
        """Grad mode at this point of the trace: set by a ``no_grad``/``enable_grad``
        block, else the caller's (read once, guarded)."""
        if self.grad_mode is not None:
            return self.grad_mode
        if self.entry_grad_mode is None:
            self.entry_grad_mode = bool(is_grad_enabled())
            self.guards.grad_mode(is_grad_enabled, self.entry_grad_mode)
        return self.entry_grad_mode

    def mark_view(self, result: Variable, base: Variable, fn=None, args=(), kwargs=None) -> Variable:
        """``result`` may share memory with ``base`` (NumPy basic indexing,
        reshape, transpose...; ``frame.from_numpy``).  ``fn(base, *args,
        **kwargs)`` remakes it at run time when the constant arguments allow."""
        if not isinstance(result, TensorVariable):  # the items of a tuple or list of results
            for item in result.children():
                self.mark_view(item, base)
        elif isinstance(base, TensorVariable) and result.kind != NPSCALAR and result is not base:
            root = base.base if base.base is not None else base
            result.base = root
            self.views.setdefault(id(root), []).append(result)
            if fn is not None and all(a.is_constant() for a in args) and \
                    all(v.is_constant() for v in (kwargs or {}).values()):
                result.recipe = (base, fn, tuple(a.as_constant() for a in args),
                                 {k: v.as_constant() for k, v in (kwargs or {}).items()})
        return result

    def written_in_place(self, t: TensorVariable) -> None:
        """``t``'s memory is about to be overwritten: refuse writes through a
        view (its base would change too), and make existing views stale."""
        t.check_fresh()
        if t.base is not None:
            raise Unsupported("side_effect", "an in-place update through a view of another array "
                                             "(NumPy view or frame.from_numpy)")
        data = self.input_arrays.get(id(t))
        if data is not None and not data.flags.writeable:
            # the write raises NumPy's ValueError: the native run raises it, under
            # this guard (a writeable array of the same type is captured)
            self.guards.read_only(t.array_source(), t.source)
            raise UserCodeRaises(f"{t.source.text()} is read-only: writing it in place "
                                 f"raises ValueError")
        for view in self.views.pop(id(t), ()):
            view.stale = True

    # -- wrapping real objects into Variables, with guards -----------------------------
    def wrap(self, value, source: Source) -> Variable:
        """The Variable for an existing object reached through ``source``."""
        known = self.wrapped.get(id(value))
        if known is not None and not isinstance(known, ConstantVariable):
            if known.source is not None and known.source != source:
                self.guards.alias(source, known.source)
            return known
        if id(value) in self._wrapping:
            # a container that holds itself (a module's globals dict bound to one of
            # its own names): its Variable would have to hold itself
            raise Unsupported("unsupported_object", f"{source.text()}: a {type(value).__name__} "
                                                    f"that contains itself")
        self._wrapping.add(id(value))
        try:
            var = self._build(value, source)
        finally:
            self._wrapping.discard(id(value))
        if not isinstance(var, ConstantVariable):
            self.wrapped[id(value)] = var
            self.keepalive.append(value)
        return var

    def _build(self, value, source: Source) -> Variable:
        g = self.guards
        t = type(value)
        if t is Tensor or t is np.ndarray or plain_tensor_subclass(t):
            is_tensor = t is not np.ndarray
            data = value._data if is_tensor else value
            try:
                from_numpy(data.dtype)
            except TypeError as e:
                raise Unsupported("unsupported_object", str(e)) from e
            g.tensor(source, value)
            meta = self.tracer.input_for(data, source.text())
            var = TensorVariable(meta, TENSOR if is_tensor else NDARRAY, source,
                                 requires_grad=value._requires_grad if is_tensor else False)
            self.input_arrays[id(var)] = data
            if is_tensor:
                self.tensor_objects[id(var)] = value
                if value._rg and value._grad_fn is None:  # a leaf: ops on it are recorded
                    self.tracer.tape.leaf(meta)
                    self.leaves[id(meta)] = var
            if t is not Tensor and is_tensor:
                var.pytype = t
            self.input_by_value[id(self.tracer.values[id(meta)])] = var
            return var
        if isinstance(value, np.generic):
            g.constant(source, value)
            return ConstantVariable(value, source)
        if t in (int, float, bool, str, bytes, complex, type(None)):
            g.constant(source, value)
            return ConstantVariable(value, source)
        if t in (range, slice, type(Ellipsis), type(NotImplemented)):
            g.pooled_equal(source, value)
            return ConstantVariable(value, source)
        if t is tuple:
            g.type_and_len(source, value)
            return TupleVariable([self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)], source)
        if is_namedtuple_class(t):
            g.type_and_len(source, value)
            return NamedTupleVariable(t, [self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)],
                                      source)
        if t is list:
            g.type_and_len(source, value)
            return ListVariable([self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)], source)
        if t is dict:
            if not all(is_safe_key(k) for k in value):
                raise Unsupported("unsupported_object", "dict with keys that are not str/int/tuple")
            g.dict_keys(source, value)
            return DictVariable({k: self.wrap(v, ItemSource(source, k)) for k, v in value.items()}, source)
        if t is functools.partial:  # its func, args and keywords, each guarded through it
            g.type_is(source, value)
            return wrap_partial(self, value, source)
        static = self._static(value, source)
        if static is not None:
            g.identity(source, value)
            return static
        if value is tape._mode:  # read through is_grad_enabled() (symbolic), never directly
            raise Unsupported("unsupported_object", "frame's grad-mode state object")
        if t is types.MethodType:  # a bound method: its function and its object, each guarded
            g.type_is(source, value)
            return MethodVariable(self.wrap(value.__func__, AttrSource(source, "__func__")),
                                  self.wrap(value.__self__, AttrSource(source, "__self__")), source)
        if isinstance(value, type):
            g.identity(source, value)
            return ClassVariable(value, source)
        g.type_is(source, value)
        return ObjectVariable(value, source)

    def _static(self, value, source: Source | None) -> Variable | None:
        """Variables for functions, modules and other objects guarded by identity."""
        if isinstance(value, types.FunctionType) and getattr(value, "__frame_jit__", False):
            # another jitted function: inline what it wraps (guarded through it)
            inner = value.__wrapped__
            if source is None:
                return self.wrap_static(inner)
            return self.wrap(inner, AttrSource(source, "__wrapped__"))
        if isinstance(value, DType):
            return ConstantVariable(value, source)
        known = grad_mode_static(value, source)
        if known is not None:
            return known
        if isinstance(value, types.ModuleType):
            return PythonModuleVariable(value, source)
        if isinstance(value, (np.ufunc,)) or (callable(value) and _is_numpy(value)):
            if isinstance(value, type):
                return None
            return NumpyFunctionVariable(value, source)
        if isinstance(value, types.FunctionType):
            if is_frame_api(value):
                return FrameApiVariable(value, source)
            return UserFunctionVariable(value, source)
        if isinstance(value, types.BuiltinFunctionType) or (isinstance(value, type)
                                                            and value in _BUILTIN_CALLABLES):
            return BuiltinVariable(value, source)
        if isinstance(value, np.dtype):
            return ConstantVariable(value, source)
        return None

    def wrap_static(self, value) -> Variable:
        """A Variable for an object the trace depends on only through something
        already guarded (a method of a guarded class, a constant result)."""
        if isinstance(value, CONSTANT_TYPES) or isinstance(value, np.dtype):
            return ConstantVariable(value)
        if type(value) is tuple:
            return TupleVariable([self.wrap_static(v) for v in value])
        if isinstance(value, types.FunctionType) and not is_frame_api(value) \
                and not getattr(value, "__frame_jit__", False):
            # reachable through the pool, so its defaults and cells get guards
            shown = f"<{getattr(value, '__qualname__', value.__name__)}>"
            return self.wrap(value, ConstSource(self.guards.const(value), shown))
        static = self._static(value, None)
        if static is not None:
            return static
        if isinstance(value, type):
            return ClassVariable(value)
        raise Unsupported("unsupported_object", f"object {value!r} without a source")


_BUILTIN_CALLABLES = {len, isinstance, range, enumerate, zip, reversed, iter, next, list, tuple,
                      dict, min, max, sum, abs, int, float, str, repr, round, bool, getattr,
                      hasattr, sorted, all, any, slice, callable, divmod, pow, type, print,
                      chr, ord, issubclass, set, frozenset, map, filter, id, hash, open, input}


# what a Tensor subclass may define and still behave as a Tensor under capture
_PLAIN_SUBCLASS_NAMES = {"__module__", "__qualname__", "__doc__", "__slots__", "__init__", "__repr__",
                         "__str__", "__reduce__", "__reduce_ex__", "__deepcopy__", "__copy__",
                         "__annotations__", "__firstlineno__", "__static_attributes__", "__dict__",
                         "__weakref__"}


def plain_tensor_subclass(t: type) -> bool:
    """A Tensor subclass that changes no operator or method (``frame.nn.Parameter``):
    ops on it are the Tensor's ops."""
    if not (isinstance(t, type) and issubclass(t, Tensor)) or t is Tensor:
        return False
    for klass in t.__mro__[:t.__mro__.index(Tensor)]:
        if set(vars(klass)) - _PLAIN_SUBCLASS_NAMES:
            return False
    return True


def _is_numpy(value) -> bool:
    mod = getattr(value, "__module__", None) or ""
    return mod == "numpy" or mod.startswith("numpy.")
