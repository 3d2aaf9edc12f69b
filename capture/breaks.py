"""Graph breaks: what the entry does after its graph when the frame broke.

``jit.translate`` re-translates a frame that raised ``Unsupported`` up to the
top-frame instruction that raised (a break inside an inlined call is placed at
the caller's CALL), and hands the stopped translator here as a
``BreakPoint``.  ``break_lines`` generates the end of the entry:

* rebuild the live stack values and locals as Python objects (``_Rebuilder``),
* run the breaking instruction natively,
* return ``Tail(backend, resume_fn, args)`` for each continuation: the resume
  function (``resume.py``) continues the original code there and is
  intercepted like any jitted function (own guards, cache and graphs).

What an instruction does at a break is declared with its handler, in one
place (``handlers.handler(..., on_break=...)``, the table ``ON_BREAK``): a
function of a ``BreakEnd`` and the instruction that takes the instruction's
operands off the stack (``operands``), runs it natively (``run``, ``call``)
and names its continuations (``resume``).  This module has the generic
machinery only; an instruction without a declaration gets no break.

Breaks are placed only where the state can be rebuilt exactly; anything else
raises ``Unsupported`` and the call runs natively.
"""
from __future__ import annotations

import inspect
import operator
import os
import sys
import traceback
import types
import weakref

from .errors import Unsupported
from .handlers import ON_BREAK
from .instructions import inside_handler
from .library import library_dirs
from .resume import (SUSPENDING_FLAGS, Tail, is_resume_stack, live_locals, resume_code,
                     resume_function, resume_offset, stack_shown)
from .sources import user_text
from .variables.base import NullVariable, Variable
from .variables.callables import BuiltinVariable

__all__ = ["BreakEnd", "BreakPoint", "break_lines", "call_intercepted", "can_break_at",
           "install_run_intercepted"]


def can_break_at(code: types.CodeType, instr) -> str | None:
    """Why no break can be placed before ``instr`` (None: it can)."""
    if code.co_flags & SUSPENDING_FLAGS:
        return "generators and coroutines run natively"
    if ON_BREAK.get(instr.opname) is None:  # the handler declares no break
        return f"{instr.opname} cannot run natively in an entry"
    if instr.part != 0:
        return f"{instr.opname} is inside an instruction group"
    if inside_handler(code, instr):
        return "inside an except, finally or with-exit block (the exception it handles is the frame's)"
    return None


class BreakPoint:
    """The top frame stopped before ``instr``: its stack, locals and cells."""

    def __init__(self, tx, instr, reason):
        self.tx = tx
        self.instr = instr
        self.reason = reason          # BreakReason
        self.stack = list(tx.stack)
        self.locals = dict(tx.locals)
        self.code = tx.code

    def cell_values(self) -> dict[str, Variable]:
        """The values the trace gave the frame's cell variables (the ones it
        read or assigned)."""
        out = {}
        for name in self.code.co_cellvars:
            cell = self.tx.cells.get(name)
            if cell is not None and cell.value is not None:
                out[name] = cell.value
        return out

    def values(self) -> list[Variable]:
        """Every Variable the continuation may need (for graph outputs)."""
        vals = [v for v in self.stack if not isinstance(v, NullVariable)]
        vals += list(self.locals.values())
        vals += list(self.cell_values().values())
        return vals


class _Raw:
    """A stack value that is a Python expression of the entry (a result)."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class _Lasti(_Raw):
    """The offset an exception handler with ``lasti`` gets below the exception
    (``RERAISE`` puts the frame back there, so the exception table finds the
    handlers around the raising instruction): the break instruction's, in code
    units of the resume code (``_tail_expr`` fills it in)."""
    __slots__ = ()

    def __init__(self):
        super().__init__("")


class BreakEnd:
    """The end of an entry at a break, as the instruction's break declaration
    (``handlers.ON_BREAK``) writes it: ``operands`` takes what the instruction
    consumes off the stack, ``run`` (once) or ``compute`` evaluates it
    natively, and ``resume`` names each continuation (conditional ones with
    ``when``, then one unconditional).  The continuations get the stack below
    the operands plus what they push."""

    def __init__(self, rb, brk: BreakPoint, fn, backend):
        self.rb = rb
        self.brk = brk
        self.fn = fn
        self.backend = backend
        self.stack = list(brk.stack)     # below the operands taken so far
        self.lines: list[str] = []
        self.consts: dict = {"__Tail": Tail, "__icall": call_intercepted, "__SENTINEL": _SENTINEL,
                             "__enter_with": enter_with, "__setitem": operator.setitem}
        self.ran = False
        self.ended = False               # an unconditional continuation was written

    # -- the instructions around the break ----------------------------------------------------
    def following(self, instr):
        """The instruction after ``instr`` (None at the end of the code)."""
        instrs = self.brk.tx.instructions
        return instrs[instr.index + 1] if instr.index + 1 < len(instrs) else None

    @property
    def next(self):
        """The instruction after the break."""
        found = self.following(self.brk.instr)
        if found is None:
            raise Unsupported("unsupported_opcode", "no instruction follows the break")
        return found

    @property
    def target(self):
        """The jump target of the instruction at the break."""
        return self.brk.tx.instructions[self.brk.instr.target]

    def live_locals(self, instr) -> set[str]:
        """The locals the code may read from ``instr`` on."""
        return live_locals(self.brk.code, instr.index)

    # -- the stack and the native run ---------------------------------------------------------
    def operands(self, n: int) -> list[Variable]:
        """The ``n`` values the instruction consumes (the top of the stack last)."""
        if n > len(self.stack):
            raise Unsupported("capture_error", f"{n} operands on a stack of {len(self.stack)}")
        taken = self.stack[len(self.stack) - n:]
        del self.stack[len(self.stack) - n:]
        return taken

    def expr(self, v) -> str:
        """A Python expression of the entry for ``v`` (a Variable, or the value of ``run``)."""
        return v.text if isinstance(v, _Raw) else self.rb.expr(v)

    def call(self, callee: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> str:
        """An expression calling ``callee`` natively (the user's functions as their
        own intercepted frames); refused for callees that depend on the calling frame."""
        return _call_expr(self.rb, callee, args, kwargs, self.backend, self.consts)

    def run(self, expr: str) -> _Raw:
        """Evaluate ``expr`` in the entry; its value can be pushed by the continuations.
        Besides the expressions of ``expr``/``call``, it may name builtins as
        ``__<name>`` (``__bool``, ``__next``: the user's globals and parameters
        cannot shadow those), ``__SENTINEL`` and ``__setitem``."""
        if self.ran:
            raise Unsupported("capture_error", "a break declaration ran two expressions")
        self.ran = True
        self.lines.append(f"    __r = {expr}")
        return _Raw("__r")

    def item(self, value: _Raw, i: int) -> _Raw:
        """Item ``i`` of the value of ``run`` (an instruction pushing two values)."""
        return _Raw(f"{value.text}[{i}]")

    def compute(self, n: int, template: str) -> None:
        """The common declaration: take ``n`` operands, evaluate ``template``
        (``str.format``-ed with their expressions) and continue at the next
        instruction with its value on top."""
        self.resume(self.next, [self.run(template.format(*map(self.expr, self.operands(n))))])

    # -- continuations ------------------------------------------------------------------------
    def resume(self, target, pushed=(), *, when: str | None = None) -> None:
        """Continue at ``target`` with the stack below the operands and ``pushed``
        (Variables, ``NULL``, the value of ``run``), only if the entry's
        expression ``when`` is true when given."""
        if self.ended:
            raise Unsupported("capture_error", "a continuation after the unconditional one")
        tail = "return " + _tail_expr(self.rb, self.brk, self.fn, self.backend, target,
                                      self.stack + list(pushed), self.consts)
        if when is None:
            self.lines.append("    " + tail)
            self.ended = True
        else:
            self.lines.append(f"    if {when}:")
            self.lines.append("        " + tail)

    def finish(self) -> list[str]:
        if not self.ended:
            raise Unsupported("capture_error", "the break declaration has no unconditional continuation")
        return self.handled(self.lines)

    def handled(self, lines: list[str]) -> list[str]:
        """Inside a ``try`` or ``with`` block, what the native instruction (or
        the truth test of its result) raises goes to the block's handler, as in
        the plain frame: the entry catches it and continues in a resume
        function at the handler, with the stack cut to the handler's depth,
        the offset when it asks for one, and the exception."""
        h = self.brk.instr.handler
        if h is None:
            return lines
        target = self.brk.tx.instructions[h.target]
        if h.depth > len(self.brk.stack):
            raise Unsupported("capture_error", "an exception handler deeper than the stack")
        pushed = ([_Lasti()] if h.lasti else []) + [_Raw("__e")]
        try:
            tail = _tail_expr(self.rb, self.brk, self.fn, self.backend, target,
                              self.brk.stack[:h.depth] + pushed, self.consts)
        except Unsupported as e:
            raise Unsupported(e.kind, f"{e.reason} (live in the exception handler around the "
                                      f"break)") from e
        body = ["    try:"] + ["    " + line.replace("\n", "\n    ") for line in lines]
        body += ["    except BaseException as __e:", "        return " + tail]
        return body


def break_lines(rb, brk: BreakPoint, fn, backend) -> tuple[list[str], dict]:
    """Lines ending the entry (the native instruction and the tails) and the
    constants they use, as the instruction's break declaration writes them."""
    declared = ON_BREAK.get(brk.instr.opname)
    if declared is None:  # pragma: no cover - can_break_at keeps this from happening
        raise Unsupported("unsupported_opcode", f"{brk.instr.opname} cannot run natively in an entry")
    end = BreakEnd(rb, brk, fn, backend)
    declared(end, brk.instr)
    return end.finish(), end.consts


_SENTINEL = object()


def enter_with(mgr):
    """``BEFORE_WITH``, run natively at a break: (the bound ``__exit__``, what
    ``__enter__`` returned), both looked up on the type, ``__exit__`` first."""
    cls = type(mgr)
    message = f"{cls.__name__!r} object does not support the context manager protocol"
    enter = getattr(cls, "__enter__", _SENTINEL)
    if enter is _SENTINEL:
        raise TypeError(message)
    exit_ = getattr(cls, "__exit__", _SENTINEL)
    if exit_ is _SENTINEL:
        raise TypeError(message + " (missed __exit__ method)")
    bound_exit = exit_.__get__(mgr, cls)
    return bound_exit, enter.__get__(mgr, cls)()


# builtins whose result depends on the calling frame's locals (or more): the
# entry runs with the function's globals, but its locals are not the function's
_FRAME_DEPENDENT = frozenset({"locals", "vars", "dir", "eval", "exec", "super",
                              "breakpoint", "__import__"})


# library functions that hand out the calling frame or the stack: at a break
# they would see the entry's frame (its locals, its callers in capture), so a
# call of one is run by the original function, natively
_FRAME_INSPECTING = (inspect.currentframe, inspect.stack, sys._getframe, traceback.extract_stack,
                     traceback.format_stack, traceback.print_stack, traceback.walk_stack,
                     *filter(None, [getattr(sys, "_getframemodulename", None)]))


def _call_expr(rb, callee: Variable, pos, kwargs, backend, consts) -> str:
    fn = getattr(callee, "fn", None)
    if (isinstance(callee, BuiltinVariable) and getattr(fn, "__name__", "") in _FRAME_DEPENDENT) \
            or (callee.is_constant() and callee.as_constant() is super) \
            or any(fn is f for f in _FRAME_INSPECTING):
        raise Unsupported("unsupported_call", f"{callee!r} depends on the calling frame")
    args = [rb.expr(a) for a in pos]
    kw = [f"{k!r}: {rb.expr(v)}" for k, v in kwargs.items()]
    target = None
    called = callee.user_function()
    if called is not None and _intercepted(called[0].fn):
        func, self_var = called
        target = rb.expr(func)
        if self_var is not None:
            args = [rb.expr(self_var), *args]
    if target is not None:
        # a user function runs as its own intercepted frame
        return (f"__icall({backend!r}, {target}, ({''.join(a + ', ' for a in args)}), "
                f"{{{', '.join(kw)}}})")
    kw_call = [f"{k}={rb.expr(v)}" if k.isidentifier() else None for k, v in kwargs.items()]
    if any(k is None for k in kw_call):
        raise Unsupported("unsupported_object", "a keyword argument that is not an identifier")
    return f"{rb.expr(callee)}({', '.join(args + kw_call)})"


def _tail_expr(rb, brk: BreakPoint, fn, backend, target, items, consts) -> str:
    """``__Tail(backend, resume_fn, (stack..., locals...))`` continuing at ``target``."""
    code = brk.code
    if target.part != 0:
        raise Unsupported("unsupported_opcode", "the continuation starts inside an instruction group")
    # (a continuation inside a try or with block is fine: the resume function
    # keeps the exception table, and the stack below is the handler's)
    layout = tuple(not isinstance(v, NullVariable) for v in items)
    live = live_locals(code, target.index)
    names = tuple(sorted(n for n in brk.locals if n in live and n not in code.co_cellvars))
    # every cell variable, as a real cell: the one a function made before the
    # break closes over (resume.py)
    cells = tuple(sorted(code.co_cellvars))
    names += cells
    if not all(n.isidentifier() for n in names):
        raise Unsupported("unsupported_object", "a local whose name is not an identifier")
    stack_names = [f"_resume_stack{i}_" for i in range(sum(layout))]
    user_names = {n for n in code.co_varnames + code.co_cellvars + code.co_freevars
                  if not is_resume_stack(n)}
    if set(stack_names) & user_names:
        raise Unsupported("unsupported_object", "a local named like a resume stack slot")
    try:
        rcode = resume_code(code, target.offset, layout, names, stack_names)
    except ValueError as err:
        raise Unsupported("capture_error", f"building the resume function: {err}") from err
    for i in items:
        if isinstance(i, _Lasti):
            i.text = str(resume_offset(rcode, code, brk.instr.offset) // 2)
    args = [i.text if isinstance(i, _Raw) else rb.expr(i) for i in items
            if not isinstance(i, NullVariable)]
    stack_shown(rcode, _stack_descriptions(brk, items, stack_names))
    args += [rb.expr(brk.locals[n]) if n not in cells else rb.cell(brk.tx.cells[n])
             for n in names]
    # the globals and closure of the function this call runs (one entry serves
    # every function of the code object)
    rf = f"__resume_fn({rb.pool.const(rcode)}, __fn)"
    consts["__resume_fn"] = resume_function
    return f"__Tail({backend!r}, {rf}, ({''.join(a + ', ' for a in args)}))"


def _stack_descriptions(brk: BreakPoint, items, stack_names) -> dict[str, str]:
    """How messages name a resume function's stack values: the user's
    variable a value was read from (``lr``, ``self.scale``), else the value
    the code at the break's line computed."""
    line = f"{os.path.basename(brk.code.co_filename)}:{brk.instr.lineno}"
    shown = {}
    values = [i for i in items if not isinstance(i, NullVariable)]
    for name, v in zip(stack_names, values):
        source = None if isinstance(v, _Raw) else v.source
        shown[name] = (user_text(source) if source is not None
                       else f"<a value computed at {line}>")
    return shown


_SKIP: "weakref.WeakKeyDictionary[types.CodeType, bool]" = weakref.WeakKeyDictionary()


def _skipped(code: types.CodeType) -> bool:
    """Library code (the standard library, installed packages, frame and
    capture themselves) is not intercepted: only the user's functions are."""
    found = _SKIP.get(code)
    if found is None:
        found = _SKIP[code] = code.co_filename.startswith("<") or \
            os.path.abspath(code.co_filename).startswith(library_dirs())
    return found


def _intercepted(f) -> bool:
    """Does a call of ``f`` (guarded by identity) at a break run as its own
    intercepted frame?  Only the user's plain functions do; library code (such
    as ``collections.namedtuple``, ``inspect.currentframe``, ``logging``) is
    called by the entry itself, so that what it finds in its caller's frame
    is the user's function (``codegen.entry_function``)."""
    return type(f) is types.FunctionType and not f.__code__.co_flags & SUSPENDING_FLAGS \
        and not getattr(f, "__frame_jit__", False) and not _skipped(f.__code__)


# How an intercepted frame runs: ``jit.run_intercepted(fn, backend, args, kwargs)``.
# jit.py (above this module: it translates, and translation builds breaks) installs it
# when it is imported.
_run_intercepted = None


def install_run_intercepted(run) -> None:
    """Set how ``call_intercepted`` runs a user function as its own jitted frame
    (called once, by capture/jit.py)."""
    global _run_intercepted
    _run_intercepted = run


def call_intercepted(backend, f, args, kwargs):
    """Call the user's function ``f`` from an entry at a break: it runs as its
    own intercepted (jitted) frame."""
    return _run_intercepted(f, backend, args, kwargs)

