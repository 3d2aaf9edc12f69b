"""FRAME_TRACE_DIR: compile events as structured records, one JSON-lines file
per process, for ``python -m frame trace-report`` (``frame/trace_report.py``).

    FRAME_TRACE_DIR=traces python train.py
    frame.config.trace_dir = "traces"    # from now on (the next event opens the file)

Each line is one JSON object with ``event`` (its kind), ``t`` (seconds since
the file was opened, ``time.perf_counter``), ``thread`` and the event's own
fields.  The first record of a file is ``process`` (pid, argv, Python,
settings).  Kinds:

* ``source``: a file's text, once per file that a recorded event points into
  (the report shows the user's source even if it changes later);
* ``translation``: one capture translation (``capture/jit.py``): function,
  file, first line, kind (``graph``, ``break``, ``native``, ``empty``),
  guards, the break or native reason, the source lines the graph covers,
  the graphs it compiled (``graphs``, by id) and its duration;
* ``break``: a graph break or native run as reported to the user (kind,
  reason, ``file:line``, hint);
* ``recompile``: a cache miss of a function that has entries: the guard of
  the newest entry that failed; ``recompile_limit`` when the limit is reached;
* ``graph``: a compile (``runtime/compile.py``): graph id, backend, the IR
  before and after the pass pipeline, per-pass times, compile time, the
  executable; ``graph_loaded`` when the persistent cache served it;
* ``fallback``: an op a backend could not compile (op, backend, target, why);
* ``tier``: a tiered graph's events (``tiered.py``): swapped in, PGO decided
  (measured or stored), failed.

A graph id is the first 8 hex digits of the SHA-256 of its compile-cache key
(the ``#xxxxxxxx`` of tiered labels).  A compile made during a translation (on
its thread) is linked to it; a background compile of the same key inherits
the link.

Cost when off: every hook starts with one test of ``frame.config.trace_dir``
(callers on the compile path test it themselves before building arguments),
and no hook runs on the call path of a compiled entry.  Records are written
and flushed one by one under a lock, so a crashing process keeps what it
recorded; a record that cannot be serialised is written with ``repr`` values.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import linecache
import logging
import os
import sys
import threading
import time
from typing import IO, Any, Iterable

from ..ir.text import dump_text
from ..settings import config

__all__ = ["enabled", "emit", "graph_id", "begin_translation", "end_translation",
           "current_translation", "link_graph", "graph_built", "graph_loaded", "source",
           "close", "MAX_TEXT"]

log = logging.getLogger("frame.trace")

MAX_TEXT = 200_000          # characters kept of one IR dump or source file
FILE_PREFIX = "frame-trace-"

_lock = threading.RLock()
_local = threading.local()
_ids = itertools.count(1)


class _Writer:
    def __init__(self, directory: str):
        os.makedirs(directory, exist_ok=True)
        self.directory = directory
        self.pid = os.getpid()
        self.t0 = time.perf_counter()
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.path = os.path.join(directory, f"{FILE_PREFIX}{stamp}-{self.pid}.jsonl")
        self.file: IO[str] = open(self.path, "a", encoding="utf-8")
        self.sources: set[str] = set()
        self.links: dict[str, int] = {}   # graph id -> translation id

    def write(self, record: dict) -> None:
        try:
            line = json.dumps(record, default=repr)
        except (TypeError, ValueError):
            line = json.dumps({k: repr(v) for k, v in record.items()})
        self.file.write(line + "\n")
        self.file.flush()


_writer: _Writer | None = None


def enabled() -> bool:
    """Is recording on (``frame.config.trace_dir`` set)?"""
    return bool(config.trace_dir)


def _open() -> _Writer | None:
    """The writer for ``frame.config.trace_dir`` in this process (holding ``_lock``)."""
    global _writer
    directory = config.trace_dir
    if not directory:
        return None
    if _writer is not None and _writer.directory == directory and _writer.pid == os.getpid():
        return _writer
    if _writer is not None and _writer.pid == os.getpid():
        _writer.file.close()
    try:
        _writer = _Writer(directory)
    except OSError as err:
        log.warning("FRAME_TRACE_DIR=%s: cannot write the trace (%s); recording is off",
                    directory, err)
        config.trace_dir = None
        _writer = None
        return None
    _writer.write({"event": "process", "t": 0.0, "pid": _writer.pid, "argv": list(sys.argv),
                   "python": sys.version.split()[0], "cwd": os.getcwd(),
                   "wall": time.time(), "settings": _settings()})
    return _writer


def _settings() -> dict:
    import dataclasses
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def emit(event: str, **fields: Any) -> None:
    """Record one event of kind ``event`` (nothing when recording is off)."""
    if not config.trace_dir:
        return
    with _lock:
        writer = _open()
        if writer is None:
            return
        record = {"event": event, "t": round(time.perf_counter() - writer.t0, 6),
                  "thread": threading.current_thread().name}
        record.update(fields)
        writer.write(record)


def close() -> None:
    """Close this process's trace file (the next event opens a new one)."""
    global _writer
    with _lock:
        if _writer is not None and _writer.pid == os.getpid():
            _writer.file.close()
        _writer = None


def graph_id(key: str) -> str:
    """A compile-cache key's short id (as in tiered labels: ``#<id>``)."""
    return hashlib.sha256(key.encode()).hexdigest()[:8]


def source(filename: str) -> None:
    """Record ``filename``'s text once per trace file (no-op for files that
    cannot be read, such as ``<stdin>``)."""
    if not config.trace_dir or not filename:
        return
    with _lock:
        writer = _open()
        if writer is None or filename in writer.sources:
            return
        writer.sources.add(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return
    text = "".join(lines)
    emit("source", file=filename, text=text[:MAX_TEXT], truncated=len(text) > MAX_TEXT)


# -- translations -------------------------------------------------------------------------

def begin_translation() -> int | None:
    """Start recording a translation on this thread; returns its id (None when
    recording is off).  Graphs compiled until ``end_translation`` are linked to it."""
    if not config.trace_dir:
        return None
    with _lock:  # the file's clock starts before the first translation
        _open()
    tid = next(_ids)
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append((tid, []))
    return tid


def current_translation() -> int | None:
    stack = getattr(_local, "stack", None)
    return stack[-1][0] if stack else None


def end_translation(tid: int | None, **fields: Any) -> None:
    """Record the translation ``tid`` (from ``begin_translation``) with
    ``fields``; ``graphs`` lists the graphs it compiled or reused."""
    if tid is None:
        return
    stack = getattr(_local, "stack", None) or []
    graphs: list[str] = []
    while stack:
        top, used = stack.pop()
        if top == tid:
            graphs = used
            break
    if fields.get("file"):
        source(fields["file"])
    emit("translation", id=tid, graphs=graphs, **fields)


def link_graph(key: str, backend: str) -> None:
    """A compile of ``key`` was requested (``runtime.compile``): link the
    graph to the translation running on this thread, if any."""
    stack = getattr(_local, "stack", None)
    if not stack or not config.trace_dir:
        return
    tid, used = stack[-1]
    gid = graph_id(key)
    if gid not in used:
        used.append(gid)
    with _lock:
        writer = _open()
        if writer is not None:
            writer.links.setdefault(gid, tid)


def _linked(gid: str) -> int | None:
    tid = current_translation()
    if tid is not None:
        return tid
    with _lock:
        return _writer.links.get(gid) if _writer is not None else None


def _text(graph) -> str:
    text = graph if isinstance(graph, str) else dump_text(graph)
    return text[:MAX_TEXT]


def graph_built(key: str, backend: str, before, after, passes: Iterable[tuple[str, float]],
                pass_s: float, total_s: float, executable, fallback: bool) -> None:
    """A compile (passes + ``Backend.compile`` or the fallback chain) of the
    graph ``before`` into ``after`` (the graph the backend took, or the
    planned graph the fallback partitioned)."""
    if not config.trace_dir:
        return
    gid = graph_id(key)
    nodes = getattr(before, "nodes", ())
    emit("graph", id=gid, translation=_linked(gid), backend=backend, nodes=len(nodes),
         ops=sorted({n.op for n in nodes if n.op != "constant"}),
         ir_before=_text(before), ir_after=_text(after) if after is not None else None,
         passes=[[name, round(s, 6)] for name, s in passes], pass_s=round(pass_s, 6),
         compile_s=round(total_s, 6), executable=type(executable).__name__, fallback=fallback)


def graph_loaded(key: str, backend: str, executable) -> None:
    """The persistent cache served the graph of ``key`` (no pass, no compile)."""
    if not config.trace_dir:
        return
    gid = graph_id(key)
    text = key.split("\x1f", 2)[-1]
    emit("graph_loaded", id=gid, translation=_linked(gid), backend=backend,
         ir_before=text[:MAX_TEXT], executable=type(executable).__name__)


def tier_event(key: str | None, label: str, what: str, text: str, **fields: Any) -> None:
    """A tiered graph's event ``what`` (swapped, decided, failed): ``text`` says it."""
    if not config.trace_dir:
        return
    gid = graph_id(key) if key else None
    emit("tier", graph=gid, translation=_linked(gid) if gid else None, label=label, what=what,
         text=text, **fields)
