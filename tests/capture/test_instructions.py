"""Tests for capture.instructions; every expectation holds on 3.11, 3.12 and 3.13.

Besides exact sequences for small functions, four cross-checks tie the
normalised stream to CPython: stack depths from the normalised contract agree
with ``dis.stack_effect`` on the original bytecode (per group, reachable or
not); the offsets CPython executes follow the normalised control flow edge by
edge; dis's own argrepr ("NULL + f", "bool(<)") matches the flags; and a small
reference interpreter of the normalised stream behaves like the function.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import dis
import operator
import sys
import types
from typing import Any, Callable

import pytest

from capture.instructions import (
    ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION,
    Decoded,
    Instruction,
    UnsupportedBytecode,
    decode,
    format_decoded,
)

# --- Sample functions -----------------------------------------------------------


def helper(a, b=0, *, c=0):
    return a * 100 + b * 10 + c


class Box:
    k = 7

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Box({self.v!r})"

    def scale(self, k, *, bias=0):
        return self.v * k + bias


class Child(Box):
    def scale(self, k, *, bias=0):
        return super().scale(k, bias=bias) + 1


class Weird:
    """Comparisons return strings, so a stray bool() cast shows."""

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Weird({self.v!r})"

    def __lt__(self, other):
        return f"{self.v}<{other.v}"

    def __le__(self, other):
        return f"{self.v}<={other.v}"


def add(a, b):
    return a + b


def return_const():
    return 42


def calls(a):
    return helper(a) + helper(a, b=2, c=3)


def call_method(box):
    return box.scale(2, bias=1)


def call_forms(xs, f):
    xs.append(4)  # a builtin method: [NULL, bound method] / [bound method, NULL]
    return (f)(len(xs)) + (f)(a=1)  # PUSH_NULL before (3.11/3.12) or after (3.13)


def attrs(box):
    box.v += 5
    return box.v + box.k  # k has an odd name index: no method bit on 3.11


def compare(a, b):
    return a < b


def compare_objects(a, b):
    return a < b, a <= b, (1 if a <= b else 2)


def comparisons(a, b, c, xs):
    return a < b < c, a == b, a != c, a >= c, a is None, a is not None, a in xs, a not in xs


def branches(a):
    if a is None:
        return "none"
    elif a > 10:
        return "big"
    elif not a:
        return "zero"
    else:
        return "small"


def while_loop(n):
    i = t = 0
    while i < n:
        t += i
        i += 1
    return t


def total(xs):
    t = 0
    for x in xs:
        t += x
    return t


def for_break_continue(xs):
    t = 0
    for x in xs:
        if x < 0:
            continue
        if x > 100:
            break
        t += x
    else:
        t = -t
    return t


def nested_loops(n):
    t = 0
    for i in range(n):
        for j in range(i):
            t += i * j
    return t


def fstrings(x, w):
    return f"{x!r:>{w}}|{x:5}|{x!s}|{x!a}|{x}"


def slices(a, v):
    a[1:3] = v
    return a[1:3], a[::2]


def swap(a, b):
    a, b = b, a
    return a


def unpacking(t):
    a, b = t[0], t[1]
    x, *y, z = t
    return a, b, x, y, z


def aug_assign(xs, n):
    n += 2
    n *= 3
    xs[0] += n
    return n, xs


def listcomp(xs):
    return [x * 2 for x in xs if x % 2]


def intrinsics(a):
    return +a, -a, (*range(a),)


def dict_set_gen(xs):
    return {x: x for x in xs}, {x for x in xs}, sum(x for x in xs)


def closures(a):
    def inner(x, y=1, *, z=2):
        return a + x + y + z

    return inner(1) + (lambda q=3: q + a)()


def try_except(a):
    b = 0
    try:
        b = 10 // a
    except ZeroDivisionError:
        b = -1
    finally:
        b += 1
    return b


def with_block(cm):
    with cm as v:
        r = v
    return r


# Runnable samples: traced natively and run by the reference interpreter.
RUNNABLE: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (add, (2, 3)), (return_const, ()), (calls, (7,)), (call_method, (Box(5),)),
    (call_forms, ([1, 2], helper)), (attrs, (Box(4),)), (compare, (1, 2)),
    (compare_objects, (Weird(1), Weird(2))), (comparisons, (1, 2, 3, [1])),
    (comparisons, (3, 2, 1, [])), (comparisons, (2, 2, 1, [2])),
    (branches, (None,)), (branches, (11,)), (branches, (0,)), (branches, (5,)),
    (while_loop, (5,)), (total, ([1, 2, 3],)), (for_break_continue, ([1, -2, 3],)),
    (for_break_continue, ([1, 200, 3],)), (nested_loops, (4,)), (fstrings, ("ab", 6)),
    (fstrings, (3.5, 8)), (slices, ([0, 1, 2, 3, 4], ["x"])), (swap, (1, 2)),
    (unpacking, ((1, 2, 3, 4),)), (aug_assign, ([1, 2], 3)), (listcomp, ([1, 2, 3, 5],)),
    (intrinsics, (3,)),
]
# Traced natively only: the reference interpreter does not model these opcodes.
TRACE_ONLY: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (dict_set_gen, ([1, 2, 2],)), (closures, (10,)), (try_except, (0,)),
    (try_except, (5,)), (with_block, (contextlib.nullcontext(5),)),
    (Child.scale, (Child(3), 2)),
]
SAMPLES = sorted({fn for fn, _ in RUNNABLE + TRACE_ONLY}, key=lambda f: f.__qualname__)


def all_codes(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in its constants."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(all_codes(const))
    return found


SAMPLE_CODES = [c for fn in SAMPLES for c in all_codes(fn.__code__)]
CODE_IDS = [c.co_qualname for c in SAMPLE_CODES]
RUN_IDS = [fn.__qualname__ for fn, _ in RUNNABLE]


def opnames(decoded: Decoded) -> list[str]:
    return [i.opname for i in decoded]


def group_of(decoded: Decoded, instr: Instruction) -> list[Instruction]:
    return [x for x in decoded if x.offset == instr.offset]


# --- Flow: reachability and stack depths -----------------------------------------

JUMP_OPNAMES = {"JUMP", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE",
                "POP_JUMP_IF_NOT_NONE", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP",
                "FOR_ITER", "SEND"}
NO_FALLTHROUGH = {"JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}


def successors(decoded: Decoded, i: int) -> list[tuple[int, bool]]:
    """(index, is-the-jump-edge) pairs control can reach from ``i``, exceptions aside."""
    instr = decoded[i]
    found = [(instr.target, True)] if instr.target is not None else []
    if instr.opname not in NO_FALLTHROUGH and i + 1 < len(decoded):
        found.append((i + 1, False))
    return found


def reachable(decoded: Decoded) -> list[int]:
    seen, work = set(), [0]
    while work:
        i = work.pop()
        if i not in seen:
            seen.add(i)
            work.extend(j for j, _ in successors(decoded, i))
            if decoded[i].handler is not None:
                work.append(decoded[i].handler.target)
    return sorted(seen)


# The normalised stack contract (module docstring); unchanged opnames use dis.
FIXED_EFFECT = {
    "LOAD_FAST": 1, "LOAD_CLOSURE": 1, "LOAD_CONST": 1, "STORE_FAST": -1,
    "POP_TOP": -1, "RETURN_VALUE": -1, "BINARY_SUBSCR": -1, "STORE_SUBSCR": -3,
    "CONVERT_VALUE": 0, "FORMAT_SIMPLE": 0, "FORMAT_WITH_SPEC": -1, "SWAP": 0,
    "LIST_TO_TUPLE": 0, "UNARY_POSITIVE": 0, "CALL_INTRINSIC_1": 0,
    "CALL_INTRINSIC_2": -1, "SET_FUNCTION_ATTRIBUTE": -1, "COMPARE_OP": -1,
    "POP_JUMP_IF_TRUE": -1, "POP_JUMP_IF_FALSE": -1, "POP_JUMP_IF_NONE": -1,
    "POP_JUMP_IF_NOT_NONE": -1, "JUMP": 0,
    # A generator is first resumed with the sent value on the stack (popped by
    # the POP_TOP that follows); dis says 0 before 3.13 and 1 from 3.13 on.
    "RETURN_GENERATOR": 1,
}


VARIABLE_EFFECT: dict[str, Callable[[Instruction, bool], int]] = {
    "CALL": lambda i, jump: -i.argval - 1,
    "LOAD_GLOBAL": lambda i, jump: 1 + i.push_null,
    "LOAD_ATTR": lambda i, jump: int(i.method),
    "LOAD_SUPER_ATTR": lambda i, jump: -2 + i.method,
    "FOR_ITER": lambda i, jump: -1 if jump else 1,
    "BUILD_SLICE": lambda i, jump: 1 - i.argval,
    "MAKE_FUNCTION": lambda i, jump: -bin(i.arg).count("1"),
    "JUMP_IF_TRUE_OR_POP": lambda i, jump: 0 if jump else -1,
    "JUMP_IF_FALSE_OR_POP": lambda i, jump: 0 if jump else -1,
}


def normalised_effect(instr: Instruction, jump: bool) -> int:
    if instr.opname in FIXED_EFFECT:
        return FIXED_EFFECT[instr.opname]
    if instr.opname in VARIABLE_EFFECT:
        return VARIABLE_EFFECT[instr.opname](instr, jump)
    return dis.stack_effect(dis.opmap[instr.opname], instr.arg, jump=jump)


def normalised_depths(decoded: Decoded) -> dict[int, int]:
    depth: dict[int, int] = {}
    work = [(0, 0)]
    while work:
        i, d = work.pop()
        assert d >= 0, f"negative stack depth at {i}"
        if i in depth:
            assert depth[i] == d, f"inconsistent depth at {i}: {depth[i]} vs {d}"
            continue
        depth[i] = d
        if decoded[i].handler is not None:
            h = decoded[i].handler
            work.append((h.target, h.depth + h.lasti + 1))
        for j, jump in successors(decoded, i):
            work.append((j, d + normalised_effect(decoded[i], jump)))
    return depth


CPYTHON_NO_FALLTHROUGH = {
    "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
    "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
}
CPYTHON_JUMPS = set(dis.hasjrel) | set(dis.hasjabs) | set(getattr(dis, "hasjump", ()))


def cpython_effect(ins: dis.Instruction, jump: bool) -> int:
    if ins.opname == "RETURN_GENERATOR":
        return FIXED_EFFECT["RETURN_GENERATOR"]
    return dis.stack_effect(ins.opcode, ins.arg, jump=jump)


def cpython_depths(code: types.CodeType) -> dict[int, int]:
    """Stack depth before each original offset, from CPython's own stack effects."""
    raw = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    position = {ins.offset: k for k, ins in enumerate(raw)}
    entries = dis.Bytecode(code).exception_entries  # type: ignore[attr-defined]
    depth: dict[int, int] = {}
    work = [(0, 0)]
    while work:
        k, d = work.pop()
        ins = raw[k]
        if ins.offset in depth:
            assert depth[ins.offset] == d
            continue
        depth[ins.offset] = d
        for e in entries:
            if e.start <= ins.offset < e.end:
                work.append((position[e.target], e.depth + e.lasti + 1))
        if ins.opcode in CPYTHON_JUMPS:
            work.append((position[ins.argval], d + cpython_effect(ins, True)))
        if ins.opname not in CPYTHON_NO_FALLTHROUGH and k + 1 < len(raw):
            work.append((k + 1, d + cpython_effect(ins, False)))
    return depth


def executed_offsets(fn: Callable[..., Any], args: tuple[Any, ...]) -> list[int]:
    """Original offsets CPython executes in ``fn``'s own frame, in order."""
    code = fn.__code__
    seen: list[int] = []
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:  # 3.12+: PEP 669 instruction events
        tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
        monitoring.use_tool_id(tool, "test_instructions")
        event = monitoring.events.INSTRUCTION
        try:
            monitoring.register_callback(
                tool, event, lambda c, offset: seen.append(offset) if c is code else None)
            monitoring.set_local_events(tool, code, event)
            fn(*args)
        finally:
            monitoring.set_local_events(tool, code, 0)
            monitoring.register_callback(tool, event, None)
            monitoring.free_tool_id(tool)
        return seen

    def tracer(frame: types.FrameType, event: str, arg: object) -> Any:  # 3.11
        if frame.f_code is not code:
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            seen.append(frame.f_lasti)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(previous)
    return seen


# --- A reference interpreter of the normalised stream -----------------------------

NULL = object()
BINARY = {0: operator.add, 5: operator.mul, 6: operator.mod, 10: operator.sub,
          13: operator.iadd, 18: operator.imul, 23: operator.isub}
COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq,
           "!=": operator.ne, ">": operator.gt, ">=": operator.ge}
Unary = Callable[[Any], Any]
CONVERT: dict[str, Unary] = {"str": str, "repr": repr, "ascii": ascii}
UNARY: dict[str, Unary] = {
    "TO_BOOL": bool, "UNARY_NOT": operator.not_, "UNARY_POSITIVE": operator.pos,
    "UNARY_NEGATIVE": operator.neg, "GET_ITER": iter, "LIST_TO_TUPLE": tuple,
    "FORMAT_SIMPLE": lambda v: format(v, ""),
}
BUILD: dict[str, Unary] = {"BUILD_TUPLE": tuple, "BUILD_LIST": list, "BUILD_STRING": "".join}
POP_JUMPS: dict[str, Unary] = {
    "POP_JUMP_IF_TRUE": bool, "POP_JUMP_IF_FALSE": operator.not_,
    "POP_JUMP_IF_NONE": lambda v: v is None, "POP_JUMP_IF_NOT_NONE": lambda v: v is not None,
}


def pop_n(stack: list[Any], n: int) -> list[Any]:
    items = stack[len(stack) - n:]
    del stack[len(stack) - n:]
    return items


def call(instr: Instruction, stack: list[Any]) -> Any:
    """The CALL contract: whichever of the two slots below the arguments is NULL."""
    args = pop_n(stack, instr.argval)
    second, first = stack.pop(), stack.pop()
    if first is NULL:
        func = second
    elif second is NULL:
        func = first
    else:
        func, args = first, [second, *args]
    split = len(args) - len(instr.kw_names)
    return func(*args[:split], **dict(zip(instr.kw_names, args[split:])))


def interpret(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn`` by executing its normalised instructions (a subset of opnames)."""
    decoded = decode(fn.__code__)
    fast: dict[str, Any] = dict(zip(fn.__code__.co_varnames, args))
    stack: list[Any] = []
    i = 0
    while True:
        instr = decoded[i]
        i += 1
        op, arg, argval = instr.opname, instr.arg, instr.argval
        # Where the NULL goes relative to a loaded value (None marks the value).
        with_null = (NULL, None) if instr.null_first else (None, NULL)
        if op in UNARY:
            stack.append(UNARY[op](stack.pop()))
        elif op == "LOAD_FAST":
            stack.append(fast[argval])
        elif op == "LOAD_CONST":
            stack.append(argval)
        elif op == "LOAD_FAST_AND_CLEAR":
            stack.append(fast.pop(argval, NULL))
        elif op == "STORE_FAST":
            fast[argval] = stack.pop()
            if fast[argval] is NULL:
                del fast[argval]
        elif op in ("LOAD_GLOBAL", "LOAD_ATTR"):
            if op == "LOAD_GLOBAL":
                value = fn.__globals__.get(argval, getattr(builtins, argval, None))
            else:
                owner = stack.pop()
                value = getattr(owner, argval)
                if instr.method and isinstance(getattr(type(owner), argval, None),
                                               types.FunctionType):
                    value, with_null = getattr(type(owner), argval), (None, owner)
            if instr.push_null or instr.method:
                stack.extend(value if slot is None else slot for slot in with_null)
            else:
                stack.append(value)
        elif op == "STORE_ATTR":
            owner, value = stack.pop(), stack.pop()
            setattr(owner, argval, value)
        elif op == "PUSH_NULL":
            stack.append(NULL)
        elif op == "CALL":
            stack.append(call(instr, stack))
        elif op == "MAKE_FUNCTION" and arg == 0:
            stack.append(types.FunctionType(stack.pop(), fn.__globals__))
        elif op in ("BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP"):
            right, left = stack.pop(), stack.pop()
            if op == "BINARY_OP":
                stack.append(BINARY[arg](left, right))
            elif op == "COMPARE_OP":
                result = COMPARE[argval](left, right)
                stack.append(bool(result) if instr.to_bool else result)
            else:
                result = left is right if op == "IS_OP" else left in right
                stack.append(result != bool(arg))
        elif op in POP_JUMPS:
            if POP_JUMPS[op](stack.pop()):
                i = instr.target
        elif op in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
            if bool(stack[-1]) == (op == "JUMP_IF_TRUE_OR_POP"):
                i = instr.target
            else:
                stack.pop()
        elif op == "JUMP":
            i = instr.target
        elif op == "FOR_ITER":
            try:
                stack.append(next(stack[-1]))
            except StopIteration:
                stack.pop()
                i = instr.target
        elif op == "POP_TOP":
            stack.pop()
        elif op == "RETURN_VALUE":
            return stack.pop()
        elif op == "BUILD_SLICE":
            stack.append(slice(*pop_n(stack, argval)))
        elif op == "BINARY_SUBSCR":
            key = stack.pop()
            stack.append(stack.pop()[key])
        elif op == "STORE_SUBSCR":
            key, container, value = stack.pop(), stack.pop(), stack.pop()
            container[key] = value
        elif op in BUILD:
            stack.append(BUILD[op](pop_n(stack, arg)))
        elif op == "CONVERT_VALUE":
            stack.append(CONVERT[argval](stack.pop()))
        elif op == "FORMAT_WITH_SPEC":
            spec = stack.pop()
            stack.append(format(stack.pop(), spec))
        elif op == "SWAP":
            stack[-1], stack[-arg] = stack[-arg], stack[-1]
        elif op == "COPY":
            stack.append(stack[-arg])
        elif op in ("LIST_APPEND", "LIST_EXTEND"):
            value = stack.pop()
            getattr(stack[-arg], "append" if op == "LIST_APPEND" else "extend")(value)
        elif op in ("UNPACK_SEQUENCE", "UNPACK_EX"):
            items = list(stack.pop())
            if op == "UNPACK_EX":
                before, after = arg & 0xFF, len(items) - (arg >> 8)
                items = [*items[:before], items[before:after], *items[after:]]
            stack.extend(reversed(items))
        else:
            raise NotImplementedError(f"reference interpreter: {op}")


# --- Cross-checks over every sample ----------------------------------------------

REMOVED = {
    "CACHE", "EXTENDED_ARG", "PRECALL", "NOP", "RESUME", "KW_NAMES", "CALL_KW",
    "LOAD_METHOD", "RETURN_CONST", "BINARY_SLICE", "STORE_SLICE", "LOAD_FAST_CHECK",
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
    "FORMAT_VALUE", "END_FOR", "JUMP_FORWARD", "JUMP_BACKWARD",
    "JUMP_BACKWARD_NO_INTERRUPT", *(f"POP_JUMP_{d}_IF_{c}" for d in ("FORWARD", "BACKWARD")
                                    for c in ("TRUE", "FALSE", "NONE", "NOT_NONE")),
}


@pytest.mark.parametrize("code", SAMPLE_CODES, ids=CODE_IDS)
def test_structure(code: types.CodeType) -> None:
    decoded = decode(code)
    assert len(decoded) > 0
    allowed = ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION()
    previous = None
    for position, instr in enumerate(decoded):
        assert instr.index == position
        assert instr.opname not in REMOVED and instr.opname in allowed
        # Groups: offsets never decrease; parts count up from 0 inside a group.
        if previous is None or instr.offset != previous.offset:
            assert instr.part == 0 and (previous is None or instr.offset > previous.offset)
        else:
            assert instr.part == previous.part + 1
        assert instr.offset < instr.end_offset <= len(code.co_code)
        previous = instr
        assert (instr.target is not None) == (instr.opname in JUMP_OPNAMES)
        if instr.target is not None:
            assert 0 <= instr.target < len(decoded) and decoded[instr.target].part == 0
        if instr.opname == "CALL":
            assert all(isinstance(n, str) for n in instr.kw_names)
            assert len(instr.kw_names) <= instr.argval
        else:
            assert instr.kw_names == ()
        if instr.opname in ("LOAD_ATTR", "LOAD_GLOBAL", "LOAD_FAST", "LOAD_CLOSURE"):
            assert isinstance(instr.argval, str)
        if instr.opname == "MAKE_FUNCTION":
            assert isinstance(instr.arg, int) and instr.arg == instr.argval
        if instr.handler is not None:
            assert decoded[instr.handler.target].part == 0
    for r in decoded.exception_ranges:
        assert all(decoded[i].handler == r.handler for i in range(r.start, r.end))


@pytest.mark.parametrize("code", SAMPLE_CODES, ids=CODE_IDS)
def test_stack_depths_match_cpython(code: types.CodeType) -> None:
    decoded = decode(code)
    theirs = cpython_depths(code)
    for i, d in normalised_depths(decoded).items():
        instr = decoded[i]
        assert instr.offset in theirs, f"{i} reachable only after normalisation"
        if instr.part == 0:
            assert d == theirs[instr.offset], (
                f"depth at {i} ({instr.opname}, offset {instr.offset}): normalised {d}, "
                f"CPython {theirs[instr.offset]}\n{format_decoded(decoded)}")
    # Every group, reachable or not (the loop end markers are not), moves the
    # stack as CPython's instructions over the same bytes do.
    for start in (i for i in decoded if i.part == 0):
        group = group_of(decoded, start)
        end = group[-1].end_offset
        if start.offset in theirs and end in theirs and group[-1].opname not in NO_FALLTHROUGH:
            after = theirs[start.offset] + sum(normalised_effect(x, False) for x in group)
            assert after == theirs[end], f"group at offset {start.offset}"


@pytest.mark.parametrize(("fn", "args"), RUNNABLE + TRACE_ONLY,
                         ids=RUN_IDS + [fn.__qualname__ for fn, _ in TRACE_ONLY])
def test_execution_follows_normalised_control_flow(fn: Callable[..., Any], args: tuple) -> None:
    decoded = decode(fn.__code__)
    visited = [decoded.index_at(o) for o in executed_offsets(fn, copy.deepcopy(args))]
    steps = [i for k, i in enumerate(visited) if k == 0 or visited[k - 1] != i]
    assert steps
    for here, there in zip(steps, steps[1:]):
        group = group_of(decoded, decoded[here])
        allowed = {x.target for x in group} | {x.handler.target for x in group if x.handler}
        assert there in allowed | {group[-1].index + 1}, (
            f"CPython went from {here} to {there}\n{format_decoded(decoded)}")


@pytest.mark.parametrize(("fn", "args"), RUNNABLE, ids=RUN_IDS)
def test_reference_interpreter_matches_python(fn: Callable[..., Any], args: tuple) -> None:
    native_args, our_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*native_args)
    got = interpret(fn, *our_args)
    assert got == expected and type(got) is type(expected)
    assert repr(our_args) == repr(native_args)  # same mutations of the arguments


def test_flags_match_dis_descriptions() -> None:
    # dis's argrepr spells the flags out ("NULL + f", "m + NULL|self", "bool(<)")
    # in CPython's stack order: an oracle independent of our bit reading.
    checked = 0
    for code in SAMPLE_CODES:
        raw = {ins.offset: ins for ins in dis.get_instructions(code)}
        for instr in decode(code):
            source = raw[instr.offset]
            if instr.opname == "LOAD_GLOBAL":
                assert instr.push_null == ("NULL" in source.argrepr)
            if instr.opname == "LOAD_ATTR":
                assert instr.method == ("NULL|self" in source.argrepr
                                        or source.opname == "LOAD_METHOD")
            if instr.opname == "COMPARE_OP":
                assert instr.to_bool == source.argrepr.startswith("bool(")
            if (instr.push_null or instr.method) and "NULL" in source.argrepr:
                assert instr.null_first == source.argrepr.startswith("NULL")
                checked += 1
    assert checked >= 5
    assert not any(i.null_first for i in decode(add.__code__))


# --- Exact normalised forms -----------------------------------------------------


def test_simple_sequences_are_version_independent() -> None:
    assert opnames(decode(add.__code__)) == ["LOAD_FAST", "LOAD_FAST", "BINARY_OP", "RETURN_VALUE"]
    assert [(i.opname, i.argval) for i in decode(swap.__code__)] == [
        ("LOAD_FAST", "b"), ("LOAD_FAST", "a"), ("STORE_FAST", "b"),
        ("STORE_FAST", "a"), ("LOAD_FAST", "a"), ("RETURN_VALUE", None)]
    cmp = decode(compare.__code__)
    assert opnames(cmp) == ["LOAD_FAST", "LOAD_FAST", "COMPARE_OP", "RETURN_VALUE"]
    assert cmp[2].argval == "<" and not cmp[2].to_bool
    const = decode(return_const.__code__)
    assert [(i.opname, i.argval) for i in const] == [("LOAD_CONST", 42), ("RETURN_VALUE", None)]


def test_calls_with_and_without_keywords() -> None:
    decoded = decode(calls.__code__)
    assert opnames(decoded) == [
        "LOAD_GLOBAL", "LOAD_FAST", "CALL", "LOAD_GLOBAL", "LOAD_FAST", "LOAD_CONST",
        "LOAD_CONST", "CALL", "BINARY_OP", "RETURN_VALUE"]
    assert all(i.argval == "helper" and i.push_null for i in decoded if i.opname == "LOAD_GLOBAL")
    assert [(i.argval, i.kw_names) for i in decoded if i.opname == "CALL"] == [
        (1, ()), (3, ("b", "c"))]
    for ins in dis.get_instructions(calls.__code__):  # every original CALL(_KW) maps to it
        if ins.opname in ("CALL", "CALL_KW"):
            assert decoded[decoded.index_at(ins.offset)].opname == "CALL"
    with pytest.raises(ValueError):
        decoded.index_at(10**6)


def test_method_calls_and_attribute_loads() -> None:
    decoded = decode(call_method.__code__)
    assert opnames(decoded) == [
        "LOAD_FAST", "LOAD_ATTR", "LOAD_CONST", "LOAD_CONST", "CALL", "RETURN_VALUE"]
    assert decoded[1].argval == "scale" and decoded[1].method
    assert decoded[4].argval == 2 and decoded[4].kw_names == ("bias",)
    loads = [(i.argval, i.method) for i in decode(attrs.__code__) if i.opname == "LOAD_ATTR"]
    assert loads == [("v", False), ("v", False), ("k", False)]
    supers = [i for i in decode(Child.scale.__code__) if i.method]
    assert [i.argval for i in supers] == ["scale"]


def test_slices() -> None:
    assert [(i.opname, i.argval) for i in decode(slices.__code__)] == [
        ("LOAD_FAST", "v"), ("LOAD_FAST", "a"), ("LOAD_CONST", 1), ("LOAD_CONST", 3),
        ("BUILD_SLICE", 2), ("STORE_SUBSCR", None),
        ("LOAD_FAST", "a"), ("LOAD_CONST", 1), ("LOAD_CONST", 3), ("BUILD_SLICE", 2),
        ("BINARY_SUBSCR", None), ("LOAD_FAST", "a"), ("LOAD_CONST", None),
        ("LOAD_CONST", None), ("LOAD_CONST", 2), ("BUILD_SLICE", 3),
        ("BINARY_SUBSCR", None), ("BUILD_TUPLE", 2), ("RETURN_VALUE", None)]


def test_for_loop_target_is_first_instruction_after_loop() -> None:
    decoded = decode(total.__code__)
    assert [decoded[i].opname for i in reachable(decoded)] == [
        "LOAD_CONST", "STORE_FAST", "LOAD_FAST", "GET_ITER", "FOR_ITER", "STORE_FAST",
        "LOAD_FAST", "LOAD_FAST", "BINARY_OP", "STORE_FAST", "JUMP", "LOAD_FAST",
        "RETURN_VALUE"]
    loop = next(i for i in decoded if i.opname == "FOR_ITER")
    after = decoded[loop.target]
    assert (after.opname, after.argval) == ("LOAD_FAST", "t")
    assert after.lineno == total.__code__.co_firstlineno + 4  # the return line
    # Whatever lies between the back jump and the target is the end marker.
    back = max(i.index for i in decoded if i.opname == "JUMP" and i.target == loop.index)
    assert all(decoded[k].opname == "POP_TOP" for k in range(back + 1, loop.target))


def test_nested_loops_break_continue_else() -> None:
    decoded = decode(nested_loops.__code__)
    outer, inner = [i for i in decoded if i.opname == "FOR_ITER"]
    assert decoded[inner.target].opname == "JUMP"
    assert decoded[inner.target].target == outer.index
    assert decoded[outer.target].opname == "LOAD_FAST"
    decoded = decode(for_break_continue.__code__)
    loop = next(i for i in decoded if i.opname == "FOR_ITER")
    # The for-else body (t = -t) starts at the exhaustion target.
    assert decoded[loop.target].lineno == for_break_continue.__code__.co_firstlineno + 9
    assert sum(1 for i in decoded if i.opname == "JUMP" and i.target == loop.index) >= 2


def test_fstring_conversions_and_specs() -> None:
    decoded = decode(fstrings.__code__)
    assert [i.argval for i in decoded if i.opname == "CONVERT_VALUE"] == ["repr", "str", "ascii"]
    assert sum(i.opname == "FORMAT_WITH_SPEC" for i in decoded) == 2
    assert sum(i.opname == "FORMAT_SIMPLE" for i in decoded) == 4  # incl. the nested {w}


def test_make_function_flags_and_closures() -> None:
    decoded = decode(closures.__code__)
    flags = []
    for instr in decoded:
        if instr.opname == "MAKE_FUNCTION":
            flags.append(instr.arg)
        elif instr.opname == "SET_FUNCTION_ATTRIBUTE":
            flags[-1] |= instr.argval
    # inner: defaults | kwdefaults | closure; the lambda: defaults | closure
    assert flags == [0b1011, 0b1001]
    assert [i.argval for i in decoded if i.opname == "LOAD_CLOSURE"] == ["a", "a"]


def test_intrinsics_and_comprehensions() -> None:
    names = opnames(decode(intrinsics.__code__))
    assert "UNARY_POSITIVE" in names and "LIST_TO_TUPLE" in names
    assert "CALL_INTRINSIC_1" not in names
    tree = {i.opname for c in all_codes(dict_set_gen.__code__) for i in decode(c)}
    assert {"MAP_ADD", "SET_ADD", "YIELD_VALUE", "FOR_ITER"} <= tree
    assert "LIST_APPEND" in {i.opname for c in all_codes(listcomp.__code__) for i in decode(c)}


def test_try_and_with_bodies_are_flagged() -> None:
    decoded = decode(try_except.__code__)
    first = try_except.__code__.co_firstlineno
    before = [i for i in decoded if i.lineno == first + 1]  # b = 0
    body = [i for i in decoded if i.lineno == first + 3]  # b = 10 // a
    assert before and not any(i.in_try for i in before)
    assert body and all(i.in_try for i in body)
    handler = body[0].handler
    assert decoded[handler.target].opname == "PUSH_EXC_INFO"
    assert handler.depth == 0 and not handler.lasti
    # 3.12+ also copy the return into the except path, where it is covered by a
    # cleanup handler; the normal path's copy comes first and is outside.
    final_return = [i for i in decoded if i.lineno == first + 8]
    assert final_return and not final_return[0].in_try
    decoded = decode(with_block.__code__)
    body = [i for i in decoded if i.lineno == with_block.__code__.co_firstlineno + 2]
    assert body and all(i.in_try for i in body)
    handler = body[0].handler
    assert decoded[handler.target].opname == "PUSH_EXC_INFO"
    assert handler.depth == 1 and handler.lasti  # __exit__ stays below


def test_extended_arg_is_folded_into_the_group() -> None:
    # Over 256 constants and locals: their opargs need EXTENDED_ARG prefixes.
    body = "".join(f"    v{k} = {k}.5\n" for k in range(300))
    namespace: dict[str, Any] = {}
    exec(f"def big(g):\n{body}    t = v299\n    return g(t, b='kw')\n", namespace)
    code = namespace["big"].__code__
    raw = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    assert any(i.opname == "EXTENDED_ARG" for i in raw)
    before = {b.offset: a.opname for a, b in zip(raw, raw[1:])}
    decoded = decode(code)
    assert all(before.get(i.offset) != "EXTENDED_ARG" for i in decoded if i.part == 0)
    call_instr = next(i for i in decoded if i.opname == "CALL")
    assert call_instr.kw_names == ("b",) and call_instr.argval == 2
    assert interpret(namespace["big"], lambda t, b: (t, b)) == (299.5, "kw")


def corrupt(code: types.CodeType, offset: int) -> types.CodeType:
    """``code`` with the instruction at ``offset`` replaced by a NOP."""
    raw = bytearray(code.co_code)
    raw[offset] = dis.opmap["NOP"]
    return code.replace(co_code=bytes(raw))


def test_keyword_call_without_names_is_rejected() -> None:
    raw = list(dis.get_instructions(calls.__code__))
    # Break the names/call pairing in whichever encoding this interpreter uses.
    if "CALL_KW" in dis.opmap:
        victim = next(i for i in raw if i.opname == "LOAD_CONST" and i.argval == ("b", "c"))
    else:
        victim = [i for i in raw if i.opname == "CALL"][-1]
    with pytest.raises(UnsupportedBytecode):
        decode(corrupt(calls.__code__, victim.offset))


@pytest.mark.skipif("END_FOR" not in dis.opmap, reason="no loop end marker before 3.12")
def test_missing_loop_end_marker_is_rejected() -> None:
    marker = next(i for i in dis.get_instructions(total.__code__) if i.opname == "END_FOR")
    with pytest.raises(UnsupportedBytecode, match="END_FOR"):
        decode(corrupt(total.__code__, marker.offset))


def test_all_normalised_opnames() -> None:
    names = ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION()
    assert {"CALL", "LOAD_ATTR", "JUMP", "POP_JUMP_IF_TRUE", "FOR_ITER", "CONVERT_VALUE",
            "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "LIST_TO_TUPLE", "UNARY_POSITIVE",
            "LOAD_CLOSURE", "BUILD_SLICE", "LOAD_FAST", "MAKE_FUNCTION"} <= names
    assert not names & REMOVED
    assert not any(n.startswith("INSTRUMENTED_") for n in names)
    assert "SETUP_FINALLY" not in names  # pseudo-ops never reach the executor


def test_format_decoded() -> None:
    decoded = decode(calls.__code__)
    lines = format_decoded(decoded).splitlines()
    assert "calls" in lines[0] and len(lines) == len(decoded) + 1
    assert "CALL" in lines[8] and "kw=('b', 'c')" in lines[8]
    assert "+null" in lines[1]
    loop = format_decoded(decode(total.__code__))
    assert "FOR_ITER" in loop and "-> " in loop


def test_a_decoding_is_kept_by_identity_and_keeps_nothing_alive(monkeypatch) -> None:
    import weakref

    from capture import instructions

    runs = []
    real = instructions._Decoder.run
    monkeypatch.setattr(instructions._Decoder, "run", lambda self: runs.append(1) or real(self))
    src = "def f(a):\n    return (a + 1, lambda: a)\n"
    # f's code object from two files: equal, not the same (code objects hold no
    # reference cycle, so dropping the last reference frees one at once)
    c1, c2 = (next(c for c in compile(src, name, "exec").co_consts
                   if isinstance(c, types.CodeType)) for name in ("<one>", "<two>"))
    assert c1 == c2 and c1 is not c2
    first = decode(c1)
    assert decode(c1).instructions is first.instructions and len(runs) == 1   # kept
    second = decode(c2)
    assert len(runs) == 2 and second.code is c2   # an equal code object is decoded for itself
    nested = [i.argval for i in second if isinstance(i.argval, types.CodeType)]
    assert nested and all(c.co_filename == "<two>" for c in nested)
    ref = weakref.ref(c1)
    del c1, first
    assert ref() is None, "a kept decoding keeps its code object alive"
