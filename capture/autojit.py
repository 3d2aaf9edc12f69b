"""Automatic jit of hot eager code (``frame.config.auto_jit`` / ``FRAME_AUTO_JIT=1``).

Code nobody decorated with ``frame.jit`` compiles itself once it is hot:

* **Module units**: a call of an ``nn.Module`` instance (``Module.__call__``
  hands it to ``module_call`` while auto-jit is on), keyed by the instance and
  the call's tensor shapes/dtypes, other argument types and grad mode.  Only
  the outermost module call counts (a sub-module call inside it belongs to
  it).
* **Function units**: the user function whose frame issues eager ops
  (``frame.functions._core.eager_op_hook``: the innermost frame outside
  frame's library, the standard library and site-packages), counted per code
  object: a call (or a loop iteration: the frame's instruction offset went
  back) whose op sequence hashes the same as the previous one counts one more;
  another sequence starts the count again.

A unit is *hot* after ``auto_jit_threshold`` counted calls (default 5).  Then:

* a module unit submits a background capture + compile of ``forward`` with
  the arguments of that call;
* a function unit first gets its calls routed through a dispatcher
  (``capture/trampolines.py``: the function object's ``__code__`` is replaced
  by a trampoline with the same signature and closure, every other property
  kept); the next call submits the background capture + compile with its
  arguments.

The background job runs on the tiered compiler's worker
(``frame.runtime.tiered.scheduler``): the caller never waits, its calls keep
running eagerly meanwhile.  The job translates the unit exactly as
``frame.jit`` would (``jit.translate``; the graph goes through
``runtime.compile``, so tiers, PGO and the persistent cache apply) and adds
the entry to the code's cache (the one ``frame.jit`` of the same function
uses).  Only an entry that is one graph, no break and nothing native, is
installed; a unit that capture cannot compile that way (a graph break,
anything ``frame.explain`` would report as native) runs eagerly from then
on, its trampoline removed.  (A training forward compiles: its result
carries the compiled autograd record, capture/autograd.py.)  The swap is one attribute store: a call runs wholly eagerly or
wholly on an entry.

Installed, each call tries the entries (guards); a miss runs eagerly,
silently (``auto_jit_misses``); ``auto_jit_threshold`` misses in a row with
room in the code cache capture the new case in the background.  A job that
raises is logged as one WARN, and the unit runs eagerly for
``auto_jit_cooldown_s`` before it is tried again.

``frame.report()`` lists the units (``frame.stats().auto_jit``): calls, hits,
compile time and the time saved, estimated from measured eager and compiled
per-call times.  ``FRAME_LOG=hotpath`` logs each unit's life.
"""
from __future__ import annotations

import collections
import gc
import inspect
import logging
import os
import statistics
import sys
import threading
import time
import types
import weakref

import frame
from frame.autograd.tape import enable_grad, is_grad_enabled, no_grad
from frame.functions import _core
from frame.nn import module as _module
from frame.runtime import tiered
from frame.runtime.stats import record
from frame.settings import config
from frame.tensor import Tensor

from . import persist, trampolines
from .library import library_dirs
from .codegen import MISS
from .jit import (CACHE_LIMIT, JitOptions, _CACHES, _backend_unpinned, _default_backend,
                  _persisting, _trampoline, _unbound, cache_of, translate)
from .resume import SUSPENDING_FLAGS, Tail, original_code

__all__ = ["enabled", "units", "reset", "sync", "Unit", "wait_idle"]

log = logging.getLogger("frame.hotpath")

# unit states
COUNTING, PROBING, PENDING, COMPILED, EAGER, COOLDOWN = (
    "counting", "probing", "pending", "compiled", "eager", "cooldown")

_SAMPLES = 16  # per-call times kept per unit and kind (eager / compiled) for the estimates
_PROBE_CALLS = 3  # eager calls timed (the estimate's baseline) before the background capture
_MAX_FUNCTIONS = 4
_MAX_OPS = 100_000  # ops of one call (as far as the site can tell) before it gives up counting  # function objects of one hot code routed (closures made again and again)

MAX_UNITS_LISTED = 256  # units() and the report keep the most recently made ones

_lock = threading.Lock()
_units: list["Unit"] = []                     # units made (the report's rows), oldest first
_enabled = False


class _Local(threading.local):
    depth = 0       # module calls running eagerly under a counted (outermost) one


_tls = _Local()


# --------------------------------------------------------------------------- units

class Unit:
    """One auto-jit unit: what runs when it is called, its state and its counts."""

    def __init__(self, kind: str, label: str, fn: types.FunctionType, cache, key=None):
        self.kind = kind            # "module" or "function"
        self.label = label
        self.fn = fn                # the Python function its entries are made for
        self.cache = cache          # capture's CodeCache of fn.__code__
        self.key = key
        self.state = COUNTING
        self.calls = 0              # calls seen
        self.hits = 0               # calls run by an entry
        self.misses = 0             # calls whose guards failed: eager
        self.eager_calls = 0
        self.probe_calls = 0        # eager calls run in state probing
        self.run_of_misses = 0
        self.compiles = 0
        self.compile_s = 0.0
        self.retry_at = 0.0
        self.reason = ""            # why it runs eagerly (state eager / cooldown)
        self.eager_s: collections.deque = collections.deque(maxlen=_SAMPLES)
        self.compiled_s: collections.deque = collections.deque(maxlen=_SAMPLES)
        self.lock = threading.Lock()
        self.restore = None         # undoes the routing of a function unit's calls
        self.pending = False        # a background capture + compile is queued or running
        self.probe_at = 0.0         # a compiled unit captures a new case from then on

    # -- calls -------------------------------------------------------------------------
    def call(self, args, kwargs):
        """Run one call: an entry when one accepts it, else eagerly."""
        self.calls += 1
        state = self.state
        if state is COMPILED and self.hits >= _SAMPLES:  # measured and kept: just run
            try:
                for entry in self.cache.entries:
                    result = entry.fn(self.fn, *args, **kwargs)
                    if result is not MISS:
                        self.hits += 1
                        self.run_of_misses = 0
                        return _trampoline(result) if type(result) is Tail else result
            except TypeError as err:
                if not _unbound(err):
                    raise
                return self.eager(args, kwargs)  # raises the function's own TypeError
            # a miss: the path below counts it
        if state is COMPILED:
            t0 = time.perf_counter()
            for entry in self.cache.entries:
                try:
                    result = entry.fn(self.fn, *args, **kwargs)
                except TypeError as err:
                    if _unbound(err):
                        return self.eager(args, kwargs)  # raises the function's own TypeError
                    raise
                if result is not MISS:
                    if type(result) is Tail:
                        result = _trampoline(result)
                    compiled = self.compiled_s
                    compiled.append(time.perf_counter() - t0)
                    self.hits += 1
                    self.run_of_misses = 0
                    if len(compiled) == _SAMPLES and self.hits == _SAMPLES:
                        self._judge()
                    return result
            self.misses += 1
            record.count("auto_jit_misses")
            self.run_of_misses += 1
            if self.run_of_misses >= max(1, config.auto_jit_threshold) and not self.pending \
                    and self.cache.translated() < CACHE_LIMIT \
                    and time.monotonic() >= self.probe_at:
                self.run_of_misses = 0
                result = self.eager(args, kwargs)
                self._submit(args, kwargs)  # the new case, captured in the background
                return result
        elif state is PROBING or (state is COOLDOWN and time.monotonic() >= self.retry_at):
            # this call runs eagerly first (timed without a compile competing for the
            # cores), then, after _PROBE_CALLS such calls, its arguments go to the
            # background capture
            # (calls made while another background compile runs are not timed, but
            # count: a busy compiler -- tiers, PGO trials -- must not hold the unit back)
            result = self.eager(args, kwargs)
            self.probe_calls += 1
            if len(self.eager_s) >= _PROBE_CALLS or self.probe_calls >= _PROBE_CALLS \
                    or state is COOLDOWN:
                self._submit(args, kwargs)
            return result
        return self.eager(args, kwargs)

    def eager(self, args, kwargs):
        t0 = time.perf_counter()
        result = self.fn(*args, **kwargs)
        if not tiered.scheduler.pending:  # a background compile would distort the estimate
            self.eager_s.append(time.perf_counter() - t0)
        self.eager_calls += 1
        return result

    # -- compiling -----------------------------------------------------------------------
    def _submit(self, args, kwargs) -> None:
        with self.lock:
            if self.pending or self.state is EAGER:
                return
            job = _Job(self, args, kwargs)
            if not tiered.scheduler.submit(job):
                # backpressure (or exit): asked again on a call after cooldown_s
                retry = time.monotonic() + max(0.0, config.cooldown_s)
                if self.state is COMPILED:
                    self.probe_at = retry
                else:
                    self.state, self.retry_at = COOLDOWN, retry
                    self.reason = "background compiler busy"
                return
            self.pending = True
            if self.state is not COMPILED:  # a compiled unit keeps running its entries
                self.state = PENDING
        record.count("auto_jit_requests")
        log.info("auto-jit: %s is hot; capture and compile requested in the background",
                 self.label)

    def _finish(self, entry, seconds: float) -> None:
        """The job's translation (background thread)."""
        if entry.native or entry.breaks:
            reason = entry.reason
            why = f"{reason.kind} at {reason.location}: {reason.reason}" if reason is not None \
                else "not one graph"
            with self.lock:
                if not self.pending:
                    return
                self.pending = False
                self.compile_s += seconds
                if self.state is COMPILED:  # a new case that does not compile: misses stay eager
                    self.probe_at = float("inf")
                    self.reason = f"a later case is not compiled ({why})"
                    log.info("auto-jit: %s: a new case is not compiled (%s); it runs eagerly",
                             self.label, why)
                    return
                self.state, self.reason = EAGER, why
            record.count("auto_jit_refused")
            self._unroute()
            log.info("auto-jit: %s is not compiled (%s); it runs eagerly", self.label, why)
            return
        cache = self.cache
        with cache.lock:
            if not any(e is entry for e in cache.entries):  # (a loaded one is in already)
                cache.add(entry)
        with self.lock:
            if not self.pending:
                return
            self.pending = False
            self.compiles += 1
            self.compile_s += seconds
            self.state = COMPILED  # the swap: the next call tries the entry
        record.count("auto_jit_compiles")
        log.info("auto-jit: %s compiled in %.3f s; its next calls run the compiled graph",
                 self.label, seconds)

    def _failed(self, err: BaseException, seconds: float) -> None:
        with self.lock:
            if not self.pending:
                return
            self.pending = False
            self.compile_s += seconds
            self._cool_down(f"{type(err).__name__}: {err}")
        record.count("auto_jit_failures")
        level = logging.DEBUG if tiered.scheduler.closed else logging.WARNING
        log.log(level, "auto-jit: capturing or compiling %s failed (%s: %s); it runs eagerly, "
                "tried again after auto_jit_cooldown_s=%g s", self.label, type(err).__name__,
                err, config.auto_jit_cooldown_s)

    def _given_up(self, why: str) -> None:
        with self.lock:
            if not self.pending:
                return
            self.pending = False
            self._cool_down(why)
        if why != "process exit":
            log.warning("auto-jit: %s: %s; it runs eagerly, tried again after "
                        "auto_jit_cooldown_s=%g s", self.label, why, config.auto_jit_cooldown_s)

    def _cool_down(self, why: str) -> None:
        """No capture for ``auto_jit_cooldown_s`` (holding ``lock``); a compiled unit
        keeps its entries meanwhile."""
        until = time.monotonic() + max(0.0, config.auto_jit_cooldown_s)
        if self.state is COMPILED:
            self.probe_at = until
        else:
            self.state, self.retry_at = COOLDOWN, until
        self.reason = why

    def _judge(self) -> None:
        """After ``_SAMPLES`` compiled calls, compare with the eager calls measured
        before (a tiny function's eager ops may cost less than a guarded entry
        call): back to eager for good only when the compiled median is more than
        ``pgo_margin`` above the eager one (hysteresis: a tie keeps the entry)."""
        if not self.eager_s:
            return
        eager = statistics.median(self.eager_s)
        compiled = statistics.median(self.compiled_s)
        if compiled <= eager * (1.0 + max(0.0, config.pgo_margin)):
            return  # faster, or too close to call on a noisy machine: the entry stays
        with self.lock:
            if self.state is not COMPILED:
                return
            self.state = EAGER
            self.reason = (f"compiled {compiled * 1e3:.3f} ms/call is not faster than eager "
                           f"{eager * 1e3:.3f} ms/call")
        record.count("auto_jit_slower")
        self._unroute()
        log.info("auto-jit: %s: %s; it runs eagerly from now on", self.label, self.reason)

    def _unroute(self) -> None:
        restore, self.restore = self.restore, None
        if restore is not None:
            restore()

    # -- report --------------------------------------------------------------------------
    def summary(self) -> dict:
        eager = statistics.median(self.eager_s) if self.eager_s else None
        compiled = statistics.median(self.compiled_s) if self.compiled_s else None
        saved = (eager - compiled) * self.hits if eager is not None and compiled is not None \
            else 0.0
        return {"kind": self.kind, "state": self.state, "calls": self.calls, "hits": self.hits, "misses": self.misses, "compiles": self.compiles,
                "compile_s": self.compile_s, "eager_ms": None if eager is None else eager * 1e3,
                "compiled_ms": None if compiled is None else compiled * 1e3,
                "saved_s": saved, "reason": self.reason}

    def __repr__(self) -> str:
        return f"<auto-jit {self.kind} unit {self.label}: {self.state}>"


class _Job:
    """A background capture + compile of a unit on the tiered compiler's
    worker (``tiered._Scheduler`` calls ``_compile``, ``_abandon``, ``_drop``)."""

    def __init__(self, unit: Unit, args, kwargs):
        self.unit, self.args, self.kwargs = unit, args, kwargs
        self.label = unit.label
        self.grad = is_grad_enabled()  # thread-local: the translation runs under the caller's

    def _compile(self) -> None:
        unit, args, kwargs = self.unit, self.args, self.kwargs
        self.args = self.kwargs = None  # let the call's values go once done
        t0 = time.perf_counter()
        try:
            fn, cache, options = unit.fn, unit.cache, JitOptions()
            bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
            bound.apply_defaults()
            with cache.translating, (enable_grad() if self.grad else no_grad()):
                entry = _stored(fn, cache, options, args, kwargs)
                if entry is None:
                    entry = translate(fn, bound.arguments, options)
                    if _persisting() and not entry.native and not entry.breaks:
                        persist.save_entry(fn, entry, options, CACHE_LIMIT)  # warm starts
        except BaseException as err:  # noqa: BLE001 -- never let it reach the program
            unit._failed(err, time.perf_counter() - t0)
            return
        unit._finish(entry, time.perf_counter() - t0)

    def _abandon(self, waited: float) -> None:
        self.unit._given_up(f"the background compile took longer than compile_timeout_s="
                            f"{waited:g} s")

    def _drop(self) -> None:
        self.unit._given_up("process exit")


def _stored(fn, cache, options, args, kwargs):
    """The code cache's first miss in this process: the translations a previous
    process stored for the function (``capture/persist.py``, as ``frame.jit``'s
    first miss loads them) join the cache; the first whose guards accept the
    call's arguments is the unit's entry (None: translate)."""
    if cache.stored_checked or not _persisting():
        return None
    cache.stored_checked = True
    loaded = persist.load_entries(fn, options, options.backend or _default_backend(),
                                  _backend_unpinned(options))
    with cache.lock:
        loaded = loaded[:max(CACHE_LIMIT - len(cache.entries), 0)]
        cache.entries = [*cache.entries, *loaded]
    for entry in loaded:
        if entry.failing_guard(fn, args, kwargs) is None:
            return entry
    return None


def _new_unit(kind: str, label: str, fn, key=None) -> Unit:
    unit = Unit(kind, label, fn, cache_of(fn, None, False), key)
    with _lock:
        _units.append(unit)
        if len(_units) > MAX_UNITS_LISTED:  # the report's list; the units live on where used
            del _units[0]
    return unit


# --------------------------------------------------------------------------- module units

class _ModuleRecord:
    __slots__ = ("ref", "units")

    def __init__(self, module):
        self.ref = weakref.ref(module)
        self.units: dict[tuple, Unit] = {}


_modules: dict[int, _ModuleRecord] = {}


def _call_key(args, kwargs) -> tuple | None:
    """What a module unit is specialised on: tensor shapes/dtypes, the types of
    other arguments, grad mode (None: an argument auto-jit does not key on)."""
    key = [is_grad_enabled()]
    for a in args:
        t = type(a)
        if t is Tensor or isinstance(a, Tensor):
            key.append((t, a._data.shape, a._data.dtype, a._rg))
        elif t in (int, float, bool, str, type(None)):
            key.append((t, a))
        else:
            return None
    for name in sorted(kwargs):
        a = kwargs[name]
        t = type(a)
        if isinstance(a, Tensor):
            key.append((name, t, a._data.shape, a._data.dtype, a._rg))
        elif t in (int, float, bool, str, type(None)):
            key.append((name, t, a))
        else:
            return None
    return tuple(key)


def _forward_call(module, args, kwargs):
    """What ``module_call`` is to capture: the plain call (``__frame_traced_as__``)."""
    return module.forward(*args, **kwargs)


def module_call(module, args, kwargs):
    """``Module.__call__`` while auto-jit is on: count, or run the compiled entry."""
    tls = _tls
    if tls.depth or _core._dispatch.level is not _core._EAGER:
        return module.forward(*args, **kwargs)
    record_ = _modules.get(id(module))
    if record_ is None or record_.ref() is not module:
        forward = getattr(type(module), "forward", None)
        if not isinstance(forward, types.FunctionType) or getattr(module, "__dict__", None) is None:
            return module.forward(*args, **kwargs)
        record_ = _modules[id(module)] = _ModuleRecord(module)
        weakref.finalize(module, _modules.pop, id(module), None)
    key = _call_key(args, kwargs)
    unit = record_.units.get(key) if key is not None else None
    if unit is None:
        if key is None or len(record_.units) >= CACHE_LIMIT:
            return _eager_module(module, args, kwargs)
        forward = type(module).forward
        if trampolines.is_trampoline(forward.__code__):  # a function unit already
            return _eager_module(module, args, kwargs)
        unit = record_.units[key] = _new_unit(
            "module", f"{type(module).__name__}.forward (module {id(module):#x})", forward, key)
    state = unit.state
    if state is COUNTING:
        if unit.calls + 1 >= max(1, config.auto_jit_threshold):
            unit.state = PROBING  # this call submits the background compile
        else:
            unit.calls += 1
            return _eager_module(module, args, kwargs, unit)
    elif state is EAGER or state is PENDING or (state is COOLDOWN
                                                and time.monotonic() < unit.retry_at):
        unit.calls += 1
        return _eager_module(module, args, kwargs, unit)
    tls.depth += 1
    try:
        return unit.call((module, *args), kwargs)
    finally:
        tls.depth -= 1


def _eager_module(module, args, kwargs, unit=None):
    tls = _tls
    tls.depth += 1
    try:
        if unit is None:
            return module.forward(*args, **kwargs)
        return unit.eager((module, *args), kwargs)
    finally:
        tls.depth -= 1


module_call.__frame_traced_as__ = _forward_call


# --------------------------------------------------------------------------- function units

_USER_FILES = frozenset({os.path.join(os.path.dirname(os.path.abspath(frame.__file__)),
                                      "demo.py")})  # an example program inside frame
# id(code) -> (code, is it library code?); keyed by id (hashing a code object hashes its
# contents: microseconds), the code held so that its id is not reused meanwhile
_library: dict[int, tuple[types.CodeType, bool]] = {}


def _is_library(code: types.CodeType) -> bool:
    """Not user code: frame's and capture's modules (but the demo), the standard
    library, site-packages, code without a file (``<string>``, generated entries)."""
    known = _library.get(id(code))
    if known is not None and known[0] is code:
        return known[1]
    path = code.co_filename
    if path.startswith("<"):
        found = True
    else:
        path = os.path.abspath(path)
        found = path.startswith(library_dirs()) and path not in _USER_FILES
    if len(_library) > 100_000:
        _library.clear()
    _library[id(code)] = (code, found)
    return found


class _Site:
    """The op-sequence counter of one code object (function units)."""
    __slots__ = ("code", "frame_id", "lasti", "hash", "last", "count", "done", "ops")

    def __init__(self, code: types.CodeType):
        self.code = code  # held: the table is keyed by its id
        self.frame_id = 0
        self.lasti = -1
        self.hash = 0
        self.last = None
        self.count = 0
        self.done = False
        self.ops = 0


_sites: dict[int, _Site] = {}  # id(code) -> its counter


def on_op(op: str) -> None:
    """``frame.functions._core.eager_op_hook``: attribute an eager op to the
    innermost user frame and count that frame's calls."""
    if _tls.depth:
        return  # inside a module call: the module unit's business
    f = sys._getframe(2)  # the frame function that called apply
    library = _library
    while f is not None:
        code = f.f_code
        known = library.get(id(code))
        if known is not None and known[0] is code:
            if not known[1]:
                break
        elif not _is_library(code):
            break
        f = f.f_back
    else:
        return
    site = _sites.get(id(code))
    if site is None or site.code is not code:
        site = _new_site(code)
    if site.done:
        return
    fid, lasti = id(f), f.f_lasti
    if fid != site.frame_id or lasti < site.lasti:  # a new call (or loop iteration)
        if site.frame_id:
            if site.hash == site.last:
                site.count += 1
                if site.count >= max(1, config.auto_jit_threshold):
                    site.done = True
                    _route(code, f)
            else:
                site.last, site.count = site.hash, 1
        site.frame_id, site.hash, site.ops = fid, 0, 0
    site.lasti = lasti
    site.hash = hash((site.hash, op))
    site.ops += 1
    if site.ops > _MAX_OPS:  # one instruction issuing op after op (a loop of one op): no unit
        site.done = True


def _new_site(code: types.CodeType) -> _Site:
    site = _Site(code)
    if code.co_flags & SUSPENDING_FLAGS or original_code(code) is not code \
            or trampolines.is_trampoline(code) or id(code) in _CACHES._by_id:
        site.done = True  # generators, capture's resume code, explicitly jitted code
    if len(_sites) > 100_000:
        _sites.clear()
    _sites[id(code)] = site
    return site


def _route(code: types.CodeType, frame_) -> None:
    """``code`` is hot: route the calls of the functions running it through
    function units (the next call submits the background compile)."""
    fns = [r for r in gc.get_referrers(code)
           if type(r) is types.FunctionType and r.__code__ is code
           and r.__globals__ is frame_.f_globals and not getattr(r, "__frame_jit__", False)]
    if len(fns) > 1 and code.co_freevars:  # closures of one code: the one running in frame_
        values = frame_.f_locals
        fns = [fn for fn in fns if all(_cell_is(cell, values.get(name, _MISSING))
                                       for name, cell in zip(code.co_freevars, fn.__closure__))]
    fns = fns[:_MAX_FUNCTIONS]
    if not fns:
        log.info("auto-jit: %s (%s:%d) is hot, but no function object runs it (module or "
                 "exec'd code): not compiled", code.co_qualname if hasattr(code, "co_qualname")
                 else code.co_name, os.path.basename(code.co_filename), code.co_firstlineno)
        return
    for fn in fns:
        _function_unit(fn)


_MISSING = object()


def _cell_is(cell, value) -> bool:
    try:
        return cell.cell_contents is value
    except ValueError:  # an empty cell
        return value is _MISSING


def _function_unit(fn: types.FunctionType) -> Unit | None:
    code = fn.__code__
    clone = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__,
                               fn.__closure__)
    clone.__kwdefaults__ = fn.__kwdefaults__
    clone.__qualname__ = fn.__qualname__
    clone.__module__ = fn.__module__
    label = f"{fn.__qualname__} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
    unit = _new_unit("function", label, clone)

    def dispatch(args, kwargs):
        # defaults or keyword defaults reassigned since: the clone follows
        if clone.__defaults__ is not fn.__defaults__:
            clone.__defaults__ = fn.__defaults__
        if clone.__kwdefaults__ is not fn.__kwdefaults__:
            clone.__kwdefaults__ = fn.__kwdefaults__
        return unit.call(args, kwargs)

    tramp = trampolines.make_trampoline(code, dispatch)
    if tramp is None or not trampolines.install(fn, tramp):
        unit.state, unit.reason = EAGER, "its signature cannot be reproduced by a trampoline"
        log.info("auto-jit: %s is hot, but %s: not compiled", label, unit.reason)
        return unit
    unit.restore = lambda: trampolines.restore(fn, tramp)
    unit.state = PROBING
    log.info("auto-jit: %s is hot (%d calls with the same op sequence); its next call is "
             "captured in the background", label, config.auto_jit_threshold)
    return unit


# --------------------------------------------------------------------------- switch, report

def sync() -> None:
    """Install or remove the hooks as ``frame.config`` says (called when the
    settings change, and when frame is imported with ``FRAME_AUTO_JIT=1``)."""
    global _enabled
    on = bool(config.auto_jit)
    _module.call_hook = module_call if on and config.auto_jit_modules else None
    _core.eager_op_hook = on_op if on and config.auto_jit_functions else None
    if _enabled and not on:
        for unit in units():
            unit._unroute()  # functions get their own code back
    _enabled = on


def enabled() -> bool:
    return _enabled


def units() -> list[Unit]:
    with _lock:
        return list(_units)


def reset() -> None:
    """Forget every unit and counter, give routed functions their code back (tests)."""
    for unit in units():
        unit._unroute()
    with _lock:
        _units.clear()
    _modules.clear()
    _sites.clear()


def wait_idle(timeout: float | None = None) -> bool:
    """Wait until no background compile is queued or running (tests, benchmarks)."""
    return tiered.scheduler.idle(timeout)


def _report_rows() -> dict[str, dict]:
    return {u.label: u.summary() for u in units()}


record.provider("auto_jit", _report_rows)
