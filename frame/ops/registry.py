"""The op registry: name -> OpSchema."""
from __future__ import annotations

from ..errors import not_found
from ..ir.schemas import install_schema_lookup
from .schema import OpSchema

__all__ = ["register", "get_schema", "lookup", "all_ops", "all_schemas"]

_SCHEMAS: dict[str, OpSchema] = {}


def register(schema: OpSchema, *, replace: bool = False) -> OpSchema:
    """Add ``schema`` to the registry (``replace=True`` to redefine, e.g. in tests)."""
    if schema.name in _SCHEMAS and not replace:
        raise ValueError(f"op '{schema.name}' is already registered")
    _SCHEMAS[schema.name] = schema
    return schema


def unregister(name: str) -> None:
    _SCHEMAS.pop(name, None)


def lookup(name: str) -> OpSchema | None:
    return _SCHEMAS.get(name)


def get_schema(name: str) -> OpSchema:
    """The schema for ``name``; ``FrameError(NOT_FOUND)`` naming the op otherwise."""
    schema = _SCHEMAS.get(name)
    if schema is None:
        raise not_found(f"unknown op '{name}'")
    return schema


def all_ops() -> list[str]:
    return sorted(_SCHEMAS)


def all_schemas() -> list[OpSchema]:
    return [_SCHEMAS[n] for n in sorted(_SCHEMAS)]


# The IR (GraphBuilder, verify) finds schemas through this hook; it cannot import ops.
install_schema_lookup(lookup)
