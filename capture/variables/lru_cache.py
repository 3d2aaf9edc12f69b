"""Calls of ``functools.cache`` / ``functools.lru_cache(maxsize=None)``
functions of the program (``_lru_cache_wrapper`` objects).

A call's effects are the cache's: a hit counts a hit and returns the cached
object; a miss counts a miss, runs the function and stores its result.
Capture keeps them by *replaying the call natively* after the graph (as
other side effects are replayed), with the same arguments: the cache itself
counts, stores and reorders as it does in plain Python.  What the trace
needs is the result, known at trace time without calling the function:

* a hit (the key is in the cache, guarded): the cached object itself, read
  from the cache through a source (``CacheDictSource``) and wrapped as any
  value of the frame (a tensor, a scalar guarded where used, an object);
* a miss (the key is not in the cache, guarded): the wrapped function is
  inlined.  The replayed call runs it natively, so the trace's result must
  be the one it computes, and the same kind of object: the body may change
  nothing outside itself (no side effect recorded), it runs where nothing
  was changed before it in the call (the replay runs first, before the
  other writes), and its result must be an immutable Python constant (a
  tensor or list would be another object than the one the cache keeps).

Calls the trace made earlier are remembered (``Translation.cache_results``):
a second call with the same key is a hit on the value the first computed.
Calls inside a miss's body are not replayed (the replayed outer call makes
them).  Only unbounded, untyped caches called with positional constant
arguments are modelled (the key is then what CPython's C implementation
makes: the argument itself for one ``int`` or ``str``, else the tuple of
arguments); other calls are a graph break.  The cache's dict is reached
through the wrapper's garbage-collector referents (CPython's C
``_lru_cache_wrapper`` exposes it only there).
"""
from __future__ import annotations

import functools
import gc

from ..errors import Unsupported
from ..sources import AttrSource, DerivedSource, ItemSource, Source, is_safe_key
from .base import ConstantVariable, Variable
from .containers import constant_value, is_constant_value
from .registry import wrap_rule

__all__ = ["LruCacheVariable", "cache_dict"]

_WRAPPER = functools._lru_cache_wrapper


def cache_dict(wrapper) -> dict:
    """The dict of an unbounded ``_lru_cache_wrapper``: key -> cached result
    (the one dict among its referents that is not its ``__dict__``)."""
    own = getattr(wrapper, "__dict__", None)
    found = [r for r in gc.get_referents(wrapper) if type(r) is dict and r is not own]
    if len(found) != 1:
        raise RuntimeError(f"cannot find the cache of {wrapper!r}")
    return found[0]


class CacheDictSource(DerivedSource):
    """The cache dict of the wrapper at ``base`` (``cache_dict``, pooled as ``fn``)."""
    __slots__ = ("fn",)

    def __init__(self, base: Source, fn: str):
        self.base = base
        self.fn = fn

    def expr(self) -> str:
        return f"{self.fn}({self.base.expr()})"

    def text(self) -> str:
        return f"{self.base.text()}.<cache>"

    def _key(self):
        return (self.base,)


def _immutable(value) -> bool:
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return True
    return type(value) in (tuple, frozenset) and all(_immutable(v) for v in value)


def _cache_key(args: tuple):
    """CPython's key of an untyped call without keyword arguments."""
    if len(args) == 1 and type(args[0]) in (int, str):
        return args[0]
    return tuple(args)


class LruCacheVariable(Variable):
    """A ``functools.cache`` / ``lru_cache`` function of the program (its
    identity guarded); calls are modelled as the module doc says."""
    __slots__ = ("wrapper",)

    def __init__(self, wrapper, source: Source | None):
        super().__init__(source)
        self.wrapper = wrapper

    def python_type(self) -> type:
        return _WRAPPER

    def call(self, tx, args, kwargs):
        name = getattr(self.wrapper, "__qualname__", "a cached function")
        params = self.wrapper.cache_parameters()
        if params["maxsize"] is not None or params["typed"]:
            raise Unsupported("unsupported_call", f"calling {name}, an lru_cache with maxsize="
                                                  f"{params['maxsize']} typed={params['typed']} "
                                                  f"(only unbounded, untyped caches are modelled)")
        if kwargs or not all(is_constant_value(a) for a in args) or self.source is None:
            raise Unsupported("unsupported_call", f"calling the cached function {name} with "
                                                  f"arguments that are not positional constants")
        key = _cache_key(tuple(constant_value(a) for a in args))
        if not is_safe_key(key):
            raise Unsupported("unsupported_call", f"calling the cached function {name} with the "
                                                  f"key {key!r}")
        tr = tx.tr
        remembered = tr.cache_results.get((id(self.wrapper), key))
        if remembered is not None:
            result = remembered
        else:
            result = self._result(tx, args, key, name)
            tr.cache_results[(id(self.wrapper), key)] = result
        if tr.cache_miss_depth == 0:
            tr.side_effects.cached_calls.append((self, tuple(constant_value(a) for a in args)))
        return result

    def _result(self, tx, args, key, name: str) -> Variable:
        tr = tx.tr
        cache_source = CacheDictSource(self.source, tr.guards.const(cache_dict))
        cache = cache_dict(self.wrapper)
        present = key in cache
        tr.guards.has_key(cache_source, key, present)
        if present:
            return tr.wrap(cache[key], ItemSource(cache_source, key))
        if tr.cache_miss_depth == 0 and tr.side_effects:
            raise Unsupported("unsupported_call", f"a call of the cached function {name} that "
                                                  f"misses, after the function changed state "
                                                  f"(it is replayed before those changes)")
        wrapped = tr.wrap(self.wrapper.__wrapped__, AttrSource(self.source, "__wrapped__"))
        tr.cache_miss_depth += 1
        try:
            result = wrapped.call(tx, list(args), {})
        finally:
            tr.cache_miss_depth -= 1
        if tr.cache_miss_depth == 0 and tr.side_effects:
            raise Unsupported("unsupported_call", f"a call of the cached function {name} that "
                                                  f"misses, whose body has side effects")
        if not (is_constant_value(result) and _immutable(constant_value(result))):
            raise Unsupported("unsupported_call", f"a call of the cached function {name} that "
                                                  f"misses and returns {result!r}, not an "
                                                  f"immutable constant (the cache keeps the "
                                                  f"object the native call makes)")
        return result

    def getattr(self, tx, name: str) -> Variable:
        if name in ("__name__", "__qualname__", "__module__", "__doc__"):
            return ConstantVariable(getattr(self.wrapper, name))
        return super().getattr(tx, name)

    def __repr__(self) -> str:
        return f"Cached({getattr(self.wrapper, '__qualname__', self.wrapper)})"


@wrap_rule(69, static=True)
def _wrap_lru_cache(tr, value, source: Source | None) -> Variable | None:
    """A ``functools.cache`` / ``lru_cache`` function (its identity guarded)."""
    return LruCacheVariable(value, source) if type(value) is _WRAPPER else None
