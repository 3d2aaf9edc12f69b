"""Variables own their behaviour (issue 14, item 1) and cache entries are
built complete (item 5).

Outside ``capture/variables/`` no function may dispatch on Variable kinds with
``isinstance``: testing one expression against two or more Variable classes
(in one call with a tuple, or in several) is a chain that a new kind would
have to extend; such behaviour is a method of the Variable protocol
(``capture/variables/base.py``).  Testing for one kind (``isinstance(v,
TensorVariable)``) is allowed."""
from __future__ import annotations

import ast
import dataclasses
import importlib
import pathlib
import pkgutil

import numpy as np
import pytest

import capture
from capture.codegen import CacheEntry
from capture.variables.base import ConstantVariable, Variable

from .helpers import assert_captured, assert_same_as_eager

ROOT = pathlib.Path(__file__).resolve().parents[2]

# none: every Variable kind dispatches on its own class
ALLOWED: set[tuple[str, str]] = set()


def variable_class_names() -> set[str]:
    for info in pkgutil.walk_packages(capture.__path__, "capture."):
        importlib.import_module(info.name)
    names, todo = set(), [Variable]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo += cls.__subclasses__()
    return names


def _class_names(node: ast.expr, aliases: dict[str, ast.expr]) -> set[str]:
    """The class names an ``isinstance`` second argument names: a name, a
    module attribute, a tuple, a sum of tuples, or a local name bound to one."""
    if isinstance(node, ast.Tuple):
        return set().union(*(_class_names(e, aliases) for e in node.elts))
    if isinstance(node, ast.BinOp):
        return _class_names(node.left, aliases) | _class_names(node.right, aliases)
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.Name):
        bound = aliases.get(node.id)
        return {node.id} | (_class_names(bound, {}) if bound is not None else set())
    return set()


def isinstance_chains(source: str, kinds: set[str]) -> list[tuple[str, int, list[str]]]:
    """(function, line, classes) for each function of ``source`` that tests one
    expression against two or more of ``kinds`` with ``isinstance``."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        aliases = {t.id: node.value for node in ast.walk(fn) if isinstance(node, ast.Assign)
                   for t in node.targets if isinstance(t, ast.Name)}
        tested: dict[str, set[str]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "isinstance" and len(node.args) == 2:
                classes = _class_names(node.args[1], aliases) & kinds
                if classes:
                    tested.setdefault(ast.dump(node.args[0]), set()).update(classes)
        for classes in tested.values():
            if len(classes) >= 2:
                found.append((fn.name, fn.lineno, sorted(classes)))
    return found


def test_the_scan_finds_chains():
    kinds = {"TupleVariable", "ListVariable", "DictVariable", "TensorVariable"}
    src = '''
def f(v):
    if isinstance(v, TensorVariable):
        return 1
    elif isinstance(v.x, DictVariable):
        return 2
def g(v):
    return isinstance(v, (TupleVariable, ListVariable))
def h(v, w):
    return isinstance(v, TensorVariable) or isinstance(w, TensorVariable)
def k(v):
    def inner():
        return isinstance(v, ListVariable)
    return isinstance(v, m.DictVariable)
def seq(v):
    kinds = (ListVariable, TupleVariable)
    return isinstance(v, kinds + (DictVariable,))
'''
    assert [(name, classes) for name, _, classes in isinstance_chains(src, kinds)] == [
        ("g", ["ListVariable", "TupleVariable"]), ("k", ["DictVariable", "ListVariable"]),
        ("seq", ["DictVariable", "ListVariable", "TupleVariable"])]


def test_no_isinstance_chain_over_variables_outside_capture_variables():
    kinds = variable_class_names()
    assert {"TensorVariable", "ListVariable", "GradModeVariable"} <= kinds
    offenders = []
    for path in sorted((ROOT / "capture").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("capture/variables/"):
            continue
        for name, line, classes in isinstance_chains(path.read_text(), kinds):
            if (rel, name) not in ALLOWED:
                offenders.append(f"{rel}:{line} {name}(): isinstance over {', '.join(classes)}")
    assert not offenders, ("dispatch on Variable kinds belongs on the Variable classes "
                           "(capture/variables/base.py):\n" + "\n".join(offenders))


# -- wrapping existing objects: each kind registers its own rules (issue 14) ------------------

def _names_in(fn: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)}


def test_build_names_no_variable_class():
    """``Translation._build`` consults the wrap rules the kinds register
    (``capture/variables/registry.py``): a new kind that wraps existing objects
    is added in its own file, not also in ``_build``."""
    tree = ast.parse((ROOT / "capture" / "translation.py").read_text())
    build = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_build")
    named = sorted(_names_in(build) & (variable_class_names() - {"Variable"}))
    assert named == [], f"Translation._build names Variable classes: {named}"


def test_wrap_rules_are_the_documented_order():
    """The table of ``capture/variables/registry.py`` is the order ``_build`` tries."""
    from capture.variables import registry
    variable_class_names()  # every module imported: every rule registered
    documented = [int(line.split()[0]) for line in registry.__doc__.splitlines()
                  if line[:1].isdigit()]
    assert [r.order for r in registry.WRAP_RULES] == documented
    assert [r.order for r in registry.STATIC_RULES] == \
        [r.order for r in registry.WRAP_RULES if r.static]


@dataclasses.dataclass(frozen=True)
class Temperature:
    """A user value type (immutable, compared by value)."""
    kelvin: float


class TemperatureVariable(Variable):
    """A kind of its own for ``Temperature`` objects: guarded equal to the
    object seen, its fields fold to constants (docs/capture.md, "How to add a
    Variable")."""
    __slots__ = ("value",)

    def __init__(self, value: Temperature, source):
        super().__init__(source)
        self.value = value

    def python_type(self) -> type:
        return Temperature

    def getattr(self, tx, name: str) -> Variable:
        if name == "kelvin":
            return ConstantVariable(self.value.kelvin)
        return super().getattr(tx, name)

    def to_python(self, passed=None):
        return self.value


def _wrap_temperature(tr, value, source):
    if type(value) is not Temperature:
        return None
    tr.guards.pooled_equal(source, value)
    return TemperatureVariable(value, source)


@pytest.fixture
def temperature_kind():
    from capture.variables.registry import WRAP_RULES, wrap_rule
    wrap_rule(93)(_wrap_temperature)
    yield
    WRAP_RULES[:] = [r for r in WRAP_RULES if r.build is not _wrap_temperature]


def _in_kelvin_units(x, t):
    return x * t.kelvin


def test_a_wrapped_kind_is_added_in_one_place(temperature_kind):
    from capture.sources import LocalSource
    from capture.translation import Translation
    var = Translation(_in_kelvin_units).wrap(Temperature(300.0), LocalSource("t"))
    assert type(var) is TemperatureVariable
    x = np.arange(3.0, dtype=np.float32)
    jitted = assert_same_as_eager(_in_kelvin_units, x, Temperature(300.0))
    assert_captured(_in_kelvin_units, x, Temperature(300.0))
    # the guard: an unequal Temperature is a new entry with its own constant
    np.testing.assert_array_equal(np.asarray(jitted(x, Temperature(2.0))), x * 2.0)


def test_a_cache_entry_is_complete_when_made():
    entry = CacheEntry(None, [], "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.reason = "changed"


# -- the protocol's paths, jitted vs plain ---------------------------------------------------

def _containers(x, lst, d):
    t = (x, x * 2.0)
    lst[0] = t[1]                 # ListVariable.setitem
    del d["drop"]                 # DictVariable.delitem
    d["y"] = t[0] + 1.0           # DictVariable.setitem
    lst += [x]                    # ListVariable.inplace_op (extends the list itself)
    found = ("y" in d, 3 in [1, 3], 2 in (1,), "a" in "abc")   # contains
    return t[0] - d["y"], lst[-1], found, lst[1:]


def test_container_operations_through_the_protocol():
    args = lambda: (np.arange(3.0, dtype=np.float32), [0, 1], {"drop": 1, "keep": 2})  # noqa: E731
    assert_same_as_eager(_containers, *args())
    assert_captured(_containers, *args())


def _rebuilt(x, items):
    it = iter(items)              # a list iterator, handed out part-consumed
    next(it)
    return it, items.append, x.sum, {1, 2}, slice(1, 2), (x + 1.0,)


def test_values_made_by_the_trace_are_rebuilt():
    import frame
    x = frame.tensor(np.ones(3, dtype=np.float32))
    got = frame.jit(_rebuilt, backend="cpu")(x, [1, 2, 3])
    want = _rebuilt(x, [1, 2, 3])
    assert list(got[0]) == list(want[0]) == [2, 3]
    assert got[1].__name__ == "append" and got[2].__name__ == "sum"
    assert got[3:5] == want[3:5]
    np.testing.assert_array_equal(got[5][0].numpy(), want[5][0].numpy())
