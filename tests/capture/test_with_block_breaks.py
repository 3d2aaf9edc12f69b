"""Graph breaks inside ``with frame.no_grad()`` / ``frame.enable_grad()`` blocks.

An evaluation loop written as in every PyTorch tutorial -- ``with no_grad():``
around a loop that reads ``.item()`` per batch -- used to run the whole call
natively ("no graph break here: inside a try block": a with block has an
exception handler).  Now the entry enters a real grad-mode block again at the
break (the native instruction runs in the block's mode) and hands its
``__exit__`` to the resume function; what the native instruction raises goes
to the block's handler in a resume function (codegen ``_Rebuilder.reenter``,
breaks ``BreakEnd.handled``; docs/capture.md "Graph breaks").

Each test compares the jitted function with the plain one (results, grad
flags seen inside the block, exceptions) and checks that frame's grad mode
after the call is the caller's, in both."""
from __future__ import annotations

import numpy as np
import pytest

import frame
import frame.nn as nn
from frame.autograd.tape import enable_grad, is_grad_enabled

from .helpers import assert_same, resolved_backend


def _model():
    frame.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _batches(seed, n=3):
    rng = np.random.default_rng(seed)
    xs = [frame.tensor(rng.standard_normal((4, 6)).astype(np.float32)) for _ in range(n)]
    ys = [frame.tensor(rng.integers(0, 3, 4)) for _ in range(n)]
    return xs, ys


MODEL = _model()


def evaluate(xs, ys):
    correct, total, flags = 0, 0, []
    with frame.no_grad():
        for xb, yb in zip(xs, ys):
            out = MODEL(xb)
            pred = out.argmax(axis=1)
            correct += (pred == yb).sum().item()
            total += pred.shape[0]
            flags.append((is_grad_enabled(), out.requires_grad))
    return correct / total, flags, MODEL(xs[0]).requires_grad, is_grad_enabled()


def nested_modes(x):
    with frame.no_grad():
        a = MODEL(x).sum().item()
        with enable_grad():
            b = MODEL(x).sum()
            c = b.item()
            inner = b.requires_grad, is_grad_enabled()
        after_inner = MODEL(x).requires_grad, is_grad_enabled()
    return a, c, inner, after_inner, MODEL(x).requires_grad


def raises_later(x):
    with frame.no_grad():
        v = MODEL(x).sum().item()
        if v > 0:
            raise ValueError(f"positive: {v > 0}")
    return v


class Sink:
    """A file whose ``write`` raises on its second line."""

    def __init__(self):
        self.lines = []

    def write(self, text):
        if text.strip():
            if self.lines:
                raise OSError("disk full")
            self.lines.append(text)


def native_instruction_raises(x, sink):
    with frame.no_grad():
        y = MODEL(x) * 2
        print(y.sum() > 0, file=sink)      # a break; the second call's write raises
        z = y.sum()
    return z


def _check(fn, *arg_lists):
    backend = resolved_backend()
    jitted = frame.jit(fn)
    for args in arg_lists:
        try:
            native, native_exc = fn(*args), None
        except Exception as e:  # noqa: BLE001 - compared below
            native, native_exc = None, e
        assert is_grad_enabled()
        try:
            got, got_exc = jitted(*args), None
        except Exception as e:  # noqa: BLE001
            got, got_exc = None, e
        assert is_grad_enabled(), "the jitted call left frame's grad mode changed"
        assert (type(got_exc), str(got_exc)) == (type(native_exc), str(native_exc))
        assert_same(native, got, backend=backend)
    return jitted


def _graphs_and_breaks(fn, *args):
    out = frame.explain(fn)(*args)
    assert out.exception is None or isinstance(out.exception, Exception)
    return out


def test_evaluation_loop_under_no_grad_compiles():
    _check(evaluate, _batches(0), _batches(1), _batches(2, n=5))
    out = _graphs_and_breaks(evaluate, *_batches(3))
    assert out.graph_count >= 1
    assert not any("no graph break here" in r.reason for r in out.break_reasons), \
        [r.reason for r in out.break_reasons]


def test_nested_grad_modes_with_breaks_in_both_blocks():
    rng = np.random.default_rng(4)
    xs = [(frame.tensor(rng.standard_normal((2, 6)).astype(np.float32)),) for _ in range(3)]
    _check(nested_modes, *xs)
    out = _graphs_and_breaks(nested_modes, *xs[0])
    assert out.graph_count >= 1
    assert not any("try block" in r.reason for r in out.break_reasons)


def test_an_exception_later_in_the_block_leaves_it_in_both():
    rng = np.random.default_rng(5)
    x = frame.tensor(rng.standard_normal((2, 6)).astype(np.float32))
    _check(raises_later, (x,), (-x,), (x,), (-x,))


def test_an_exception_of_the_native_instruction_leaves_the_blocks():
    rng = np.random.default_rng(6)
    x = frame.tensor(rng.standard_normal((2, 6)).astype(np.float32))
    native_sink, jit_sink = Sink(), Sink()
    jitted = frame.jit(native_instruction_raises)
    first = native_instruction_raises(x, native_sink)
    assert_same(first, jitted(x, jit_sink), backend=resolved_backend())
    with pytest.raises(OSError, match="disk full"):
        native_instruction_raises(x, native_sink)
    assert is_grad_enabled()
    with pytest.raises(OSError, match="disk full"):
        jitted(x, jit_sink)
    assert is_grad_enabled(), "the entry did not leave the no_grad block it entered again"
    assert native_sink.lines == jit_sink.lines
    entry = jitted._frame_cache.entries[0]
    assert entry.breaks and not entry.native


def test_the_caller_mode_is_restored_inside_an_outer_no_grad():
    """Called inside the caller's no_grad block: the function's blocks restore
    that mode (disabled), not the enabled default."""
    xs, ys = _batches(7)
    with frame.no_grad():
        native = evaluate(xs, ys)
        assert not is_grad_enabled()
        got = frame.jit(evaluate)(xs, ys)
        assert not is_grad_enabled()
    assert_same(native, got, backend=resolved_backend())


ENTERED = []


class Managed:
    def __enter__(self):
        ENTERED.append(1)
        return self

    def __exit__(self, *exc):
        return False


def user_manager_block(x):
    with Managed():
        v = x.sum().item()
    return v * 2


def test_a_user_managers_block_breaks_and_enters_once():
    """The user's ``__enter__`` is inlined (its side effects replayed once);
    the resume function gets the manager's real ``__exit__``."""
    x = frame.tensor(np.arange(3, dtype=np.float32))
    before = len(ENTERED)
    jitted = _check(user_manager_block, (x,), (x + 1,))
    assert len(ENTERED) == before + 4       # once per call, natively and jitted
    assert not jitted._frame_cache.entries[0].native


def try_block(x):
    try:
        with frame.no_grad():
            v = x.sum().item()
    except ValueError:
        v = 0.0
    return v


def test_a_try_around_the_block_breaks_too():
    x = frame.tensor(np.arange(3, dtype=np.float32))
    jitted = _check(try_block, (x,), (x * 2,))
    assert not jitted._frame_cache.entries[0].native


def test_resume_code_inside_a_block_keeps_the_handler_depths():
    """A continuation strictly inside a with block jumps past the block's
    start: the resume code keeps the original's handler depths and stack size
    (the bytecode package's flow analysis gave a depth of 32768 there, and
    the handler then ran on the wrong stack)."""
    import dis

    from capture.resume import resume_code

    code = nested_modes.__code__
    offset = next(i.offset for i in dis.get_instructions(code)
                  if i.opname == "STORE_FAST" and i.argval == "a")
    stack = ("_resume_stack0_", "_resume_stack1_")
    rcode = resume_code(code, offset, (True, True), ("x",), stack)
    depths = sorted({e.depth for e in dis.Bytecode(code).exception_entries})
    assert sorted({e.depth for e in dis.Bytecode(rcode).exception_entries}) == depths
    assert rcode.co_stacksize == code.co_stacksize
