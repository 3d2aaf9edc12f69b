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

import os
import types

import numpy as np

from frame.autograd.tape import is_grad_enabled

from . import autograd  # noqa: F401  (its HOOKS and wrap rules: grad mode, frame.grad)
from .errors import Unsupported, UserCodeRaises
from .guards import GuardSet
from .side_effects import SideEffects
from .sources import ConstSource, Source
from .tracer import Tracer
from .variables.base import (CONSTANT_TYPES, NPSCALAR, ConstantVariable, TensorVariable, Variable,
                             plain_tensor_subclass)
from .variables.callables import is_frame_api
from .variables.containers import TupleVariable
from .variables.objects import ClassVariable
from .variables.registry import STATIC_RULES, WRAP_RULES

__all__ = ["Translation", "Cell", "plain_tensor_subclass"]

# item assignments into one array a trace models (Translation.item_written)
ITEM_WRITES_PER_ARRAY = 64


class Cell:
    """A closure cell during simulation: symbolic contents, or a real cell read
    through its source.  ``cell_source`` (with ``real``): where the entry finds
    the real cell object itself; set for a cell variable of the translated
    frame handed to its resume function as a real cell (``resume.py``), which
    the trace may write (``nonlocal``): the entry writes the final contents
    back (``SideEffects.cells``)."""
    __slots__ = ("value", "real", "source", "cell_source")

    def __init__(self, value: Variable | None = None, real=None, source: Source | None = None,
                 cell_source: Source | None = None):
        self.value = value
        self.real = real
        self.source = source
        self.cell_source = cell_source

    @property
    def writable(self) -> bool:
        """Can the trace assign it (``STORE_DEREF``)?  A cell of a frame it
        simulates, not a real cell of an enclosing function it cannot rewrite."""
        return self.real is None or self.cell_source is not None


class Translation:
    def __init__(self, fn: types.FunctionType, device: str = "cpu", dynamic=frozenset()):
        self.fn = fn
        # sources of Python scalars that are graph inputs where they meet tensors
        # (their value guard failed before: capture/jit.py, variables/scalars.py)
        self.dynamic = dynamic
        self.scalar_inputs: dict[tuple, TensorVariable] = {}   # (source, dtype) -> its input
        self.scalar_input_by_value: dict[int, tuple] = {}       # id(graph input) -> (source, dtype)
        self.active = None   # the innermost InstructionTranslator running (where())
        self.tracer = Tracer(device)
        self.guards = GuardSet()
        self.side_effects = SideEffects()
        self.wrapped: dict[int, Variable] = {}
        # id(real cell) -> the Cell of the top frame's cell variable it is (a resume
        # function's cell parameters): a called function closing over it shares it
        self.own_cells: dict[int, Cell] = {}
        self.is_resume = False   # ``fn`` is a resume function (capture/resume.py)
        # the call being translated is made while its caller handles an exception
        # (``sys.exc_info()`` when ``jit.translate`` started; variables/flow.py, CallerHandled)
        self.caller_handles = False
        self._objects: dict[int, object] = {}   # id(Variable made by wrap) -> its object
        self._wrapping: set[int] = set()   # containers being wrapped (a cycle is refused)
        self.keepalive: list = []
        self.instruction_count = 0
        self.codes: set = set()    # every code object the trace ran (capture/persist.py)
        self.input_by_value: dict[int, TensorVariable] = {}  # id(graph input Value) -> variable
        self.views: dict[int, list[TensorVariable]] = {}    # id(base variable) -> its views
        self.item_writes: dict[int, int] = {}   # id(base variable) -> item assignments into it
        self.generators: list = []   # GeneratorVariables made by the trace (checked at its end)
        # NumPy generators the entry makes before its draws (np.random.default_rng in the
        # function: variables/numpy_random.py)
        self.made_generators: list = []
        # functools.cache calls the trace simulated: (id(wrapper), key) -> result, and how
        # deep it is in the inlined body of a miss (variables/lru_cache.py)
        self.cache_results: dict[tuple, Variable] = {}
        # 0-d bool graph values: when one is true at run time, the entry runs the plain
        # function instead (NumPy warns then: np.mean of an empty slice, numpy_results.py)
        self.run_checks: list[TensorVariable] = []
        # ``x[mask]`` as lazy selections (variables/masked.py), ``t.item()`` as lazy
        # numbers (variables/lazy_scalars.py): whether they may be; how many were made
        self.lazy_values = True
        self.masked_selections = 0
        self.lazy_scalars = 0         # LazyScalarVariables made (variables/lazy_scalars.py)
        # Python scalars the trace computed by an operation that raises for some values
        # (``1.0 / s``): the entry evaluates each before anything else, and runs the plain
        # function when one raises (variables/scalars.py, codegen._scalar_check_lines)
        self.scalar_checks: list = []
        self.cache_miss_depth = 0
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

    def where(self) -> str:
        """``file:line`` in the user's code the trace is at (``user_location``)."""
        if self.active is None:
            code = self.fn.__code__
            return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
        return self.active.user_location()[0]

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
        elif isinstance(base, TensorVariable) and NPSCALAR not in (result.kind, base.kind) \
                and result is not base:   # (a NumPy scalar's ravel/reshape/.T is a new array)
            root = base.base if base.base is not None else base
            result.base = root
            self.views.setdefault(id(root), []).append(result)
            if fn is not None and all(a.is_constant() for a in args) and \
                    all(v.is_constant() for v in (kwargs or {}).values()):
                result.recipe = (base, fn, tuple(a.as_constant() for a in args),
                                 {k: v.as_constant() for k, v in (kwargs or {}).items()})
        return result

    def item_written(self, t: TensorVariable) -> None:
        """One more item assignment into ``t``'s array (``a[i] = v``, or through a
        view): past ``ITEM_WRITES_PER_ARRAY`` of them the trace stops, since an
        array filled element by element in a long loop runs faster as NumPy's
        in-place writes than as the unrolled graph (an op or more per write)."""
        root = t.base if t.base is not None else t
        count = self.item_writes.get(id(root), 0) + 1
        self.item_writes[id(root)] = count
        if count > ITEM_WRITES_PER_ARRAY:
            raise Unsupported("side_effect", f"more than {ITEM_WRITES_PER_ARRAY} item assignments "
                                             f"into one array (a loop filling it runs natively: "
                                             f"NumPy writes in place)")

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
            self._objects[id(var)] = value
            self.keepalive.append(value)
        return var

    def object_of(self, var: Variable, default=None):
        """The existing object ``var`` was made for by ``wrap`` (reached through
        its source), else ``default``."""
        obj = self._objects.get(id(var), default)
        return obj if obj is not default and self.wrapped.get(id(obj)) is var else default

    def _build(self, value, source: Source) -> Variable:
        """The first Variable the wrap rules of the kinds make for ``value``
        (``capture/variables/registry.py``: each kind registers its rules, in an
        explicit order); a static rule's object is guarded by identity."""
        for rule in WRAP_RULES:
            var = rule.build(self, value, source)
            if var is not None:
                if rule.static:
                    self.guards.identity(source, value)
                return var
        raise Unsupported("unsupported_object", f"{source.text()}: no wrap rule for "
                                                f"{type(value).__name__}")

    def _static(self, value, source: Source | None) -> Variable | None:
        """Variables for functions, modules and other objects guarded by identity."""
        for rule in STATIC_RULES:
            var = rule.build(self, value, source)
            if var is not None:
                return var
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


