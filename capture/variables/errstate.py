"""``with np.errstate(...)`` in traced code: NumPy's floating-point error state
as a modelled context manager.

``np.errstate(divide="ignore", ...)`` made in the function is an
``ErrstateVariable`` holding the modes it sets (its keywords ``all``,
``divide``, ``over``, ``under``, ``invalid``; constants).  Entering it sets the
tracer's error state (``Tracer.errstate``: the modes every open block sets,
inner blocks over outer ones) and every node traced until the block ends
carries it (``Node.errstate``): the backends run that node's kernels under it,
set over the caller's state at run time (docs/capture.md, "Floating-point
errors").  The block's end, or an exception leaving it, restores the state
the block found; nothing is suppressed (``np.errstate.__exit__`` returns None).

Not modelled (a graph break, NumPy runs it): ``call=`` (an error callback),
modes that are not constants or not NumPy's (NumPy raises), entering one
object twice (NumPy raises), ``np.seterr``.
"""
from __future__ import annotations

import numpy as np

from frame.ir.graph import ERR_CATEGORIES, ERR_MODES

from ..errors import Unsupported
from .base import ConstantVariable, Variable

__all__ = ["ErrstateVariable", "ErrstateExitVariable", "make_errstate", "reenter_errstate"]


def _merged(outer: tuple | None, own: tuple) -> tuple | None:
    """The modes of a block setting ``own`` inside blocks setting ``outer``."""
    modes = dict(outer or ())
    modes.update(own)
    return tuple(sorted(modes.items())) or None


def make_errstate(args, kwargs) -> "ErrstateVariable":
    """``np.errstate(**kwargs)`` with constant modes (else a graph break)."""
    if args:
        raise Unsupported("unsupported_call", "np.errstate with positional arguments")
    given = {}
    for name, var in kwargs.items():
        if name not in ERR_CATEGORIES + ("all",):
            raise Unsupported("unsupported_call", f"np.errstate({name}=...)")
        if not var.is_constant():
            raise Unsupported("unsupported_call", f"np.errstate({name}=...) not a constant")
        mode = var.as_constant()
        if mode is None:
            continue   # NumPy's default: not set
        if not isinstance(mode, str) or mode not in ERR_MODES:
            raise Unsupported("unsupported_call", f"np.errstate({name}={mode!r})")
        given[name] = mode
    own = {c: given["all"] for c in ERR_CATEGORIES} if "all" in given else {}
    own.update((c, m) for c, m in given.items() if c != "all")
    return ErrstateVariable(tuple(sorted(own.items())))


class ErrstateVariable(Variable):
    """An ``np.errstate(...)`` object made in the traced function, not yet
    entered (NumPy's can be entered once)."""
    __slots__ = ("modes", "entered")

    def __init__(self, modes: tuple):
        super().__init__(None)
        self.modes = modes
        self.entered = False

    def python_type(self) -> type:
        return np.errstate

    def enter_context(self, tx):
        """``BEFORE_WITH``: the nodes of the block run under these modes."""
        if self.entered:
            raise Unsupported("unsupported_call", "entering an np.errstate twice (NumPy raises)")
        self.entered = True
        tracer = tx.tr.tracer
        restore = tracer.errstate
        inside = _merged(restore, self.modes)
        tracer.errstate = inside
        return ErrstateExitVariable(restore, inside), ConstantVariable(None)

    def reconstruct(self, rb) -> str:
        """Live at a graph break before its block: a new, equal object."""
        if self.entered:
            raise Unsupported("unsupported_object", "an np.errstate object after it was entered")
        kwargs = ", ".join(f"{category}={mode!r}" for category, mode in self.modes)
        return f"{rb.const(np.errstate)}({kwargs})"

    def __repr__(self) -> str:
        return f"errstate{self.modes}"


class ErrstateExitVariable(Variable):
    """The bound ``__exit__`` of an ``np.errstate`` block: called with three
    Nones at the block's end or with the exception leaving it
    (``WITH_EXCEPT_START``); restores the state, suppresses nothing.  Live at
    a graph break inside the block, it is a real block the entry enters
    (``reconstruct``)."""
    __slots__ = ("restore", "inside", "done")

    def __init__(self, restore: tuple | None, inside: tuple | None):
        super().__init__(None)
        self.restore = restore
        self.inside = inside
        self.done = False

    def reconstruct(self, rb) -> str:
        """At a break inside the block: the ``__exit__`` of a real
        ``np.errstate`` with the block's modes, entered by the entry after the
        graph ran (outer blocks first), so that the native instruction and the
        resume function run in the block's state, and the resume function's
        block end restores the caller's."""
        if self.done:
            raise Unsupported("unsupported_object", "the __exit__ of an np.errstate block "
                                                    "that has ended")
        return rb.reenter(self, f"{rb.const(reenter_errstate)}({self.inside!r})")

    def call(self, tx, args, kwargs):
        if kwargs or len(args) != 3 or self.done:
            raise Unsupported("unsupported_call", "calling an np.errstate's __exit__ other "
                                                  "than at the end of its with block")
        self.done = True
        tx.tr.tracer.errstate = self.restore
        return ConstantVariable(None)

    def __repr__(self) -> str:
        return "ErrstateExit"


def reenter_errstate(modes: tuple | None):
    """Enter a real ``np.errstate`` setting ``modes`` (an entry at a break
    inside a block): its bound ``__exit__``."""
    manager = np.errstate(**dict(modes or ()))
    manager.__enter__()
    return manager.__exit__
