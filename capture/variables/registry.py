"""The two tables through which Variable kinds reach each other without
import cycles (the bottom of ``capture/variables``: it imports nothing).

``HOOKS``: behaviours a kind needs but a module above it owns.  The
``Variable`` base iterates through ``containers.IteratorVariable``, a tensor's
``.grad`` is ``capture/autograd.py``'s, a builtin's call is ``builtins.py``'s.
The owner fills its slot once, at import, with ``@HOOKS.provide`` on the
function or class (under its own name); the user calls ``HOOKS.<name>(...)``.
``capture/variables/__init__.py`` imports the kinds' modules in a fixed order,
and ``capture/autograd.py`` is imported by the translator, so every slot is
filled before a trace runs; an empty slot raises ``RuntimeError``.

``WRAP_RULES``: how an existing Python object becomes a Variable
(``Translation._build``).  Each kind's module registers its rules with
``@wrap_rule(order)`` on a function ``(translation, value, source) ->
Variable | None`` (None: not this rule's object); ``_build`` tries them by
increasing ``order`` and the first Variable wins.  A rule registered with
``static=True`` wraps an object the trace depends on only through its
identity (a function, a module, a dtype): ``_build`` guards that identity,
and ``Translation.wrap_static`` uses the same rules without a source.  The
orders in use (keep them unique; a new kind picks a free number at the point
where its objects must be recognised):

====  ==============================  =====================================
10    base.TensorVariable             Tensor, ndarray, plain Tensor subclass
15    scalars.ScalarVariable          int, float, NumPy float/int scalars
                                      (exact types; value guarded where used)
20    base.ConstantVariable           NumPy scalar, int/float/.../None,
                                      range/slice/Ellipsis/NotImplemented
30    containers.TupleVariable        tuple
40    containers.NamedTupleVariable   a namedtuple
50    containers.ListVariable         list
60    containers.DictVariable         dict
62    stdlib (OrderedDict...)         OrderedDict, defaultdict, Counter
64    stdlib.DequeVariable            collections.deque
65    instances.PartialVariable       functools.partial (func/args/keywords
                                      guarded through it)
66    callables.BoundBuiltinMethod    a list's or dict's builtin method
                                      (its ``__self__`` wrapped)
69    lru_cache.LruCacheVariable      a functools.cache / lru_cache function
                                      (static)
70    callables (static)              a jitted function: what it wraps
72    base.ConstantVariable (static)  frame.DType
74    autograd (static)               grad-mode functions and classes
76    objects.PythonModuleVariable    a module (static)
77    callables.NumpyFunctionVariable a method of a NumPy random generator
                                      object or of a ufunc (type, name and
                                      owner guarded, not identity)
78    callables.NumpyFunctionVariable a NumPy function or ufunc (static)
80    callables.FrameApiVariable      a frame API function (static)
81    callables.UserFunctionVariable  a function the frame made, a resume function's parameter (by code)
82    callables.UserFunctionVariable  a Python function (static)
84    callables.BuiltinVariable       a builtin (static)
86    base.ConstantVariable (static)  numpy.dtype
88    stdlib (static)                 an enum member (a ConstantVariable)
90    autograd                        frame's grad-mode state (refused)
92    callables.MethodVariable        a bound method
94    objects.ClassVariable           a class
96    numpy_random.NumpyGenerator...  a np.random.Generator or RandomState
                                      (exact types; guarded by type)
100   objects.ObjectVariable          any other object
====  ==============================  =====================================
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

__all__ = ["HOOKS", "WrapRule", "WRAP_RULES", "STATIC_RULES", "wrap_rule"]


class _Hooks:
    """Slots filled by the module that owns each behaviour (see the module doc)."""
    __slots__ = (
        # containers.py
        "IteratorVariable", "LazyIteratorVariable", "is_basic_index",
        # callables.py
        "wrap_constant_attr",
        # tensor_ops.py
        "tensor_getattr", "tensor_getitem", "tensor_write", "ndarray_setitem", "ufunc_add_at",
        "numpy_array_function",
        # numpy_calls.py
        "numpy_call", "ndarray_method_function",
        # numpy_random.py
        "numpy_random_call",
        # container_methods.py
        "call_container_method",
        # builtins.py
        "call_builtin",
        # instances.py
        "namedtuple_attr", "namedtuple_class_attr", "user_inplace_op", "construct_instance",
        "make_partial", "UserObjectVariable",
        # capture/autograd.py
        "backward", "read_grad", "write_grad", "check_inplace", "grad_call",
    )

    def provide(self, fn):
        """Decorator: ``fn`` (a function or class) fills the slot of its name."""
        name = fn.__name__
        if name not in self.__slots__:
            raise AttributeError(f"capture.variables.registry: no hook named {name!r}")
        try:
            current = object.__getattribute__(self, name)
        except AttributeError:
            current = None
        if current is not None and current is not fn:
            raise RuntimeError(f"capture.variables.registry: hook {name!r} provided twice")
        object.__setattr__(self, name, fn)
        return fn

    def __getattr__(self, name: str):  # only reached for an empty slot
        raise RuntimeError(f"capture.variables.registry: hook {name!r} is not provided (the "
                           f"module that owns it was not imported)")


HOOKS = _Hooks()


class WrapRule(NamedTuple):
    order: int
    build: Callable[[Any, Any, Any], Any]   # (translation, value, source) -> Variable | None
    static: bool


WRAP_RULES: list[WrapRule] = []     # by increasing order
STATIC_RULES: list[WrapRule] = []   # the static ones, by increasing order


def wrap_rule(order: int, *, static: bool = False):
    """Decorator registering ``build(translation, value, source)`` as the rule
    of ``order`` for wrapping existing objects (see the module doc)."""
    def register(build):
        taken = [r for r in WRAP_RULES if r.order == order]
        if taken:
            raise RuntimeError(f"capture.variables.registry: wrap rule order {order} is taken by "
                               f"{taken[0].build.__module__}.{taken[0].build.__qualname__}")
        WRAP_RULES.append(WrapRule(order, build, static))
        WRAP_RULES.sort(key=lambda r: r.order)
        STATIC_RULES[:] = [r for r in WRAP_RULES if r.static]
        return build
    return register
