"""runtime.compile: cache key, hits without passes or backend compiles, misses on
every difference, thread safety."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import frame
from frame.hal import CompileOptions, ErrorCode, FrameError
from frame.ir import GraphBuilder
from frame.passes import PassManager
from frame.runtime import compile as rc
from frame.ops.interpreter import evaluate
from frame.runtime.stats import reset_stats, stats

from .tiny_backend import tiny


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    reset_stats()
    yield
    rc.clear_cache()


def build(shape=(4,), dtype=frame.float32, const=1.5):
    b = GraphBuilder()
    x = b.input(dtype, shape)
    y = b.input(dtype, shape)
    s = b.op("add", x, y)
    s = b.op("mul", s, b.scalar(const, like=s))
    return b.build(b.op("relu", s))


@pytest.fixture
def pass_runs(monkeypatch):
    runs = []
    original = PassManager.run

    def counting(self, graph):
        runs.append(self.names)
        return original(self, graph)
    monkeypatch.setattr(PassManager, "run", counting)
    return runs


def test_hit_runs_no_pass_and_no_backend_compile(pass_runs):
    before = len(tiny().compiled_graphs)
    exe1 = rc.compile(build(), "tiny")
    assert len(pass_runs) == 1 and len(tiny().compiled_graphs) == before + 1
    exe2 = rc.compile(build(), "tiny")  # an equal graph built again from scratch
    assert exe2 is exe1
    assert len(pass_runs) == 1 and len(tiny().compiled_graphs) == before + 1
    s = stats()
    assert (s.cache_hits, s.cache_misses, s.compiles) == (1, 1, 1)


@pytest.mark.parametrize("other", [
    lambda: build(shape=(5,)), lambda: build(dtype=frame.float64), lambda: build(const=2.5),
])
def test_any_difference_misses(other):
    rc.compile(build(), "tiny")
    rc.compile(other(), "tiny")
    assert stats().cache_misses == 2 and stats().cache_hits == 0


def test_backend_and_options_are_part_of_the_key():
    a = rc.compile(build(), "tiny")
    b = rc.compile(build(), "cpu")
    c = rc.compile(build(), "tiny", CompileOptions(device="GPU"))
    assert len({id(a), id(b), id(c)}) == 3
    assert stats().cache_misses == 3


def test_key_layout():
    g = build()
    key = rc.cache_key(g, "cpu", CompileOptions())
    backend, fp, text = key.split("\x1f")
    assert backend == "cpu" and fp == CompileOptions().fingerprint()
    assert text == frame.ir.dump_text(g)


def test_callers_graph_is_not_modified():
    g = build()
    before = frame.ir.dump_text(g)
    rc.compile(g, "cpu")
    assert frame.ir.dump_text(g) == before


def test_results_equal_reference():
    g = build()
    x = np.linspace(-2, 2, 4).astype(np.float32)
    y = np.ones(4, np.float32)
    for backend in ("tiny", "cpu"):
        out = rc.compile(g, backend).run([x, y])
        np.testing.assert_array_equal(out[0], evaluate(g, [x, y])[0])


def test_unknown_backend_is_not_found_and_not_cached():
    with pytest.raises(FrameError) as info:
        rc.compile(build(), "nope")
    assert info.value.code is ErrorCode.NOT_FOUND
    assert stats().fallbacks == {}
    with pytest.raises(FrameError):
        rc.compile(build(), "nope")  # failures are not cached as entries


def test_invalid_graph_reported_under_first_pass():
    b = GraphBuilder()
    x = b.input(frame.float32, (2,))
    y = b.op("relu", x)
    y.producer.attrs["bogus"] = 1
    with pytest.raises(FrameError, match="^pass 'canonicalize': V4"):
        rc.compile(b.build(y), "cpu")


def test_threads_compile_each_distinct_graph_once():
    shapes = [(3,), (4,), (5,), (6,)]
    errors = []
    barrier = threading.Barrier(8)
    before = len(tiny().compiled_graphs)

    def worker(i):
        try:
            barrier.wait()
            for rep in range(5):
                shape = shapes[(i + rep) % len(shapes)]
                g = build(shape=shape)
                x = np.full(shape, i, np.float32)
                out = rc.compile(g, "tiny").run([x, x])[0]
                np.testing.assert_array_equal(out, evaluate(g, [x, x])[0])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(tiny().compiled_graphs) - before == len(shapes)
    assert stats().compiles == len(shapes)
    assert stats().cache_misses == len(shapes)
    assert stats().cache_hits == 8 * 5 - len(shapes)
