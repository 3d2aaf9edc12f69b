"""How the IR reaches op schemas without importing the op layer.

``frame/ir`` sits below ``frame/ops`` (docs/design.md §1), yet ``GraphBuilder.op`` and
``verify`` need each op's schema (arity, attrs, type inference).  The op layer
installs its lookup here when ``frame.ops.registry`` is imported
(``install_schema_lookup``); the IR only knows the small protocol below.

The closed set of attribute values (docs/design.md §3, invariant V7) is the IR's own
knowledge and lives here too (``attr_value_ok``); ``frame.ops.schema``
re-exports it.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence

from ..dtypes import DType
from ..errors import ErrorCode, FrameError, not_found
from .types import TensorType

__all__ = ["SchemaLike", "install_schema_lookup", "lookup_schema", "get_schema",
           "attr_value_ok"]


class SchemaLike(Protocol):
    """What the IR uses of an op schema (``frame.ops.OpSchema`` implements it)."""

    name: str

    def arity_ok(self, n: int) -> bool: ...
    def arity_text(self) -> str: ...
    def check_arity(self, n: int) -> None: ...
    def normalize_attrs(self, attrs: Mapping[str, Any]) -> dict[str, Any]: ...
    def attrs_match_spec(self, attrs: Mapping[str, Any]) -> str | None: ...
    def infer(self, types: Sequence[TensorType], attrs: Mapping[str, Any]) -> Sequence[TensorType]: ...


_lookup: Callable[[str], SchemaLike | None] | None = None


def install_schema_lookup(lookup: Callable[[str], SchemaLike | None]) -> None:
    """Make ``lookup(name) -> schema or None`` the IR's source of op schemas.

    Called once by ``frame.ops.registry`` at import; a later call replaces it.
    """
    global _lookup
    _lookup = lookup


def lookup_schema(name: str) -> SchemaLike | None:
    """The schema of op ``name``, or None when no such op is registered."""
    if _lookup is None:
        raise FrameError(ErrorCode.INTERNAL,
                         "no op schema lookup installed (frame.ops installs it when imported)")
    return _lookup(name)


def get_schema(name: str) -> SchemaLike:
    """The schema of op ``name``; ``FrameError(NOT_FOUND)`` naming the op otherwise."""
    schema = lookup_schema(name)
    if schema is None:
        raise not_found(f"unknown op '{name}'")
    return schema


def attr_value_ok(value: Any) -> bool:
    """Is ``value`` in the closed set of attribute values (invariant V7)?"""
    t = type(value)
    if t in (int, float, str, bool) or isinstance(value, DType):
        return True
    if t is tuple:
        return all(type(v) is int for v in value) or all(type(v) is float for v in value)
    return False
