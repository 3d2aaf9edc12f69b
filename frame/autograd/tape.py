"""Autograd recording (eager, and capture through the same Tape): grad mode,
the tensors that are tracked, and the records eager ops leave behind (docs/design.md §9: eager mode records the ops it
launches; ``Tensor.backward()`` turns the record into a Graph and runs
``build_backward_graph`` on it, see ``eager.py``).

**Tracked tensors.**  A tensor is *tracked* when it requires grad: a leaf that
asked for it (``requires_grad_()``, ``frame.nn.Parameter``) or the floating
result of a recorded op.  ``frame.functions._core.tracked`` maps the ``id`` of
each tracked tensor's ndarray to a weak reference to the tensor; the entry goes
away with the tensor.

**The op-handler stack.**  Every frame function hands its op to the runtime
through ``_core.apply``/``apply1`` with operand *arrays*; they go to the top
level of the thread's op-handler stack (``_core.OpLevel``: kernels and a
``Tape``).  The base level is the eager kernels with ``EAGER_TAPE``; while
``_core.tracked`` is empty (nothing requires grad anywhere) the base level
costs one dict truth test.  Otherwise the level's ``Tape.apply`` runs the op
with the level's kernels and records it when an operand array belongs to a
tracked tensor, a result is floating, and grad mode is on.  Capture's tracer
is a level of its own whose tape (``capture.tracer.CaptureTape``) is this
class over meta arrays, so captured autograd leaves the same records; a level
without a tape (``_core.op_handler``) records nothing.  For the eager tape,
the tensor behind an array is found in two places:

* ``_core.tracked`` (global, weak): any live tracked tensor, by its array.
  Frame functions sometimes convert a tensor with ``as_array`` and pass the
  bare array on to other frame functions (``concat(axis=None)``,
  ``take(axis=None)``, overlapping ``split``, ``layer_norm`` without weight):
  noting tensors only as the frontend converts them, and forgetting them at
  the next op, would lose those.
* the thread's *held* table (strong): ``as_array``/``operands`` hold each
  tracked tensor they convert until an op consumes its array, because a
  temporary can die between its conversion and the op
  (``as_array(reshape(t, -1))``); at most 64 are held, oldest dropped first.

A consequence: a tracked tensor's own ndarray (``t.numpy()``,
``np.asarray(t)``) counts as that tensor when passed to a frame function;
``t.detach()`` is a view, a different ndarray, so it never does.

**Records.**  A ``Record`` holds the op, its canonical attrs, the operand
arrays, one *edge* per operand -- the producing ``(Record, output index)``, a
tracked leaf Tensor, or None for an untracked array (a constant) -- and the
output arrays.  Result tensors hold ``(record, index)`` in ``_grad_fn``.
Records point only backwards (to producers, leaves and arrays) and nothing
points at a result tensor, so there are no cycles: a record lives exactly as
long as some tensor computed from it, and is freed by reference counting when
the last one goes.  Integer and bool results are never tracked (they carry no
gradient, as in PyTorch).

**Versions.**  Tracked tensors carry a ``VersionCounter`` (shared with their
``detach()`` views) that every in-place write bumps; records remember the
versions they saw, and backward refuses to use a value that changed since
(``AutogradError``).  In-place writes on a tracked leaf raise unless grad mode
is off (optimizers update parameters under ``no_grad``).  An in-place op on a
recorded result, or whose operand is tracked, is recorded: the tensor is
*rebased* onto the op's record (see ``write_recorded``).  Untracked arrays are
not versioned: overwriting one in place after a recorded op used it changes
what backward computes (a documented limitation).
"""
from __future__ import annotations

import functools
import itertools
import threading
import weakref
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import ErrorCode, FrameError, FrameTypeError, FrameValueError
from ..tensor import Tensor
from ..functions import _core
from ..functions.elementwise import astype

__all__ = ["AutogradError", "Record", "VersionCounter", "Tape", "EAGER_TAPE", "current_tape",
           "no_grad", "enable_grad", "is_grad_enabled", "set_requires_grad", "check_inplace",
           "write_recorded", "bump_version"]

_wrap = Tensor._wrap
_tracked = _core.tracked
_dispatch = _core._dispatch


class AutogradError(FrameError, RuntimeError):
    """Misuse of autograd: backward on a tensor that does not require grad, an
    in-place update of a leaf that requires grad, a recorded value that was
    overwritten in place before backward needed it."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


# --------------------------------------------------------------------------- grad mode

class _GradMode(threading.local):
    enabled = True


_mode = _GradMode()


def is_grad_enabled() -> bool:
    """Are eager ops recorded in this thread?"""
    return _mode.enabled


class _GradModeContext:
    """Sets grad mode for a ``with`` block; also a decorator (``@frame.no_grad()``
    or ``@frame.no_grad``).  Thread-local, like everything about grad mode."""

    _enabled: bool

    def __new__(cls, func: Callable | None = None):
        self = super().__new__(cls)
        self._saved = []
        return self if func is None else self(func)

    def __enter__(self) -> None:
        self._saved.append(_mode.enabled)
        _mode.enabled = self._enabled

    def __exit__(self, *exc) -> None:
        _mode.enabled = self._saved.pop()

    def __call__(self, func: Callable) -> Callable:
        cls = type(self)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with cls():
                return func(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Do not record ops for autograd in this block (or decorated function): results
    do not require grad, and in-place updates of leaves that require grad are
    allowed (how optimizers update parameters).

    >>> w = frame.ones((2,)).requires_grad_()
    >>> with frame.no_grad():
    ...     w -= 0.1
    ...     (w * 2).requires_grad
    False
    """
    _enabled = False


class enable_grad(_GradModeContext):
    """Record ops again inside a ``no_grad`` block (``frame.grad`` uses it)."""
    _enabled = True


# --------------------------------------------------------------------------- tracking

class VersionCounter:
    """How many in-place writes a tracked tensor's memory has seen."""
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class _Ref(weakref.ref):
    """A weak reference to a tracked tensor that knows its registry key (set right
    after construction: a subclass without __init__ is as cheap as a plain ref)."""
    __slots__ = ("key",)


def _forget(ref: _Ref, tracked: dict = _tracked) -> None:
    # the registry is bound at definition: this callback also runs while the
    # interpreter shuts down, after the module's globals are cleared
    if tracked.get(ref.key) is ref:
        tracked.pop(ref.key, None)


def _track(t: Tensor) -> None:
    t._rg = True
    if t._version is None:
        t._version = VersionCounter()
    key = id(t._data)
    ref = _Ref(t, _forget)
    ref.key = key
    _tracked[key] = ref


def _untrack(t: Tensor) -> None:
    t._rg = False
    ref = _tracked.get(id(t._data))
    if ref is not None and ref() is t:
        _tracked.pop(id(t._data), None)


def set_requires_grad(t: Tensor, flag: bool) -> None:
    """``Tensor.requires_grad_``: only leaves change; only floating tensors track."""
    if flag:
        if t._data.dtype.kind not in "fc":
            raise FrameTypeError(f"only floating-point tensors can require gradients, got "
                                 f"{t.dtype}")
        if not t._rg:
            _track(t)
    elif t._grad_fn is not None:
        raise FrameValueError(f"requires_grad_(False): this tensor is the result of a recorded "
                              f"'{t._grad_fn[0].op}' op, not a leaf; use .detach() for a tensor "
                              f"outside the record")
    elif t._rg:
        _untrack(t)


# --------------------------------------------------------------------------- records

_sequence = itertools.count()


class Record:
    """One recorded op launch (see the module docstring).  ``edges[k]`` is
    ``(Record, output index)``, a leaf Tensor, or None; ``in_versions[k]`` the
    version of a tracked operand when the op ran; ``out_versions[j]`` the
    (counter, version) of output ``j``'s array when it was made.  ``seq`` orders
    records by creation, which is a topological order."""

    __slots__ = ("op", "attrs", "inputs", "edges", "in_versions", "outputs", "out_versions",
                 "seq")

    def __init__(self, op: str, attrs: Mapping[str, Any], inputs: tuple, edges: tuple,
                 in_versions: tuple, outputs: tuple):
        self.op = op
        self.attrs = attrs
        self.inputs = inputs
        self.edges = edges
        self.in_versions = in_versions
        self.outputs = outputs
        self.out_versions: tuple = ()
        self.seq = next(_sequence)

    def __repr__(self) -> str:
        outs = ", ".join(f"{o.dtype}{list(o.shape)}" for o in self.outputs)
        return f"<Record {self.op} -> {outs}>"


def _floating(outs: Sequence[np.ndarray]) -> bool:
    for o in outs:
        if o.dtype.kind in "fc":
            return True
    return False  # integer / bool results carry no gradient


class Tape:
    """The autograd recorder of one level of the op-handler stack
    (``_core.OpLevel``): it runs each op with the level's kernels and records
    it -- a ``Record`` whose floating results are tracked -- when grad mode is
    on and an operand array belongs to a tracked tensor.  The eager tape
    (``EAGER_TAPE``, on the base level) and capture's tape (on the tracer's
    level) are this class; they differ only in where tracked tensors are found
    (``tensors``: array id -> weak reference), how a tensor becomes tracked
    (``track``), and where grad mode comes from (``mode.enabled``: the thread's
    grad mode for eager, the translation's symbolic one for capture).  Backward
    (eager.py) reads the records the same way whichever tape made them."""

    def __init__(self, tensors: dict, mode):
        self.tensors = tensors
        self.mode = mode

    def track(self, t: Tensor) -> None:
        _track(t)

    def _sources(self, arrays: Sequence[np.ndarray]) -> list | None:
        """The tracked tensor behind each operand array (None for untracked ones), or
        None when there is none.  Consumes the thread's held entries for these arrays."""
        held = _dispatch.held
        tensors = self.tensors
        found = None
        for k, a in enumerate(arrays):
            t = held.pop(id(a), None) if held else None
            if t is None or t._data is not a:
                ref = tensors.get(id(a))
                if ref is None:
                    continue
                t = ref()
            if t is not None and t._data is a and t._rg:
                if found is None:
                    found = [None] * len(arrays)
                found[k] = t
        return found

    def apply(self, run, op: str, arrays: Sequence[np.ndarray], attrs: Mapping[str, Any]) -> list:
        """Run ``op`` with the kernels ``run``; record it if an operand belongs to a
        tracked tensor, a result is floating and grad mode is on.  Returns Tensors."""
        outs = run(op, arrays, attrs)
        sources = self._sources(arrays)
        if sources is not None:
            for o in outs:
                if o.dtype.kind in "fc":  # integer / bool results carry no gradient
                    if self.mode.enabled:
                        return self._record(op, attrs, tuple(arrays), sources, outs)
                    break
        if len(outs) == 1:
            return [_wrap(outs[0])]
        return [_wrap(o) for o in outs]

    def record_call(self, run, op: str, values: Sequence, attrs: Mapping[str, Any]) -> list:
        """Run ``op`` on ``values`` (Tensors or ndarrays) and record it when a Tensor
        operand is tracked, whatever the grad mode: what backward uses to build a
        differentiable gradient (``create_graph``).  Returns Tensors."""
        arrays = tuple(v._data if isinstance(v, Tensor) else v for v in values)
        outs = run(op, arrays, attrs)
        sources = [v if isinstance(v, Tensor) and v._rg else None for v in values]
        if any(s is not None for s in sources) and _floating(outs):
            return self._record(op, attrs, arrays, sources, outs)
        return [_wrap(o) for o in outs]

    def _record(self, op: str, attrs, arrays: tuple, sources: list,
                outs: Sequence[np.ndarray]) -> list:
        edges, versions = [], []
        for t in sources:
            if t is None:
                edges.append(None)
                versions.append(None)
            else:
                edges.append(t if t._grad_fn is None else t._grad_fn)
                versions.append(t._version.value)
        for a in arrays:  # a kernel that returned an operand: the result must own its memory
            for o in outs:
                if o is a:
                    outs = tuple(o.copy() if o is a else o for o in outs)
        rec = Record(op, attrs, arrays, tuple(edges), tuple(versions), tuple(outs))
        results, out_versions = [], []
        for j, o in enumerate(rec.outputs):
            t = _wrap(o)
            if o.dtype.kind in "fc":
                t._grad_fn = (rec, j)
                self.track(t)
                out_versions.append((t._version, 0))
            else:
                out_versions.append((None, 0))
            results.append(t)
        rec.out_versions = tuple(out_versions)
        return results


#: The tape of the base (eager) level: tracked tensors in ``_core.tracked``.
EAGER_TAPE = Tape(_tracked, _mode)


def current_tape() -> Tape:
    """The tape of the top op-handler level (the eager tape under a level without one)."""
    tape = _core.current_level().tape
    return tape if tape is not None else EAGER_TAPE


# --------------------------------------------------------------------------- in-place writes

def check_inplace(t: Tensor, what: str) -> None:
    """Refuse an in-place update of a leaf that requires grad while grad mode is on."""
    if t._rg and t._grad_fn is None and _mode.enabled:
        raise AutogradError(
            f"{what}: a leaf Variable that requires grad is being used in an in-place "
            f"operation (tensor of shape {list(t.shape)}, {t.dtype}); update it under "
            f"`with frame.no_grad():` (as optimizers do), or update a .detach()ed tensor")


def bump_version(t: Tensor) -> None:
    """Count an in-place write to ``t``'s memory (tracked tensors and their views)."""
    v = t._version
    if v is not None:
        v.value += 1


def write_recorded(target: Tensor, result: Tensor) -> None:
    """``target[...] = result`` where ``result`` came from a recorded op: ``target``
    keeps its memory and becomes that op's result (PyTorch's rebase).

    The record's operands that are ``target``'s array are replaced by copies first,
    so the op keeps the values it saw; its saved output stays ``result``'s own
    array.  Records that saved ``target``'s old value see the version bump."""
    old = target._data
    rec = result._grad_fn[0]
    rec.inputs = tuple(a.copy() if a is old else a for a in rec.inputs)
    if result._data.dtype != old.dtype:  # 'same_kind' writes cast: record the cast too
        result = astype(result, target.dtype)
    rec, j = result._grad_fn
    np.copyto(old, result._data, casting="same_kind")
    if target._version is None:
        target._version = VersionCounter()
    target._version.value += 1
    target._grad_fn = (rec, j)
    if not target._rg:
        _track(target)


_core.set_base_tape(EAGER_TAPE)
