"""Resume functions: the rest of a frame after a graph break.

A resume function for (code, offset) is the original code object with a new
prologue, built with the ``bytecode`` package::

    COPY_FREE_VARS n                      # free variables, as the original prologue does
    RESUME 0
    LOAD_FAST _resume_stack0_; PUSH_NULL; ...     # the live CPython stack at ``offset``
    JUMP_FORWARD <label at offset>
    <the whole original instruction list> # loops whose head lies before jump back into it

3.13's two-local instructions (``LOAD_FAST_LOAD_FAST`` and the like) are
written as their two one-local instructions: the parameters renumber the
locals, and the ``bytecode`` package packs an index of 16 into the 4-bit
field (reading another local) and splits a larger one on its own.  The map
from the resume code's instructions to the original's (``canonical``) counts
each split pair as the one original instruction.

Its parameters are the stack values (``_resume_stack<i>_``; NULL slots are pushed,
not passed) followed by the live locals under their own names, so the code
after the label finds them where it expects them, then every cell variable
of the code as a real cell object: the prologue has no ``MAKE_CELL``, so the
slot holds the cell passed (as ``COPY_FREE_VARS`` puts a closure's cells in
theirs).  The functions the frame made before the break (``def``, ``lambda``)
close over those very cells, so a ``nonlocal`` write on either side is seen
by the other, as in the plain frame (``cell_parameters``; ``locals()`` still
shows the contents: the original ``MAKE_CELL`` instructions precede the
continuation in the code).  Codes are cached per (code, offset, stack
layout, live locals).

``live_locals`` is a backward data-flow over the normalised instructions: a
local is live at an instruction when some path from it reads the local before
writing it.  Passing only live locals keeps resume functions from guarding on
(and recompiling for) values the rest of the frame never reads.

``Tail`` is how an entry hands its continuation back: instead of calling the
resume function (one more Python frame per break, unbounded in a loop), it
returns ``Tail(backend, fn, args)`` and the outermost interception runs it
(a trampoline), so a loop with a break costs no recursion.
"""
from __future__ import annotations

import inspect
import threading
import types
import weakref

from .instructions import decode

__all__ = ["Tail", "SUSPENDING_FLAGS", "live_locals", "resume_code", "resume_function", "canonical",
           "resume_offset", "stack_shown", "cell_parameters",
           "is_resume_stack", "original_code"]

# generator, coroutine and async generator code: calling it returns its frame
# as an object that runs later, step by step.  Only the native call makes that
# object, so such code gets no entry (jit.py) and no resume function (breaks.py).
SUSPENDING_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
                    | inspect.CO_ITERABLE_COROUTINE)


class Tail:
    """A continuation returned by an entry: call ``fn(*args)`` intercepted, with
    the requested ``backend``."""
    __slots__ = ("backend", "fn", "args")

    def __init__(self, backend, fn, args):
        self.backend = backend
        self.fn = fn
        self.args = args


_TERMINAL = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP"}
_READS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"}

# per-code caches live as long as their code objects (a dropped function's go with it)
_LIVE_CACHE: "weakref.WeakKeyDictionary[types.CodeType, list[frozenset]]" = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _liveness(code: types.CodeType) -> list[frozenset]:
    cached = _LIVE_CACHE.get(code)
    if cached is not None:
        return cached
    instrs = decode(code).instructions
    n = len(instrs)
    succ: list[list[int]] = []
    for ins in instrs:
        s = []
        if ins.opname not in _TERMINAL and ins.index + 1 < n:
            s.append(ins.index + 1)
        if ins.target is not None:
            s.append(ins.target)
        if ins.handler is not None:
            s.append(ins.handler.target)
        succ.append(s)
    live_in = [frozenset()] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            ins = instrs[i]
            out = frozenset().union(*(live_in[j] for j in succ[i])) if succ[i] else frozenset()
            if ins.opname in _READS:
                new = out | {ins.argval}
            elif ins.opname == "STORE_FAST":
                new = out - {ins.argval}
            else:
                new = out
            if new != live_in[i]:
                live_in[i] = new
                changed = True
    _LIVE_CACHE[code] = live_in
    return live_in


def live_locals(code: types.CodeType, index: int) -> frozenset:
    """Names of the plain locals live before normalised instruction ``index``."""
    return _liveness(code)[index]


# code -> {(offset, layout, local names, stack names): resume code}
_CODES: "weakref.WeakKeyDictionary[types.CodeType, dict[tuple, types.CodeType]]" = \
    weakref.WeakKeyDictionary()


def resume_code(code: types.CodeType, offset: int, layout: tuple[bool, ...],
                local_names: tuple[str, ...], stack_names) -> types.CodeType:
    """The resume code continuing ``code`` at byte ``offset`` (a group start)
    with a stack of ``layout`` (True: a value passed as an argument, False:
    NULL) and ``local_names`` passed after the stack values (named ``stack_names``)."""
    stack_names = tuple(stack_names)
    code, offset = canonical(code, offset)
    key = (offset, layout, local_names, stack_names)
    with _LOCK:
        built = _CODES.get(code)
        if built is None:
            built = _CODES[code] = {}
        found = built.get(key)
        if found is None:
            found = built[key] = _build(code, offset, layout, local_names, stack_names)
    return found


# resume code -> (original code (a weak reference: the resume codes of a code
# object must not keep it alive), {resume code offset: original offset} of the
# instructions copied from the original (not the prologue, not the second half
# of a split two-local instruction))
_ORIGIN: "weakref.WeakKeyDictionary[types.CodeType, tuple[weakref.ref, dict[int, int]]]" = \
    weakref.WeakKeyDictionary()

# 3.13's instructions on two locals (a 4-bit index each) -> their one-local halves
_TWO_LOCALS = {"LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"),
               "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST"),
               "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST")}


def original_code(code: types.CodeType) -> types.CodeType:
    """The user's code object ``code`` continues (``code`` itself unless it is a
    resume code): generated entries take its name, qualified name and file."""
    origin = _ORIGIN.get(code)
    original = origin[0]() if origin is not None else None
    return code if original is None else original


def _starts(code: types.CodeType) -> list[int]:
    """Start offset of each real (abstract) instruction, EXTENDED_ARG folded in."""
    # lazy: bytecode (~20 ms to import) is needed only to build resume functions
    from bytecode import ConcreteBytecode
    starts: list[int] = []
    pos, pending = 0, None
    for ins in ConcreteBytecode.from_code(code):
        if ins.name == "EXTENDED_ARG":
            if pending is None:
                pending = pos
        elif ins.name != "CACHE":
            starts.append(pending if pending is not None else pos)
            pending = None
        pos += ins.size
    return starts


def canonical(code: types.CodeType, offset: int) -> tuple[types.CodeType, int]:
    """The original code and offset a position of a resume code stands for: a
    resume function of a resume function is built from the original code, so
    a loop's continuations are the same few code objects every iteration."""
    original = original_code(code)
    if original is code:
        return code, offset
    mapped = _ORIGIN[code][1].get(offset)
    if mapped is None:
        raise ValueError("a position inside a resume function's prologue or inside a split instruction")
    return original, mapped


def _build(code: types.CodeType, offset: int, layout, local_names, stack_names) -> types.CodeType:
    # lazy: bytecode (~20 ms to import) is needed only to build resume functions
    from bytecode import Bytecode, Instr, Label

    starts = _starts(code)
    try:
        wanted = starts.index(offset)
    except ValueError:
        raise ValueError(f"{code.co_qualname}: no instruction starts at offset {offset}") from None

    # with the original's handler depths: ``to_code`` below runs no flow analysis
    bc = Bytecode.from_code(code, conserve_exception_block_stackdepth=True)
    label = Label()
    body = []
    k = 0
    split = []  # per original instruction: written as two
    for item in bc:
        if isinstance(item, Instr):
            if k == wanted:
                body.append(label)
            k += 1
            halves = _TWO_LOCALS.get(item.name)
            split.append(halves is not None)
            if halves is not None:
                for name, arg in zip(halves, item.arg):
                    body.append(Instr(name, arg, location=item.location))
                continue
        body.append(item)
    if k != len(starts):
        raise ValueError(f"{code.co_qualname}: instruction count mismatch ({k} != {len(starts)})")

    stack_names = list(stack_names)
    missing = set(bc.cellvars) - set(local_names)
    if missing:
        raise ValueError(f"the cell variables {sorted(missing)} are not passed")
    prologue = []   # (no MAKE_CELL: the cell variables are passed as real cells)
    if bc.freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(bc.freevars)))
    prologue.append(Instr("RESUME", 0))
    i = 0
    for is_value in layout:
        if is_value:
            prologue.append(Instr("LOAD_FAST", stack_names[i]))
            i += 1
        else:
            prologue.append(Instr("PUSH_NULL"))
    prologue.append(Instr("JUMP_FORWARD", label))

    out = Bytecode(prologue + body)
    out._copy_attr_from(bc)
    out.argnames = stack_names + list(local_names)
    out.argcount = len(out.argnames)
    out.posonlyargcount = 0
    out.kwonlyargcount = 0
    out.flags = out.flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    out.name = code.co_name
    out.qualname = f"{code.co_qualname}.<resume@{offset}>"
    # No flow analysis: a continuation inside a try or with block jumps past the
    # block's TryBegin, which the bytecode package's analysis would then never
    # reach (no depth for the block's handler, its pushes left out of the stack
    # size: a handler running on a stack too small corrupts memory; or a
    # negative size on a path through the handler).  The resume code's stack at
    # every instruction is the original's there: the original's handler depths
    # (kept by ``from_code`` above) and stack size are right for it.
    result = out.to_code(stacksize=code.co_stacksize, compute_exception_stack_depths=False)
    got = _starts(result)
    if len(got) != len(prologue) + len(starts) + sum(split):
        raise ValueError(f"{code.co_qualname}: the resume code has {len(got)} instructions, "
                         f"expected {len(prologue) + len(starts) + sum(split)}")
    offsets, i = {}, len(prologue)
    for start, two in zip(starts, split):
        offsets[got[i]] = start
        i += 2 if two else 1
    _ORIGIN[result] = (weakref.ref(code), offsets)
    return result


def resume_offset(rcode: types.CodeType, code: types.CodeType, offset: int) -> int:
    """The byte offset in resume code ``rcode`` of the instruction at ``offset``
    of ``code`` (the original, or a resume code of it): the resume code holds
    the whole original instruction list."""
    original = canonical(code, offset)[1]
    for at, mapped in _ORIGIN[rcode][1].items():
        if mapped == original:
            return at
    raise ValueError(f"no instruction of {rcode.co_qualname} stands for offset {offset}")


def cell_parameters(code: types.CodeType) -> frozenset:
    """The parameters of resume code ``code`` that are real cells (its cell
    variables; none for a code that is not a resume code)."""
    if code not in _ORIGIN:
        return frozenset()
    return frozenset(code.co_cellvars)


def resume_function(code: types.CodeType, fn: types.FunctionType) -> types.FunctionType:
    """A function object for a resume code of ``fn``'s code (its globals and closure)."""
    return types.FunctionType(code, fn.__globals__, code.co_name, None, fn.__closure__)


# resume code -> {stack parameter: how messages name it} (breaks._stack_descriptions)
_STACK_SHOWN: "weakref.WeakKeyDictionary[types.CodeType, dict]" = weakref.WeakKeyDictionary()


def stack_shown(code: types.CodeType, shown: dict | None = None) -> dict:
    """How messages name the stack parameters of resume code ``code``
    (``_resume_stack0_`` is capture's name; the user knows the value as
    ``lr``); with ``shown``, record it."""
    if shown is not None:
        _STACK_SHOWN[code] = shown
        return shown
    return _STACK_SHOWN.get(code, {})


def is_resume_stack(name: str) -> bool:
    """A parameter name of a resume function that carries a stack value."""
    return name.startswith("_resume_stack") and name.endswith("_") and name[13:-1].isdigit()
