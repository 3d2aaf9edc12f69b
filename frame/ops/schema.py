"""OpSchema: everything that is an op's own knowledge, in one place.

Name, number of inputs, attribute spec, traits, type inference, the NumPy
reference kernel (the numerical definition of the op), an optional
decomposition into primitives and a slot for the gradient rule.  Backends keep
their own lowering tables elsewhere.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..dtypes import DType, as_dtype
from ..errors import FrameTypeError, FrameValueError
from ..ir.schemas import attr_value_ok  # noqa: F401  (re-exported: the closed set is the IR's)
from ..ir.types import TensorType

__all__ = ["AttrSpec", "OpSchema", "REQUIRED", "ATTR_KINDS", "TRAITS", "coerce_attr",
           "attr_value_ok"]


class _Required:
    __slots__ = ()

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

# The closed set of attribute kinds (docs/design.md §3).
ATTR_KINDS = frozenset({"int", "float", "str", "bool", "ints", "floats", "dtype", "shape"})
TRAITS = frozenset({"elementwise", "fusable", "commutative", "has_side_effect", "broadcast",
                    "reduction", "shape_op", "composite", "nondifferentiable", "fused",
                    "collective", "may_raise"})


class AttrSpec:
    __slots__ = ("kind", "default")

    def __init__(self, kind: str, default: Any = REQUIRED):
        if kind not in ATTR_KINDS:
            raise ValueError(f"unknown attr kind {kind!r}; expected one of {sorted(ATTR_KINDS)}")
        self.kind = kind
        self.default = default

    def __repr__(self) -> str:
        return f"AttrSpec({self.kind!r}, {self.default!r})"


def _kind_ok(kind: str, value: Any) -> bool:
    t = type(value)
    if kind == "int":
        return t is int
    if kind == "float":
        return t is float
    if kind == "str":
        return t is str
    if kind == "bool":
        return t is bool
    if kind in ("ints", "shape"):
        return t is tuple and all(type(v) is int for v in value)
    if kind == "floats":
        return t is tuple and all(type(v) is float for v in value)
    if kind == "dtype":
        return isinstance(value, DType)
    return False


def coerce_attr(op: str, name: str, kind: str, value: Any) -> Any:
    """Bring a user-supplied attr value to its canonical form, or raise."""
    try:
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError
            return int(value)
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError
            return float(value)
        if kind == "str":
            if not isinstance(value, str):
                raise TypeError
            return value
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError
            return bool(value)
        if kind in ("ints", "shape"):
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                return (int(value),)
            out = tuple(value)
            if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) for v in out):
                raise TypeError
            return tuple(int(v) for v in out)
        if kind == "floats":
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                return (float(value),)
            return tuple(float(v) for v in value)
        if kind == "dtype":
            return as_dtype(value)
    except (TypeError, ValueError):
        pass
    raise FrameTypeError(f"{op}: attribute '{name}' must be {kind}, got {value!r}")


class OpSchema:
    """The definition of one op.

    ``infer(types, attrs) -> list[TensorType]`` raises FrameValueError /
    FrameTypeError for invalid inputs.  ``reference(inputs, attrs)`` returns a
    tuple of arrays.  ``decompose(builder, inputs, attrs)`` (optional) returns
    output values built from primitive ops.  ``gradient`` is set by autograd.
    ``num_inputs`` is an int or ``(min, max)``; ``max`` may be None (variadic).
    """

    __slots__ = ("name", "num_inputs", "attrs", "traits", "infer", "reference", "decompose",
                 "gradient", "doc", "_attr_names")

    def __init__(self, name: str, num_inputs: int | tuple[int, int | None],
                 infer: Callable[[Sequence[TensorType], Mapping[str, Any]], list[TensorType]],
                 reference: Callable[[Sequence[np.ndarray], Mapping[str, Any]], tuple],
                 attrs: Mapping[str, AttrSpec] | None = None, traits: Sequence[str] = (),
                 decompose: Callable | None = None, doc: str = ""):
        self.name = name
        self.num_inputs = (num_inputs, num_inputs) if isinstance(num_inputs, int) else tuple(num_inputs)
        self.attrs: dict[str, AttrSpec] = dict(attrs or {})
        unknown = set(traits) - TRAITS
        if unknown:
            raise ValueError(f"op {name}: unknown traits {sorted(unknown)}")
        self.traits = frozenset(traits)
        self.infer = infer
        self.reference = reference
        self.decompose = decompose
        self.gradient: Callable | None = None
        self.doc = doc
        self._attr_names = tuple(self.attrs)

    def has(self, trait: str) -> bool:
        return trait in self.traits

    def arity_ok(self, n: int) -> bool:
        lo, hi = self.num_inputs
        return n >= lo and (hi is None or n <= hi)

    def arity_text(self) -> str:
        lo, hi = self.num_inputs
        if lo == hi:
            return str(lo)
        return f"at least {lo}" if hi is None else f"{lo} to {hi}"

    def check_arity(self, n: int) -> None:
        if not self.arity_ok(n):
            raise FrameTypeError(f"{self.name}: expected {self.arity_text()} inputs, got {n}")

    def normalize_attrs(self, attrs: Mapping[str, Any]) -> dict[str, Any]:
        """Fill defaults, coerce values to canonical kinds, reject unknown/missing attrs.
        The result has every attr of the spec, in spec order."""
        unknown = [k for k in attrs if k not in self.attrs]
        if unknown:
            raise FrameTypeError(f"{self.name}: unknown attribute(s) {', '.join(sorted(unknown))}; "
                                 f"expected {', '.join(self._attr_names) or 'none'}")
        out = {}
        for name, spec in self.attrs.items():
            if name in attrs:
                value = attrs[name]
                out[name] = value if _kind_ok(spec.kind, value) else coerce_attr(self.name, name, spec.kind, value)
            elif spec.default is REQUIRED:
                raise FrameTypeError(f"{self.name}: missing required attribute '{name}'")
            else:
                out[name] = spec.default
        return out

    def attrs_match_spec(self, attrs: Mapping[str, Any]) -> str | None:
        """None when ``attrs`` is canonical for this op, else a sentence saying why not."""
        for name in attrs:
            if name not in self.attrs:
                return f"unknown attribute '{name}'"
        for name, spec in self.attrs.items():
            if name not in attrs:
                return f"missing attribute '{name}'"
            if not _kind_ok(spec.kind, attrs[name]):
                return f"attribute '{name}' must be {spec.kind}, got {attrs[name]!r}"
        return None

    def __repr__(self) -> str:
        return f"<OpSchema {self.name}>"

