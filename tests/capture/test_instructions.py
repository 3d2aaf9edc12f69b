"""Tests for capture.instructions: the normalised instruction stream.

Every expectation here is version-independent; the same file runs on CPython
3.11, 3.12 and 3.13.  Besides exact opname sequences for small functions, three
cross-checks tie the normalised stream to what CPython really does:

* stack depths: a flow analysis with the normalised stack contract must agree
  with CPython's own ``dis.stack_effect`` analysis of the original bytecode at
  every group start (this validates FOR_ITER targets, the slice and f-string
  rewrites, call folding and the exception-table mapping);
* execution traces: the offsets CPython executes (``sys.monitoring`` or opcode
  tracing) must follow the normalised control flow edge by edge;
* a small reference interpreter of the normalised stream must return what the
  function returns natively.
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

# --- Sample functions ---------------------------------------------------------


def helper(a, b=0, *, c=0):
    return a * 100 + b * 10 + c


class Box:
    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return f"Box({self.v!r})"

    def scale(self, k, *, bias=0):
        return self.v * k + bias


def add(a, b):
    return a + b


def return_const():
    return 42


def call_plain(a):
    return helper(a)


def call_kw(a):
    return helper(a, b=2, c=3)


def call_method(box):
    return box.scale(2, bias=1)


def call_builtin_method(xs):
    xs.append(4)
    return len(xs)


def call_parenthesised(f, x):
    return (f)(x) + (f)(a=x)


def attr_load(box):
    return box.v + 1


def store_attr_aug(box):
    box.v += 5
    return box.v


def compare(a, b):
    return a < b


def compare_chain(a, b, c):
    return a < b, a < b < c, a == b, a != c, a >= c


def identity_membership(a, xs):
    return a is None, a is not None, a in xs, a not in xs


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
    i = 0
    t = 0
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


def slice_load(a):
    return a[1:3]


def slice_store(a, v):
    a[1:3] = v


def slices(a, v):
    a[1:3] = v
    return a[1:], a[:2], a[::2]


def swap(a, b):
    a, b = b, a
    return a


def unpacking(t):
    a, b = t[0], t[1]
    a, b = b, a
    x, *y, z = t
    return a, b, x, y, z


def aug_assign(xs, n):
    n += 2
    n *= 3
    xs[0] += n
    return n, xs


def is_none(a):
    return a is None


def listcomp(xs):
    return [x * 2 for x in xs if x % 2]


def intrinsics(a):
    return +a, (*range(a),)


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


class Child(Box):
    def scale(self, k, *, bias=0):
        return super().scale(k, bias=bias) + 1


# Runnable samples and their arguments: used by the trace and interpreter tests.
RUNNABLE: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (add, (2, 3)),
    (return_const, ()),
    (call_plain, (7,)),
    (call_kw, (1,)),
    (call_method, (Box(5),)),
    (call_builtin_method, ([1, 2],)),
    (call_parenthesised, (helper, 3)),
    (attr_load, (Box(4),)),
    (store_attr_aug, (Box(4),)),
    (compare, (1, 2)),
    (compare_chain, (1, 2, 3)),
    (compare_chain, (3, 2, 1)),
    (identity_membership, (2, [1, 2])),
    (identity_membership, (None, [1])),
    (branches, (None,)),
    (branches, (11,)),
    (branches, (0,)),
    (branches, (5,)),
    (while_loop, (5,)),
    (total, ([1, 2, 3],)),
    (for_break_continue, ([1, -2, 3],)),
    (for_break_continue, ([1, 200, 3],)),
    (nested_loops, (4,)),
    (fstrings, ("ab", 6)),
    (fstrings, (3.5, 8)),
    (slice_load, ([0, 1, 2, 3],)),
    (slice_store, ([0, 1, 2, 3], ["x"])),
    (slices, ([0, 1, 2, 3, 4], ["x", "y", "z"])),
    (swap, (1, 2)),
    (unpacking, ((1, 2, 3, 4),)),
    (aug_assign, ([1, 2], 3)),
    (is_none, (None,)),
    (listcomp, ([1, 2, 3, 5],)),
    (intrinsics, (3,)),
]
# Run natively only (trace test): the reference interpreter skips them.
TRACE_ONLY: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
    (dict_set_gen, ([1, 2, 2],)),
    (closures, (10,)),
    (try_except, (0,)),
    (try_except, (5,)),
    (with_block, (contextlib.nullcontext(5),)),
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


def code_id(code: types.CodeType) -> str:
    return code.co_qualname


def opnames(decoded: Decoded) -> list[str]:
    return [i.opname for i in decoded]


# --- Flow helpers ---------------------------------------------------------------

JUMP_OPNAMES = {
    "JUMP", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE",
    "POP_JUMP_IF_NOT_NONE", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP",
    "FOR_ITER", "SEND",
}
NO_FALLTHROUGH = {"JUMP", "RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}


def successors(decoded: Decoded, i: int) -> list[tuple[int, bool]]:
    """(index, taken-jump?) pairs control can reach from instruction ``i``."""
    instr = decoded[i]
    found = []
    if instr.target is not None:
        found.append((instr.target, True))
    if instr.opname not in NO_FALLTHROUGH and i + 1 < len(decoded):
        found.append((i + 1, False))
    return found


def reachable(decoded: Decoded) -> list[int]:
    seen, work = set(), [0]
    while work:
        i = work.pop()
        if i in seen:
            continue
        seen.add(i)
        work.extend(j for j, _ in successors(decoded, i))
        if decoded[i].handler is not None:
            work.append(decoded[i].handler.target)
    return sorted(seen)


# Normalised stack contract (module docstring); other opnames are unchanged
# from CPython and use dis.stack_effect.
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


def normalised_effect(instr: Instruction, jump: bool) -> int:
    name = instr.opname
    if name in FIXED_EFFECT:
        return FIXED_EFFECT[name]
    if name == "CALL":
        return -instr.argval - 1
    if name == "LOAD_GLOBAL":
        return 1 + instr.push_null
    if name == "LOAD_ATTR":
        return int(instr.method)
    if name == "LOAD_SUPER_ATTR":
        return -2 + instr.method
    if name == "FOR_ITER":
        return -1 if jump else 1
    if name == "BUILD_SLICE":
        return 1 - instr.argval
    if name == "MAKE_FUNCTION":
        return -bin(instr.arg).count("1")
    if name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        return 0 if jump else -1
    return dis.stack_effect(dis.opmap[name], instr.arg, jump=jump)


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
        instr = decoded[i]
        if instr.handler is not None:
            h = instr.handler
            work.append((h.target, h.depth + h.lasti + 1))
        for j, jump in successors(decoded, i):
            work.append((j, d + normalised_effect(instr, jump)))
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
    entries = dis.Bytecode(code).exception_entries
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
        try:
            monitoring.register_callback(
                tool, monitoring.events.INSTRUCTION,
                lambda c, offset: seen.append(offset) if c is code else None)
            monitoring.set_local_events(tool, code, monitoring.events.INSTRUCTION)
            fn(*args)
        finally:
            monitoring.set_local_events(tool, code, 0)
            monitoring.register_callback(tool, monitoring.events.INSTRUCTION, None)
            monitoring.free_tool_id(tool)
    else:  # 3.11: opcode tracing

        def tracer(frame: types.FrameType, event: str, arg: object) -> Any:
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


# --- A reference interpreter of the normalised stream ---------------------------

NULL = object()
BINARY = {0: operator.add, 5: operator.mul, 6: operator.mod, 10: operator.sub,
          13: operator.iadd, 18: operator.imul, 23: operator.isub}
COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq,
           "!=": operator.ne, ">": operator.gt, ">=": operator.ge}
CONVERT = {"str": str, "repr": repr, "ascii": ascii}
POP_JUMPS = {
    "POP_JUMP_IF_TRUE": lambda v: bool(v), "POP_JUMP_IF_FALSE": lambda v: not v,
    "POP_JUMP_IF_NONE": lambda v: v is None, "POP_JUMP_IF_NOT_NONE": lambda v: v is not None,
}


def push_with_null(stack: list[Any], instr: Instruction, value: Any) -> None:
    stack.extend((NULL, value) if instr.null_first else (value, NULL))


def pop_n(stack: list[Any], n: int) -> list[Any]:
    items = stack[len(stack) - n:]
    del stack[len(stack) - n:]
    return items


def interpret(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn`` by executing its normalised instructions (subset of opnames)."""
    code = fn.__code__
    decoded = decode(code)
    fast: dict[str, Any] = dict(zip(code.co_varnames, args))
    stack: list[Any] = []
    i = 0
    while True:
        instr = decoded[i]
        i += 1
        op, arg, argval = instr.opname, instr.arg, instr.argval
        if op in ("LOAD_FAST", "LOAD_CONST"):
            stack.append(fast[argval] if op == "LOAD_FAST" else argval)
        elif op == "LOAD_FAST_AND_CLEAR":
            stack.append(fast.pop(argval, NULL))
        elif op == "STORE_FAST":
            value = stack.pop()
            if value is NULL:
                fast.pop(argval, None)
            else:
                fast[argval] = value
        elif op == "LOAD_GLOBAL":
            value = fn.__globals__.get(argval, getattr(builtins, argval, None))
            push_with_null(stack, instr, value) if instr.push_null else stack.append(value)
        elif op == "LOAD_ATTR":
            owner = stack.pop()
            found = getattr(type(owner), argval, None)
            if instr.method and isinstance(found, types.FunctionType):
                stack.extend((found, owner))  # CPython's unbound-method form
            elif instr.method:
                push_with_null(stack, instr, getattr(owner, argval))
            else:
                stack.append(getattr(owner, argval))
        elif op == "STORE_ATTR":
            owner, value = stack.pop(), stack.pop()
            setattr(owner, argval, value)
        elif op == "PUSH_NULL":
            stack.append(NULL)
        elif op == "CALL":
            call_args = pop_n(stack, argval)
            second, first = stack.pop(), stack.pop()
            if first is NULL:
                func = second
            elif second is NULL:
                func = first
            else:
                func, call_args = first, [second, *call_args]
            split = len(call_args) - len(instr.kw_names)
            kwargs = dict(zip(instr.kw_names, call_args[split:]))
            stack.append(func(*call_args[:split], **kwargs))
        elif op == "MAKE_FUNCTION" and arg == 0:
            stack.append(types.FunctionType(stack.pop(), fn.__globals__))
        elif op == "BINARY_OP":
            right = stack.pop()
            stack.append(BINARY[arg](stack.pop(), right))
        elif op == "COMPARE_OP":
            right = stack.pop()
            result = COMPARE[argval](stack.pop(), right)
            stack.append(bool(result) if instr.to_bool else result)
        elif op in ("IS_OP", "CONTAINS_OP"):
            right, left = stack.pop(), stack.pop()
            result = left is right if op == "IS_OP" else left in right
            stack.append(result != bool(arg))
        elif op == "TO_BOOL":
            stack.append(bool(stack.pop()))
        elif op == "UNARY_NOT":
            stack.append(not stack.pop())
        elif op == "UNARY_POSITIVE":
            stack.append(+stack.pop())
        elif op == "UNARY_NEGATIVE":
            stack.append(-stack.pop())
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
        elif op == "GET_ITER":
            stack.append(iter(stack.pop()))
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
        elif op in ("BUILD_TUPLE", "BUILD_LIST"):
            items = pop_n(stack, arg)
            stack.append(tuple(items) if op == "BUILD_TUPLE" else items)
        elif op == "BUILD_STRING":
            stack.append("".join(pop_n(stack, arg)))
        elif op == "CONVERT_VALUE":
            stack.append(CONVERT[argval](stack.pop()))
        elif op == "FORMAT_SIMPLE":
            stack.append(format(stack.pop(), ""))
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
        elif op == "LIST_TO_TUPLE":
            stack.append(tuple(stack.pop()))
        elif op == "UNPACK_SEQUENCE":
            stack.extend(reversed(list(stack.pop())))
        elif op == "UNPACK_EX":
            items, before, after = list(stack.pop()), arg & 0xFF, arg >> 8
            middle = items[before:len(items) - after]
            stack.extend(reversed([*items[:before], middle, *items[len(items) - after:]]))
        else:
            raise NotImplementedError(f"reference interpreter: {op}")


# --- Structure ------------------------------------------------------------------

REMOVED = {
    "CACHE", "EXTENDED_ARG", "PRECALL", "NOP", "RESUME", "KW_NAMES", "CALL_KW",
    "LOAD_METHOD", "RETURN_CONST", "BINARY_SLICE", "STORE_SLICE", "LOAD_FAST_CHECK",
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST",
    "FORMAT_VALUE", "END_FOR", "JUMP_FORWARD", "JUMP_BACKWARD",
    "JUMP_BACKWARD_NO_INTERRUPT", "POP_JUMP_FORWARD_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE",
}


@pytest.mark.parametrize("code", SAMPLE_CODES, ids=code_id)
def test_structure(code: types.CodeType) -> None:
    decoded = decode(code)
    assert len(decoded) > 0
    allowed = ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION()
    previous_offset = -1
    for position, instr in enumerate(decoded):
        assert instr.index == position
        assert instr.opname not in REMOVED
        assert instr.opname in allowed
        # Groups: offsets never decrease, parts count up from 0 inside a group.
        assert instr.offset >= previous_offset
        assert instr.part == (0 if instr.offset != previous_offset else decoded[position - 1].part + 1)
        assert instr.offset < instr.end_offset <= len(code.co_code)
        previous_offset = instr.offset
        assert (instr.target is not None) == (instr.opname in JUMP_OPNAMES)
        if instr.target is not None:
            assert 0 <= instr.target < len(decoded)
            assert decoded[instr.target].part == 0
        if instr.opname == "CALL":
            assert all(isinstance(n, str) for n in instr.kw_names)
            assert len(instr.kw_names) <= instr.argval
        else:
            assert instr.kw_names == ()
        if instr.opname == "COMPARE_OP":
            assert instr.argval in dis.cmp_op
        if instr.opname in ("LOAD_ATTR", "LOAD_GLOBAL", "LOAD_FAST", "LOAD_CLOSURE"):
            assert isinstance(instr.argval, str)
        if instr.opname == "CONVERT_VALUE":
            assert instr.argval in ("str", "repr", "ascii")
        if instr.opname == "CALL_INTRINSIC_1":
            assert instr.argval not in ("INTRINSIC_LIST_TO_TUPLE", "INTRINSIC_UNARY_POSITIVE")
        if instr.opname == "MAKE_FUNCTION":
            assert isinstance(instr.arg, int) and instr.arg == instr.argval
        if instr.handler is not None:
            assert decoded[instr.handler.target].part == 0
    for r in decoded.exception_ranges:
        assert all(decoded[i].handler == r.handler for i in range(r.start, r.end))


@pytest.mark.parametrize("code", SAMPLE_CODES, ids=code_id)
def test_stack_depths_match_cpython(code: types.CodeType) -> None:
    decoded = decode(code)
    ours = normalised_depths(decoded)
    theirs = cpython_depths(code)
    for i, d in ours.items():
        instr = decoded[i]
        assert instr.offset in theirs, f"{i} reachable only after normalisation"
        if instr.part == 0:
            assert d == theirs[instr.offset], (
                f"depth at {i} ({instr.opname}, offset {instr.offset}): normalised {d}, "
                f"CPython {theirs[instr.offset]}\n{format_decoded(decoded)}")


@pytest.mark.parametrize(("fn", "args"), RUNNABLE + TRACE_ONLY,
                         ids=lambda v: getattr(v, "__qualname__", ""))
def test_execution_follows_normalised_control_flow(fn: Callable[..., Any], args: tuple) -> None:
    decoded = decode(fn.__code__)
    visited = [decoded.index_at(o) for o in executed_offsets(fn, copy.deepcopy(args))]
    steps = [i for k, i in enumerate(visited) if k == 0 or visited[k - 1] != i]
    assert steps
    for here, there in zip(steps, steps[1:]):
        group = [x for x in decoded if x.offset == decoded[here].offset]
        allowed = {x.target for x in group} | {x.handler.target for x in group if x.handler}
        allowed.add(group[-1].index + 1)
        assert there in allowed, (
            f"CPython went from {here} to {there}\n{format_decoded(decoded)}")


@pytest.mark.parametrize(("fn", "args"), RUNNABLE, ids=lambda v: getattr(v, "__qualname__", ""))
def test_reference_interpreter_matches_python(fn: Callable[..., Any], args: tuple) -> None:
    native_args, our_args = copy.deepcopy(args), copy.deepcopy(args)
    expected = fn(*native_args)
    got = interpret(fn, *our_args)
    assert got == expected and type(got) is type(expected)
    assert repr(our_args) == repr(native_args)  # same mutations of the arguments


# --- Exact normalised sequences --------------------------------------------------


def reachable_opnames(decoded: Decoded) -> list[str]:
    return [decoded[i].opname for i in reachable(decoded)]


def test_simple_sequences_are_version_independent() -> None:
    assert opnames(decode(add.__code__)) == ["LOAD_FAST", "LOAD_FAST", "BINARY_OP", "RETURN_VALUE"]
    assert opnames(decode(is_none.__code__)) == ["LOAD_FAST", "LOAD_CONST", "IS_OP", "RETURN_VALUE"]
    swapped = decode(swap.__code__)
    assert [(i.opname, i.argval) for i in swapped] == [
        ("LOAD_FAST", "b"), ("LOAD_FAST", "a"), ("STORE_FAST", "b"),
        ("STORE_FAST", "a"), ("LOAD_FAST", "a"), ("RETURN_VALUE", None)]
    cmp = decode(compare.__code__)
    assert opnames(cmp) == ["LOAD_FAST", "LOAD_FAST", "COMPARE_OP", "RETURN_VALUE"]
    assert cmp[2].argval == "<" and not cmp[2].to_bool


def test_return_const() -> None:
    decoded = decode(return_const.__code__)
    assert [(i.opname, i.argval) for i in decoded] == [("LOAD_CONST", 42), ("RETURN_VALUE", None)]
    assert decoded[0].lineno == decoded[1].lineno == return_const.__code__.co_firstlineno + 1


def test_calls_with_keywords() -> None:
    decoded = decode(call_kw.__code__)
    assert opnames(decoded) == [
        "LOAD_GLOBAL", "LOAD_FAST", "LOAD_CONST", "LOAD_CONST", "CALL", "RETURN_VALUE"]
    load, call = decoded[0], decoded[4]
    assert load.argval == "helper" and load.push_null
    assert call.argval == 3 and call.kw_names == ("b", "c")
    plain = decode(call_plain.__code__)
    assert [i.kw_names for i in plain if i.opname == "CALL"] == [()]


def test_method_calls_and_attribute_loads() -> None:
    decoded = decode(call_method.__code__)
    assert opnames(decoded) == [
        "LOAD_FAST", "LOAD_ATTR", "LOAD_CONST", "LOAD_CONST", "CALL", "RETURN_VALUE"]
    assert decoded[1].argval == "scale" and decoded[1].method
    assert decoded[4].argval == 2 and decoded[4].kw_names == ("bias",)
    attr = decode(attr_load.__code__)
    assert opnames(attr) == ["LOAD_FAST", "LOAD_ATTR", "LOAD_CONST", "BINARY_OP", "RETURN_VALUE"]
    assert attr[1].argval == "v" and not attr[1].method and not attr[1].null_first


def test_null_position_flag_is_consistent() -> None:
    # null_first is the same for every NULL-pushing load on one interpreter.
    flags = {i.null_first for fn in SAMPLES for c in all_codes(fn.__code__)
             for i in decode(c) if i.push_null or i.method}
    assert len(flags) == 1
    assert not any(i.null_first for i in decode(add.__code__))


def test_slices() -> None:
    assert opnames(decode(slice_load.__code__)) == [
        "LOAD_FAST", "LOAD_CONST", "LOAD_CONST", "BUILD_SLICE", "BINARY_SUBSCR", "RETURN_VALUE"]
    store = decode(slice_store.__code__)
    assert [(i.opname, i.argval) for i in store] == [
        ("LOAD_FAST", "v"), ("LOAD_FAST", "a"), ("LOAD_CONST", 1), ("LOAD_CONST", 3),
        ("BUILD_SLICE", 2), ("STORE_SUBSCR", None), ("LOAD_CONST", None),
        ("RETURN_VALUE", None)]


def test_for_loop_target_is_first_instruction_after_loop() -> None:
    decoded = decode(total.__code__)
    assert reachable_opnames(decoded) == [
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


def test_nested_loop_exhaustion_returns_to_outer_loop() -> None:
    decoded = decode(nested_loops.__code__)
    outer, inner = [i for i in decoded if i.opname == "FOR_ITER"]
    assert decoded[inner.target].opname == "JUMP"
    assert decoded[inner.target].target == outer.index
    assert decoded[outer.target].opname == "LOAD_FAST"


def test_break_continue_and_else() -> None:
    decoded = decode(for_break_continue.__code__)
    loop = next(i for i in decoded if i.opname == "FOR_ITER")
    # The for-else body (t = -t) starts at the exhaustion target.
    assert decoded[loop.target].lineno == for_break_continue.__code__.co_firstlineno + 9
    assert sum(1 for i in decoded if i.opname == "JUMP" and i.target == loop.index) >= 2


def test_fstring_conversions_and_specs() -> None:
    decoded = decode(fstrings.__code__)
    conversions = [i.argval for i in decoded if i.opname == "CONVERT_VALUE"]
    assert conversions == ["repr", "str", "ascii"]
    assert sum(i.opname == "FORMAT_WITH_SPEC" for i in decoded) == 2
    assert sum(i.opname == "FORMAT_SIMPLE" for i in decoded) == 4  # incl. the nested {w}


def test_make_function_flags() -> None:
    decoded = decode(closures.__code__)
    flags = []
    for instr in decoded:
        if instr.opname == "MAKE_FUNCTION":
            flags.append(instr.arg)
        elif instr.opname == "SET_FUNCTION_ATTRIBUTE":
            flags[-1] |= instr.argval
    assert flags == [0b1011, 0b1001]  # inner: defaults, kwdefaults, closure; lambda: defaults, closure
    closures_loaded = [i.argval for i in decoded if i.opname == "LOAD_CLOSURE"]
    assert closures_loaded == ["a", "a"]


def test_intrinsics_become_plain_opcodes() -> None:
    names = opnames(decode(intrinsics.__code__))
    assert "UNARY_POSITIVE" in names and "LIST_TO_TUPLE" in names
    assert "CALL_INTRINSIC_1" not in names


def test_comprehensions() -> None:
    tree = [i for c in all_codes(dict_set_gen.__code__) for i in decode(c)]
    names = {i.opname for i in tree}
    assert {"MAP_ADD", "SET_ADD", "YIELD_VALUE", "FOR_ITER"} <= names
    lists = [i for c in all_codes(listcomp.__code__) for i in decode(c)]
    assert any(i.opname == "LIST_APPEND" for i in lists)


def test_try_body_is_flagged() -> None:
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


def test_with_body_is_flagged() -> None:
    decoded = decode(with_block.__code__)
    body = [i for i in decoded if i.lineno == with_block.__code__.co_firstlineno + 2]
    assert body and all(i.in_try for i in body)
    handler = body[0].handler
    assert decoded[handler.target].opname == "PUSH_EXC_INFO"
    assert handler.depth == 1 and handler.lasti  # __exit__ stays below


def test_super_attribute_loads() -> None:
    names = opnames(decode(Child.scale.__code__))
    assert "CALL" in names
    methods = [i for i in decode(Child.scale.__code__) if i.method]
    assert [i.argval for i in methods] == ["scale"]


def test_extended_arg_is_folded_into_the_group() -> None:
    # Over 256 constants and locals: their opargs need EXTENDED_ARG prefixes.
    body = "".join(f"    v{k} = {k}.5\n" for k in range(300))
    source = f"def big(g):\n{body}    t = v299\n    return g(t, b='kw')\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, "<big>", "exec"), namespace)
    code = namespace["big"].__code__
    decoded = decode(code)
    raw = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    before = {b.offset: a.opname for a, b in zip(raw, raw[1:])}
    assert any(i.opname == "EXTENDED_ARG" for i in raw)
    for instr in decoded:
        if instr.part == 0:
            assert before.get(instr.offset) != "EXTENDED_ARG"
    call = next(i for i in decoded if i.opname == "CALL")
    assert call.kw_names == ("b",) and call.argval == 2
    assert interpret(namespace["big"], lambda t, b: (t, b)) == (299.5, "kw")


def corrupt(code: types.CodeType, offset: int) -> types.CodeType:
    """``code`` with the instruction at ``offset`` replaced by a NOP."""
    raw = bytearray(code.co_code)
    raw[offset] = dis.opmap["NOP"]
    return code.replace(co_code=bytes(raw))


def test_keyword_call_without_names_is_rejected() -> None:
    code = call_kw.__code__
    raw = list(dis.get_instructions(code))
    # Break the names/call pairing in whichever encoding this interpreter uses.
    if "CALL_KW" in dis.opmap:
        victim = next(i for i in raw if i.opname == "LOAD_CONST" and i.argval == ("b", "c"))
    else:
        victim = next(i for i in raw if i.opname == "CALL")
    with pytest.raises(UnsupportedBytecode):
        decode(corrupt(code, victim.offset))


@pytest.mark.skipif("END_FOR" not in dis.opmap, reason="no loop end marker before 3.12")
def test_missing_loop_end_marker_is_rejected() -> None:
    code = total.__code__
    marker = next(i for i in dis.get_instructions(code) if i.opname == "END_FOR")
    with pytest.raises(UnsupportedBytecode, match="END_FOR"):
        decode(corrupt(code, marker.offset))


def test_unknown_opcodes_pass_through() -> None:
    # Decoding never rejects an opcode just because no handler knows it.
    names = opnames(decode(with_block.__code__))
    assert "BEFORE_WITH" in names or "LOAD_SPECIAL" in names


def test_all_normalised_opnames() -> None:
    names = ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION()
    assert {"CALL", "LOAD_ATTR", "JUMP", "POP_JUMP_IF_TRUE", "FOR_ITER", "CONVERT_VALUE",
            "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "LIST_TO_TUPLE", "UNARY_POSITIVE",
            "LOAD_CLOSURE", "BUILD_SLICE", "LOAD_FAST", "MAKE_FUNCTION"} <= names
    assert not names & REMOVED
    assert not any(n.startswith("INSTRUMENTED_") for n in names)
    assert "SETUP_FINALLY" not in names  # pseudo-ops never reach the executor


def test_format_decoded() -> None:
    decoded = decode(call_kw.__code__)
    text = format_decoded(decoded)
    lines = text.splitlines()
    assert "call_kw" in lines[0]
    assert len(lines) == len(decoded) + 1
    assert "kw=('b', 'c')" in lines[5] and "CALL" in lines[5]
    loop = format_decoded(decode(total.__code__))
    assert "FOR_ITER" in loop and "-> " in loop


def test_decoded_mapping() -> None:
    decoded = decode(call_kw.__code__)
    for ins in dis.get_instructions(call_kw.__code__):
        if ins.opname == "CALL" or ins.opname == "CALL_KW":
            assert decoded[decoded.index_at(ins.offset)].opname == "CALL"
    with pytest.raises(ValueError):
        decoded.index_at(10**6)
