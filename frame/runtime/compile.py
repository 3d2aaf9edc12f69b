"""runtime.compile: the one orchestration entry of the compiled path.

    exe = compile(graph, "cpu")            # passes + Backend.compile, cached
    outputs = exe.run([x, w])

Key = ``backend + "\\x1f" + options.fingerprint() + "\\x1f" + dump_text(graph)``.
The cache is process-wide and thread-safe; concurrent compiles of one key
compile once (the others wait for it).  A hit runs no pass and no
``Backend.compile`` and returns the same Executable object.  It keeps at most
``frame.config.compile_cache_size`` executables (FRAME_COMPILE_CACHE_SIZE),
dropping the least recently used first (counted as
``compile_cache_evictions``): an executable a capture entry still holds stays
alive with the entry; a dropped one is compiled again (or loaded from the
persistent cache) if its graph comes back.  Only
UNIMPLEMENTED (from backend_lowering or ``Backend.compile``) triggers the
fallback chain; the resulting FallbackExecutable is cached under the same key.

Below the in-process cache (an in-process miss):

* tiered compilation (``tiered.py``; ``FRAME_TIERED=0`` turns it off): for a
  backend with a fast tier (openvino -> cpu) the result is a
  TieredExecutable that runs the fast tier's executable (itself compiled
  through here) at once and swaps in this backend's, made on a background
  thread by the next two steps.  With ``pgo=True`` (the caller did not pin
  the backend: capture passes it when the user named none) the tiers are
  measured once both are ready and the faster is kept (profile-guided tier
  choice, ``tiered.py``); such a graph has an in-process cache entry of its
  own (key + ``"\x1fpgo"``), the persistent entries are shared;
* the persistent on-disk cache (``persistent.py``; ``FRAME_CACHE=0`` turns it
  off): a hit rebuilds the executable without passes or ``Backend.compile``;
* otherwise passes + ``Backend.compile``, and the result is persisted (when
  the backend can serialize it; FallbackExecutables are not).
"""
from __future__ import annotations

import collections
import hashlib
import logging
import threading
import time

from ..errors import ErrorCode, FrameError
from ..hal.backend import Executable, get_backend, unpack_graph
from ..hal.options import CompileOptions
from ..ir.clone import clone_graph
from ..ir.graph import Graph
from ..ir.text import dump_text
from ..passes import PassManager, standard_pipeline
from ..settings import config
from . import logs  # FRAME_LOG=graph (frame/runtime/logs.py)
from . import persistent, threads, tiered, trace
from .fallback import build_fallback
from .stats import record

__all__ = ["compile", "compile_packed", "cache_key", "CompilationCache", "compilation_cache", "clear_cache"]

log = logging.getLogger("frame.compile")


def cache_key(graph: Graph, backend: str, options: CompileOptions) -> str:
    return _key_of_text(dump_text(graph), backend, options)


def _key_of_text(text: str, backend: str, options: CompileOptions) -> str:
    return backend + "\x1f" + options.fingerprint() + "\x1f" + text


class _Packed:
    """A graph as ``hal.backend.pack_graph`` parts, parsed on first use: a cache
    hit (in-process or persistent) never parses it."""

    def __init__(self, text: str, payloads: bytes):
        self.text, self.payloads = text, payloads
        self._graph: Graph | None = None
        self._lock = threading.Lock()

    def graph(self) -> Graph:
        with self._lock:
            if self._graph is None:
                self._graph = unpack_graph(self.text, self.payloads)
            return self._graph


class CompilationCache:
    """key -> Executable, with one in-flight compile per key, least recently
    used dropped first beyond ``max_size`` (None: ``frame.config.compile_cache_size``,
    read at each insertion)."""

    def __init__(self, max_size: int | None = None):
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict[str, Executable] = collections.OrderedDict()
        self._pending: dict[str, threading.Event] = {}
        self.max_size = max_size

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
                    self._entries.move_to_end(key)
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
                self._evict()
            return exe
        finally:
            with self._lock:
                del self._pending[key]
            done.set()


    def _evict(self) -> None:
        limit = max(self.max_size if self.max_size is not None else config.compile_cache_size, 0)
        while len(self._entries) > limit:
            self._entries.popitem(last=False)
            record.count("compile_cache_evictions")


compilation_cache = CompilationCache()


def clear_cache() -> None:
    """Forget every compiled executable (tests, benchmarks)."""
    compilation_cache.clear()


def compile(graph: Graph, backend: str = "cpu", options: CompileOptions | None = None, *,
            pgo: bool = False, origin: str | None = None) -> Executable:
    """Compile ``graph`` for ``backend`` (cached).  The caller's graph is not modified.
    ``pgo``: ``backend`` is a default, not the user's choice; a tiered graph may
    end on its fast tier when that measures faster (``tiered.py``).  ``origin``
    names the graph's source for the user's messages (``"f (train.py:12)"``,
    capture passes the jitted function); it is not part of the cache key."""
    options = options or CompileOptions()
    key = cache_key(graph, backend, options)
    if config.trace_dir:  # FRAME_TRACE_DIR: link the graph to the translation asking for it
        trace.link_graph(key, backend)
    pgo = _uses_pgo(backend, pgo)
    return compilation_cache.get_or_compile(key + "\x1fpgo" if pgo else key,
                                            lambda: _miss(graph, backend, options, key, pgo, origin))


def compile_packed(text: str, payloads: bytes, backend: str = "cpu",
                   options: CompileOptions | None = None, *, pgo: bool = False,
                   origin: str | None = None) -> Executable:
    """``compile(unpack_graph(text, payloads), backend, options, pgo=pgo)``,
    parsing the graph only when neither cache has its executable (``text``
    must be what ``pack_graph`` wrote: the key is made from it as ``compile``
    makes it from the graph)."""
    options = options or CompileOptions()
    key = _key_of_text(text, backend, options)
    if config.trace_dir:
        trace.link_graph(key, backend)
    packed = _Packed(text, payloads)
    pgo = _uses_pgo(backend, pgo)
    return compilation_cache.get_or_compile(key + "\x1fpgo" if pgo else key,
                                            lambda: _miss(packed, backend, options, key, pgo, origin))


def _uses_pgo(backend: str, pgo: bool) -> bool:
    """Does PGO apply: asked for, on (``frame.config.pgo``), and ``backend`` tiered?"""
    return bool(pgo) and config.pgo and tiered.fast_tier_for(backend) is not None


def _graph_of(graph: Graph | _Packed) -> Graph:
    return graph.graph() if type(graph) is _Packed else graph


def _miss(graph: Graph | _Packed, backend_name: str, options: CompileOptions,
          key: str, pgo: bool = False, origin: str | None = None) -> Executable:
    """An in-process miss: tiered, else the persistent cache, else a compile.
    Each miss counts how it was served (``MISS_OUTCOMES``), so that the report's
    misses add up."""
    tiered.note_foreground_compile()  # background compiles wait for a quiet moment
    threads.for_backend(backend_name)  # the BLAS pool's size, on the caller's thread
    try:
        fast = tiered.fast_tier_for(backend_name)
        if fast is not None:
            exe = _start_tiered(graph, backend_name, fast, options, key, pgo, origin)
            if exe is not None:
                record.count("cache_misses_tiered")
                return exe
        return _load_or_build(graph, backend_name, options, key, origin, miss=True)
    finally:
        tiered.note_foreground_compile()


# how an in-process miss was served (counters; frame/runtime/report.py shows them)
MISS_OUTCOMES = ("cache_misses_persistent", "cache_misses_compiled", "cache_misses_tiered")


def _load_or_build(graph: Graph | _Packed, backend_name: str, options: CompileOptions,
                   key: str, origin: str | None = None, miss: bool = False) -> Executable:
    """The persistent cache's executable, else a compile (persisted).  ``miss``:
    this serves an in-process miss (not a background tier), counted by outcome."""
    store = persistent.active_store()
    if store is not None:
        exe = store.load(key, backend_name, options)
        if exe is not None:
            if miss:
                record.count("cache_misses_persistent")
            if config.trace_dir:
                trace.graph_loaded(key, backend_name, exe)
            return exe
    exe = _build(_graph_of(graph), backend_name, options, persist_key=key, origin=origin)
    if miss:
        record.count("cache_misses_compiled")
    return exe


def _start_tiered(graph: Graph | _Packed, backend_name: str, fast: str, options: CompileOptions,
                  key: str, pgo: bool = False, origin: str | None = None) -> Executable | None:
    """The fast tier's executable wrapped to swap in ``backend_name``'s later;
    None when the fast tier cannot compile the graph (then it is compiled now)."""
    try:
        if type(graph) is _Packed:
            fast_exe = compile_packed(graph.text, graph.payloads, fast, options, origin=origin)
        else:
            fast_exe = compile(graph, fast, options, origin=origin)
    except FrameError as err:
        log.debug("tiered: the %s tier cannot compile this graph (%s); compiling it for %s now",
                  fast, err, backend_name)
        return None
    if type(graph) is _Packed:
        private = graph  # parsed (if ever) by whoever needs it first; never mutated
        label = "a stored graph"
    else:
        private = clone_graph(graph)  # the caller may reuse its graph after we return
        ins = ", ".join(str(v.type) for v in graph.inputs[:4]) + (", ..." if len(graph.inputs) > 4 else "")
        label = f"a {len(graph.nodes)}-node graph ({ins})"
    label += f" #{hashlib.sha256(key.encode()).hexdigest()[:8]}"  # tells equal-looking graphs apart
    return tiered.TieredExecutable(
        fast_exe, lambda: _load_or_build(private, backend_name, options, key, origin),
        backend_name, fast, label, pgo=pgo, key=key)


FUSION_COUNTERS = tuple(f"fusion_{phase}_{what}" for phase in ("forward", "backward", "update")
                        for what in ("ops", "fused_nodes", "fused_ops"))


def _record_fusion(graph: Graph) -> None:
    """operator_fusion's counts for one compiled graph (``graph.meta["fusion"]``)
    into the process counters ``fusion_<phase>_<ops|fused_nodes|fused_ops>``."""
    summary = graph.meta.get("fusion")
    if summary is None:
        return
    for phase in ("forward", "backward", "update"):
        c = getattr(summary, phase)
        record.count(f"fusion_{phase}_ops", c.ops)
        record.count(f"fusion_{phase}_fused_nodes", c.fused)
        record.count(f"fusion_{phase}_fused_ops", c.fused_ops)


def _build(graph: Graph, backend_name: str, options: CompileOptions,
           persist_key: str | None = None, origin: str | None = None) -> Executable:
    """Passes + ``Backend.compile`` (or the fallback chain).  With ``persist_key``
    a whole-graph executable is also written to the persistent cache; ``origin``
    names the graph in the fallback chain's WARN."""
    backend = get_backend(backend_name)  # NOT_FOUND propagates: no fallback
    threads.configure(backend)
    compiled: Graph | None = None  # the graph Backend.compile took whole (persistable)
    t0 = time.perf_counter()
    # CompileOptions.dump_ir_after, else frame.config.dump_ir_after (FRAME_DUMP_IR_AFTER)
    dump_after = options.dump_ir_after or config.dump_ir_after
    manager = PassManager(standard_pipeline(backend, options), dump_after=dump_after)
    try:
        work = manager.run(clone_graph(graph))
    except FrameError as err:
        # backend_lowering found unsupported nodes; it hands over the planned graph
        if err.code is not ErrorCode.UNIMPLEMENTED or getattr(err, "graph", None) is None:
            raise
        pass_s = time.perf_counter() - t0
        record.add_time("passes", pass_s)
        _record_fusion(err.graph)
        work = err.graph
        exe = build_fallback(err.graph, backend, options, err, origin)
    else:
        pass_s = time.perf_counter() - t0
        record.add_time("passes", pass_s)
        _record_fusion(work)
        try:
            exe = backend.compile(work, options)
        except FrameError as err:
            if err.code is not ErrorCode.UNIMPLEMENTED:
                raise
            exe = build_fallback(work, backend, options, err, origin)
        else:
            compiled = work
    record.compiled(backend_name, time.perf_counter() - t0)
    if config.trace_dir:  # FRAME_TRACE_DIR: the graph before and after the passes, timings
        trace.graph_built(persist_key or cache_key(graph, backend_name, options), backend_name,
                          graph, work, manager.timings, pass_s, time.perf_counter() - t0, exe,
                          fallback=compiled is None)
    logs.graph_compiled(graph, backend_name, exe)  # FRAME_LOG=graph: dump_text of the graph
    log.debug("compiled a %d-node graph for %s in %.1f ms", len(graph.nodes), backend_name,
              (time.perf_counter() - t0) * 1e3)
    if persist_key is not None and compiled is not None:
        store = persistent.active_store()
        if store is not None:
            store.save(persist_key, backend, compiled, exe, options)
    return exe
