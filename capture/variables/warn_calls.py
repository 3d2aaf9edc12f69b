"""``warnings.warn(message, category, stacklevel)`` in the traced code.

The warning is recorded (``SideEffects.warnings``, a ``Warned``) with what
``warnings.warn`` computes from the frame ``stacklevel`` names -- its file,
its current line, its globals (module name, ``__warningregistry__``) -- and
issued by the entry with ``warnings.warn_explicit`` right after the graph,
before anything is written (``codegen._warning_lines``): the filters, the
"once"/"default"/"module" registries and ``showwarning`` see the warning the
plain function gives.  Two things make that exact:

- a filter turning the warning into an exception: the entry asks the filters
  first (``frame.hal.fp_errors.WarningCheck``) and runs the plain function
  when one would raise, so the exception comes with everything before it
  done and nothing after it;
- NumPy's floating-point warnings of the graph's ops are given while the
  graph runs, before the entry's: a warning followed by ops that may give
  one breaks the graph before the ``warn`` call instead
  (``codegen._warning_order``).

Not modelled (the call stays a graph break, run natively): a message that is
not a constant ``str`` (a ``Warning`` instance), a ``stacklevel`` that names
a frame outside the trace (the jitted function's caller: only the native
call knows it), ``source=`` other than None, ``skip_file_prefixes=``.
"""
from __future__ import annotations

import inspect
import warnings

from ..errors import Unsupported
from ..side_effects import Warned
from .base import ConstantVariable, Variable

__all__ = ["warnings_warn", "warning_site"]

_PARAMS = ("message", "category", "stacklevel", "source")


def _bind(args: list[Variable], kwargs: dict[str, Variable]) -> dict[str, Variable]:
    if len(args) > len(_PARAMS) or any(k not in _PARAMS for k in kwargs) \
            or any(k in _PARAMS[:len(args)] for k in kwargs):
        # (skip_file_prefixes=, or arguments warn() rejects: the native call says how)
        raise Unsupported("unsupported_call", "warnings.warn() with arguments it does not "
                                              "take or keywords not modelled")
    bound = dict(zip(_PARAMS, args))
    bound.update(kwargs)
    if "message" not in bound:
        raise Unsupported("unsupported_call", "warnings.warn() without a message")
    return bound


def _constant(tx, v: Variable | None, default=None):
    if v is None:
        return default
    if v.is_constant():
        return v.as_constant()
    return tx.real_value(v)


def _warning_frame(tx, stacklevel: int):
    """The simulated frame ``stacklevel`` names, as ``warnings.warn`` walks
    ``f_back`` from its caller (a generator's is the frame resuming it)."""
    frame = tx
    for _ in range(max(stacklevel, 1) - 1):
        frame = frame.resumer if frame.code.co_flags & inspect.CO_GENERATOR else frame.parent
        if frame is None:
            raise Unsupported("unsupported_call", f"warnings.warn(stacklevel={stacklevel}) names "
                                                  f"the jitted function's caller")
    return frame


def warnings_warn(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = _bind(args, kwargs)
    message = _constant(tx, bound["message"])
    if type(message) is not str:
        raise Unsupported("unsupported_call", "warnings.warn() of a message that is not a "
                                              "constant str")
    category = _constant(tx, bound.get("category"))
    if category is None:
        category = UserWarning
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise Unsupported("unsupported_call", "warnings.warn() of a category that is not a "
                                              "Warning class")
    stacklevel = _constant(tx, bound.get("stacklevel"), 1)
    if type(stacklevel) is not int:
        raise Unsupported("unsupported_call", "warnings.warn() with a stacklevel that is not a "
                                              "constant int")
    if _constant(tx, bound.get("source")) is not None:
        raise Unsupported("unsupported_call", "warnings.warn(source=...)")
    frame = _warning_frame(tx, stacklevel)
    _refuse_pending_warning_state(tx, frame.f_globals)
    lineno = getattr(frame.current, "lineno", None)
    if lineno is None:
        raise Unsupported("unsupported_call", "warnings.warn() from an instruction without a line")
    site = warning_site(tx, frame is tx, "warnings.warn()")
    tx.tr.side_effects.warnings.append(Warned(category, message, frame.code.co_filename, lineno,
                                              frame.f_globals, len(tx.tr.tracer.graph.nodes),
                                              site))
    return ConstantVariable(None)


def warning_site(tx, own_frame: bool, what: str) -> Unsupported:
    """Where the translation stops when a warning cannot be issued after the
    graph (``Warned.site``): a graph break before the call, whose native run
    warns from the entry's code, which shows the user's line and globals --
    exact for a call in the top frame warning about its own line
    (``own_frame``).  A call in an inlined function would run as its own
    intercepted frame, and a warning about a caller's line would name
    frame's code: the whole call runs natively then (a site with no place
    for a break)."""
    e = Unsupported("unsupported_call", f"{what} before operations that may give NumPy "
                                        f"floating-point warnings (the graph gives those first)")
    if own_frame and tx.depth == 0:
        return tx.break_site(e)
    e.location, e.detail = tx.user_location()
    return e


def _refuse_pending_warning_state(tx, f_globals: dict) -> None:
    """The entry issues the warning before it writes back what the trace
    changed: refused when the trace changed, before the warning, what
    ``warn`` reads -- an attribute of the ``warnings`` module (``filters``,
    ``defaultaction``, ``showwarning``...), the filter list, the "once"
    registry, or the module registry of the warning's frame
    (``__warningregistry__`` of ``f_globals``)."""
    tr = tx.tr
    effects = tr.side_effects
    read = {id(warnings), id(warnings.filters), id(getattr(warnings, "onceregistry", None)),
            id(f_globals.get("__warningregistry__"))}
    touched = [tr.object_of(obj) for obj, _, _ in effects.attrs.values()]
    touched += [tr.object_of(c) for c in effects.containers.values()]
    if any(obj is not None and id(obj) in read for obj in touched) or any(
            g is f_globals and name == "__warningregistry__"
            for g, name, _ in effects.globals.values()):
        raise Unsupported("unsupported_call", "warnings.warn() after the function changed the "
                                              "warnings state (filters, registries)")


# ``warnings.warn`` is ``_warnings.warn`` (C) in CPython; the Python fallback is the same function
WARN_FUNCTIONS = {warnings.warn}
