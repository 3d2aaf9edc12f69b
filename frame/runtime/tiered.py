"""Tiered compilation: a new graph runs at once on a fast-to-compile tier
while the slow tier compiles it in the background, then the slow tier's
executable is swapped in.

    exe = runtime.compile(graph, "openvino")   # a TieredExecutable: cpu codegen now,
    exe.run(inputs)                            # OpenVINO after hot_threshold calls
    exe.tier                                   # "fast", then "slow" once swapped

Which backends are tiered: those with a fast tier in ``FAST_TIERS``
(``openvino`` -> ``cpu``; ``set_fast_tier`` adds others), when
``frame.config.tiered`` is on (``FRAME_TIERED=0`` turns it off).
``runtime.compile`` decides, for every graph that misses the in-process
cache.  Both tiers go through the persistent cache: on a warm start the fast
tier's executable is loaded from disk (no passes), and the background job
loads the slow tier's (``import_model`` for OpenVINO) instead of compiling
it, so even a warm first call never waits for OpenVINO to start.

Life of a TieredExecutable:

1. ``fast``: runs the fast tier's executable (compiled through
   ``runtime.compile``, so cached like any other).  The ``hot_threshold``-th
   call (``FRAME_HOT_THRESHOLD``, default 2; 0 = at once) requests the slow
   compile.  With ``max_pending`` compiles already queued or running the
   request is refused (``tier_backpressure``) and made again on the first
   call after ``cooldown_s`` (``FRAME_COOLDOWN_S``; the calls in between
   count as ``cooldown_hits``).
2. ``pending``: queued for, then running on, the background compiler (one
   daemon worker, one compile at a time).  First results come first: a queued
   compile starts only once the program has not compiled anything in the
   foreground for ``tier_quiet_s`` (``FRAME_TIER_QUIET_S``, default 0.1 s), or
   after waiting ``MAX_YIELD_S`` (2 s) regardless, or at once while a thread
   waits for the background compiles (``scheduler.idle``).  Measured on 2
   cores: a background OpenVINO compile running during a burst of foreground
   compiles made the burst 2-3x slower (CPU and GIL contention).
3. ``slow``: the background compile finished; the executable's ``run`` now
   forwards to the slow tier's executable (one attribute store, atomic: a call
   runs wholly on one tier).  Counted as ``tier_swaps``.
4. ``failed``: the background compile raised.  It was the same compile
   ``runtime.compile`` would have run (passes, ``Backend.compile``, the
   fallback chain on UNIMPLEMENTED), so what a synchronous compile would have
   raised is logged as one WARN here, counted as ``tier_failures``, and the
   fast tier stays.  The program is never broken by a background compile.
5. ``abandoned``: the compile ran longer than ``compile_timeout_s``
   (``FRAME_COMPILE_TIMEOUT_S``): WARN, ``tier_timeouts``, the fast tier
   stays, the worker moves on (the abandoned compile's thread finishes on its
   own; its result is dropped).

Results.  Both tiers compute the same graph; a program sees the fast tier's
results before the swap and the slow tier's after it.  The cpu tier is
bit-exact with the reference kernels and OpenVINO is checked against them
(``docs/openvino.md``), so the two agree within float32 rounding; a test
backend that evaluates the reference agrees exactly (tests/runtime/test_tiered.py).

``scheduler.drop_queued()`` drops the compiles that have not started (the
tests call it when a test ends); such a graph stays on the fast tier and asks
again on its next call.

Process exit.  The worker and the compile threads are daemons.  At exit,
queued compiles are dropped and a compile in flight is waited for at most
``compile_exit_wait_s`` (``FRAME_COMPILE_EXIT_WAIT_S``, default 10 s):
OpenVINO aborts a process whose interpreter exits in the middle of
``compile_model`` (measured: SIGABRT/SIGSEGV at exit), and a compile is
normally over in well under a second.

Profile-guided tier choice (PGO).  A graph whose backend the user did not
name (``frame.jit`` without ``backend=``, no ``FRAME_BACKEND``: capture passes
``pgo=True`` to ``runtime.compile``) is not swapped by call count alone: once
the slow tier is ready (state ``trial``), its next calls are interleaved
between the candidates -- the fast tier's executable and the slow tier's --
in blocks of ``PGO_BLOCK`` (5) calls per candidate, and timed
(``time.perf_counter``, module attribute ``clock``); the first
``PGO_UNTIMED`` (2) calls of each block are not timed (the other tier's
thread pool may still be spinning, and a tier takes more than one call to get
back to its steady time), nor
is the first block of each (a new executable's first calls set it up: OpenVINO
allocates its buffers and primitives, and the tanh-GELU 1024x1024 graph's
first timed trial calls took 1.2-2.8x its steady time), until
each candidate has ``pgo_trial_calls`` (``FRAME_PGO_TRIAL_CALLS``, default 6)
timed calls.  The
medians decide, with hysteresis: the fast tier is kept only when its median
is more than ``pgo_margin`` (``FRAME_PGO_MARGIN``, default 0.05) below the
slow tier's, else the slow tier (the backend asked for) is kept.  Then the
trial stops: ``run`` forwards to the winner (one attribute store, as for a
swap), watched for drift (below).  Every trial call runs wholly on one candidate and
returns its result (the two tiers agree within float32 rounding, see
Results), so trials cost no extra work, only the slower candidate's time on
a bounded number of calls.  While another graph's background compile is
running, a trial call is not timed (the compile would distort the
measurement on a small machine): it runs on the slow tier and counts as
``backpressure_hits``.

Noisy trials.  On a shared machine one tier's calls may be slowed by
other work while the other tier's are not.  So the trial decides only when
the fast tier's median is clearly on one side of the decision line (the
slow tier's median less ``pgo_margin``): further than twice the medians'
noise, each estimated as its samples' interquartile range / sqrt(n).
Otherwise the trial goes on, in further rounds of ``pgo_trial_calls`` timed
calls per tier, up to ``PGO_MAX_EXTENSION`` (3) times as many; a trial still
that noisy is decided by the medians with the hysteresis for this process,
counted as ``pgo_noisy``, and not stored, so the next process measures
again instead of starting on a decision made under a burst of load.

The decision is stored in the persistent cache next to the graph's
executables (a ``pgo`` record under the same runtime cache key, so it is
host- and frame-version specific like them).  A later process that compiles
the same graph reads it when the TieredExecutable is made: ``cpu`` won ->
the graph runs on the fast tier for good (state ``pgo_fast``) and the slow
tier is never compiled; the slow tier won -> the usual background swap,
without trials.

Drift (opt-in: ``pgo_drift``, ``FRAME_PGO_DRIFT``, default 0 = off).  A
decision holds while the conditions it was measured under hold; load on a
shared machine comes and goes, and the tiers do not suffer alike (OpenVINO's
two threads lose more to a busy core than the cpu tier's one).  With the
watch on, after a decision (measured or stored) every ``DRIFT_EVERY``-th call
of the winner is timed, after ``DRIFT_WARMUP`` calls; when the median of
``DRIFT_WINDOW`` such samples is more than ``pgo_drift`` (1.3 was tried)
times the winner's median in the decision, or less than that
median over ``pgo_drift``, the graph is measured again: a new trial on the
real calls (the slow tier compiled again first if it was dropped or never
compiled), counted as ``pgo_drifts``, whose decision replaces the old one in
this process and, when clear, in the persistent cache.  At most
``PGO_MAX_REMEASURES`` (2) per graph and process, so load that keeps
changing costs a bounded number of trials (a graph keeps what builds its slow
tier again only when compiled with the watch on).  Graphs whose winner runs in
under ``DRIFT_MIN_S`` (20 us) are not watched: the watch's own cost (a
counter and a call, ~0.1 us) would be a visible part of such a call.
It is off by default because the trial's median is not what the program's
own call pattern gives: in ``benchmarks/peers.py`` (blocks of calls after a
pause) the winners ran 1.3-1.8x their trial medians, the watch (1.3) measured
4 of the 5 graphs again in the middle of the timed blocks, and the default's
CNN cell came out 32% slower than the pinned tiers (1.93 against 1.46 ms;
with the watch off the same run was within 5% everywhere).  ``FRAME_PGO=0`` turns PGO off (count-based swap, as for a
pinned backend).  A backend the user named (``frame.jit(backend="openvino")``,
``FRAME_BACKEND``) is a strict pin: no trials, the graph ends on that
backend.

Throttles.  A request refused for backpressure is not made again by that
graph before ``cooldown_s`` (``FRAME_COOLDOWN_S``, default 0.05 s) has
passed; the calls in between run on the fast tier without asking the
scheduler and count as ``cooldown_hits``.

Statistics (``frame.stats().extra``): ``tier_requests``, ``tier_swaps``,
``tier_backpressure``, ``tier_timeouts``, ``tier_failures``, ``pgo_trials``
(timed trial calls), ``pgo_decisions`` (measured), ``pgo_switches``
(decisions that kept a tier other than the backend asked for), ``pgo_noisy``
(decisions made at the end of an extended noisy trial, not stored),
``pgo_stored`` (decisions read from the persistent cache), ``pgo_drifts``
(decided graphs measured again because their time drifted),
``backpressure_hits``, ``cooldown_hits``, and the gauge ``tier_pending``
(compiles queued or running now).  Each decision is also recorded by graph
label (``frame.stats().tier_decisions``, shown by ``frame.report()``), and
``TieredExecutable.describe()`` says what one graph runs on and why
(``frame.explain``).
"""
from __future__ import annotations

import atexit
import collections
import logging
import threading
import time
from typing import Callable, Sequence

import numpy as np

from ..hal.backend import Executable
from ..settings import config
from . import persistent, trace
from .stats import record

__all__ = ["TieredExecutable", "FAST_TIERS", "set_fast_tier", "fast_tier_for", "scheduler",
           "note_foreground_compile", "MAX_YIELD_S", "FAST", "PENDING", "SLOW", "FAILED",
           "ABANDONED", "TRIAL", "PGO_FAST", "clock"]

log = logging.getLogger("frame.tiered")

FAST, PENDING, SLOW, FAILED, ABANDONED = "fast", "pending", "slow", "failed", "abandoned"
TRIAL, PGO_FAST = "trial", "pgo_fast"  # PGO: measuring the tiers; the fast tier kept for good

# the timer of PGO trials (tests replace it with a fake clock)
clock: Callable[[], float] = time.perf_counter

# PGO trial calls run in blocks of this many calls per tier, the tiers
# alternating; the first PGO_UNTIMED calls of a block are not timed.  Measured
# on 2 cores: alternating call by call, each tier's calls ran while the other's
# thread pool (OpenBLAS after the cpu tier, OpenVINO's after OpenVINO) was
# still spinning: the MLP train step's graph measured 25 ms on OpenVINO in the
# trial against 14 ms in runs of 20 calls.  And a tier needs more than one call
# to recover: after three cpu-tier calls, the MLP step's OpenVINO calls took
# 2.33, 1.72, 1.52, 1.47 ms against 1.47 steady (medians of 25, 2026-12-02);
# with blocks of 3 (calls 2 and 3 timed) a fresh process measured OpenVINO at
# 2.2 ms, kept the cpu tier (1.9 ms) and ran 43% slower than OpenVINO pinned.
PGO_BLOCK = 5
PGO_UNTIMED = 2

# A trial whose medians are closer to the decision line than their noise is
# extended, up to this many times ``pgo_trial_calls`` timed calls per tier; a
# trial still that noisy is decided (hysteresis) for this process only and not
# stored, so the next process measures again (module doc, "Noisy trials").
# 1: no extension and no noise check (every decision after pgo_trial_calls, stored).
PGO_MAX_EXTENSION = 3

# Drift watch (module doc, "Drift"): after a decision, every DRIFT_EVERY-th call
# of the winner is timed once DRIFT_WARMUP calls have run (a tier just swapped
# in sets itself up on its first calls); DRIFT_WINDOW samples make one median,
# compared with the winner's median in the decision.  A graph is measured
# again at most PGO_MAX_REMEASURES times per process; winners faster than
# DRIFT_MIN_S are not watched.
DRIFT_EVERY = 8
DRIFT_WARMUP = 16
DRIFT_WINDOW = 9
DRIFT_MIN_S = 20e-6
PGO_MAX_REMEASURES = 2

# slow backend -> its fast tier
FAST_TIERS: dict[str, str] = {"openvino": "cpu"}

# a queued background compile yields to foreground compiles at most this long
MAX_YIELD_S = 2.0

_last_foreground = -float("inf")  # time.monotonic() of the last foreground compile activity


def note_foreground_compile() -> None:
    """Called by ``runtime.compile`` around a foreground compile (an in-process
    miss): background compiles wait for a quiet moment (see module doc)."""
    global _last_foreground
    _last_foreground = time.monotonic()


def set_fast_tier(backend: str, fast: str | None) -> None:
    """Tier ``backend`` over ``fast`` (None: never tier ``backend``)."""
    if fast is None:
        FAST_TIERS.pop(backend, None)
    else:
        FAST_TIERS[backend] = fast


def fast_tier_for(backend: str) -> str | None:
    """The fast tier to start ``backend``'s graphs on now, or None (not tiered)."""
    if not config.tiered:
        return None
    fast = FAST_TIERS.get(backend)
    return fast if fast != backend else None


class TieredExecutable(Executable):
    """A fast-tier executable standing in for a slow-tier one until it is ready.

    ``build_slow()`` compiles the slow tier (on the background compiler);
    ``label`` names the graph in log messages.  With ``pgo`` the tiers are
    measured once the slow one is ready and the faster kept (module doc);
    ``key`` (the runtime cache key) names the stored decision.
    """

    def __init__(self, fast: Executable, build_slow: Callable[[], Executable], backend: str,
                 fast_backend: str, label: str, pgo: bool = False, key: str | None = None):
        self.input_types = fast.input_types
        self.output_types = fast.output_types
        self.fast = fast
        self.slow: Executable | None = None
        self.backend = backend
        self.fast_backend = fast_backend
        self.label = label
        self.state = FAST
        self.error: BaseException | None = None
        self.pgo = bool(pgo and config.pgo)
        # the PGO decision: {"winner", "medians_s" {tier: s}, "source" measured|stored}
        self.decision: dict | None = None
        self._key = key
        self._build_slow: Callable[[], Executable] | None = build_slow
        # kept for a new trial after drift when the slow tier was dropped or never built
        # (only with the watch on: it holds the graph alive)
        self._rebuild = build_slow if self.pgo and config.pgo_drift > 1.0 else None
        self._winner: Executable | None = None  # the watched executable (drift)
        self._watch_calls = 0
        self._watch_samples: list[float] = []
        self._remeasures = 0
        self._lock = threading.Lock()
        self._settled = threading.Event()   # set on swap, trial start, failure or abandonment
        self._decided = threading.Event()   # set once the PGO decision is made
        self._calls = 0
        self._threshold = config.hot_threshold
        self._retry_at = 0.0                # cooldown after a refused request
        self._samples: dict[str, list[float]] = {}
        self._trial_calls = 0
        # ``run`` calls ``self._run``: counting until the request is made, then the
        # fast executable's run, then the slow one's (each a single attribute store)
        self._run: Callable[[Sequence[np.ndarray]], list[np.ndarray]] = self._counting
        stored = _stored_decision(key, (fast_backend, backend)) if self.pgo else None
        if stored is not None:
            self.decision = dict(stored, source="stored")
            record.count("pgo_stored")
            record.tier_decision(label, _decision_text(self.decision, backend))
            if config.trace_dir:  # FRAME_TRACE_DIR (trace.py)
                trace.tier_event(key, label, "decided", _decision_text(self.decision, backend),
                                 decision=self.decision)
            if stored["winner"] == fast_backend:  # the slow tier lost: not compiled unless drift
                self.state, self._build_slow = PGO_FAST, None
                self._run = self._watched(fast, fast_backend)
                self._settled.set()
                self._decided.set()
                return
            self.pgo = False  # the slow tier won: swap to it when ready, no trials
            self._decided.set()
        if self._threshold <= 0:
            self._request()

    @property
    def tier(self) -> str:
        """``"slow"`` once swapped (or kept by PGO), ``"trial"`` while PGO
        measures, else ``"fast"``."""
        if self.state == SLOW:
            return "slow"
        return "trial" if self.state == TRIAL else "fast"

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return self._run(inputs)

    def wait(self, timeout: float | None = None) -> str:
        """Wait until the background compile is settled (swapped, in trial,
        failed or abandoned) or ``timeout`` passes; returns the state (tests,
        benchmarks)."""
        self._settled.wait(timeout)
        return self.state

    def wait_decided(self, timeout: float | None = None) -> bool:
        """Wait for the PGO decision (made by calls: run the graph meanwhile)."""
        return self._decided.wait(timeout)

    def describe(self) -> str:
        """One sentence: which tier runs this graph now, and why (``frame.explain``)."""
        if self.decision is not None and self.state in (SLOW, PGO_FAST, PENDING, FAST):
            text = _decision_text(self.decision, self.backend)
            if self.state in (PENDING, FAST):
                if self._remeasures:
                    return (f"{self.fast_backend} tier while {self.backend} is built again to "
                            f"measure the tiers again (the time drifted from the decision: "
                            f"{text})")
                return f"{self.fast_backend} tier until {self.backend} is ready; {text}"
            return text
        if self.state == TRIAL:
            again = (f", measuring again after drift ({self._remeasures} time(s))"
                     if self._remeasures else "")
            return (f"PGO trial: {self.fast_backend} vs {self.backend} interleaved "
                    f"({self._trial_calls} trial call(s) so far{again})")
        if self.state == SLOW:
            return f"{self.backend} (swapped in after the {self.fast_backend} tier; " \
                   f"{'PGO off' if not config.pgo else 'backend pinned: no PGO'})"
        if self.state in (FAST, PENDING):
            then = "then PGO trial" if self.pgo else "then swap"
            return (f"{self.fast_backend} tier while {self.backend} "
                    f"{'compiles in the background' if self.state == PENDING else 'is not yet requested'}"
                    f" ({then})")
        return f"{self.fast_backend} tier ({self.backend} {self.state}: {self.error or 'timeout'})"

    def _counting(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        self._calls += 1  # a lost increment under threads only delays the request by a call
        if self._calls >= self._threshold:
            if self._retry_at and time.monotonic() < self._retry_at:
                record.count("cooldown_hits")
            else:
                self._request()
        return self.fast.run(inputs)

    def _request(self) -> None:
        with self._lock:
            if self.state != FAST:
                return
            self._settled.clear()  # set again by a drop (drop_queued) before this request
            if not scheduler.submit(self):
                # backpressure (counted): asked again on a call after cooldown_s
                self._retry_at = time.monotonic() + max(0.0, config.cooldown_s)
                return
            self.state = PENDING
            self._run = self.fast.run  # stop counting

    # -- PGO: measuring the tiers on real calls -------------------------------------------
    def _trial(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        slow = self.slow
        if slow is None:  # decided meanwhile (another thread): the fast tier was kept
            return self.fast.run(inputs)
        if scheduler.compiling_other_than(self):  # no fair measurement now
            record.count("backpressure_hits")
            return slow.run(inputs)
        with self._lock:
            n = self._trial_calls
            self._trial_calls += 1
        if (n // PGO_BLOCK) % 2 == 0:
            name, exe = self.fast_backend, self.fast
        else:
            name, exe = self.backend, slow
        t0 = clock()
        out = exe.run(inputs)
        elapsed = clock() - t0
        if n % PGO_BLOCK < PGO_UNTIMED or n < 2 * PGO_BLOCK:
            return out  # the first calls after a change of tier, or the warm-up blocks: not timed
        record.count("pgo_trials")
        with self._lock:
            if self.state != TRIAL:
                return out
            self._samples.setdefault(name, []).append(elapsed)
            wanted = max(1, config.pgo_trial_calls)
            taken = min(len(self._samples.get(t, ())) for t in (self.fast_backend, self.backend))
            # enough calls, and either clear or at the extension's end (then noisy)
            decided = (taken >= wanted and taken % wanted == 0
                       and (taken >= wanted * PGO_MAX_EXTENSION or self._clear()))
            if decided:
                self._decide()
        if decided:  # one small file, written once per graph; a noisy decision is not kept
            if not self.decision.get("noisy"):
                _store_decision(self._key, self.decision)
            self._decided.set()
            if config.trace_dir:
                trace.tier_event(self._key, self.label, "decided",
                                 _decision_text(self.decision, self.backend), decision=self.decision)
        return out

    def _clear(self) -> bool:
        """Are the samples clear enough to decide (holding ``_lock``)?  The fast
        tier's median is compared with the slow tier's less the margin (the
        decision line); it is clear when their distance exceeds twice the
        medians' noise, estimated as each tier's interquartile range / sqrt(n)
        (about a median's standard error)."""
        line = 1.0 - max(0.0, config.pgo_margin)
        fast = np.asarray(self._samples[self.fast_backend])
        slow = np.asarray(self._samples[self.backend])

        def noise(v: np.ndarray) -> float:
            q25, q75 = np.percentile(v, (25, 75))
            return float(q75 - q25) / np.sqrt(len(v))
        gap = abs(float(np.median(fast)) - line * float(np.median(slow)))
        return gap > 2.0 * (noise(fast) + line * noise(slow))

    def _decide(self) -> None:
        """Keep the faster tier, with hysteresis (holding ``_lock``)."""
        medians = {t: float(np.median(v)) for t, v in self._samples.items()}
        fast_s, slow_s = medians[self.fast_backend], medians[self.backend]
        keep_fast = fast_s < slow_s * (1.0 - max(0.0, config.pgo_margin))
        winner = self.fast_backend if keep_fast else self.backend
        self.decision = {"winner": winner, "medians_s": medians, "source": "measured"}
        if PGO_MAX_EXTENSION > 1 and not self._clear():
            self.decision["noisy"] = True
            record.count("pgo_noisy")
        if keep_fast:
            self.state, self._run = PGO_FAST, self._watched(self.fast, self.fast_backend)
            self.slow = None  # the slow tier lost: let it go (built again if drift asks)
            record.count("pgo_switches")
        else:
            self.state, self._run = SLOW, self._watched(self.slow, self.backend)
        self._samples = {}
        record.count("pgo_decisions")
        text = _decision_text(self.decision, self.backend)
        record.tier_decision(self.label, text)
        log.debug("tiered compile: %s: %s", self.label, text)

    # -- drift: watching the winner, measuring again --------------------------------------
    def _watched(self, exe: Executable, tier: str) -> Callable[[Sequence[np.ndarray]],
                                                                   list[np.ndarray]]:
        """What ``run`` calls once ``exe`` (tier ``tier``) won: ``exe.run``
        itself, or ``_watching`` it for drift (module doc, "Drift")."""
        reference = (self.decision or {}).get("medians_s", {}).get(tier)
        if (config.pgo_drift <= 1.0 or not config.pgo or self._rebuild is None
                or self._remeasures >= PGO_MAX_REMEASURES
                or reference is None or reference < DRIFT_MIN_S):
            return exe.run
        self._winner, self._watch_calls, self._watch_samples = exe, 0, []
        return self._watching

    def _watching(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        exe = self._winner
        self._watch_calls += 1  # a lost increment under threads only shifts the sampling
        if self._watch_calls % DRIFT_EVERY or self._watch_calls <= DRIFT_WARMUP:
            return exe.run(inputs)
        t0 = clock()
        out = exe.run(inputs)
        elapsed = clock() - t0
        samples = self._watch_samples
        samples.append(elapsed)
        if len(samples) >= DRIFT_WINDOW:
            self._watch_samples = []
            self._check_drift(float(np.median(samples)))
        return out

    def _check_drift(self, observed: float) -> None:
        """Measure again when ``observed`` (the winner's sampled median) left
        the band of ``pgo_drift`` around its median in the decision."""
        decision = self.decision
        if decision is None:
            return
        winner = decision["winner"]
        reference = decision["medians_s"].get(winner)
        factor = config.pgo_drift
        if reference is None or factor <= 1.0 or reference / factor <= observed <= reference * factor:
            return
        with self._lock:
            if self.state not in (SLOW, PGO_FAST) or self._remeasures >= PGO_MAX_REMEASURES:
                return
            self._remeasures += 1
            self.pgo = True
            self._samples, self._trial_calls = {}, 0
            self._decided.clear()
            if self.slow is not None:  # the slow tier won: it is here, trial at once
                self.state, self._run = TRIAL, self._trial
            else:  # the fast tier won: build the slow tier again, then the trial
                self.state, self._build_slow = FAST, self._rebuild
                self._calls, self._retry_at = self._threshold, 0.0
                self._run = self._counting  # the next call requests the compile
        record.count("pgo_drifts")
        text = (f"{winner} ran {observed * 1e3:.3f} ms per call against {reference * 1e3:.3f} ms "
                f"in the decision: measuring the tiers again")
        log.debug("tiered compile: %s: %s", self.label, text)
        if config.trace_dir:
            trace.tier_event(self._key, self.label, "drift", text)

    # -- called by the scheduler (background threads) ------------------------------------
    def _compile(self) -> None:
        build, self._build_slow = self._build_slow, None  # let the graph go once built
        try:
            exe = build()
        except BaseException as err:  # noqa: BLE001 -- never let it reach the program
            with self._lock:
                if self.state != PENDING:
                    return
                self.state, self.error = FAILED, err
            record.count("tier_failures")
            if config.trace_dir:
                trace.tier_event(self._key, self.label, "failed",
                                 f"the background {self.backend} compile failed: "
                                 f"{type(err).__name__}: {err}")
            # at exit, imports and atexit registrations fail: not worth a warning then
            level = logging.DEBUG if scheduler.closed else logging.WARNING
            log.log(level, "tiered compile: the background %s compile of %s failed (%s: %s); "
                    "it keeps running on the %s tier", self.backend, self.label,
                    type(err).__name__, err, self.fast_backend)
            self._settled.set()
            return
        with self._lock:
            if self.state != PENDING:  # abandoned after a timeout: drop the result
                log.debug("tiered compile: %s finished after it was abandoned; dropped", self.label)
                return
            self.slow = exe
            if self.pgo:
                self.state = TRIAL
                self._run = self._trial  # the next calls measure both tiers
            else:
                self.state = SLOW
                # the swap: the next call runs on the slow tier (watched for drift
                # when it won a stored decision)
                self._run = (self._watched(exe, self.backend) if self.decision is not None
                             else exe.run)
        if config.trace_dir:
            trace.tier_event(self._key, self.label, "trial" if self.pgo else "swapped",
                             f"{self.backend} ready: " + ("PGO trial starts" if self.pgo else
                                                          f"swapped in for the {self.fast_backend} tier"))
        if self.pgo:
            log.debug("tiered compile: %s: %s ready, PGO trial starts", self.label, self.backend)
        else:
            record.count("tier_swaps")
            log.debug("tiered compile: %s now runs on %s", self.label, self.backend)
        self._settled.set()

    def _abandon(self, waited: float) -> None:
        with self._lock:
            if self.state != PENDING:
                return
            self.state = ABANDONED
        record.count("tier_timeouts")
        if config.trace_dir:
            trace.tier_event(self._key, self.label, "abandoned",
                             f"the background {self.backend} compile took longer than "
                             f"compile_timeout_s={waited:g} s")
        log.warning("tiered compile: the background %s compile of %s took longer than "
                    "compile_timeout_s=%g s; abandoned, it keeps running on the %s tier",
                    self.backend, self.label, waited, self.fast_backend)
        self._settled.set()

    def _drop(self, again: bool = False) -> None:
        """Never compiled (process exit): stays on the fast tier; with ``again``
        (``scheduler.drop_queued``) its next call requests the compile anew."""
        with self._lock:
            if self.state == PENDING:
                self.state = FAST
                if again:
                    self._run = self._counting
        self._settled.set()

    def __repr__(self) -> str:
        return (f"<TieredExecutable {self.fast_backend} -> {self.backend}, {self.state}: "
                f"{self.label}>")


def _decision_text(decision: dict, backend: str) -> str:
    medians = ", ".join(f"{t} {s * 1e3:.3f} ms" for t, s in decision.get("medians_s", {}).items())
    how = "measured" if decision.get("source") == "measured" else "stored decision"
    noisy = "; noisy trial, not stored" if decision.get("noisy") else ""
    return (f"{decision['winner']} (PGO {how}: median {medians}; "
            f"{'kept over ' + backend if decision['winner'] != backend else 'the backend asked for'}"
            f"{noisy})")


def _stored_decision(key: str | None, tiers: tuple[str, str]) -> dict | None:
    """The decision stored for runtime cache key ``key``, if it names one of ``tiers``."""
    if key is None:
        return None
    store = persistent.active_store()
    if store is None:
        return None
    found = store.load_record("pgo", key)
    if found is None:
        return None
    meta = found[0]
    if not isinstance(meta, dict) or meta.get("winner") not in tiers:
        return None
    medians = meta.get("medians_s")
    return {"winner": meta["winner"],
            "medians_s": {str(k): float(v) for k, v in medians.items()}
            if isinstance(medians, dict) else {}}


def _store_decision(key: str | None, decision: dict) -> None:
    if key is None:
        return
    store = persistent.active_store()
    if store is not None:
        store.save_record("pgo", key, {"winner": decision["winner"],
                                       "medians_s": decision["medians_s"]}, {})


class _Scheduler:
    """One daemon worker running background compiles one at a time, each in a
    thread of its own so that a compile past its timeout can be left behind."""

    def __init__(self):
        self._cond = threading.Condition()
        self._queue: collections.deque[tuple[TieredExecutable, float]] = collections.deque()
        self._pending = 0            # queued + running (not abandoned)
        self._running: dict[TieredExecutable, threading.Thread] = {}  # incl. abandoned
        self._worker: threading.Thread | None = None
        self._closed = False
        self._waiting = 0            # threads in idle(): queued compiles need not yield
        record.gauge("tier_pending", lambda: self._pending)

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def closed(self) -> bool:
        """True once the process is exiting (``shutdown`` ran)."""
        return self._closed

    def compiling_other_than(self, exe: TieredExecutable) -> bool:
        """Is a compile thread of another graph running now (abandoned ones
        included: they still use the cores)?"""
        with self._cond:
            return any(other is not exe for other in self._running)

    def submit(self, exe: TieredExecutable) -> bool:
        with self._cond:
            if self._closed:
                return False
            if self._pending >= config.max_pending:
                record.count("tier_backpressure")
                return False
            self._pending += 1
            self._queue.append((exe, time.monotonic()))
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="frame-tiered-worker",
                                                daemon=True)
                self._worker.start()
            self._cond.notify()
        record.count("tier_requests")
        return True

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                self._yield_to_foreground()
                if self._closed:
                    return
                if not self._queue:  # dropped while yielding (drop_queued)
                    continue
                exe, _ = self._queue.popleft()
                thread = threading.Thread(target=self._compile_one, args=(exe,),
                                          name="frame-tiered-compile", daemon=True)
                self._running[exe] = thread
            started = time.monotonic()
            thread.start()
            timeout = config.compile_timeout_s
            thread.join(timeout if timeout and timeout > 0 else None)
            if thread.is_alive():
                exe._abandon(time.monotonic() - started)
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

    def _yield_to_foreground(self) -> None:
        """Wait (holding ``_cond``) for ``tier_quiet_s`` without foreground
        compiles, or until the oldest request has waited ``MAX_YIELD_S``; not
        while a thread waits in ``idle``."""
        while not self._closed and self._queue and not self._waiting:
            now = time.monotonic()
            quiet_left = config.tier_quiet_s - (now - _last_foreground)
            yield_left = MAX_YIELD_S - (now - self._queue[0][1])
            if quiet_left <= 0 or yield_left <= 0:
                return
            self._cond.wait(min(quiet_left, yield_left))

    def _compile_one(self, exe: TieredExecutable) -> None:
        try:
            exe._compile()
        finally:
            with self._cond:
                self._running.pop(exe, None)
                self._cond.notify_all()

    def shutdown(self, wait_s: float | None = None) -> None:
        """Drop queued compiles and wait up to ``wait_s`` (default
        ``compile_exit_wait_s``) for those in flight (the exit hook)."""
        wait_s = config.compile_exit_wait_s if wait_s is None else wait_s
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._cond:
            self._closed = True
            dropped = self._take_queued()
            while self._running:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        for exe in dropped:
            exe._drop()

    def drop_queued(self) -> int:
        """Drop the compiles not started yet (their graphs stay on the fast tier
        and request the slow compile again on their next call); the number
        dropped.  Tests: what a test queued and never waited for does not run
        into the next test."""
        with self._cond:
            dropped = self._take_queued()
        for exe in dropped:
            exe._drop(again=True)
        return len(dropped)

    def _take_queued(self) -> list[TieredExecutable]:
        """Empty the queue (holding ``_cond``); the executables it held."""
        dropped = [exe for exe, _ in self._queue]
        self._queue.clear()
        self._pending -= len(dropped)
        self._cond.notify_all()
        return dropped

    def idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued or running (tests, benchmarks).  A
        program that waits for its background compiles wants them now: while
        a thread waits here, queued compiles start without waiting for a
        quiet moment (``tier_quiet_s``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._waiting += 1
            self._cond.notify_all()  # a worker yielding to the foreground stops yielding
            try:
                while self._pending or self._queue:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                self._waiting -= 1
        return True


scheduler = _Scheduler()
atexit.register(scheduler.shutdown)
