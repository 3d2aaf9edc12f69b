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

import collections
import dataclasses
import functools
import inspect
import logging
import os
import sys
import threading
import time
import types
import weakref

from frame.backends import default_backend_name
from frame.runtime import logs as frame_logs  # FRAME_LOG guards/bytecode (frame/runtime/logs.py)
from frame.runtime import trace as frame_trace  # FRAME_TRACE_DIR (frame/runtime/trace.py)
from frame.runtime.stats import record
from frame.settings import config, eager_forced

from . import persist
from .breaks import BreakPoint, can_break_at, install_run_intercepted
from .codegen import MISS, CacheEntry, build_entry, build_native_entry, signature_source
from .errors import USER_RAISES, BreakReason, GraphBreakError, Unsupported, UserCodeRaises
from .explain import note_break, note_eager, note_translation
from .instructions import decode
from .guards import GuardKind
from .resume import SUSPENDING_FLAGS, Tail, cell_parameters, original_code, stack_shown
from .sources import AttrSource, ClosureSource, LocalSource, user_text
from .tracing import record_break, record_translation
from .translator import Cell, InstructionTranslator, Translation

__all__ = ["jit", "CodeCache", "CodeCaches", "cache_of", "CACHE_LIMIT", "reset_caches", "run_intercepted"]

log = logging.getLogger("frame.capture")
recompile_log = logging.getLogger("frame.recompiles")

CACHE_LIMIT = 8
CODES_KEPT = 256   # code objects whose caches CodeCaches keeps (least recently looked up dropped)


class CodeCache:
    """The entries of one code object, for one (backend, full_graph) request.

    ``entries`` is never changed in place: an update (a new entry, a promotion)
    assigns a new list under ``lock``, so a call iterates a consistent snapshot
    without taking a lock, and the miss path, which holds ``translating``,
    sees every entry another thread added."""

    def __init__(self):
        self.entries: list[CacheEntry] = []
        self.native_forever = False
        self.warned: set[tuple] = set()
        self.stored_checked = False             # stored translations looked up (persist.py)
        # sources of Python scalars whose value guard failed: graph inputs from then on
        # (variables/scalars.py; frame.config.dynamic_scalars)
        self.dynamic: frozenset = frozenset()
        self.lock = threading.Lock()            # serialises updates of the entries list
        self.translating = threading.RLock()    # one translation at a time

    def translated(self) -> int:
        """How many entries this process translated: the recompile limit counts
        these, not the ones a previous process stored (``CacheEntry.stored``),
        so that a script run with other values does not find its function's
        budget spent by the runs before it."""
        return sum(not e.stored for e in self.entries)

    def add(self, entry: CacheEntry) -> None:
        """``entry`` in front (call with ``lock`` held); past ``CACHE_LIMIT``
        entries, the stored ones least recently hit make room."""
        entries = [entry, *self.entries]
        while len(entries) > CACHE_LIMIT:
            last = max((i for i, e in enumerate(entries) if e.stored), default=None)
            if last is None:
                break
            del entries[last]
        self.entries = entries


class CodeCaches:
    """code object -> its ``CodeCache`` per (requested backend, full_graph),
    keyed by the code object's identity and kept as long as the code object
    lives (weak references: a dropped function's entries, graphs and
    executables go with its code), and at most for the ``CODES_KEPT`` codes
    looked up most recently: an entry runs with its function's globals
    (codegen.entry_function), and a function in a namespace of its own (an
    ``exec``) is referred to by that namespace, so its entries would keep its
    code alive.  A cache dropped here stays with the wrappers that hold it (a
    later lookup of its code starts a new one).  A resume code's caches are
    kept as long as the code it continues: a loop's resume functions refer to
    each other, and nothing else may keep them.  Entries hold executables of
    one backend, and a native entry must not serve a full_graph wrapper."""

    def __init__(self):
        # id(code) -> (weak reference to the code, its caches, the weak reference
        # whose callback forgets them: the code's own, or its original code's);
        # least recently looked up first
        self._by_id: collections.OrderedDict[
            int, tuple[weakref.ref, dict[tuple, CodeCache], weakref.ref]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, code: types.CodeType, backend: str | None, full_graph: bool) -> CodeCache:
        key = id(code)
        found = self._by_id.get(key)
        if found is not None and found[0]() is code:
            cache = found[1].get((backend, full_graph))
            if cache is not None:
                try:
                    self._by_id.move_to_end(key)
                except KeyError:  # dropped meanwhile by another thread: the cache still serves
                    pass
                return cache
        with self._lock:
            found = self._by_id.get(key)
            if found is None or found[0]() is not code:
                found = self._by_id[key] = self._record(code)
                while len(self._by_id) > CODES_KEPT:
                    self._by_id.popitem(last=False)
            return found[1].setdefault((backend, full_graph), CodeCache())

    def _record(self, code: types.CodeType) -> tuple:
        key = id(code)
        original = original_code(code)  # (code itself unless it is a resume code)
        ref = weakref.ref(code, None if original is not code else lambda r: self._forget(key, r))
        lifetime = ref if original is code else weakref.ref(original, lambda r: self._forget(key, r))
        return ref, {}, lifetime

    def _forget(self, key: int, ref: weakref.ref) -> None:
        # a weakref callback (any thread, possibly inside get): no lock
        found = self._by_id.get(key)
        if found is not None and found[2] is ref:
            self._by_id.pop(key, None)

    def caches(self) -> list[CodeCache]:
        return [cache for record in list(self._by_id.values())
                for cache in list(record[1].values())]

    def clear(self) -> None:
        with self._lock:
            self._by_id.clear()

    def __len__(self) -> int:
        return len(self._by_id)


_CACHES = CodeCaches()
# frame.explain runs a function with fresh caches of its own (explain.py)
_local = threading.local()
# graph-break sites already logged: (kind, reason, location)
_WARNED: set[tuple] = set()
# graph-break kinds that are not breaks the user sees (see errors.CATALOGUE)
_INTERNAL = frozenset({"resume_loop"})
_NOT_BREAKABLE = frozenset({"capture_error", "loop_limit", "inline_limit", "recompile_limit",
                            "generator_function"})
# kinds whose reason needs no "(no graph break here: ...)"
_SELF_EXPLAINED = frozenset({USER_RAISES, "generator_function"})


def cache_of(fn, backend: str | None = None, full_graph: bool = False) -> CodeCache:
    """The cache of ``fn``'s current code object (or of a code object)."""
    code = getattr(fn, "__code__", fn)
    caches = getattr(_local, "caches", None)
    if caches is None:
        caches = _CACHES
    return caches.get(code, backend, full_graph)


def reset_caches() -> None:
    """Forget every cache entry (tests)."""
    for cache in _CACHES.caches():
        with cache.lock:
            cache.entries = []  # wrappers made earlier hold their cache object
            cache.native_forever = False
            cache.dynamic = frozenset()
            cache.warned.clear()
    _CACHES.clear()
    _WARNED.clear()


def _eager_requested() -> bool:
    """``frame.config.eager`` or ``FRAME_EAGER`` (read when a function is jitted)."""
    return eager_forced()


def _default_backend() -> str:
    """frame's default backend (``frame.config.backend``, FRAME_BACKEND, else
    openvino when installed)."""
    return default_backend_name()


@dataclasses.dataclass(frozen=True)
class JitOptions:
    """What ``frame.jit`` was asked for.  Calls are translated under
    ``backend`` (None: frame's default, ``_default_backend``) and
    ``full_graph`` (a graph break raises ``GraphBreakError``); ``eager`` runs
    the function as it is."""
    backend: str | None = None
    full_graph: bool = False
    eager: bool = False

    def as_kwargs(self) -> dict:
        """The keyword arguments of ``jit`` that make these options."""
        return {"backend": self.backend, "full_graph": self.full_graph, "eager": self.eager}


def _backend_unpinned(options: JitOptions) -> bool:
    """Did the user leave the backend to frame (no ``backend=``, no
    ``FRAME_BACKEND``)?  Then the runtime may choose the tier by measurement
    (PGO); a backend the user named is a strict pin."""
    return options.backend is None and not os.environ.get("FRAME_BACKEND")




def jit(fn=None, *, backend: str | None = None, full_graph: bool = False, eager: bool = False):
    """Compile ``fn`` by capturing its bytecode into graphs.

    >>> @frame.jit
    ... def f(x, y):
    ...     return (x + y).relu() * 2

    ``fn`` may be a Python function, a bound method, a frame module or any
    object whose class defines ``__call__`` in Python, a ``staticmethod``
    (its function is jitted) or a ``functools.partial`` (its function is
    jitted, its arguments applied).  Any other callable (a builtin, a
    ``functools.lru_cache`` wrapper, a C extension's function) cannot be
    captured: the wrapper calls it natively, with one WARN; its own behaviour
    (an lru_cache's cache) is kept.  Generator and coroutine functions run
    natively too (one WARN): the call returns the generator or coroutine.
    """
    if fn is None:
        return functools.partial(jit, backend=backend, full_graph=full_graph, eager=eager)
    options = JitOptions(backend, full_graph, eager)
    if isinstance(fn, types.MethodType):
        bound_self, func = fn.__self__, fn.__func__
        return types.MethodType(jit(func, **options.as_kwargs()), bound_self)
    if isinstance(fn, staticmethod):  # callable since 3.10; it adds nothing to the call
        return jit(fn.__func__, **options.as_kwargs())
    if not isinstance(fn, types.FunctionType):
        if not callable(fn):
            raise TypeError(f"frame.jit expects a callable (a function, method or module), "
                            f"got {type(fn).__name__} object {_short_repr(fn)}")
        call = getattr(type(fn), "__call__", None)
        forward = getattr(type(fn), "forward", None)
        if getattr(call, "__module__", None) == "frame.nn.module" and isinstance(forward, types.FunctionType):
            # Module.__call__ only calls forward: jit each class's forward, so that
            # every module class has its own code cache (and recompile limit)
            return types.MethodType(jit(forward, **options.as_kwargs()), fn)
        if isinstance(call, types.FunctionType):
            return types.MethodType(jit(call, **options.as_kwargs()), fn)
        if isinstance(fn, functools.partial) and call is functools.partial.__call__:
            return _jit_partial(fn, options)
        return _native_wrapper(fn, options)

    code = fn.__code__
    cache = cache_of(fn, backend, full_graph)
    disabled = getattr(fn, "__frame_escape__", None) == "disable"
    if eager or disabled or _eager_requested():  # FRAME_EAGER is read when the function is jitted
        why = ("frame.jit(..., eager=True)" if eager else "frame.disable" if disabled
               else "FRAME_EAGER=1 (frame.config.eager)")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            _note_eager(why)
            return fn(*args, **kwargs)
    else:
        call_options = JitOptions(backend, full_graph)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            nonlocal code, cache
            if fn.__code__ is not code:  # replaced (a code reloader): the new code's cache
                code = fn.__code__
                cache = wrapper._frame_cache = cache_of(fn, backend, full_graph)
            entries = cache.entries
            try:
                for i, entry in enumerate(entries):
                    result = entry.fn(fn, *args, **kwargs)
                    if result is not MISS:
                        if i:
                            _promote(cache, entry)
                        if type(result) is Tail:  # the frame broke: run its continuations
                            return _trampoline(result)
                        return result
            except TypeError as err:
                return _own_type_error(err, fn, args, kwargs)
            if cache.native_forever:
                return fn(*args, **kwargs)
            result = _miss(cache, fn, args, kwargs, call_options)
            if type(result) is Tail:
                return _trampoline(result)
            return result

    if fn.__code__.co_flags & inspect.CO_COROUTINE and hasattr(inspect, "markcoroutinefunction"):
        inspect.markcoroutinefunction(wrapper)  # 3.12+: inspect.iscoroutinefunction(wrapper)
    return _mark(wrapper, fn, cache, options)


def _mark(wrapper, fn, cache, options):
    """What every function ``jit`` returns carries: what it wraps, its code
    cache (None when it has none) and the options it was made with
    (``frame.explain`` re-makes it with the same options)."""
    wrapper.__wrapped__ = fn
    wrapper.__frame_jit__ = True
    wrapper._frame_cache = cache
    wrapper._frame_options = options
    return wrapper


def _note_eager(why: str) -> None:
    """An eagerly jitted function was called: counted (``frame.report()``) and
    noted for ``frame.explain``."""
    note_eager(why)
    record.count("eager_calls")


def _jit_partial(p: functools.partial, options):
    """``functools.partial(func, *args, **keywords)``: ``func`` jitted, called
    as the partial calls it (its arguments first; call keywords win)."""
    inner = jit(p.func, **options.as_kwargs())

    def wrapper(*args, **kwargs):
        return inner(*p.args, *args, **{**p.keywords, **kwargs})
    wrapper.__name__ = getattr(p.func, "__name__", wrapper.__name__)
    wrapper.__qualname__ = getattr(p.func, "__qualname__", wrapper.__qualname__)
    wrapper.__doc__ = getattr(p.func, "__doc__", None)
    wrapper.__module__ = getattr(p.func, "__module__", wrapper.__module__)
    return _mark(wrapper, p, getattr(inner, "_frame_cache", None), options)


def _native_wrapper(fn, options):
    """A callable capture cannot intercept (no Python bytecode of its own to
    run: a builtin, a C wrapper such as ``functools.lru_cache``'s, a C
    extension's function or callable object): the wrapper calls it natively.
    The first call is reported (WARN once per site, counted, noted for
    ``frame.explain``); with ``full_graph=True`` every call raises."""
    kind = type(fn).__name__
    inner = getattr(fn, "__wrapped__", None)
    if inner is not None:
        why = (f"{kind} wrapping {getattr(inner, '__qualname__', kind)} is not Python code: its "
               f"behaviour (a cache, for functools.lru_cache) is kept by calling it natively")
    else:
        why = f"{kind} {_short_repr(fn)} is not Python code; it runs natively"
    reason = BreakReason("unsupported_call", why, _where_callable(fn))
    reported = threading.Event()

    @functools.wraps(fn, updated=())
    def wrapper(*args, **kwargs):
        if options.full_graph:
            raise GraphBreakError(reason)
        if not reported.is_set():
            reported.set()
            _report(None, fn, reason)
        return fn(*args, **kwargs)
    return _mark(wrapper, fn, None, options)


def _short_repr(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


def _where_callable(fn) -> str:
    """``file:line`` of the Python function ``fn`` wraps, else ``<module.name>``."""
    try:
        target = inspect.unwrap(fn)
    except ValueError:  # a cycle of __wrapped__
        target = fn
    code = getattr(target, "__code__", None)
    if isinstance(code, types.CodeType):
        return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return f"<{module}.{name}>"


def _dispatch(cache: CodeCache, fn, args, kwargs, options):
    """One intercepted call: an entry's result (possibly a ``Tail``), or a miss."""
    try:
        for i, entry in enumerate(cache.entries):
            result = entry.fn(fn, *args, **kwargs)
            if result is not MISS:
                if i:
                    _promote(cache, entry)
                return result
    except TypeError as err:
        return _own_type_error(err, fn, args, kwargs)
    if cache.native_forever:
        return fn(*args, **kwargs)
    return _miss(cache, fn, args, kwargs, options)


def _trampoline(result):
    """Run resume functions until the frame returns (no Python recursion per
    break, so a loop with a break in its body can run any number of times)."""
    while type(result) is Tail:
        options = JitOptions(result.backend)
        result = _dispatch(cache_of(result.fn, result.backend, False), result.fn, result.args, {},
                           options)
    return result


def run_intercepted(fn, backend, args, kwargs):
    """Call ``fn`` as an intercepted frame (a user function called natively at a
    graph break, or a resume function)."""
    options = JitOptions(backend)
    return _trampoline(_dispatch(cache_of(fn, backend, False), fn, args, kwargs, options))


install_run_intercepted(run_intercepted)  # the break entries' calls of user functions


def _promote(cache: CodeCache, entry: CacheEntry) -> None:
    """Move ``entry`` to the front (newest hit first): a new list, see CodeCache."""
    with cache.lock:
        entries = cache.entries
        if entries and entries[0] is not entry and any(e is entry for e in entries):
            cache.entries = [entry, *(e for e in entries if e is not entry)]


def _miss(cache: CodeCache, fn, args, kwargs, options):
    if not cache.stored_checked:
        result = _try_stored(cache, fn, args, kwargs, options)
        if result is not MISS:
            return result
    name = getattr(fn, "__qualname__", fn.__name__)
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    except TypeError:
        return fn(*args, **kwargs)  # raises the call's own TypeError; nothing to cache
    except ValueError:  # a parameter name that is not an identifier (a code object
        return fn(*args, **kwargs)  # made by hand): no entry can spell it; it runs natively
    bound.apply_defaults()
    fresh = False
    with cache.translating:  # one translation at a time per code object
        for entry in cache.entries:
            if entry.failing_guard(fn, args, kwargs) is None:
                break  # another thread translated this case meanwhile
        else:
            entry = _translate_miss(cache, fn, name, bound.arguments, args, kwargs, options)
            fresh = True
    # the user's code runs outside the lock
    if entry is None:  # the recompile limit was reached just now
        return fn(*args, **kwargs)
    if fresh and entry.native:
        return _first_native_call(cache, entry, fn, args, kwargs, options)
    if fresh and entry.breaks:
        _report(cache, fn, entry.reason, graph_break=True)
    result = entry.fn(fn, *args, **kwargs)
    if result is MISS:
        return _rejected(cache, entry, fn, name, args, kwargs, options)
    return result


def _rejected(cache: CodeCache, entry: CacheEntry, fn, name: str, args, kwargs, options):
    """A fresh entry's guards failed on the very arguments it was translated
    for: capture modelled something wrongly (a guard reads what the trace
    assumed, or the call changes it).  Nothing of the entry can be trusted: it
    is dropped, the function runs natively from now on, and the failing guard
    is logged as a capture error (``FRAME_LOG=guards`` shows all of them)."""
    failing = entry.failing_guard(fn, args, kwargs)
    with cache.lock:
        cache.entries = [e for e in cache.entries if e is not entry]
        cache.native_forever = True
    reason = BreakReason("capture_error",
                         f"a fresh entry rejected its own arguments (guard "
                         f"{failing.text if failing is not None else 'unknown'}); it runs natively",
                         _where(fn))
    _report(cache, fn, reason, raising=options.full_graph)
    if options.full_graph:
        raise GraphBreakError(reason)
    return fn(*args, **kwargs)


def _persisting() -> bool:
    """Are translations stored and loaded (capture/persist.py)?  Not under
    ``frame.explain``, which translates to report what happens."""
    return getattr(_local, "caches", None) is None


def _try_stored(cache: CodeCache, fn, args, kwargs, options):
    """The first miss of a code cache in this process: load the translations a
    previous process stored for it and run the call through the first whose
    guards hold (MISS when none does)."""
    with cache.translating:
        if cache.stored_checked:
            loaded = []
        else:
            cache.stored_checked = True
            loaded = persist.load_entries(fn, options, options.backend or _default_backend(),
                                          _backend_unpinned(options)) if _persisting() else []
            with cache.lock:
                room = CACHE_LIMIT - len(cache.entries)
                loaded = loaded[:max(room, 0)]
                cache.entries = [*cache.entries, *loaded]
    try:
        for entry in loaded:
            result = entry.fn(fn, *args, **kwargs)
            if result is not MISS:
                _promote(cache, entry)
                return result
    except TypeError as err:
        if not _unbound(err):
            raise
    return MISS  # (arguments that do not bind: _miss raises the function's own error)


def _own_type_error(err: TypeError, fn, args, kwargs):
    """An entry call raised ``err``: when the arguments do not bind, call the
    function, which raises its own TypeError; else re-raise ``err``."""
    if _unbound(err):
        return fn(*args, **kwargs)
    raise err


def _unbound(err: TypeError) -> bool:
    """Was ``err`` raised by calling an entry with arguments that do not bind
    to its (the function's) signature?  Then the traceback has no frame of the
    entry: the call itself failed in the frame that caught it.  The entry's
    own message would name ``__entry`` and count ``__fn``; calling the
    function raises the one the user expects."""
    tb = err.__traceback__
    return tb is not None and tb.tb_next is None


def _translate_miss(cache: CodeCache, fn, name: str, arguments, args, kwargs, options):
    """Translate a new entry (None past the recompile limit: the function then
    runs natively from now on)."""
    if cache.entries:
        failing = cache.entries[0].failing_guard(fn, args, kwargs)
        shown = failing.text if failing is not None else "unknown"
        made_dynamic = _dynamic_scalars(cache, failing, cache.entries[0], fn, args, kwargs)
        if made_dynamic:
            shown += f"; {made_dynamic} becomes a graph input (dynamic scalar)"
        if cache.translated() >= CACHE_LIMIT:
            cache.native_forever = True
            record.graph_break("recompile_limit")
            if frame_trace.enabled():  # FRAME_TRACE_DIR (frame/runtime/trace.py)
                frame_trace.emit("recompile_limit", function=name, guard=shown,
                                 limit=CACHE_LIMIT, location=_where(fn))
            if options.full_graph:  # the error says it all: nothing runs natively
                raise GraphBreakError(BreakReason("recompile_limit", f"last failing guard: {shown}",
                                                  _where(fn)))
            log.warning("%s: recompile limit (%d) reached; last failing guard: %s. "
                        "It runs natively from now on.", name, CACHE_LIMIT, shown)
            return None
        record.recompile(name, shown)  # counts it, keeps the failing guard for frame.report()
        if frame_trace.enabled():
            frame_trace.emit("recompile", function=name, guard=shown,
                             entries=len(cache.entries), location=_where(fn))
        recompile_log.info("recompiling %s: guard failed: %s", name, shown)
    entry = translate(fn, arguments, options, cache.dynamic)
    if _persisting() and not entry.native and not entry.breaks:
        persist.save_entry(fn, entry, options, CACHE_LIMIT)
    breaks = entry.native and (not entry.reason.user_raises or entry.in_try)
    if not (breaks and options.full_graph):  # a full_graph break raises on every call
        with cache.lock:
            cache.add(entry)
    return entry


def _dynamic_scalars(cache: CodeCache, failing, entry: CacheEntry, fn, args, kwargs) -> str:
    """A value guard of a Python int/float failed (``GuardKind.SCALAR_VALUE``):
    the scalars it read, and those of the entry's other failing value
    guards, become graph inputs of the next translations of this code
    (``variables/scalars.py``), unless ``frame.config.dynamic_scalars`` is
    off.  Returns how the user names them ("" when nothing changed).  A
    scalar whose value decides control flow, a shape or an index keeps its
    value guard in the new translation too."""
    if failing is None or failing.kind is not GuardKind.SCALAR_VALUE or not config.dynamic_scalars:
        return ""
    new = frozenset(s for g in entry.failing_guards(fn, args, kwargs)
                    if g.kind is GuardKind.SCALAR_VALUE for s in g.sources[1:]) - cache.dynamic
    if not new:
        return ""
    cache.dynamic = cache.dynamic | new
    return ", ".join(sorted(user_text(s) for s in new))


def _first_native_call(cache: CodeCache, entry: CacheEntry, fn, args, kwargs, options):
    """Run a fresh native entry's call: log and count why, once per reason.

    An exception the trace met outside any ``try`` of the function is the
    function's own: the native run raises it, also under ``full_graph``.  One
    met inside a ``try`` may be caught: under ``full_graph`` that is a break
    (raised before running anything); otherwise, if the native run returns,
    the entry is reclassified as ``caught_exception`` (or, outside any try,
    as ``unsupported_call``: frame's model of a NumPy call failed where NumPy
    does not)."""
    reason = entry.reason
    if not reason.user_raises or (entry.in_try and options.full_graph):
        _report(cache, fn, reason, raising=options.full_graph)
        if options.full_graph:
            raise GraphBreakError(reason)
        return fn(*args, **kwargs)
    try:
        result = fn(*args, **kwargs)
    except BaseException:
        _report(cache, fn, reason)
        raise
    if entry.in_try:
        reason = BreakReason("caught_exception", reason.reason, reason.location, reason.detail)
    else:  # the trace's model (frame's op for a NumPy call) failed where Python does not
        reason = BreakReason("unsupported_call", f"not modelled: {reason.reason}", reason.location,
                             reason.detail)
    reclassified = dataclasses.replace(entry, reason=reason)
    with cache.lock:
        cache.entries = [reclassified if e is entry else e for e in cache.entries]
    _report(cache, fn, reason)
    return result


def _report(cache: CodeCache | None, fn, reason: BreakReason, graph_break: bool = False,
            raising: bool = False) -> None:
    """Log a graph break or a native fallback once per site (kind, reason,
    file:line) at WARN, and count it by kind.  ``raising``: the call raises
    ``GraphBreakError`` (``full_graph=True``) instead of running natively, so
    no "runs natively" line: the error says it all."""
    if reason.kind in _INTERNAL:
        return
    note_break(reason, graph_break)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    key = (reason.kind, reason.reason, reason.location)
    if not raising and key not in _WARNED:
        _WARNED.add(key)
        if cache is not None:
            cache.warned.add(key)
        level = logging.INFO if reason.user_raises else logging.WARNING
        if graph_break:
            log.log(level, "graph break in %s (%s at %s): %s", name, reason.kind, reason.where,
                    reason.reason)
        else:
            log.log(level, "%s runs natively (%s at %s): %s", name, reason.kind, reason.where,
                    reason.reason)
    record.graph_break(reason.kind, reason.where, reason.reason)  # per-site counts for frame.report()
    if frame_trace.enabled():
        record_break(fn, name, reason, graph_break, raising)


def _where(fn) -> str:
    code = fn.__code__
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"


def translate(fn, arguments: dict, options: JitOptions, dynamic: frozenset = frozenset()) -> CacheEntry:
    """Simulate ``fn`` on its bound ``arguments`` (parameter name -> value,
    defaults applied) and build a cache entry.

    When the simulation raises ``Unsupported`` and a break can be placed
    before the top-frame instruction that raised (``breaks.can_break_at``),
    the frame is translated again up to that instruction and the entry ends
    in a graph break (``breaks.py``); otherwise the entry runs the function
    natively under the guards collected so far.

    With FRAME_TRACE_DIR the translation is recorded (``tracing.py``)."""
    # (read here, before capture handles an exception of its own: a re-translation up to
    # a break runs inside _translate's handler)
    _local.caller_handles = sys.exc_info()[1] is not None
    tid = frame_trace.begin_translation()  # None when recording is off
    if tid is None:
        return _translate(fn, arguments, options, dynamic)[0]
    t0 = time.perf_counter()
    backend = options.backend
    try:
        backend = backend or _default_backend()
        entry, stop, codes = _translate(fn, arguments, options, dynamic)
    except BaseException as err:
        record_translation(tid, fn, None, None, (), time.perf_counter() - t0, backend, err)
        raise
    record_translation(tid, fn, entry, stop, codes, time.perf_counter() - t0, backend)
    return entry


def _translate(fn, arguments: dict, options: JitOptions, dynamic: frozenset = frozenset(),
               lazy_values: bool = True):
    """``translate``: (the entry, the index of the top-frame instruction its
    graph break is placed before or None, the code objects its graph traced).

    A translation that made lazy ``x[mask]`` selections (variables/masked.py)
    or lazy Python numbers (``t.item()``, variables/lazy_scalars.py) and still
    ends running the function natively is done again without them: each such
    getitem or call then breaks the graph, as before they were modelled."""
    stop, codes = None, ()
    t0 = time.perf_counter()
    record.count("translations")
    tr, tx = _start(fn, arguments, dynamic, lazy_values)
    backend = options.backend or _default_backend()
    try:
        if tx is None:
            raise tr.failure
        result = tx.run()
        entry = build_entry(tr, fn, result, backend, pgo=_backend_unpinned(options))
        codes = tr.codes
    except Unsupported as e:
        reason = BreakReason(e.kind, e.reason, e.location or _where(fn), e.detail, e.hint)
        entry = None
        why = _no_break(fn, e, options)
        if why is None:
            entry, why, codes = _break_entry(fn, arguments, e, reason, backend, options, dynamic,
                                             lazy_values)
            stop = e.top_index if entry is not None else None
        if entry is None and lazy_values and (tr.masked_selections or tr.lazy_scalars):
            return _translate(fn, arguments, options, dynamic, lazy_values=False)
        if entry is None:
            if why is not None and e.kind not in _SELF_EXPLAINED and e.kind not in _INTERNAL:
                reason = BreakReason(e.kind, f"{e.reason} (no graph break here: {why})",
                                     reason.location, reason.detail, reason.advice)
            entry = build_native_entry(tr, fn, reason, in_try=e.in_try)
    note_translation(fn, entry, time.perf_counter() - t0)
    record.add_time("translation", time.perf_counter() - t0)
    frame_logs.translated(fn, entry)  # FRAME_LOG=guards,bytecode (frame/runtime/logs.py)
    return entry, stop, codes


def _start(fn, arguments: dict, dynamic: frozenset = frozenset(), lazy_values: bool = True):
    """A fresh Translation and the top-frame translator for ``fn``'s call
    (``(tr, None)`` with ``tr.failure`` set when the arguments cannot be wrapped);
    ``dynamic``: the sources of Python scalars that are graph inputs;
    ``lazy_values``: whether ``x[mask]`` may be a lazy selection and ``t.item()`` a
    lazy number."""
    tr = Translation(fn, dynamic=dynamic)
    tr.lazy_values = lazy_values
    tr.caller_handles = getattr(_local, "caller_handles", False)
    code = fn.__code__
    if code.co_flags & SUSPENDING_FLAGS:  # before any argument is wrapped: no guard at all
        what = ("an async generator" if code.co_flags & inspect.CO_ASYNC_GENERATOR else
                "a coroutine" if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE)
                else "a generator")
        tr.failure = Unsupported("generator_function",
                                 f"{fn.__qualname__} is {what} function: calling it returns "
                                 f"{what} object; it runs natively")
        tr.failure.location = _where(fn)
        return tr, None
    try:
        signature_source(code, fn, tr.guards)  # rejects reserved parameter names early
        f_locals = {}
        shown = stack_shown(code)   # a resume function's stack values, as the user knows them
        real_cells = cell_parameters(code)   # a resume function's cells, passed as real cells
        tr.is_resume = original_code(code) is not code
        for name, value in arguments.items():
            if name not in real_cells:
                f_locals[name] = tr.wrap(value, LocalSource(name, shown.get(name)))
    except Unsupported as e:
        if e.location is None:
            e.location = _where(fn)
        tr.failure = e
        return tr, None
    cells = {name: Cell() for name in code.co_cellvars}
    for i, (name, real) in enumerate(zip(code.co_freevars, fn.__closure__ or ())):
        cells[name] = Cell(real=real, source=ClosureSource(i, name))
    for name in code.co_cellvars:
        if name in real_cells:   # read through the real cell, written back when assigned
            real = arguments[name]
            cells[name] = Cell(real=real, source=AttrSource(LocalSource(name), "cell_contents"),
                               cell_source=LocalSource(name))
            tr.own_cells[id(real)] = cells[name]
        elif name in f_locals:  # a parameter captured by an inner function
            cells[name].value = f_locals[name]
    return tr, InstructionTranslator(tr, code, fn.__globals__, f_locals, cells)


def _no_break(fn, e: Unsupported, options) -> str | None:
    """Why ``e`` cannot become a graph break (None: try one)."""
    if options.full_graph:
        return "full_graph=True"
    if e.kind in _NOT_BREAKABLE or e.top_index is None:
        return e.kind
    if isinstance(e, UserCodeRaises) and not (e.in_try and e.depth > 0):
        # the function raises: its native run raises the same exception.  An
        # exception an inlined call may catch itself is a break at that call.
        return "the function raises"
    instr = decode(fn.__code__).instructions[e.top_index]
    if isinstance(e, UserCodeRaises) and instr.opname != "CALL":
        return "the function raises"
    return can_break_at(fn.__code__, instr)


def _break_entry(fn, arguments, e: Unsupported, reason: BreakReason, backend, options,
                 dynamic: frozenset = frozenset(), lazy_values: bool = True):
    """(entry, None, the codes its trace ran) for a graph break before the
    top-frame instruction that raised ``e``, or (None, why not, ())."""
    if e.depth > 0:  # placed at the caller's call: the reason is where the callee stopped
        reason = BreakReason(e.kind, f"{e.reason} (in a called function; the call runs as its "
                                     f"own intercepted frame)", reason.location, reason.detail,
                             reason.advice)
    tr, tx = _start(fn, arguments, dynamic, lazy_values)
    tx.stop_step = e.top_step
    try:
        tx.run()
        if tx.stopped is None or tx.stopped.index != e.top_index:
            return None, "the re-translation did not reach the break", ()
        brk = BreakPoint(tx, tx.stopped, reason)
        entry = build_entry(tr, fn, None, backend, brk=brk, requested_backend=options.backend,
                            pgo=_backend_unpinned(options))
    except Unsupported as err:
        return None, err.reason, ()
    return entry, None, tr.codes  # (its reason is brk.reason)
