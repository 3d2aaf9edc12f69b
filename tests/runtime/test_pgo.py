"""Profile-guided tier choice (frame/runtime/tiered.py, PGO): the tiers of a
graph whose backend the user did not name are measured on interleaved real
calls and the faster is kept, with hysteresis; the decision is stored in the
persistent cache and read by the next process; a backend the user named is a
strict pin; the throttles (cooldown_s, backpressure) and counters.

The tiers are test backends whose executables advance a fake clock by a cost
the test sets (tests/runtime/pgo_backends.py): no test depends on how long
anything takes on this machine."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import frame
from frame.ops.interpreter import evaluate
from frame.runtime import compile as rc
from frame.runtime import tiered
from frame.runtime.stats import reset_stats, stats
from tests.runtime import pgo_backends as pb
from tests.runtime.test_tiered import graph, inputs

ROOT = str(pathlib.Path(__file__).resolve().parents[2])
# timed calls per tier: two blocks of tiered.PGO_BLOCK (5) calls, the first PGO_UNTIMED (2) of
# each not timed, after an untimed warm-up block
TIMED = tiered.PGO_BLOCK - tiered.PGO_UNTIMED
TRIALS = 2 * TIMED


@pytest.fixture
def pgo(tmp_path):
    """The costed tiers installed, tiering and PGO on, the persistent cache in
    ``tmp_path`` (off unless a test turns it on)."""
    pb.install()
    pb.FAST.reset()
    pb.SLOW.reset()
    rc.clear_cache()
    reset_stats()
    saved_clock = tiered.clock
    with frame.config.override(tiered=True, pgo=True, cache=False, cache_dir=str(tmp_path),
                               hot_threshold=1, tier_quiet_s=0.0, max_pending=4,
                               pgo_trial_calls=TRIALS, pgo_margin=0.05, cooldown_s=0.0):
        pb.install()
        yield tmp_path
        pb.FAST.gate.set()
        pb.SLOW.gate.set()
        assert tiered.scheduler.idle(30), "background compiles did not finish"
    tiered.clock = saved_clock
    tiered.set_fast_tier("pgoslow", None)
    rc.clear_cache()



def run_until_decided(exe, g, calls=40):
    """Call ``exe`` until PGO decided, checking every result against the reference."""
    for i in range(calls):
        ins = inputs(seed=i)
        for got, want in zip(exe.run(ins), evaluate(g, ins)):
            np.testing.assert_array_equal(got, want)
        if i == 0:
            assert exe.wait(30) in (tiered.TRIAL, tiered.SLOW, tiered.PGO_FAST)
        if exe.wait_decided(0):
            return i + 1
    raise AssertionError(f"no PGO decision after {calls} calls: {exe!r}")


def test_a_slow_fast_tier_is_never_kept(pgo):
    pb.FAST.reset(2e-3)
    pb.SLOW.reset(1e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.state == tiered.SLOW and exe.tier == "slow"
    assert exe.decision["winner"] == "pgoslow" and exe.decision["source"] == "measured"
    fast_runs, slow_runs = pb.FAST.runs(), pb.SLOW.runs()
    for i in range(5):  # after the decision every call runs on the winner, untimed
        exe.run(inputs(seed=i))
    assert (pb.FAST.runs(), pb.SLOW.runs()) == (fast_runs, slow_runs + 5)
    s = stats()
    assert s.extra["pgo_trials"] == 2 * TRIALS
    assert s.extra["pgo_decisions"] == 1 and s.extra.get("pgo_switches", 0) == 0
    assert s.extra.get("tier_swaps", 0) == 0
    (label, text), = s.tier_decisions.items()
    assert "node graph" in label and text.startswith("pgoslow (PGO measured")


def test_a_clearly_faster_fast_tier_is_kept_and_the_slow_one_dropped(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.state == tiered.PGO_FAST and exe.tier == "fast" and exe.slow is None
    assert exe.decision["winner"] == "pgofast"
    assert exe.decision["medians_s"] == pytest.approx({"pgofast": 1e-3, "pgoslow": 3e-3})
    slow_runs = pb.SLOW.runs()
    for i in range(5):
        exe.run(inputs(seed=i))
    assert pb.SLOW.runs() == slow_runs
    s = stats()
    assert s.extra["pgo_switches"] == 1 and s.extra["pgo_decisions"] == 1
    assert "kept over pgoslow" in exe.describe()


def test_trials_interleave_the_tiers(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(1e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    exe.run(inputs())                      # the fast tier; requests the slow compile
    assert exe.wait(30) == tiered.TRIAL
    block, blocks = tiered.PGO_BLOCK, 1 + TRIALS // TIMED
    order = []
    for i in range(2 * block * blocks):  # a warm-up block per tier, then two timed blocks each
        before = (pb.FAST.runs(), pb.SLOW.runs())
        exe.run(inputs(seed=i))
        order.append("fast" if pb.FAST.runs() > before[0] else "slow")
    assert order == (["fast"] * block + ["slow"] * block) * blocks
    assert exe.wait_decided(0)
    assert stats().extra["pgo_trials"] == 2 * TRIALS  # TIMED of the calls of each timed block


@pytest.mark.parametrize("fast_cost, kept", [(0.97e-3, "pgoslow"),   # 3% faster: not enough
                                             (0.90e-3, "pgofast")])  # 10% faster: kept
def test_hysteresis(pgo, fast_cost, kept):
    pb.FAST.reset(fast_cost)
    pb.SLOW.reset(1e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.decision["winner"] == kept


def test_warm_up_and_outliers_do_not_decide(pgo):
    """The slow tier's first call is a cheap outlier (the first of its block, not
    timed) and the fast tier has one expensive outlier among its timed calls: the
    medians still see the fast tier twice as fast."""
    pb.FAST.reset(1e-3, 1e-3, 50e-3, 1e-3)   # the 3rd call (the first timed one) spikes
    pb.SLOW.reset(1e-6, 2e-3)                # a fake slow tier that looks fast once
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.decision["winner"] == "pgofast"


def test_a_noisy_trial_is_extended_until_the_medians_are_clear(pgo):
    """The fast tier's first timed calls are slowed and sped up in turn (another
    process's bursts), so its median sits on the decision line: the trial goes
    on, and the calls after the burst decide for the fast tier, clearly, and the
    decision is stored."""
    trial = []   # the fast tier's call numbers since the slow tier compiled: the trial's

    def burst(n):
        if not pb.SLOW.executables:  # before the trial (how many such calls is up to timing)
            return 0.7e-3
        trial.append(n)
        k = n - trial[0]  # the untimed warm-up block, then the first two timed blocks
        return (0.5e-3, 1.5e-3)[k % 2] if k < 3 * tiered.PGO_BLOCK else 0.7e-3

    pb.FAST.reset(burst)
    pb.SLOW.reset(1e-3)
    g = graph(0.75)
    with frame.config.override(cache=True):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g, calls=80)
        stored = tiered._stored_decision(exe._key, ("pgofast", "pgoslow"))
    assert exe.decision["winner"] == "pgofast" and not exe.decision.get("noisy")
    s = stats()
    assert 2 * TRIALS < s.extra["pgo_trials"] <= 2 * TRIALS * tiered.PGO_MAX_EXTENSION
    assert s.extra.get("pgo_noisy", 0) == 0
    assert stored["winner"] == "pgofast"


def test_a_trial_that_stays_noisy_is_decided_for_this_process_only(pgo):
    """A fast tier whose calls stay spread across the decision line: after the
    extended trial the medians decide with the hysteresis (the slow tier, the
    backend asked for, is kept), the decision is marked noisy and counted, and
    not stored: the next process measures again."""
    # every timed block (3 consecutive calls) holds one of each: the median sits on 1 ms
    pb.FAST.reset(lambda n: (0.6e-3, 1.0e-3, 1.4e-3)[n % 3])
    pb.SLOW.reset(1e-3)
    g = graph(0.125)
    with frame.config.override(cache=True):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g, calls=80)
        assert exe.decision["winner"] == "pgoslow" and exe.decision["noisy"]
        s = stats()
        assert s.extra["pgo_trials"] == 2 * TRIALS * tiered.PGO_MAX_EXTENSION
        assert s.extra["pgo_noisy"] == 1
        assert "noisy trial, not stored" in exe.describe()
        assert tiered._stored_decision(exe._key, ("pgofast", "pgoslow")) is None
        rc.clear_cache()
        reset_stats()
        again = rc.compile(g, "pgoslow", pgo=True)   # as in a new process: no stored decision
        assert again is not exe and again.decision is None
        run_until_decided(again, g, calls=80)
    assert stats().extra.get("pgo_stored", 0) == 0 and stats().extra["pgo_decisions"] == 1


def test_without_extension_a_noisy_trial_decides_at_once_and_is_stored(pgo, monkeypatch):
    monkeypatch.setattr(tiered, "PGO_MAX_EXTENSION", 1)
    pb.FAST.reset(lambda n: (0.6e-3, 1.4e-3)[n % 2])
    pb.SLOW.reset(1e-3)
    g = graph(0.375)
    with frame.config.override(cache=True):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g)
        assert tiered._stored_decision(exe._key, ("pgofast", "pgoslow")) is not None
    assert stats().extra["pgo_trials"] == 2 * TRIALS and not exe.decision.get("noisy")


def test_a_pinned_backend_is_never_switched_away_from(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(10e-3)                     # ten times slower, but asked for
    g = graph()
    exe = rc.compile(g, "pgoslow")           # pgo=False: the user named the backend
    exe.run(inputs())
    assert exe.wait(30) == tiered.SLOW
    for i in range(20):
        exe.run(inputs(seed=i))
    assert exe.state == tiered.SLOW and exe.decision is None
    s = stats()
    assert s.extra.get("pgo_trials", 0) == 0 and s.extra["tier_swaps"] == 1
    assert "pinned" in exe.describe()


def test_pgo_off_swaps_by_count(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(10e-3)
    with frame.config.override(pgo=False):
        exe = rc.compile(graph(), "pgoslow", pgo=True)
    exe.run(inputs())
    assert exe.wait(30) == tiered.SLOW and not exe.pgo
    assert stats().extra.get("pgo_trials", 0) == 0


def test_pinned_and_unpinned_graphs_are_separate_executables(pgo):
    pinned = rc.compile(graph(), "pgoslow")
    free = rc.compile(graph(), "pgoslow", pgo=True)
    assert pinned is not free and not pinned.pgo and free.pgo
    assert rc.compile(graph(), "pgoslow", pgo=True) is free


def test_trial_calls_are_not_timed_while_a_compile_runs(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    exe.run(inputs())
    assert exe.wait(30) == tiered.TRIAL
    pb.SLOW.gate.clear()                     # another graph's slow compile now blocks
    pb.SLOW.entered.clear()
    other = rc.compile(graph(2.0), "pgoslow", pgo=True)
    other.run(inputs())
    assert pb.SLOW.entered.wait(30) and tiered.scheduler.compiling_other_than(exe)
    slow_runs = pb.SLOW.runs()
    for i in range(4):
        for got, want in zip(exe.run(inputs(seed=i)), evaluate(g, inputs(seed=i))):
            np.testing.assert_array_equal(got, want)
    s = stats()
    assert s.extra["backpressure_hits"] == 4 and s.extra.get("pgo_trials", 0) == 0
    assert pb.SLOW.runs() == slow_runs + 4 and exe.state == tiered.TRIAL
    pb.SLOW.gate.set()
    assert tiered.scheduler.idle(30)
    run_until_decided(exe, g)
    assert exe.decision["winner"] == "pgofast"


def test_cooldown_after_a_refused_request(pgo):
    pb.SLOW.gate.clear()
    with frame.config.override(max_pending=1, cooldown_s=3600.0):
        first = rc.compile(graph(1.0), "pgoslow", pgo=True)
        second = rc.compile(graph(2.0), "pgoslow", pgo=True)
        first.run(inputs())
        second.run(inputs())                 # refused: one compile pending
        second.run(inputs())                 # within cooldown_s: the scheduler is not asked
        second.run(inputs())
        s = stats()
        assert s.extra["tier_backpressure"] == 1 and s.extra["cooldown_hits"] == 2
        assert second.state == tiered.FAST
        pb.SLOW.gate.set()
        assert tiered.scheduler.idle(30)
        second._retry_at = 0.0               # the cooldown is over
        second.run(inputs())
        assert second.state == tiered.PENDING or second.wait(30) == tiered.TRIAL
    assert stats().extra["tier_requests"] == 2


def test_the_decision_is_stored_and_read_by_the_next_process(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph(0.5)
    with frame.config.override(cache=True):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g)
    assert exe.decision["winner"] == "pgofast"
    assert stats().extra.get("persistent_writes", 0) >= 1
    child = f"""
import json, numpy as np, frame
from frame.runtime import compile as rc, tiered
from frame.runtime.stats import stats
from tests.runtime import pgo_backends as pb
from tests.runtime.test_tiered import graph, inputs
pb.install()
pb.FAST.reset(5e-3); pb.SLOW.reset(1e-3)   # would win now: 10 calls are too few for the drift watch
frame.config.hot_threshold = 1
exe = rc.compile(graph(0.5), "pgoslow", pgo=True)
outs = [exe.run(inputs(seed=i)) for i in range(10)]
tiered.scheduler.idle(30)
print(json.dumps({{"state": exe.state, "decision": exe.decision, "slow_compiles": pb.SLOW.compiles,
                  "trials": stats().extra.get("pgo_trials", 0),
                  "stored": stats().extra.get("pgo_stored", 0),
                  "describe": exe.describe()}}))
"""
    env = dict(os.environ, PYTHONPATH=ROOT, FRAME_CACHE="1", FRAME_TIERED="1", FRAME_PGO="1",
               FRAME_CACHE_DIR=str(pgo))
    proc = subprocess.run([sys.executable, "-c", child], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["state"] == tiered.PGO_FAST and got["decision"]["winner"] == "pgofast"
    assert got["decision"]["source"] == "stored"
    assert got["slow_compiles"] == 0 and got["trials"] == 0 and got["stored"] == 1
    assert "stored decision" in got["describe"]


def test_a_stored_slow_winner_swaps_without_trials(pgo):
    pb.FAST.reset(3e-3)
    pb.SLOW.reset(1e-3)
    g = graph(0.25)
    with frame.config.override(cache=True):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g)
        assert exe.decision["winner"] == "pgoslow"
        rc.clear_cache()
        reset_stats()
        again = rc.compile(g, "pgoslow", pgo=True)
        assert again is not exe and again.decision["source"] == "stored"
        again.run(inputs())
        assert again.wait(30) == tiered.SLOW
    s = stats()
    assert s.extra.get("pgo_trials", 0) == 0 and s.extra["pgo_stored"] == 1


def test_results_stay_equal_to_eager_through_the_trials_on_the_real_tiers(monkeypatch):
    """Differential, with the real tiers (cpu codegen, OpenVINO) and the jit's
    default backend: every call through the trial phase matches eager."""
    monkeypatch.setattr(tiered, "PGO_MAX_EXTENSION", 1)  # real timings: no noise extension
    rc.clear_cache()
    reset_stats()

    def f(x, y):
        return frame.tanh(x * 1.5 + y) * y - x

    rng = np.random.default_rng(3)
    args = [(frame.tensor(rng.standard_normal((32, 16)).astype(np.float32)),
             frame.tensor(rng.standard_normal((32, 16)).astype(np.float32))) for _ in range(4)]
    env_backend = os.environ.pop("FRAME_BACKEND", None)
    try:
        # backend=None: the jit's default (FRAME_TEST_SETTING=cpu pins frame.config.backend)
        with frame.config.override(tiered=True, pgo=True, cache=False, hot_threshold=1,
                                   tier_quiet_s=0.0, pgo_trial_calls=TIMED, backend=None):
            jitted = frame.jit(f)
            jitted(*args[0])
            assert tiered.scheduler.idle(120)
            for i in range(4 * tiered.PGO_BLOCK + 4):   # warm-up blocks, one timed block each
                x, y = args[i % len(args)]
                np.testing.assert_allclose(jitted(x, y).numpy(), f(x, y).numpy(),
                                           rtol=2e-6, atol=1e-6)
            out = frame.explain(jitted)(*args[0])
    finally:
        if env_backend is not None:
            os.environ["FRAME_BACKEND"] = env_backend
    s = stats()
    assert s.extra["pgo_decisions"] == 1 and s.extra["pgo_trials"] == 2 * TIMED
    (text,) = s.tier_decisions.values()
    assert "PGO measured" in text
    assert out.tier_decisions == [text] and out.pgo_counters["pgo_decisions"] == 1
    assert "Tiers:" in str(out) and "PGO counters" in str(out)
    rc.clear_cache()


def test_an_explicit_backend_is_a_pin_in_the_jit(pgo):
    calls = []
    real = rc.compile

    def spy(graph, backend="cpu", options=None, *, pgo=False, origin=None):
        calls.append((backend, pgo))
        return real(graph, backend, options, pgo=pgo, origin=origin)

    def f(x):
        return frame.exp(x) + 1.0

    x = frame.tensor(np.ones((3, 3), np.float32))
    env_backend = os.environ.pop("FRAME_BACKEND", None)
    try:
        rc_compile, rc.compile = rc.compile, spy
        frame.jit(f, backend="cpu")(x)
        frame.jit(f)(x)
    finally:
        rc.compile = rc_compile
        if env_backend is not None:
            os.environ["FRAME_BACKEND"] = env_backend
    assert calls[0] == ("cpu", False) and calls[1][1] is True


def test_the_report_shows_decisions_and_counters(pgo):
    import io
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    buf = io.StringIO()
    frame.report(buf)
    text = buf.getvalue()
    assert "tier choice (PGO)" in text and "pgo_trials" in text and "pgo_switches" in text
    assert "kept over pgoslow" in text


def test_threads_calling_through_the_trials_get_right_results(pgo):
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    exe.run(inputs())
    assert exe.wait(30) == tiered.TRIAL
    errors = []

    def worker(seed):
        try:
            for i in range(25):
                ins = inputs(seed=seed * 100 + i)
                for got, want in zip(exe.run(ins), evaluate(g, ins)):
                    np.testing.assert_array_equal(got, want)
        except BaseException as err:  # noqa: BLE001 -- reported below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert exe.wait_decided(0) and exe.state in (tiered.PGO_FAST, tiered.SLOW)
    assert stats().extra["pgo_decisions"] == 1


_JIT_SCRIPT = r"""
import json, numpy as np, frame
from frame.runtime import tiered
tiered.PGO_MAX_EXTENSION = 1  # real timings: a noisy trial (loaded machine) would not be stored

def f(x, y):
    return frame.tanh(x * 1.5 + y) * y - x

rng = np.random.default_rng(0)
x, y = (frame.tensor(rng.standard_normal((64, 64)).astype(np.float32)) for _ in range(2))
want = f(x, y).numpy()
jitted = frame.jit(f)
for i in range(40):
    np.testing.assert_allclose(jitted(x, y).numpy(), want, rtol=2e-6, atol=1e-6)
    tiered.scheduler.idle(60)
    extra = frame.stats().extra
    if extra.get("pgo_decisions") or extra.get("pgo_stored"):
        break
s = frame.stats()
print(json.dumps({"extra": {k: v for k, v in s.extra.items() if k.startswith("pgo")},
                  "decisions": [d.split(" ")[0] for d in s.tier_decisions.values()]}))
"""


def test_the_jit_default_decision_survives_a_process_restart(tmp_path):
    """End to end with the real tiers: the first process measures (whichever tier
    wins on this machine), the second starts on the stored winner, no trials."""
    env = dict(os.environ, PYTHONPATH=ROOT, FRAME_CACHE="1", FRAME_TIERED="1", FRAME_PGO="1",
               FRAME_PGO_TRIAL_CALLS=str(TIMED), FRAME_HOT_THRESHOLD="1", FRAME_TIER_QUIET_S="0",
               FRAME_CACHE_DIR=str(tmp_path))
    env.pop("FRAME_BACKEND", None)
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", _JIT_SCRIPT], cwd=str(tmp_path), env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert first["extra"]["pgo_decisions"] == 1 and first["extra"]["pgo_trials"] == 2 * TIMED
    assert first["decisions"][0] in ("cpu", "openvino")
    assert second["extra"].get("pgo_trials", 0) == 0 and second["extra"]["pgo_stored"] == 1
    assert second["decisions"] == first["decisions"]


def test_a_new_executables_first_calls_are_not_measured(pgo):
    """A tier whose first block of calls is slow (a new executable setting itself
    up: OpenVINO's buffers and primitives) is judged on its calls after that."""
    pb.FAST.reset(1.5e-3)
    pb.SLOW.reset(5e-3, 5e-3, 5e-3, 1e-3)  # the 4th call on and every later one: 1 ms
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.decision["winner"] == "pgoslow"
    assert exe.decision["medians_s"]["pgoslow"] == pytest.approx(1e-3)
    # decided on the first timed calls, clear: the slow start was never a sample
    assert not exe.decision.get("noisy") and stats().extra["pgo_trials"] == 2 * TRIALS
