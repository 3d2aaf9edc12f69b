"""The instruction translator: simulates one frame's bytecode on Variables.

``Translation`` holds what one translation shares across inlined calls: the
tracer (graph), the guards, the side-effect log and the identity map of
wrapped objects.  ``InstructionTranslator`` runs one code object; user
function calls are inlined by a nested translator on the same Translation.
Opcode handlers live in ``handlers.py``, one function per normalised opcode.
"""
from __future__ import annotations

import builtins
import inspect
import operator
import types

import numpy as np

from frame.tensor import Tensor

from .errors import Unsupported
from .guards import GuardSet
from .instructions import decode
from .side_effects import SideEffects
from .sources import (AttrSource, ClosureSource, GlobalSource, ItemSource, LocalSource, Source)
from .tracer import Tracer, UntracedArray
from .variables.base import (CONSTANT_TYPES, NDARRAY, NPSCALAR, TENSOR, ConstantVariable,
                             TensorVariable, Variable)
from .variables.callables import (BuiltinVariable, FrameApiVariable, NumpyFunctionVariable,
                                  UserFunctionVariable, is_frame_api)
from .variables.containers import (DictVariable, IteratorVariable, ListVariable, SliceVariable,
                                   TupleVariable)
from .variables.objects import ClassVariable, ObjectVariable, PythonModuleVariable

__all__ = ["Translation", "InstructionTranslator", "Cell"]

MAX_INLINE_DEPTH = 48
MAX_INSTRUCTIONS = 500_000


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
        self.keepalive: list = []
        self.instruction_count = 0
        self.input_by_value: dict[int, TensorVariable] = {}  # id(graph input Value) -> variable

    # -- wrapping real objects into Variables, with guards -----------------------------
    def wrap(self, value, source: Source) -> Variable:
        """The Variable for an existing object reached through ``source``."""
        known = self.wrapped.get(id(value))
        if known is not None and not isinstance(known, ConstantVariable):
            if known.source is not None and known.source != source:
                self.guards.alias(source, known.source)
            return known
        var = self._build(value, source)
        if not isinstance(var, ConstantVariable):
            self.wrapped[id(value)] = var
            self.keepalive.append(value)
        return var

    def _build(self, value, source: Source) -> Variable:
        g = self.guards
        t = type(value)
        if t is Tensor or t is np.ndarray:
            data = value._data if t is Tensor else value
            from frame.dtypes import from_numpy
            try:
                from_numpy(data.dtype)
            except TypeError as e:
                raise Unsupported("unsupported_object", str(e)) from e
            g.tensor(source, value)
            meta = self.tracer.input_for(data, source.text())
            var = TensorVariable(meta, TENSOR if t is Tensor else NDARRAY, source,
                                 requires_grad=value._requires_grad if t is Tensor else False)
            self.input_by_value[id(self.tracer.values[id(meta)])] = var
            return var
        if isinstance(value, np.generic):
            g.constant(source, value)
            return ConstantVariable(value, source)
        if t in (int, float, bool, str, bytes, complex, type(None)):
            g.constant(source, value)
            return ConstantVariable(value, source)
        if t in (range, slice, type(Ellipsis)):
            g.add(f"type({source.expr()}) is {g.const(t)} and {source.expr()} == {g.const(value)}",
                  f"{source.text()} == {value!r}")
            return ConstantVariable(value, source)
        if t is tuple:
            g.type_and_len(source, value)
            return TupleVariable([self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)], source)
        if t is list:
            g.type_and_len(source, value)
            return ListVariable([self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)], source)
        if t is dict:
            from .sources import is_safe_key
            if not all(is_safe_key(k) for k in value):
                raise Unsupported("unsupported_object", "dict with keys that are not str/int/tuple")
            g.dict_keys(source, value)
            return DictVariable({k: self.wrap(v, ItemSource(source, k)) for k, v in value.items()}, source)
        static = self._static(value, source)
        if static is not None:
            g.identity(source, value)
            return static
        if isinstance(value, type):
            g.identity(source, value)
            return ClassVariable(value, source)
        g.type_is(source, value)
        return ObjectVariable(value, source)

    def _static(self, value, source: Source | None) -> Variable | None:
        """Variables for functions, modules and other objects guarded by identity."""
        from frame.dtypes import DType
        if isinstance(value, DType):
            return ConstantVariable(value, source)
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
        if isinstance(value, types.BuiltinFunctionType) or value in _BUILTIN_CALLABLES:
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


def _is_numpy(value) -> bool:
    mod = getattr(value, "__module__", None) or ""
    return mod == "numpy" or mod.startswith("numpy.")


def _location(code: types.CodeType, lineno) -> str:
    import os
    return f"{os.path.basename(code.co_filename)}:{lineno if lineno is not None else code.co_firstlineno}"


class InstructionTranslator:
    def __init__(self, tr: Translation, code: types.CodeType, f_globals: dict,
                 f_locals: dict[str, Variable], cells: dict[str, Cell], depth: int = 0,
                 parent: "InstructionTranslator | None" = None):
        from .handlers import HANDLERS
        self.tr = tr
        self.code = code
        self.f_globals = f_globals
        self.f_builtins = f_globals.get("__builtins__", builtins)
        if isinstance(self.f_builtins, types.ModuleType):
            self.f_builtins = vars(self.f_builtins)
        self.locals = f_locals
        self.cells = cells
        self.depth = depth
        self.parent = parent
        self.instructions = decode(code).instructions
        self.handlers = HANDLERS
        self.stack: list[Variable] = []
        self.ip = 0
        self.current = None
        self.result: Variable | None = None
        self.done = False

    # -- the run loop ------------------------------------------------------------------
    def run(self) -> Variable:
        instrs = self.instructions
        handlers = self.handlers
        tr = self.tr
        while not self.done:
            instr = instrs[self.ip]
            self.ip += 1
            self.current = instr
            tr.instruction_count += 1
            if tr.instruction_count > MAX_INSTRUCTIONS:
                self._fail(Unsupported("loop_limit", f"more than {MAX_INSTRUCTIONS} instructions simulated"))
            handler = handlers.get(instr.opname)
            if handler is None:
                self._fail(Unsupported("unsupported_opcode", f"opcode {instr.opname}"))
            try:
                handler(self, instr)
            except Unsupported as e:
                self._fail(e)
        return self.result

    def _fail(self, e: Unsupported):
        if e.location is None:
            e.location = self.location()
        raise e

    def location(self) -> str:
        lineno = getattr(self.current, "lineno", None)
        return _location(self.code, lineno)

    # -- stack helpers -----------------------------------------------------------------
    def push(self, v: Variable) -> None:
        self.stack.append(v)

    def pop(self) -> Variable:
        return self.stack.pop()

    def popn(self, n: int) -> list[Variable]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, instr) -> None:
        self.ip = instr.target

    # -- shared behaviour used by handlers and variables ---------------------------------
    @property
    def side_effects(self) -> SideEffects:
        return self.tr.side_effects

    def wrap(self, value, source: Source) -> Variable:
        return self.tr.wrap(value, source)

    def wrap_static(self, value) -> Variable:
        return self.tr.wrap_static(value)

    def mutate(self, container: Variable) -> None:
        if container.source is not None:
            container.mutated = True
            self.tr.side_effects.container_mutated(container)

    def truth(self, v: Variable) -> bool:
        return v.truth(self)

    def getattr(self, obj: Variable, name: str) -> Variable:
        return obj.getattr(self, name)

    def real_value(self, v: Variable):
        if v.is_constant():
            return v.as_constant()
        for attr in ("cls", "fn", "module", "obj"):
            if hasattr(v, attr):
                return getattr(v, attr)
        raise Unsupported("unsupported_object", f"{v!r} has no Python value at trace time")

    def contains_tensor(self, args, kwargs=None) -> bool:
        def has(v):
            if isinstance(v, TensorVariable):
                return True
            if isinstance(v, (TupleVariable, ListVariable)):
                return any(has(i) for i in v.items)
            if isinstance(v, DictVariable):
                return any(has(i) for i in v.items.values())
            return False
        return any(has(a) for a in args) or any(has(v) for v in (kwargs or {}).values())

    def _any_tensor_kind(self, args, kwargs) -> bool:
        def has(v):
            if isinstance(v, TensorVariable):
                return v.kind == TENSOR
            if isinstance(v, (TupleVariable, ListVariable)):
                return any(has(i) for i in v.items)
            return False
        return any(has(a) for a in args) or any(has(v) for v in kwargs.values())

    # Python <-> Variable conversion for calls that run for real on meta arrays
    def to_python(self, v: Variable):
        if isinstance(v, TensorVariable):
            return Tensor._wrap(v.meta)
        if isinstance(v, ConstantVariable):
            return v.value
        if isinstance(v, TupleVariable):
            return tuple(self.to_python(i) for i in v.items)
        if isinstance(v, ListVariable):
            return [self.to_python(i) for i in v.items]
        if isinstance(v, DictVariable):
            return {k: self.to_python(i) for k, i in v.items.items()}
        if isinstance(v, SliceVariable):
            return slice(*(self.to_python(p) for p in v.parts))
        if isinstance(v, ClassVariable):
            return v.cls
        if isinstance(v, (FrameApiVariable, NumpyFunctionVariable, BuiltinVariable)):
            return v.fn
        raise Unsupported("unsupported_object", f"{v!r} cannot be passed to a frame function")

    def from_python(self, value, kind: str) -> Variable:
        tracer = self.tr.tracer
        if isinstance(value, Tensor) or type(value) is np.ndarray:
            data = value._data if isinstance(value, Tensor) else value
            if not tracer.is_meta(data):
                raise Unsupported("unsupported_object", "a frame function returned data computed "
                                                        "outside frame's ops")
            if kind == TENSOR:
                return TensorVariable(data, TENSOR)
            return TensorVariable(data, NPSCALAR if data.ndim == 0 else NDARRAY)
        if isinstance(value, tuple):
            return TupleVariable([self.from_python(v, kind) for v in value])
        if isinstance(value, list):
            return ListVariable([self.from_python(v, kind) for v in value])
        if isinstance(value, CONSTANT_TYPES) or isinstance(value, np.generic):
            return ConstantVariable(value)
        raise Unsupported("unsupported_object", f"a frame function returned {type(value).__name__}")

    def call_real(self, fn, args, kwargs, numpy_semantics: bool = False) -> Variable:
        """Run ``fn`` (frame API, or a NumPy function dispatching to frame) for
        real on meta arrays under the tracer; its ops become graph nodes."""
        py_args = [self.to_python(a) for a in args]
        py_kwargs = {k: self.to_python(v) for k, v in kwargs.items()}
        kind = TENSOR
        if numpy_semantics and not self._any_tensor_kind(args, kwargs):
            kind = NDARRAY
        try:
            with self.tr.tracer.active():
                result = fn(*py_args, **py_kwargs)
        except Unsupported:
            raise
        except UntracedArray as e:
            raise Unsupported("unsupported_object", str(e)) from e
        except Exception as e:  # the same error is raised again by the native run
            raise Unsupported("exception", f"{getattr(fn, '__name__', fn)}() raises "
                                           f"{type(e).__name__}: {e}") from e
        return self.from_python(result, kind)

    def call_constant(self, fn, args, kwargs) -> Variable:
        """Run a pure function on constant arguments at trace time."""
        if not all(a.is_constant() for a in args) or not all(v.is_constant() for v in kwargs.values()):
            raise Unsupported("unsupported_call", f"{getattr(fn, '__name__', fn)}() with non-constant arguments")
        try:
            result = fn(*[a.as_constant() for a in args], **{k: v.as_constant() for k, v in kwargs.items()})
        except Exception as e:
            raise Unsupported("exception", f"{getattr(fn, '__name__', fn)}() raises "
                                           f"{type(e).__name__}: {e}") from e
        if type(result) is np.ndarray:
            from frame.dtypes import from_numpy
            try:
                from_numpy(result.dtype)
            except TypeError as e:
                raise Unsupported("unsupported_object", str(e)) from e
            tracer = self.tr.tracer
            meta = tracer.meta(tracer.value_of(result))
            return TensorVariable(meta, NDARRAY)
        if isinstance(result, CONSTANT_TYPES) or isinstance(result, (np.generic, np.dtype)):
            return ConstantVariable(result)
        if isinstance(result, tuple) and all(isinstance(r, CONSTANT_TYPES) for r in result):
            return TupleVariable([ConstantVariable(r) for r in result])
        raise Unsupported("unsupported_object", f"{getattr(fn, '__name__', fn)}() returned "
                                                f"{type(result).__name__}")

    # -- operators ------------------------------------------------------------------------
    def binary_op(self, fn, a: Variable, b: Variable) -> Variable:
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
            return self.call_real(fn, [a, b], {}, numpy_semantics=True)
        if a.is_constant() and b.is_constant():
            try:
                return self.wrap_result(fn(a.as_constant(), b.as_constant()))
            except Exception as e:
                raise Unsupported("exception", f"{fn.__name__} raises {type(e).__name__}: {e}") from e
        return self._sequence_op(fn, a, b)

    def _sequence_op(self, fn, a, b) -> Variable:
        seq = (ListVariable, TupleVariable)
        if fn is operator.add and type(a) is type(b) and isinstance(a, seq):
            return type(a)(a.items + b.items)
        if fn is operator.mul and isinstance(a, seq) and b.is_constant():
            return type(a)(a.items * b.as_constant())
        if fn is operator.mul and isinstance(b, seq) and a.is_constant():
            return type(b)(b.items * a.as_constant())
        if fn in (operator.eq, operator.ne) and (a.source is not None or b.source is not None):
            same = a is b
            return ConstantVariable(same if fn is operator.eq else not same)
        raise Unsupported("unsupported_object", f"operator {fn.__name__} on {a!r} and {b!r}")

    def binary_or_unary(self, fn, *args: Variable) -> Variable:
        if any(isinstance(a, TensorVariable) for a in args):
            return self.call_real(fn, list(args), {}, numpy_semantics=True)
        if all(a.is_constant() for a in args):
            try:
                return self.wrap_result(fn(*(a.as_constant() for a in args)))
            except Exception as e:
                raise Unsupported("exception", f"{fn.__name__} raises {type(e).__name__}: {e}") from e
        raise Unsupported("unsupported_object", f"{fn.__name__} on {args!r}")

    def inplace_op(self, fn, a: Variable, b: Variable) -> Variable:
        """``a op= b``: tensors and ndarrays are updated in place (NumPy's
        same_kind casting, fixed shape); everything else rebinds."""
        if isinstance(a, TensorVariable) and a.kind in (TENSOR, NDARRAY):
            result = self.binary_op(fn, a, b)
            if result.shape != a.shape:
                raise Unsupported("exception", f"in-place result of shape {list(result.shape)} does "
                                               f"not fit a tensor of shape {list(a.shape)}")
            if result.meta.dtype != a.meta.dtype:
                if not np.can_cast(result.meta.dtype, a.meta.dtype, casting="same_kind"):
                    raise Unsupported("exception", f"cannot cast {result.meta.dtype} to "
                                                   f"{a.meta.dtype} in place")
                import frame
                result = self.call_real(frame.astype, [result, ConstantVariable(a.dtype)], {})
            a.meta = result.meta
            self.side_effects.tensor_written(a)
            return a
        if isinstance(a, ListVariable) and fn is operator.add:
            self.mutate(a)
            a.items.extend(b.iterate(self))
            return a
        return self.binary_op(fn, a, b)

    def wrap_result(self, value) -> Variable:
        if isinstance(value, CONSTANT_TYPES) or isinstance(value, np.generic):
            return ConstantVariable(value)
        if type(value) is tuple:
            return TupleVariable([self.wrap_result(v) for v in value])
        if type(value) is list:
            return ListVariable([self.wrap_result(v) for v in value])
        return self.wrap_static(value)

    # -- calls --------------------------------------------------------------------------------
    def call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        return fn.call(self, args, kwargs)

    def inline_call(self, fn_var: UserFunctionVariable, args, kwargs) -> Variable:
        fn = fn_var.fn
        code = fn.__code__
        if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                            | inspect.CO_ITERABLE_COROUTINE):
            raise Unsupported("unsupported_call", f"calling generator/coroutine function {fn.__qualname__}")
        if self.depth + 1 > MAX_INLINE_DEPTH:
            raise Unsupported("inline_limit", f"inlining {fn.__qualname__} past depth {MAX_INLINE_DEPTH}")
        defaults = self._defaults(fn_var)
        f_locals = bind_arguments(code, fn.__qualname__, args, kwargs, *defaults)
        cells = self._cells_for(fn_var)
        child = InstructionTranslator(self.tr, code, fn.__globals__, f_locals, cells,
                                      self.depth + 1, self)
        return child.run()

    def _defaults(self, fn_var: UserFunctionVariable):
        if getattr(fn_var, "made_defaults", None) is not None:
            return fn_var.made_defaults
        fn = fn_var.fn
        pos = [self.wrap_static_default(d) for d in (fn.__defaults__ or ())]
        kw = {k: self.wrap_static_default(v) for k, v in (fn.__kwdefaults__ or {}).items()}
        return pos, kw

    def wrap_static_default(self, value) -> Variable:
        if type(value) in (Tensor, np.ndarray):
            raise Unsupported("unsupported_object", "a tensor as a parameter default")
        if type(value) in (list, dict):
            raise Unsupported("unsupported_object", "a mutable parameter default")
        return self.wrap_static(value)

    def _cells_for(self, fn_var: UserFunctionVariable) -> dict[str, Cell]:
        code = fn_var.fn.__code__
        cells: dict[str, Cell] = {name: Cell() for name in code.co_cellvars}
        if fn_var.closure is not None:
            for name, cell in zip(code.co_freevars, fn_var.closure):
                cells[name] = cell
        elif code.co_freevars:
            closure = fn_var.fn.__closure__ or ()
            base = fn_var.source
            for i, (name, real) in enumerate(zip(code.co_freevars, closure)):
                src = (AttrSource(ItemSource(AttrSource(base, "__closure__"), i), "cell_contents")
                       if base is not None else None)
                cells[name] = Cell(real=real, source=src)
        return cells

    def load_cell(self, name: str) -> Variable:
        cell = self.cells[name]
        if cell.value is not None:
            return cell.value
        if cell.real is not None:
            try:
                value = cell.real.cell_contents
            except ValueError as e:
                raise Unsupported("exception", f"free variable {name!r} referenced before assignment") from e
            if cell.source is None:
                cell.value = self.wrap_static(value)
            else:
                cell.value = self.wrap(value, cell.source)
            return cell.value
        raise Unsupported("exception", f"cell variable {name!r} referenced before assignment")

    def load_global(self, name: str) -> Variable:
        pending = self.side_effects.pending_global(self.f_globals, name)
        if pending is not None:
            return pending
        g = self.tr.guards
        if name in self.f_globals:
            src = GlobalSource(name, g.const(self.f_globals))
            return self.wrap(self.f_globals[name], src)
        if name in self.f_builtins:
            gname = g.const(self.f_globals)
            g.add(f"{name!r} not in {gname}", f"G has no {name!r} (the builtin is used)")
            src = GlobalSource(name, g.const(self.f_builtins), "B")
            return self.wrap(self.f_builtins[name], src)
        raise Unsupported("exception", f"name {name!r} is not defined")


def bind_arguments(code: types.CodeType, qualname: str, args: list[Variable],
                   kwargs: dict[str, Variable], defaults: list[Variable],
                   kwdefaults: dict[str, Variable]) -> dict[str, Variable]:
    """Bind call arguments to a code object's parameters, as CPython does."""
    nargs = code.co_argcount
    nposonly = code.co_posonlyargcount
    nkwonly = code.co_kwonlyargcount
    names = code.co_varnames
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    has_varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    out: dict[str, Variable] = {}
    positional = names[:nargs]
    if len(args) > nargs and not has_varargs:
        raise Unsupported("exception", f"{qualname}() takes {nargs} positional arguments but "
                                       f"{len(args)} were given")
    for name, value in zip(positional, args):
        out[name] = value
    extra_kw: dict[str, Variable] = {}
    kwonly = names[nargs:nargs + nkwonly]
    for key, value in kwargs.items():
        if key in positional[nposonly:] or key in kwonly:
            if key in out:
                raise Unsupported("exception", f"{qualname}() got multiple values for argument {key!r}")
            out[key] = value
        elif has_varkw:
            extra_kw[key] = value
        else:
            raise Unsupported("exception", f"{qualname}() got an unexpected keyword argument {key!r}")
    first_default = nargs - len(defaults)
    for i, name in enumerate(positional):
        if name not in out:
            if i >= first_default:
                out[name] = defaults[i - first_default]
            else:
                raise Unsupported("exception", f"{qualname}() missing required argument {name!r}")
    for name in kwonly:
        if name not in out:
            if name in kwdefaults:
                out[name] = kwdefaults[name]
            else:
                raise Unsupported("exception", f"{qualname}() missing keyword-only argument {name!r}")
    index = nargs + nkwonly
    if has_varargs:
        out[names[index]] = TupleVariable(args[nargs:])
        index += 1
    if has_varkw:
        out[names[index]] = DictVariable(extra_kw)
    return out
