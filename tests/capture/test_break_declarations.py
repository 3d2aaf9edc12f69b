"""Break behaviour is declared with the opcode handler (``handler(...,
on_break=...)``, the table ``capture.handlers.ON_BREAK``), once per opcode:
``capture/breaks.py`` has the generic machinery and no opcode-name switch,
and every declaration is exercised here by a differential test (jitted ==
plain) that breaks at that opcode on this interpreter."""
from __future__ import annotations

import ast
import dis
import functools
import io
import pathlib
import sys
import threading
import types

import numpy as np
import pytest

from capture import handlers
from capture.handlers import HANDLERS, ON_BREAK
from capture.instructions import ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION

from .helpers import assert_same_as_eager, last_entry, tensor

PY = sys.version_info[:2]
BREAKS_PY = pathlib.Path(__file__).resolve().parents[2] / "capture" / "breaks.py"

# Declared opcodes where no break is placed on some versions: opname -> why
_IN_A_GROUP = ("decoded from FORMAT_VALUE as the first of an instruction group: the "
               "continuation would start inside the group")
_AFTER_TO_BOOL = "TO_BOOL comes first: the operand is a bool"
UNREACHABLE = {
    (3, 11): {"CONVERT_VALUE": _IN_A_GROUP},
    (3, 12): {"CONVERT_VALUE": _IN_A_GROUP},
    (3, 13): {"POP_JUMP_IF_TRUE": _AFTER_TO_BOOL, "POP_JUMP_IF_FALSE": _AFTER_TO_BOOL,
              "UNARY_NOT": _AFTER_TO_BOOL},
}

log = functools.partial(print, file=io.StringIO())  # a call capture does not trace


class Noisy:
    """An object whose attribute loads, comparisons and formatting capture
    cannot simulate (they call ``log``)."""

    def __init__(self, t, v=1):
        self.t = t
        self.v = v

    @property
    def total(self):
        log(self.v)
        return self.t.sum()

    @property
    def scale(self):  # loaded as a method: LOAD_ATTR with a NULL
        log(self.v)
        return self.t.__mul__

    def __lt__(self, other):
        log(self.v)
        return self.v < other.v

    def __format__(self, spec):
        log(spec)
        return f"<{spec}>"

    def __repr__(self):
        log(self.v)
        return f"Noisy({self.v})"


def call(x):
    y = x + 1
    log(y)
    return y * 2


def pop_jump_if_true(x):
    y = x + 1
    if not y.sum():
        return y
    return y * 2


def pop_jump_if_false(x):
    y = x + 1
    if y.sum():
        return y * 3
    return y * 2


def jump_if_true_or_pop(x):
    y = x + 1
    z = y.sum() or 0
    return y * z


def jump_if_false_or_pop(x):
    y = x - 1
    z = y.sum() and 1
    return y * z


def unary_not(x):
    y = x + 1
    z = not y.sum()
    return y * z


def to_bool(x):
    y = x + 1
    return y * (1 if y.sum() else 0)


def compare_tensor(x):
    y = x + 1
    if y.sum() > 0:
        return y * 2
    return y


def compare_objects(x, a, b):
    y = x + 1
    return y * (a < b)


def load_attr(x, p):
    y = x + 1
    return y * p.total


def load_attr_method(x, p):
    y = x + 1
    return p.scale(2) + y


def format_simple(x, p):
    y = x + 1
    return y * len(f"{p}")


def format_with_spec(x, p):
    y = x + 1
    return y * len(f"{p:>7}")


def convert_value(x, p):
    y = x + 1
    return y * len(f"{p!r}")


def for_iter_live(x):
    y = x
    for w in [1.0, 2.0, 3.0]:
        y = y * w
        log(y)
    return y


def for_iter_dead(x):
    y = x
    for _ in range(3):
        y = y + 1
        log(y)
    return y


def _noisy():
    return Noisy(tensor(seed=3))


_LOCK = threading.Lock()


def before_with(x, log_):
    y = x + 1
    with _LOCK:  # a lock is entered natively; the block's graph runs while it is held
        log_.append(_LOCK.locked())
        y = y * 2
    return y, _LOCK.locked()


def binary_subscr(x):
    y = x + 1
    return y[y > 1.5] * 2      # a mask computed in the function: a data-dependent shape


def store_subscr(x):
    y = x + 1
    y[y > 1.5, None] = 0.0     # a mask with another index: not modelled
    return y * 2


def contains_op(x):
    y = x + 1
    return y * (2.0 in y), y * (5.0 not in y)     # an array's values


class _OldProtocol:
    """Iterable through ``__getitem__`` only (the old sequence protocol)."""

    def __init__(self, rows):
        self.rows = rows

    def __getitem__(self, i):
        return self.rows[i]


def get_iter(x, seq):
    y = x + 1
    for row in seq:
        y = y + row
    return y


CASES = [  # (the opcode a break is placed before, function, arguments)
    ("CALL", call, lambda: (tensor(),)),
    ("POP_JUMP_IF_TRUE", pop_jump_if_true, lambda: (tensor(),)),
    ("POP_JUMP_IF_FALSE", pop_jump_if_false, lambda: (tensor(),)),
    ("JUMP_IF_TRUE_OR_POP", jump_if_true_or_pop, lambda: (tensor(),)),
    ("JUMP_IF_FALSE_OR_POP", jump_if_false_or_pop, lambda: (tensor(),)),
    ("UNARY_NOT", unary_not, lambda: (tensor(),)),
    ("TO_BOOL", to_bool, lambda: (tensor(),)),
    # 3.13 tests a comparison with COMPARE_OP's bool flag, 3.11/3.12 with the jump
    ("COMPARE_OP" if PY >= (3, 13) else "POP_JUMP_IF_FALSE", compare_tensor, lambda: (tensor(),)),
    ("COMPARE_OP", compare_objects, lambda: (tensor(), Noisy(None, 1), Noisy(None, 2))),
    ("LOAD_ATTR", load_attr, lambda: (tensor(), _noisy())),
    ("LOAD_ATTR", load_attr_method, lambda: (tensor(), _noisy())),
    ("FORMAT_SIMPLE", format_simple, lambda: (tensor(), _noisy())),
    ("FORMAT_WITH_SPEC", format_with_spec, lambda: (tensor(), _noisy())),
    ("CONVERT_VALUE", convert_value, lambda: (tensor(), _noisy())),
    ("FOR_ITER", for_iter_live, lambda: (tensor(),)),
    ("FOR_ITER", for_iter_dead, lambda: (tensor(),)),
    ("BEFORE_WITH", before_with, lambda: (tensor(), [])),
    ("BINARY_SUBSCR", binary_subscr, lambda: (np.array([1.0, 0.0, 2.0]),)),
    ("STORE_SUBSCR", store_subscr, lambda: (np.array([1.0, 0.0, 2.0]),)),
    ("CONTAINS_OP", contains_op, lambda: (np.array([1.0, 0.0, 2.0]),)),
    ("GET_ITER", get_iter, lambda: (np.array([1.0, 0.0, 2.0]), _OldProtocol([1.0, 2.0]))),
]


def _decodable() -> frozenset[str]:
    return ALL_NORMALISED_OPNAMES_FOR_THIS_VERSION()


@pytest.fixture
def declarations_run(monkeypatch) -> list[str]:
    """The opnames whose break declaration wrote an entry's end (in order)."""
    ran: list[str] = []
    for opname, declared in list(ON_BREAK.items()):
        def spy(end, instr, _opname=opname, _declared=declared):
            ran.append(_opname)
            return _declared(end, instr)
        monkeypatch.setitem(ON_BREAK, opname, spy)
    return ran


@pytest.mark.parametrize("opname, fn, make_args", CASES,
                         ids=[f"{op}-{fn.__name__}" for op, fn, _ in CASES])
def test_break_at_declared_opcode(opname, fn, make_args, declarations_run):
    if opname not in _decodable():
        pytest.skip(f"{opname} does not exist on {PY[0]}.{PY[1]}")
    if opname in UNREACHABLE.get(PY, {}):
        assert_same_as_eager(fn, *make_args(), captured=None)  # (a break elsewhere, or none)
        pytest.skip(f"no break at {opname} on {PY[0]}.{PY[1]}: {UNREACHABLE[PY][opname]}")
    j = assert_same_as_eager(fn, *make_args())
    assert last_entry(j).breaks
    assert opname in declarations_run, f"no break at {opname}: {declarations_run}"


def test_every_declared_break_has_a_test():
    covered = {op for op, _, _ in CASES}
    declared = set(ON_BREAK) & _decodable()
    missing = sorted(declared - covered - set(UNREACHABLE.get(PY, {})))
    assert not missing, f"break declarations without a test on {PY}: {missing}"
    assert covered <= set(ON_BREAK), sorted(covered - set(ON_BREAK))


def test_declarations_belong_to_handlers():
    assert set(ON_BREAK) <= set(HANDLERS)
    assert all(callable(d) for d in ON_BREAK.values())
    # opcodes sharing a handler declare their own breaks (different operand counts)
    assert HANDLERS["FORMAT_SIMPLE"] is HANDLERS["FORMAT_WITH_SPEC"]
    assert ON_BREAK["FORMAT_SIMPLE"] is not ON_BREAK["FORMAT_WITH_SPEC"]


def test_an_opcode_without_a_declaration_gets_no_break(monkeypatch):
    from capture.breaks import can_break_at
    from capture.instructions import decode

    instr = next(i for i in decode(call.__code__) if i.opname == "CALL")
    assert can_break_at(call.__code__, instr) is None
    monkeypatch.delitem(handlers.ON_BREAK, "CALL")
    assert can_break_at(call.__code__, instr) == "CALL cannot run natively in an entry"
    j = assert_same_as_eager(call, tensor(), captured=False)  # runs natively instead
    assert "no graph break here" in last_entry(j).reason.reason


# -- what an entry runs at a break names builtins the user's code cannot shadow -----------------

def _shadowing(v):
    return "shadowed"


def truth_of_sum(x):
    y = x + 1
    if y.sum():
        return x * 2
    return x


def compare_sum(x, bool=None):  # (a parameter is a local of the entry too)
    y = x + 1
    if y.sum() > 0:
        return x * 2
    return x


def convert_str(x, p):
    return x * len(f"{p!s}")


@pytest.mark.parametrize("fn, make_args", [
    (truth_of_sum, lambda: (tensor() * 0 - 1,)),
    (compare_sum, lambda: (tensor() * 0 - 1, _shadowing)),
    (convert_str, lambda: (tensor(), Noisy(None, 12345)))], ids=lambda v: getattr(v, "__name__", ""))
def test_builtins_run_at_a_break_are_not_the_users_globals(fn, make_args):
    shadowed = types.FunctionType(fn.__code__, {**fn.__globals__, **dict.fromkeys(
        ("bool", "str", "repr", "ascii", "format", "next"), _shadowing)}, fn.__name__)
    assert_same_as_eager(shadowed, *make_args(), captured=None)


# -- breaks.py has no opcode-name switch -------------------------------------------------------

def _opnames() -> set[str]:
    return set(dis.opmap) | set(HANDLERS) | set(_decodable())


def test_breaks_py_names_no_opcode():
    """No string literal of breaks.py is an opcode name (no ``op == "CALL"``,
    no set or dict of opnames)."""
    tree = ast.parse(BREAKS_PY.read_text())
    names = _opnames()
    found = [(node.lineno, node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and node.value in names]
    assert not found, f"opcode names in capture/breaks.py: {found}"


def test_breaks_py_reads_opname_only_to_look_up_the_declaration():
    """``.opname`` is read only as the key of ``ON_BREAK.get(...)`` or in a
    message (an f-string): never compared, matched or used as a key elsewhere."""
    tree = ast.parse(BREAKS_PY.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    bad = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr == "opname"):
            continue
        up = parents[node]
        lookup = (isinstance(up, ast.Call) and node in up.args and isinstance(up.func, ast.Attribute)
                  and up.func.attr == "get" and isinstance(up.func.value, ast.Name)
                  and up.func.value.id == "ON_BREAK")
        message = isinstance(up, ast.FormattedValue)
        if not (lookup or message):
            bad.append(node.lineno)
    assert not bad, f"capture/breaks.py switches on .opname at lines {bad}"
    assert not any(isinstance(node, ast.Match) for node in ast.walk(tree))
