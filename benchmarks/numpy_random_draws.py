"""NumPy random draws under capture (docs/capture.md, "Random draws").

    python benchmarks/numpy_random_draws.py

Per-call time of a dropout-like ``x * (draw < 0.5) / 0.5`` on a 64x64 float64
array, the draw from (a) a ``np.random.Generator`` argument (PCG64), (b)
NumPy's legacy global RandomState (``np.random.rand``, MT19937), (c) the same
in a graph that gathers (``x[idx]``, which may raise), interleaved in one
process (cpu backend):

- ``plain``: the function itself;
- ``jit``: the draw a graph input the entry makes before the graph, the
  generator's state saved first (given back when the graph raises);
- ``jit, no state saved``: the same entry with the state saving replaced by a
  no-op (what the saving costs: an MT19937's is saved only for a graph that
  may raise, which this one is not);
- ``jit, draw as a break``: the sampler taken off the allow-list while the
  function is translated: the draw breaks the graph, as before this change.
"""
from __future__ import annotations

import os
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import frame  # noqa: E402
from capture.variables import numpy_random  # noqa: E402
from _harness import interleaved, show  # noqa: E402


def with_generator(x, rng):
    return x * (rng.random(x.shape) < 0.5) / 0.5


def with_legacy(x, rng):
    return x * (np.random.rand(*x.shape) < 0.5) / 0.5


def with_legacy_gather(x, rng):
    return x[IDX] * (np.random.rand(64, 64) < 0.5) / 0.5


IDX = np.arange(64)[::-1].copy()


def _no_state_saving(jitted) -> None:
    """Replace the entry's ``__np_state`` (a closure cell of its code) by a no-op."""
    entry = jitted._frame_cache.entries[0]
    code = entry.fn.__code__
    for name, cell in zip(code.co_freevars, entry.fn.__closure__):
        if name == "__np_state":
            cell.cell_contents = lambda gen, may_raise: None
            return
    raise AssertionError("the entry saves no NumPy generator's state")


def _copy(fn):
    """``fn`` with a code object of its own (capture caches translations per code)."""
    return types.FunctionType(fn.__code__.replace(co_name=fn.__name__ + "_copy"), fn.__globals__)


def candidates(fn, cls, name, x, rng) -> dict:
    jitted = frame.jit(fn, backend="cpu")
    jitted(x, rng)
    unsaved = frame.jit(_copy(fn), backend="cpu")
    unsaved(x, rng)
    _no_state_saving(unsaved)
    as_break = frame.jit(_copy(fn), backend="cpu")
    kept = numpy_random.SAMPLERS[cls]
    numpy_random.SAMPLERS[cls] = kept - {name}
    try:
        as_break(x, rng)
    finally:
        numpy_random.SAMPLERS[cls] = kept
    return {"plain": lambda: fn(x, rng), "jit": lambda: jitted(x, rng),
            "jit, no state saved": lambda: unsaved(x, rng),
            "jit, draw as a break": lambda: as_break(x, rng)}


def main() -> None:
    x = np.ones((64, 64))
    for title, fn, cls, name, rng in (
            ("(a) Generator(PCG64) argument: rng.random(x.shape)", with_generator,
             np.random.Generator, "random", np.random.default_rng(0)),
            ("(b) legacy global RandomState (MT19937): np.random.rand(*x.shape)", with_legacy,
             np.random.RandomState, "rand", None),
            ("(c) the same, np.random.rand(64, 64), after a gather x[idx] (a graph that may "
             "raise: the MT19937's state is saved)", with_legacy_gather,
             np.random.RandomState, "rand", None)):
        print(title)
        show(interleaved(candidates(fn, cls, name, x, rng), number=500, rounds=11, warmup=50),
             "plain")


if __name__ == "__main__":
    main()
