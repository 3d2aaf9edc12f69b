"""Autograd under capture (capture/autograd.py): grad-mode blocks without a graph
break, requires_grad as eager has it, ``loss.backward()`` appended to the graph,
``.grad`` reads and writes as side effects with eager's accumulation, and the
cases that stay native (so eager's semantics hold there)."""
from __future__ import annotations

import numpy as np
import pytest

import frame
import frame.nn as nn
from frame.autograd import AutogradError, enable_grad, is_grad_enabled
from frame.hal.errors import FrameValueError

from .helpers import last_entry


def leaf(values, grad=None):
    t = frame.tensor(np.asarray(values, dtype=np.float32)).requires_grad_()
    if grad is not None:
        t.grad = frame.tensor(np.asarray(grad, dtype=np.float32))
    return t


def pair(values, grad=None):
    return leaf(values, grad), leaf(values, grad)


def explain_ok(fn, *args, graphs=1):
    """Captured whole: ``graphs`` graphs (0 when every result is a trace-time
    constant), no graph break, no native fallback."""
    out = frame.explain(fn)(*args)
    assert (out.graph_count, out.graph_break_count) == (graphs, 0), str(out)
    assert not out.break_reasons, str(out)
    return out


def captured(jitted):
    """The last entry of ``jitted``'s cache runs a graph (not the function natively)."""
    entry = last_entry(jitted)
    return not entry.native and not entry.breaks


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)


# --------------------------------------------------------------------------- grad mode

def test_no_grad_block_does_not_break_and_results_do_not_require_grad():
    def f(w, x):
        with frame.no_grad():
            y = w * x
            inside = is_grad_enabled()
        z = w * x
        return y, inside, is_grad_enabled(), y.requires_grad, z.requires_grad

    w, x = leaf([1.0, 2.0]), frame.tensor([3.0, 4.0])
    out = explain_ok(lambda w, x: f(w, x)[1:], w, x, graphs=0)
    assert out.result == (False, True, False, True)
    assert frame.jit(lambda w, x: f(w, x)[:4], backend="cpu")(w, x)[1:] == (False, True, False)


def test_enable_grad_inside_no_grad():
    def f(w):
        with frame.no_grad():
            a = (w * 2).requires_grad
            with enable_grad():
                b = (w * 2).requires_grad
            c = (w * 2).requires_grad
        return a, b, c, is_grad_enabled()

    assert f(leaf([1.0])) == (False, True, False, True)
    assert explain_ok(f, leaf([1.0]), graphs=0).result == (False, True, False, True)


def test_grad_mode_of_the_caller_is_guarded():
    def f(w):
        return (w * 2).requires_grad

    jf = frame.jit(f, backend="cpu")
    w = leaf([1.0])
    assert jf(w) is True
    with frame.no_grad():
        assert jf(w) is False
    assert jf(w) is True


def test_in_place_parameter_update_under_no_grad_is_a_side_effect():
    def f(w, g):
        with frame.no_grad():
            w -= g * 0.5
        return w.requires_grad

    we, wj = pair([1.0, 2.0])
    g = frame.tensor([2.0, 4.0])
    assert f(we, g) is True
    out = explain_ok(f, wj, g)
    assert out.result is True
    close(wj.numpy(), we.numpy())
    assert wj.is_leaf and wj.requires_grad


def test_in_place_update_of_a_leaf_with_grad_on_raises_as_eager():
    def f(w):
        w -= 1.0
        return w

    with pytest.raises(AutogradError):
        f(leaf([1.0]))
    with pytest.raises(AutogradError):
        frame.jit(f, backend="cpu")(leaf([1.0]))


def test_other_context_managers_keep_their_behaviour():
    import contextlib

    def f(x):
        with contextlib.nullcontext():
            y = x * 2
        return y

    x = frame.tensor([1.0, 2.0])
    close(frame.jit(f, backend="cpu")(x).numpy(), [2.0, 4.0])


def test_graph_break_inside_no_grad_block_runs_natively_and_correctly():
    def f(w, x):
        with frame.no_grad():
            y = w * x
            s = y.sum().item()  # data dependent: no break possible inside the with block
        return y * s

    w, x = leaf([1.0, 2.0]), frame.tensor([3.0, 4.0])
    out = frame.jit(f, backend="cpu")(w, x)
    close(out.numpy(), f(w, x).numpy())
    assert not out.requires_grad


# --------------------------------------------------------------------------- requires_grad

def test_requires_grad_mirrors_eager():
    def f(w, x):
        y = w * x
        d = y.detach()
        c = frame.tensor(y)
        i = frame.argmax(y, axis=0)
        return (y.requires_grad, d.requires_grad, c.requires_grad, (x * 2).requires_grad,
                (d * w).requires_grad, i.requires_grad, w.requires_grad)

    w, x = leaf([1.0, 2.0]), frame.tensor([3.0, 4.0])
    assert explain_ok(f, w, x, graphs=0).result == f(w, x)


def test_tensor_requiring_grad_returned_without_backward_carries_a_compiled_record():
    # compiled autograd across the jit boundary (tests/capture/test_jit_autograd.py)
    def f(w, x):
        return w * x

    jf = frame.jit(f, backend="cpu")
    w, x = leaf([1.0, 2.0]), frame.tensor([3.0, 4.0])
    y = jf(w, x)
    assert y.requires_grad and y.grad_fn is not None  # a record, usable later
    assert y.grad_fn.op == "jit"
    y.sum().backward()
    close(w.grad.numpy(), [3.0, 4.0])
    assert captured(jf)


# --------------------------------------------------------------------------- backward, .grad

def test_backward_sets_grad_and_accumulates_into_an_existing_one():
    def f(w, x):
        loss = (w * x).sum()
        loss.backward()
        return w.grad, loss.requires_grad

    x = frame.tensor([3.0, 4.0])
    we, wj = pair([1.0, 2.0])
    ge, _ = f(we, x)
    out = explain_ok(f, wj, x)
    close(out.result[0].numpy(), ge.numpy())
    assert out.result[1] is True
    close(wj.grad.numpy(), [3.0, 4.0])
    # grads present at entry: summed into (a different cache entry: .grad is guarded)
    jf = frame.jit(f, backend="cpu")
    we, wj = pair([1.0, 2.0], grad=[10.0, 20.0])
    old = wj.grad
    f(we, x)
    jf(wj, x)
    close(wj.grad.numpy(), we.grad.numpy())
    close(wj.grad.numpy(), [13.0, 24.0])
    assert wj.grad is not old and old.numpy().tolist() == [10.0, 20.0]  # not written into
    we2, wj2 = pair([1.0, 2.0])
    f(we2, x)
    jf(wj2, x)
    close(wj2.grad.numpy(), we2.grad.numpy())
    assert captured(jf)


def test_two_backward_calls_in_one_step():
    def f(w, x):
        loss = (w * w * x).sum()
        loss.backward()
        loss.backward()
        (w * 3.0).sum().backward()
        return w.grad

    x = frame.tensor([3.0, 4.0])
    we, wj = pair([1.0, 2.0], grad=[1.0, 1.0])
    expected = f(we, x)
    got = explain_ok(f, wj, x).result
    close(got.numpy(), expected.numpy())
    close(wj.grad.numpy(), we.grad.numpy())


def test_grad_reads_and_writes():
    def f(w, v):
        before = w.grad is None
        w.grad = None
        (w * v).sum().backward()
        v.grad = w.grad * 2.0
        return before, w.grad is None

    we, wj = pair([1.0, 2.0], grad=[5.0, 5.0])
    ve, vj = pair([3.0, 4.0])
    assert f(we, ve) == explain_ok(f, wj, vj).result == (False, False)
    for a, b in ((we, wj), (ve, vj)):
        close(b.grad.numpy(), a.grad.numpy())


def test_grad_of_the_wrong_shape_raises_as_eager():
    def f(w):
        w.grad = frame.zeros((3,))

    with pytest.raises(FrameValueError):
        f(leaf([1.0, 2.0]))
    with pytest.raises(FrameValueError) as e:
        frame.jit(f, backend="cpu")(leaf([1.0, 2.0]))
    assert "does not match" in str(e.value)


def test_detached_operand_gets_no_gradient():
    def f(w):
        (w * w.detach()).sum().backward()
        (frame.tensor(w) * w).sum().backward()
        return w.grad

    we, wj = pair([1.0, 2.0])
    expected = f(we)
    close(explain_ok(f, wj).result.numpy(), expected.numpy())
    close(expected.numpy(), [2.0, 4.0])


def test_ops_under_no_grad_do_not_carry_gradient():
    def f(w, x):
        with frame.no_grad():
            s = w * 2.0
        (s * w * x).sum().backward()
        return w.grad

    we, wj = pair([1.0, 2.0])
    x = frame.tensor([3.0, 4.0])
    close(explain_ok(f, wj, x).result.numpy(), f(we, x).numpy())


def test_only_leaves_on_the_loss_path_get_grads():
    def f(a, b, c):
        (a * 2.0).sum().backward()
        d = b * 3.0
        return a.grad, b.grad is None, c.grad is None, d.sum().requires_grad

    args_e = [leaf([1.0]), leaf([1.0]), leaf([1.0])]
    args_j = [leaf([1.0]), leaf([1.0]), leaf([1.0])]
    e = f(*args_e)
    j = explain_ok(f, *args_j).result
    close(j[0].numpy(), e[0].numpy())
    assert j[1:] == e[1:] == (True, True, True)


def test_backward_errors_are_eagers():
    def not_tracked(x):
        (x * 2.0).sum().backward()

    def not_scalar(w):
        (w * 2.0).backward()

    for fn, arg, err in ((not_tracked, frame.tensor([1.0]), AutogradError),
                         (not_scalar, leaf([1.0, 2.0]), Exception)):
        with pytest.raises(err) as eager:
            fn(arg)
        with pytest.raises(err) as jitted:
            frame.jit(fn, backend="cpu")(arg)
        assert str(jitted.value) == str(eager.value)


def test_backward_through_a_value_overwritten_in_place_runs_natively():
    def f(w, x):
        y = (w * x).sum()
        with frame.no_grad():
            x += 1.0
        y.backward()
        return w.grad

    we, wj = pair([1.0, 2.0])
    xe, xj = frame.tensor([3.0, 4.0]), frame.tensor([3.0, 4.0])
    expected = f(we, xe)
    jf = frame.jit(f, backend="cpu")
    got = jf(wj, xj)
    close(got.numpy(), expected.numpy())
    close(xj.numpy(), xe.numpy())
    assert not captured(jf)


def test_non_leaf_input_runs_natively():
    def f(h):
        (h * 2.0).sum().backward()

    we, wj = pair([1.0, 2.0])
    f(we * 1.0)
    jf = frame.jit(f, backend="cpu")
    jf(wj * 1.0)
    close(wj.grad.numpy(), we.grad.numpy())
    assert not captured(jf)


def test_parameters_of_a_module_and_a_sgd_step():
    model_e, model_j = nn.Linear(3, 2), nn.Linear(3, 2)
    for p, q in zip(model_e.parameters(), model_j.parameters()):
        q._data[...] = p._data

    def step(model, opt, x):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    x = frame.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    opt_e = frame.optim.SGD(list(model_e.parameters()), lr=0.1)
    opt_j = frame.optim.SGD(list(model_j.parameters()), lr=0.1)
    le = step(model_e, opt_e, x)
    out = explain_ok(step, model_j, opt_j, x)
    close(out.result.numpy(), le.numpy())
    for p, q in zip(model_e.parameters(), model_j.parameters()):
        close(q.numpy(), p.numpy())
        close(q.grad.numpy(), p.grad.numpy())
