"""PGO's drift watch (frame/runtime/tiered.py, "Drift"): after a decision the
winner's calls are sampled; when their median leaves the band of
``pgo_drift`` around the winner's median in the decision (measured in this
process or read from the persistent cache), the tiers are measured again, and
the new decision replaces the old one, in the persistent cache too.

The tiers are the costed test backends on a fake clock
(tests/runtime/pgo_backends.py), as in test_pgo.py."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.ops.interpreter import evaluate
from frame.runtime import compile as rc
from frame.runtime import tiered
from frame.runtime.stats import reset_stats, stats
from tests.runtime import pgo_backends as pb
from tests.runtime.test_pgo import pgo, run_until_decided  # noqa: F401 -- the fixture
from tests.runtime.test_tiered import graph, inputs

# calls after a decision until the first drift check: the warm-up, then a window of samples
FIRST_CHECK = tiered.DRIFT_WARMUP + tiered.DRIFT_EVERY * tiered.DRIFT_WINDOW


@pytest.fixture(autouse=True)
def _watch_on(pgo):
    """The watch is off by default (docs/warm_start.md): these tests turn it on."""
    with frame.config.override(pgo_drift=1.3):
        yield


def call(exe, g, n, seed=0):
    """``n`` calls of ``exe``, every result checked against the reference."""
    for i in range(n):
        ins = inputs(seed=seed + i)
        for got, want in zip(exe.run(ins), evaluate(g, ins)):
            np.testing.assert_array_equal(got, want)


def test_a_stored_fast_decision_is_measured_again_when_its_time_drifts(pgo):
    """The cpu-like tier won under conditions that are gone: in the next
    process it runs 5x slower than its stored median, so the slow tier is
    compiled (it never was in this process), measured against it, and wins;
    the new decision replaces the stored one."""
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph(0.5)
    with frame.config.override(cache=True):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g)
        assert exe.decision["winner"] == "pgofast"
        rc.clear_cache()
        reset_stats()
        pb.FAST.reset(5e-3)
        pb.SLOW.reset(1e-3)
        again = rc.compile(g, "pgoslow", pgo=True)   # as in a new process
        assert again.state == tiered.PGO_FAST and again.decision["source"] == "stored"
        call(again, g, FIRST_CHECK - 1)
        assert again.state == tiered.PGO_FAST and pb.SLOW.compiles == 0
        call(again, g, 1)                              # the window is full: drift
        assert stats().extra["pgo_drifts"] == 1
        assert again.state in (tiered.FAST, tiered.PENDING)
        assert "built again" in again.describe()
        run_until_decided(again, g)
        assert pb.SLOW.compiles == 1
        assert again.state == tiered.SLOW and again.decision["winner"] == "pgoslow"
        assert again.decision["source"] == "measured"
        assert tiered._stored_decision(again._key, ("pgofast", "pgoslow"))["winner"] == "pgoslow"
    s = stats()
    assert s.extra["pgo_decisions"] == 1 and s.extra["pgo_stored"] == 1


def test_a_slow_winner_that_drifts_is_measured_again_without_a_new_compile(pgo):
    pb.FAST.reset(3e-3)
    pb.SLOW.reset(1e-3)
    g = graph(0.25)
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.state == tiered.SLOW
    pb.SLOW.costs = [6e-3]   # the slow tier's conditions changed (its threads lost a core)
    call(exe, g, FIRST_CHECK)
    assert exe.state == tiered.TRIAL and stats().extra["pgo_drifts"] == 1
    assert "measuring again after drift" in exe.describe()
    run_until_decided(exe, g)
    assert exe.state == tiered.PGO_FAST and exe.decision["winner"] == "pgofast"
    assert pb.SLOW.compiles == 1
    assert stats().extra["pgo_decisions"] == 2


@pytest.mark.parametrize("factor", [1.2, 1 / 1.2])
def test_a_time_within_the_band_is_not_drift(pgo, factor):
    pb.FAST.reset(3e-3)
    pb.SLOW.reset(1e-3)
    g = graph(0.375)
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    pb.SLOW.costs = [1e-3 * factor]
    call(exe, g, 3 * FIRST_CHECK)
    assert exe.state == tiered.SLOW and stats().extra.get("pgo_drifts", 0) == 0


def test_a_faster_winner_is_drift_too(pgo):
    """Conditions that got better count: under load the cpu-like tier won, and
    now the winner runs twice as fast as in the trial."""
    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph(0.625)
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    pb.FAST.costs = [0.4e-3]
    pb.SLOW.costs = [0.2e-3]
    call(exe, g, FIRST_CHECK)
    assert stats().extra["pgo_drifts"] == 1
    run_until_decided(exe, g)
    assert exe.decision["winner"] == "pgoslow"


def test_measuring_again_is_bounded_per_graph(pgo):
    """Load that keeps changing: every decision drifts, yet the graph is
    measured again at most PGO_MAX_REMEASURES times, then left alone."""
    pb.FAST.reset(3e-3)
    pb.SLOW.reset(1e-3)
    g = graph(0.875)
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    for k in range(tiered.PGO_MAX_REMEASURES + 2):
        cost = exe.decision["medians_s"][exe.decision["winner"]]
        winner = pb.SLOW if exe.decision["winner"] == "pgoslow" else pb.FAST
        winner.costs = [cost * 3]
        call(exe, g, FIRST_CHECK, seed=100 * k)
        if exe.state not in (tiered.SLOW, tiered.PGO_FAST):
            run_until_decided(exe, g, calls=60)
    assert stats().extra["pgo_drifts"] == tiered.PGO_MAX_REMEASURES
    assert stats().extra["pgo_decisions"] == 1 + tiered.PGO_MAX_REMEASURES


def test_tiny_graphs_are_not_watched(pgo):
    """A winner under DRIFT_MIN_S runs without the watch (its cost would show)."""
    pb.FAST.reset(10e-6)
    pb.SLOW.reset(30e-6)
    g = graph(1.125)
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    assert exe.state == tiered.PGO_FAST and exe._run == exe.fast.run
    pb.FAST.costs = [1e-3]
    call(exe, g, 2 * FIRST_CHECK)
    assert stats().extra.get("pgo_drifts", 0) == 0


def test_the_watch_is_off_by_default_and_with_pgo_drift_0(pgo):
    assert frame.config.__class__().pgo_drift == 0   # the default (the fixture turned it on)
    pb.FAST.reset(3e-3)
    pb.SLOW.reset(1e-3)
    g = graph(1.25)
    with frame.config.override(pgo_drift=0):
        exe = rc.compile(g, "pgoslow", pgo=True)
        run_until_decided(exe, g)
        assert exe._run == exe.slow.run
        pb.SLOW.costs = [9e-3]
        call(exe, g, 2 * FIRST_CHECK)
    assert exe.state == tiered.SLOW and stats().extra.get("pgo_drifts", 0) == 0
