"""A list of the frame that the call only appends to is not guarded by its
length (``capture/variables/containers.py``, ``ListVariable``).

``history.append(loss.item())`` in a training loop breaks at ``.item()``; the
resume function receives ``history`` with one more item at every iteration and
every call.  Guarded by length, it recompiled each time, and after the
recompile limit the rest of the loop ran natively.  Unread, its appends are
replayed with ``extend``; the first read (``len``, indexing, iteration, ``in``,
passing it on) wraps its items with the usual type-and-length guard."""
from __future__ import annotations


import numpy as np
import pytest

import capture
import frame

from .helpers import assert_same_as_eager


pytestmark = pytest.mark.usefixtures("quiet_fresh_stats")


def train_with_history(x, w, n):
    history = []
    for epoch in range(n):
        loss = ((x @ w) ** 2).mean()
        w = w - 0.01 * x.T @ (x @ w)
        history.append(loss.item())
    return w, history


def test_training_loop_history_does_not_recompile_per_iteration():
    rng = np.random.default_rng(0)
    x, w = rng.random((8, 3)), rng.random((3, 2))
    assert_same_as_eager(train_with_history, x, w, 20, captured=None)
    capture.reset_caches()
    frame.reset_stats()
    jitted = frame.jit(train_with_history)
    for _ in range(3):
        got, want = jitted(x, w, 20), train_with_history(x, w, 20)
        assert np.allclose(got[0], want[0]) and got[1] == want[1]
    # one translation per code (the function and its resume functions), none per iteration
    assert frame.stats().recompiles == 0, frame.stats().recompile_reasons


def log_into(x, log):
    log.append(float(x.sum()))       # a break with the list unread
    log.extend([x.max(), 2])
    log += [x.min()]
    return len(log)                  # read: its items are wrapped, length guarded


def only_appends(x, log, other):
    log.append(x * 2)
    other += [x.sum()]
    return x + 1


def appends_then_reads(x, log):
    log.append(x.sum())
    total = 0.0
    for v in log:                    # iteration reads the list
        total += v
    return total, log[-1], log[0] if log else None


def extends_by_itself(x, log):
    log.append(x.sum())
    log.extend(log)                  # reads it
    log.extend(v for v in (1, 2))    # a generator: consumed once
    return log


def same_list_twice(x, a, b):
    a.append(x.sum())
    b.append(x.max())                # the same list through another name
    return a is b


CASES = [
    (log_into, lambda: (np.arange(4.0), [])),
    (log_into, lambda: (np.arange(4.0), [1.0, "s"])),
    (only_appends, lambda: (np.arange(3.0), [np.zeros(2)], [])),
    (appends_then_reads, lambda: (np.arange(3.0), [1.5, 2.5])),
    (appends_then_reads, lambda: (np.arange(3.0), [])),
    (extends_by_itself, lambda: (np.arange(3.0), [7])),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_unread_lists_same_as_eager(fn, make):
    assert_same_as_eager(fn, *make(), captured=None)
    jitted = frame.jit(fn)
    for _ in range(2):
        assert_same_as_eager(jitted, *make(), captured=None)


def test_one_list_under_two_names():
    def make():
        shared = [0.5]
        return np.arange(3.0), shared, shared
    assert_same_as_eager(same_list_twice, *make(), captured=None)


def test_only_appending_is_one_graph_for_any_length():
    jitted = frame.jit(only_appends)
    for n in range(4):
        log, other = [np.zeros(2)] * n, list(range(n))
        want_log, want_other = list(log), list(other)
        out = jitted(np.arange(3.0), log, other)
        only_appends(np.arange(3.0), want_log, want_other)
        assert np.array_equal(out, np.arange(3.0) + 1)
        assert len(log) == len(want_log) and np.array_equal(log[-1], want_log[-1])
        assert other == want_other
    assert frame.stats().recompiles == 0, frame.stats().recompile_reasons
