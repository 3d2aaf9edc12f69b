"""Two test backends with controlled cost for the PGO tests (tests/runtime/test_pgo.py):
``pgofast`` (the fast tier) and ``pgoslow`` (the slow tier, tiered over
``pgofast``).  Their executables evaluate the reference interpreter and
advance a fake clock (``CLOCK``, installed as ``tiered.clock`` by
``install``) by the cost set for their backend: what PGO measures is decided
by the test, never by the machine."""
from __future__ import annotations

import threading

import numpy as np

from frame.hal import Backend, Executable, register_backend
from frame.ops.interpreter import evaluate
from frame.runtime import tiered


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.now += seconds


CLOCK = FakeClock()


class CostedExecutable(Executable):
    def __init__(self, backend: "CostedBackend", graph):
        self.backend, self.graph = backend, graph
        self.input_types = tuple(v.type for v in graph.inputs)
        self.output_types = tuple(v.type for v in graph.outputs)
        self.runs = 0

    def run(self, inputs):
        self.runs += 1
        costs = self.backend.costs
        if callable(costs):
            CLOCK.advance(costs(self.runs))
        else:
            CLOCK.advance(costs[min(self.runs, len(costs)) - 1])
        return [np.array(o, copy=True) for o in evaluate(self.graph, list(inputs))]


class CostedBackend(Backend):
    """``costs``: the fake seconds of an executable's 1st, 2nd, ... call (the
    last one repeats), or a function of the call's number (1, 2, ...).  ``gate`` (set unless a test clears it) holds compiles."""

    def __init__(self, name: str):
        self.name = name
        self.costs = [1e-3]
        self.compiles = 0
        self.executables: list[CostedExecutable] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()   # a compile started (it may wait for ``gate``)

    def reset(self, *costs) -> None:
        self.costs = costs[0] if len(costs) == 1 and callable(costs[0]) else list(costs) or [1e-3]
        self.compiles = 0
        self.executables = []
        self.gate.set()
        self.entered.clear()

    def supports(self, node) -> bool:
        return True

    def compile(self, graph, options):
        self.entered.set()
        self.gate.wait()
        self.compiles += 1
        exe = CostedExecutable(self, graph)
        self.executables.append(exe)
        return exe

    def runs(self) -> int:
        return sum(e.runs for e in self.executables)


FAST = CostedBackend("pgofast")
SLOW = CostedBackend("pgoslow")
register_backend("pgofast", lambda: FAST)
register_backend("pgoslow", lambda: SLOW)


def install() -> None:
    """Tier ``pgoslow`` over ``pgofast`` and time trials with the fake clock."""
    tiered.set_fast_tier("pgoslow", "pgofast")
    tiered.clock = CLOCK
