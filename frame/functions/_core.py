"""What every user-facing op function shares: turning arguments into operand
arrays (with NEP 50 weak Python scalars), running the op, wrapping results.

``apply`` is the single point where a frame function hands an op to the
runtime: it goes to the top level of a per-thread stack of op handlers
(``OpLevel``: kernels plus an optional autograd tape), where the eager
kernels with the eager tape are the base and capture pushes its graph builder
with its own tape (docs/compiler.md, "The op-handler stack").
"""
from __future__ import annotations

import contextlib
import numbers
import threading
from typing import Any, Mapping, Sequence

import numpy as np

from ..dtypes import DType, as_dtype, float32, from_numpy, int64, bool_, weak_scalar_dtype
from ..errors import FrameOverflowError, FrameTypeError, FrameValueError
from ..ops.registry import get_schema
from ..runtime import eager
from ..tensor import Tensor

__all__ = ["apply", "apply1", "as_array", "operands", "schema_attrs", "bind_schema", "OpLevel",
           "push_level", "op_handler", "current_level", "current_op_handler", "set_base_tape",
           "tracked", "eager_op_hook", "known_value"]

_PY_SCALARS = (bool, int, float, complex)


def as_array(x, dtype: DType | None = None) -> np.ndarray:
    """A strongly typed operand: Tensor data, an ndarray, a NumPy scalar, or a
    Python scalar / nested list (float -> float32, int -> int64, bool -> bool)."""
    if type(x) is Tensor:
        arr = x._data
        if x._rg:
            _hold(x)
    elif type(x) is np.ndarray:
        from_numpy(x.dtype)  # rejects unsupported dtypes with a clear TypeError
        arr = x
    elif isinstance(x, Tensor):
        arr = x._data
        if x._rg:
            _hold(x)
    elif isinstance(x, np.generic):
        arr = np.asarray(x)
        from_numpy(arr.dtype)
    elif isinstance(x, np.ndarray):
        arr = np.asarray(x)
        from_numpy(arr.dtype)
    else:
        arr = _python_data_to_array(x)
    if dtype is not None and arr.dtype != dtype.np:
        arr = arr.astype(dtype.np)
    return arr


def _python_data_to_array(x) -> np.ndarray:
    if isinstance(x, (str, bytes)) or x is None:
        raise FrameTypeError(f"expected a tensor, array or number, got {type(x).__name__} {x!r}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise FrameTypeError(f"cannot make a tensor from {type(x).__name__}: {e}") from e
    kind = arr.dtype.kind
    if kind == "f":
        return arr.astype(np.float32)
    if kind in "iu":
        return arr.astype(np.int64)
    if kind == "b":
        return arr
    if kind == "c":
        return arr.astype(np.complex64)
    if kind == "O":
        # lists holding Tensors / arrays
        if arr.size and all(isinstance(v, Tensor) for v in arr.ravel()):
            return _python_data_to_array([np.asarray(v._data) for v in arr.ravel()]).reshape(
                arr.shape + arr.ravel()[0].shape)
    raise FrameTypeError(f"cannot make a tensor from {type(x).__name__} of dtype {arr.dtype}")


def operands(*args) -> list[np.ndarray]:
    """Operand arrays for an elementwise op: tensors/arrays are strong, Python
    scalars weak (NEP 50): they take the dtype NumPy would give them next to the
    strongly typed operands (``float32_tensor * 2.5`` stays float32)."""
    if len(args) == 2:  # the common cases, kept cheap
        x, y = args
        tx, ty = type(x), type(y)
        if tx is Tensor:
            if x._rg:
                _hold(x)
            if ty is Tensor:
                if y._rg:
                    _hold(y)
                return [x._data, y._data]
            if ty in _PY_SCALARS:
                return [x._data, _weak(y, x._data.dtype)]
        elif ty is Tensor and tx in _PY_SCALARS:
            if y._rg:
                _hold(y)
            return [_weak(x, y._data.dtype), y._data]
    strong = [None] * len(args)
    any_weak = False
    for i, a in enumerate(args):
        if type(a) is Tensor:
            strong[i] = a._data
            if a._rg:
                _hold(a)
        elif type(a) in _PY_SCALARS:  # exact: NumPy scalars (np.float64 is a float) are strong
            any_weak = True
        else:
            strong[i] = as_array(a)
    if not any_weak:
        return strong
    arrays = [s for s in strong if s is not None]
    if not arrays:
        return [as_array(a) for a in args]
    base = from_numpy(np.result_type(*arrays)) if len(arrays) > 1 else from_numpy(arrays[0].dtype)
    out = []
    for a, s in zip(args, strong):
        if s is not None:
            out.append(s)
        else:
            try:
                dt = weak_scalar_dtype(base, a)
                out.append(np.asarray(a, dtype=dt.np))
            except OverflowError as e:
                raise FrameOverflowError(f"Python integer {a} out of bounds for {base.name}") from e
    return out


_WEAK_DTYPES: dict[tuple, np.dtype] = {}


def _weak(scalar, strong: np.dtype) -> np.ndarray:
    """A Python scalar as a 0-d array of the dtype NEP 50 gives it next to ``strong``.
    The dtype depends only on (strong dtype, scalar type), so it is cached."""
    key = (strong, type(scalar))
    dt = _WEAK_DTYPES.get(key)
    if dt is None:
        dt = _WEAK_DTYPES[key] = weak_scalar_dtype(from_numpy(strong), scalar).np
    try:
        return np.asarray(scalar, dtype=dt)
    except OverflowError as e:
        raise FrameOverflowError(f"Python integer {scalar} out of bounds for {dt}") from e


def _copy(array) -> np.ndarray:
    """The base level's ``copy``: a new C-contiguous array of the same value."""
    return np.array(array, order="C")


class OpLevel:
    """One level of the op-handler stack that every frame function dispatches
    through (``apply``), the way JAX's ``Primitive.bind`` goes to the current
    trace.  A level is the *kernels* that compute an op's result arrays
    (``run(op, arrays, attrs) -> list[array]``: ``runtime.eager.run_op``, or
    capture's graph builder, or a test's recorder) and, optionally, the
    autograd *tape* that records what those kernels compute
    (``frame.autograd.tape.Tape``: the eager tape on the base level, capture's
    tape on its level).  ``apply`` (below) runs the top level: through its
    tape (``tape.apply(run, op, arrays, attrs)``), or, a level without a tape,
    straight through its kernels (nothing is recorded).  Backward (``frame.autograd.eager``) uses two more:
    ``grad_run``, the kernels for the gradient nodes it evaluates (the graph
    builder marks the nodes it makes as backward ones), and ``copy(array)``, a
    fresh array of the same value (what it hands out instead of a recorded
    value).  ``draw(method, shape, dtype, param) -> array``, when set, makes
    the random draws of ``frame.functions.random`` (the tracer's: a graph
    input drawn on the host when the graph runs); unset, they come from the
    process-wide generator now.  ``known(array) -> ndarray | None``, when set,
    gives the value an array of the level holds before anything runs (a
    constant of capture's graph: ``np.array([0., 1.])`` made in the traced
    function), None for others (``known_value``)."""
    __slots__ = ("run", "tape", "grad_run", "copy", "draw", "known")

    def __init__(self, run, tape=None, grad_run=None, copy=None, draw=None, known=None):
        self.run = run
        self.tape = tape
        self.grad_run = grad_run if grad_run is not None else run
        self.copy = copy if copy is not None else _copy
        self.draw = draw
        self.known = known


# The base level: eager kernels, and the eager autograd tape, which
# ``frame.autograd.tape`` registers with ``set_base_tape`` when it is imported.
_EAGER = OpLevel(eager.run_op)
_run_op = eager.run_op


class _Dispatch(threading.local):
    """Per-thread op-handler stack: ``level`` is its top (the eager base level
    unless a tracer pushed its own with ``push_level``/``op_handler``; each
    push restores the level below when its block ends).

    ``held``: tensors that require grad whose arrays ``as_array``/``operands``
    handed out, by array id, until an op uses the array (see ``tracked``)."""
    level = _EAGER
    held = None


_dispatch = _Dispatch()
_wrap = Tensor._wrap


@contextlib.contextmanager
def push_level(level: OpLevel):
    """Make ``level`` the top of this thread's op-handler stack while the block runs."""
    below = _dispatch.level
    _dispatch.level = level
    try:
        yield level
    finally:
        _dispatch.level = below


def op_handler(handler):
    """Route every op of the frame functions, in this thread, to
    ``handler(op, arrays, attrs) -> list[array]`` while the block runs (a level
    without a tape: nothing is recorded for autograd)."""
    return push_level(OpLevel(handler))


def current_level() -> OpLevel:
    return _dispatch.level


def known_value(x) -> np.ndarray | None:
    """The value of the frame Tensor ``x`` when the current level knows it
    before running (a constant of a traced graph; read-only), else None: an
    eager tensor's value is data, not a constant of the program, so a NumPy
    function taking constant parameters (``np.digitize``'s bins) asks this
    rather than reading any Tensor's data."""
    known = _dispatch.level.known
    if known is None or not isinstance(x, Tensor):
        return None
    return known(x._data)


def current_op_handler():
    """The kernels of the top level: ``run(op, arrays, attrs) -> list[array]``."""
    return _dispatch.level.run


def set_base_tape(tape) -> None:
    """Register the eager autograd tape on the base level (``frame.autograd``)."""
    _EAGER.tape = tape


# ``tracked`` maps the id of the ndarray of every tensor the eager tape tracks
# (requires grad) to a weak reference to that tensor (frame/autograd/tape.py
# fills it).  While it is empty -- nothing requires grad anywhere -- an eager op
# costs one dict truth test more; otherwise the base level's tape runs it and
# records it when an operand is tracked.  The weak references miss a tensor that
# died while its array is still on the way to an op (``as_array(reshape(t,
# -1))``), so conversions also hold tracked tensors, per thread, until an op
# consumes their array (at most ``_HELD_LIMIT``; the oldest go first).
tracked: dict = {}
_HELD_LIMIT = 64


def _hold(t: Tensor) -> None:
    held = _dispatch.held
    if held is None:
        held = _dispatch.held = {}
    held[id(t._data)] = t
    if len(held) > _HELD_LIMIT:
        del held[next(iter(held))]


# Auto-jit's op counter (capture/autojit.py installs it while ``frame.config.auto_jit``
# is on, else None): ``eager_op_hook(op)`` is called for every op run on the base
# level, before it runs.  Off, it costs one global load and an identity test.
eager_op_hook = None


def apply(op: str, arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list:
    """Run ``op`` on operand arrays through the top level of the op-handler
    stack; returns Tensors.  The base level with nothing tracked is inlined."""
    level = _dispatch.level
    if level is _EAGER:
        if eager_op_hook is not None:
            eager_op_hook(op)
        if not tracked:
            return [_wrap(o) for o in _run_op(op, arrays, attrs)]
    tape = level.tape
    if tape is not None:
        return tape.apply(level.run, op, arrays, attrs)
    return [_wrap(o) for o in level.run(op, arrays, attrs)]


def apply1(op: str, arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]):
    """``apply`` for single-output ops."""
    level = _dispatch.level
    if level is _EAGER:
        if eager_op_hook is not None:
            eager_op_hook(op)
        if not tracked:
            return _wrap(_run_op(op, arrays, attrs)[0])
    tape = level.tape
    if tape is not None:
        return tape.apply(level.run, op, arrays, attrs)[0]
    return _wrap(level.run(op, arrays, attrs)[0])


def schema_attrs(op: str, **attrs) -> dict:
    """Canonical attrs for ``op`` (defaults filled, values coerced)."""
    return get_schema(op).normalize_attrs(attrs)


def bind_schema(op: str):
    """Decorator: record the op schema on a user-facing function so capture can
    recognise it by identity (``fn.__frame_op__``)."""
    def deco(fn):
        fn.__frame_op__ = op
        return fn
    return deco
