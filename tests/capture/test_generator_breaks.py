"""A break inside a generator expression consumed by a builtin.

``sum(int((p == y).sum()) for p, y in batches)``, ``any(t.item() > 0 for t in
ts)``: the break happens inside the generator's frame, while ``sum`` runs it,
and is placed before the ``sum(...)`` call of the caller.  The generator is
then live and not started, and it used to stop the break ("returning or
storing <GeneratorVariable>": the whole call ran natively).  An unstarted
generator is now rebuilt by calling its function again with the same
arguments (``GeneratorVariable.reconstruct``); a started one still cannot be
rebuilt.  Jitted against plain, on every Python."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


def _tensors(*values):
    return [frame.tensor(np.full(3, v, np.float32)) for v in values]


def accuracy(pairs):
    correct = sum(int((p == y).sum()) for p, y in pairs)
    return correct / (3 * len(pairs))


def any_and_all(ts, threshold):
    big = any(t.sum().item() > threshold for t in ts)
    return big, all(float(t.max()) < 10 for t in ts), ts[0] * 2


def max_of_pairs(ts):
    return max((t.sum().item(), i) for i, t in enumerate(ts))


def generator_function(ts):
    def scaled(xs, scale=2):
        for x in xs:
            yield float(x.sum()) * scale
    g = scaled(ts, scale=3)
    return sum(g), ts[0] + 1


def started_generator(ts):
    g = (float(t.sum()) for t in ts)
    first = next(g)
    return first, sum(g)


def _pairs():
    return [(frame.tensor(np.array([1, 2, 3])), frame.tensor(np.array([1, 0, 3]))),
            (frame.tensor(np.array([1, 1, 1])), frame.tensor(np.array([1, 1, 1])))]


CASES = [
    (accuracy, lambda: (_pairs(),)),
    (any_and_all, lambda: (_tensors(1.0, 2.0, 3.0), 5.0)),
    (any_and_all, lambda: (_tensors(1.0, 20.0), 5.0)),
    (max_of_pairs, lambda: (_tensors(3.0, 1.0, 2.0),)),
    (generator_function, lambda: (_tensors(1.0, 2.0),)),
    (started_generator, lambda: (_tensors(1.0, 2.0, 3.0),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_generator_consumed_by_a_builtin_matches_plain(fn, args):
    for _ in range(2):
        assert_same_as_eager(fn, *args(), captured=None)


@pytest.mark.parametrize("fn, args", CASES[:5], ids=[c[0].__name__ for c in CASES[:5]])
def test_the_call_breaks_instead_of_running_natively(fn, args):
    jitted = frame.jit(fn)
    jitted(*args())
    entry = jitted._frame_cache.entries[0]
    assert not entry.native, entry.reason
    out = frame.explain(fn)(*args())
    assert not any("no graph break here" in r.reason for r in out.break_reasons), out.break_reasons
