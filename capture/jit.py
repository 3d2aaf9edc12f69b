"""Interception: ``frame.jit`` / ``capture.jit``.

Per code object, a cache of entries (guards + transformed code, newest hit
first).  A call tries the entries in order; a miss translates the frame:
simulate its bytecode (``translator.py``), compile the graph
(``frame.runtime.compile``) and generate the entry (``codegen.py``).  What
cannot be captured runs natively: the failure becomes a *native entry* under
the guards collected so far, logged once per code object and reason, counted
by kind; with ``full_graph=True`` it raises ``frame.GraphBreakError``.  Past
the cache limit (8 entries per code object) the function runs natively from
then on.
"""
from __future__ import annotations

import functools
import logging
import os
import threading
import time
import types

from frame.runtime.stats import record

from .codegen import MISS, CacheEntry, build_entry, build_native_entry
from .errors import BreakReason, GraphBreakError, Unsupported

__all__ = ["jit", "CodeCache", "cache_of", "CACHE_LIMIT", "reset_caches"]

log = logging.getLogger("frame.capture")
recompile_log = logging.getLogger("frame.recompiles")

CACHE_LIMIT = 8


class CodeCache:
    """The entries of one code object."""

    def __init__(self, code: types.CodeType):
        self.code = code
        self.entries: list[CacheEntry] = []
        self.native_forever = False
        self.warned: set[tuple] = set()
        self.lock = threading.Lock()


_CACHES: dict[types.CodeType, CodeCache] = {}
_CACHES_LOCK = threading.Lock()


def cache_of(fn) -> CodeCache:
    code = getattr(fn, "__code__", fn)
    cache = _CACHES.get(code)
    if cache is None:
        with _CACHES_LOCK:
            cache = _CACHES.setdefault(code, CodeCache(code))
    return cache


def reset_caches() -> None:
    """Forget every cache entry (tests)."""
    with _CACHES_LOCK:
        _CACHES.clear()


def _eager_requested() -> bool:
    return os.environ.get("FRAME_EAGER", "") not in ("", "0")


def _default_backend() -> str:
    env = os.environ.get("FRAME_BACKEND")
    if env:
        return env
    try:
        from frame.backends import default_backend_name
    except ImportError:
        return "cpu"
    return default_backend_name()


def jit(fn=None, *, backend: str | None = None, full_graph: bool = False, eager: bool = False):
    """Compile ``fn`` by capturing its bytecode into graphs.

    >>> @frame.jit
    ... def f(x, y):
    ...     return (x + y).relu() * 2
    """
    if fn is None:
        return functools.partial(jit, backend=backend, full_graph=full_graph, eager=eager)
    if isinstance(fn, types.MethodType):
        bound_self, func = fn.__self__, fn.__func__
        compiled = jit(func, backend=backend, full_graph=full_graph, eager=eager)
        return types.MethodType(compiled, bound_self)
    if not isinstance(fn, types.FunctionType):
        call = getattr(type(fn), "__call__", None)
        forward = getattr(type(fn), "forward", None)
        if isinstance(call, types.FunctionType) or isinstance(forward, types.FunctionType):
            target = call if isinstance(call, types.FunctionType) else forward
            return types.MethodType(jit(target, backend=backend, full_graph=full_graph, eager=eager), fn)
        raise TypeError(f"frame.jit expects a Python function, method or module, got {type(fn).__name__}")

    cache = cache_of(fn)
    options = {"backend": backend, "full_graph": full_graph}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if eager or _eager_requested():
            return fn(*args, **kwargs)
        entries = cache.entries
        for i, entry in enumerate(entries):
            result = entry.fn(fn, *args, **kwargs)
            if result is not MISS:
                if i:
                    _promote(cache, entry)
                return result
        if cache.native_forever:
            return fn(*args, **kwargs)
        return _miss(cache, fn, args, kwargs, options)

    wrapper.__wrapped__ = fn
    wrapper.__frame_jit__ = True
    wrapper._frame_cache = cache
    return wrapper


def _promote(cache: CodeCache, entry: CacheEntry) -> None:
    with cache.lock:
        if entry in cache.entries:
            cache.entries.remove(entry)
            cache.entries.insert(0, entry)


def _miss(cache: CodeCache, fn, args, kwargs, options):
    name = getattr(fn, "__qualname__", fn.__name__)
    if cache.entries:
        failing = cache.entries[0].failing_guard(fn, args, kwargs)
        shown = failing.text if failing is not None else "unknown"
        if len(cache.entries) >= CACHE_LIMIT:
            cache.native_forever = True
            log.warning("%s: recompile limit (%d) reached; last failing guard: %s. "
                        "It runs natively from now on.", name, CACHE_LIMIT, shown)
            record.graph_break("recompile_limit")
            if options["full_graph"]:
                raise GraphBreakError(BreakReason("recompile_limit", f"last failing guard: {shown}",
                                                  _where(fn)))
            return fn(*args, **kwargs)
        record.count("recompiles")
        recompile_log.info("recompiling %s: guard failed: %s", name, shown)
    entry = translate(fn, args, kwargs, options)
    with cache.lock:
        cache.entries.insert(0, entry)
    if entry.native:
        if options["full_graph"]:
            raise GraphBreakError(entry.reason)
        key = (entry.reason.kind, entry.reason.reason, entry.reason.location)
        if key not in cache.warned:
            cache.warned.add(key)
            level = logging.INFO if entry.reason.kind == "exception" else logging.WARNING
            log.log(level, "%s runs natively (%s at %s): %s", name, entry.reason.kind,
                    entry.reason.location, entry.reason.reason)
        record.graph_break(entry.reason.kind)
        return fn(*args, **kwargs)
    result = entry.fn(fn, *args, **kwargs)
    if result is MISS:  # cannot happen unless a guard reads something the call changes
        raise RuntimeError(f"frame.jit: fresh entry for {name} rejected its own arguments")
    return result


def _where(fn) -> str:
    code = fn.__code__
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def translate(fn, args, kwargs, options) -> CacheEntry:
    """Simulate ``fn`` on these arguments and build a cache entry."""
    from .sources import ClosureSource, LocalSource
    from .translator import Cell, InstructionTranslator, Translation, bind_arguments
    from .variables.base import ConstantVariable

    t0 = time.perf_counter()
    record.count("translations")
    tr = Translation(fn)
    code = fn.__code__
    try:
        from .codegen import signature_source
        signature_source(code, fn, tr.guards)  # rejects reserved parameter names early
        import inspect
        bound = inspect.signature(fn).bind(*args, **kwargs)
        bound.apply_defaults()
        f_locals = {}
        for name, value in bound.arguments.items():
            f_locals[name] = tr.wrap(value, LocalSource(name))
        cells = {name: Cell() for name in code.co_cellvars}
        for i, (name, real) in enumerate(zip(code.co_freevars, fn.__closure__ or ())):
            cells[name] = Cell(real=real, source=ClosureSource(i, name))
        for name in code.co_cellvars:
            if name in f_locals:  # a parameter captured by an inner function
                cells[name].value = f_locals[name]
        tx = InstructionTranslator(tr, code, fn.__globals__, f_locals, cells)
        result = tx.run()
        entry = build_entry(tr, fn, result, options["backend"] or _default_backend())
    except Unsupported as e:
        reason = BreakReason(e.kind, e.reason, e.location or _where(fn))
        entry = build_native_entry(tr, fn, reason)
    except TypeError as e:  # the call itself does not bind: the native call raises it
        reason = BreakReason("exception", str(e), _where(fn))
        entry = build_native_entry(Translation(fn), fn, reason)
    record.add_time("translation", time.perf_counter() - t0)
    return entry
