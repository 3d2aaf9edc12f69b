"""A graph break at a data-dependent test resumes after the jump, on every
Python: the entry tests the value and jumps natively (3.11/3.12 break at the
``POP_JUMP_IF_*``; 3.13 at the ``TO_BOOL`` or ``COMPARE_OP``-with-bool before
it, capture/handlers.py ``_jump_ways``).  Resuming between the two would hand
the bool to a resume function specialised per bool value, whose other failing
guards (scalars that should become dynamic) hide behind the bool's: a
bisection loop recompiled 7 times on 3.13 (3 on 3.11/3.12)."""
from __future__ import annotations

import numpy as np

import frame

from .helpers import assert_same_as_eager
from .test_corpus_programs import bisection_on_polynomial


def _bool_specialised(reasons) -> list:
    return [r for (_, r) in reasons if r.startswith("<a value computed") and
            (" is True" in r or " is False" in r)]


def test_bisection_recompiles_as_on_every_python(compile_counter):
    args = (np.array([1.0, -6.0, 11.0, -6.0]), 2.5, 4.0)
    for _ in range(3):
        assert_same_as_eager(bisection_on_polynomial, *args, captured=None)
    stats = frame.stats()
    assert _bool_specialised(stats.recompile_reasons) == []
    assert (compile_counter.translations, compile_counter.recompiles) == (7, 3)


def sign_walk(x, steps):
    for _ in range(steps):
        if x.sum() > 0:          # data-dependent: a break every step, both ways taken
            x = x - 1.5
        else:
            x = x + 1.0
        if not x.mean() < 5:     # TO_BOOL (3.13) / the jump (3.11, 3.12)
            break
    return x


def test_loop_with_data_dependent_branches_is_not_specialised_per_bool(compile_counter):
    for start in (0.25, -0.5, 3.0, 0.25):
        assert_same_as_eager(sign_walk, np.full(4, start), 12, captured=None)
    assert _bool_specialised(frame.stats().recompile_reasons) == []
    assert compile_counter.graph_breaks.get("recompile_limit", 0) == 0
