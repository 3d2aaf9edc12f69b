"""A normalised, version-neutral instruction stream for the capture executor.

``decode(code)`` turns a code object's bytecode (CPython 3.11, 3.12 or 3.13)
into a list of :class:`Instruction` records whose opnames and operands mean the
same thing on every supported interpreter, so opcode handlers never branch on
the Python version.  The decoder reads ``dis.get_instructions`` (never raw
``co_code`` arithmetic: inline CACHE entries differ by version) and
``dis.Bytecode(code).exception_entries``.

Example::

    >>> def f(a):
    ...     return g(a, k=1)
    >>> [i.opname for i in decode(f.__code__)]
    ['LOAD_GLOBAL', 'LOAD_FAST', 'LOAD_CONST', 'CALL', 'RETURN_VALUE']
    >>> decode(f.__code__)[3].kw_names
    ('k',)

Positions
---------
``index`` is the position in the normalised list and ``target`` the index a
jump goes to.  One CPython instruction may become several normalised ones and
prefix instructions (``EXTENDED_ARG``, ``PRECALL``, ``KW_NAMES``, 3.13's
``LOAD_CONST names`` before ``CALL_KW``) are folded into the instruction they
prefix; such a *group* shares ``offset`` (byte offset of its first original
instruction) and ``end_offset`` (just past its last one, inline caches
included); ``part`` numbers the instructions within the group.  For
``part == 0`` the CPython stack at ``offset`` equals the normalised stack before
the instruction, so native execution can resume at ``offset`` (graph breaks);
``end_offset`` is where the group's successor starts.

Rules
-----
Dropped: ``CACHE``, ``NOP``, ``RESUME`` (no effect on a symbolic frame), and the
prefixes above.  Jumps into a dropped instruction land on the next kept one.

* Calls.  ``[KW_NAMES] [PRECALL] CALL n`` (3.11), ``[KW_NAMES] CALL n``
  (3.12) and ``LOAD_CONST names; CALL_KW n`` (3.13) all become ``CALL`` with
  ``argval = n`` and ``kw_names`` (``()`` for a plain call).
* ``LOAD_METHOD`` (3.11) and ``LOAD_ATTR`` with the method bit (3.12+) become
  ``LOAD_ATTR`` with ``method=True``; ``argval`` is always the attribute name.
  ``LOAD_SUPER_ATTR`` (3.12+) likewise gets ``method`` and the name; its raw
  ``arg`` bit 1 (value 2) marks the explicit two-argument ``super(C, self)``.
* ``LOAD_GLOBAL``: ``argval`` = name, ``push_null`` = low bit of the oparg.
* ``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``, ``STORE_FAST_STORE_FAST``
  (3.13) split into two instructions in execution order; ``LOAD_FAST_CHECK``
  becomes ``LOAD_FAST``.  A ``LOAD_FAST`` of a cell or free slot (3.13 compiles
  ``LOAD_CLOSURE`` that way) becomes ``LOAD_CLOSURE``: it pushes the cell
  object itself.  ``LOAD_FAST_AND_CLEAR`` is kept.
* ``RETURN_CONST c`` -> ``LOAD_CONST c; RETURN_VALUE``.
* ``BINARY_SLICE`` -> ``BUILD_SLICE 2; BINARY_SUBSCR``;
  ``STORE_SLICE`` -> ``BUILD_SLICE 2; STORE_SUBSCR``.
* ``COMPARE_OP``: ``argval`` is the operator (``'<'``, ``'=='``...);
  ``to_bool`` is 3.13's "cast the result to bool" bit.
* Jumps: ``POP_JUMP_{FORWARD,BACKWARD}_IF_X`` -> ``POP_JUMP_IF_X``;
  ``JUMP_FORWARD``, ``JUMP_BACKWARD``, ``JUMP_BACKWARD_NO_INTERRUPT`` ->
  ``JUMP``.  ``JUMP_IF_{TRUE,FALSE}_OR_POP`` (3.11) are kept.  For every jump,
  ``argval`` is the byte offset execution continues at and ``target`` its index.
* ``FOR_ITER``: on exhaustion the iterator is popped and execution continues at
  ``target``, the first instruction after the loop's end marker (3.12's
  ``FOR_ITER`` skips ``END_FOR``, 3.13's skips ``END_FOR; POP_TOP``).  The end
  markers themselves become ``POP_TOP`` (two on 3.12, where ``END_FOR`` pops
  two values; one on 3.13, followed by the original ``POP_TOP``).
* ``CALL_INTRINSIC_1`` of ``INTRINSIC_LIST_TO_TUPLE`` / ``INTRINSIC_UNARY_
  POSITIVE`` -> ``LIST_TO_TUPLE`` / ``UNARY_POSITIVE`` (the 3.11 opcodes); other
  intrinsics keep ``CALL_INTRINSIC_1``/``_2`` with ``argval`` = intrinsic name.
* f-strings: ``FORMAT_VALUE flags`` (3.11/3.12) -> ``[CONVERT_VALUE]``
  then ``FORMAT_SIMPLE`` or ``FORMAT_WITH_SPEC``, as 3.13 compiles them.
  ``CONVERT_VALUE``'s ``argval`` is ``'str'``, ``'repr'`` or ``'ascii'``.
* ``MAKE_FUNCTION``: ``arg`` = ``argval`` = the attribute flags (always ``0`` on
  3.13, where ``SET_FUNCTION_ATTRIBUTE flag`` instructions follow).
* Everything else keeps its opname and dis's ``argval``.  Unknown opcodes are
  passed through; the executor reports them.  ``TO_BOOL`` exists on 3.13 only.

Stack contracts the handlers implement (``[..., a, b]`` has ``b`` on top)
----------------------------------------------------------------------------
* NULL is an explicit stack marker.  ``LOAD_GLOBAL`` with ``push_null`` pushes
  the value and a NULL; ``LOAD_ATTR``/``LOAD_SUPER_ATTR`` with ``method`` push
  ``[meth, owner]`` when the attribute is a plain function found on the type,
  otherwise the attribute and a NULL.  ``null_first`` says where CPython puts
  that NULL: below the value (3.11/3.12) or above it (3.13); a handler that
  follows it keeps the virtual stack identical to the real one, which a graph
  break needs to rebuild it.
* ``CALL n`` with ``kw_names`` ``k``: ``[..., s1, s2, arg1..argn] -> [...,
  result]``; the last ``len(k)`` arguments are keyword values named by ``k``.
  At most one of ``s1``, ``s2`` is NULL.  s1 NULL: call ``s2``.  s2 NULL: call
  ``s1``.  Neither: call ``s1`` with ``s2`` prepended as first argument (this
  covers 3.11/3.12 ``[NULL, f]``, 3.13 ``[f, NULL]``, ``[meth, self]`` and
  3.11's comprehension call ``[function, iterator]`` with ``n == 0``).
  ``CALL_FUNCTION_EX flags``: ``[..., s1, s2, args, kwargs if flags & 1]``,
  same NULL rule.
* ``FOR_ITER``: ``[..., it] -> [..., it, next(it)]``, or on exhaustion
  ``[...]`` and jump to ``target``.
* ``POP_JUMP_IF_TRUE/FALSE`` pop and test truthiness (3.13 puts ``TO_BOOL``
  before them; 3.11/3.12 do not, so the handler applies ``bool`` itself).
  ``JUMP_IF_X_OR_POP`` (3.11): jump keeping the value, else pop it.
* ``COMPARE_OP``: ``[..., a, b] -> [..., a <op> b]``, ``bool()`` of it when
  ``to_bool``.
* ``CONVERT_VALUE``: ``[..., v] -> [..., conv(v)]``.  ``FORMAT_SIMPLE``:
  ``[..., v] -> [..., format(v, '')]``.  ``FORMAT_WITH_SPEC``: ``[..., v,
  spec] -> [..., format(v, spec)]``.  3.11/3.12 evaluate the spec before the
  conversion, both on the stack, so a conversion with a spec decodes as
  ``SWAP 2; CONVERT_VALUE; SWAP 2; FORMAT_WITH_SPEC``.
* ``BUILD_SLICE 2``: ``[..., start, stop] -> [..., slice]``;
  ``STORE_SUBSCR``: ``[..., value, container, key] -> [...]``.
* ``MAKE_FUNCTION flags``: ``[..., defaults if f&1, kwdefaults if f&2,
  annotations if f&4, closure if f&8, code] -> [..., function]``.
  ``SET_FUNCTION_ATTRIBUTE flag``: ``[..., attr, func] -> [..., func]``.
* ``LOAD_CLOSURE``: pushes the cell of the slot.  ``LOAD_FAST_AND_CLEAR``:
  pushes the slot's value (NULL if unbound) and unbinds it.

Exception table
---------------
Every instruction inside an exception-table range carries ``handler``:
``target`` (index of the handler's first instruction), ``depth`` (stack depth
to unwind to) and ``lasti`` (whether the raising offset is pushed before the
exception).  ``Decoded.exception_ranges`` lists the ranges in indices.

This module imports nothing from ``frame``.
"""

from __future__ import annotations

import bisect
import collections
import dis
import sys
import threading
import types
import weakref
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, NoReturn

from frame.runtime import logs as _frame_logs

__all__ = [
    "ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION",
    "Decoded",
    "ExceptionHandler",
    "ExceptionRange",
    "Instruction",
    "UnsupportedBytecode",
    "decode",
    "format_decoded",
    "inside_handler",
]


class UnsupportedBytecode(Exception):
    """The bytecode breaks an assumption the decoder relies on (never guessed)."""


@dataclass(frozen=True, slots=True)
class ExceptionHandler:
    """Where an exception raised inside a ``try`` region goes."""

    target: int  # normalised index of the handler's first instruction
    depth: int  # stack depth the interpreter unwinds to before pushing
    lasti: bool  # push the raising instruction's offset before the exception


@dataclass(frozen=True, slots=True)
class ExceptionRange:
    """Normalised instructions ``start <= index < end`` share ``handler``."""

    start: int
    end: int
    handler: ExceptionHandler


@dataclass(frozen=True, slots=True)
class Instruction:
    """One normalised instruction; see the module docstring for the contract.

    ``arg`` is CPython's oparg where the instruction is not synthesised, else
    the operand in the normalised opname's own encoding; handlers read
    ``argval`` and the flags, never bits of ``arg``.  ``lineno`` is the source
    line of the original instruction; instructions without a location (some
    cleanup code) carry the previous instruction's line.
    """

    index: int
    opname: str
    arg: int | None
    argval: object
    offset: int
    end_offset: int
    lineno: int | None
    target: int | None
    part: int
    source_opname: str
    kw_names: tuple[str, ...] = ()
    push_null: bool = False
    method: bool = False
    null_first: bool = False
    to_bool: bool = False
    handler: ExceptionHandler | None = None

    @property
    def in_try(self) -> bool:
        """Whether an exception raised here is caught by this frame."""
        return self.handler is not None


@dataclass(frozen=True, slots=True)
class Decoded:
    """The decoded form of one code object."""

    code: types.CodeType
    instructions: tuple[Instruction, ...]
    exception_ranges: tuple[ExceptionRange, ...]
    offset_to_index: Mapping[int, int]  # every original offset -> index

    def __len__(self) -> int:
        return len(self.instructions)

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def __getitem__(self, index: int) -> Instruction:
        return self.instructions[index]

    def index_at(self, offset: int) -> int:
        """Index of the normalised instruction that executes original ``offset``."""
        try:
            return self.offset_to_index[offset]
        except KeyError:
            raise ValueError(f"no instruction at offset {offset}") from None


# --- Interpreter facts (the only place that knows the version) -------------

_PY = sys.version_info[:2]
# Instructions FOR_ITER jumps over on exhaustion: dis reports the END_FOR
# offset, CPython's FOR_ITER continues past END_FOR (3.12) or END_FOR; POP_TOP
# (3.13); 3.11 has no end marker.
if _PY >= (3, 13):
    _FOR_ITER_SKIPS: tuple[str, ...] = ("END_FOR", "POP_TOP")
elif _PY >= (3, 12):
    _FOR_ITER_SKIPS = ("END_FOR",)
else:
    _FOR_ITER_SKIPS = ()
_END_FOR_POPS = 2 if _PY == (3, 12) else 1
# 3.12 moved LOAD_ATTR's name index up one bit to make room for the method bit.
_LOAD_ATTR_HAS_METHOD_BIT = _PY >= (3, 12)
# 3.13 COMPARE_OP: oparg >> 5 is the operator and bit 4 casts to bool; on 3.12
# bit 4 is part of the operator index, so it must not be read there.
_COMPARE_TO_BOOL_BIT = 16 if _PY >= (3, 13) else 0
# Where CPython puts the NULL pushed by LOAD_GLOBAL / method loads.
_NULL_FIRST = _PY < (3, 13)

_JUMP_OPCODES = frozenset(dis.hasjrel) | frozenset(dis.hasjabs) | frozenset(
    getattr(dis, "hasjump", ())
)
_RENAMED_JUMPS = {
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
}
_CONVERSIONS = {1: "str", 2: "repr", 3: "ascii"}
_PLAIN_INTRINSICS = {
    "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE",
    "INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
}
# Real opcodes that never occur in a function's (deoptimised) co_code.
_NEVER_IN_CODE = frozenset({"CACHE", "RESERVED", "ENTER_EXECUTOR", "INTERPRETER_EXIT"})


# --- The decoder -------------------------------------------------------------


@dataclass(slots=True)
class _Pending:
    """A normalised instruction before jump targets are resolved (internal)."""

    opname: str
    arg: int | None
    argval: object
    offset: int  # start of the group
    end_offset: int
    main_offset: int  # the original instruction this one was derived from
    lineno: int | None
    jump: int | None  # original offset the jump continues at
    part: int
    source_opname: str
    kw_names: tuple[str, ...] = ()
    push_null: bool = False
    method: bool = False
    null_first: bool = False
    to_bool: bool = False


class _Decoder:
    """Walks one code object's dis instructions and applies the rules."""

    def __init__(self, code: types.CodeType) -> None:
        self.code = code
        self.raw = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
        self.position = {ins.offset: k for k, ins in enumerate(self.raw)}
        self.cell_names = frozenset(code.co_cellvars) | frozenset(code.co_freevars)
        self.out: list[_Pending] = []
        self.offset_to_index: dict[int, int] = {}
        self.k = 0  # position in self.raw of the instruction being decoded
        self.group_start: int | None = None  # offset of a pending prefix
        self.kw_names: tuple[str, ...] | None = None  # pending keyword names
        self.first_out = 0  # len(self.out) when the current instruction began
        self.lineno: int | None = None

    def run(self) -> Decoded:
        for k, ins in enumerate(self.raw):
            self.k = k
            self.offset_to_index[ins.offset] = len(self.out)
            self.first_out = len(self.out)
            if ins.positions is not None and ins.positions.lineno is not None:
                self.lineno = ins.positions.lineno
            rule = _RULES.get(ins.opname, _keep)
            rule(self, ins)
            if len(self.out) > self.first_out:
                self.group_start = None
                if self.kw_names is not None:
                    self.fail(ins, "keyword names not consumed by the next CALL")
        if self.kw_names is not None or self.group_start is not None:
            self.fail(self.raw[-1], "code ends inside an instruction group")
        return self.finish()

    def fail(self, ins: dis.Instruction, why: str) -> NoReturn:
        name = self.code.co_qualname
        raise UnsupportedBytecode(f"{name}: {ins.opname} at offset {ins.offset}: {why}")

    def next_real(self) -> dis.Instruction | None:
        """The instruction after the current one, looking through EXTENDED_ARG."""
        for k in range(self.k + 1, len(self.raw)):
            if self.raw[k].opname != "EXTENDED_ARG":
                return self.raw[k]
        return None

    def prefix(self, ins: dis.Instruction) -> None:
        """Fold ``ins`` into the group of the next instruction that is emitted."""
        if self.group_start is None:
            self.group_start = ins.offset

    def emit(
        self,
        ins: dis.Instruction,
        opname: str,
        arg: int | None,
        argval: object,
        *,
        jump: int | None = None,
        kw_names: tuple[str, ...] = (),
        push_null: bool = False,
        method: bool = False,
        null_first: bool = False,
        to_bool: bool = False,
    ) -> None:
        """Append one normalised instruction derived from ``ins``."""
        end = self.raw[self.k + 1].offset if self.k + 1 < len(self.raw) else len(
            self.code.co_code
        )
        start = ins.offset if self.group_start is None else self.group_start
        self.out.append(_Pending(
            opname=opname, arg=arg, argval=jump if jump is not None else argval,
            offset=start, end_offset=end, main_offset=ins.offset, lineno=self.lineno,
            jump=jump, part=len(self.out) - self.first_out, source_opname=ins.opname,
            kw_names=kw_names, push_null=push_null, method=method, null_first=null_first,
            to_bool=to_bool,
        ))

    def oparg(self, ins: dis.Instruction) -> int:
        """``ins``'s oparg, which its opcode always has."""
        if ins.arg is None:
            self.fail(ins, "missing oparg")
        return ins.arg

    def emit_load_fast(self, ins: dis.Instruction, slot: int, name: str) -> None:
        # On 3.13 LOAD_CLOSURE is a pseudo-op assembled as LOAD_FAST of the cell
        # slot; values of cell/free variables are always read with LOAD_DEREF.
        opname = "LOAD_CLOSURE" if name in self.cell_names else "LOAD_FAST"
        self.emit(ins, opname, slot, name)

    def finish(self) -> Decoded:
        index_of = self.offset_to_index
        size = len(self.out)
        mains = [p.main_offset for p in self.out]  # non-decreasing
        handler_at: dict[int, ExceptionHandler] = {}
        ranges: list[ExceptionRange] = []
        # exception_entries is public in dis.Bytecode but missing from typeshed.
        entries = dis.Bytecode(self.code).exception_entries  # type: ignore[attr-defined]
        for entry in entries:
            handler_index = index_of.get(entry.target, size)
            if handler_index >= size:
                raise UnsupportedBytecode(
                    f"{self.code.co_qualname}: exception handler at {entry.target} "
                    "is not an instruction"
                )
            handler = ExceptionHandler(handler_index, entry.depth, bool(entry.lasti))
            start = bisect.bisect_left(mains, entry.start)
            end = bisect.bisect_left(mains, entry.end)
            if start < end:
                ranges.append(ExceptionRange(start, end, handler))
                for i in range(start, end):
                    handler_at[i] = handler
        instructions = []
        for i, p in enumerate(self.out):
            target: int | None = None
            if p.jump is not None:
                target = index_of.get(p.jump, size)
                if target >= size:
                    raise UnsupportedBytecode(
                        f"{self.code.co_qualname}: {p.source_opname} at {p.main_offset} "
                        f"jumps to {p.jump}, which is not an instruction"
                    )
            instructions.append(Instruction(
                index=i, opname=p.opname, arg=p.arg, argval=p.argval, offset=p.offset,
                end_offset=p.end_offset, lineno=p.lineno, target=target, part=p.part,
                source_opname=p.source_opname, kw_names=p.kw_names, push_null=p.push_null,
                method=p.method, null_first=p.null_first, to_bool=p.to_bool,
                handler=handler_at.get(i),
            ))
        return Decoded(
            code=self.code,
            instructions=tuple(instructions),
            exception_ranges=tuple(ranges),
            offset_to_index=types.MappingProxyType(dict(index_of)),
        )


# --- Rules: one function per source opname, registered in one table ---------

_Rule = Callable[[_Decoder, dis.Instruction], None]
_RULES: dict[str, _Rule] = {}
# What each rewritten source opname can decode to (default: itself).
_PRODUCES: dict[str, tuple[str, ...]] = {}


def _rule(*opnames: str, produces: tuple[str, ...]) -> Callable[[_Rule], _Rule]:
    def register(fn: _Rule) -> _Rule:
        for name in opnames:
            _RULES[name] = fn
            _PRODUCES[name] = produces
        return fn

    return register


def _keep(d: _Decoder, ins: dis.Instruction) -> None:
    """Default: same opname and dis's argval; jumps get a target."""
    jump = ins.argval if ins.opcode in _JUMP_OPCODES else None
    if jump is not None and not isinstance(jump, int):
        d.fail(ins, f"jump target {jump!r} is not an offset")
    d.emit(ins, ins.opname, ins.arg, ins.argval, jump=jump)


@_rule("NOP", "RESUME", produces=())
def _drop(d: _Decoder, ins: dis.Instruction) -> None:
    """No effect on a symbolic frame."""


@_rule("EXTENDED_ARG", "PRECALL", produces=())
def _fold_prefix(d: _Decoder, ins: dis.Instruction) -> None:
    # dis already merged EXTENDED_ARG into the next oparg; PRECALL (3.11) has
    # no stack effect of its own: both only widen the next instruction's group.
    d.prefix(ins)


def _names_tuple(d: _Decoder, ins: dis.Instruction, value: object) -> tuple[str, ...]:
    if isinstance(value, tuple) and all(isinstance(n, str) for n in value):
        return value
    d.fail(ins, f"keyword names {value!r} are not a tuple of str")


@_rule("KW_NAMES", produces=())
def _kw_names(d: _Decoder, ins: dis.Instruction) -> None:
    # 3.11's dis shows no argval for KW_NAMES: read the constant directly.
    d.kw_names = _names_tuple(d, ins, d.code.co_consts[d.oparg(ins)])
    d.prefix(ins)


@_rule("LOAD_CONST", produces=("LOAD_CONST",))
def _load_const(d: _Decoder, ins: dis.Instruction) -> None:
    following = d.next_real()
    if following is not None and following.opname == "CALL_KW":
        d.kw_names = _names_tuple(d, ins, ins.argval)
        d.prefix(ins)
    else:
        d.emit(ins, "LOAD_CONST", ins.arg, ins.argval)


@_rule("CALL", "CALL_KW", produces=("CALL",))
def _call(d: _Decoder, ins: dis.Instruction) -> None:
    if ins.opname == "CALL_KW" and d.kw_names is None:
        # CPython's codegen always loads the names immediately before CALL_KW.
        d.fail(ins, "CALL_KW not preceded by LOAD_CONST of the keyword names")
    names, count = d.kw_names or (), d.oparg(ins)
    if len(names) > count:
        d.fail(ins, f"{len(names)} keyword names for {count} arguments")
    d.kw_names = None
    d.emit(ins, "CALL", count, count, kw_names=names)


@_rule("LOAD_METHOD", produces=("LOAD_ATTR",))
def _load_method(d: _Decoder, ins: dis.Instruction) -> None:
    d.emit(ins, "LOAD_ATTR", ins.arg, ins.argval, method=True, null_first=_NULL_FIRST)


@_rule("LOAD_ATTR", produces=("LOAD_ATTR",))
def _load_attr(d: _Decoder, ins: dis.Instruction) -> None:
    method = _LOAD_ATTR_HAS_METHOD_BIT and bool(d.oparg(ins) & 1)
    d.emit(ins, "LOAD_ATTR", ins.arg, ins.argval, method=method,
           null_first=method and _NULL_FIRST)


@_rule("LOAD_SUPER_ATTR", produces=("LOAD_SUPER_ATTR",))
def _load_super_attr(d: _Decoder, ins: dis.Instruction) -> None:
    method = bool(d.oparg(ins) & 1)
    d.emit(ins, "LOAD_SUPER_ATTR", ins.arg, ins.argval, method=method,
           null_first=method and _NULL_FIRST)


@_rule("LOAD_GLOBAL", produces=("LOAD_GLOBAL",))
def _load_global(d: _Decoder, ins: dis.Instruction) -> None:
    push_null = bool(d.oparg(ins) & 1)
    d.emit(ins, "LOAD_GLOBAL", ins.arg, ins.argval, push_null=push_null,
           null_first=push_null and _NULL_FIRST)


@_rule("LOAD_FAST", "LOAD_FAST_CHECK", produces=("LOAD_FAST", "LOAD_CLOSURE"))
def _load_fast(d: _Decoder, ins: dis.Instruction) -> None:
    d.emit_load_fast(ins, d.oparg(ins), ins.argval)


def _pair(d: _Decoder, ins: dis.Instruction) -> tuple[int, str, int, str]:
    """The two (slot, name) operands of a 3.13 superinstruction, in order."""
    names = ins.argval
    if not (isinstance(names, tuple) and len(names) == 2):
        d.fail(ins, f"expected two names, got {names!r}")
    packed = d.oparg(ins)  # first slot in the high nibble, second in the low one
    return packed >> 4, names[0], packed & 15, names[1]


@_rule("LOAD_FAST_LOAD_FAST", produces=("LOAD_FAST", "LOAD_CLOSURE"))
def _load_fast_load_fast(d: _Decoder, ins: dis.Instruction) -> None:
    first, first_name, second, second_name = _pair(d, ins)
    d.emit_load_fast(ins, first, first_name)
    d.emit_load_fast(ins, second, second_name)


@_rule("STORE_FAST_LOAD_FAST", produces=("STORE_FAST", "LOAD_FAST", "LOAD_CLOSURE"))
def _store_fast_load_fast(d: _Decoder, ins: dis.Instruction) -> None:
    first, first_name, second, second_name = _pair(d, ins)
    d.emit(ins, "STORE_FAST", first, first_name)
    d.emit_load_fast(ins, second, second_name)


@_rule("STORE_FAST_STORE_FAST", produces=("STORE_FAST",))
def _store_fast_store_fast(d: _Decoder, ins: dis.Instruction) -> None:
    # CPython stores the top value into the first (high-nibble) slot first.
    first, first_name, second, second_name = _pair(d, ins)
    d.emit(ins, "STORE_FAST", first, first_name)
    d.emit(ins, "STORE_FAST", second, second_name)


@_rule("RETURN_CONST", produces=("LOAD_CONST", "RETURN_VALUE"))
def _return_const(d: _Decoder, ins: dis.Instruction) -> None:
    d.emit(ins, "LOAD_CONST", ins.arg, ins.argval)
    d.emit(ins, "RETURN_VALUE", None, None)


@_rule("BINARY_SLICE", produces=("BUILD_SLICE", "BINARY_SUBSCR"))
def _binary_slice(d: _Decoder, ins: dis.Instruction) -> None:
    # [container, start, stop] -> container[start:stop]
    d.emit(ins, "BUILD_SLICE", 2, 2)
    d.emit(ins, "BINARY_SUBSCR", None, None)


@_rule("STORE_SLICE", produces=("BUILD_SLICE", "STORE_SUBSCR"))
def _store_slice(d: _Decoder, ins: dis.Instruction) -> None:
    # [value, container, start, stop]: container[start:stop] = value, which is
    # STORE_SUBSCR's [value, container, key] once start/stop form the key.
    d.emit(ins, "BUILD_SLICE", 2, 2)
    d.emit(ins, "STORE_SUBSCR", None, None)


@_rule("COMPARE_OP", produces=("COMPARE_OP",))
def _compare_op(d: _Decoder, ins: dis.Instruction) -> None:
    if ins.argval not in dis.cmp_op:
        d.fail(ins, f"unknown comparison {ins.argval!r}")
    d.emit(ins, "COMPARE_OP", ins.arg, ins.argval,
           to_bool=bool(d.oparg(ins) & _COMPARE_TO_BOOL_BIT))


def _renamed_jump(d: _Decoder, ins: dis.Instruction) -> None:
    d.emit(ins, _RENAMED_JUMPS[ins.opname], ins.arg, None, jump=ins.argval)


for _old, _new in _RENAMED_JUMPS.items():
    _rule(_old, produces=(_new,))(_renamed_jump)


@_rule("FOR_ITER", produces=("FOR_ITER",))
def _for_iter(d: _Decoder, ins: dis.Instruction) -> None:
    end = d.position.get(ins.argval)
    if end is None:
        d.fail(ins, f"target {ins.argval!r} is not an instruction")
    for j, expected in enumerate(_FOR_ITER_SKIPS):
        found = d.raw[end + j].opname if end + j < len(d.raw) else "end of code"
        if found != expected:
            d.fail(ins, f"loop end marker is {found}, expected {expected}")
    after = end + len(_FOR_ITER_SKIPS)
    if after >= len(d.raw):
        d.fail(ins, "nothing follows the loop")
    d.emit(ins, "FOR_ITER", ins.arg, None, jump=d.raw[after].offset)


@_rule("END_FOR", produces=("POP_TOP",))
def _end_for(d: _Decoder, ins: dis.Instruction) -> None:
    # Only reached by CPython's specialised generator path; same pops either way.
    for _ in range(_END_FOR_POPS):
        d.emit(ins, "POP_TOP", None, None)


@_rule("CALL_INTRINSIC_1", produces=("CALL_INTRINSIC_1", *_PLAIN_INTRINSICS.values()))
def _call_intrinsic_1(d: _Decoder, ins: dis.Instruction) -> None:
    name = ins.argrepr
    if name in _PLAIN_INTRINSICS:
        d.emit(ins, _PLAIN_INTRINSICS[name], None, None)
    else:
        d.emit(ins, "CALL_INTRINSIC_1", ins.arg, name)


@_rule("CALL_INTRINSIC_2", produces=("CALL_INTRINSIC_2",))
def _call_intrinsic_2(d: _Decoder, ins: dis.Instruction) -> None:
    d.emit(ins, "CALL_INTRINSIC_2", ins.arg, ins.argrepr)


@_rule("FORMAT_VALUE",
       produces=("SWAP", "CONVERT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC"))
def _format_value(d: _Decoder, ins: dis.Instruction) -> None:
    flags = d.oparg(ins)
    conversion, has_spec = flags & 3, bool(flags & 4)
    if conversion and has_spec:
        # [value, spec]: the conversion applies to the value under the spec.
        d.emit(ins, "SWAP", 2, 2)
        d.emit(ins, "CONVERT_VALUE", conversion, _CONVERSIONS[conversion])
        d.emit(ins, "SWAP", 2, 2)
    elif conversion:
        d.emit(ins, "CONVERT_VALUE", conversion, _CONVERSIONS[conversion])
    if has_spec:
        d.emit(ins, "FORMAT_WITH_SPEC", None, None)
    else:
        d.emit(ins, "FORMAT_SIMPLE", None, None)


@_rule("CONVERT_VALUE", produces=("CONVERT_VALUE",))
def _convert_value(d: _Decoder, ins: dis.Instruction) -> None:
    if ins.arg not in _CONVERSIONS:
        d.fail(ins, f"unknown conversion {ins.arg}")
    d.emit(ins, "CONVERT_VALUE", ins.arg, _CONVERSIONS[ins.arg])


@_rule("MAKE_FUNCTION", produces=("MAKE_FUNCTION",))
def _make_function(d: _Decoder, ins: dis.Instruction) -> None:
    flags = ins.arg or 0  # 3.13 has no oparg
    d.emit(ins, "MAKE_FUNCTION", flags, flags)


# --- Public API ---------------------------------------------------------------


_DECODED_KEPT = 512   # decodings kept (a translation decodes its callees too, and a
                      # recompile or a resume function decodes the same code again)
# id(code) -> (weak reference to the code, its Decoded without the code): the
# code object is held weakly, so keeping its decoding keeps nothing alive
_decoded: collections.OrderedDict[int, tuple[weakref.ref, tuple]] = collections.OrderedDict()
_decoded_lock = threading.RLock()  # a collection inside the lock may run _forget


def decode(code: types.CodeType) -> Decoded:
    """Decode ``code`` into the normalised instruction stream.

    Nested code objects (lambdas, 3.11 comprehensions) are not decoded; call
    ``decode`` on them when they are executed.  Raises ``UnsupportedBytecode``
    only when the bytecode breaks an invariant of CPython's code generator
    that the normalisation depends on; unknown opcodes pass through.

    The result is immutable and depends on the code object alone: the last
    ``_DECODED_KEPT`` decodings are kept, by identity, while their code lives.
    """
    key = id(code)
    with _decoded_lock:
        found = _decoded.get(key)
        if found is not None and found[0]() is code:
            _decoded.move_to_end(key)
            return Decoded(code, *found[1])
    decoded = _Decoder(code).run()
    ref = weakref.ref(code, lambda r, key=key: _forget(key, r))
    with _decoded_lock:
        _decoded[key] = (ref, (decoded.instructions, decoded.exception_ranges,
                               decoded.offset_to_index))
        _decoded.move_to_end(key)
        while len(_decoded) > _DECODED_KEPT:
            _decoded.popitem(last=False)
    return decoded


def inside_handler(code: types.CodeType, instr) -> bool:
    """Is ``instr`` part of an exception handler's body (an ``except`` or
    ``finally`` block run for an exception, a ``with`` block's exit for one)?
    There the exception being handled is the frame's state (``PUSH_EXC_INFO``
    saved the one before on the stack), which a resume function, a new frame,
    would not have.  Such code is covered by the handler that puts that state
    back: ``COPY 3; POP_EXCEPT; RERAISE 1``, directly or through the handlers
    of nested blocks, each covered in turn by the handler of the block around
    it: the cleanup of ``except E as e`` (which deletes ``e``), a ``try`` or
    ``with`` inside the handler body (the code at its ``PUSH_EXC_INFO`` runs
    in the enclosing block), a 3.12+ inlined comprehension's cleanup."""
    instrs = decode(code).instructions

    def restores_exc_info(h) -> bool:
        return h.target + 1 < len(instrs) and instrs[h.target].opname == "COPY" \
            and instrs[h.target + 1].opname == "POP_EXCEPT"

    seen: set[int] = set()
    h = instr.handler
    while h is not None and h.target not in seen:
        seen.add(h.target)
        if restores_exc_info(h):
            return True
        block = instrs[h.target]
        h = block.handler
        if block.opname == "PUSH_EXC_INFO" and h is not None and restores_exc_info(h):
            # ``instr`` is in a try or with body: the handler entered here is covered by its
            # own cleanup; the code around that cleanup is the code around ``instr``
            h = instrs[h.target].handler
    return False


def _forget(key: int, ref: weakref.ref) -> None:
    with _decoded_lock:
        found = _decoded.get(key)
        if found is not None and found[0] is ref:
            del _decoded[key]


def ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION() -> frozenset[str]:  # noqa: N802
    """Every opname ``decode`` can produce on the running interpreter.

    Computed from ``dis.opmap`` (real opcodes only: no pseudo-ops, no
    ``INSTRUMENTED_*``) through the rewrite table, so a coverage test can list
    the opnames the executor does not handle on this version.
    """
    names: set[str] = set()
    for name, opcode in dis.opmap.items():
        if opcode >= 256 or name.startswith("INSTRUMENTED_") or name in _NEVER_IN_CODE:
            continue
        names.update(_PRODUCES.get(name, (name,)))
    return frozenset(names)


def _show_argval(instr: Instruction) -> str:
    if instr.target is not None:
        return f"-> {instr.target}"
    if instr.argval is None and instr.arg is None:  # no operand (LOAD_CONST None has one)
        return ""
    if isinstance(instr.argval, types.CodeType):
        return f"<code {instr.argval.co_qualname}>"
    text = repr(instr.argval)
    return text if len(text) <= 40 else text[:37] + "..."


def _show_flags(instr: Instruction) -> str:
    flags = []
    if instr.push_null:
        flags.append("+null")
    if instr.method:
        flags.append("method")
    if instr.opname == "CALL" and instr.kw_names:
        flags.append(f"kw={instr.kw_names!r}")
    if instr.to_bool:
        flags.append("bool")
    if instr.handler is not None:
        h = instr.handler
        flags.append(f"exc->{h.target}/d{h.depth}{'/lasti' if h.lasti else ''}")
    return "  ".join(flags)


def format_decoded(decoded: Decoded) -> str:
    """Readable listing of a decoded code object (for ``FRAME_LOG=bytecode``).

    One line per instruction: index, original offset, line, opname, argval (or
    ``-> target`` for jumps) and flags.
    """
    code = decoded.code
    lines = [f"{code.co_qualname} ({code.co_filename}:{code.co_firstlineno}), "
             f"{len(decoded)} instructions"]
    for instr in decoded:
        line = "" if instr.lineno is None else str(instr.lineno)
        lines.append(
            f"{instr.index:>5} {instr.offset:>6} {line:>5}  {instr.opname:<22} "
            f"{_show_argval(instr):<40} {_show_flags(instr)}".rstrip()
        )
    return "\n".join(lines)


def _format_code(code: types.CodeType) -> str:
    """The ``bytecode`` log channel's decoded listing of ``code``."""
    return format_decoded(decode(code))


# The FRAME_LOG ``bytecode`` channel (frame/runtime/logs.py) prints capture's decoded
# listing through this formatter; the logging layer below capture cannot import it.
_frame_logs.register_bytecode_formatter(_format_code)
