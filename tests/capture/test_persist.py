"""Stored translations (capture/persist.py): a later process (here: the same
process with every in-memory cache cleared) runs a jitted function from the
translation an earlier one stored, and translates again whenever anything the
stored one depended on changed."""
from __future__ import annotations

import importlib
import json
import logging
import os
import pathlib
import subprocess
import sys
import uuid

import numpy as np
import pytest

import capture
import frame
from capture import persist
from frame.runtime import compile as rc
from frame.runtime.stats import reset_stats, stats

ROOT = str(pathlib.Path(__file__).resolve().parents[2])

MODULE = '''
import numpy as np
import frame

SCALE = 2.0


def helper(x):
    return frame.relu(x) * SCALE


def f(x, w, k=3):
    return helper(x @ w) + k


class Holder:
    def __init__(self, w):
        self.w = w


def with_dtype(x):
    return (x * 2).astype(np.float64)


def keyword_only(x, *, scale=2.0, shift=(1.0, 2.0)):
    return x * scale + shift[1]


def train_step(w, x):
    loss = (frame.tanh(x @ w) ** 2).mean()
    loss.backward()
    with frame.no_grad():
        w -= 0.1 * w.grad
    return loss


def forward(w, x):
    return frame.tanh(x @ w) * w.sum()


def scaled(x, s):
    return frame.tanh(x * s) + 1
'''


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """Persistent cache on in a fresh directory; fresh in-memory caches and counters."""
    root = tmp_path / "cache"
    monkeypatch.setenv("FRAME_CACHE_DIR", str(root))
    with frame.config.override(cache=True, cache_dir=str(root), tiered=False):
        new_process()
        yield root
    new_process()


@pytest.fixture
def mod(tmp_path, monkeypatch):
    """A fresh module written to a file (its source can be changed between runs)."""
    name = f"persist_mod_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield module
    sys.modules.pop(name, None)


def new_process() -> None:
    """What a new process starts with: no translations, no executables, no counters."""
    capture.reset_caches()
    rc.clear_cache()
    reset_stats()


def data(rows=4):
    rng = np.random.default_rng(rows)
    return (frame.tensor(rng.standard_normal((rows, 5)).astype(np.float32)),
            frame.tensor(rng.standard_normal((5, 3)).astype(np.float32)))


def run(fn, *args):
    out = frame.jit(fn, backend="cpu")(*args)
    return out, stats()


def records(root: pathlib.Path) -> list[pathlib.Path]:
    return [p for p in (root / "compiled").glob("*.fce")
            if persistent_kind(p) == "record:capture"]


def persistent_kind(path: pathlib.Path) -> str:
    from frame.runtime.persistent import _peek_backend
    return _peek_backend(str(path))


def test_a_later_run_uses_the_stored_translation(cache_dir, mod):
    x, w = data()
    expected = mod.f(x, w).numpy()
    out, s = run(mod.f, x, w)
    assert s.translations == 1 and s.extra["capture_persistent_writes"] == 1
    np.testing.assert_array_equal(out.numpy(), expected)
    assert len(records(cache_dir)) == 1

    new_process()
    out, s = run(mod.f, x, w)
    assert s.translations == 0
    assert s.extra["capture_persistent_loads"] == 1 and s.extra["capture_persistent_hits"] == 1
    assert s.compiles_by_backend == {}, "the executable comes from the persistent cache"
    assert type(out) is frame.Tensor
    np.testing.assert_array_equal(out.numpy(), expected)
    out, s = run(mod.f, x, w)  # later calls: the loaded entry, no new translation
    assert s.translations == 0
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("name", ["train_step", "forward"])
def test_results_with_a_compiled_autograd_record_are_stored_with_their_backward(
        cache_dir, mod, name):
    """A stored entry whose results require grad (a training step's loss, a
    forward in grad mode) hands out results with the record, whose backward
    (stored beside the entry) gives eager's gradients."""
    fn = getattr(mod, name)
    x, w0 = data()

    def observe(call):
        w = frame.tensor(w0.numpy(), requires_grad=True)
        out = call(w, x)
        first = None if w.grad is None else w.grad.numpy().copy()
        (out * out).sum().backward()
        return (out.numpy(), out.requires_grad, out.is_leaf, first, w.grad.numpy(), w.numpy())

    def same(a, b):
        for u, v in zip(a, b):
            if isinstance(u, np.ndarray):
                np.testing.assert_allclose(v, u, rtol=1e-5, atol=1e-6)
            else:
                assert u == v

    expected = observe(fn)
    same(expected, observe(frame.jit(fn, backend="cpu")))
    assert stats().translations == 1 and stats().extra["capture_persistent_writes"] == 1
    new_process()
    same(expected, observe(frame.jit(fn, backend="cpu")))
    s = stats()
    assert s.translations == 0 and s.extra["capture_persistent_hits"] == 1
    assert s.extra.get("compiled_backward_runs") == 1


def test_each_guarded_case_is_stored(cache_dir, mod):
    small, large = data(4), data(6)
    run(mod.f, *small)
    new_process()
    run(mod.f, *large)  # the stored entry's guards fail: translated and stored beside it
    assert stats().translations == 1
    new_process()
    for args in (small, large):
        out, s = run(mod.f, *args)
        np.testing.assert_array_equal(out.numpy(), mod.f(*args).numpy())
    assert s.translations == 0 and s.extra["capture_persistent_loads"] == 2


def test_runs_with_other_values_do_not_spend_the_recompile_limit(cache_dir, mod):
    """Each run stores a translation for the shapes it saw; a later run, with
    shapes none of them had, still translates its own (the recompile limit
    counts this process's translations, not the stored ones, which make room)."""
    from capture.jit import CACHE_LIMIT, cache_of
    rows = range(2, CACHE_LIMIT + 4)
    for n in rows:
        new_process()
        x, w = data(n)
        out, s = run(mod.f, x, w)
        assert s.translations == 1, f"run {n}: {s.translations} translations"
        assert not cache_of(mod.f, "cpu").native_forever
        np.testing.assert_array_equal(out.numpy(), mod.f(x, w).numpy())
    assert len(cache_of(mod.f, "cpu").entries) == CACHE_LIMIT
    new_process()
    for n in rows[-CACHE_LIMIT:]:   # the newest stored translations serve these
        out, s = run(mod.f, *data(n))
    assert s.translations == 0


def test_a_scalar_value_guard_failing_in_a_later_run_makes_the_scalar_dynamic(cache_dir, mod):
    """A Python scalar whose value guard fails becomes a graph input, whether
    the entry whose guard failed was translated in this run or a stored one:
    the third run with a third value translates nothing."""
    x = data()[0]
    for value, translations in ((1.5, 1), (2.5, 1), (3.5, 0), (4.5, 0)):
        new_process()
        out, s = run(mod.scaled, x, value)
        assert s.translations == translations, value
        np.testing.assert_array_equal(out.numpy(), mod.scaled(x, value).numpy())


def test_a_changed_source_file_is_translated_again(cache_dir, mod):
    x, w = data()
    run(mod.f, x, w)
    path = pathlib.Path(mod.__file__)
    path.write_text(MODULE.replace("frame.relu(x) * SCALE", "frame.relu(x) * SCALE * 3.0  # changed"))
    module = importlib.reload(mod)
    new_process()
    out, s = run(module.f, x, w)
    assert s.translations == 1 and s.extra.get("capture_persistent_hits", 0) == 0
    np.testing.assert_allclose(out.numpy(), module.f(x, w).numpy(), rtol=1e-6)
    assert not np.allclose(out.numpy(), (frame.relu(x @ w) * 2.0 + 3).numpy())


def test_changed_globals_and_defaults_fail_guards(cache_dir, mod):
    x, w = data()
    run(mod.f, x, w)
    new_process()
    mod.SCALE = 5.0
    out, s = run(mod.f, x, w)
    assert s.translations == 1
    np.testing.assert_array_equal(out.numpy(), mod.f(x, w).numpy())
    new_process()
    mod.f.__defaults__ = (7,)
    out, s = run(mod.f, x, w)
    assert s.translations == 1
    np.testing.assert_array_equal(out.numpy(), mod.f(x, w).numpy())


def test_objects_are_guarded_by_type_and_read_at_run_time(cache_dir, mod):
    holder = mod.Holder(data()[1])

    def uses_object(x):
        return x @ holder.w  # guards: type(holder) is Holder, holder.w's type/shape/dtype

    x, _ = data()
    run(uses_object, x)
    new_process()
    holder.w = frame.tensor(np.full((5, 3), 0.5, np.float32))
    out, s = run(uses_object, x)
    assert s.translations == 0
    np.testing.assert_array_equal(out.numpy(), uses_object(x).numpy())


def test_unnameable_constants_are_not_stored(cache_dir, mod):
    class Local:  # a class only this call's frame can name
        def __init__(self, w):
            self.w = w

    holder = Local(data()[1])

    def uses_object(x):
        return x @ holder.w  # guards: type(holder) is <the local class>

    x, _ = data()
    out, s = run(uses_object, x)
    np.testing.assert_array_equal(out.numpy(), uses_object(x).numpy())
    assert s.extra.get("capture_persistent_writes", 0) == 0
    assert records(cache_dir) == []


def test_an_entry_ending_in_a_graph_break_is_not_stored(cache_dir, capsys):
    def breaks(x):
        y = x * 2
        print("hello")
        return y + 1

    x, _ = data()
    out, s = run(breaks, x)
    np.testing.assert_array_equal(out.numpy(), (x * 2 + 1).numpy())
    assert s.translations == 2  # the function up to the break, the resume function
    assert s.extra["capture_persistent_writes"] == 1  # the resume function's translation only
    new_process()
    out, s = run(breaks, x)
    assert capsys.readouterr().out == "hello\nhello\n"
    np.testing.assert_array_equal(out.numpy(), (x * 2 + 1).numpy())
    assert s.translations == 1 and s.extra["capture_persistent_hits"] == 1


def test_keyword_only_defaults_round_trip(cache_dir, mod):
    x, _ = data()
    run(mod.keyword_only, x)
    new_process()
    out, s = run(mod.keyword_only, x)
    assert s.translations == 0
    np.testing.assert_array_equal(out.numpy(), mod.keyword_only(x).numpy())
    new_process()
    mod.keyword_only.__kwdefaults__ = {"scale": 3.0, "shift": (1.0, 2.0)}
    out, s = run(mod.keyword_only, x)
    assert s.translations == 1
    np.testing.assert_array_equal(out.numpy(), mod.keyword_only(x).numpy())


def test_dtype_constants_round_trip(cache_dir, mod):
    x, _ = data()
    run(mod.with_dtype, x)
    new_process()
    out, s = run(mod.with_dtype, x)
    assert s.translations == 0
    assert out.dtype == frame.float64
    np.testing.assert_array_equal(out.numpy(), mod.with_dtype(x).numpy())


def test_a_damaged_record_is_ignored_with_one_warning(cache_dir, mod, caplog):
    x, w = data()
    run(mod.f, x, w)
    (path,) = records(cache_dir)
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    path.write_bytes(bytes(blob))
    new_process()
    with caplog.at_level(logging.DEBUG, logger="frame.cache"):
        out, s = run(mod.f, x, w)
    assert s.translations == 1 and s.extra["persistent_invalid"] == 1
    assert any("ignoring capture entry" in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(out.numpy(), mod.f(x, w).numpy())
    assert len(records(cache_dir)) == 1  # written again


def test_an_entry_without_its_compiled_code_is_compiled_from_its_source(cache_dir, mod):
    from frame.runtime.persistent import active_store
    x, w = data()
    run(mod.f, x, w)
    store = active_store()
    key = persist._record_key(mod.f, "cpu", False)
    meta, blobs = store.load_record(persist.KIND, key)
    for item in meta["entries"]:
        del item["blobs"]["code"]
    assert store.save_record(persist.KIND, key, meta, blobs)
    new_process()
    out, s = run(mod.f, x, w)
    assert s.translations == 0 and s.extra["capture_persistent_hits"] == 1
    np.testing.assert_array_equal(out.numpy(), mod.f(x, w).numpy())


def test_a_stored_translation_whose_executable_is_gone_compiles_its_graph(cache_dir, mod):
    x, w = data()
    run(mod.f, x, w)
    for path in (cache_dir / "compiled").glob("*.fce"):
        if persistent_kind(path) != "record:capture":
            path.unlink()  # evicted, say: the record stays
    new_process()
    out, s = run(mod.f, x, w)
    assert s.translations == 0 and s.compiles_by_backend == {"cpu": 1}
    np.testing.assert_array_equal(out.numpy(), mod.f(x, w).numpy())


def test_explain_translates_instead_of_loading(cache_dir, mod):
    x, w = data()
    run(mod.f, x, w)
    new_process()
    report = frame.explain(mod.f, backend="cpu")(x, w)
    assert report.graph_count == 1
    assert stats().extra.get("capture_persistent_loads", 0) == 0


def test_backend_and_full_graph_are_separate_records(cache_dir, mod):
    x, w = data()
    run(mod.f, x, w)
    new_process()
    frame.jit(mod.f, backend="cpu", full_graph=True)(x, w)
    assert stats().translations == 1
    assert len(records(cache_dir)) == 2


def test_nothing_is_stored_when_the_cache_is_off(tmp_path, mod):
    with frame.config.override(cache=False, cache_dir=str(tmp_path)):
        new_process()
        x, w = data()
        run(mod.f, x, w)
        assert stats().extra.get("capture_persistent_writes", 0) == 0
    assert not (tmp_path / "compiled").exists()


# ---------------------------------------------------------------------------- constants

@pytest.mark.parametrize("value", [None, True, 3, -2**70, 1.5, float("nan"), float("-inf"), "s",
                                   b"\x00b", (1, (2.5, "x")), np.dtype("float32"),
                                   np.dtype(">i2"), np.float32(0.1), np.int64(-3), np, np.ndarray,
                                   frame.Tensor, frame.relu, np.add, np.ndarray.reshape, len])
def test_named_constants_round_trip(value):
    def fn():
        pass

    ref = persist._encode(value, fn)
    json.dumps(ref, allow_nan=False)  # stored as JSON
    back = persist._decode(json.loads(json.dumps(ref)), fn)
    if isinstance(value, float) and value != value:
        assert back != back
    elif isinstance(value, (np.generic, tuple, int, float, str, bytes, np.dtype)) or value is None:
        assert type(back) is type(value) and back == value
    else:
        assert back is value


def test_a_name_that_now_denotes_another_function_is_refused(mod, monkeypatch):
    ref = persist._encode(mod.helper, mod.f)
    assert persist._decode(ref, mod.f) is mod.helper

    def helper(x):  # same name, other code
        return x

    monkeypatch.setattr(mod, "helper", helper)
    helper.__qualname__ = "helper"
    with pytest.raises(persist.NotPersistable):
        persist._decode(ref, mod.f)


def test_keyword_defaults_by_reference():
    def fn(*, k=1.5, name="x"):
        pass

    ref = persist._encode(fn.__kwdefaults__, fn)
    assert persist._decode(json.loads(json.dumps(ref)), fn) is fn.__kwdefaults__
    fn.__kwdefaults__ = {"k": 2.5, "name": "x"}
    with pytest.raises(persist.NotPersistable):
        persist._decode(ref, fn)


def test_function_globals_and_defaults_by_reference():
    def fn(a=(1, 2)):
        pass

    assert persist._decode(persist._encode(fn.__globals__, fn), fn) is fn.__globals__
    ref = persist._encode(fn.__defaults__, fn)
    assert persist._decode(ref, fn) is fn.__defaults__
    fn.__defaults__ = ((1, 3),)
    with pytest.raises(persist.NotPersistable):
        persist._decode(ref, fn)


@pytest.mark.parametrize("value", [object(), np.zeros(2), lambda: 0, {"a": 1}, [1], {1}])
def test_unnameable_constants_are_refused(value):
    with pytest.raises(persist.NotPersistable):
        persist._encode(value, test_unnameable_constants_are_refused)


# ---------------------------------------------------------------------------- processes

CHILD = '''
import json, sys
import numpy as np
import frame

@frame.jit(backend="cpu")
def step(x, w, lr=0.1):
    h = frame.tanh(x @ w)
    loss = (h * h).mean()
    return w - lr * (x.T @ (h * (1 - h * h))) , loss

rng = np.random.default_rng(3)
x = frame.tensor(rng.standard_normal((8, 4)).astype(np.float32))
w = frame.tensor(rng.standard_normal((4, 4)).astype(np.float32))
for _ in range(3):
    w, loss = step(x, w)
s = frame.stats()
print(json.dumps({"w": w.numpy().tolist(), "loss": float(loss.item()), "translations": s.translations,
                  "compiles": s.compiles_by_backend, "extra": s.extra}))
'''


def test_a_second_process_neither_translates_nor_compiles(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = dict(os.environ, FRAME_CACHE_DIR=str(tmp_path / "cache"), FRAME_CACHE="1",
               FRAME_TIERED="0", PYTHONPATH=ROOT)
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, str(script)], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["translations"] == 1 and first["extra"]["capture_persistent_writes"] == 1
    assert second["translations"] == 0 and second["compiles"] == {}
    assert second["extra"]["capture_persistent_hits"] == 1
    assert second["w"] == first["w"] and second["loss"] == first["loss"]


def test_guard_sources_round_trip_through_json():
    """Every kind of source a scalar's value guard may read comes back equal
    (same expression, same key in ``CodeCache.dynamic``)."""
    import json

    from capture import sources as S
    from capture.guards import Guard, GuardKind
    group = S.ItemSource(S.ItemSource(S.AttrSource(S.ClosureSource(2, "opt"), "param_groups"), 0), "lr")
    roots = (S.LocalSource("x", "the x"), S.GlobalSource("SCALE", S.FRAME_GLOBALS),
             S.DefaultSource(1), S.DefaultSource("k", kw=True), group,
             S.ItemSource(S.LocalSource("d"), ("a", 1)))
    expr = S.ExprSource("({} * {})", (roots[0], S.ExprSource("math.cos({})", (group,))))
    guard = Guard(f"{expr.expr()} == 1.0", "shown", GuardKind.SCALAR_VALUE, (expr, *roots))
    back = persist._decode_guard(json.loads(json.dumps(persist._encode_guard(guard))))
    assert back.kind is GuardKind.SCALAR_VALUE and back.expr == guard.expr
    assert back.sources == guard.sources
    assert [s.expr() for s in back.sources] == [s.expr() for s in guard.sources]
    assert [s.text() for s in back.sources] == [s.text() for s in guard.sources]
    assert back.sources[0].depth == expr.depth and back.sources[0].size == expr.size
