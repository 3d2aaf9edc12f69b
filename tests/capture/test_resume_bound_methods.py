"""A list's or dict's method pending on the stack at a graph break.

``history.append(loss.item())`` breaks at ``.item()`` with ``history.append``
already on the stack: the resume function receives the bound builtin method
object.  It used to be wrapped as an opaque builtin guarded by identity (a new
object at every call: a recompile per call, then the recompile limit) whose
call broke the graph again ("builtin append()").  It is now the container's
method, the container wrapped through ``__self__`` (the same Variable as the
frame's other references to it), guarded by the method's type and name."""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import capture
import frame

from .helpers import assert_same_as_eager, tensor


def losses_into_list(x, history):
    for epoch in range(3):
        loss = (x * (epoch + 1)).sum()
        history.append(round(loss.item(), 5))
    return history


def local_list_and_bound_alias(x):
    out = []
    add = out.append
    add(float(x.sum()))
    out.append(float(x.max()))      # the same list through its name
    add(len(out))
    return out, len(out)


def dict_methods_pending(x, stats):
    stats.setdefault("sum", float(x.sum()))
    stats.update(max=float(x.max()))
    stats.setdefault("sum", -1.0)
    return stats.get("max", float(x.min())), stats


def list_insert_then_pop(x, items):
    items.insert(0, float(x.mean()))
    last = items.pop(int(x.argmax()) % len(items))
    return items, last


CASES = [
    (losses_into_list, lambda: (tensor((3,)), [])),
    (losses_into_list, lambda: (tensor((3,)), [1.0, 2.0])),
    (local_list_and_bound_alias, lambda: (np.arange(4.0),)),
    (dict_methods_pending, lambda: (np.arange(4.0), {})),
    (dict_methods_pending, lambda: (np.arange(4.0), {"sum": 3})),
    (list_insert_then_pop, lambda: (np.arange(4.0), [5.0, 6.0])),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_pending_container_method_same_as_eager(fn, make):
    assert_same_as_eager(fn, *make(), captured=None)
    jitted = frame.jit(fn)
    for _ in range(2):
        assert_same_as_eager(jitted, *make(), captured=None)


@pytest.mark.parametrize("fn,make", CASES[:1] + CASES[2:4], ids=["list", "alias", "dict"])
def test_pending_container_method_is_modelled(fn, make):
    capture.reset_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = frame.explain(fn)(*make())
    reasons = [r.reason for r in out.break_reasons]
    assert all(r.startswith(("float()", ".item()")) for r in reasons), reasons


def test_pending_append_does_not_recompile_per_call():
    capture.reset_caches()
    logging.getLogger("frame").setLevel(logging.ERROR)
    jitted = frame.jit(losses_into_list)
    x = tensor((3,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jitted(x, [])
        before = frame.stats().recompiles
        for _ in range(3):
            assert jitted(x, []) == losses_into_list(x, [])
    assert frame.stats().recompiles == before


def dropout_steps(x, w, seed, n):
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(n):
        h = np.maximum(x @ w, 0.0)
        h *= rng.integers(0, 2, size=h.shape) * 2      # a generator's method pending at a break
        w = w - 0.01 * (x.T @ h)
        losses.append(round(float((h ** 2).mean()), 9))
    return w, losses


def test_pending_generator_method_same_as_eager_and_no_recompile_per_call():
    """``rng.integers`` read from a generator made in the function is a new
    bound method each time: it reaches the resume function guarded by its type,
    name and generator type, not by identity (which recompiled at every
    iteration up to the limit, then ran natively)."""
    capture.reset_caches()
    frame.reset_stats()
    logging.getLogger("frame").setLevel(logging.ERROR)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    jitted = frame.jit(dropout_steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in (1, 2):
            assert_same_as_eager(dropout_steps, x, w, seed, 4, captured=None)
        for seed in (3, 4, 5):
            got, want = jitted(x, w, seed, 4), dropout_steps(x, w, seed, 4)
            assert np.allclose(got[0], want[0]) and got[1] == want[1]
    reasons = [str(r) for r in frame.stats().recompile_reasons]
    assert not [r for r in reasons if "Generator" in r], reasons
