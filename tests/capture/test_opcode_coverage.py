"""Opcode coverage: which normalised opcodes of the running interpreter the
executor handles (``capture.handlers.HANDLERS``), which it does not (printed
and recorded per version), and that the opcodes the capture issue requires are
handled and exercised by the capture tests themselves."""
from __future__ import annotations

import dis
import importlib
import sys
import types

import pytest

from capture.handlers import HANDLERS
from capture.instructions import ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION, decode

PY = sys.version_info[:2]

# Required on every version (as the decoder names them)
REQUIRED = {
    "LOAD_CONST", "LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_GLOBAL", "STORE_GLOBAL",
    "LOAD_DEREF", "STORE_DEREF", "LOAD_CLOSURE", "LOAD_ATTR", "STORE_ATTR",
    "BINARY_OP", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "BUILD_SLICE",
    "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT",
    "UNARY_POSITIVE", "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
    "BUILD_STRING", "LIST_APPEND", "LIST_EXTEND", "MAP_ADD", "DICT_UPDATE", "DICT_MERGE",
    "LIST_TO_TUPLE", "UNPACK_SEQUENCE", "UNPACK_EX", "CALL", "CALL_FUNCTION_EX",
    "MAKE_FUNCTION", "RETURN_VALUE", "POP_TOP", "PUSH_NULL", "COPY", "SWAP", "JUMP",
    "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE",
    "GET_ITER", "FOR_ITER", "RAISE_VARARGS", "LOAD_ASSERTION_ERROR", "CONVERT_VALUE",
    "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "RETURN_GENERATOR", "YIELD_VALUE",
}
REQUIRED_BY_VERSION = {
    (3, 11): {"JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"},
    (3, 12): {"LOAD_FAST_AND_CLEAR"},
    (3, 13): {"LOAD_FAST_AND_CLEAR", "TO_BOOL", "SET_FUNCTION_ATTRIBUTE"},
}
# Handler names that exist only on other versions, or that the decoder drops
OTHER_VERSIONS = {"JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "LOAD_CLASSDEREF", "TO_BOOL",
                  "SET_FUNCTION_ATTRIBUTE", "LOAD_FAST_AND_CLEAR", "END_FOR", "CALL_INTRINSIC_1",
                  "NOP", "RESUME", "CACHE", "EXTENDED_ARG", "LOAD_SUPER_ATTR", "END_SEND"}
TEST_MODULES = ["test_basic_ops", "test_containers", "test_calls", "test_control_flow",
                "test_numpy", "test_side_effects", "test_exceptions", "test_whole_function",
                "test_guards"]


def _required() -> set[str]:
    return REQUIRED | REQUIRED_BY_VERSION.get(PY, set())


def test_required_opcodes_exist_on_this_version():
    assert _required() <= ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION()


def test_required_opcodes_are_handled():
    missing = sorted(_required() - set(HANDLERS))
    assert not missing, f"required opcodes without a handler on {PY}: {missing}"


def test_unhandled_opcodes_are_listed(record_property, capsys):
    unhandled = sorted(ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION() - set(HANDLERS))
    record_property(f"unhandled_opcodes_{PY[0]}_{PY[1]}", " ".join(unhandled))
    with capsys.disabled():
        print(f"\nunhandled normalised opcodes on {PY[0]}.{PY[1]} ({len(unhandled)}): "
              f"{' '.join(unhandled)}")
    assert not _required() & set(unhandled)


def test_handlers_are_named_after_opcodes():
    known = ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION() | set(dis.opmap) | OTHER_VERSIONS
    stray = sorted(set(HANDLERS) - known)
    assert not stray, f"handlers for names no supported version decodes: {stray}"


def test_handlers_share_implementations_through_the_table():
    assert HANDLERS["UNARY_NEGATIVE"] is HANDLERS["UNARY_INVERT"]
    assert all(callable(h) for h in HANDLERS.values())


def _code_objects(obj, seen: set[int]):
    if isinstance(obj, types.FunctionType):
        obj = obj.__code__
    if not isinstance(obj, types.CodeType) or id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    for const in obj.co_consts:
        yield from _code_objects(const, seen)


def test_capture_tests_exercise_every_required_opcode():
    """Decode every function of the capture test modules: each required opcode
    appears in code that the tests run through ``frame.jit``."""
    seen: set[int] = set()
    used: set[str] = set()
    for name in TEST_MODULES:
        module = importlib.import_module(f"{__package__}.{name}")
        for value in vars(module).values():
            candidates = [value]
            if isinstance(value, type):
                candidates = list(vars(value).values())
            for candidate in candidates:
                if isinstance(candidate, (staticmethod, classmethod)):
                    candidate = candidate.__func__
                if isinstance(candidate, property):
                    candidate = candidate.fget
                for code in _code_objects(candidate, seen):
                    used.update(i.opname for i in decode(code))
    missing = sorted(_required() - used)
    assert not missing, f"no capture test uses {missing} on {PY}"


@pytest.mark.parametrize("opname", sorted(REQUIRED))
def test_required_opcode_has_a_handler(opname):
    assert opname in HANDLERS
