"""One recording mechanism for eager and captured autograd (issue 14 item 4):
capture's tracer is a level of the op-handler stack whose tape is eager's, and
``backward`` / ``frame.grad`` under capture run eager's code on the records it
leaves.  Differential tests (jitted vs plain) for what that sharing gives,
and the stack itself."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.autograd import tape as tape_module
from frame.functions import _core
from frame.runtime import eager as eager_runtime

from .helpers import last_entry


def leaf(values):
    return frame.tensor(np.asarray(values, dtype=np.float32)).requires_grad_()


def captured(jitted):
    entry = last_entry(jitted)
    return not entry.native and not entry.breaks


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)


def weighted_backward(w, x, g):
    y = (w * x).tanh() * w
    y.backward(gradient=g)
    return w.grad


def test_backward_with_a_gradient_tensor_is_captured_as_eager_computes_it():
    x = frame.tensor([0.5, -1.0, 2.0])
    g = frame.tensor([1.0, 2.0, -3.0])
    we, wj = leaf([1.0, 2.0, 3.0]), leaf([1.0, 2.0, 3.0])
    expected = weighted_backward(we, x, g)
    jf = frame.jit(weighted_backward, backend="cpu")
    got = jf(wj, x, g)
    close(got.numpy(), expected.numpy())
    assert captured(jf)
    # accumulation into the existing .grad, as eager does
    expected = weighted_backward(we, x, g)
    got = jf(wj, x, g)
    close(got.numpy(), expected.numpy())
    close(wj.grad.numpy(), we.grad.numpy())
    assert captured(jf) and not wj.grad.requires_grad


def test_backward_gradient_of_the_wrong_shape_raises_as_eager():
    x = frame.tensor([0.5, -1.0, 2.0])
    g = frame.tensor([1.0, 2.0])
    with pytest.raises(frame.hal.errors.FrameValueError) as native:
        weighted_backward(leaf([1.0, 2.0, 3.0]), x, g)
    with pytest.raises(frame.hal.errors.FrameValueError) as jitted:
        frame.jit(weighted_backward, backend="cpu")(leaf([1.0, 2.0, 3.0]), x, g)
    assert str(jitted.value) == str(native.value)


def test_backward_gradient_of_another_dtype_runs_natively_and_correctly():
    x = frame.tensor([0.5, -1.0, 2.0])
    g = frame.tensor(np.array([1.0, 2.0, -3.0]))  # float64: eager casts it
    expected = weighted_backward(leaf([1.0, 2.0, 3.0]), x, g)
    jf = frame.jit(weighted_backward, backend="cpu")
    close(jf(leaf([1.0, 2.0, 3.0]), x, g).numpy(), expected.numpy())
    assert last_entry(jf).native


def test_the_tracer_level_records_eager_records():
    """Under capture, ops on a tensor that requires grad leave the eager tape's
    ``Record``s (one class, one code path), made by the tracer level's tape."""
    def f(w, x):
        (w * x).sum().backward()
        return w.grad

    original = tape_module.Tape.apply
    records = []

    def spy(self, run, op, arrays, attrs):
        out = original(self, run, op, arrays, attrs)
        records.append((type(self).__name__, op, [type(t._grad_fn[0]).__name__ for t in out
                                                  if t._grad_fn is not None]))
        return out

    x = frame.tensor([3.0, 4.0])
    tape_module.Tape.apply = spy
    try:
        jf = frame.jit(f, backend="cpu")
        got = jf(leaf([1.0, 2.0]), x)
        traced = list(records)
        records.clear()
        expected = f(leaf([1.0, 2.0]), x)
    finally:
        tape_module.Tape.apply = original
    close(got.numpy(), expected.numpy())
    assert captured(jf)
    assert traced == [("CaptureTape", "mul", ["Record"]), ("CaptureTape", "sum", ["Record"])]
    assert records == [("Tape", "mul", ["Record"]), ("Tape", "sum", ["Record"])]


def test_levels_stack_and_unwind():
    calls = []

    def outer(op, arrays, attrs):
        calls.append(("outer", op))
        return eager_runtime.run_op(op, arrays, attrs)

    def inner(op, arrays, attrs):
        calls.append(("inner", op))
        return eager_runtime.run_op(op, arrays, attrs)

    base = _core.current_level()
    with _core.op_handler(outer):
        frame.add(frame.tensor([1.0]), 1.0)
        with _core.op_handler(inner):
            frame.add(frame.tensor([1.0]), 1.0)
        frame.add(frame.tensor([1.0]), 1.0)
    assert _core.current_level() is base
    assert [c[0] for c in calls] == ["outer", "inner", "outer"]


def leaf_updated_between_uses(w, x):
    y = w + x                  # the gradient of add does not read w's value
    with frame.no_grad():
        w -= 0.5               # a new version of the leaf
    z = w * x
    (y.sum() + z.sum()).backward()
    return w.grad


def leaf_updated_after_use(w, x):
    y = w * x                  # the gradient with respect to x reads w: but only w's is asked
    z = (y * w).sum()          # ... and this one reads w at version 0
    with frame.no_grad():
        w -= 0.5
    z.backward()
    return w.grad


def test_a_leaf_updated_in_place_between_uses_is_captured_with_eager_version_checks():
    """Eager's version counters decide (one record, one check): a backward that
    does not read the overwritten version is captured, and sums the gradients
    of both versions of the leaf."""
    x = frame.tensor([3.0, 4.0])
    we, wj = leaf([1.0, 2.0]), leaf([1.0, 2.0])
    expected = leaf_updated_between_uses(we, x)
    jf = frame.jit(leaf_updated_between_uses, backend="cpu")
    got = jf(wj, x)
    close(got.numpy(), expected.numpy())
    close(wj.numpy(), we.numpy())
    assert captured(jf)


def test_a_backward_reading_an_overwritten_version_raises_as_eager():
    x = frame.tensor([3.0, 4.0])
    with pytest.raises(tape_module.AutogradError) as native:
        leaf_updated_after_use(leaf([1.0, 2.0]), x)
    with pytest.raises(tape_module.AutogradError) as jitted:
        frame.jit(leaf_updated_after_use, backend="cpu")(leaf([1.0, 2.0]), x)
    assert str(jitted.value) == str(native.value)
