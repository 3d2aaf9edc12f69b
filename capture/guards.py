"""Guards: the conditions under which a cache entry's graph is valid.

Each guard is a Python boolean expression over the entry function's
namespace, built from a value's source (``sources.py``), plus the text shown
in logs.  Objects a guard compares against by identity live in a constant pool
(``__k0``, ``__k1`` ...) bound into the generated function.
"""
from __future__ import annotations

import dataclasses
import numpy as np

from frame.tensor import Tensor

from .sources import ConstSource, Source

__all__ = ["Guard", "GuardSet"]


@dataclasses.dataclass(frozen=True)
class Guard:
    expr: str          # Python expression evaluated in the entry namespace
    text: str          # for people: "L['x']: Tensor float32[2,3]"


class GuardSet:
    def __init__(self):
        self.guards: list[Guard] = []
        self._seen: set[str] = set()
        self.consts: dict[str, object] = {}
        self._const_names: dict[int, str] = {}

    def const(self, obj) -> str:
        """A name bound to ``obj`` in the generated code (kept alive by the pool)."""
        name = self._const_names.get(id(obj))
        if name is None:
            name = f"__k{len(self.consts)}"
            self.consts[name] = obj
            self._const_names[id(obj)] = name
        return name

    def add(self, expr: str, text: str) -> None:
        if expr not in self._seen:
            self._seen.add(expr)
            self.guards.append(Guard(expr, text))

    # -- guard kinds -----------------------------------------------------------------
    def tensor(self, source: Source, value) -> None:
        e = source.expr()
        if isinstance(value, Tensor):
            data, t = value._data, type(value)
            self.add(f"__type({e}) is {self.const(t)} and {e}._data.shape == {data.shape!r} "
                     f"and {e}._data.dtype == {self.const(data.dtype)} "
                     f"and {e}._requires_grad is {value._requires_grad!r}"
                     + (f" and ({e}._grad_fn is None) is {value._grad_fn is None!r}"
                        if value._requires_grad else ""),
                     f"{source.text()}: {t.__name__} {data.dtype}{list(data.shape)}"
                     f"{' requires_grad' if value._requires_grad else ''}")
        else:
            self.add(f"__type({e}) is {self.const(np.ndarray)} and {e}.shape == {value.shape!r} "
                     f"and {e}.dtype == {self.const(value.dtype)}",
                     f"{source.text()}: ndarray {value.dtype}{list(value.shape)}")

    def constant(self, source: Source, value) -> None:
        e = source.expr()
        t = type(value)
        if value is None or t is bool:
            self.add(f"{e} is {value!r}", f"{source.text()} is {value!r}")
        elif isinstance(value, (float, np.floating, complex, np.complexfloating)) and value != value:
            self.add(f"__type({e}) is {self.const(t)} and {e} != {e}", f"{source.text()} is nan ({t.__name__})")
        elif t in (int, str, bytes) or (t in (float, complex) and np.isfinite(value)):
            self.add(f"__type({e}) is __{t.__name__} and {e} == {value!r}",
                     f"{source.text()} == {value!r}")
        else:
            k = self.const(value)
            self.add(f"__type({e}) is {self.const(t)} and {e} == {k}",
                     f"{source.text()} == {value!r} ({t.__name__})")

    def identity(self, source: Source, value) -> None:
        if isinstance(source, ConstSource):
            return  # the pooled object itself
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
        self.add(f"{source.expr()} is {self.const(value)}", f"{source.text()} is {name}")

    def type_and_len(self, source: Source, value) -> None:
        e = source.expr()
        self.add(f"__type({e}) is {self.const(type(value))} and __len({e}) == {len(value)}",
                 f"{source.text()}: {type(value).__name__} of length {len(value)}")

    def dict_keys(self, source: Source, value: dict) -> None:
        e = source.expr()
        keys = tuple(value)
        self.add(f"__type({e}) is {self.const(type(value))} and __tuple({e}) == {keys!r}",
                 f"{source.text()}: dict with keys {list(keys)!r}")

    def type_is(self, source: Source, value) -> None:
        self.add(f"__type({source.expr()}) is {self.const(type(value))}",
                 f"{source.text()}: {type(value).__qualname__} object")

    def alias(self, source: Source, other: Source) -> None:
        if isinstance(source, ConstSource) or isinstance(other, ConstSource):
            return
        self.add(f"{source.expr()} is {other.expr()}", f"{source.text()} is {other.text()}")
