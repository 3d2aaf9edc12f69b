"""runtime.compile's in-process cache is bounded: at most
``frame.config.compile_cache_size`` executables (FRAME_COMPILE_CACHE_SIZE),
the least recently used dropped first."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import frame
from frame.ir import GraphBuilder
from frame.runtime import compile as rc
from frame.runtime.stats import reset_stats, stats
from frame.settings import Config

from . import tiny_backend  # noqa: F401  (registers the "tiny" backend)


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    reset_stats()
    yield
    rc.clear_cache()


def build(const: float):
    b = GraphBuilder()
    x = b.input(frame.float32, (4,))
    s = b.op("mul", x, b.scalar(const, like=x))
    return b.build(b.op("relu", s))


def test_least_recently_used_is_dropped_first():
    with frame.config.override(compile_cache_size=2):
        a = rc.compile(build(1.0), "tiny")
        rc.compile(build(2.0), "tiny")
        assert rc.compile(build(1.0), "tiny") is a       # a hit: 1.0 is now the most recent
        rc.compile(build(3.0), "tiny")                   # drops 2.0, the least recent
        assert len(rc.compilation_cache) == 2
        compiled = stats().compiles
        assert rc.compile(build(1.0), "tiny") is a       # kept
        assert stats().compiles == compiled
        rc.compile(build(2.0), "tiny")                   # dropped: compiled again
        assert stats().compiles == compiled + 1
    assert stats().extra["compile_cache_evictions"] == 2


def test_a_dropped_executable_is_freed():
    with frame.config.override(compile_cache_size=1):
        exe = weakref.ref(rc.compile(build(1.0), "tiny"))
        rc.compile(build(2.0), "tiny")
    gc.collect()
    assert exe() is None


def test_an_executable_in_use_stays_alive_when_dropped():
    with frame.config.override(compile_cache_size=1):
        exe = rc.compile(build(1.0), "tiny")
        rc.compile(build(2.0), "tiny")
        assert len(rc.compilation_cache) == 1
    gc.collect()
    out = exe.run([np.full(4, 2.0, np.float32)])
    assert list(out[0]) == [2.0] * 4


def test_bound_of_a_cache_object_wins_over_the_setting():
    cache = rc.CompilationCache(max_size=3)
    made = [object() for _ in range(5)]
    with frame.config.override(compile_cache_size=1):
        for k in range(5):
            assert cache.get_or_compile(f"key {k}", lambda k=k: made[k]) is made[k]
    assert len(cache) == 3
    assert cache.get_or_compile("key 4", lambda: None) is made[4]
    assert cache.get_or_compile("key 0", lambda: "built again") == "built again"  # dropped


def test_size_comes_from_the_environment(monkeypatch):
    assert Config().compile_cache_size == 256
    monkeypatch.setenv("FRAME_COMPILE_CACHE_SIZE", "17")
    assert Config.from_env().compile_cache_size == 17
