"""FRAME_LOG channels: which ``frame.*`` loggers print, and the messages only
the channels produce.

    FRAME_LOG=graph,recompiles python train.py
    frame.config.log = ("guards",)       # takes effect at once

A channel names one or more loggers (``CHANNEL_LOGGERS``).  A listed channel's
loggers are set to DEBUG and given one handler that writes
``[frame:<channel>] LEVEL message`` to ``sys.stderr`` (looked up at each
record, so redirections apply); they stop propagating to the root logger, so a
record is printed once even when the application configured logging itself.
Channels not listed keep logging's defaults: WARN and above reach the root
logger (or Python's last-resort stderr handler), nothing else prints.

The helpers below (``graph_compiled``, ``translated``) are called on the
compile and capture paths; each costs one tuple lookup when its channels are
off.

This layer knows nothing of bytecode decoding (docs/design.md §1): the ``bytecode``
channel's decoded listing comes from a formatter that capture registers with
``register_bytecode_formatter`` when it is imported.
"""
from __future__ import annotations

import dis
import logging
import os
import sys
import threading
from types import CodeType
from typing import Callable, Iterable

from ..ir.text import dump_text
from ..settings import LOG_CHANNELS, config, on_log_change

__all__ = ["CHANNEL_LOGGERS", "apply", "enabled", "graph_compiled", "translated",
           "register_bytecode_formatter"]

CHANNEL_LOGGERS: dict[str, tuple[str, ...]] = {
    "graph_breaks": ("frame.graph_breaks", "frame.capture"),
    "recompiles": ("frame.recompiles",),
    "guards": ("frame.guards",),
    "graph": ("frame.graph",),
    "bytecode": ("frame.bytecode",),
    "fallbacks": ("frame.fallbacks",),
    "hotpath": ("frame.hotpath",),
}
assert set(CHANNEL_LOGGERS) == set(LOG_CHANNELS), "a FRAME_LOG channel without loggers"


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when the record is emitted."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            stream = sys.stderr
            stream.write(self.format(record) + "\n")
            stream.flush()
        except Exception:  # noqa: BLE001 - logging's own convention
            self.handleError(record)


_lock = threading.Lock()
# code object -> its decoded (normalised) listing; installed by capture (capture/instructions.py)
_bytecode_formatter: Callable[[CodeType], str] | None = None
# logger name -> (our handler, the logger's level and propagate flag before we changed them)
_switched_on: dict[str, tuple[logging.Handler, int, bool]] = {}


def apply(channels: Iterable[str] | None = None) -> None:
    """Configure the channel loggers for ``channels`` (default:
    ``frame.config.log``).  Assigning ``frame.config.log`` calls this."""
    wanted: dict[str, str] = {}  # logger name -> channel
    for channel in (config.log if channels is None else channels):
        if channel not in CHANNEL_LOGGERS:
            raise ValueError(f"unknown FRAME_LOG channel {channel!r}; channels: {', '.join(LOG_CHANNELS)}")
        for name in CHANNEL_LOGGERS[channel]:
            wanted[name] = channel
    with _lock:
        for name in [n for n in _switched_on if n not in wanted]:
            handler, level, propagate = _switched_on.pop(name)
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate
        for name, channel in wanted.items():
            if name in _switched_on:
                continue
            logger = logging.getLogger(name)
            handler = _StderrHandler()
            handler.setFormatter(logging.Formatter(f"[frame:{channel}] %(levelname)s %(message)s"))
            _switched_on[name] = (handler, logger.level, logger.propagate)
            logger.addHandler(handler)
            logger.setLevel(logging.DEBUG)
            logger.propagate = False


on_log_change(apply)  # assigning frame.config.log applies the channels at once


def register_bytecode_formatter(format_code: Callable[[CodeType], str]) -> None:
    """Make ``format_code(code)`` the ``bytecode`` channel's decoded listing of a
    translated function.  Capture calls this when it is imported; a later call
    replaces the formatter."""
    global _bytecode_formatter
    _bytecode_formatter = format_code


def enabled(channel: str) -> bool:
    """Is FRAME_LOG channel ``channel`` on?"""
    if channel not in CHANNEL_LOGGERS:
        raise ValueError(f"unknown FRAME_LOG channel {channel!r}; channels: {', '.join(LOG_CHANNELS)}")
    return channel in config.log


def graph_compiled(graph, backend: str, executable) -> None:
    """``graph`` channel: the ``dump_text`` of a graph that was just compiled
    (once per compile-cache miss)."""
    if "graph" not in config.log:
        return
    how = type(executable).__name__
    logging.getLogger("frame.graph").info("graph compiled for backend '%s' (%d nodes, %s):\n%s",
                                          backend, len(graph.nodes), how, dump_text(graph).rstrip())


def translated(fn, entry) -> None:
    """``guards`` and ``bytecode`` channels, after capture translated ``fn``
    into ``entry`` (a ``capture.codegen.CacheEntry``)."""
    guards_on, bytecode_on = "guards" in config.log, "bytecode" in config.log
    if not (guards_on or bytecode_on):
        return
    code = fn.__code__
    name = f"{code.co_qualname} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
    kind = f"native entry: {entry.reason}" if entry.native else "compiled entry"
    if guards_on:
        log = logging.getLogger("frame.guards")
        lines = "\n".join(f"  {g.text}" for g in entry.guards) or "  (none)"
        log.info("guards of %s, %s, %d guard(s):\n%s", name, kind, len(entry.guards), lines)
        log.debug("entry source of %s:\n%s", name, entry.source.rstrip())
    if bytecode_on:
        log = logging.getLogger("frame.bytecode")
        log.info("original bytecode of %s:\n%s", name, dis.Bytecode(code).dis().rstrip())
        if _bytecode_formatter is not None:  # always, when capture called this
            log.info("decoded (normalised) bytecode of %s:\n%s", name, _bytecode_formatter(code))
        log.info("transformed bytecode of %s (the %s):\n%s", name, kind,
                 dis.Bytecode(entry.fn).dis().rstrip())
