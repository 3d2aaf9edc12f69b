"""The eager escape hatch: one op, packed as a KernelInvocation, through
``Backend.launch``.  No graph, no passes, no cache of compiled code.

Type inference runs once per (op, attrs, input types) and is cached, so a
repeated eager op costs a dict lookup on top of the kernel itself; its result
validates the arguments (broadcasting, axes, dtypes) with messages that name
the op and the operands.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..dtypes import from_numpy
from ..hal.backend import KernelInvocation, get_backend
from ..errors import ErrorCode, FrameError, FrameIndexError, FrameTypeError, FrameValueError
from ..ir.types import TensorType
from ..ops.registry import get_schema
from . import threads

__all__ = ["run_op", "infer_types", "eager_backend_name"]

eager_backend_name = "cpu"
_INFER_CACHE: dict[tuple, list[TensorType]] = {}
_INFER_CACHE_LIMIT = 8192
_backend = None


def _describe(op: str, arrays: Sequence[np.ndarray]) -> str:
    shown = ", ".join(f"{a.dtype}[{','.join(map(str, a.shape))}]" for a in arrays)
    return f"{op}({shown})"


def _reraise(err: Exception, op: str, arrays) -> None:
    """Re-raise ``err`` with the op and operand types in front of the problem."""
    text = str(err)
    if text.startswith(op + ": "):
        text = text[len(op) + 2:]
    msg = f"{_describe(op, arrays)}: {text}"
    if isinstance(err, FrameError):
        raise err.with_message(msg) from None
    if isinstance(err, TypeError):
        raise FrameTypeError(msg) from err
    raise FrameValueError(msg) from err


def _key(op: str, arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> tuple:
    n = len(arrays)
    if n == 2:
        a, b = arrays
        return (op, tuple(attrs.values()) if attrs else (), a.dtype, a.shape, b.dtype, b.shape)
    if n == 1:
        a = arrays[0]
        return (op, tuple(attrs.values()) if attrs else (), a.dtype, a.shape)
    return (op, tuple(attrs.values()), *[(a.dtype, a.shape) for a in arrays])


def infer_types(op: str, arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list[TensorType]:
    """Output types of ``op`` on these arrays (cached); raises a clear error if invalid."""
    return _inferred(op, arrays, attrs)[0]


def _inferred(op: str, arrays, attrs) -> tuple[list[TensorType], list[tuple]]:
    """(output types, [(numpy dtype, shape)] of the outputs), cached per key."""
    key = _key(op, arrays, attrs)
    try:
        entry = _INFER_CACHE.get(key)
    except TypeError:  # unhashable attr value: skip the cache
        key, entry = None, None
    if entry is not None:
        return entry
    schema = get_schema(op)
    try:
        schema.check_arity(len(arrays))
        in_types = [TensorType(from_numpy(a.dtype), a.shape) for a in arrays]
        types = schema.infer(in_types, attrs)
    except (FrameError, TypeError, ValueError) as err:
        _reraise(err, op, arrays)
    entry = (types, [(t.dtype.np, t.shape) for t in types])
    if key is not None:
        if len(_INFER_CACHE) >= _INFER_CACHE_LIMIT:
            _INFER_CACHE.clear()
        _INFER_CACHE[key] = entry
    return entry


def run_op(op: str, arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list[np.ndarray]:
    """Run one op eagerly on host arrays; returns its outputs as ndarrays.

    ``attrs`` must already be canonical (``OpSchema.normalize_attrs``).
    """
    global _backend
    types, expected = _inferred(op, arrays, attrs)
    backend = _backend
    if backend is None:
        backend = get_backend(eager_backend_name)
        threads.configure(backend)
        _backend = backend
    try:
        outs = backend.launch(KernelInvocation(op, arrays, attrs))
    except FrameError as err:
        if err.code is ErrorCode.INVALID_ARGUMENT and not err.message.startswith(_describe(op, arrays)):
            _reraise(err, op, arrays)  # name the op and operand types, like inference errors
        raise
    except IndexError as err:
        raise FrameIndexError(f"{_describe(op, arrays)}: {err}") from err
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as err:
        _reraise(err, op, arrays)
    result = []
    for out, (dt, shape) in zip(outs, expected):
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if (out.dtype is not dt and out.dtype != dt) or out.shape != shape:
            raise FrameError(ErrorCode.INTERNAL,
                             f"{_describe(op, arrays)}: kernel returned {out.dtype}{list(out.shape)}, "
                             f"type inference says {types[len(result)]} (a bug in op '{op}')")
        result.append(out)
    return result
