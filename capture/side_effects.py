"""The side-effect log of one translation.

Nothing real is mutated while simulating.  Mutations of objects that existed
before the call (they have a source) are recorded here, and their final state
is written back, in a fixed order, after the graph runs: tensor data written
in place, list and dict contents, attributes, globals, ``.grad`` of tensors.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .variables.base import TensorVariable, Variable

__all__ = ["SideEffects", "DELETED", "Warned"]


class _Deleted(Variable):
    """The pending value of an attribute ``del obj.name`` removed: replayed as
    ``delattr``."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<deleted>"


DELETED = _Deleted()


class Warned(NamedTuple):
    """A warning the traced code gives (``SideEffects.warnings``), as
    ``warnings.warn`` would issue it: its category and text, the file, line
    and globals (module name, ``__warningregistry__``) of the frame its
    ``stacklevel`` names.  ``nodes`` is how many nodes the graph had then:
    the ones after it must not give NumPy floating-point warnings, which the
    graph issues before the entry issues this one (``codegen._warning_order``);
    else the entry breaks the graph before the call, ``site`` (an
    ``Unsupported`` placed as the translator places a break there)."""
    category: type
    message: str
    filename: str
    lineno: int
    f_globals: dict
    nodes: int
    site: Any


class SideEffects:
    def __init__(self):
        self.tensors: dict[int, TensorVariable] = {}        # in-place writes to input tensors
        self.tensor_writes: dict[int, int] = {}             # how many: eager bumps its version each
        self.containers: dict[int, Variable] = {}           # mutated input lists / dicts
        self.attrs: dict[tuple[int, str], tuple[Variable, str, Variable]] = {}
        self.globals: dict[tuple[int, str], tuple[dict, str, Variable]] = {}
        # ``.grad`` of input tensors: id(tensor variable) -> (tensor variable, new value)
        self.grads: dict[int, tuple[TensorVariable, Variable]] = {}
        # real cells of the frame assigned (``nonlocal``, or the frame's own
        # ``STORE_DEREF``): id(Cell) -> Cell; its final ``value`` is written back
        self.cells: dict[int, object] = {}
        # calls of functools.cache functions (variables/lru_cache.py): (the wrapper's
        # variable, the constant arguments), replayed natively, in order, before the
        # other writes; they change nothing but the cache (not counted by ``__bool__``)
        self.cached_calls: list[tuple[Variable, tuple]] = []
        # warnings the plain function gives at every call (np.row_stack's DeprecationWarning,
        # ``warnings.warn``): issued by the entry right after its graph, before anything is
        # written (not counted by ``__bool__``)
        self.warnings: list[Warned] = []

    def tensor_written(self, t: TensorVariable) -> None:
        if t.source is not None:
            self.tensors[id(t)] = t
            self.tensor_writes[id(t)] = self.tensor_writes.get(id(t), 0) + 1

    def container_mutated(self, c: Variable) -> None:
        if c.source is not None:
            self.containers[id(c)] = c

    def pending_attr(self, obj: Variable, name: str) -> Variable | None:
        entry = self.attrs.get((id(obj), name))
        return entry[2] if entry is not None else None

    def store_attr(self, obj: Variable, name: str, value: Variable) -> None:
        self.attrs[(id(obj), name)] = (obj, name, value)

    def pending_class_attr(self, cls: type, name: str) -> Variable | None:
        """The value ``cls.name`` has after the class attribute writes the
        trace made (looked up along the MRO, as Python reads it), or None
        when no write decides it."""
        for klass in cls.__mro__:
            entry = self.attrs.get((id(klass), name))
            if entry is not None:
                return entry[2]
            if name in klass.__dict__:
                return None
        return None

    def store_class_attr(self, cls_var: Variable, cls: type, name: str, value: Variable) -> None:
        """``cls.name = value`` (``cls_var``, with a source, is replayed):
        keyed by the class, whichever Variable stands for it."""
        self.attrs[(id(cls), name)] = (cls_var, name, value)

    def pending_global(self, f_globals: dict, name: str) -> Variable | None:
        entry = self.globals.get((id(f_globals), name))
        return entry[2] if entry is not None else None

    def store_global(self, f_globals: dict, name: str, value: Variable) -> None:
        self.globals[(id(f_globals), name)] = (f_globals, name, value)

    def __bool__(self) -> bool:
        return bool(self.tensors or self.containers or self.attrs or self.globals or self.grads
                    or self.cells)
