"""Code caches and what they may assume (issue 12, items 3, 4, 9, 16):

* functions of one code object (or of equal code objects) with different
  globals each run with their own globals: guards, graphs, side effects and
  resume functions read the *called* function's globals and closure;
* replacing a function's ``__code__`` (a code reloader) takes effect, for the
  jitted function itself and for a function it inlines;
* threads calling one jitted function with distinct shapes translate each
  shape once and never reach the recompile limit;
* the caches of a dropped function are freed with it.

Each case compares the jitted function with the plain one."""
from __future__ import annotations

import gc
import importlib
import importlib.util
import sys
import textwrap
import threading
import types
import uuid
import weakref

import numpy as np
import pytest

import capture
import frame
from capture import resume
from frame.runtime import compile as rc
from frame.runtime.stats import record, reset_stats, stats

from .helpers import assert_same

jit_module = importlib.import_module("capture.jit")  # (capture.jit is the function)

SOURCE = textwrap.dedent('''
    import numpy as np

    SCALE = 2.0
    WEIGHT = np.ones(3, np.float32)
    calls = 0


    def helper(x):
        return x * SCALE


    def f(x):
        return helper(x) + SCALE


    def count(x):
        global calls
        calls = calls + 1
        return x + calls


    def scaled(x):
        return x * WEIGHT + 1.0


    def weighted(x):
        return x * WEIGHT


    def g(x):
        return weighted(x) + 1.0


    def with_break(x):
        y = np.tanh(x)
        print("break")
        return y * SCALE + 1.0
''')


def namespace(**values) -> dict:
    ns = {"__name__": f"ns_{uuid.uuid4().hex[:8]}"}
    exec(compile(SOURCE, "<fidelity source>", "exec"), ns)
    ns.update(values)
    return ns


def same_code(fn: types.FunctionType, ns: dict) -> types.FunctionType:
    """Another function of ``fn``'s very code object, with ``ns`` as its globals."""
    return types.FunctionType(fn.__code__, ns, fn.__name__, fn.__defaults__, fn.__closure__)


def x(n: int = 3) -> np.ndarray:
    return np.arange(n, dtype=np.float32)


def check(fn, *args) -> None:
    """Jitted ``fn`` returns what ``fn`` returns."""
    assert_same(fn(*args), frame.jit(fn, backend="cpu")(*args))


# -- item 3: globals of the called function ---------------------------------------------------------

def test_same_source_in_two_namespaces():
    a, b = namespace(), namespace(SCALE=10.0)
    check(a["f"], x())
    check(b["f"], x())


def test_one_code_object_with_two_globals():
    a, b = namespace(), namespace(SCALE=10.0)
    fa, fb = a["f"], same_code(a["f"], b)
    check(fa, x())
    check(fb, x())   # b's SCALE and b's helper
    check(fa, x())


def test_called_function_from_another_namespace_reads_its_own_globals():
    # fb's globals hold a's helper: the helper reads a's SCALE, fb reads b's
    a = namespace()
    b = namespace(SCALE=10.0)
    b["helper"] = a["helper"]
    fa, fb = a["f"], same_code(a["f"], b)
    check(fa, x())
    check(fb, x())
    np.testing.assert_array_equal(frame.jit(fb, backend="cpu")(x()), x() * 2.0 + 10.0)


def test_called_function_sharing_the_top_globals_only_at_trace_time():
    # traced with a's g and a's weighted (one globals dict); then b's g, whose
    # globals hold a's weighted: weighted reads a's WEIGHT (same shape as b's)
    a = namespace()
    b = namespace(WEIGHT=np.full(3, 10.0, np.float32))
    b["weighted"] = a["weighted"]
    ga, gb = a["g"], same_code(a["g"], b)
    check(ga, x())
    check(gb, x())
    np.testing.assert_array_equal(frame.jit(gb, backend="cpu")(x()), x() + 1.0)


def test_global_writes_go_to_the_called_functions_globals():
    a, b = namespace(), namespace()
    ca, cb = frame.jit(a["count"], backend="cpu"), frame.jit(same_code(a["count"], b), backend="cpu")
    assert_same(ca(x()), x() + 1)
    assert_same(cb(x()), x() + 1)
    assert_same(cb(x()), x() + 2)
    assert (a["calls"], b["calls"]) == (1, 2)


def test_resume_function_after_a_break_reads_the_called_functions_globals(capsys):
    a, b = namespace(), namespace(SCALE=10.0)
    fa, fb = a["with_break"], same_code(a["with_break"], b)
    check(fa, x())
    check(fb, x())
    np.testing.assert_allclose(frame.jit(fb, backend="cpu")(x()), np.tanh(x()) * 10.0 + 1.0)


def test_closures_of_one_code_object_read_their_own_cells():
    def make(scale):
        def g(v):
            return v * scale + 1.0
        return g

    for scale in (2.0, 3.0, 4.0):
        check(make(scale), x())


def _import_as(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def module_file(tmp_path):
    path = tmp_path / "fidelity_module.py"
    path.write_text(SOURCE)
    names = []
    yield path, names
    for name in names:
        sys.modules.pop(name, None)


def test_one_module_imported_under_two_names(module_file):
    path, names = module_file
    names += [f"fid_a_{uuid.uuid4().hex[:8]}", f"fid_b_{uuid.uuid4().hex[:8]}"]
    a, b = _import_as(path, names[0]), _import_as(path, names[1])
    b.SCALE = 10.0
    check(a.f, x())
    check(b.f, x())


def test_a_stored_translation_reads_the_loading_functions_globals(module_file, tmp_path):
    """persist.py: a translation stored for the module under one name, loaded
    for the same file imported under another name, reads that module's globals."""
    path, names = module_file
    names += [f"fid_a_{uuid.uuid4().hex[:8]}", f"fid_b_{uuid.uuid4().hex[:8]}"]
    root = tmp_path / "cache"
    with frame.config.override(cache=True, cache_dir=str(root), tiered=False):
        a = _import_as(path, names[0])
        check(a.scaled, x())
        assert stats().extra.get("capture_persistent_writes") == 1
        capture.reset_caches()  # a new process: translations come from the store
        rc.clear_cache()
        reset_stats()
        b = _import_as(path, names[1])
        b.WEIGHT = np.full(3, 10.0, np.float32)
        assert_same(frame.jit(b.scaled, backend="cpu")(x()), x() * 10.0 + 1.0)
        assert stats().extra.get("capture_persistent_hits") == 1, "the stored entry served the call"


# -- item 4: a replaced __code__ -------------------------------------------------------------------

def test_replacing_the_jitted_functions_code():
    def g(v):
        return v + 1.0

    def g2(v):
        return v * 100.0

    jitted = frame.jit(g, backend="cpu")
    assert_same(jitted(x()), g(x()))
    g.__code__ = g2.__code__
    assert_same(jitted(x()), x() * 100.0)
    assert jitted._frame_cache is jit_module.cache_of(g2, "cpu")


def test_replacing_an_inlined_helpers_code():
    ns = namespace()
    jitted = frame.jit(ns["f"], backend="cpu")
    assert_same(jitted(x()), ns["f"](x()))

    def reloaded(v):
        return v * SCALE - 1.0  # noqa: F821 - read from the helper's globals

    ns["helper"].__code__ = reloaded.__code__
    assert_same(jitted(x()), ns["f"](x()))
    assert_same(jitted(x()), x() * 2.0 - 1.0 + 2.0)


def test_replacing_a_methods_code():
    class Model:
        def scale(self, v):
            return v * 2.0

    def step(m, v):
        return m.scale(v) + 1.0

    def reloaded(self, v):
        return v * 7.0

    m = Model()
    jitted = frame.jit(step, backend="cpu")
    assert_same(jitted(m, x()), step(m, x()))
    Model.scale.__code__ = reloaded.__code__
    assert_same(jitted(m, x()), x() * 7.0 + 1.0)


def test_replacing_the_code_of_a_jitted_function_called_by_another():
    def inner(v):
        return v + 1.0

    def reloaded(v):
        return v - 1.0

    ns = {"inner": frame.jit(inner, backend="cpu")}
    exec("def outer(v):\n    return inner(v) * 2.0\n", ns)
    jitted = frame.jit(ns["outer"], backend="cpu")
    assert_same(jitted(x()), (x() + 1.0) * 2.0)
    inner.__code__ = reloaded.__code__
    assert_same(jitted(x()), (x() - 1.0) * 2.0)


# -- item 9: threads ---------------------------------------------------------------------------------

def _threaded_round(jitted, inputs, expected, threads: int = 8, calls: int = 24) -> list:
    barrier = threading.Barrier(threads)
    wrong = []

    def work(k: int) -> None:
        barrier.wait()
        for r in range(calls):
            i = (k + r) % len(inputs)
            if not np.array_equal(jitted(inputs[i]), expected[i]):
                wrong.append(i)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return wrong


def test_threads_with_distinct_shapes_translate_each_shape_once():
    def f(v):
        return np.tanh(v * 2.0 + 1.0)

    inputs = [np.full((n + 1,), 0.5, np.float32) for n in range(jit_module.CACHE_LIMIT)]
    expected = [f(v) for v in inputs]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(40):  # the race showed in about one round out of seven
            capture.reset_caches()
            record.reset()
            jitted = frame.jit(f, backend="cpu")
            wrong = _threaded_round(jitted, inputs, expected)
            s = stats()
            assert not wrong
            assert not jitted._frame_cache.native_forever, "the recompile limit was reached"
            assert "recompile_limit" not in s.graph_breaks
            assert s.translations == len(inputs), "a shape was translated twice"
    finally:
        sys.setswitchinterval(switch)


# -- item 16: dropped functions ------------------------------------------------------------------------

def _dropped(source: str, *args, in_namespace: bool = False):
    """Jit, call and drop a function made from ``source`` (its namespace
    refers to it only ``in_namespace``); weak references to its code object,
    its code cache and the executable of its entry."""
    ns = {"np": np}
    exec(compile(textwrap.dedent(source), "<dropped>", "exec"), ns)
    fn = ns["f"] if in_namespace else ns.pop("f")
    jitted = frame.jit(fn, backend="cpu")
    assert_same(jitted(*args), fn(*args))
    cache = jitted._frame_cache
    assert cache.entries and not cache.entries[-1].native
    refs = [weakref.ref(fn.__code__), weakref.ref(cache)]
    refs += [weakref.ref(e.executable) for e in cache.entries if e.executable is not None]
    return refs


def test_a_dropped_functions_caches_are_freed():
    with frame.config.override(compile_cache_size=0):  # (the compile cache keeps none)
        refs = _dropped('''
            def f(v):
                return np.tanh(v * 3.0) + 1.0
        ''', x())
        gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def test_a_function_its_namespace_refers_to_is_freed_past_the_codes_kept(monkeypatch):
    # its entries run with its globals, which refer to it: the caches go when
    # CODES_KEPT other code objects were looked up since
    monkeypatch.setattr(jit_module, "CODES_KEPT", 2)
    with frame.config.override(compile_cache_size=0):
        refs = _dropped('''
            def f(v):
                return np.tanh(v * 3.0) + 1.0
        ''', x(), in_namespace=True)
        gc.collect()
        assert refs[0]() is not None, "kept: among the last CODES_KEPT codes"
        for k in range(2):
            ns = {}
            exec(f"def g(v):\n    return v * {k + 2.0}\n", ns)
            frame.jit(ns.pop("g"), backend="cpu")(x())
        gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def test_a_dropped_functions_resume_functions_are_freed(capsys):
    gc.collect()
    before = len(jit_module._CACHES)
    with frame.config.override(compile_cache_size=0):
        refs = _dropped('''
            def f(v):
                w = v * 3.0
                print("break")
                for i in range(2):
                    w = w + i
                    print(i)
                return w
        ''', x())
        assert len(jit_module._CACHES) > before + 1, "resume functions have caches"
        assert any(code.co_filename == "<dropped>" for code in resume._CODES)
        gc.collect()
    assert [r() for r in refs] == [None] * len(refs)
    assert len(jit_module._CACHES) == before, "the resume functions' caches are freed"
    assert not any(code.co_filename == "<dropped>" for code in resume._CODES)


def test_a_live_functions_caches_stay():
    ns = {"np": np}
    exec("def f(v):\n    return v * 3.0\n", ns)
    frame.jit(ns["f"], backend="cpu")(x())  # the wrapper is dropped, the function is not
    gc.collect()
    reset_stats()
    assert_same(frame.jit(ns["f"], backend="cpu")(x()), x() * 3.0)
    assert stats().translations == 0
