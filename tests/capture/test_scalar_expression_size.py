"""A Python scalar computed in a loop from itself is an expression the entry
recomputes (``ExprSource``).  Newton's ``x - (x * x + 1) / (2 * x)`` uses ``x``
three times: written out, the expression triples at each iteration (3**n
operations; 10 iterations took seconds to translate, and every guard on it
repeated it).  Past ``scalars.MAX_SIZE`` operations the trace reads the value
instead (a value guard), as it does past ``MAX_DEPTH`` nesting."""
from __future__ import annotations

import frame

from .helpers import assert_same_as_eager


def newton_iterations(x0, n):
    x = x0
    for _ in range(n):
        x = x - (x * x + 1) / (2 * x)      # no real root: x wanders
    return x


def newton_with_tolerance(x0, tol=1e-12, max_iter=9):
    x = x0
    for i in range(max_iter):
        step = (x * x - 2.0) / (2 * x)
        x = x - step
        if abs(step) < tol:
            return x, i
    return x, max_iter


def test_iterated_scalar_expression_same_as_eager():
    for n in (3, 7, 12):
        assert_same_as_eager(newton_iterations, 0.5, n, captured=None)
    assert_same_as_eager(newton_with_tolerance, 1.0, captured=None)
    assert_same_as_eager(newton_with_tolerance, 3.0, 1e-3, captured=None)


def test_iterated_scalar_expression_stays_small():
    out = frame.explain(newton_iterations)(0.5, 7)
    written = sum(len(str(g)) for g in out.guards)
    # 3**7 operations written out were 262,000 characters of guards
    assert written < 20_000, written
