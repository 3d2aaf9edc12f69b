"""``frame.grad`` / ``frame.value_and_grad`` under capture: the transforms
themselves and the functions they return.  A call of such a function is
traced by ``capture.autograd.grad_call``.

A function made by ``frame.grad`` outside the jitted function (a global
``dloss = frame.grad(loss)``) is recognised by its code object; its closure
holds the function to differentiate and the argnums.  One made during the
trace is handed out (returned, live at a graph break) by calling the
transform again in the generated code (``GradCallSource``), when the
transform and the function both have a source.
"""
from __future__ import annotations

import types

from frame.autograd.functional import _argnums, grad, value_and_grad
from frame.hal.errors import FrameError

from ..errors import Unsupported, UserCodeRaises
from ..sources import AttrSource, ItemSource, Source
from .base import ConstantVariable, Variable
from .callables import CallableVariable
from .containers import ListVariable, TupleVariable
from .registry import HOOKS

__all__ = ["GradTransformVariable", "GradFunctionVariable", "GradCallSource",
           "made_grad_function"]


class GradCallSource(Source):
    """``transform(fn, argnums=...)``: the load expression of a function
    ``frame.grad`` made during the trace.  Evaluated where the generated code
    needs the function (eager makes a new one at every call too); never
    guarded (what it is made from is)."""
    __slots__ = ("transform", "fn", "argnums")

    def __init__(self, transform: Source, fn: Source, argnums):
        self.transform = transform
        self.fn = fn
        self.argnums = argnums

    def expr(self) -> str:
        return f"{self.transform.expr()}({self.fn.expr()}, argnums={self.argnums!r})"

    def text(self) -> str:
        return f"{self.transform.text()}({self.fn.text()}, argnums={self.argnums!r})"

    def _key(self):
        return (self.transform, self.fn, repr(self.argnums))


class GradTransformVariable(CallableVariable):
    """``frame.grad`` / ``frame.value_and_grad``: a call makes the function to
    differentiate with (a ``GradFunctionVariable``); nothing is traced yet."""
    __slots__ = ()

    def call(self, tx, args, kwargs):
        name = self.fn.__name__
        names = ("fn", "argnums")
        if len(args) > 2 or set(kwargs) - set(names) or set(names[:len(args)]) & set(kwargs):
            raise UserCodeRaises(f"{name}() got unexpected arguments (TypeError)")
        bound = dict(zip(names, args))
        bound.update(kwargs)
        if "fn" not in bound:
            raise UserCodeRaises(f"{name}() missing argument 'fn' (TypeError)")
        argnums = _constant_argnums(bound.get("argnums", ConstantVariable(0)))
        try:
            positions, single = _argnums(argnums)
        except FrameError as e:
            raise UserCodeRaises(f"{name} raises {type(e).__name__}: {e}") from e
        fn = bound["fn"]
        source = None
        if self.source is not None and fn.source is not None:
            source = GradCallSource(self.source, fn.source, argnums)
        return GradFunctionVariable(fn, positions, single, self.fn is value_and_grad, source)

    def __repr__(self) -> str:
        return f"GradTransform({self.fn.__name__})"


class GradFunctionVariable(Variable):
    """What ``frame.grad(fn, argnums)`` / ``frame.value_and_grad(...)`` return;
    ``grad_call`` traces a call.  ``fn`` is the Variable of the function to
    differentiate; for a function made outside the jitted function it is
    wrapped at the first call, from ``real_fn`` read through ``fn_source``
    (its closure cell)."""
    __slots__ = ("fn", "positions", "single", "with_value", "real_fn", "fn_source")

    def __init__(self, fn: Variable | None, positions: tuple[int, ...], single: bool,
                 with_value: bool, source: Source | None = None, real_fn=None,
                 fn_source: Source | None = None):
        super().__init__(source)
        self.fn = fn
        self.positions = positions
        self.single = single
        self.with_value = with_value
        self.real_fn = real_fn
        self.fn_source = fn_source

    def python_type(self) -> type:
        return types.FunctionType

    def callee(self, tx) -> Variable:
        if self.fn is None:
            self.fn = (tx.wrap(self.real_fn, self.fn_source) if self.fn_source is not None
                       else tx.wrap_static(self.real_fn))
        return self.fn

    def call(self, tx, args, kwargs):
        return HOOKS.grad_call(tx, self, list(args), dict(kwargs))

    def __repr__(self) -> str:
        what = "value_and_grad" if self.with_value else "grad"
        fn = repr(self.fn) if self.fn is not None else getattr(self.real_fn, "__qualname__", "?")
        argnums = self.positions[0] if self.single else self.positions
        return f"frame.{what}({fn}, argnums={argnums})"


def _constant_argnums(v: Variable):
    if isinstance(v, (TupleVariable, ListVariable)) and all(i.is_constant() for i in v.items):
        items = [i.as_constant() for i in v.items]
        return tuple(items) if isinstance(v, TupleVariable) else items
    if v.is_constant():
        return v.as_constant()
    raise Unsupported("unsupported_object", f"frame.grad argnums {v!r} not known at trace time")


_CODES: dict[str, types.CodeType] = {}


def made_grad_function(value: types.FunctionType, source: Source | None
                       ) -> GradFunctionVariable | None:
    """The variable for a function ``frame.grad`` / ``frame.value_and_grad``
    returned outside the jitted function (None for any other function).  Its
    closure cells are never rebound: the argnums are read as they are, the
    function through its cell (so it is guarded) when called."""
    if not _CODES:
        _CODES["grad"] = grad(abs).__code__
        _CODES["value_and_grad"] = value_and_grad(abs).__code__
    code = value.__code__
    if code is _CODES["grad"]:  # grad_fn: calls value_and_grad_fn ``vg``
        vg = _cell(value, "vg")
        inner = made_grad_function(vg, None if source is None else _cell_source(source, code, "vg"))
        if inner is None:
            return None
        return GradFunctionVariable(None, inner.positions, inner.single, False, source,
                                    inner.real_fn, inner.fn_source)
    if code is _CODES["value_and_grad"]:
        return GradFunctionVariable(None, _cell(value, "positions"), _cell(value, "single"), True,
                                    source, _cell(value, "fn"),
                                    None if source is None else _cell_source(source, code, "fn"))
    return None


def _cell(fn: types.FunctionType, name: str):
    return fn.__closure__[fn.__code__.co_freevars.index(name)].cell_contents


def _cell_source(source: Source, code: types.CodeType, name: str) -> Source:
    i = code.co_freevars.index(name)
    return AttrSource(ItemSource(AttrSource(source, "__closure__"), i), "cell_contents")
