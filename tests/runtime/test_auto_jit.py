"""Automatic jit of hot eager code (capture/autojit.py, issue 18): hot module
calls and hot user functions compile themselves in the background and switch
over; results and side effects stay the eager ones."""
from __future__ import annotations

import inspect
import logging
import threading

import numpy as np
import pytest

import frame
import frame.nn.functional as F
from frame import nn
from frame.functions import _core
from frame.nn import module as nn_module
from tests.conftest import SETTING

import capture.autojit as autojit

THRESHOLD = 5


@pytest.fixture
def auto():
    """auto-jit on (threshold 5), fresh units; off and forgotten afterwards."""
    autojit.reset()
    frame.reset_stats()
    with frame.config.override(auto_jit=True, auto_jit_threshold=THRESHOLD,
                               auto_jit_cooldown_s=30.0):
        yield autojit
        assert autojit.wait_idle(60)
    autojit.reset()


def _unit(label_part: str):
    found = [u for u in autojit.units() if label_part in u.label]
    assert len(found) == 1, autojit.units()
    return found[0]


def _counter(name: str) -> int:
    return frame.stats().extra.get(name, 0)


def _t(*shape, seed=0):
    return frame.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _close(a, b):
    if SETTING == "cpu":
        np.testing.assert_array_equal(a, b)
    else:  # OpenVINO computes in float32 with its own kernels
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _compiled(unit, call, timeout=60.0):
    """Call until the unit's background compile is installed (calls keep running eagerly)."""
    for _ in range(200):
        if unit.state == autojit.COMPILED:
            return
        call()
        autojit.wait_idle(timeout)
    raise AssertionError(f"{unit} never compiled")


def test_switch_off_compiles_nothing_and_installs_no_hook():
    autojit.reset()
    frame.reset_stats()
    assert not frame.config.auto_jit
    assert _core.eager_op_hook is None and nn_module.call_hook is None

    def step(x):
        return (x * 2.0 + 1.0).sum()
    code = step.__code__
    lin = nn.Linear(4, 3)
    for _ in range(3 * THRESHOLD):
        step(_t(4))
        with frame.no_grad():
            lin(_t(2, 4))
    assert step.__code__ is code
    assert autojit.units() == []
    s = frame.stats()
    assert s.translations == 0 and s.compiles == 0 and s.auto_jit == {}


def test_threshold_honoured_for_a_function(auto):
    def step(x):
        return (x * 2.0 + 1.0).sum()
    code = step.__code__
    x = _t(8)
    for _ in range(THRESHOLD):  # 5 calls with the same op sequence: hot at the 6th's first op
        step(x)
    assert step.__code__ is code and autojit.units() == []
    step(x)  # hot: its calls are routed from now on, nothing requested yet
    assert step.__code__ is not code and _counter("auto_jit_requests") == 0
    for _ in range(autojit._PROBE_CALLS - 1):  # routed calls timed eagerly (the baseline)
        step(x)
    assert frame.stats().translations == 0 and _counter("auto_jit_requests") == 0
    step(x)  # runs eagerly, then its arguments go to the background capture
    assert _counter("auto_jit_requests") == 1
    unit = _unit("step")
    _compiled(unit, lambda: step(x))
    before = unit.hits
    assert float(step(x)) == pytest.approx(float((x.numpy() * 2 + 1).sum()), rel=1e-6)
    assert unit.hits == before + 1


def test_threshold_honoured_for_a_module(auto):
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2))
    x = _t(3, 6)
    with frame.no_grad():
        for _ in range(THRESHOLD - 1):
            model(x)
        assert _counter("auto_jit_requests") == 0
        model(x)  # the threshold-th call submits the compile (of the outermost module only)
        assert _counter("auto_jit_requests") == 1
        unit = _unit("Sequential")
        _compiled(unit, lambda: model(x))
        with frame.config.override(auto_jit=False):
            expected = model(x).numpy()
        _close(model(x).numpy(), expected)
    assert unit.hits >= 1
    assert [u.kind for u in autojit.units()] == ["module"]


def test_training_forward_compiles_and_its_gradients_stay_correct(auto):
    # a forward whose result requires grad compiles: its result carries the compiled
    # autograd record (docs/compiler.md "Compiled autograd across the jit boundary")
    lin = nn.Linear(4, 2)
    x = _t(3, 4)
    for _ in range(THRESHOLD + 2):
        out = lin(x)
    autojit.wait_idle(60)
    unit = _unit("Linear")
    assert unit.state == autojit.COMPILED, unit.reason
    hits = unit.hits
    out = lin(x)
    assert unit.hits == hits + 1   # this call ran the compiled entry
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)),
                               rtol=1e-6)
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(2, 3.0, np.float32), rtol=1e-6)


class _Gate:
    """A slow compile: the background capture waits until released."""

    def __init__(self, real):
        self.real, self.release, self.entered = real, threading.Event(), threading.Event()

    def __call__(self, *args, **kwargs):
        self.entered.set()
        assert self.release.wait(60), "the test never released the compile"
        return self.real(*args, **kwargs)


def test_background_compile_never_blocks_the_caller(auto, monkeypatch):
    gate = _Gate(autojit.translate)
    monkeypatch.setattr(autojit, "translate", gate)

    def step(x):
        return (x * 3.0 - 1.0).sum()
    x = _t(16)
    expected = float((x.numpy() * 3 - 1).sum())
    for _ in range(THRESHOLD + 1 + autojit._PROBE_CALLS):
        step(x)
    assert gate.entered.wait(30)  # the compile is running and stuck
    for _ in range(20):  # the caller keeps going, eagerly
        assert float(step(x)) == pytest.approx(expected, rel=1e-6)
    unit = _unit("step")
    assert unit.state == autojit.PENDING and unit.hits == 0
    gate.release.set()
    _compiled(unit, lambda: step(x))
    assert float(step(x)) == pytest.approx(expected, rel=1e-6)
    assert unit.hits >= 1


def test_swap_is_atomic_under_eight_threads(auto, monkeypatch):
    gate = _Gate(autojit.translate)
    monkeypatch.setattr(autojit, "translate", gate)

    def step(x, y):
        return (x * y + x).sum(axis=0)
    xs = [(_t(5, 3, seed=i), _t(5, 3, seed=100 + i)) for i in range(8)]
    expected = [(a.numpy() * b.numpy() + a.numpy()).sum(axis=0) for a, b in xs]
    for _ in range(THRESHOLD + 1 + autojit._PROBE_CALLS):
        step(*xs[0])
    assert gate.entered.wait(30)
    errors, start = [], threading.Barrier(8)

    def worker(i):
        try:
            start.wait()
            for k in range(5000):  # until the swap happened (and at least 60 calls)
                _close(step(*xs[i]).numpy(), expected[i])
                if k >= 60 and (unit.hits or unit.state not in (autojit.PENDING, autojit.COMPILED)):
                    break
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
    unit = _unit("step")
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    gate.release.set()  # the swap happens while the 8 threads call
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    assert unit.hits >= 1, unit.summary()  # calls ran on the entry after the swap


def test_guard_failure_runs_eagerly_then_new_case_compiles(auto):
    def step(x):
        return (x * x).sum(axis=-1)
    x4 = _t(4, 4)
    for _ in range(THRESHOLD + 2):
        step(x4)
    unit = _unit("step")
    _compiled(unit, lambda: step(x4))
    translations = frame.stats().translations
    x3 = _t(3, 5, seed=1)
    for i in range(THRESHOLD - 1):  # another shape: guards fail, eager, silently
        _close(step(x3).numpy(), (x3.numpy() ** 2).sum(-1))
    assert unit.misses == THRESHOLD - 1
    assert frame.stats().translations == translations  # nothing captured on the caller's thread
    step(x3)  # the threshold-th miss in a row: the new case is captured in the background
    autojit.wait_idle(60)
    hits = unit.hits
    _close(step(x3).numpy(), (x3.numpy() ** 2).sum(-1))
    _close(step(x4).numpy(), (x4.numpy() ** 2).sum(-1))
    assert unit.hits == hits + 2


def test_compile_failure_warns_once_and_cools_down(auto, monkeypatch, caplog):
    calls = []
    real = autojit.translate

    def broken(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("backend exploded")
    monkeypatch.setattr(autojit, "translate", broken)

    def step(x):
        return (x - 0.5).abs().sum()
    x = _t(7)
    expected = float(np.abs(x.numpy() - 0.5).sum())
    with caplog.at_level(logging.WARNING, logger="frame.hotpath"):
        for _ in range(THRESHOLD + 2):
            step(x)
        autojit.wait_idle(60)
        for _ in range(3 * THRESHOLD):  # cooling down: eager, no new request
            assert float(step(x)) == pytest.approx(expected, rel=1e-6)
        autojit.wait_idle(60)
    warnings = [r for r in caplog.records if r.name == "frame.hotpath" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "backend exploded" in warnings[0].getMessage()
    assert len(calls) == 1 and _counter("auto_jit_failures") == 1
    unit = _unit("step")
    assert unit.state == autojit.COOLDOWN
    monkeypatch.setattr(autojit, "translate", real)
    with frame.config.override(auto_jit_cooldown_s=0.0):
        unit.retry_at = 0.0
        _compiled(unit, lambda: step(x))  # tried again after the cooldown
    assert float(step(x)) == pytest.approx(expected, rel=1e-5)


def test_train_step_matches_eager_with_side_effects(auto):
    def run(seed, steps):
        frame.manual_seed(seed)
        model = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4))
        opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def train_step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        rng = np.random.default_rng(seed)
        losses = []
        for _ in range(steps):
            xb = frame.from_numpy(rng.standard_normal((8, 12)).astype(np.float32))
            yb = frame.from_numpy(rng.integers(0, 4, 8))
            loss = train_step(xb, yb)
            losses.append(float(loss.item()))
            autojit.wait_idle(60)  # deterministic: the compile lands between two steps
        # side effects: parameters and momentum buffers updated in place, .grad written
        return ([p.numpy().copy() for p in model.parameters()]
                + [p.grad.numpy().copy() for p in model.parameters()], losses, train_step)

    steps = 3 * THRESHOLD
    with frame.config.override(auto_jit=False):
        eager_params, eager_losses, _ = run(0, steps)
    params, losses, step = run(0, steps)
    unit = _unit("train_step")
    # the first step also creates the momentum buffers (another op sequence): steps 2-6 make
    # it hot, the 7th is routed, the next _PROBE_CALLS run eagerly (the last one's arguments
    # are captured in the background), every later one is compiled
    assert unit.state == autojit.COMPILED
    assert unit.hits == steps - THRESHOLD - 2 - autojit._PROBE_CALLS
    for a, b in zip(params, eager_params):
        _close(a, b)  # bit for bit on the cpu backend
    _close(np.array(losses), np.array(eager_losses))
    rows = frame.stats().auto_jit
    assert rows[unit.label]["hits"] == unit.hits and rows[unit.label]["compile_s"] > 0


def test_trampoline_keeps_the_function(auto):
    scale = 3.0

    def helper(x, k=2.0, *, bias=1.0):
        """doc"""
        return (x * k * scale + bias).sum()
    helper.extra = "kept"
    code, sig = helper.__code__, inspect.signature(helper)
    me = helper
    x = _t(5)
    for _ in range(THRESHOLD + 2):
        helper(x)
    assert helper.__code__ is not code and helper is me
    assert inspect.signature(helper) == sig and helper.__doc__ == "doc"
    assert helper.extra == "kept" and helper.__name__ == "helper"
    assert inspect.getsourcelines(helper)[1] == code.co_firstlineno
    assert not hasattr(helper, "__wrapped__")
    unit = _unit("helper")
    _compiled(unit, lambda: helper(x))
    expected = lambda k, b: float((x.numpy() * k * scale + b).sum())  # noqa: E731
    assert float(helper(x)) == pytest.approx(expected(2.0, 1.0), rel=1e-5)
    assert float(helper(x, 4.0, bias=-1.0)) == pytest.approx(expected(4.0, -1.0), rel=1e-5)
    helper.__defaults__ = (5.0,)  # defaults reassigned: followed
    assert float(helper(x)) == pytest.approx(expected(5.0, 1.0), rel=1e-5)
    with pytest.raises(TypeError):
        helper()
    frame.config.auto_jit = False  # switched off: the function's own code comes back
    try:
        assert helper.__code__ is code
    finally:
        frame.config.auto_jit = True


def test_recursive_function(auto):
    def power_sum(x, n):
        if n == 0:
            return x.sum()
        return power_sum(x * 1.5, n - 1)
    x = _t(4)
    expected = float((x.numpy() * 1.5 ** 3).sum())
    for _ in range(3 * THRESHOLD):
        assert float(power_sum(x, 3)) == pytest.approx(expected, rel=1e-5)
        autojit.wait_idle(60)
    assert float(power_sum(x, 3)) == pytest.approx(expected, rel=1e-5)


def test_report_lists_units(auto):
    def step(x):
        return (x + 1.0).max()
    x = _t(6)
    for _ in range(THRESHOLD + 2):
        step(x)
    unit = _unit("step")
    _compiled(unit, lambda: step(x))
    for _ in range(3):
        step(x)
    import io
    import os
    from unittest import mock
    row = frame.stats().auto_jit[unit.label]
    assert row["kind"] == "function" and row["state"] == "compiled" and row["hits"] == unit.hits
    assert row["compile_s"] > 0 and row["eager_ms"] > 0 and row["compiled_ms"] > 0
    out = io.StringIO()
    with mock.patch.dict(os.environ):  # a file's 120 columns, not a test runner's $COLUMNS
        os.environ.pop("COLUMNS", None)
        frame.report(out)
    text = out.getvalue()
    assert "auto-jit units" in text and "compiled" in text


def test_jit_traces_through_routed_functions_and_the_module_hook(auto):
    """Capture inlines a routed function's own code (not its trampoline) and traces
    ``Module.__call__``'s auto-jit hook as the plain call: one graph, no break."""
    lin = nn.Linear(4, 3)

    def helper(x):
        return (x * 2.0 + 1.0).relu()
    x = _t(2, 4)
    for _ in range(THRESHOLD + 1):
        helper(x)
    assert trampolines_installed(helper)

    def outer(x):
        with frame.no_grad():
            return lin(helper(x)).sum()
    expected = float(((np.maximum(x.numpy() * 2 + 1, 0)) @ lin.weight.numpy().T
                      + lin.bias.numpy()).sum())
    out = frame.explain(outer)(x)
    assert out.graph_count == 1 and not out.break_reasons, out
    assert float(frame.jit(outer)(x)) == pytest.approx(expected, rel=1e-5)


def trampolines_installed(fn) -> bool:
    from capture import trampolines
    return trampolines.is_trampoline(fn.__code__)


def test_known_case_stays_compiled_while_a_new_case_compiles(auto, monkeypatch):
    def step(x):
        return (x * 3.0).sum(axis=0)
    x4 = _t(4, 2)
    for _ in range(THRESHOLD + 1 + autojit._PROBE_CALLS):
        step(x4)
    unit = _unit("step")
    _compiled(unit, lambda: step(x4))
    gate = _Gate(autojit.translate)
    monkeypatch.setattr(autojit, "translate", gate)
    x3 = _t(3, 5, seed=2)
    for _ in range(THRESHOLD):  # misses in a row: the new case goes to the background
        _close(step(x3).numpy(), (x3.numpy() * 3).sum(0))
    assert gate.entered.wait(30) and unit.pending
    hits = unit.hits
    _close(step(x4).numpy(), (x4.numpy() * 3).sum(0))
    assert unit.hits == hits + 1 and unit.state == autojit.COMPILED  # not eager meanwhile
    gate.release.set()
    assert autojit.wait_idle(60)
    _close(step(x3).numpy(), (x3.numpy() * 3).sum(0))
    assert unit.hits == hits + 2 and len(unit.cache.entries) == 2


_WARM_SCRIPT = '''
import json, sys
import numpy as np
import frame
import capture.autojit as autojit

def step(x):
    return (x * 2.0 + 1.0).sum(axis=0)

frame.config.auto_jit = True
x = frame.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
for _ in range(15):
    out = step(x)
    autojit.wait_idle(60)
s = frame.stats()
unit = [u for u in autojit.units() if "step" in u.label][0]
print(json.dumps({"translations": s.translations, "state": unit.state, "hits": unit.hits,
                  "loaded_hits": s.extra.get("capture_persistent_hits", 0),
                  "out": out.numpy().tolist()}))
'''


def test_warm_start_loads_the_stored_translation(tmp_path):
    """A unit's translation is stored like frame.jit's; the next process's
    background job loads it instead of translating (FRAME_CACHE on)."""
    import json
    import os
    import subprocess
    import sys
    script = tmp_path / "warm_auto_jit.py"
    script.write_text(_WARM_SCRIPT)
    env = {**os.environ, "FRAME_CACHE": "1", "FRAME_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("FRAME_AUTO_JIT", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                             env=env, timeout=300, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    expected = (np.arange(12, dtype=np.float32).reshape(3, 4) * 2 + 1).sum(0).tolist()
    assert cold["state"] == warm["state"] == "compiled"
    assert cold["translations"] == 1 and warm["translations"] == 0
    assert warm["hits"] >= 1 and cold["out"] == warm["out"]
    np.testing.assert_allclose(warm["out"], expected, rtol=1e-6)
