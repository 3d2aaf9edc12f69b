"""Code generation for a cache entry.

One Python function per entry, generated as source and compiled once:

    def __entry(__fn, x, y):                  # the original signature
        try:
            if not (<guard> and <guard> ...):  # from sources; see guards.py
                return __MISS
        except Exception:
            return __MISS
        __o = __run((x._data, y._data))       # graph inputs, extracted by source
        __copyto(x._data, __o[1], ...)        # in-place tensor updates
        __t0 = __wrap(__o[0])                 # outputs; NumPy views remade from their base
        <containers, attributes, globals: their final state>
        return (__t0, x)                      # the return value, rebuilt

The source is compiled inside a maker (``maker_code``) so that its helpers,
constants and builtins are closure cells, and the entry is made as the user's
function (``entry_function``): its globals, file, name, qualified name and
lines, so that code inspecting the frame that calls it (``logging``,
``warnings``, ``namedtuple``, tracebacks) sees the user's function.

Guards and extraction come from the same source expressions, so they cannot
disagree.  At a graph break the entry ends instead by rebuilding the live
stack and locals, running the breaking instruction and returning a ``Tail`` to
a resume function (``breaks.py``); resume functions, which continue the
original frame, are built with the ``bytecode`` package (``resume.py``).
"""
from __future__ import annotations

import builtins
import dataclasses
import inspect
import keyword
import logging
import math
import os
import re
import types
import warnings
import weakref

import numpy as np
from numpy.lib.array_utils import byte_bounds as _byte_bounds

from frame import config
from frame.hal.fp_errors import (GraphErrorStates, WarningCheck, raise_requested, reset_state,
                                 strict_state)
from frame.hal.options import CompileOptions
from frame.ops import get_schema
from frame.ops.registry import lookup as lookup_op
from frame.runtime.eager import run_op
from frame.runtime.stats import record
from frame.functions.random import generator, host_draws
from frame.tensor import Tensor

from frame.autograd.compiled import attach as _attach_record

from .autograd import escaping_roots, escaping_tracked, plan_backward
from .breaks import break_lines
from .errors import Unsupported
from .guards import Guard, GuardSet
from .resume import original_code
from .side_effects import DELETED
from .rebuild import new_cell
from .sources import CLOSURE, FRAME_GLOBALS, AttrSource, ClosureSource, FunctionSource, LocalSource
from .translation import Cell
from .translator import Translation
from .variables.base import NDARRAY, NPSCALAR, TENSOR, TensorVariable, Variable
from .variables.numpy_random import generator_state, restore_generator

log = logging.getLogger("frame.capture")

__all__ = ["MISS", "CacheEntry", "build_entry", "build_native_entry", "signature_source",
           "maker_code", "entry_function", "set_entry_helper"]


class _Miss:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISS"


MISS = _Miss()


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    """One translation of a code object: complete when made (``build_entry``,
    ``build_native_entry``, ``persist.load_entries``) and never changed after
    (a native entry whose reason is reclassified is replaced in its cache)."""
    fn: object                  # __entry(__fn, *args, **kwargs) -> result or MISS
    guards: list[Guard]
    source: str
    graph: object = None        # the captured frame.ir.Graph (None when no tensor work)
    executable: object = None   # its run(inputs) is __run (persist.py: loads on first run)
    native: bool = False        # runs the original function (capture could not)
    breaks: bool = False        # ends in a graph break (returns a Tail to a resume function)
    reason: object = None       # BreakReason of a native or break entry
    in_try: bool = False        # the reason is an exception a try block may catch
    backend: str | None = None  # the backend the executable was compiled for (None at a break)
    files: frozenset = frozenset()  # co_filename of every code the trace ran (capture/persist.py)
    namespace: dict = dataclasses.field(default_factory=dict)  # helpers and constants of fn
    donate: tuple = ()          # CompileOptions.donate of the executable (capture/persist.py)
    backward: object = None     # the CompiledBackward of the results' autograd record, if any
    stored: bool = False        # loaded from a previous process's store (persist.py)

    def failing_guard(self, fn, args, kwargs) -> Guard | None:
        """The first guard that does not hold for these arguments (for logs)."""
        return next(self.failing_guards(fn, args, kwargs), None)

    def failing_guards(self, fn, args, kwargs):
        """The guards that do not hold for these arguments, in order."""
        ns = {**_BUILTINS, **self.namespace}
        try:
            bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
            bound.apply_defaults()
        except TypeError:
            return
        ns.update(bound.arguments)
        ns["__fn"] = fn
        ns["__C"] = fn.__closure__
        ns["__G"] = fn.__globals__
        for g in self.guards:
            try:
                if not eval(g.expr, ns):  # noqa: S307 - our own generated expression
                    yield g
            except Exception:  # noqa: BLE001 - a guard that raises fails
                yield g


_SAFE_REPR = (int, str, bool, bytes, type(None))


def signature_source(code: types.CodeType, fn, pool: GuardSet) -> tuple[str, str]:
    """(parameter list, call argument list) reproducing ``fn``'s signature."""
    names = code.co_varnames
    nargs, nposonly, nkwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    params, call = [], []
    first_default = nargs - len(defaults)
    for i in range(nargs):
        p = names[i]
        if i >= first_default:
            p += f"={pool.const(defaults[i - first_default])}"
        params.append(p)
        call.append(names[i])
        if nposonly and i == nposonly - 1:
            params.append("/")
    index = nargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        params.append("*" + names[index])
        call.append("*" + names[index])
        index += 1
    elif nkwonly:
        params.append("*")
    for name in names[nargs:nargs + nkwonly]:
        params.append(f"{name}={pool.const(kwdefaults[name])}" if name in kwdefaults else name)
        call.append(f"{name}={name}")
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[index])
        call.append("**" + names[index])
    for p in names[:index + 1]:
        if p.startswith("__"):
            raise Unsupported("unsupported_object", f"parameter name {p!r} is reserved by capture")
    return ", ".join(params), ", ".join(call)


def _defaults_guard(fn, pool: GuardSet) -> None:
    pool.defaults(FunctionSource(), fn)


def _frame_lines(reads: frozenset) -> list[str]:
    """Bind ``__C`` (the called function's closure cells) and ``__G`` (its
    globals) when the entry reads them (``reads``: the ``Source.frame_reads``
    of its guards and of the sources it loads): an entry serves every function
    of its code object, each with its own cells and globals."""
    lines = []
    if CLOSURE in reads:
        lines.append(f"    {CLOSURE} = __fn.__closure__")
    if FRAME_GLOBALS in reads:
        lines.append(f"    {FRAME_GLOBALS} = __fn.__globals__")
    return lines


def _guard_block(pool: GuardSet, guards=None) -> list[str]:
    guards = pool.guards if guards is None else guards
    if not guards:
        return []
    cond = " and\n                ".join(f"({g.expr})" for g in guards)
    return ["    try:",
            f"        if not ({cond}):",
            "            return __MISS",
            "    except __Exception:",
            "        return __MISS"]


ENTRY_FILENAME = "<frame capture entry>"   # the maker module's code (persist.py stores it)

# Generated code names a builtin with two leading underscores (``__type(x)``,
# ``__len(x)``, ``except __Exception``): parameters of the user's function are
# the entry's parameters and may be called ``type`` or ``len``, while names
# starting with ``__`` are refused as parameters (``signature_source``).
_BUILTINS = {"__" + n: v for n, v in vars(builtins).items()
             if not n.startswith("_") and not keyword.iskeyword(n)}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def maker_code(src: str, names) -> types.CodeType:
    """The module code defining ``__make``, which returns the entry ``src``
    defines with ``names`` (its helpers and constants) as closure cells::

        def __make(*, __k0=None, __run=None, __type=None, ...):
            def __entry(__fn, x, y):
                ...
            return __entry

    The builtins the source names (``__type`` for ``type``) are cells too: the
    entry runs with the user's globals, where a global of the same name must
    not replace them, and with the user's parameter names."""
    words = set(_WORD.findall(src))
    params = sorted((set(names) | set(_BUILTINS)) & words)
    head = f"def __make(*, {', '.join(p + '=None' for p in params)}):" if params else "def __make():"
    body = "".join("    " + line + "\n" if line else "\n" for line in src.splitlines())
    return compile(f"{head}\n{body}    return __entry\n", ENTRY_FILENAME, "exec")


def entry_function(maker: types.CodeType, namespace: dict, fn, lines: dict[int, int] | None = None):
    """The entry function for ``fn`` from ``maker`` (``maker_code``): its
    helpers are bound from ``namespace`` (and builtins) as closure cells, and
    it runs with ``fn``'s globals under ``fn``'s file name, name and qualified
    name, every line of the generated source at a line of ``fn`` (``lines``:
    source line -> user line, the others at the ``def`` line).  Code that
    inspects its caller (``logging``, ``warnings``, ``sys._getframe``,
    ``namedtuple``'s module, tracebacks) sees the user's function there."""
    ns: dict = {"__builtins__": builtins}
    exec(maker, ns)  # noqa: S102 - our own generated source
    make = ns["__make"]
    params = make.__code__.co_varnames[:make.__code__.co_kwonlyargcount]
    made = make(**{p: namespace[p] if p in namespace else _BUILTINS[p] for p in params})
    user = original_code(fn.__code__)
    code = made.__code__
    code = code.replace(co_filename=user.co_filename, co_name=user.co_name,
                        co_qualname=user.co_qualname, co_firstlineno=user.co_firstlineno,
                        co_linetable=_line_table(code, user.co_firstlineno,
                                                 {k + 1: v for k, v in (lines or {}).items()}))
    entry = types.FunctionType(code, fn.__globals__, user.co_name, made.__defaults__,
                               made.__closure__)
    entry.__kwdefaults__ = made.__kwdefaults__
    entry.__qualname__ = user.co_qualname
    return entry


def set_entry_helper(entry, name: str, value) -> None:
    """Rebind the helper ``name`` of an entry function (persist.py's ``__run``)."""
    entry.__closure__[entry.__code__.co_freevars.index(name)].cell_contents = value


def _line_table(code: types.CodeType, first: int, lines: dict[int, int]) -> bytes:
    """A location table (CPython 3.11+ format, lines without columns) giving
    each instruction of ``code`` the user line its source line maps to in
    ``lines`` (``first`` where it maps to none; no location stays none)."""
    wanted = []
    for start, _, _, _ in code.co_positions():
        wanted.append(None if start is None else lines.get(start, first))
    out = bytearray()
    current, i = first, 0
    while i < len(wanted):
        line = wanted[i]
        n = 1
        while n < 8 and i + n < len(wanted) and wanted[i + n] == line:
            n += 1
        if line is None:
            out.append(0x80 | (15 << 3) | (n - 1))
        else:
            out.append(0x80 | (13 << 3) | (n - 1))
            delta = line - current
            value = (-delta << 1) | 1 if delta < 0 else delta << 1
            while value >= 0x40:
                out.append(0x40 | (value & 0x3F))
                value >>= 6
            out.append(value)
            current = line
        i += n
    return bytes(out)


#: What ``compile`` raises on generated source it cannot compile (a guard over
#: a source nested deeper than the parser allows, a parameter name that is not
#: an identifier): the call then runs natively (``_compile``, ``build_native_entry``).
_COMPILE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


def _compile(src: str, namespace: dict, fn, lines: dict[int, int] | None = None):
    """The entry function of ``src``; source that does not compile raises
    ``Unsupported`` (the call runs natively, with the reason)."""
    try:
        maker = maker_code(src, namespace)
    except _COMPILE_ERRORS as e:
        log.debug("capture: generated entry of %s does not compile: %s\n%s", fn.__qualname__,
                  e, src)
        raise Unsupported("capture_error", f"the generated entry code does not compile "
                                           f"({type(e).__name__}: {e})") from e
    return entry_function(maker, namespace, fn, lines)


class _Rebuilder:
    """Expressions rebuilding Variables after the graph ran."""

    def __init__(self, tr: Translation, pool: GuardSet, out_index: dict[int, int],
                 needed: set[int] = frozenset()):
        self.tr = tr
        self.needed = needed             # ids of the variables the result and replay use
        self.pool = pool
        self.out_index = out_index       # id(graph Value) -> output position
        self.prelude: list[str] = []
        self.temps: dict[int, str] = {}
        self.used_outputs: set[int] = set()   # output positions the result or replay read
        self.sources: dict[str, str] = {}
        self.frame_reads: frozenset = frozenset()   # Source.frame_reads of the sources read
        self.at_break = False            # building a graph-break entry

    def source(self, var: Variable) -> str:
        if isinstance(var.source, LocalSource):
            return var.source.name  # the entry's own parameter
        expr = var.source.expr()
        name = self.sources.get(expr)
        if name is None:
            name = self.sources[expr] = f"__s{len(self.sources)}"
            self.frame_reads |= var.source.frame_reads()
        return name

    def source_lines(self) -> list[str]:
        return [f"    {name} = {expr}" for expr, name in self.sources.items()]

    def tensor(self, var: TensorVariable) -> str:
        if var.source is not None:
            return self.source(var)
        name = self.temps.get(id(var))
        if name is None and remade_from_parent(var, self.needed):
            parent, fn, args, kwargs = var.recipe
            # (a Variable: an index of dynamic ints, variables/dynamic_index.py)
            call_args = "".join(f", {self.expr(a) if isinstance(a, Variable) else self.pool.const(a)}"
                                for a in args)
            call_args += "".join(f", {k}={self.pool.const(v)}" for k, v in kwargs.items())
            name = self.temps[id(var)] = f"__t{len(self.temps)}"
            self.prelude.append(f"    {name} = {self.pool.const(fn)}({self.tensor(parent)}{call_args})")
        if name is None:
            value = self.tr.tracer.values[id(var.meta)]
            i = self.out_index[id(value)]
            name = self.temps[id(var)] = f"__t{len(self.temps)}"
            if i in self.used_outputs and var.kind != NPSCALAR:
                # another variable already owns this array (same value, e.g. a copy)
                self.prelude.append(f"    {name} = {'__wrap(' if var.kind == TENSOR else '('}"
                                    f"__o[{i}].copy())")
                return name
            self.used_outputs.add(i)
            if var.kind == TENSOR:
                self.prelude.append(f"    {name} = __wrap(__o[{i}])")
            elif var.kind == NDARRAY:
                self.prelude.append(f"    {name} = __o[{i}]")
            else:
                self.prelude.append(f"    {name} = __o[{i}][()]")
        return name

    # -- what Variable.reconstruct uses ---------------------------------------------------
    def expr(self, var: Variable) -> str:
        """An expression rebuilding ``var`` (``Variable.reconstruct``)."""
        return var.reconstruct(self)

    def constant(self, value) -> str:
        """A Python constant: its literal when it has one, else a pooled constant."""
        if isinstance(value, _SAFE_REPR) or (type(value) is float and math.isfinite(value)):
            return repr(value)
        if isinstance(value, Cell):
            raise Unsupported("unsupported_object", "a closure cell on the stack")
        return self.pool.const(value)

    def const(self, value) -> str:
        """A pooled constant (the same object at every call)."""
        return self.pool.const(value)

    def named(self, var: Variable) -> str | None:
        """The name ``var`` was already built under, if it was."""
        return self.temps.get(id(var))

    def once(self, var: Variable, make) -> str:
        """``var`` built once in the prelude as ``make()``'s expression (every place
        that holds it then holds the same object); ``make`` must not rebuild ``var``."""
        name = self.named(var)
        if name is None:
            expr = make()
            name = self.new_name(var)
            self.emit(f"{name} = {expr}")
        return name

    def new_name(self, var: Variable) -> str:
        """A name for a value built once in the prelude (``emit``)."""
        name = self.temps[id(var)] = f"__c{len(self.temps)}"
        return name

    def emit(self, line: str) -> None:
        """A line of the prelude, run after the graph, before the replay."""
        self.prelude.append("    " + line)

    def reenter(self, var: Variable, enter_expr: str) -> str:
        """The real ``__exit__`` of a block of a manager the trace modelled
        (grad mode), live at a break inside the block: ``enter_expr`` enters a
        real manager in the state the trace is in and gives its bound
        ``__exit__``, for the resume function (the block's end, or its
        exception handler, calls it).  Entered in the prelude after the graph,
        outer blocks first (the stack's order), so that the native instruction
        runs in the block's state and each manager saves the state around it."""
        if not self.at_break:
            raise Unsupported("unsupported_object", f"returning or storing {var!r}")
        name = self.named(var)
        if name is None:
            name = self.new_name(var)
            self.emit(f"{name} = {enter_expr}")
        return name

    def cell(self, cell: Cell) -> str:
        """An expression of the real cell for ``cell`` (a function the frame
        made closes over it; a resume function gets its cell variables so):
        the frame's own real cell where it has one (a resume function's cell
        parameter), a function's real closure cell through its source, else a
        new cell holding the trace's value (made empty first: its value may be
        a function closing over it)."""
        if cell.real is not None:
            if cell.cell_source is not None:
                self.frame_reads |= cell.cell_source.frame_reads()
                return cell.cell_source.expr()
            src = cell.source
            if isinstance(src, ClosureSource):
                self.frame_reads |= src.frame_reads()
                return f"{CLOSURE}[{src.index}]"
            if isinstance(src, AttrSource) and src.name == "cell_contents":
                self.frame_reads |= src.base.frame_reads()
                return src.base.expr()
            raise Unsupported("unsupported_object", "returning or storing a function whose closure "
                                                    "cell capture cannot find at run time")
        name = self.temps.get(id(cell))
        if name is None:
            name = self.temps[id(cell)] = f"__c{len(self.temps)}"
            self.emit(f"{name} = {self.const(new_cell)}()")
            if cell.value is not None:
                self.emit(f"{name}.cell_contents = {self.expr(cell.value)}")
        return name

    def globals_of(self, fn) -> str:
        """An expression of the globals dict of ``fn`` (a function the trace
        made): the called function's (``__G``) when they are the same dict."""
        if fn.__globals__ is self.tr.fn.__globals__:
            self.frame_reads |= frozenset({FRAME_GLOBALS})
            return FRAME_GLOBALS
        return self.const(fn.__globals__)


def _has_recipes(var: TensorVariable) -> bool:
    """Whether the view ``var`` can be remade from its base at run time: every
    step of its chain has a recipe."""
    if var.base is None:
        return False
    v = var
    while v is not var.base:
        if v.recipe is None:
            return False
        v = v.recipe[0]
    return True


def remade_from_parent(var: TensorVariable, needed: set[int]) -> bool:
    """A view is remade from its parent at run time (sharing memory as in
    NumPy) when its whole chain has recipes and its base is observable: an
    input, or an array the result or the replay hands out too (``_collect_needed``
    hands out the base of every view of an ndarray computed in the function)."""
    return _has_recipes(var) and (var.base.source is not None or id(var.base) in needed)


def _collect_tensors(var: Variable, out: list[TensorVariable], seen: set[int]) -> None:
    if id(var) in seen:
        return
    seen.add(id(var))
    if isinstance(var, TensorVariable):
        out.append(var)
    for v in var.rebuilt_from():
        _collect_tensors(v, out, seen)


def build_entry(tr: Translation, fn, result: Variable | None, backend: str, options=None,
                brk=None, requested_backend: str | None = None, pgo: bool = False) -> CacheEntry:
    """Compile the captured graph and generate the entry function.

    ``pgo``: the user named no backend, so ``runtime.compile`` may keep the
    faster of the tiers it measures (``frame/runtime/tiered.py``).

    ``brk`` (a ``BreakPoint``) makes it a graph-break entry: instead of
    returning ``result`` it rebuilds the frame's live stack and locals, runs
    the breaking instruction natively and returns a ``Tail`` to the resume
    function that continues the frame.

    The steps: the tensors the result, the live state and the side effects
    need (``_collect_needed``); the graph's outputs (``_choose_outputs``); the
    executable; the code after the graph (``_write_replay``); the aliasing
    guards of in-place writes (``_mutation_guards``); the entry's source
    (``_assemble_source``), compiled."""
    for gen in tr.generators:  # one paused in a try would run its handler when closed
        gen.check_closed()
    _warning_order(tr)
    _defaults_guard(fn, tr.guards)
    needed = _collect_needed(tr, result, brk)
    plan = _plan_backward(tr, needed, brk, backend, options, pgo, fn)
    outputs, out_index = _choose_outputs(tr, needed, plan.saved if plan is not None else ())
    graph = tr.tracer.graph
    rb = _Rebuilder(tr, tr.guards, out_index, {id(v) for v in needed})
    rb.at_break = brk is not None
    for i, var in enumerate(tr.made_generators):   # made before the draws (_draw_lines)
        rb.temps[id(var)] = f"__g{i}"
    replay = _write_replay(tr, fn, rb, out_index, result, brk, requested_backend)
    if plan is not None:
        _attach_line(tr, rb, plan, out_index)
    _mutation_guards(tr)
    # (a run-time check may send the call to the plain function, a warning filter may make
    # a warning raise: the inputs must be unwritten then)
    donate = _donate_write_backs(tr, graph, out_index, rb, replay) \
        if outputs and not tr.run_checks and not tr.side_effects.warnings else ()
    if donate:
        options = (options or CompileOptions()).replace(donate=donate)
    exe = _executable(graph, backend, options, pgo, origin_of(fn)) if outputs else None
    src, lines = _assemble_source(tr, fn, rb, exe, outputs, replay, brk, bool(donate))
    namespace = {**entry_helpers(exe.run if exe is not None else None), **tr.guards.consts,
                 **replay.consts}
    if plan is not None:  # (persist.py stores the backward beside the entry)
        namespace["__backward"] = plan.backward
    # a break entry's reason is the break's; its backend and files stay unset
    # (persist.py stores only entries that end in a return)
    return CacheEntry(_compile(src, namespace, fn, lines), list(tr.guards.guards), src,
                      graph if exe is not None else None, exe, breaks=brk is not None,
                      reason=brk.reason if brk is not None else None,
                      backend=backend if brk is None else None,
                      files=frozenset() if brk is not None else
                      frozenset(code.co_filename for code in tr.codes),
                      namespace=namespace, donate=donate if exe is not None else (),
                      backward=plan.backward if plan is not None else None)


def _collect_needed(tr: Translation, result: Variable | None, brk) -> list[TensorVariable]:
    """Every tensor the return value (or the live state at a break) and the
    side effects need, in order of first appearance."""
    se = tr.side_effects
    needed: list[TensorVariable] = []
    seen: set[int] = set()
    if brk is not None:
        for v in brk.values():
            _collect_tensors(v, needed, seen)
    else:
        _collect_tensors(result, needed, seen)
    for c in se.containers.values():
        _collect_tensors(c, needed, seen)
    for _, _, v in se.attrs.values():
        _collect_tensors(v, needed, seen)
    for _, _, v in se.globals.values():
        _collect_tensors(v, needed, seen)
    for _, v in se.grads.values():
        _collect_tensors(v, needed, seen)
    for cell in se.cells.values():
        _collect_tensors(cell.value, needed, seen)
    for tv in list(needed):
        # a view of an ndarray computed in the function (``dx_pad[:, :, 1:-1, 1:-1]``,
        # ``np.diag(a)``) is handed out as NumPy's: a view of its base, which the
        # graph hands out (its strides, flags and ``.base`` are NumPy's; a copy of
        # the view's elements would be C-ordered and own its data)
        if tv.kind == NDARRAY and tv.base is not None and tv.base.kind == NDARRAY \
                and tv.base.source is None and not tv.stale and _has_recipes(tv):
            _collect_tensors(tv.base, needed, seen)
    leaving = escaping_tracked(tr, needed)
    if leaving is not None and not tr.backward_done and brk is not None:
        # eager hands out a tensor with an autograd record (backward through it
        # later works); at a break the compiled code hands out plain tensors
        raise Unsupported("unsupported_object", "a tensor that requires grad (computed in the "
                                                "function) is live at a graph break; its autograd "
                                                "record cannot be handed out")
    return needed


def _plan_backward(tr: Translation, needed, brk, backend: str, options, pgo: bool, fn):
    """The autograd record of the tensors computed in the function that
    require grad and leave it (``capture.autograd.plan_backward``), or None.
    Its backward graph is compiled like the forward, on the first backward."""
    roots = escaping_roots(tr, needed)
    if not roots:
        return None
    origin = origin_of(fn)

    def compile_backward(graph):
        return _executable(graph, backend, options, pgo, origin + " backward")
    return plan_backward(tr, roots, compile_backward, origin)


def _attach_line(tr: Translation, rb: _Rebuilder, plan, out_index: dict[int, int]) -> None:
    """The line giving the result tensors their autograd record, after the
    graph ran: ``__attach(backward, leaves, saved arrays, results)``.  A saved
    value is an output of the graph, or, when it is an input's value (or was
    written back into one), that input's array itself."""
    results = [rb.tensor(tv) for tv in plan.roots]
    written = {id(tr.tracer.values[id(tv.meta)]): tv for tv in tr.side_effects.tensors.values()}
    saved = []
    for fv in plan.saved:
        tv = tr.input_by_value.get(id(fv)) or written.get(id(fv))
        if tv is not None:
            saved.append(rb.source(tv) + ("._data" if tv.kind == TENSOR else ""))
        else:
            i = out_index[id(fv)]
            rb.used_outputs.add(i)   # its own array (_distinct_outputs)
            saved.append(f"__o[{i}]")
    leaves = [rb.source(v) for v in plan.leaves]
    offsets = f", {plan.offsets!r}" if any(plan.offsets) else ""
    rb.emit(f"__attach(__backward, ({''.join(x + ', ' for x in leaves)}), "
            f"({''.join(x + ', ' for x in saved)}), ({''.join(x + ', ' for x in results)})"
            f"{offsets})")


def _choose_outputs(tr: Translation, needed: list[TensorVariable], saved=()
                    ) -> tuple[list, dict[int, int]]:
    """The graph's outputs: each needed tensor computed by the graph (inputs are
    read from their sources, views remade from their parents), each tensor
    written in place, and each value ``saved`` for the backward that is not an
    input.  Sets them on the graph and drops unused inputs; returns
    (outputs, id(graph Value) -> output position)."""
    graph = tr.tracer.graph
    outputs, out_index = [], {}

    def want(tv: TensorVariable) -> None:
        value = tr.tracer.values[id(tv.meta)]
        if id(value) not in out_index:
            out_index[id(value)] = len(outputs)
            outputs.append(value)

    needed_ids = {id(v) for v in needed}
    for tv in needed:
        if tv.base is not None and tv.source is None and not remade_from_parent(tv, needed_ids) \
                and (tv.base.source is not None or id(tv.base) in needed_ids):
            raise Unsupported("unsupported_object", "handing out a view of an array that capture "
                                                    "cannot remake at run time")
        if tv.source is None and not remade_from_parent(tv, needed_ids):
            want(tv)
    for tv in tr.side_effects.tensors.values():
        want(tv)
    for tv in tr.run_checks:
        want(tv)
    for value in saved:
        if id(value) not in out_index and id(value) not in tr.input_by_value:
            out_index[id(value)] = len(outputs)
            outputs.append(value)
    for value in _unused_checks(graph, outputs):
        out_index[id(value)] = len(outputs)
        outputs.append(value)
    graph.set_outputs(outputs)
    _prune_unused_inputs(tr)
    return outputs, out_index


def _unused_checks(graph, outputs: list) -> list:
    """The results of the nodes that check their data (``_checks_data``: an
    index out of range, a singular matrix) that no output depends on: NumPy
    raises there even when the result is unused (``y = x[i]`` never read), so
    each becomes an output the entry ignores, which keeps the node, and its
    check, from dead-node elimination.  (Nodes with side effects are kept
    anyway.)"""
    live = {id(v) for v in outputs}
    extra = []
    for node in reversed(graph.nodes):
        if any(id(v) in live for v in node.outputs):
            live.update(id(v) for v in node.inputs)
        elif node.outputs and _checks_data(node) and not get_schema(node.op).has("has_side_effect"):
            extra.append(node.outputs[0])
            live.update(id(v) for v in node.outputs)
            live.update(id(v) for v in node.inputs)
    return extra[::-1]


@dataclasses.dataclass
class _Replay:
    """The code of an entry after its graph ran (``_write_replay``)."""
    written: list[str]     # in-place tensor data copied into the inputs (first: views are
                           # remade from the new data)
    lines: list[str]       # containers, attributes, globals and grads: their final state
    end: list[str]         # the return, or at a break the native instruction and the tails
    consts: dict           # constants ``end`` uses besides the pool's (a break's)
    writes_globals: bool   # it writes the called function's globals (``__G``)


# Ops whose kernels check their data and raise (an index, position or label out
# of range): a graph holding one may raise after it started, and the entry then
# runs the call natively (``_assemble_source``), which needs its inputs unwritten.
# Ops whose schema has the trait ``may_raise`` (numpy.linalg's inv, solve,
# cholesky...: a singular matrix) are such ops too (``_checks_data``).
DATA_CHECKED_OPS = frozenset({"take", "take_along_axis", "scatter", "scatter_add",
                              "cross_entropy", "embedding"})


def _checks_data(node) -> bool:
    return node.op in DATA_CHECKED_OPS or get_schema(node.op).has("may_raise")


def _runs_after(value, position: dict[int, int], nodes) -> bool:
    """Does ``value``'s producer come after every node of ``nodes`` in the
    graph's order?  The cpu executable runs the nodes in that order (passes
    keep it: a fused group sits at its root's place, members only move later),
    so such checks have passed before the producer writes a donated input."""
    producer = value.producer
    return producer is not None and all(position[id(n)] < position[id(producer)] for n in nodes)


def _donate_write_backs(tr: Translation, graph, out_index: dict[int, int], rb: _Rebuilder,
                        replay: _Replay) -> tuple[tuple[int, int], ...]:
    """Input donation (``CompileOptions.donate``): the (output index, graph
    input index) pairs of the in-place tensor updates whose new value the
    entry only copies back into the very array the graph read the old value
    from (an optimizer step's parameters).  The executable may compute such a
    value there; its write-back in ``replay.written`` is then skipped when the
    output is that array.  Not offered for an output the result also hands out
    or that updates several tensors (the tensor would share memory with it);
    the guards already make each written array writeable and disjoint from
    every other input (``_mutation_guards``)."""
    writes = [(tv, out_index[id(tr.tracer.values[id(tv.meta)])])
              for tv in tr.side_effects.tensors.values()]   # replay.written's order
    targets: dict[int, int] = {}
    for _, i in writes:
        targets[i] = targets.get(i, 0) + 1
    input_of = {id(tv): k for k, v in enumerate(graph.inputs)
                for tv in (tr.input_by_value.get(id(v)),) if tv is not None}
    position = {id(n): j for j, n in enumerate(graph.nodes)}
    checked = [n for n in graph.nodes if _checks_data(n)]
    donate = {}
    for line, (tv, i) in enumerate(writes):
        k = input_of.get(id(tv))
        if (k is None or targets[i] != 1 or i in rb.used_outputs
                or graph.outputs[i].type != graph.inputs[k].type):
            continue
        if checked and not _runs_after(graph.outputs[i], position, checked):
            continue  # a check may fail after the input was written: the call could not rerun
        donate[i] = k
        target = rb.source(tv) + ("._data" if tv.kind == TENSOR else "")
        replay.written[line] = (f"    if __o[{i}] is not {target}:  # computed in place (donated)\n"
                                f"    " + replay.written[line])
    return tuple(sorted(donate.items()))


def _write_replay(tr: Translation, fn, rb: _Rebuilder, out_index: dict[int, int],
                  result: Variable | None, brk, requested_backend: str | None) -> _Replay:
    """The side effects replayed after the graph, and the entry's end."""
    pool, se = tr.guards, tr.side_effects
    written: list[str] = []
    lines: list[str] = []
    for tv in se.tensors.values():
        i = out_index[id(tr.tracer.values[id(tv.meta)])]
        target = rb.source(tv) + ("._data" if tv.kind == TENSOR else "")
        written.append(f"    __copyto({target}, __o[{i}], casting='same_kind')")
    for tv in se.tensors.values():  # eager's bump_version, once per in-place write
        if tv.kind == TENSOR:
            version = rb.source(tv) + "._version"
            written.append(f"    if {version} is not None: {version}.value += "
                           f"{se.tensor_writes[id(tv)]}")
    for wrapper, args in se.cached_calls:   # the cache counts and stores as natively
        lines.append(f"    {rb.expr(wrapper)}({''.join(rb.constant(a) + ', ' for a in args)})")
    for c in se.containers.values():
        lines += c.write_back(rb)
    for obj, name, value in se.attrs.values():
        if value is DELETED:   # (an attribute the call also set first may be new: absent is fine)
            lines.append(f"    __discard_attr({rb.source(obj)}, {name!r})")
        else:
            lines.append(f"    __setattr({rb.source(obj)}, {name!r}, {rb.expr(value)})")
    writes_globals = False
    for f_globals, name, value in se.globals.values():  # (a frame's globals_ref: __G or pooled)
        writes_globals |= f_globals is fn.__globals__
        ref = FRAME_GLOBALS if f_globals is fn.__globals__ else pool.const(f_globals)
        if value is DELETED:   # (a global the call also set first may be new)
            lines.append(f"    {ref}.pop({name!r}, None)")
        else:
            lines.append(f"    {ref}[{name!r}] = {rb.expr(value)}")
    for t, value in se.grads.values():  # validated at trace time, as Tensor.grad's setter does
        lines.append(f"    {rb.source(t)}._grad = {rb.expr(value)}")
    for cell in se.cells.values():   # the frame's real cells it assigned (resume.py)
        lines.append(f"    {rb.cell(cell)}.cell_contents = {rb.expr(cell.value)}")
    if brk is not None:
        end, consts = break_lines(rb, brk, fn, requested_backend)
    else:
        end, consts = [f"    return {rb.expr(result)}"], {}
    return _Replay(written, lines, end, consts, writes_globals)


def _assemble_source(tr: Translation, fn, rb: _Rebuilder, exe, outputs, replay: _Replay,
                     brk, donates: bool = False) -> tuple[str, dict[int, int]]:
    """The entry's source, and which of its lines are at which user line (a
    break's native instruction and tails are at the break's line).  ``donates``:
    the executable computes some outputs into their inputs' memory."""
    pool = tr.guards
    graph = tr.tracer.graph
    extract = []
    if exe is not None:
        for v in graph.inputs:
            tv = tr.input_by_value.get(id(v))
            if tv is None and id(v) in tr.scalar_input_by_value:
                # a Python scalar passed as a 0-d array (variables/scalars.py)
                source, dtype = tr.scalar_input_by_value[id(v)]
                rb.frame_reads |= source.frame_reads()
                extract.append(f"{pool.const(np.asarray)}({source.expr()}, {pool.const(dtype)})")
                continue
            if tv is None:   # a random draw (Tracer.draw)
                extract.append(f"__r[{tr.tracer.draw_index(v)}]")
                continue
            extract.append(rb.source(tv) + ("._data" if tv.kind == TENSOR else ""))

    params, call = signature_source(fn.__code__, fn, pool)
    body = _guard_block(pool)
    body += _warning_check_lines(tr, rb, call)
    if exe is not None and donates:
        # While NumPy raises on floating-point errors, any op of the graph may raise
        # (under its own error state: a `with np.errstate(...)` block in the graph)
        # after a donated input was written, and the call could not rerun natively
        # on its inputs: it runs natively at once (docs/capture.md, "Floating-point errors").
        body += [f"    if __fp_raise({graph.errstates()!r}):",
                 f"        return __fn({call})"]
    body += _scalar_check_lines(tr, rb, call)
    draws, give_back = _draw_lines(tr, rb, exe is not None)
    body += rb.source_lines()           # every source is read before anything is replayed
    body += draws
    if exe is not None:
        # A graph that raises at run time (an index out of range in a gather: its data,
        # not its shapes, which the guards fixed) has changed nothing yet: the call runs
        # natively instead, which raises the plain function's exception after its side
        # effects, or gives its result (the random draws are given back first).
        run = f"__run(({''.join(e + ', ' for e in extract)}))"
        if _strict_fp(tr):
            # a NumPy floating-point warning of an op after a warning the entry issues
            # after the graph would come first: such errors raise, and the plain
            # function runs (``_warning_order``)
            body += ["    try:",
                     "        __st = __fp_strict()",
                     "        try:",
                     f"            __o = {run}",
                     "        finally:",
                     "            __fp_reset(__st)"]
        else:
            body += ["    try:", f"        __o = {run}"]
        body += ["    except __Exception as __e:",
                 "        __graph_raised(__fn, __e)"]
        body += give_back
        body.append(f"        return __fn({call})")
        for check in tr.run_checks:
            # a case the plain function warns about (NumPy's "Mean of empty slice"), known
            # only from the data: nothing is written yet, the call runs natively
            body.append(f"    if __o[{rb.out_index[id(tr.tracer.values[id(check.meta)])]}]:")
            body += give_back
            body.append(f"        return __fn({call})")
        body += _distinct_outputs(outputs, rb.used_outputs)
        body += _outputs_not_inputs(graph, outputs, rb.used_outputs)
    body += _warning_lines(tr, fn, rb)
    body += replay.written
    body += rb.prelude
    body += replay.lines
    before_end = len(body)
    body += replay.end
    head = [f"def __entry(__fn, {params}):" if params else "def __entry(__fn):"]
    head += _frame_lines(pool.frame_reads() | rb.frame_reads
                         | (frozenset({FRAME_GLOBALS}) if replay.writes_globals else frozenset()))
    at = {}   # source line -> user line
    if brk is not None and brk.instr.lineno is not None:
        first = "\n".join(head + body[:before_end]).count("\n") + 2   # (an item may span lines)
        count = "\n".join(replay.end).count("\n") + 1
        at = {first + i: brk.instr.lineno for i in range(count)}
    return "\n".join(head + body) + "\n", at


def _draw_lines(tr: Translation, rb: _Rebuilder, save: bool) -> tuple[list[str], list[str]]:
    """The entry's random draws (``Tracer.draws``: all of them, used or not, in
    program order, as the plain function draws them) after the generators it
    makes itself (``Translation.made_generators``), and, with ``save`` (there
    is a graph), the lines that give the draws back when the call runs
    natively instead: the states of frame's generator and of each NumPy
    generator drawn from are saved first.  Saving an MT19937's state costs
    ~50 us (NumPy's legacy RandomState: ``np.random.rand``), so it is saved
    only where the graph may raise: it checks data (``_checks_data``) or has
    run checks, or NumPy raises on floating-point errors now (``__fp_raises``);
    any other error of such a graph is not expected, and then the draws
    cannot be given back (``numpy_random.restore_generator`` raises).
    Frame's draws are ``__draws`` of their specs; a NumPy generator's is the
    call of its method (``numpy_random.NumpyDraw``) on the object, as the
    plain function makes it."""
    lines = []
    for var in tr.made_generators:
        fn, args, kwargs = var.made
        items = [rb.constant(a) for a in args] + [f"{k}={rb.constant(v)}" for k, v in kwargs.items()]
        lines.append(f"    {rb.named(var)} = {rb.const(fn)}({', '.join(items)})")
    specs = [spec for spec, _ in tr.tracer.draws]
    if not specs:
        return lines, []
    states: dict[str, str] = {}   # a NumPy generator read through a source -> its saved state
    items, frames = [], []
    for spec in specs:
        if isinstance(spec, tuple):   # frame's (frame.functions.random.host_draw)
            frames.append(spec)
            continue
        if frames:
            items.append(f"*__draws({tuple(frames)!r})")
            frames = []
        items.append(spec.call_source(rb))
        if spec.owner.made is None:   # (one the entry makes is new: nothing to give back)
            owner = spec.owner.reconstruct(rb)
            states.setdefault(owner, f"__ns{len(states)}")
    if not items:
        draw = f"    __r = __draws({tuple(frames)!r})"
    else:
        if frames:
            items.append(f"*__draws({tuple(frames)!r})")
        draw = f"    __r = ({', '.join(items)},)"
    give_back = []
    if save:
        if any(isinstance(spec, tuple) for spec in specs):
            lines.append("    __rs = __rng_state()")
            give_back.append("        __rng_restore(__rs)")
        if states:
            graph = tr.tracer.graph
            if tr.run_checks or any(_checks_data(n) for n in graph.nodes):
                lines.append("    __may_raise = True")
            else:
                lines.append(f"    __may_raise = __fp_raises({graph.errstates()!r})")
        for owner, state in states.items():
            lines.append(f"    {state} = __np_state({owner}, __may_raise)")
            give_back.append(f"        __np_restore({owner}, {state})")
    return lines + [draw], give_back


def _scalar_check_lines(tr: Translation, rb: _Rebuilder, call: str) -> list[str]:
    """The Python scalars the trace computed by operations that raise for some
    values (``t = 1.0 / s``, ``math.log(s)``; ``Translation.scalar_checks``),
    evaluated before anything is drawn, run or written, used or not: when one
    raises, the plain function runs and raises it where the user's code does."""
    if not tr.scalar_checks:
        return []
    lines = ["    try:"]
    for var in tr.scalar_checks:
        rb.frame_reads |= var.source.frame_reads()
        lines.append(f"        {var.source.expr()}")
    return lines + ["    except __Exception:", f"        return __fn({call})"]


def _warning_lines(tr: Translation, fn, rb: _Rebuilder) -> list[str]:
    """The warnings the plain function gives (``SideEffects.warnings``), as
    ``warnings.warn`` issues them from the frame its stacklevel names: its
    file, line, module name and ``__warningregistry__`` (so the filters'
    "once", "default" and "module" actions see the same registry).  No
    ``module_globals``: ``warn`` passes none either (with them
    ``warn_explicit`` would read the module's source through its loader at
    every call)."""
    lines = []
    for w in tr.side_effects.warnings:
        if w.f_globals is fn.__globals__:
            g = FRAME_GLOBALS
            rb.frame_reads |= frozenset({FRAME_GLOBALS})
        else:
            g = rb.const(w.f_globals)
        lines.append(f"    {rb.const(warnings.warn_explicit)}({w.message!r}, "
                     f"{rb.const(w.category)}, {w.filename!r}, {w.lineno!r}, "
                     f"{g}.get('__name__', '<string>'), "
                     f"{g}.setdefault('__warningregistry__', {{}}))")
    return lines


def _warning_check_lines(tr: Translation, rb: _Rebuilder, call: str) -> list[str]:
    """Before anything else: when a filter in force would make one of the
    warnings raise (``WarningCheck``), the plain function runs, which raises
    it where the user's code does, after what comes before it and before
    what comes after."""
    if not tr.side_effects.warnings:
        return []
    check = WarningCheck([(w.category, w.message, w.lineno, w.f_globals)
                          for w in tr.side_effects.warnings])
    return [f"    if {rb.const(check)}.raises():", f"        return __fn({call})"]


# ops that never give a NumPy floating-point warning: they move, select or compare values
# (NaN and infinities included: NumPy's comparison and min/max loops clear the invalid flag),
# never compute new ones (every other op may, under the caller's error state); with the
# shape ops (trait ``shape_op``)
_QUIET_OPS = frozenset({"constant", "copy", "broadcast", "full", "take", "take_along_axis",
                        "where", "clip", "maximum", "minimum", "equal", "not_equal", "less",
                        "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
                        "logical_not", "signbit"})
_CATEGORIES = ("divide", "over", "under", "invalid")


def _may_warn(node) -> bool:
    """Might NumPy give a floating-point warning running ``node``?"""
    if node.op in _QUIET_OPS:
        return False
    schema = lookup_op(node.op)
    if schema is not None and schema.has("shape_op"):
        return False
    if node.errstate is not None:
        modes = dict(node.errstate)
        if all(modes.get(c) == "ignore" for c in _CATEGORIES):
            return False
    return True


def _warning_order(tr: Translation) -> None:
    """The entry issues the trace's warnings after its graph ran: exact when
    no op traced after a warning may give a NumPy floating-point warning
    (which the plain function would give after it).  When some may, the
    graph runs with those errors raising (``_strict_fp``) and the plain
    function runs when one happens; an op whose own ``with np.errstate``
    block asks to warn (or call, print, log) would not raise there: the
    translation then stops before the first such warning's call (its
    ``site``: a graph break, or the call run natively)."""
    nodes = tr.tracer.graph.nodes
    for w in tr.side_effects.warnings:
        if any(_may_warn(n) and any(mode not in ("ignore", "raise") for _, mode in n.errstate)
               for n in nodes[w.nodes:] if n.errstate is not None):
            raise w.site
    if reset_state is None and _strict_fp(tr):   # (another NumPy: no strict state to set)
        raise tr.side_effects.warnings[0].site


def _strict_fp(tr: Translation) -> bool:
    """Must the graph run with NumPy's floating-point errors raising
    (``fp_errors.strict_state``): does an op that may warn follow a warning?"""
    nodes = tr.tracer.graph.nodes
    return any(_may_warn(n) for w in tr.side_effects.warnings[:1] for n in nodes[w.nodes:])


def entry_helpers(run) -> dict:
    """The names a graph entry's code uses besides its constants (``__k<n>``);
    ``run`` is the executable's ``run`` (persist.py rebuilds entries with these)."""
    return {"__MISS": MISS, "__wrap": Tensor._wrap, "__copyto": np.copyto,
            "__disjoint": disjoint, "__run": run, "__draws": host_draws,
            "__rng_state": _rng_state, "__rng_restore": _rng_restore,
            "__np_state": generator_state, "__np_restore": restore_generator,
            "__fp_raises": _fp_raises,
            "__graph_raised": _graph_raised, "__fp_raise": _fp_raise,
            "__fp_strict": strict_state, "__fp_reset": reset_state,
            "__attach": _attach_record, "__discard_attr": _discard_attr}


def _discard_attr(obj, name: str) -> None:
    """The replay of ``del obj.name``: the attribute is absent after the call,
    whether it existed before it or the call set it first (``obj.tmp = v; del
    obj.tmp`` on an object that never had ``tmp``)."""
    try:
        delattr(obj, name)
    except AttributeError:
        pass


def _graph_raised(fn, err: Exception) -> None:
    """A graph raised at run time; the call runs natively.  A data check of the
    kernels (an index or label out of range: the native call raises the plain
    function's error, or NumPy's) is expected, and so is a floating-point error
    NumPy was asked to raise (``np.errstate``, a ``warnings`` filter turning
    its RuntimeWarning into an error); anything else is told."""
    if isinstance(err, (IndexError, ValueError, FloatingPointError, Warning)):
        log.debug("the graph of %s raised %s: %s; the call runs natively",
                  getattr(fn, "__qualname__", fn), type(err).__name__, err)
    else:
        log.warning("the graph of %s raised %s: %s; the call runs natively",
                    getattr(fn, "__qualname__", fn), type(err).__name__, err)
    record.count("graph_run_errors")


_fp_raise_told = False
_graph_states: dict[tuple, GraphErrorStates] = {}


def _fp_raise(states: tuple = (None,)) -> bool:
    """Is NumPy asked to raise on floating-point errors now, for some op of a
    graph whose ops run under the error states ``states`` (``Graph.errstates``:
    None is the caller's state)?  Then an entry whose graph computes into its
    inputs runs natively: counted, and told once per process."""
    global _fp_raise_told
    if not _fp_raises(states):
        return False
    record.count("native_calls_fp_raise")
    if not _fp_raise_told:
        _fp_raise_told = True
        log.warning("NumPy is set to raise on floating-point errors (np.seterr, np.errstate "
                    "or a warnings filter): jitted calls whose graph updates their inputs in "
                    "place run natively while it is (counter native_calls_fp_raise)")
    return True


def _fp_raises(states: tuple = (None,)) -> bool:
    """Would NumPy raise on a floating-point error now, for some op of a graph
    whose ops run under the error states ``states`` (``Graph.errstates``)?
    (``_fp_raise`` without its count and message: an entry that drew from an
    MT19937 saves its state then, ``_draw_lines``.)"""
    if states == (None,):
        return raise_requested()
    checker = _graph_states.get(states)
    if checker is None:
        checker = _graph_states.setdefault(states, GraphErrorStates(states))
    return checker.raise_requested()


def _rng_state():
    """The state of frame's generator before an entry's draws."""
    return generator().bit_generator.state


def _rng_restore(state) -> None:
    """Give the draws back: the call runs natively and draws them itself."""
    generator().bit_generator.state = state


class _EagerExecutable:
    """A graph below ``frame.config.min_graph_ops``: its ops run one by one
    through the eager launch path instead of being compiled."""

    def __init__(self, graph):
        self.graph = graph

    def run(self, inputs):
        env = {id(v): a for v, a in zip(self.graph.inputs, inputs)}
        for node in self.graph.nodes:
            if node.const is not None:
                outs = [node.const]
            elif node.errstate is not None:   # a `with np.errstate(...)` block's op
                with np.errstate(**dict(node.errstate)):
                    outs = run_op(node.op, [env[id(v)] for v in node.inputs], node.attrs)
            else:
                outs = run_op(node.op, [env[id(v)] for v in node.inputs], node.attrs)
            for v, a in zip(node.outputs, outs):
                env[id(v)] = a
        return [env[id(v)] for v in self.graph.outputs]


def runs_eagerly(node_count: int, has_body: bool) -> bool:
    """Is a graph of this many nodes below ``frame.config.min_graph_ops`` (and
    without fused bodies), so that its ops run one by one?"""
    minimum = int(getattr(config, "min_graph_ops", 1))
    return node_count < minimum and not has_body


def origin_of(fn) -> str:
    """``"qualname (file.py:line)"`` of the user's function (a resume function
    carries the user's name and first line): how frame's compile-time messages
    name a graph's source."""
    code = fn.__code__
    return f"{code.co_qualname} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def _executable(graph, backend: str, options, pgo: bool = False, origin: str | None = None):
    if runs_eagerly(len(graph.nodes), any(n.body is not None for n in graph.nodes)):
        return _EagerExecutable(graph)
    # lazy: the compiler (frame.passes, frame.runtime.compile) loads on the first compile
    from frame.runtime.compile import compile as runtime_compile
    return runtime_compile(graph, backend, options, pgo=pgo, origin=origin)


def _distinct_outputs(outputs, used: set[int]) -> list[str]:
    """A backend may return one array for two outputs it found equal (common
    subexpressions): every output the result uses must be its own array, so
    later outputs of the same type are copied when they are the same object."""
    lines, groups = [], {}
    for i, v in enumerate(outputs):
        if i in used:
            groups.setdefault((v.type.dtype, tuple(v.type.shape)), []).append(i)
    for group in groups.values():
        for k, j in enumerate(group[1:], 1):
            same = " or ".join(f"__o[{j}] is __o[{i}]" for i in group[:k])
            lines.append(f"    if {same}:")
            lines.append("        __o = __list(__o)")
            lines.append(f"        __o[{j}] = __o[{j}].copy()")
    return lines


def _outputs_not_inputs(graph, outputs, used: set[int]) -> list[str]:
    """An output that is a graph input is the input array itself (an executable
    passes it through).  The variables rebuilt from it are new arrays, not the
    input (``x.copy()``, ``frame.tensor(t)``: an input that is handed out is
    read from its source instead), so each gets a copy, made before in-place
    updates are written back into the inputs (``y = x.copy(); x += 1``)."""
    inputs = {id(v) for v in graph.inputs}
    passed = [i for i, v in enumerate(outputs) if i in used and id(v) in inputs]
    if not passed:
        return []
    return ["    __o = list(__o)"] + [f"    __o[{i}] = __o[{i}].copy()" for i in passed]


# disjoint's answers for the array objects it last saw: (ids of written, ids of
# arrays) -> (weak references to the arrays, the answer).  An ndarray's memory
# does not move while the object lives (``ndarray.resize``, the one way, changes
# its shape, which the shape guards before this one check), so the same objects
# get the same answer: a training step passes the same parameters (and often the
# same batch arrays) every call, and the sweep cost 19.5 us of the MLP step's
# guards.  Weak references: the cache keeps no array alive, and an id reused by
# a new object is caught by ``ref() is a``.
_DISJOINT_SEEN: dict[tuple, tuple] = {}
_DISJOINT_SEEN_MAX = 256


def disjoint(written: tuple, arrays: tuple) -> bool:
    """Does no array of ``written`` share memory with another array of
    ``arrays`` (``written`` are some of ``arrays``, by identity)?  Memory is
    compared by byte bounds, as ``np.may_share_memory`` does, for all pairs at
    once: the bounds are sorted and swept, O(n log n) rather than a guard per
    pair (a training step writes every parameter: n^2 pairs).  The answer for
    the same array objects as a recent call is remembered."""
    key = (tuple(map(id, written)), tuple(map(id, arrays)))
    seen = _DISJOINT_SEEN.get(key)
    if seen is not None:
        refs, answer = seen
        if all(r() is a for r, a in zip(refs, arrays)):
            return answer
    answer = _sweep_disjoint(written, arrays)
    try:
        refs = tuple(weakref.ref(a) for a in arrays)
    except TypeError:  # (an array type without weak references: not remembered)
        return answer
    if len(_DISJOINT_SEEN) >= _DISJOINT_SEEN_MAX:
        _DISJOINT_SEEN.clear()
    _DISJOINT_SEEN[key] = (refs, answer)
    return answer


def _sweep_disjoint(written: tuple, arrays: tuple) -> bool:
    writes = {id(a) for a in written}
    spans = []
    for a in arrays:
        low, high = _byte_bounds(a)
        if high > low:
            spans.append((low, high, id(a) in writes))
    spans.sort(key=lambda s: s[0])
    end = end_written = -1   # the furthest end of the spans so far (of the written ones)
    for low, high, w in spans:
        if (end if w else end_written) > low:  # an earlier span reaches into this one
            return False
        end = max(end, high)
        if w:
            end_written = max(end_written, high)
    return True


def _mutation_guards(tr: Translation) -> None:
    """What a trace that mutates inputs assumed about aliasing: each tensor it
    writes in place is writeable and shares no memory with another tensor
    input (one ``disjoint`` guard for all of them); each list, dict or object
    it mutates is none of the other inputs of its type (the same object passed
    twice would see both mutations)."""
    g, se = tr.guards, tr.side_effects
    written = list(se.tensors.values())
    for w in written:
        g.writeable(w.array_source(), w.source)
    tensors = list(tr.input_by_value.values())
    tensors += [w for w in written if all(w is not t for t in tensors)]
    if written and len(tensors) > 1:
        sources = ([w.array_source() for w in written], [t.array_source() for t in tensors])
        shown = ", ".join(w.source.text() for w in written)
        arrays = [tr.input_arrays.get(id(v)) for v in tensors]
        if all(a is not None for a in arrays) and not disjoint(
                tuple(tr.input_arrays[id(w)] for w in written), tuple(arrays)):
            # these very arguments alias: the graph's copy-in/write-back model
            # would be wrong, so such calls run natively (under this guard)
            g.disjoint(*sources, shown, holds=False)
            raise Unsupported("side_effect", f"an in-place write into {shown}, which shares "
                                             f"memory with another tensor input")
        g.disjoint(*sources, shown)
    mutated = list(se.containers.values()) + [obj for obj, _, _ in se.attrs.values()]
    others = [v for v in tr.wrapped.values() if v.source is not None and v.is_mutable()]
    for m in mutated:
        for o in others:
            if o is not m and o.python_type() is m.python_type():
                g.not_alias(m.source, o.source)


def _prune_unused_inputs(tr: Translation) -> None:
    graph = tr.tracer.graph
    used = {id(v) for n in graph.nodes for v in n.inputs} | {id(v) for v in graph.outputs}
    graph.inputs = [v for v in graph.inputs if id(v) in used]
    for i, v in enumerate(graph.inputs):
        v.index = i


def build_native_entry(tr: Translation, fn, reason, in_try: bool = False) -> CacheEntry:
    """An entry that runs the original function when its guards hold (the
    trace could not continue past ``reason`` under these guards; ``in_try``:
    it is an exception a try block of the function may catch)."""
    pool = tr.guards
    _defaults_guard(fn, pool)
    namespace = {"__MISS": MISS, **pool.consts}
    guards = list(pool.guards)
    for attempt in range(3):
        try:
            if attempt == 2:
                # the signature cannot be spelled (a parameter name that is not an
                # identifier, or one capture reserves): every call runs natively
                params, call, guards = "*__args, **__kwargs", "*__args, **__kwargs", []
            else:
                params, call = signature_source(fn.__code__, fn, pool)
            if attempt == 1:  # only the guards that compile: more calls run natively
                guards = [g for g in guards if _expression_compiles(g.expr)]
            # the function being called, not the one translated: closures of one code
            # object share the entries (their cells are guarded only if the trace read them)
            body = _guard_block(pool, guards) + [f"    return __fn({call})"]
            lines = [f"def __entry(__fn, {params}):" if params else "def __entry(__fn):"]
            reads = frozenset().union(*(s.frame_reads() for g in guards for s in g.sources))
            lines += _frame_lines(reads) + body
            src = "\n".join(lines) + "\n"
            entry_fn = _compile(src, namespace, fn)
            break
        except Unsupported:
            if attempt == 2:
                raise
    return CacheEntry(entry_fn, guards, src, native=True, reason=reason, in_try=in_try,
                      namespace=namespace)


def _expression_compiles(expr: str) -> bool:
    try:
        compile(f"({expr})", ENTRY_FILENAME, "eval")
    except _COMPILE_ERRORS:
        return False
    return True
