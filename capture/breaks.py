"""Graph breaks: what the entry does after its graph when the frame broke.

``jit.translate`` re-translates a frame that raised ``Unsupported`` up to the
top-frame instruction that raised (a break inside an inlined call is placed at
the caller's CALL), and hands the stopped translator here as a
``BreakPoint``.  ``break_lines`` generates the end of the entry:

* rebuild the live stack values and locals as Python objects (``_Rebuilder``),
* run the breaking instruction natively: a call (user functions through the
  interception, so their tensor work is captured in their own frame), the
  truth test of a conditional jump (both branches resume), ``bool``/``not``,
  an attribute load, ``next()`` of a loop's real iterator, f-string formatting,
* return ``Tail(backend, resume_fn, args)`` for each continuation: the resume
  function (``resume.py``) continues the original code there and is
  intercepted like any jitted function (own guards, cache and graphs).

Breaks are placed only where the state can be rebuilt exactly; anything else
raises ``Unsupported`` and the call runs natively.
"""
from __future__ import annotations

import inspect
import sys
import traceback
import types
import weakref

from .errors import Unsupported
from .resume import (SUSPENDING_FLAGS, Tail, is_resume_stack, live_locals, resume_code,
                     resume_function)
from .variables.base import NULL, NullVariable, Variable
from .variables.callables import MethodVariable, UserFunctionVariable

__all__ = ["BreakPoint", "ACTIONS", "break_lines", "call_intercepted", "can_break_at"]

# instructions an entry can run natively at a break
ACTIONS = frozenset({"CALL", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "TO_BOOL", "UNARY_NOT",
                     "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "LOAD_ATTR", "FOR_ITER",
                     "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE", "COMPARE_OP"})



def can_break_at(code: types.CodeType, instr) -> str | None:
    """Why no break can be placed before ``instr`` (None: it can)."""
    if code.co_flags & SUSPENDING_FLAGS:
        return "generators and coroutines run natively"
    if instr.opname not in ACTIONS:
        return f"{instr.opname} cannot run natively in an entry"
    if instr.part != 0:
        return f"{instr.opname} is inside an instruction group"
    if instr.handler is not None:
        return "inside a try block"
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


def break_lines(rb, brk: BreakPoint, fn, backend) -> tuple[list[str], dict]:
    """Lines ending the entry (the native instruction and the tails) and the
    constants they use."""
    instr, code = brk.instr, brk.code
    instrs = brk.tx.instructions
    stack = brk.stack
    consts: dict = {"__Tail": Tail, "__icall": call_intercepted, "__SENTINEL": _SENTINEL}
    e = rb.expr
    op = instr.opname
    lines: list[str] = []

    def nxt(k: int = 1):
        if instr.index + k >= len(instrs):
            raise Unsupported("unsupported_opcode", "no instruction follows the break")
        return instrs[instr.index + k]

    def tail(target, items, indent="    ") -> str:
        return indent + "return " + _tail_expr(rb, brk, fn, backend, target, items, consts)

    if op == "CALL":
        n = instr.argval if isinstance(instr.argval, int) else instr.arg
        kw = tuple(instr.kw_names or ())
        items = stack[len(stack) - n - 2:]
        base = stack[:len(stack) - n - 2]
        a, b, args = items[0], items[1], list(items[2:])
        if isinstance(a, NullVariable):
            callee = b
        elif isinstance(b, NullVariable):
            callee = a
        else:
            callee, args = a, [b, *args]
        pos = args[:len(args) - len(kw)]
        kwv = dict(zip(kw, args[len(args) - len(kw):]))
        lines.append(f"    __r = {_call_expr(rb, callee, pos, kwv, backend, consts)}")
        lines.append(tail(nxt(), base + [_Raw("__r")]))
    elif op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"):
        base = stack[:-1]
        jump_if = op == "POP_JUMP_IF_TRUE"
        lines.append(f"    if {e(stack[-1])}:")
        lines.append(tail(instrs[instr.target] if jump_if else nxt(), base, "        "))
        lines.append(tail(nxt() if jump_if else instrs[instr.target], base))
    elif op in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        base = stack[:-1]
        lines.append(f"    __r = {e(stack[-1])}")
        jump_if = op == "JUMP_IF_TRUE_OR_POP"
        lines.append(f"    if {'' if jump_if else 'not '}__r:")
        lines.append(tail(instrs[instr.target], base + [_Raw("__r")], "        "))
        lines.append(tail(nxt(), base))
    elif op in ("TO_BOOL", "UNARY_NOT"):
        lines.append(f"    __r = {'bool' if op == 'TO_BOOL' else 'not '}({e(stack[-1])})")
        lines.append(tail(nxt(), stack[:-1] + [_Raw("__r")]))
    elif op == "COMPARE_OP":  # 3.13's bool(a < b) of tensors
        if instr.argval not in ("<", "<=", "==", "!=", ">", ">="):
            raise Unsupported("unsupported_opcode", f"comparison {instr.argval!r}")
        cmp = f"({e(stack[-2])} {instr.argval} {e(stack[-1])})"
        lines.append(f"    __r = {'bool' + cmp if instr.to_bool else cmp}")
        lines.append(tail(nxt(), stack[:-2] + [_Raw("__r")]))
    elif op == "CONVERT_VALUE":
        lines.append(f"    __r = {instr.argval}({e(stack[-1])})")
        lines.append(tail(nxt(), stack[:-1] + [_Raw("__r")]))
    elif op == "FORMAT_SIMPLE":
        lines.append(f"    __r = __format({e(stack[-1])}, '')")
        lines.append(tail(nxt(), stack[:-1] + [_Raw("__r")]))
    elif op == "FORMAT_WITH_SPEC":
        lines.append(f"    __r = __format({e(stack[-2])}, {e(stack[-1])})")
        lines.append(tail(nxt(), stack[:-2] + [_Raw("__r")]))
    elif op == "LOAD_ATTR":
        lines.append(f"    __r = {e(stack[-1])}.{instr.argval}")
        base = stack[:-1]
        if instr.method:
            pushed = [NULL, _Raw("__r")] if instr.null_first else [_Raw("__r"), NULL]
        else:
            pushed = [_Raw("__r")]
        lines.append(tail(nxt(), base + pushed))
    elif op == "FOR_ITER":
        it = stack[-1]
        base = stack[:-1]
        lines.append(f"    __r = __next({e(it)}, __SENTINEL)")
        lines.append("    if __r is __SENTINEL:")
        lines.append(tail(instrs[instr.target], base, "        "))
        store = nxt()
        after = instrs[store.index + 1] if store.index + 1 < len(instrs) else None
        if (store.opname == "STORE_FAST" and after is not None and after.part == 0
                and store.argval not in live_locals(code, after.index)):
            # the loop variable is never read: do not hand it over (nor guard on it)
            lines.append(tail(after, base + [it]))
        else:
            lines.append(tail(store, base + [it, _Raw("__r")]))
    else:  # pragma: no cover - can_break_at keeps this from happening
        raise Unsupported("unsupported_opcode", f"{op} cannot run natively in an entry")
    return lines, consts


_SENTINEL = object()


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
    from .variables.callables import BuiltinVariable
    from .variables.objects import ClassVariable
    fn = getattr(callee, "fn", None)
    if (isinstance(callee, BuiltinVariable) and getattr(fn, "__name__", "") in _FRAME_DEPENDENT) \
            or (isinstance(callee, ClassVariable) and callee.cls is super) \
            or any(fn is f for f in _FRAME_INSPECTING):
        raise Unsupported("unsupported_call", f"{callee!r} depends on the calling frame")
    args = [rb.expr(a) for a in pos]
    kw = [f"{k!r}: {rb.expr(v)}" for k, v in kwargs.items()]
    target = None
    if isinstance(callee, UserFunctionVariable) and callee.closure is None \
            and callee.made_defaults is None and _intercepted(callee.fn):
        target = rb.expr(callee)
    elif isinstance(callee, MethodVariable) and isinstance(callee.func, UserFunctionVariable) \
            and callee.func.closure is None and callee.func.made_defaults is None \
            and _intercepted(callee.func.fn):
        target = rb.expr(callee.func)
        args = [rb.expr(callee.self_var), *args]
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
    if target.handler is not None:
        raise Unsupported("unsupported_opcode", "the continuation is inside a try block")
    layout = tuple(not isinstance(v, NullVariable) for v in items)
    cells = brk.cell_values()
    live = live_locals(code, target.index)
    names = tuple(sorted(n for n in brk.locals if n in live and n not in code.co_cellvars))
    names += tuple(sorted(cells))
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
    args = [i.text if isinstance(i, _Raw) else rb.expr(i) for i in items
            if not isinstance(i, NullVariable)]
    args += [rb.expr(brk.locals[n]) if n not in cells else rb.expr(cells[n]) for n in names]
    # the globals and closure of the function this call runs (one entry serves
    # every function of the code object)
    rf = f"__resume_fn({rb.pool.const(rcode)}, __fn)"
    consts["__resume_fn"] = resume_function
    return f"__Tail({backend!r}, {rf}, ({''.join(a + ', ' for a in args)}))"


_SKIP: "weakref.WeakKeyDictionary[types.CodeType, bool]" = weakref.WeakKeyDictionary()


def _skipped(code: types.CodeType) -> bool:
    """Library code (the standard library, installed packages, frame and
    capture themselves) is not intercepted: only the user's functions are."""
    found = _SKIP.get(code)
    if found is None:
        import os
        import sysconfig
        roots = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        here = os.path.dirname(os.path.abspath(__file__))
        roots |= {here, os.path.join(os.path.dirname(here), "frame")}
        path = os.path.abspath(code.co_filename)
        found = _SKIP[code] = code.co_filename.startswith("<") or any(
            path.startswith(os.path.join(r, "")) for r in roots)
    return found


def _intercepted(f) -> bool:
    """Does a call of ``f`` (guarded by identity) at a break run as its own
    intercepted frame?  Only the user's plain functions do; library code (such
    as ``collections.namedtuple``, ``inspect.currentframe``, ``logging``) is
    called by the entry itself, so that what it finds in its caller's frame
    is the user's function (``codegen.entry_function``)."""
    return type(f) is types.FunctionType and not f.__code__.co_flags & SUSPENDING_FLAGS \
        and not getattr(f, "__frame_jit__", False) and not _skipped(f.__code__)


def call_intercepted(backend, f, args, kwargs):
    """Call the user's function ``f`` from an entry at a break: it runs as its
    own intercepted (jitted) frame."""
    from .jit import run_intercepted
    return run_intercepted(f, backend, args, kwargs)

