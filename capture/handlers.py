"""Opcode handlers, one per normalised opcode, in one table (``HANDLERS``).

Handlers are version-neutral: ``instructions.decode`` has already folded
PRECALL/KW_NAMES/CALL_KW into ``CALL`` (with ``kw_names``), LOAD_METHOD into
``LOAD_ATTR`` (``method``), RETURN_CONST into LOAD_CONST + RETURN_VALUE,
BINARY_SLICE into BUILD_SLICE + BINARY_SUBSCR, and normalised jumps.  NULL is
an explicit stack marker: the call handlers treat whichever of the two slots
below the arguments is NULL as absent, which covers both the 3.11/3.12
``[NULL, callable]`` and the 3.13 ``[callable, NULL]`` layouts.

A handler also declares what a graph break before its instruction does
(``on_break``, the table ``ON_BREAK``): a function of a ``breaks.BreakEnd``
and the instruction that takes the instruction's operands off the stack, runs
it natively in the entry and names the continuations.  It sits next to the
handler and decodes the stack with the handler's own helpers; an instruction
without a declaration gets no break (``breaks.can_break_at``).
"""
from __future__ import annotations

import abc
import builtins
import inspect
import operator
import sys
import types

from .errors import HINTS, Unsupported, UserCodeRaises
from .side_effects import DELETED
from .sources import GlobalSource
from .variables.base import NULL, ConstantVariable, NullVariable, TensorVariable, Variable
from .variables.callables import UserFunctionVariable
from .variables.containers import (DictVariable, GeneratorVariable, ListVariable, SetVariable,
                                   SliceVariable, TupleVariable, unpack_constant_key)
from .variables.flow import (ExceptionVariable, TracebackVariable, chained_raise, exception_classes,
                             raise_exception, stop_iteration_error)
from .variables.objects import SuperVariable
from .variables.scalars import ScalarVariable

__all__ = ["HANDLERS", "ON_BREAK", "BINARY_OPS"]

HANDLERS: dict = {}
ON_BREAK: dict = {}   # opname -> break declaration (see the module docstring)


def handler(*names, on_break=None):
    """Register ``fn`` as the handler of the opcodes ``names`` and, with
    ``on_break``, the break declaration of each (decorators stack: opcodes that
    share a handler can declare different breaks)."""
    def deco(fn):
        for n in names:
            HANDLERS[n] = fn
            if on_break is not None:
                ON_BREAK[n] = on_break
        return fn
    return deco


# -- stack and no-ops ------------------------------------------------------------------------

@handler("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL")
def _nop(tx, instr):
    pass


@handler("POP_TOP")
def POP_TOP(tx, instr):
    tx.pop()


@handler("PUSH_NULL")
def PUSH_NULL(tx, instr):
    tx.push(NULL)


@handler("COPY")
def COPY(tx, instr):
    tx.push(tx.stack[-instr.arg])


@handler("SWAP")
def SWAP(tx, instr):
    i = instr.arg
    tx.stack[-1], tx.stack[-i] = tx.stack[-i], tx.stack[-1]


# -- loads and stores -----------------------------------------------------------------------

@handler("LOAD_CONST")
def LOAD_CONST(tx, instr):
    value = instr.argval
    if isinstance(value, (types.CodeType, frozenset)):
        tx.push(ConstantVariable(value))
    else:
        tx.push(tx.wrap_result(value))


@handler("LOAD_FAST")
def LOAD_FAST(tx, instr):
    name = instr.argval
    try:
        tx.push(tx.locals[name])
    except KeyError:
        raise UserCodeRaises(f"local variable {name!r} referenced before assignment") from None


@handler("LOAD_FAST_AND_CLEAR")
def LOAD_FAST_AND_CLEAR(tx, instr):
    tx.push(tx.locals.pop(instr.argval, NULL))


@handler("STORE_FAST")
def STORE_FAST(tx, instr):
    value = tx.pop()
    if isinstance(value, NullVariable):
        tx.locals.pop(instr.argval, None)  # restoring an unbound comprehension variable
    else:
        tx.locals[instr.argval] = value


@handler("DELETE_FAST")
def DELETE_FAST(tx, instr):
    if tx.locals.pop(instr.argval, None) is None:
        raise UserCodeRaises(f"UnboundLocalError: {instr.argval!r} deleted before assignment")


def _with_null(instr, value, with_null: bool) -> list:
    """``value`` and, when the instruction pushes one, a NULL where CPython
    puts it (below on 3.11/3.12, above on 3.13): a graph break rebuilds the
    real stack from the virtual one."""
    if not with_null:
        return [value]
    return [NULL, value] if instr.null_first else [value, NULL]


def _push_with_null(tx, instr, value: Variable, with_null: bool) -> None:
    tx.stack.extend(_with_null(instr, value, with_null))


@handler("LOAD_GLOBAL")
def LOAD_GLOBAL(tx, instr):
    value = tx.load_global(instr.argval)
    _push_with_null(tx, instr, value, getattr(instr, "push_null", False))


@handler("STORE_GLOBAL")
def STORE_GLOBAL(tx, instr):
    tx.globals_ref()  # (guards that this frame's globals are the dict the replay writes)
    tx.side_effects.store_global(tx.f_globals, instr.argval, tx.pop())


@handler("DELETE_GLOBAL")
def DELETE_GLOBAL(tx, instr):
    """``del name`` of a global (after ``global name``): recorded like a store,
    replayed as ``del``; a later load finds the builtin or raises NameError."""
    name = instr.argval
    tx.globals_ref()
    pending = tx.side_effects.pending_global(tx.f_globals, name)
    if pending is DELETED or (pending is None and name not in tx.f_globals):
        message = f"name {name!r} is not defined"
        raise UserCodeRaises(f"NameError: {message}", exc=NameError(message))
    if pending is None:
        tx.load_global(name)   # (guards the global the native run deletes)
    tx.side_effects.store_global(tx.f_globals, name, DELETED)


@handler("LOAD_DEREF", "LOAD_CLASSDEREF")
def LOAD_DEREF(tx, instr):
    tx.push(tx.load_cell(instr.argval))


@handler("STORE_DEREF")
def STORE_DEREF(tx, instr):
    cell = tx.cells.get(instr.argval)
    if cell is None or not cell.writable:
        raise Unsupported("side_effect", f"assignment to the closure variable {instr.argval!r} of "
                                         f"an enclosing function")
    cell.value = tx.pop()
    if cell.real is not None:   # a real cell of the frame: its contents are written back
        tx.tr.side_effects.cells[id(cell)] = cell


@handler("LOAD_CLOSURE")
def LOAD_CLOSURE(tx, instr):
    cell = tx.cells.get(instr.argval)
    if cell is None:
        raise Unsupported("unsupported_opcode", f"LOAD_CLOSURE of unknown cell {instr.argval!r}")
    tx.push(ConstantVariable(cell))  # a symbolic cell, consumed by MAKE_FUNCTION


def _load_attr_break(end, instr):
    """The entry loads the attribute natively (a property, a data-dependent value)."""
    (obj,) = end.operands(1)
    value = end.run(f"{end.expr(obj)}.{instr.argval}")
    end.resume(end.next, _with_null(instr, value, getattr(instr, "method", False)))


@handler("LOAD_ATTR", on_break=_load_attr_break)
def LOAD_ATTR(tx, instr):
    obj = tx.pop()
    value = tx.getattr(obj, instr.argval)
    _push_with_null(tx, instr, value, getattr(instr, "method", False))


@handler("DELETE_ATTR")
def DELETE_ATTR(tx, instr):
    tx.pop().delattr(tx, instr.argval)


@handler("STORE_ATTR")
def STORE_ATTR(tx, instr):
    obj = tx.pop()
    value = tx.pop()
    obj.setattr(tx, instr.argval, value)


@handler("IMPORT_NAME")
def IMPORT_NAME(tx, instr):
    """``import a.b`` / ``from a import b`` of a module that is already loaded
    (a dict lookup in ``sys.modules``, guarded); anything else runs natively."""
    fromlist = tx.pop()
    level = tx.pop()
    name = instr.argval
    if not (level.is_constant() and level.as_constant() == 0):
        raise Unsupported("unsupported_call", f"relative import of {name!r}")
    wanted = name if fromlist.is_constant() and fromlist.as_constant() else name.partition(".")[0]
    if name not in sys.modules or wanted not in sys.modules:
        raise Unsupported("unsupported_call", f"import of {name!r}, which is not loaded yet")
    g = tx.tr.guards
    mods = g.const(sys.modules)
    module = sys.modules[wanted]
    g.module_loaded(name, sys.modules[name])
    tx.push(tx.wrap(module, GlobalSource(wanted, mods, "sys.modules")))


@handler("IMPORT_FROM")
def IMPORT_FROM(tx, instr):
    module = tx.stack[-1]
    tx.push(tx.getattr(module, instr.argval))


@handler("LOAD_SUPER_ATTR")
def LOAD_SUPER_ATTR(tx, instr):
    self_var = tx.pop()
    cls_var = tx.pop()
    tx.pop()  # the global ``super``
    value = SuperVariable(cls_var, self_var).getattr(tx, instr.argval)
    _push_with_null(tx, instr, value, getattr(instr, "method", False))


@handler("LOAD_ASSERTION_ERROR")
def LOAD_ASSERTION_ERROR(tx, instr):
    tx.push(tx.wrap_static(AssertionError))


@handler("LOAD_BUILD_CLASS")
def LOAD_BUILD_CLASS(tx, instr):
    # a class statement: its call of __build_class__ is a graph break (builtins.py)
    tx.push(tx.wrap_static(builtins.__build_class__))


# -- subscripts ------------------------------------------------------------------------------

@handler("BUILD_SLICE")
def BUILD_SLICE(tx, instr):
    tx.push(SliceVariable(tx.popn(instr.arg)))


def getitem(tx, obj: Variable, index: Variable) -> Variable:
    return obj.getitem(tx, index)


def _store_subscr_break(end, instr):
    """``obj[index] = value`` run natively by the entry (an index pattern frame
    does not model): on the real objects the resume function gets."""
    value, obj, index = end.operands(3)
    end.run(f"__setitem({end.expr(obj)}, {end.expr(index)}, {end.expr(value)})")
    end.resume(end.next)


# ``obj[index]`` with an index frame does not model (a boolean mask computed in
# the function: the result's shape depends on the data) is computed natively
@handler("BINARY_SUBSCR", on_break=lambda end, instr: end.compute(2, "{0}[{1}]"))
def BINARY_SUBSCR(tx, instr):
    index = tx.pop()
    obj = tx.pop()
    tx.push(getitem(tx, obj, index))


@handler("STORE_SUBSCR", on_break=_store_subscr_break)
def STORE_SUBSCR(tx, instr):
    index = tx.pop()
    obj = tx.pop()
    value = tx.pop()
    obj.setitem(tx, index, value)


@handler("DELETE_SUBSCR")
def DELETE_SUBSCR(tx, instr):
    index = tx.pop()
    obj = tx.pop()
    obj.delitem(tx, index)


# -- operators ---------------------------------------------------------------------------------

BINARY_OPS = [  # NB_* order, shared by 3.11-3.13
    operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul,
    operator.mul, operator.mod, operator.or_, operator.pow, operator.rshift, operator.sub,
    operator.truediv, operator.xor,
]


@handler("BINARY_OP")
def BINARY_OP(tx, instr):
    b = tx.pop()
    a = tx.pop()
    code = instr.arg
    if code < len(BINARY_OPS):
        tx.push(tx.binary_op(BINARY_OPS[code], a, b))
    elif code < 2 * len(BINARY_OPS):
        tx.push(tx.inplace_op(BINARY_OPS[code - len(BINARY_OPS)], a, b))
    else:
        raise Unsupported("unsupported_opcode", f"BINARY_OP {instr.argrepr if hasattr(instr, 'argrepr') else code}")


_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
          "UNARY_INVERT": operator.invert}


@handler(*_UNARY)
def UNARY(tx, instr):
    tx.push(tx.binary_or_unary(_UNARY[instr.opname], tx.pop()))


@handler("UNARY_NOT", on_break=lambda end, instr: end.compute(1, "not ({0})"))
def UNARY_NOT(tx, instr):
    tx.push(ConstantVariable(not tx.truth(tx.pop())))


def _jump_ways(end, instr):
    """3.13's ``TO_BOOL`` (or ``COMPARE_OP``'s bool) right before a
    ``POP_JUMP_IF_*``: the jump's (if true, if false) continuations, else None.
    At a break there the entry tests the value and jumps natively, as 3.11's
    break at the jump does: no bool is handed to a resume function (which
    would be specialised per bool value, and its scalars' failing guards hidden
    behind the bool's)."""
    jump = end.following(instr)
    if jump is None or jump.opname not in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE") \
            or jump.part != 0:
        return None
    target = end.brk.tx.instructions[jump.target]
    after = end.following(jump)
    if after is None:
        return None
    return (target, after) if jump.opname == "POP_JUMP_IF_TRUE" else (after, target)


def _to_bool_break(end, instr):
    ways = _jump_ways(end, instr)
    if ways is None:
        end.compute(1, "__bool({0})")
        return
    (value,) = end.operands(1)
    end.resume(ways[0], when=end.expr(value))
    end.resume(ways[1])


@handler("TO_BOOL", on_break=_to_bool_break)
def TO_BOOL(tx, instr):
    tx.push(ConstantVariable(tx.truth(tx.pop())))


_COMPARE = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            ">": operator.gt, ">=": operator.ge}


def _compare_break(end, instr):
    """3.13's ``bool(a < b)`` of tensors: the entry compares (and tests) natively."""
    if instr.argval not in _COMPARE:
        raise Unsupported("unsupported_opcode", f"comparison {instr.argval!r}")
    template = f"({{0}} {instr.argval} {{1}})"
    ways = _jump_ways(end, instr) if getattr(instr, "to_bool", False) else None
    if ways is not None:   # bool(a < b) then a jump: the entry compares and jumps
        end.resume(ways[0], when=template.format(*map(end.expr, end.operands(2))))
        end.resume(ways[1])
        return
    end.compute(2, "__bool" + template if getattr(instr, "to_bool", False) else template)


@handler("COMPARE_OP", on_break=_compare_break)
def COMPARE_OP(tx, instr):
    b = tx.pop()
    a = tx.pop()
    result = tx.binary_op(_COMPARE[instr.argval], a, b)
    if getattr(instr, "to_bool", False):
        result = ConstantVariable(tx.truth(result))
    tx.push(result)


def identity_of(v: Variable):
    """The Python object a Variable stands for, where it is one fixed object;
    else the Variable itself (the identity map of ``Translation.wrap`` gives
    distinct objects distinct Variables, and new objects new Variables)."""
    if isinstance(v, ConstantVariable):
        return v.value
    if v.is_constant() and isinstance(v.as_constant(), type):   # a class
        return v.as_constant()
    cls = getattr(v, "cls", None)
    if isinstance(cls, type) and v.python_type() is type(cls):  # the class itself (a namedtuple
        return cls                                                # made here has a class too)
    for attr in ("module", "obj"):
        value = getattr(v, attr, None)
        if value is not None and not isinstance(value, Variable):
            return value   # (``lst.append``'s receiver is a Variable: each access is a new method)
    fn = getattr(v, "fn", None)
    if fn is not None and getattr(v, "closure", None) is None and getattr(v, "made_defaults", None) is None:
        return fn
    return v


@handler("IS_OP")
def IS_OP(tx, instr):
    b = tx.pop()
    a = tx.pop()
    if (isinstance(a, ScalarVariable) and b.is_none()) or (isinstance(b, ScalarVariable) and a.is_none()):
        same = False   # an int or float (type guarded) is not None, whatever its value
    else:
        same = a is b or identity_of(a) is identity_of(b)
    if a.source is not None and b.source is not None and a is not b:
        # both are objects of the frame: the outcome holds only for these objects
        tx.tr.guards.same_outcome(a.source, b.source, same)
    tx.push(ConstantVariable(same != bool(instr.arg)))


# ``item in container`` that reads data (an array's values) is tested natively
@handler("CONTAINS_OP", on_break=lambda end, instr: end.compute(
    2, "({0} not in {1})" if instr.arg else "({0} in {1})"))
def CONTAINS_OP(tx, instr):
    container = tx.pop()
    item = tx.pop()
    found = container.contains(tx, item)
    tx.push(ConstantVariable(found != bool(instr.arg)))


# -- building containers ------------------------------------------------------------------------

@handler("BUILD_TUPLE")
def BUILD_TUPLE(tx, instr):
    tx.push(TupleVariable(tx.popn(instr.arg)))


@handler("BUILD_LIST")
def BUILD_LIST(tx, instr):
    tx.push(ListVariable(tx.popn(instr.arg)))


@handler("BUILD_SET")
def BUILD_SET(tx, instr):
    tx.push(SetVariable(tx.popn(instr.arg)))


@handler("SET_ADD")
def SET_ADD(tx, instr):
    value = tx.pop()
    tx.stack[-instr.arg].add(value)


@handler("SET_UPDATE")
def SET_UPDATE(tx, instr):
    other = tx.pop()
    target = tx.stack[-instr.arg]
    for item in other.iterate(tx):
        target.add(item)


@handler("BUILD_MAP")
def BUILD_MAP(tx, instr):
    flat = tx.popn(2 * instr.arg)
    tx.push(DictVariable({unpack_constant_key(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)}))


@handler("BUILD_CONST_KEY_MAP")
def BUILD_CONST_KEY_MAP(tx, instr):
    keys = tx.pop().as_constant()
    values = tx.popn(instr.arg)
    tx.push(DictVariable(dict(zip(keys, values))))


@handler("BUILD_STRING")
def BUILD_STRING(tx, instr):
    parts = tx.popn(instr.arg)
    tx.push(ConstantVariable("".join(p.as_constant() for p in parts)))


# The list, set or dict these add to is usually built by the frame, but a resume
# function that continues inside a comprehension gets it as a real object of the
# caller (a stack parameter): the additions are then its side effects, recorded
# through the container's own methods.

@handler("LIST_APPEND")
def LIST_APPEND(tx, instr):
    value = tx.pop()
    tx.stack[-instr.arg].extend(tx, [value])


@handler("LIST_EXTEND")
def LIST_EXTEND(tx, instr):
    value = tx.pop()
    tx.stack[-instr.arg].extend(tx, list(value.iterate(tx)))


@handler("MAP_ADD")
def MAP_ADD(tx, instr):
    value = tx.pop()
    key = tx.pop()
    tx.stack[-instr.arg].setitem(tx, key, value)


@handler("DICT_UPDATE", "DICT_MERGE")
def DICT_UPDATE(tx, instr):
    other = tx.pop()
    target = tx.stack[-instr.arg]
    if not isinstance(other, DictVariable):
        raise Unsupported("unsupported_object", f"** of {other!r}")
    if instr.opname == "DICT_MERGE":
        dup = set(target.items) & set(other.items)
        if dup:
            raise UserCodeRaises(f"got multiple values for keyword argument {dup.pop()!r}")
    target.items.update(other.items)


@handler("LIST_TO_TUPLE")
def LIST_TO_TUPLE(tx, instr):
    tx.push(TupleVariable(tx.pop().items))


@handler("UNPACK_SEQUENCE")
def UNPACK_SEQUENCE(tx, instr):
    items = tx.pop().iterate(tx)
    if len(items) != instr.arg:
        raise UserCodeRaises(f"cannot unpack {len(items)} values into {instr.arg}")
    for item in reversed(items):
        tx.push(item)


@handler("UNPACK_EX")
def UNPACK_EX(tx, instr):
    items = tx.pop().iterate(tx)
    before, after = instr.arg & 0xFF, instr.arg >> 8
    if len(items) < before + after:
        raise UserCodeRaises(f"not enough values to unpack (expected at least {before + after})")
    middle = ListVariable(items[before:len(items) - after])
    for item in reversed(items[len(items) - after:]):
        tx.push(item)
    tx.push(middle)
    for item in reversed(items[:before]):
        tx.push(item)


# -- f-strings ------------------------------------------------------------------------------------

def _formatted_value(v: Variable):
    """The Python value an f-string formats: a constant, or a plain list /
    tuple / dict of them (its text is the real container's); None otherwise."""
    if v.is_constant():
        return v.as_constant()
    if type(v) in (ListVariable, TupleVariable, DictVariable) and \
            all(_formatted_value(i) is not None or i.is_none() for i in v.children()):
        items = [i.as_constant() if i.is_constant() else _formatted_value(i) for i in v.children()]
        if type(v) is DictVariable:
            return dict(zip(v.items, items))
        return items if type(v) is ListVariable else tuple(items)
    return None


@handler("CONVERT_VALUE", on_break=lambda end, instr: end.compute(1, "__" + instr.argval + "({0})"))
def CONVERT_VALUE(tx, instr):
    fn = {"str": str, "repr": repr, "ascii": ascii}[instr.argval]
    v = tx.pop()
    v.value_needed()   # a lazy number read from a tensor: the break at its .item()
    if not v.is_constant() and _formatted_value(v) is not None:
        v = ConstantVariable(_formatted_value(v))
    if not v.is_constant() and fn is not ascii and not isinstance(v, TensorVariable):
        tx.push(tx.wrap_static(fn).call(tx, [v], {}))   # what str() / repr() make of it
        return
    if not v.is_constant():
        raise Unsupported("data_dependent" if isinstance(v, TensorVariable) else "unsupported_object",
                          f"formatting {v!r}", HINTS["format"] if isinstance(v, TensorVariable) else "")
    tx.push(ConstantVariable(fn(v.as_constant())))


@handler("FORMAT_SIMPLE", on_break=lambda end, instr: end.compute(1, "__format({0}, '')"))
@handler("FORMAT_WITH_SPEC", on_break=lambda end, instr: end.compute(2, "__format({0}, {1})"))
def FORMAT(tx, instr):
    spec = tx.pop().as_constant() if instr.opname == "FORMAT_WITH_SPEC" else ""
    v = tx.pop()
    v.value_needed()   # a lazy number read from a tensor: the break at its .item()
    if not v.is_constant() and _formatted_value(v) is not None:
        v = ConstantVariable(_formatted_value(v))
    if not v.is_constant() and spec == "" and not isinstance(v, TensorVariable) \
            and v.python_type().__format__ is object.__format__:
        tx.push(tx.wrap_static(str).call(tx, [v], {}))   # object.__format__(v, ""): str(v)
        return
    if not v.is_constant():
        raise Unsupported("data_dependent" if isinstance(v, TensorVariable) else "unsupported_object",
                          f"formatting {v!r}", HINTS["format"] if isinstance(v, TensorVariable) else "")
    tx.push(ConstantVariable(format(v.as_constant(), spec)))


# -- calls and functions ------------------------------------------------------------------------------

def _callable_and_self(slots: list):
    """The callable and its arguments from the two slots below the arguments
    and the arguments (``slots``, popped off the stack)."""
    a, b, *args = slots
    if isinstance(a, NullVariable):
        return b, args
    if isinstance(b, NullVariable):
        return a, args
    return a, [b, *args]


def _call_slots(instr) -> int:
    """How many stack slots a CALL consumes: its arguments and the two below."""
    return (instr.argval if isinstance(instr.argval, int) else instr.arg) + 2


def _call_operands(instr, slots: list):
    """(callable, positional arguments, keyword arguments) of a CALL from its slots."""
    kw_names = getattr(instr, "kw_names", ()) or ()
    fn, args = _callable_and_self(slots)
    kwargs = {}
    if kw_names:
        kw_values = args[len(args) - len(kw_names):]
        args = args[:len(args) - len(kw_names)]
        kwargs = dict(zip(kw_names, kw_values))
    return fn, args, kwargs


def _call_break(end, instr):
    """The entry makes the call natively (a user's function as its own intercepted frame)."""
    fn, args, kwargs = _call_operands(instr, end.operands(_call_slots(instr)))
    end.resume(end.next, [end.run(end.call(fn, args, kwargs))])


@handler("CALL", on_break=_call_break)
def CALL(tx, instr):
    fn, args, kwargs = _call_operands(instr, tx.popn(_call_slots(instr)))
    tx.push(tx.call(fn, args, kwargs))


@handler("CALL_FUNCTION_EX")
def CALL_FUNCTION_EX(tx, instr):
    kwargs_var = tx.pop() if instr.arg & 1 else None
    args_var = tx.pop()
    fn, extra = _callable_and_self(tx.popn(2))
    args = [*extra, *args_var.iterate(tx)]
    kwargs = {}
    if kwargs_var is not None:
        if not isinstance(kwargs_var, DictVariable):
            raise Unsupported("unsupported_object", f"** of {kwargs_var!r}")
        kwargs = dict(kwargs_var.items)
    tx.push(tx.call(fn, args, kwargs))


def _make_function(tx, code: types.CodeType, flags: int, extras: dict) -> UserFunctionVariable:
    fn = types.FunctionType(code, tx.f_globals, code.co_name,
                            None, tuple(types.CellType() for _ in code.co_freevars) or None)
    var = UserFunctionVariable(fn)
    defaults = extras.get(0x01)
    kwdefaults = extras.get(0x02)
    var.made_defaults = (defaults.items if defaults is not None else [],
                         dict(kwdefaults.items) if kwdefaults is not None else {})
    closure = extras.get(0x08)
    if closure is not None:
        var.closure = [c.as_constant() for c in closure.items]
    var.annotated = 0x04 in extras
    return var


@handler("MAKE_FUNCTION")
def MAKE_FUNCTION(tx, instr):
    code = tx.pop().as_constant()
    flags = instr.arg or 0
    extras = {}
    for bit in (0x08, 0x04, 0x02, 0x01):  # popped in this order (closure on top)
        if flags & bit:
            extras[bit] = tx.pop()
    tx.push(_make_function(tx, code, flags, extras))


@handler("SET_FUNCTION_ATTRIBUTE")
def SET_FUNCTION_ATTRIBUTE(tx, instr):
    fn = tx.pop()
    value = tx.pop()
    flag = instr.arg
    if flag == 0x08:
        fn.closure = [c.as_constant() for c in value.items]
    elif flag == 0x01:
        fn.made_defaults = (value.items, fn.made_defaults[1])
    elif flag == 0x02:
        fn.made_defaults = (fn.made_defaults[0], dict(value.items))
    elif flag == 0x04:   # irrelevant to the computation, but not rebuilt (reconstruct)
        fn.annotated = True
    tx.push(fn)


# -- control flow ----------------------------------------------------------------------------------------

@handler("RETURN_VALUE")
def RETURN_VALUE(tx, instr):
    tx.result = tx.pop()
    tx.done = True


@handler("JUMP")
def JUMP(tx, instr):
    tx.jump(instr)


def _pop_jump_break(jump_if: bool):
    """The break declaration of a conditional jump that pops its operand: the
    entry tests it natively, and both ways resume."""
    def on_break(end, instr):
        (value,) = end.operands(1)
        if_true, if_false = (end.target, end.next) if jump_if else (end.next, end.target)
        end.resume(if_true, when=end.expr(value))
        end.resume(if_false)
    return on_break


@handler("POP_JUMP_IF_TRUE", on_break=_pop_jump_break(True))
def POP_JUMP_IF_TRUE(tx, instr):
    if tx.truth(tx.pop()):
        tx.jump(instr)


@handler("POP_JUMP_IF_FALSE", on_break=_pop_jump_break(False))
def POP_JUMP_IF_FALSE(tx, instr):
    if not tx.truth(tx.pop()):
        tx.jump(instr)


def _is_none(v: Variable) -> bool:
    return isinstance(v, ConstantVariable) and v.value is None


@handler("POP_JUMP_IF_NONE")
def POP_JUMP_IF_NONE(tx, instr):
    if _is_none(tx.pop()):
        tx.jump(instr)


@handler("POP_JUMP_IF_NOT_NONE")
def POP_JUMP_IF_NOT_NONE(tx, instr):
    if not _is_none(tx.pop()):
        tx.jump(instr)


def _jump_or_pop_break(jump_if: bool):
    """The break declaration of 3.11's ``JUMP_IF_*_OR_POP``: the entry tests
    the value natively; the jump keeps it on the stack, the fall-through drops it."""
    def on_break(end, instr):
        (value,) = end.operands(1)
        value = end.run(end.expr(value))
        end.resume(end.target, [value], when=("" if jump_if else "not ") + end.expr(value))
        end.resume(end.next)
    return on_break


@handler("JUMP_IF_TRUE_OR_POP", on_break=_jump_or_pop_break(True))
def JUMP_IF_TRUE_OR_POP(tx, instr):
    if tx.truth(tx.stack[-1]):
        tx.jump(instr)
    else:
        tx.pop()


@handler("JUMP_IF_FALSE_OR_POP", on_break=_jump_or_pop_break(False))
def JUMP_IF_FALSE_OR_POP(tx, instr):
    if not tx.truth(tx.stack[-1]):
        tx.jump(instr)
    else:
        tx.pop()


# ``iter(obj)`` of an object capture cannot iterate (the old ``__getitem__``
# protocol, a C iterator) is taken natively; its loop's FOR_ITER then breaks too
@handler("GET_ITER", on_break=lambda end, instr: end.compute(1, "__iter({0})"))
def GET_ITER(tx, instr):
    tx.push(tx.pop().get_iter(tx))


def _for_iter_break(end, instr):
    """``next()`` of a loop's real iterator (``resume_loop``), natively: the
    exhausted loop jumps, the body resumes with the item."""
    (it,) = end.operands(1)
    item = end.run(f"__next({end.expr(it)}, __SENTINEL)")
    end.resume(end.target, when=f"{end.expr(item)} is __SENTINEL")
    store = end.next
    after = end.following(store)
    if (store.opname == "STORE_FAST" and after is not None and after.part == 0
            and store.argval not in end.live_locals(after)):
        # the loop variable is never read: do not hand it over (nor guard on it)
        end.resume(after, [it])
    else:
        end.resume(store, [it, item])


@handler("FOR_ITER", on_break=_for_iter_break)
def FOR_ITER(tx, instr):
    it = tx.stack[-1]
    item = it.next(tx)
    if item is None:
        tx.pop()
        tx.jump(instr)
    else:
        tx.push(item)


@handler("END_FOR")
def END_FOR(tx, instr):
    raise Unsupported("unsupported_opcode", "END_FOR reached by fall-through")


@handler("RETURN_GENERATOR")
def RETURN_GENERATOR(tx, instr):
    # the generator object was handed out when the call was made (inline_call);
    # its first resumption pushes the sent None, which the next POP_TOP drops
    tx.push(ConstantVariable(None))


@handler("YIELD_VALUE")
def YIELD_VALUE(tx, instr):
    tx.yielded = tx.pop()
    tx.done = True  # paused: GeneratorVariable.next resumes the run loop


@handler("GET_YIELD_FROM_ITER")
def GET_YIELD_FROM_ITER(tx, instr):
    value = tx.pop()
    tx.push(value if isinstance(value, GeneratorVariable) else value.get_iter(tx))


@handler("SEND")
def SEND(tx, instr):
    """``yield from``: the value sent on to the sub-iterator (its next item is
    yielded by the following YIELD_VALUE); when it is exhausted, its return
    value replaces the sent value (3.12+, END_SEND then drops the receiver)
    or both (3.11), and the jump leaves the loop."""
    sent = tx.pop()
    receiver = tx.stack[-1]
    if isinstance(receiver, GeneratorVariable):
        item = receiver.resume(tx, sent)
        returned = receiver.tx.result if item is None else None
    elif sent.is_none():
        item, returned = receiver.next(tx), None
    else:
        raise Unsupported("unsupported_call", f"yield from {receiver!r} with a sent value")
    if item is not None:
        tx.push(item)
        return
    if tx.instructions[instr.target].opname != "END_SEND":
        tx.pop()   # 3.11
    tx.push(returned if returned is not None else ConstantVariable(None))
    tx.jump(instr)


@handler("END_SEND")
def END_SEND(tx, instr):
    value = tx.pop()
    tx.pop()
    tx.push(value)


@handler("RAISE_VARARGS")
def RAISE_VARARGS(tx, instr):
    """``raise`` (the exception being handled again), ``raise exc`` and
    ``raise exc from cause``: a modelled exception can be caught by a ``try``
    of the traced code (``InstructionTranslator.unwind``); one that leaves the
    function runs it natively, which raises the real exception."""
    if not instr.arg:
        exc = tx.current_exception()
        if exc is None:
            raise UserCodeRaises("the function raises (re-raise)")
        # (restored as it is: no chaining)
        raise chained_raise(UserCodeRaises(f"the function raises {exc.describe()} (re-raise)",
                                           exc=exc))
    cause = tx.pop() if instr.arg == 2 else None
    raise_exception(tx, tx.pop(), cause)


@handler("RERAISE")
def RERAISE(tx, instr):
    exc = tx.pop()
    raise chained_raise(UserCodeRaises(f"the function raises {exc.describe()}", exc=exc))


@handler("PUSH_EXC_INFO")
def PUSH_EXC_INFO(tx, instr):
    exc = tx.pop()
    prev = tx.exc_info[-1] if tx.exc_info else ConstantVariable(None)
    tx.push(prev)
    tx.exc_info.append(exc)
    tx.push(exc)


@handler("POP_EXCEPT")
def POP_EXCEPT(tx, instr):
    tx.pop()  # the exception handled before this one, restored
    if tx.exc_info:
        tx.exc_info.pop()


@handler("CHECK_EXC_MATCH")
def CHECK_EXC_MATCH(tx, instr):
    classes = exception_classes(tx, tx.pop())
    exc = tx.stack[-1]
    tx.push(ConstantVariable(issubclass(exc.python_type(), classes)))


@handler("WITH_EXCEPT_START")
def WITH_EXCEPT_START(tx, instr):
    """``__exit__(type, value, traceback)`` of a ``with`` block that raised."""
    exc = tx.stack[-1]
    exit_fn = tx.stack[-4]
    tx.push(tx.call(exit_fn, [tx.wrap_static(exc.python_type()), exc, TracebackVariable()], {}))


def _before_with_break(end, instr):
    """The entry enters the manager natively (``breaks.enter_with``); the block
    continues in a resume function, inside the ``with``: its graph runs while
    the manager is entered (a lock held, ``np.errstate`` set), and the exit
    call after the block is a break of its own where it is not modelled."""
    (mgr,) = end.operands(1)
    pair = end.run(f"__enter_with({end.expr(mgr)})")
    end.resume(end.next, [end.item(pair, 0), end.item(pair, 1)])


@handler("BEFORE_WITH", on_break=_before_with_break)
def BEFORE_WITH(tx, instr):
    """``with mgr:``: the manager's Variable enters (``enter_context``: grad
    mode, a user class's ``__enter__`` inlined, ``contextlib``'s managers) and
    gives the ``__exit__`` that the block's end calls, with three Nones on the
    normal path or through ``WITH_EXCEPT_START`` when the block raised."""
    mgr = tx.pop()
    exit_fn, value = mgr.enter_context(tx)
    tx.push(exit_fn)
    tx.push(value)


_INTRINSIC_STOPITERATION_ERROR = 3


@handler("CALL_INTRINSIC_1")
def CALL_INTRINSIC_1(tx, instr):
    """3.12+: the handler around a generator's body turns a ``StopIteration``
    leaving it into ``RuntimeError`` (PEP 479); other intrinsics are not modelled."""
    if instr.arg == _INTRINSIC_STOPITERATION_ERROR and tx.code.co_flags & inspect.CO_GENERATOR:
        exc = tx.pop()
        if issubclass(exc.python_type(), StopIteration):
            exc = stop_iteration_error(exc)
        tx.push(exc)
        return
    raise Unsupported("unsupported_opcode", f"CALL_INTRINSIC_1 {instr.argval}")


# -- structural pattern matching (``match``) ----------------------------------------------------------

_TPFLAGS_SEQUENCE = 1 << 5   # what MATCH_SEQUENCE / MATCH_MAPPING test (collections.abc
_TPFLAGS_MAPPING = 1 << 6    # registration sets them too)
# classes whose ``case C(x)`` matches the subject itself (CPython's MATCH_SELF types)
_MATCH_SELF = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str, tuple)


def _type_flag(v: Variable, flag: int) -> bool:
    return bool(v.python_type().__flags__ & flag)


@handler("MATCH_SEQUENCE")
def MATCH_SEQUENCE(tx, instr):
    tx.push(ConstantVariable(_type_flag(tx.stack[-1], _TPFLAGS_SEQUENCE)))


@handler("MATCH_MAPPING")
def MATCH_MAPPING(tx, instr):
    tx.push(ConstantVariable(_type_flag(tx.stack[-1], _TPFLAGS_MAPPING)))


@handler("GET_LEN")
def GET_LEN(tx, instr):
    tx.push(tx.wrap_static(len).call(tx, [tx.stack[-1]], {}))


@handler("MATCH_KEYS")
def MATCH_KEYS(tx, instr):
    """The values of the constant keys (``subject.get(key)``, so a defaultdict's
    factory does not run), or None when one is missing."""
    keys, subject = tx.stack[-1], tx.stack[-2]
    if not isinstance(subject, DictVariable):
        raise Unsupported("unsupported_object", f"a mapping pattern on {subject!r}")
    values = []
    for key in keys.iterate(tx):
        k = unpack_constant_key(key)
        if k not in subject.items:
            tx.push(ConstantVariable(None))
            return
        values.append(subject.items[k])
    tx.push(TupleVariable(values))


@handler("MATCH_CLASS")
def MATCH_CLASS(tx, instr):
    """``case C(p1, p2, k=p3)``: ``isinstance(subject, C)`` and the attributes
    named by ``C.__match_args__`` and the keywords (a tuple), or None (not an
    instance, or an attribute is missing)."""
    names = tx.pop().as_constant()
    cls_var = tx.pop()
    subject = tx.pop()
    try:
        cls = tx.real_value(cls_var)
    except Unsupported:
        cls = None
    if not isinstance(cls, type):
        raise Unsupported("unsupported_object", f"a class pattern of {cls_var!r}")
    if type(cls) not in (type, abc.ABCMeta):   # (isinstance through the metaclass's hooks)
        raise Unsupported("unsupported_object", f"a class pattern of {cls.__qualname__}, whose "
                                                f"metaclass is {type(cls).__qualname__}")
    if not issubclass(subject.python_type(), cls):
        tx.push(ConstantVariable(None))
        return
    count = instr.arg
    attrs: list[Variable] = []
    seen: set[str] = set()
    if count:
        match_args = getattr(cls, "__match_args__", None)
        if match_args is None and cls in _MATCH_SELF:
            if count > 1:
                message = f"{cls.__name__}() accepts 1 positional sub-pattern ({count} given)"
                raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
            attrs.append(subject)
            positional = ()
        else:
            if match_args is None:
                raise Unsupported("unsupported_object", f"a positional class pattern of "
                                                        f"{cls.__qualname__} without __match_args__")
            match_args = tx.getattr(cls_var, "__match_args__").as_constant()   # (guarded)
            if type(match_args) is not tuple:
                raise Unsupported("unsupported_object", f"{cls.__qualname__}.__match_args__ is not "
                                                        f"a tuple")
            if count > len(match_args):
                s = "" if len(match_args) == 1 else "s"
                message = (f"{cls.__name__}() accepts {len(match_args)} positional sub-pattern{s} "
                           f"({count} given)")
                raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
            positional = match_args[:count]
    else:
        positional = ()
    for name in (*positional, *names):
        if name in seen:
            message = f"{cls.__name__}() got multiple sub-patterns for attribute {name!r}"
            raise UserCodeRaises(f"TypeError: {message}", exc=TypeError(message))
        seen.add(name)
        try:
            attrs.append(tx.getattr(subject, name))
        except UserCodeRaises as e:
            raised = e.exc.python_type() if isinstance(e.exc, Variable) else type(e.exc)
            if e.exc is None or not issubclass(raised, AttributeError):
                raise   # (an exception the trace does not know: the call runs natively)
            tx.push(ConstantVariable(None))   # a missing attribute: no match
            return
    tx.push(TupleVariable(attrs))
