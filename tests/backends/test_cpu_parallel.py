"""Large elementwise regions of the cpu executable run as chunks on the
worker pool (``codegen.fused_parallel``, ``hal/threadpool.py``).

The results are bit for bit those of the reference interpreter on the
unfused graph (and so of the unchunked code the executable runs on one
thread) for every float dtype, odd sizes, remainders, broadcasting and
non-contiguous inputs; NumPy's error state is the caller's on every thread."""
from __future__ import annotations

import contextvars
import math
import os
import signal
import threading
import warnings

import numpy as np
import pytest

import frame
from frame.backends.cpu import chunks
from frame.hal import threadpool as pool
from frame.ir import GraphBuilder
from frame.ops.interpreter import evaluate
from frame.runtime import compile as rc
from ..graphcheck import assert_identical

FLOATS = ("float16", "float32", "float64")


@pytest.fixture(autouse=True)
def _fresh_cache():
    rc.clear_cache()
    with frame.config.override(cache=False, tiered=False, cpu_threads=2):
        yield
    rc.clear_cache()


@pytest.fixture
def small_chunks(monkeypatch):
    """Parallel regions from a few thousand elements on, chunks of 1000 bytes:
    many chunks and a remainder at test sizes."""
    monkeypatch.setattr(chunks, "PARALLEL_MIN_ELEMENTS", 1000)
    monkeypatch.setattr(chunks, "PARALLEL_MIN_WORK", 1000)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 1000)


def _inputs(graph, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for v in graph.inputs:
        x = rng.uniform(-3, 3, v.type.shape).astype(v.type.dtype.np)
        if x.size >= 8:
            with np.errstate(over="ignore"):
                x.reshape(-1)[:8] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30, -1e30, 1e-30]
        out.append(x)
    return out


def _reverse_on_threads(fn, args, n):
    """pool.run's contract, each chunk on a thread of its own, last chunk first."""
    for i in reversed(range(n)):
        context = contextvars.copy_context()   # the caller's np.errstate
        t = threading.Thread(target=context.run, args=(fn, i, *args))
        t.start()
        t.join()


def _check(graph, ins=None):
    """The executable runs the region in parallel and matches the reference bit for
    bit: on the pool, chunk by chunk on fresh threads in reverse order, and with
    one thread (the unchunked code)."""
    ins = _inputs(graph) if ins is None else ins
    exe = rc.compile(graph, "cpu")
    assert "par_run(" in exe.source, exe.source
    with np.errstate(all="ignore"):
        want = evaluate(graph, ins)
        for _ in range(3):   # later runs reuse the threads' scratch arrays
            assert_identical(exe.run(ins), want, "pool")
        glob = exe.run.__globals__
        real, glob["par_run"] = glob["par_run"], _reverse_on_threads
        try:
            assert_identical(exe.run(ins), want, "chunks on other threads, reversed")
        finally:
            glob["par_run"] = real
        with frame.config.override(cpu_threads=1):
            assert_identical(exe.run(ins), want, "one thread")
    return exe


def _unary_graph(op, dtype, shape):
    b = GraphBuilder()
    x = b.input(dtype, shape)
    t = b.op("add", b.op("mul", x, x), x)
    y = b.op(op, t) if op != "relu" else b.op("relu", t)
    return b.build(b.op("sub", b.op("mul", y, x), b.scalar(0.25, like=x)))


UNARY = ("exp", "log", "sqrt", "tanh", "sin", "cos", "abs", "neg", "sign", "floor", "ceil",
         "reciprocal", "rsqrt", "relu")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY)
def test_unary_regions_are_bitwise(small_chunks, op, dtype):
    _check(_unary_graph(op, dtype, (97, 53)))


BINARY = ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod", "floordiv")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", BINARY)
def test_binary_regions_are_bitwise(small_chunks, op, dtype):
    b = GraphBuilder()
    x, y = b.input(dtype, (4099,)), b.input(dtype, (4099,))
    z = b.op(op, b.op("tanh", x), b.op("mul", y, y))
    b_out = b.op("add", z, b.op("exp", x))
    _check(b.build(b_out))


@pytest.mark.parametrize("dtype", FLOATS)
def test_select_clip_cast_compare(small_chunks, dtype):
    b = GraphBuilder()
    x, y = b.input(dtype, (61, 67)), b.input(dtype, (61, 67))
    m = b.op("greater", x, y)
    w = b.op("where", m, b.op("exp", x), b.op("neg", y))
    c = b.op("clip", w, b.scalar(-1.5, like=x), b.scalar(2.0, like=x))
    other = "float32" if dtype != "float32" else "float16"
    back = b.op("cast", b.op("cast", c, dtype=other), dtype=dtype)
    _check(b.build(b.op("mul", back, x)))


def test_gelu_at_default_settings():
    """The workload of the issue: tanh-GELU on 1024x1024 float32, default chunking."""
    b = GraphBuilder()
    x = b.input("float32", (1024, 1024))
    c = b.scalar(math.sqrt(2 / math.pi), like=x)
    inner = b.op("mul", c, b.op("add", x, b.op("mul", b.scalar(0.044715, like=x),
                                              b.op("mul", b.op("mul", x, x), x))))
    y = b.op("mul", b.op("mul", b.scalar(0.5, like=x), x),
             b.op("add", b.scalar(1.0, like=x), b.op("tanh", inner)))
    _check(b.build(y))


def test_small_regions_stay_inline():
    """Below the work threshold (the 20-node 64x64 graph's size) nothing changes."""
    b = GraphBuilder()
    x = b.input("float32", (64, 64))
    exe = rc.compile(b.build(b.op("tanh", b.op("mul", b.op("add", x, x), x))), "cpu")
    assert "par_run" not in exe.source and "def blk" not in exe.source


@pytest.mark.parametrize("dtype", FLOATS)
def test_broadcast_operands(small_chunks, dtype):
    """Rows along the leading axes where every input is full or broadcast: a bias
    row, a (1, n) row and a scalar stay whole, full inputs are sliced."""
    b = GraphBuilder()
    x = b.input(dtype, (3, 41, 37))
    bias, row = b.input(dtype, (37,)), b.input(dtype, (1, 37))
    y = b.op("tanh", b.op("add", b.op("mul", x, bias), row))
    graph = b.build(b.op("mul", y, b.scalar(3.0, like=x)))
    exe = _check(graph)
    assert ".reshape((123, 37))" in exe.source   # two leading axes collapsed
    # a column (n, 1) broadcast along the last axis: only the first axis is cut
    b = GraphBuilder()
    x, col = b.input(dtype, (45, 29)), b.input(dtype, (45, 1))
    graph = b.build(b.op("exp", b.op("sub", b.op("mul", x, col), x)))
    exe = _check(graph)
    assert "x1 = x1[a:b]" in exe.source


def test_non_contiguous_inputs(small_chunks):
    b = GraphBuilder()
    x, y = b.input("float32", (50, 40)), b.input("float32", (50, 40))
    graph = b.build(b.op("add", b.op("tanh", b.op("mul", x, y)), x))
    rng = np.random.default_rng(1)
    big = rng.standard_normal((100, 80)).astype(np.float32)
    t = rng.standard_normal((40, 50)).astype(np.float32)
    _check(graph, [big[::2, ::2], t.T])


def test_remainder_is_never_a_single_element(small_chunks):
    """1-D, 250 chunks of 250 float32 and the remainder added to the last chunk."""
    b = GraphBuilder()
    x = b.input("float32", (62501,))
    exe = _check(b.build(b.op("add", b.op("exp", x), x)))
    assert "b = a + 250 if i < 249 else 62501" in exe.source


def test_error_state_is_the_callers_on_every_thread(small_chunks):
    b = GraphBuilder()
    x = b.input("float32", (200, 30))
    graph = b.build(b.op("mul", b.op("exp", x), x))
    exe = rc.compile(graph, "cpu")
    assert "par_run(" in exe.source
    ins = [np.full((200, 30), 100.0, np.float32)]   # exp overflows everywhere
    with np.errstate(over="raise"):
        with pytest.raises(FloatingPointError) as want:
            evaluate(graph, ins)
        with pytest.raises(FloatingPointError) as got:
            exe.run(ins)
    assert str(got.value) == str(want.value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="ignore"):
            assert_identical(exe.run(ins), evaluate(graph, ins))


def _warned(fn, *args, **filter_kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(**filter_kwargs)
        fn(*args)
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("action", ["always", "default", "module", "once"])
def test_a_region_warns_as_often_as_numpy(small_chunks, action):
    """Under an "always" filter (``pytest.warns``) each ufunc of the plain code
    warns once per call; a region cut in blocks would warn once per block, so
    it runs unchunked then.  Under the other actions the blocks' warnings come
    from one line and are shown once, as NumPy's."""
    def f(x, y):
        return np.exp(x) * y - np.log(y)
    x = np.full((200, 30), 100.0, np.float32)   # exp overflows everywhere
    y = np.zeros((200, 30), np.float32)          # log divides by zero, inf * 0 is invalid
    jitted = frame.jit(f, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jitted(x, y)   # compiled
    want = _warned(f, x, y, action=action)
    assert len(want) == 3
    for _ in range(2):
        assert _warned(jitted, x, y, action=action) == want


def test_serial_requested_follows_the_filters_and_the_error_state():
    from frame.hal.fp_errors import serial_requested
    from frame.backends.cpu.codegen import region_threads
    assert not serial_requested() and region_threads() == 2
    with warnings.catch_warnings():
        warnings.simplefilter("always", RuntimeWarning)
        assert serial_requested() and region_threads() == 1
        with np.errstate(all="ignore"):   # nothing would be shown
            assert not serial_requested()
    with warnings.catch_warnings():
        warnings.filterwarnings("always", message="overflow")   # may apply
        assert serial_requested()
        warnings.simplefilter("ignore")                         # decides first
        assert not serial_requested()
    with np.errstate(under="print"):
        assert serial_requested()
    assert not serial_requested()


def test_pool_runs_chunks_on_two_threads():
    seen, barrier = set(), threading.Barrier(2, timeout=20)

    def chunk(i, out):
        if i < 2:
            barrier.wait()   # returns only when two threads run chunks at once
        seen.add(threading.current_thread().name)
        out[i] = i
    out = [None] * 8
    pool.run(chunk, (out,), 8)
    assert out == list(range(8)) and len(seen) == 2


def test_pool_raises_a_chunks_error_after_the_chunks_in_flight():
    done = []

    def chunk(i):
        if i == 3:
            raise KeyError("chunk 3")
        done.append(i)
    with pytest.raises(KeyError, match="chunk 3"):
        pool.run(chunk, (), 64)
    assert len(done) < 63   # no new chunk started after the error
    pool.run(lambda i: done.append(i), (), 4)   # the pool still works


def test_one_thread_runs_in_the_caller():
    names = set()
    with frame.config.override(cpu_threads=1):
        pool.run(lambda i: names.add(threading.current_thread().name), (), 16)
    assert names == {threading.current_thread().name}
    with pytest.raises(ValueError):
        frame.config.cpu_threads = -1


def _gelu(x):
    return 0.5 * x * (1.0 + frame.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def test_jitted_gelu_same_as_eager():
    from ..capture.helpers import assert_same_as_eager
    x = frame.tensor(np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32))
    assert_same_as_eager(_gelu, x, backend="cpu")
    f = frame.jit(_gelu, backend="cpu")
    want = _gelu(x).numpy()   # eager: the reference kernels, op by op
    for _ in range(3):
        assert f(x).numpy().tobytes() == want.tobytes()


def test_size_setting_rule_and_report(monkeypatch):
    from frame.runtime import threads
    from frame.settings import Config
    monkeypatch.delenv("FRAME_CPU_THREADS", raising=False)
    assert Config.from_env().cpu_threads is None
    monkeypatch.setenv("FRAME_CPU_THREADS", "3")
    assert Config.from_env().cpu_threads == 3
    monkeypatch.setenv("FRAME_CPU_THREADS", "two")
    with pytest.raises(ValueError, match="FRAME_CPU_THREADS"):
        Config.from_env()
    with frame.config.override(cpu_threads=None):
        assert pool.size() == threads.cpu_rule() == pool.available_cores()
        assert threads.current()["cpu_regions"] == pool.size()
    with frame.config.override(cpu_threads=0):
        assert pool.size() == 1


def test_concurrent_callers_and_persisted_executable(small_chunks):
    """Two Python threads run one executable at once (each its own plan arrays, the
    pool's workers shared); a persisted and reloaded executable chunks the same way."""
    from frame.backends.cpu import persist
    graph = _unary_graph("tanh", "float32", (300, 70))
    exe = rc.compile(graph, "cpu")
    assert "par_run(" in exe.source
    ins = [_inputs(graph, seed) for seed in range(4)]
    with np.errstate(all="ignore"):
        want = [evaluate(graph, i) for i in ins]
    errors = []

    def caller(k):
        try:
            with np.errstate(all="ignore"):
                for _ in range(30):
                    assert_identical(exe.run(ins[k]), want[k], f"caller {k}")
        except BaseException as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=caller, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    from frame.backends.cpu import CpuBackend
    from frame.hal import CompileOptions
    from frame.ir import clone_graph
    from frame.passes import PassManager, standard_pipeline
    work = PassManager(standard_pipeline(CpuBackend())).run(clone_graph(graph))
    exe = CpuBackend().compile(work, CompileOptions())
    again = persist.deserialize(persist.serialize(work, exe))
    assert again.source == exe.source and "par_run(" in again.source
    with np.errstate(all="ignore"):
        assert_identical(again.run(ins[0]), want[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_pool_in_a_forked_child():
    """The parent's workers do not exist in a child: it starts its own (and would
    compute alone if it could not)."""
    pool.run(lambda i: None, (), 4)   # the parent has its workers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # fork of a threaded process
        pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(30)
            seen, out = set(), []

            def chunk(i):
                out.append(i)
                seen.add(threading.current_thread().name)
            pool.run(chunk, (), 64)
            code = 0 if sorted(out) == list(range(64)) else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
