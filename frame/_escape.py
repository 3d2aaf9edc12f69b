"""The explicit escape API of ``frame.jit``: ``frame.graph_break()`` and
``frame.disable``.

Both are plain Python here -- eagerly ``graph_break()`` does nothing and a
disabled function is an ordinary call.  Capture recognises them by the marker
``__frame_escape__`` (``"graph_break"`` / ``"disable"``) on the function it is
about to inline, and breaks the graph at that call: the code before and after it
is compiled as usual, the call itself runs natively.
"""
from __future__ import annotations

import functools

__all__ = ["graph_break", "disable"]


def graph_break() -> None:
    """Force a graph break at this call inside a jitted function.

    Eagerly a no-op.  Under ``frame.jit`` the graph so far is compiled, this
    call runs natively, and the rest of the function is captured again (as a
    resume function): one break, two graphs.  With ``full_graph=True`` it
    raises ``frame.GraphBreakError`` like any break.

    >>> @frame.jit
    ... def f(x):
    ...     y = x * 2
    ...     frame.graph_break()
    ...     return y + 1
    """


graph_break.__frame_escape__ = "graph_break"


def disable(fn=None):
    """Decorator: ``fn`` always runs natively (like ``torch.compiler.disable``).

    Called from a jitted function, the call is a graph break: the caller's code
    before and after it is compiled, ``fn`` itself runs in Python with every op
    on the eager path.  ``frame.jit(fn)`` of a disabled function runs it
    natively too.  Usable as ``@frame.disable`` or ``frame.disable(fn)``.
    """
    if fn is None:
        return disable
    if not callable(fn):
        raise TypeError(f"frame.disable expects a callable, got {type(fn).__name__}")

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        return fn(*args, **kwargs)

    disabled.__frame_escape__ = "disable"
    return disabled
