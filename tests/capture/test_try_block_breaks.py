"""Graph breaks inside ``try`` blocks and ``with`` blocks of real managers.

A break inside a ``try`` (or a ``with``: it has an exception handler too) used
to run the whole call natively ("no graph break here: inside a try block"):
the native instruction ran in the entry, outside the frame's exception table.
Now the entry catches what the native instruction (or the truth test of its
result) raises and continues in a resume function at the innermost handler,
with the stack cut to the handler's depth, the raising offset when the
handler asks for it (``RERAISE`` puts the frame back there, so the table finds
the outer handlers) and the exception: ``except``, ``else``, ``finally``,
re-raising, a lock's and ``np.errstate``'s ``__exit__`` all run as in the
plain frame (capture/breaks.py ``BreakEnd.handled``).  Code inside an
``except``/``finally`` block run for an exception still gets no break: the
exception it handles is the frame's state.

Each function prints to a file whose every other write raises, so both the
normal and the exceptional path run; results, the printed lines, the
arguments after the call, the exceptions (type, message, context, the
innermost line of the traceback) and the lock's state are compared."""
from __future__ import annotations

import sys
import threading
import traceback

import numpy as np
import pytest

import frame

from .helpers import assert_same, resolved_backend


class Sink:
    """A file whose every second line raises ``OSError``."""

    def __init__(self):
        self.lines = []
        self.writes = 0

    def write(self, text):
        if text.strip():
            self.writes += 1
            if self.writes % 2 == 0:
                raise OSError("disk full")
            self.lines.append(text)

    def __repr__(self):
        return f"Sink({self.lines!r})"


def except_else(x, sink):
    y = x * 2
    try:
        print(float(y.sum()), file=sink)
        z = y + 1
    except OSError as e:
        z = y - 1
        msg = str(e)
    else:
        msg = "ok"
    return z * 3, msg


def with_finally(x, sink, log):
    y = x * 2
    try:
        print(float(y.sum()), file=sink)
        r = y + 1
    finally:
        log.append("cleanup")
    return r


def in_a_loop(xs, sink):
    out = []
    for x in xs:
        try:
            print(x.sum().item(), file=sink)
            out.append("printed")
        except OSError:
            out.append("failed")
            continue
        out.append(float(x.sum()))
    return out


def reraise_other(x, sink):
    try:
        print(float(x.sum()), file=sink)
    except OSError:
        raise ValueError("could not log")
    return x


def nested_tries(x, sink):
    try:
        try:
            print(float(x.sum()), file=sink)
            v = 1
        except KeyError:
            v = 2
    except OSError:
        v = 3
    return v, x * v


def handler_reads_exc_info(x, sink):
    try:
        print(float(x.sum()), file=sink)
        return "none", sys.exc_info()[0]
    except OSError:
        return "os", sys.exc_info()[0]


LOCK = threading.Lock()


def under_a_lock(x, sink):
    y = x + 1
    with LOCK:
        print(float(y.sum()), file=sink)
        y = y * 2
    return y, LOCK.locked()


def under_errstate(a, b, sink):
    with np.errstate(divide="ignore"):
        r = a / b
        print(int(np.isinf(r).sum()), file=sink)
    return r


def _ones():
    return frame.tensor(np.ones(3, np.float32))


CASES = [
    (except_else, lambda sink: (_ones(), sink)),
    (with_finally, lambda sink: (_ones(), sink, [])),
    (in_a_loop, lambda sink: ([frame.tensor(np.full(2, v, np.float32)) for v in (1, 2, 3, 4, 5)],
                              sink)),
    (reraise_other, lambda sink: (_ones(), sink)),
    (nested_tries, lambda sink: (_ones(), sink)),
    (handler_reads_exc_info, lambda sink: (_ones(), sink)),
    (under_a_lock, lambda sink: (_ones(), sink)),
    (under_errstate, lambda sink: (np.array([1.0, 0.0]), np.array([0.0, 1.0]), sink)),
]


def _run(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        frames = [(f.name, f.lineno) for f in traceback.extract_tb(e.__traceback__)
                  if f.filename == __file__]
        # the innermost line, and the functions passed through (a handler's
        # re-raise may add one more entry for its frame in the plain run)
        return None, (type(e), str(e), type(e.__context__), frames[-1], {n for n, _ in frames})


@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_break_in_a_try_or_with_block_matches_plain(fn, make):
    backend = resolved_backend()
    jitted = frame.jit(fn)
    native_sink, jit_sink = Sink(), Sink()
    for _ in range(4):   # every other call takes the exceptional path
        native_args, jit_args = make(native_sink), make(jit_sink)
        native, native_exc = _run(fn, native_args)
        got, got_exc = _run(jitted, jit_args)
        assert got_exc == native_exc
        assert_same(native, got, backend=backend)
        assert_same(native_args[:-1] if native_args[-1] is native_sink else native_args,
                    jit_args[:-1] if jit_args[-1] is jit_sink else jit_args, "args after the call",
                    backend=backend)
        assert not LOCK.locked()
    assert native_sink.lines == jit_sink.lines and native_sink.writes == jit_sink.writes
    assert not jitted._frame_cache.entries[0].native, jitted._frame_cache.entries[0].reason
    out = frame.explain(fn)(*make(Sink()))
    assert out.graph_count >= 1, out
    assert not any("no graph break here" in r.reason for r in out.break_reasons), out.break_reasons


def inside_except(x, sink):
    try:
        raise KeyError("k")
    except KeyError:
        v = float(x.sum())     # a break here would lose the exception being handled
        return v, sys.exc_info()[0]


def test_a_break_inside_an_except_block_still_runs_natively():
    jitted = frame.jit(inside_except)
    native = inside_except(_ones(), Sink())
    got = jitted(_ones(), Sink())
    assert_same(native, got, backend=resolved_backend())
    entry = jitted._frame_cache.entries[0]
    assert entry.native and "inside an except, finally or with-exit block" in entry.reason.reason
