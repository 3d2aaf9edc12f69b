"""``logging`` calls in the traced code whose logger is not enabled for
their level: no graph break.

``log.debug/info/warning/error/exception/critical/fatal(msg, ...)``,
``log.log(level, msg, ...)`` on a ``logging.Logger`` of the frame (a global,
an attribute: it has a source) and the module's ``logging.info(...)`` and
siblings do nothing but ask ``logger.isEnabledFor(level)`` when the answer is
False (the module's functions also configure the root logger when it has no
handler: ``basicConfig()``).  The trace asks it too and, when it is False,
the call is nothing, under a guard that asks it again at every call
(``GuardSet.logging_disabled``: ``logger.isEnabledFor(level) is False``, and
for the module's functions that the root logger has a handler).  That answer
depends on the logger's and its parents' levels, ``logging.disable`` and the
logger's cache, which the guard reads as ``isEnabledFor`` itself does.

``logger.isEnabledFor(level)`` itself is a constant under a guard on its
answer (``if log.isEnabledFor(logging.DEBUG): ...`` picks its branch).

An enabled call is a graph break before it, as it was (its record names the
calling frame: file, line, function, which only the native call gives).  A
logger class that writes its own ``isEnabledFor`` or ``getEffectiveLevel``
(the guard would run its code), a level that is not a constant int, and a
trace that changed a logger or the ``logging`` module before the call (the
change is written back after the graph: the guard would not see it) are
inlined as before.
"""
from __future__ import annotations

import logging

from ..errors import Unsupported
from ..sources import AttrSource, ConstSource, Source
from .base import ConstantVariable, Variable

__all__ = ["logging_call", "LOGGING_FUNCTIONS"]

_L = logging.Logger
# Logger methods -> the level they ask about (None: the level is their first argument)
_METHODS = {_L.debug: logging.DEBUG, _L.info: logging.INFO, _L.warning: logging.WARNING,
            _L.error: logging.ERROR, _L.exception: logging.ERROR, _L.critical: logging.CRITICAL,
            _L.fatal: logging.CRITICAL, _L.log: None}
# the module's functions (on the root logger, after ``basicConfig()`` when it has no handler)
_FUNCTIONS = {logging.debug: logging.DEBUG, logging.info: logging.INFO,
              logging.warning: logging.WARNING, logging.error: logging.ERROR,
              logging.exception: logging.ERROR, logging.critical: logging.CRITICAL,
              logging.fatal: logging.CRITICAL, logging.log: None}

LOGGING_FUNCTIONS = frozenset({*_METHODS, *_FUNCTIONS, _L.isEnabledFor})


def _level(args: list[Variable], kwargs: dict[str, Variable]) -> int | None:
    """The constant int level of ``log(level, msg, ...)``, else None."""
    v = args[0] if args else kwargs.get("level")
    if v is None or not v.is_constant():
        return None
    level = v.as_constant()
    return level if isinstance(level, int) else None


def _plain_logger(logger) -> bool:
    """A ``Logger`` whose ``isEnabledFor`` and ``getEffectiveLevel`` are
    ``logging``'s own: asking it runs no code of the program."""
    cls = type(logger)
    return isinstance(logger, _L) and cls.isEnabledFor is _L.isEnabledFor \
        and cls.getEffectiveLevel is _L.getEffectiveLevel \
        and "isEnabledFor" not in vars(logger) and "getEffectiveLevel" not in vars(logger)


def _changed_by_trace(tr, logger) -> bool:
    """Did the trace change, before this call, what ``isEnabledFor`` reads
    (a logger's attributes, its cache, the manager, the ``logging`` module)?
    Its writes happen after the graph, after the guard asked."""
    effects = tr.side_effects
    touched = [tr.object_of(obj) for obj, _, _ in effects.attrs.values()]
    touched += [tr.object_of(c) for c in effects.containers.values()]
    chain = []
    node = logger
    while node is not None:
        chain += [node, getattr(node, "_cache", None)]
        node = node.parent
    read = {id(o) for o in chain if o is not None}
    read |= {id(logging), id(logger.manager), id(logger.manager.loggerDict)}
    return any(obj is not None and (id(obj) in read or isinstance(obj, (_L, logging.Manager)))
               for obj in touched) or any(g is vars(logging) for g, _, _ in effects.globals.values())


def logging_call(tx, fn, args: list[Variable], kwargs: dict[str, Variable]) -> Variable | None:
    """A call of a ``LOGGING_FUNCTIONS`` function: nothing when its logger is
    not enabled for the level (guarded), a graph break when it is, None when
    it is not modelled (the call is inlined)."""
    module_level = fn in _FUNCTIONS
    if module_level:
        logger, source = logging.root, AttrSource(ConstSource(tx.tr.guards.const(logging),
                                                              "logging"), "root")
        rest = args
    else:
        if not args:
            return None
        logger = tx.tr.object_of(args[0])
        source: Source | None = args[0].source
        rest = args[1:]
        if logger is None or source is None:
            return None
    if not _plain_logger(logger) or _changed_by_trace(tx.tr, logger):
        return None
    if fn is _L.isEnabledFor:
        level = _level(rest, kwargs)
    else:
        level = (_FUNCTIONS if module_level else _METHODS)[fn]
        if level is None:
            level = _level(rest, kwargs)
    if level is None:
        return None
    if module_level and not logging.root.handlers:
        return None   # basicConfig() configures the root logger: inlined (a break)
    enabled = logger.isEnabledFor(level)
    guards = tx.tr.guards
    if fn is _L.isEnabledFor:
        guards.logging_enabled(source, level, enabled)
        return ConstantVariable(enabled)
    if enabled:
        raise Unsupported("unsupported_call", f"logging call enabled for level "
                                              f"{logging.getLevelName(level)} (its record names "
                                              f"the calling frame)")
    if module_level:
        guards.root_logger_has_handlers(source)
    guards.logging_enabled(source, level, False)
    return ConstantVariable(None)
