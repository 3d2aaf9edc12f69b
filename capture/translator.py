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
import logging
import operator
import os
import types
import warnings

import numpy as np

import frame
from frame._indexing import setitem
from frame._numpy_functions import NotModelled
from frame.dtypes import from_numpy
from frame.tensor import Tensor

from .autograd import after_inplace, untrackable
from .errors import Unsupported, UserCodeRaises
from .handlers import HANDLERS
from .instructions import decode
from .side_effects import DELETED, SideEffects
from .sources import (FRAME_GLOBALS, AttrSource, ConstSource, FrameGlobalsSource, GlobalSource,
                      ItemSource, Source)
from .tracer import UntracedArray
from .trampolines import traced_code
from .translation import Cell, Translation
from .variables.base import (CONSTANT_TYPES, NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorKind,
                             TensorVariable, Variable, broadcasts_to)
from .variables.callables import UserFunctionVariable
from .variables.containers import (DictVariable, GeneratorVariable, ListVariable, TupleVariable,
                                   NamedTupleVariable, constant_value, is_constant_value,
                                   is_namedtuple_class, sequence_op, structurally_equal)
from .variables.flow import exception_variable, set_context
from .variables.instances import user_binary_op
from .variables.masked import masked_binary_op, masked_unary_op
from .variables.numpy_calls import as_array_operand
from .variables.scalars import ScalarVariable, scalar_binary_op, scalar_unary_op

__all__ = ["Translation", "InstructionTranslator", "Cell", "bind_arguments"]

log = logging.getLogger("frame.capture")

MAX_INLINE_DEPTH = 48
MAX_INSTRUCTIONS = 500_000


def _location(code: types.CodeType, lineno) -> str:
    return f"{os.path.basename(code.co_filename)}:{lineno if lineno is not None else code.co_firstlineno}"


class InstructionTranslator:
    def __init__(self, tr: Translation, code: types.CodeType, f_globals: dict,
                 f_locals: dict[str, Variable], cells: dict[str, Cell], depth: int = 0,
                 parent: "InstructionTranslator | None" = None):
        self.tr = tr
        self.code = code
        tr.codes.add(code)
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
        self.yielded: Variable | None = None   # set by YIELD_VALUE (generator frames)
        self.exc_info: list[Variable] = []     # exceptions being handled (PUSH_EXC_INFO)
        # graph breaks (the top frame only): instructions executed so far, and the
        # step to stop before (a re-translation up to a break; see jit.translate)
        self.steps = 0
        self.stop_step: int | None = None
        self.stopped = None                    # the instruction the run stopped before
        self.resumer: "InstructionTranslator | None" = None   # a generator's: who runs it now

    # -- the run loop ------------------------------------------------------------------
    def run(self) -> Variable:
        tr = self.tr
        outer, tr.active = tr.active, self
        try:
            return self._run()
        finally:
            tr.active = outer

    def _run(self) -> Variable:
        instrs = self.instructions
        handlers = self.handlers
        tr = self.tr
        while not self.done:
            instr = instrs[self.ip]
            if self.stop_step is not None and self.steps == self.stop_step:
                self.stopped = instr
                return None
            self.steps += 1
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
                if isinstance(e, UserCodeRaises) and e.exc is not None and not e.chained:
                    self._chain(e)
                if not self.unwind(e):
                    self._fail(e)
            except Exception as e:  # a bug of capture: never guess, run the function natively
                log.debug("capture error in %s", self.location(), exc_info=True)
                self._fail(Unsupported("capture_error", f"{instr.opname}: {type(e).__name__}: {e}"))
        return self.result

    def unwind(self, e: Unsupported) -> bool:
        """An exception the trace models (``e.exc``, ``variables/flow.py``)
        raised by the current instruction: continue at its handler from the
        exception table, as CPython does (the stack cut to the handler's depth,
        the raising offset pushed when it asks for it, then the exception).
        False when the exception is not modelled or this frame has no handler
        here (it then leaves the frame: a caller's handler may take it)."""
        exc = getattr(e, "exc", None)
        h = self.current.handler if self.current is not None else None
        if exc is None or h is None:
            return False
        exc = exception_variable(exc)
        if exc is None:
            e.exc = None
            return False
        e.exc = exc
        del self.stack[h.depth:]
        if h.lasti:
            self.push(ConstantVariable(self.current.offset))
        self.push(exc)
        self.ip = h.target
        return True

    def _chain(self, e: UserCodeRaises) -> None:
        """An exception raised by this frame's current instruction: its
        Variable (made once, so that every frame it leaves sees the same one),
        chained to the exception being handled here (``set_context``)."""
        e.chained = True
        exc = exception_variable(e.exc)
        if exc is not None:
            e.exc = exc
            set_context(self, exc)

    def current_exception(self) -> Variable | None:
        """The exception being handled (``sys.exception()``): this frame's,
        else its caller's (a generator's: the frame that resumed it, as
        CPython chains a generator's exception state to its resumer's)."""
        tx = self
        while tx is not None:
            if tx.exc_info:
                return tx.exc_info[-1]
            tx = tx.resumer if tx.code.co_flags & inspect.CO_GENERATOR else tx.parent
        return None

    def _fail(self, e: Unsupported):
        if e.location is None:
            e.location, e.detail = self.user_location()
            e.in_try = self._inside_try()
            e.depth = self.depth
        if self.parent is None and e.top_step is None:
            # where the top frame was: a graph break is placed before this instruction
            e.top_step = self.steps - 1  # steps run before this instruction
            e.top_index = self.ip - 1
        raise e

    def break_site(self, e: Unsupported) -> Unsupported:
        """``e`` placed as ``_fail`` places an exception of this instruction
        (its location, and the top frame's step and instruction the break
        goes before), without raising it: raised later (``codegen``), it makes
        the translation break the graph here (a lazy value raises it at a use
        that needs what the instruction would have computed: variables/masked.py,
        variables/lazy_scalars.py, variables/warn_calls.py)."""
        e.location, e.detail = self.user_location()
        e.in_try = self._inside_try()
        e.depth = self.depth
        top = self
        while top.parent is not None:
            top = top.parent
        e.top_step = top.steps - 1
        e.top_index = top.ip - 1
        return e

    def _inside_try(self) -> bool:
        """Whether an exception raised now could be caught by a ``try`` of a
        simulated frame (user handlers start with PUSH_EXC_INFO; the cleanup
        handlers of 3.12+ inlined comprehensions re-raise and do not count)."""
        tx = self
        while tx is not None:
            h = tx.current.handler if tx.current is not None else None
            if h is not None and tx.instructions[h.target].opname == "PUSH_EXC_INFO":
                return True
            tx = tx.parent
        return False

    def location(self) -> str:
        lineno = getattr(self.current, "lineno", None)
        return _location(self.code, lineno)

    def user_location(self) -> tuple[str, str]:
        """(where, detail): the line in the user's code -- the jitted
        function's file, followed from the top frame through the calls it
        inlines as long as they stay in that file -- that led to this
        instruction: a call of ``json.dumps``, of frame's or another module's
        function, not ``json/encoder.py:225``; and the frame the trace was
        in when it is another one ("" when it is that frame)."""
        chain = []
        tx = self
        while tx is not None:
            chain.append(tx)
            tx = tx.parent
        chain.reverse()
        chosen = chain[0]
        for tx in chain[1:]:
            if tx.code.co_filename != chosen.code.co_filename:
                break
            chosen = tx
        return chosen.location(), ("" if chosen is self else self.location())

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
        """The Python object ``v`` stands for, when it is one known at trace time."""
        if v.is_constant():
            return v.as_constant()
        cls = getattr(v, "cls", None)
        if isinstance(cls, type) and v.python_type() is type(cls):   # the class itself, not an
            return cls                                                 # instance made of it
        for attr in ("fn", "module", "obj"):
            value = getattr(v, attr, None)
            if value is not None and not isinstance(value, Variable):   # (a bound method's
                return value                                              # receiver is a Variable)
        raise Unsupported("unsupported_object", f"{v!r} has no Python value at trace time")

    def contains_tensor(self, args, kwargs=None) -> bool:
        def has(v):
            return isinstance(v, TensorVariable) or any(has(i) for i in v.children())
        return any(has(a) for a in args) or any(has(v) for v in (kwargs or {}).values())

    def _any_tensor_kind(self, args, kwargs) -> bool:
        return any(a.has_frame_tensor() for a in args) or \
            any(v.has_frame_tensor() for v in kwargs.values())

    # Python <-> Variable conversion for calls that run for real on meta arrays
    # (Variable.to_python, and back:)
    def from_python(self, value, kind: TensorKind, passed: dict[int, Variable] | None = None,
                    constant_ok: bool = False, probe=None) -> Variable:
        """The Variable for what a frame function returned.  ``passed`` maps the
        Python objects handed to it to their Variables: a function returning one
        of its arguments returns that very object (``Tensor.__pos__``), which
        matters for frame Tensors; NumPy semantics always make a new array.
        ``constant_ok``: the call had no tensor arguments, so an array that is
        not a meta array is a constant it computed (``frame.tensor([1, 2])``).
        ``probe``: what NumPy returned for the same call (``_numpy_result``),
        which tells a 0-d array from a NumPy scalar; without it a 0-d result of
        NumPy semantics is a scalar, as a ufunc's is."""
        tracer = self.tr.tracer
        if passed and id(value) in passed and kind == TENSOR:
            return passed[id(value)]
        if isinstance(value, Tensor) or type(value) is np.ndarray:
            data = value._data if isinstance(value, Tensor) else value
            if isinstance(value, Tensor) and value._requires_grad:
                raise Unsupported("unsupported_object", "a tensor that requires grad made under capture")
            if not tracer.is_meta(data):
                if not constant_ok or not isinstance(value, Tensor):
                    raise Unsupported("unsupported_object", "a frame function returned data computed "
                                                            "outside frame's ops")
                try:
                    from_numpy(data.dtype)
                    data = tracer.meta(tracer.value_of(data))
                except (TypeError, UntracedArray) as e:
                    raise Unsupported("unsupported_object", str(e)) from e
            if kind == TENSOR:
                return TensorVariable(data, TENSOR, requires_grad=tracer.tape.is_tracked(data))
            zero_d_array = data.ndim == 0 and type(probe) is np.ndarray
            return TensorVariable(data, NPSCALAR if data.ndim == 0 and not zero_d_array else NDARRAY)
        if isinstance(value, tuple):
            probes = _parallel(probe, value)
            items = [self.from_python(v, kind, passed, constant_ok, p) for v, p in zip(value, probes)]
            if is_namedtuple_class(type(value)):  # np.linalg.eigh's EighResult, ...
                return NamedTupleVariable(type(value), items)
            return TupleVariable(items)
        if isinstance(value, list):
            return ListVariable([self.from_python(v, kind, passed, constant_ok, p)
                                 for v, p in zip(value, _parallel(probe, value))])
        if value is None or (constant_ok and (isinstance(value, CONSTANT_TYPES)
                                              or isinstance(value, np.generic))):
            return ConstantVariable(value)
        # a number computed from tensor arguments outside the graph (NumPy
        # running on meta arrays) would be a made-up value
        raise Unsupported("unsupported_object", f"a frame function returned {type(value).__name__} "
                                                f"computed from tensors outside frame's ops")

    def call_real(self, fn, args, kwargs, numpy_semantics: bool = False, numpy_ref=None) -> Variable:
        """Run ``fn`` (frame API, or a NumPy function dispatching to frame) for
        real on meta arrays under the tracer; its ops become graph nodes.

        With ``numpy_semantics`` and no frame Tensor among the arguments the
        call stands for NumPy code (``numpy_ref``, default ``fn``): when frame
        raises, NumPy itself is asked on the meta arrays whether the call
        raises, to tell the function's own exception from a NumPy feature
        frame does not model."""
        # an input that requires grad but is not a leaf: eager extends its record,
        # unless the op's results are integers or bools (argmax, a comparison),
        # which never require grad (checked once the op ran)
        untracked = _untrackable(self, args, kwargs) and self.tr.grad_enabled()
        passed: dict[int, Variable] = {}
        py_args = [a.to_python(passed) for a in args]
        py_kwargs = {k: v.to_python(passed) for k, v in kwargs.items()}
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
            name = getattr(fn, "__name__", fn)
            if isinstance(e, NotModelled) and kind == TENSOR:  # NumPy runs it on the data
                raise Unsupported("unsupported_call", str(e)) from e
            if kind == NDARRAY and not self._numpy_raises(numpy_ref or fn, args, kwargs):
                if isinstance(e, NotModelled):  # "numpy.std with dtype= has no frame op"
                    raise Unsupported("unsupported_call", str(e)) from e
                raise Unsupported("unsupported_call", f"NumPy's {name}() here is not modelled by "
                                                      f"frame ({type(e).__name__}: {e})") from e
            raise UserCodeRaises(f"{name}() raises {type(e).__name__}: {e}") from e
        if untracked and not _never_requires_grad(result):
            raise Unsupported("unsupported_object", "an op on an input tensor that requires grad "
                                                    "but is not a leaf: eager extends its autograd "
                                                    "record, which capture does not model")
        probe = None
        if kind == NDARRAY and _has_0d_array(result):
            probe = self._numpy_result(numpy_ref or fn, args, kwargs)
        return self.from_python(result, kind, passed, constant_ok=not passed, probe=probe)

    def _numpy_result(self, fn, args, kwargs):
        """What NumPy returns for this call on the meta arrays (real zero-filled,
        read-only ndarrays of the right dtypes and shapes), or ``RAISES``.  It
        tells whether a 0-d result is an array or a NumPy scalar, NumPy's choice
        per function (a ufunc gives a scalar; ``astype``, ``reshape`` or
        ``np.array`` of a 0-d array give a 0-d array)."""
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the probe's warnings are not the user's
                return fn(*[a.to_numpy() for a in args], **{k: v.to_numpy() for k, v in kwargs.items()})
        except Exception:  # noqa: BLE001 - any error counts as raising
            return RAISES

    def _numpy_raises(self, fn, args, kwargs) -> bool:
        """Does NumPy raise for this call?"""
        return self._numpy_result(fn, args, kwargs) is RAISES

    def call_constant(self, fn, args, kwargs) -> Variable:
        """Run a pure function on constant arguments at trace time."""
        if not all(is_constant_value(a) for a in args) or \
                not all(is_constant_value(v) for v in kwargs.values()):
            raise Unsupported("unsupported_call", f"{getattr(fn, '__name__', fn)}() with non-constant arguments")
        try:
            result, warned = fold_constants(fn, [constant_value(a) for a in args],
                                            {k: constant_value(v) for k, v in kwargs.items()})
        except Exception as e:
            raise UserCodeRaises(f"{getattr(fn, '__name__', fn)}() raises "
                                 f"{type(e).__name__}: {e}", exc=e) from e
        refuse_warned(fn, warned)
        return self.wrap_result(result)

    # -- operators ------------------------------------------------------------------------
    def binary_op(self, fn, a: Variable, b: Variable) -> Variable:
        if a.masked_selection() is not None or b.masked_selection() is not None:
            return masked_binary_op(self, fn, a, b)   # ``y[m] - p[m]``: still a lazy selection
        result = scalar_binary_op(self, fn, a, b)   # None unless a Python scalar of the frame is involved
        if result is not None:
            return result
        if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
            if not self._any_tensor_kind([a, b], {}):  # NumPy makes an array of a list operand
                a, b = as_array_operand(self, a), as_array_operand(self, b)
            if fn in _BOOL_BITWISE and _numpy_bools(a) and _numpy_bools(b):
                return self.call_real(_BOOL_BITWISE[fn](frame), [a, b], {}, numpy_semantics=True,
                                      numpy_ref=fn)
            if fn in _NUMPY_SHIFTS and not self._any_tensor_kind([a, b], {}):
                return self.call_real(_NUMPY_SHIFTS[fn], [a, b], {}, numpy_semantics=True,
                                      numpy_ref=fn)
            return self.call_real(fn, [a, b], {}, numpy_semantics=True)
        if a.is_constant() and b.is_constant():
            try:
                result, warned = fold_constants(fn, [a.as_constant(), b.as_constant()], {})
            except Exception as e:
                raise UserCodeRaises(f"{fn.__name__} raises {type(e).__name__}: {e}", exc=e) from e
            refuse_warned(fn, warned)
            return self.wrap_result(result)
        result = user_binary_op(self, fn, a, b)   # __add__, __eq__... of user classes, inlined
        if result is not None:
            return result
        return self._sequence_op(fn, a, b)

    def _sequence_op(self, fn, a, b) -> Variable:
        return sequence_op(self, fn, a, b)

    def structurally_equal(self, a: Variable, b: Variable) -> bool:
        """``a == b`` for containers of constants (``containers.structurally_equal``)."""
        return structurally_equal(self, a, b)

    def binary_or_unary(self, fn, *args: Variable) -> Variable:
        if len(args) == 1 and args[0].masked_selection() is not None:
            return masked_unary_op(self, fn, args[0])
        if len(args) == 1 and isinstance(args[0], ScalarVariable):
            result = scalar_unary_op(self, fn, args[0])
            if result is not None:
                return result
        if any(isinstance(a, TensorVariable) for a in args):
            (x, *_) = args
            if fn is operator.pos and isinstance(x, TensorVariable) and x.kind != TENSOR \
                    and x.meta.dtype == np.bool_:
                raise UserCodeRaises("numpy.positive is not defined for booleans")
            return self.call_real(fn, list(args), {}, numpy_semantics=True)
        for a in args:
            a.value_needed()   # a lazy number read from a tensor: the break at its .item()
        if all(a.is_constant() for a in args):
            try:
                result, warned = fold_constants(fn, [a.as_constant() for a in args], {})
            except Exception as e:
                raise UserCodeRaises(f"{fn.__name__} raises {type(e).__name__}: {e}", exc=e) from e
            refuse_warned(fn, warned)
            return self.wrap_result(result)
        raise Unsupported("unsupported_object", f"{fn.__name__} on {args!r}")

    def inplace_op(self, fn, a: Variable, b: Variable) -> Variable:
        """``a op= b``: tensors and ndarrays are updated in place (NumPy's
        same_kind casting, fixed shape), a list extends itself with ``+=``;
        everything else rebinds (``Variable.inplace_op``)."""
        return a.inplace_op(self, fn, b)

    def write_in_place(self, a: TensorVariable, result: Variable,
                       where: Variable | None = None) -> TensorVariable:
        """Overwrite ``a``'s memory with ``result`` (``a op= b``, NumPy's ``out=``,
        ``np.copyto``): ``result`` is broadcast to ``a``'s shape and cast with
        NumPy's ``same_kind`` rule; with ``where`` (a bool mask broadcasting to
        ``a``'s shape) only the elements where it is true are written.  The write
        is a side effect replayed on an input after the graph runs; ``a`` itself
        (the same object) is the result.

        A NumPy view made by basic indexing (``a = b[1:, 0]``, ``b[i] += 1``)
        writes through: ``b`` becomes ``b`` with the new values at ``[1:, 0]``
        (frame's functional setitem), and ``a`` stays a view of it.  Other
        views of ``b`` are then stale (their next use breaks the graph), as are
        writes through views made any other way."""
        if not isinstance(result, TensorVariable):
            raise Unsupported("unsupported_object", f"writing {result!r} into a tensor")
        through = self._indexed_view(a)
        if through is None:
            self.tr.written_in_place(a)
        else:
            a.check_fresh()
            self.tr.item_written(a)
        old_meta = a.meta
        if result.shape != a.shape:
            if not broadcasts_to(result.shape, a.shape):
                raise UserCodeRaises(f"in-place result of shape {list(result.shape)} does "
                                     f"not fit a tensor of shape {list(a.shape)}")
            result = self.call_real(frame.broadcast_to, [result, self.wrap_static(a.shape)], {})
        if result.meta.dtype != a.meta.dtype:
            if not np.can_cast(result.meta.dtype, a.meta.dtype, casting="same_kind"):
                raise UserCodeRaises(f"cannot cast {result.meta.dtype} to "
                                     f"{a.meta.dtype} in place")
            result = self.call_real(frame.astype, [result, ConstantVariable(a.dtype)], {})
        if where is not None:
            result = self.call_real(frame.where, [where, result, a], {})
        if through is not None:
            parent, index = through
            if isinstance(index, Variable):   # an index of dynamic ints (variables/dynamic_index.py)
                whole = index.setitem_value(self, parent, result)
            else:
                whole = self.call_real(setitem, [parent, ConstantVariable(index), result], {},
                                       numpy_semantics=True)
            self.write_in_place(parent, whole)  # makes every view of the root stale, ``a`` too
            a.stale = False
            self.tr.views.setdefault(id(a.base), []).append(a)
            a.meta = result.meta
            return a
        a.meta = result.meta
        after_inplace(self, a, old_meta)
        self.side_effects.tensor_written(a)
        return a

    @staticmethod
    def _indexed_view(a: TensorVariable) -> tuple[TensorVariable, object] | None:
        """``(parent, index)`` when ``a`` is an ndarray view ``parent[index]``
        made by basic indexing with a constant index (or a
        ``DynamicIndexVariable``), else None."""
        if a.base is None or a.kind != NDARRAY or a.recipe is None:
            return None
        parent, fn, args, kwargs = a.recipe
        if fn is not operator.getitem or kwargs or len(args) != 1 or parent.kind != NDARRAY:
            return None
        return parent, args[0]

    def wrap_result(self, value) -> Variable:
        """A Variable for a value computed at trace time from constants."""
        if isinstance(value, CONSTANT_TYPES) or isinstance(value, np.generic):
            return ConstantVariable(value)
        if type(value) is np.ndarray:  # a constant of the graph; each call gets a fresh copy
            try:
                from_numpy(value.dtype)
            except TypeError as e:
                raise Unsupported("unsupported_object", str(e)) from e
            tracer = self.tr.tracer
            return TensorVariable(tracer.meta(tracer.value_of(np.array(value, copy=True))), NDARRAY)
        if type(value) is tuple:
            return TupleVariable([self.wrap_result(v) for v in value])
        if type(value) is frozenset and all(isinstance(v, CONSTANT_TYPES) for v in value):
            return ConstantVariable(value)   # (as LOAD_CONST has it)
        if type(value) is list:
            return ListVariable([self.wrap_result(v) for v in value])
        if type(value) is dict and all(type(k) in (int, str, bool, type(None)) for k in value):
            return DictVariable({k: self.wrap_result(v) for k, v in value.items()})
        return self.wrap_static(value)

    # -- calls --------------------------------------------------------------------------------
    def call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        return fn.call(self, args, kwargs)

    def inline_call(self, fn_var: UserFunctionVariable, args, kwargs) -> Variable:
        fn = fn_var.fn
        code = fn.__code__
        traced = traced_code(code)  # auto-jit's trampoline: its function's own code is traced
        if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                            | inspect.CO_ITERABLE_COROUTINE):
            raise Unsupported("unsupported_call", f"calling coroutine function {fn.__qualname__}")
        if self.depth + 1 > MAX_INLINE_DEPTH:
            raise Unsupported("inline_limit", f"inlining {fn.__qualname__} past depth {MAX_INLINE_DEPTH}")
        defaults = self._defaults(fn_var)
        if fn_var.source is not None:  # a code reloader may replace it (fn.__code__ = ...)
            self.tr.guards.code(fn_var.source, code)
        code = traced
        f_locals = bind_arguments(code, fn.__qualname__, args, kwargs, *defaults)
        cells = self._cells_for(fn_var)
        for name in code.co_cellvars:
            if name in f_locals:  # a parameter captured by an inner function (MAKE_CELL)
                cells[name].value = f_locals[name]
        child = InstructionTranslator(self.tr, code, fn.__globals__, f_locals, cells,
                                      self.depth + 1, self)
        if code.co_flags & inspect.CO_GENERATOR:
            # runs lazily, one yield per next()
            return GeneratorVariable(child, (fn_var, list(args), dict(kwargs)))
        return child.run()

    def _defaults(self, fn_var: UserFunctionVariable):
        if getattr(fn_var, "made_defaults", None) is not None:
            return fn_var.made_defaults
        fn = fn_var.fn
        if fn_var.source is None:
            raise Unsupported("unsupported_object", f"defaults of {fn.__qualname__} without a source")
        self.tr.guards.defaults(fn_var.source, fn)
        pos = [self.wrap_static_default(d) for d in (fn.__defaults__ or ())]
        kw = {k: self.wrap_static_default(v) for k, v in (fn.__kwdefaults__ or {}).items()}
        return pos, kw

    def wrap_static_default(self, value) -> Variable:
        if type(value) in (Tensor, np.ndarray):
            raise Unsupported("unsupported_object", "a tensor as a parameter default")
        if type(value) in (list, dict):
            raise Unsupported("unsupported_object", "a mutable parameter default")
        try:
            return self.wrap_static(value)
        except Unsupported:
            # another object (dataclasses' default-factory marker, a sentinel): the guard on
            # __defaults__ fixes it; read from the pool
            return self.wrap(value, ConstSource(self.tr.guards.const(value),
                                                f"<default {type(value).__name__}>"))

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
                own = self.tr.own_cells.get(id(real)) if base is not None else None
                if own is not None:
                    # the frame's own cell (a function it made before a break closes
                    # over it, resume.py): one Cell, so a write on either side is seen
                    self.tr.guards.alias(ItemSource(AttrSource(base, "__closure__"), i),
                                         own.cell_source)
                    cells[name] = own
                else:
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
                raise UserCodeRaises(f"free variable {name!r} referenced before assignment") from e
            if cell.source is None:
                cell.value = self.wrap_static(value)
            else:
                cell.value = self.wrap(value, cell.source)
            return cell.value
        raise UserCodeRaises(f"cell variable {name!r} referenced before assignment")

    def globals_ref(self) -> str:
        """The entry's expression for this frame's globals (``Translation.globals_ref``)."""
        return self.tr.globals_ref(self.f_globals, self.depth == 0)

    def load_global(self, name: str) -> Variable:
        ref = self.globals_ref()
        pending = self.side_effects.pending_global(self.f_globals, name)
        g = self.tr.guards
        if pending is DELETED:   # ``del name`` ran in the trace: the builtin, if any
            if name in self.f_builtins:
                return self.wrap(self.f_builtins[name], GlobalSource(name, g.const(self.f_builtins), "B"))
            message = f"name {name!r} is not defined"
            raise UserCodeRaises(f"NameError: {message}", exc=NameError(message))
        if pending is not None:
            return pending
        if name in self.f_globals:
            src = GlobalSource(name, ref)
            return self.wrap(self.f_globals[name], src)
        if name in self.f_builtins:
            g.not_in_globals(FrameGlobalsSource() if ref == FRAME_GLOBALS else ConstSource(ref, "G"),
                             name)
            src = GlobalSource(name, g.const(self.f_builtins), "B")
            return self.wrap(self.f_builtins[name], src)
        raise UserCodeRaises(f"name {name!r} is not defined")


def fold_constants(fn, args: list, kwargs: dict):
    """``fn(*args, **kwargs)`` on constants at trace time, and the first warning
    it gave (None: none).  NumPy scalars warn (``np.int64(2**62) * 4``
    overflows, ``np.log(0.0)``): such a warning is the user's line's, on every
    call, so the caller refuses the fold (``refuse_warned``) and the code runs
    natively.  Only calls on NumPy values are watched (Python's arithmetic
    raises rather than warns)."""
    if not any(isinstance(v, (np.generic, np.ndarray)) for v in (*args, *kwargs.values())) and \
            not isinstance(fn, np.ufunc) and getattr(fn, "__module__", None) != "numpy":
        return fn(*args, **kwargs), None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, (caught[0] if caught else None)


def refuse_warned(fn, warned) -> None:
    if warned is not None:
        name = getattr(fn, "__name__", repr(fn))
        raise Unsupported("unsupported_call", f"{name}() on constants warns ({warned.category.__name__}: "
                                              f"{warned.message}): the warning is the user's line's, "
                                              f"at every call")


def _never_requires_grad(result) -> bool:
    """Are the tensors an op returned integers or bools (which eager never
    marks as requiring grad: the op adds nothing to an autograd record)?"""
    if isinstance(result, (tuple, list)):
        return all(_never_requires_grad(r) for r in result)
    if isinstance(result, Tensor):
        return result.dtype.kind in "biu"
    return False


def _untrackable(tx, args, kwargs) -> bool:
    """Is an argument an input tensor that requires grad but is not a leaf?"""
    def check(v):
        return untrackable(tx, v) or any(check(i) for i in v.children())
    return any(check(a) for a in args) or any(check(v) for v in kwargs.values())


# &, |, ^ on NumPy bool arrays are the logical ops (frame Tensors have no bitwise ops)
_BOOL_BITWISE = {operator.and_: lambda frame: frame.logical_and,
                 operator.or_: lambda frame: frame.logical_or,
                 operator.xor: lambda frame: frame.not_equal}


# ndarray << k and >> k are NumPy's shift ufuncs (frame Tensors have no shift operators)
_NUMPY_SHIFTS = {operator.lshift: np.left_shift, operator.rshift: np.right_shift}


RAISES = object()  # what ``_numpy_result`` gives for a call NumPy raises on


def _has_0d_array(value) -> bool:
    """Is a 0-d array (a meta array, or a Tensor of one) among what a call returned?"""
    if isinstance(value, Tensor):
        value = value._data
    if type(value) is np.ndarray:
        return value.ndim == 0
    if isinstance(value, (tuple, list)):
        return any(_has_0d_array(v) for v in value)
    return False


def _parallel(probe, value) -> list:
    """The items of ``probe`` (NumPy's result) that stand for the items of
    ``value`` (frame's), or Nones when the two are not alike."""
    if isinstance(probe, (tuple, list)) and len(probe) == len(value):
        return list(probe)
    return [None] * len(value)


def _numpy_bools(v: Variable) -> bool:
    if isinstance(v, TensorVariable):
        return v.kind != TENSOR and v.meta.dtype == np.bool_
    return v.is_constant() and type(v.as_constant()) in (bool, np.bool_)


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
        raise UserCodeRaises(f"{qualname}() takes {nargs} positional arguments but "
                             f"{len(args)} were given")
    for name, value in zip(positional, args):
        out[name] = value
    extra_kw: dict[str, Variable] = {}
    kwonly = names[nargs:nargs + nkwonly]
    for key, value in kwargs.items():
        if key in positional[nposonly:] or key in kwonly:
            if key in out:
                raise UserCodeRaises(f"{qualname}() got multiple values for argument {key!r}")
            out[key] = value
        elif has_varkw:
            extra_kw[key] = value
        else:
            raise UserCodeRaises(f"{qualname}() got an unexpected keyword argument {key!r}")
    first_default = nargs - len(defaults)
    for i, name in enumerate(positional):
        if name not in out:
            if i >= first_default:
                out[name] = defaults[i - first_default]
            else:
                raise UserCodeRaises(f"{qualname}() missing required argument {name!r}")
    for name in kwonly:
        if name not in out:
            if name in kwdefaults:
                out[name] = kwdefaults[name]
            else:
                raise UserCodeRaises(f"{qualname}() missing keyword-only argument {name!r}")
    index = nargs + nkwonly
    if has_varargs:
        out[names[index]] = TupleVariable(args[nargs:])
        index += 1
    if has_varkw:
        out[names[index]] = DictVariable(extra_kw)
    return out
