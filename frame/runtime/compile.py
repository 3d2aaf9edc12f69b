"""runtime.compile: the one orchestration entry of the compiled path.

    exe = compile(graph, "cpu")            # passes + Backend.compile, cached
    outputs = exe.run([x, w])

Key = ``backend + "\\x1f" + options.fingerprint() + "\\x1f" + dump_text(graph)``.
The cache is process-wide and thread-safe; concurrent compiles of one key
compile once (the others wait for it).  A hit runs no pass and no
``Backend.compile`` and returns the same Executable object.  Only
UNIMPLEMENTED (from backend_lowering or ``Backend.compile``) triggers the
fallback chain; the resulting FallbackExecutable is cached under the same key.
"""
from __future__ import annotations

import logging
import threading
import time

from ..hal.backend import Executable, get_backend
from ..hal.errors import ErrorCode, FrameError
from ..hal.options import CompileOptions
from ..ir.clone import clone_graph
from ..ir.graph import Graph
from ..ir.text import dump_text
from .stats import record

__all__ = ["compile", "cache_key", "CompilationCache", "compilation_cache", "clear_cache"]

log = logging.getLogger("frame.compile")


def cache_key(graph: Graph, backend: str, options: CompileOptions) -> str:
    return backend + "\x1f" + options.fingerprint() + "\x1f" + dump_text(graph)


class CompilationCache:
    """key -> Executable, with one in-flight compile per key."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[str, Executable] = {}
        self._pending: dict[str, threading.Event] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def get_or_compile(self, key: str, build) -> Executable:
        while True:
            with self._lock:
                exe = self._entries.get(key)
                if exe is not None:
                    record.count("cache_hits")
                    return exe
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    record.count("cache_misses")
                    break
            waiting.wait()  # another thread is compiling this key; then look again
        try:
            exe = build()
            with self._lock:
                self._entries[key] = exe
            return exe
        finally:
            with self._lock:
                del self._pending[key]
            done.set()


compilation_cache = CompilationCache()


def clear_cache() -> None:
    """Forget every compiled executable (tests, benchmarks)."""
    compilation_cache.clear()


def compile(graph: Graph, backend: str = "cpu", options: CompileOptions | None = None) -> Executable:
    """Compile ``graph`` for ``backend`` (cached).  The caller's graph is not modified."""
    options = options or CompileOptions()
    key = cache_key(graph, backend, options)
    return compilation_cache.get_or_compile(key, lambda: _build(graph, backend, options))


def _build(graph: Graph, backend_name: str, options: CompileOptions) -> Executable:
    from ..passes import PassManager, standard_pipeline
    from .fallback import build_fallback

    backend = get_backend(backend_name)  # NOT_FOUND propagates: no fallback
    t0 = time.perf_counter()
    manager = PassManager(standard_pipeline(backend, options), dump_after=options.dump_ir_after)
    try:
        work = manager.run(clone_graph(graph))
    except FrameError as err:
        # backend_lowering found unsupported nodes; it hands over the planned graph
        if err.code is not ErrorCode.UNIMPLEMENTED or getattr(err, "graph", None) is None:
            raise
        record.add_time("passes", time.perf_counter() - t0)
        exe = build_fallback(err.graph, backend, options, err)
    else:
        record.add_time("passes", time.perf_counter() - t0)
        try:
            exe = backend.compile(work, options)
        except FrameError as err:
            if err.code is not ErrorCode.UNIMPLEMENTED:
                raise
            exe = build_fallback(work, backend, options, err)
    record.compiled(backend_name, time.perf_counter() - t0)
    log.debug("compiled a %d-node graph for %s in %.1f ms", len(graph.nodes), backend_name,
              (time.perf_counter() - t0) * 1e3)
    return exe
