"""Callables: user functions (inlined), frame API functions (run for real on
meta arrays under the tracer), NumPy functions, builtins, methods."""
from __future__ import annotations

import enum
import operator
import types

import numpy as np

from frame._numpy_functions import einsum_returns_view, einsum_view
from frame._numpy_indices import r_getitem
from frame._numpy_interop import FUNCTION_OPS, UFUNC_OPS
from frame.tensor import from_numpy, tensor

from ..errors import Unsupported, UserCodeRaises
from ..rebuild import make_function
from ..sources import AttrSource, LocalSource, Source
from .base import CONSTANT_TYPES, NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable
from .logging_calls import LOGGING_FUNCTIONS, logging_call
from .numpy_inplace import numpy_fill_diagonal, numpy_put_along_axis
from .masked import masked_numpy_call
from .numpy_layout import numpy_ascontiguousarray, numpy_asfortranarray, numpy_broadcast_arrays
from .numpy_results import (WARNING_ALIASES, is_cov_of_one_variable, is_masked_mean,
                            numpy_cov_of_one_variable, numpy_masked_mean, numpy_warning_alias)
from .numpy_dtypes import DTYPE_INFO_CLASSES, DTYPE_QUERIES, dtype_query, real_array_itself
from .registry import HOOKS, wrap_rule
from .scalars import numpy_scalar_operand
from .tensor_ops import construct_tensor, from_numpy_view

__all__ = ["UserFunctionVariable", "FrameApiVariable", "NumpyFunctionVariable", "BuiltinVariable",
           "MethodVariable", "BoundBuiltinMethod", "wrap_constant_attr", "is_frame_api"]

# frame functions with effects capture must not run at trace time
# frame functions that change state outside the graph (the random draws of
# frame.functions.random are traced: the tracer's level makes them graph inputs)
_IMPURE_FRAME = {"manual_seed", "generator"}
_FRAME_API_MODULES = ("frame.functions.", "frame.nn.functional", "frame.fft", "frame.tensor",
                      "frame._tensor_methods")


def is_frame_api(fn) -> bool:
    """Functions of frame's op API: pure functions of their tensor arguments."""
    mod = getattr(fn, "__module__", None) or ""
    if getattr(fn, "__frame_op__", None) is not None:
        return True
    return mod.startswith(_FRAME_API_MODULES)


class UserFunctionVariable(Variable):
    """A Python function: calls are inlined (simulated in a nested translator).

    ``by_code``: a function made by the frame and handed to its resume function
    (a new object at each call), guarded by its code and globals, not by
    identity (``_wrap_made_function``): what the trace reads of it besides its
    code, defaults and closure cells is refused."""
    __slots__ = ("fn", "closure", "made_defaults", "by_code", "annotated")

    def __init__(self, fn: types.FunctionType, source: Source | None = None, closure=None):
        super().__init__(source)
        self.fn = fn
        # for functions made during the trace: their cells and default Variables
        self.closure = closure
        self.made_defaults = None
        self.by_code = False
        self.annotated = False   # made with annotations (which the trace does not keep)

    def python_type(self) -> type:
        return types.FunctionType

    def call(self, tx, args, kwargs):
        escape = getattr(self.fn, "__frame_escape__", None)  # frame.graph_break / frame.disable
        if escape is not None:
            raise Unsupported("explicit", "frame.graph_break()" if escape == "graph_break" else
                              f"{self.fn.__qualname__} is decorated with frame.disable")
        traced = getattr(self.fn, "__frame_traced_as__", None)
        if traced is not None:  # auto-jit's Module.__call__ hook traces as the plain call
            return tx.wrap_static(traced).call(tx, args, kwargs)
        if self.fn in LOGGING_FUNCTIONS:   # a logger not enabled for the level: nothing (guarded)
            done = logging_call(tx, self.fn, args, kwargs)
            if done is not None:
                return done
        return tx.inline_call(self, args, kwargs)

    def user_function(self):
        if self.closure is None and self.made_defaults is None:
            return self, None
        return None

    def getattr(self, tx, name: str) -> Variable:
        pending = tx.side_effects.pending_attr(self, name)   # written by the trace (setattr)
        if pending is not None:
            return pending
        if name in ("__name__", "__qualname__", "__module__", "__doc__") and not self.by_code:
            if self.source is not None:   # (they can be assigned: guarded)
                return tx.wrap(getattr(self.fn, name), AttrSource(self.source, name))
            return ConstantVariable(getattr(self.fn, name))
        if self.source is not None and not self.by_code and name in self.fn.__dict__:
            # an attribute of the program's function (``wrapper.calls``, ``__wrapped__``)
            return tx.wrap(self.fn.__dict__[name], AttrSource(self.source, name))
        if self.source is not None and not self.by_code and _user_attribute(name):
            tx.tr.guards.no_instance_attr(self.source, name)
            message = f"{type(self.fn).__name__!r} object has no attribute {name!r}"
            raise UserCodeRaises(f"AttributeError: {message}", exc=AttributeError(message))
        return super().getattr(tx, name)

    def setattr(self, tx, name: str, value: Variable) -> None:
        """``fn.name = value`` on a function of the program (a call counter,
        ``__name__`` / ``__doc__`` set by a decorator): replayed after the
        graph like an object's attribute.  Functions made in the call and
        the attributes that change how the function runs (``__code__``,
        ``__defaults__``...) are not modelled."""
        if self.source is None or self.by_code or not (
                _user_attribute(name) or name in ("__name__", "__qualname__", "__doc__")):
            raise Unsupported("side_effect", f"setting attribute {name!r} on {self!r}")
        if name in ("__name__", "__qualname__") and value.python_type() is not str:
            message = f"{name} must be set to a string object"
            raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
        tx.side_effects.store_attr(self, name, value)

    def rebuilt_from(self) -> list[Variable]:
        if self.source is not None:
            return []
        defaults, kwdefaults = self.made_defaults or ([], {})
        cells = [c.value for c in self.closure or () if c.real is None and c.value is not None]
        return [*defaults, *kwdefaults.values(), *cells]

    def reconstruct(self, rb) -> str:
        """A function the frame made (``MAKE_FUNCTION``), live at a graph break:
        a real function of the same code, defaults and globals whose closure
        holds real cells (``rb.cell``: the frame's cells are the very cells the
        resume function gets, so ``nonlocal`` writes are shared)."""
        if self.source is not None or self.made_defaults is None:
            return super().reconstruct(rb)
        if self.annotated:
            raise Unsupported("unsupported_object", f"returning or storing {self!r}, made with "
                                                    f"annotations")
        name = rb.named(self)
        if name is not None:
            return name
        defaults, kwdefaults = self.made_defaults
        d = "(" + "".join(rb.expr(v) + ", " for v in defaults) + ")" if defaults else "None"
        kw = ("{" + ", ".join(f"{k!r}: {rb.expr(v)}" for k, v in kwdefaults.items()) + "}"
              if kwdefaults else "None")
        closure = ("(" + "".join(rb.cell(c) + ", " for c in self.closure) + ")"
                   if self.closure else "None")
        name = rb.named(self)   # (a cell of its closure may hold the function itself)
        if name is not None:
            return name
        made = (f"{rb.const(make_function)}({rb.const(self.fn.__code__)}, "
                f"{rb.globals_of(self.fn)}, {d}, {kw}, {closure})")
        name = rb.new_name(self)
        rb.emit(f"{name} = {made}")
        return name

    def __repr__(self) -> str:
        return f"Function({self.fn.__qualname__})"


def _user_attribute(name: str) -> bool:
    """A name a program stores in a function's ``__dict__`` (not a special one)."""
    return not (name.startswith("__") and name.endswith("__"))


class CallableVariable(Variable):
    """A Python callable known at trace time (``fn``); subclasses say how a call
    is simulated."""
    __slots__ = ("fn",)

    def __init__(self, fn, source: Source | None = None):
        super().__init__(source)
        self.fn = fn

    def python_type(self) -> type:
        return type(self.fn)

    def to_python(self, passed: dict | None = None):
        return self.fn

    def reconstruct(self, rb) -> str:
        if self.source is not None:
            return rb.source(self)
        return rb.const(self.fn)


class FrameApiVariable(CallableVariable):
    """A frame API function: run for real under the tracer."""
    __slots__ = ()

    def call(self, tx, args, kwargs):
        name = getattr(self.fn, "__name__", "")
        if name in _IMPURE_FRAME and getattr(self.fn, "__module__", None) == "frame.functions.random":
            raise Unsupported("unsupported_call", f"frame.{name} changes or hands out frame's "
                                                  f"random generator")
        if self.fn is tensor:
            return construct_tensor(tx, args, kwargs)
        if self.fn is from_numpy:
            return from_numpy_view(tx, args, kwargs)
        return tx.call_real(self.fn, args, kwargs)

    def __repr__(self) -> str:
        return f"FrameApi({getattr(self.fn, '__qualname__', self.fn)})"


# NumPy callables capture can model: the ones frame maps onto its ops
def _numpy_tables():
    return UFUNC_OPS, FUNCTION_OPS


_PURE_NUMPY_CONSTRUCTORS = {np.zeros, np.ones, np.full, np.arange, np.linspace, np.eye,
                            np.identity, np.array, np.asarray, np.zeros_like, np.ones_like,
                            np.full_like, np.tri, np.logspace, np.geomspace,
                            # index arrays of a shape given by ints
                            np.triu_indices, np.tril_indices, np.diag_indices, np.indices,
                            np.ravel_multi_index}
_R_GETITEM = type(np.r_).__getitem__
# constructors whose values are unspecified, and their zero-filled twins
_UNINITIALISED = {np.empty: np.zeros, np.empty_like: np.zeros_like}
# NumPy functions whose result may be a view of their first argument
_NUMPY_VIEW_FUNCTIONS = {np.reshape, np.transpose, np.squeeze, np.expand_dims, np.broadcast_to,
                         np.flip, np.split, np.swapaxes, np.ravel, np.moveaxis, np.array_split,
                         np.fliplr, np.flipud, np.rot90,
                         np.imag}  # (of a real array: read-only zeros; a write runs natively)
# ... and those whose result is a list of slices of it along one axis
_NUMPY_SPLIT_FUNCTIONS = {np.split, np.array_split}


def _histogram_edges_of_bins(args, kwargs, result: Variable) -> Variable:
    """``np.histogram(a, bins=edges)`` returns ``np.asarray(edges)``: the very
    array when ``edges`` is one (its values are the edges frame computed)."""
    bins = kwargs.get("bins", args[1] if len(args) > 1 else None)
    if isinstance(bins, TensorVariable) and bins.kind == NDARRAY and len(result.children()) == 2:
        counts, _ = result.children()
        return type(result)([counts, bins])
    return result


def numpy_name(fn) -> str:
    """``numpy.random.rand``, ``numpy.linalg.norm``, ``numpy.exp``: the name a
    user wrote for a NumPy callable."""
    name = getattr(fn, "__name__", None) or repr(fn)
    owner = getattr(fn, "__self__", None)
    module = getattr(fn, "__module__", None) or ""
    if isinstance(owner, np.random.Generator) or (isinstance(owner, np.random.RandomState)
                                                   and owner is not np.random.mtrand._rand):
        return f"numpy.random.{type(owner).__name__}.{name}"  # a method of a generator object
    if isinstance(owner, np.random.RandomState) or module.startswith("numpy.random"):
        return f"numpy.random.{name}"
    for sub in ("linalg", "fft", "polynomial", "ma", "char", "strings", "rec", "emath"):
        if module == f"numpy.{sub}" or module.startswith(f"numpy.{sub}."):
            return f"numpy.{sub}.{name}"
    return f"numpy.{name}"


def _mark_split_views(tx, pieces: Variable, base: TensorVariable, axis) -> None:
    """The pieces of ``np.split``/``np.array_split`` of an array: views of it,
    each remade at run time as the slice ``base[..., start:stop]``."""
    items = pieces.children()
    if not all(isinstance(p, TensorVariable) for p in items) or not axis.is_constant():
        tx.tr.mark_view(pieces, base)
        return
    ndim = len(base.shape)
    ax = operator.index(axis.as_constant())
    ax = ax + ndim if ax < 0 else ax
    start = 0
    for piece in items:
        stop = start + piece.shape[ax]
        index = (slice(None),) * ax + (slice(start, stop),)
        tx.tr.mark_view(piece, base, operator.getitem, [ConstantVariable(index)])
        start = stop


class NumpyFunctionVariable(CallableVariable):
    """A NumPy function or ufunc.  With tensor arguments it becomes graph nodes
    through frame's NumPy protocols (and NumPy's output types); with constant
    arguments it runs at trace time when it is pure."""
    __slots__ = ()

    def call(self, tx, args, kwargs):
        ufuncs, functions = _numpy_tables()
        if any(v.masked_selection() is not None for v in [*args, *kwargs.values()]):
            return masked_numpy_call(tx, self.fn, args, kwargs)   # np.mean(err[valid] ** 2)
        if self.fn in DTYPE_QUERIES:  # np.result_type, np.finfo...: dtypes only, at trace time
            return dtype_query(tx, self.fn, args, kwargs)
        if self.fn is np.real and real_array_itself(args, kwargs):  # NumPy returns the array
            return args[0]
        if self.fn is np.fill_diagonal:  # writes into its array argument
            return numpy_fill_diagonal(tx, args, kwargs)
        if self.fn is np.put_along_axis and tx.contains_tensor(args, kwargs):   # (the same)
            return numpy_put_along_axis(tx, args, kwargs)
        if self.fn is np.ascontiguousarray and tx.contains_tensor(args, kwargs):
            return numpy_ascontiguousarray(tx, args, kwargs)  # the array itself when contiguous
        if self.fn is np.asfortranarray and tx.contains_tensor(args, kwargs):
            return numpy_asfortranarray(tx, args, kwargs)
        if self.fn is np.mean and is_masked_mean(args, kwargs):
            return numpy_masked_mean(tx, args, kwargs)   # checked for empty slices at run time
        if self.fn in WARNING_ALIASES and tx.contains_tensor(args, kwargs):
            return numpy_warning_alias(tx, self.fn, args, kwargs)   # and NumPy's DeprecationWarning
        if self.fn is np.cov and is_cov_of_one_variable(args, kwargs):
            return numpy_cov_of_one_variable(tx, args, kwargs)   # a 0-d array
        if self.fn is np.broadcast_arrays and tx.contains_tensor(args, kwargs):
            return numpy_broadcast_arrays(tx, args, kwargs)   # the arrays or views of them
        if self.fn is np.isscalar and len(args) == 1 and not kwargs and \
                isinstance(args[0], TensorVariable):   # a type query: a NumPy scalar, not an array
            return ConstantVariable(args[0].kind == NPSCALAR)
        if isinstance(self.fn, np.ufunc) and self.fn in ufuncs:
            args = [numpy_scalar_operand(tx, a) for a in args]   # dynamic NumPy float scalars
        if self.fn is _R_GETITEM and len(args) == 2 and not kwargs and \
                getattr(args[0], "obj", None) is np.r_:
            # np.r_[0, a] (the method, called with np.r_ itself): frame's concatenation
            if not tx.contains_tensor(args, kwargs):
                return tx.call_constant(np.r_.__getitem__, args[1:], {})
            return tx.call_real(r_getitem, args[1:], {}, numpy_semantics=True,
                                numpy_ref=np.r_.__getitem__)
        if numpy_name(self.fn).startswith("numpy.random."):   # a draw, or a break
            return HOOKS.numpy_random_call(tx, self, args, kwargs)
        if tx.contains_tensor(args, kwargs):
            result = HOOKS.numpy_array_function(tx, self.fn, args, kwargs)
            if result is not None:
                return result
            if self.fn in ufuncs or self.fn in functions:
                result = HOOKS.numpy_call(tx, self.fn, args, kwargs)
                if self.fn is np.histogram:
                    result = _histogram_edges_of_bins(args, kwargs, result)
                if self.fn in _NUMPY_VIEW_FUNCTIONS and args and isinstance(args[0], TensorVariable) \
                        and args[0].kind != TENSOR:
                    if self.fn in _NUMPY_SPLIT_FUNCTIONS:
                        axis = kwargs.get("axis", args[2] if len(args) > 2 else ConstantVariable(0))
                        _mark_split_views(tx, result, args[0], axis)
                    else:
                        tx.tr.mark_view(result, args[0], self.fn, args[1:], kwargs)
                elif self.fn is np.einsum and len(args) == 2 and not kwargs and \
                        args[0].is_constant() and isinstance(args[0].as_constant(), str) and \
                        isinstance(args[1], TensorVariable) and args[1].kind != TENSOR and \
                        einsum_returns_view(args[0].as_constant()):
                    # one operand, nothing summed: NumPy hands out a view of it
                    tx.tr.mark_view(result, args[1], einsum_view, args[:1], {})
                return result
            raise Unsupported("unsupported_call", f"{numpy_name(self.fn)} on a tensor has no frame op")
        if isinstance(self.fn, np.ufunc) or self.fn in _PURE_NUMPY_CONSTRUCTORS or self.fn in functions:
            return tx.call_constant(self.fn, args, kwargs)
        if self.fn in _UNINITIALISED:  # any values are NumPy's; frame's are zeros
            return tx.call_constant(_UNINITIALISED[self.fn], args, kwargs)
        raise Unsupported("unsupported_call", f"{numpy_name(self.fn)}")

    def getattr(self, tx, name: str) -> Variable:
        if isinstance(self.fn, np.ufunc) and name in ("reduce", "accumulate", "outer", "at"):
            return BoundBuiltinMethod(self, name)
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Numpy({getattr(self.fn, '__name__', self.fn)})"


class MethodVariable(Variable):
    """A Python method bound to a Variable (user objects, modules)."""
    __slots__ = ("func", "self_var")

    def __init__(self, func: Variable, self_var: Variable, source: Source | None = None):
        super().__init__(source)
        self.func = func
        self.self_var = self_var

    def call(self, tx, args, kwargs):
        return self.func.call(tx, [self.self_var, *args], kwargs)

    def user_function(self):
        called = self.func.user_function()
        if called is not None and called[1] is None:
            return called[0], self.self_var
        return None

    def python_type(self) -> type:
        return types.MethodType

    def rebuilt_from(self) -> list[Variable]:
        return [self.self_var]

    def reconstruct(self, rb) -> str:
        if self.source is not None:
            return rb.source(self)
        return f"{rb.const(types.MethodType)}({rb.expr(self.func)}, {rb.expr(self.self_var)})"


class BoundBuiltinMethod(Variable):
    """A method of a container Variable (``lst.append``) or of a constant."""
    __slots__ = ("obj", "name")

    def __init__(self, obj: Variable, name: str):
        super().__init__(None)
        self.obj = obj
        self.name = name

    def call(self, tx, args, kwargs):
        return HOOKS.call_container_method(tx, self.obj, self.name, args, kwargs)

    def rebuilt_from(self) -> list[Variable]:
        return [self.obj]

    def reconstruct(self, rb) -> str:
        return f"{rb.expr(self.obj)}.{self.name}"

    def __repr__(self) -> str:
        return f"Method({self.obj!r}.{self.name})"


@HOOKS.provide
def wrap_constant_attr(tx, var: ConstantVariable, name: str) -> Variable:
    """Attributes of immutable constants: data attributes fold; methods of
    str/int/float/tuple... become bound methods run at trace time."""
    value = var.value
    if name == "__class__":   # (a dataclass's __eq__ compares other.__class__)
        return tx.wrap_static(type(value))
    if isinstance(value, enum.Enum):
        return _enum_member_attr(tx, var, name)
    try:
        attr = getattr(value, name)
    except AttributeError as e:
        raise UserCodeRaises(f"{type(value).__name__!r} has no attribute {name!r}") from e
    if isinstance(attr, CONSTANT_TYPES) or isinstance(attr, (np.generic, np.dtype)):
        return ConstantVariable(attr)
    if isinstance(attr, (types.BuiltinMethodType, types.MethodWrapperType)):
        return BoundBuiltinMethod(var, name)
    if isinstance(value, np.dtype) and name == "type":   # x.dtype.type: NumPy's scalar type
        return tx.wrap_static(attr)
    raise Unsupported("unsupported_object", f"attribute {name!r} of {type(value).__name__}")


def _enum_member_attr(tx, var: ConstantVariable, name: str) -> Variable:
    """``member.name`` / ``member.value`` (fixed when the class was made) and
    the class's Python methods (inlined); other attributes are not read at
    trace time (a property's getter, an attribute set later)."""
    member, cls = var.value, type(var.value)
    if name in ("name", "value", "_name_", "_value_"):
        attr = getattr(member, name)
        if isinstance(attr, CONSTANT_TYPES) or isinstance(attr, enum.Enum) or (
                type(attr) is tuple and all(isinstance(a, CONSTANT_TYPES) for a in attr)):
            return tx.wrap_result(attr)
        raise Unsupported("unsupported_object", f"{cls.__qualname__}.{name} is a "
                                                f"{type(attr).__name__}")
    for klass in cls.__mro__:
        if name in vars(klass):
            static = vars(klass)[name]
            if isinstance(static, types.FunctionType) and klass.__module__ != "enum":
                tx.tr.guards.class_attr(cls, name, static)
                return MethodVariable(tx.wrap_static(static), var)
            break
    if name not in vars(member) and isinstance(getattr(cls, name, None),
                                               (types.BuiltinMethodType, types.MethodWrapperType,
                                                types.WrapperDescriptorType, types.MethodDescriptorType)):
        return BoundBuiltinMethod(var, name)   # an IntEnum's int methods (bit_length...)
    raise Unsupported("unsupported_object", f"attribute {name!r} of the enum member {member!r}")


class BuiltinVariable(CallableVariable):
    """A builtin or math function; the handlers live in ``builtins.py``."""
    __slots__ = ()

    def call(self, tx, args, kwargs):
        return HOOKS.call_builtin(tx, self.fn, args, kwargs)

    def is_constant(self) -> bool:
        # the scalar types are also dtypes: np.zeros(n, dtype=int), a.astype(float)
        return self.fn in _SCALAR_TYPES

    def as_constant(self):
        if self.fn in _SCALAR_TYPES:
            return self.fn
        return super().as_constant()

    def getattr(self, tx, name: str) -> Variable:
        if self.fn is dict and name == "fromkeys":   # (container_methods.py)
            return BoundBuiltinMethod(self, name)
        if self.fn in _SCALAR_TYPES and isinstance(
                getattr(self.fn, name, None), (types.BuiltinMethodType, types.MethodDescriptorType,
                                               types.WrapperDescriptorType)):
            return BoundBuiltinMethod(self, name)   # int.from_bytes, float.fromhex: run on constants
        if name in ("__name__", "__qualname__", "__module__") and (
                isinstance(self.fn, types.BuiltinFunctionType)
                or isinstance(self.fn, type) and self.fn.__module__ == "builtins"):
            return ConstantVariable(getattr(self.fn, name))   # type(s).__name__: fixed for builtins
        if isinstance(self.fn, type) and self.fn.__module__ == "builtins" and not hasattr(self.fn, name):
            # a builtin type's attributes cannot change: hasattr(float, "__dataclass_fields__")
            message = f"type object {self.fn.__name__!r} has no attribute {name!r}"
            raise UserCodeRaises(f"AttributeError: {message}", exc=AttributeError(message))
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Builtin({getattr(self.fn, '__name__', self.fn)})"


_SCALAR_TYPES = (bool, int, float, complex)

# -- wrapping existing callables (capture/variables/registry.py) ----------------------------

_BUILTIN_CALLABLES = {len, isinstance, range, enumerate, zip, reversed, iter, next, list, tuple,
                      dict, min, max, sum, abs, int, float, str, repr, round, bool, getattr,
                      hasattr, sorted, all, any, slice, callable, divmod, pow, type, print,
                      chr, ord, issubclass, set, frozenset, map, filter, id, hash, open, input,
                      complex}


def _is_numpy(value) -> bool:
    mod = getattr(value, "__module__", None) or ""
    return mod == "numpy" or mod.startswith("numpy.")


@wrap_rule(70, static=True)
def _wrap_jitted(tr, value, source: Source | None) -> Variable | None:
    """Another jitted function: inline what it wraps (guarded through it)."""
    if not (isinstance(value, types.FunctionType) and getattr(value, "__frame_jit__", False)):
        return None
    inner = value.__wrapped__
    if source is None:
        return tr.wrap_static(inner)
    return tr.wrap(inner, AttrSource(source, "__wrapped__"))


@wrap_rule(77)
def _wrap_bound_numpy_method(tr, value, source: Source | None) -> Variable | None:
    """A method of a NumPy random generator object (``rng.shuffle``) or of a
    ufunc (``np.maximum.at``), read anew at each access: at a graph break in
    ``rng.shuffle(x)`` (a break at the call) the bound method on the stack
    reaches the resume function, a new object at every call.  It is guarded by
    its type, its name and its owner (a generator's type; a ufunc, one object,
    by identity) rather than by its own identity (a recompile per call, up to
    the limit); its call runs as the owner's method: a sampler's is a draw
    from its ``__self__`` (``numpy_random.numpy_random_call``), another runs
    natively on the object the resume function is given.  The module-level
    ``np.random.rand`` and friends, methods of NumPy's one global
    RandomState, stay with rule 78."""
    if source is None or type(value) not in (types.MethodType, types.BuiltinMethodType):
        return None  # (Generator's methods are Cython functions: bound, a MethodType)
    owner = getattr(value, "__self__", None)
    if isinstance(owner, np.ufunc):
        tr.guards.identity(AttrSource(source, "__self__"), owner)
    elif isinstance(owner, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)) \
            and owner is not np.random.mtrand._rand:
        tr.guards.type_is(AttrSource(source, "__self__"), owner)
    else:
        return None
    tr.guards.type_is(source, value)
    tr.guards.constant(AttrSource(source, "__name__"), value.__name__)
    return NumpyFunctionVariable(value, source)


@wrap_rule(78, static=True)
def _wrap_numpy_function(tr, value, source: Source | None) -> Variable | None:
    """A NumPy function or ufunc (a NumPy class is not one: it is wrapped as a
    class, no later static rule taking it)."""
    if isinstance(value, (np.ufunc,)) or (callable(value) and _is_numpy(value)):
        if isinstance(value, type) and value not in DTYPE_INFO_CLASSES:
            return None
        if _is_numpy(type(value)) and not isinstance(value, _NUMPY_FUNCTION_TYPES):
            # an instance of a NumPy class that is callable (``np.errstate(...)``, a one-shot
            # context manager; ``np.vectorize(f)``; ``np.poly1d(c)``): an object with state,
            # not a function (pooled, one object would serve every call)
            return None
        return NumpyFunctionVariable(value, source)
    return None


# the types of NumPy's functions: ufuncs and ``__array_function__`` dispatchers (np.sum)
_NUMPY_FUNCTION_TYPES = (np.ufunc, type(np.sum))


@wrap_rule(80, static=True)
def _wrap_frame_api(tr, value, source: Source | None) -> Variable | None:
    """A function of frame's op API."""
    if isinstance(value, types.FunctionType) and is_frame_api(value):
        return FrameApiVariable(value, source)
    return None


@wrap_rule(81)
def _wrap_made_function(tr, value, source: Source | None) -> Variable | None:
    """A function the frame made before a graph break, a parameter of its
    resume function: a new object at each call, guarded by its code and
    globals (its defaults and cells are guarded where the trace reads them)."""
    if not (tr.is_resume and isinstance(source, LocalSource) and type(value) is types.FunctionType
            and "<locals>" in value.__qualname__ and not is_frame_api(value)):
        return None
    tr.guards.made_function(source, value)
    var = UserFunctionVariable(value, source)
    var.by_code = True
    return var


@wrap_rule(82, static=True)
def _wrap_user_function(tr, value, source: Source | None) -> Variable | None:
    """A Python function of the program (inlined when called)."""
    return UserFunctionVariable(value, source) if isinstance(value, types.FunctionType) else None


@wrap_rule(84, static=True)
def _wrap_builtin(tr, value, source: Source | None) -> Variable | None:
    """A builtin function, or a builtin type capture calls (``list``, ``int``...)."""
    if isinstance(value, types.BuiltinFunctionType) or (isinstance(value, type)
                                                        and value in _BUILTIN_CALLABLES):
        return BuiltinVariable(value, source)
    return None


@wrap_rule(92)
def _wrap_method(tr, value, source: Source) -> Variable | None:
    """A bound method: its function and its object, each guarded."""
    if type(value) is not types.MethodType:
        return None
    tr.guards.type_is(source, value)
    return MethodVariable(tr.wrap(value.__func__, AttrSource(source, "__func__")),
                          tr.wrap(value.__self__, AttrSource(source, "__self__")), source)
