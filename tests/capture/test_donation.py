"""No copy and no allocation in the steady state (issue 13 item 4): a captured
in-place update (an optimizer step's parameters) is computed by the cpu
executable straight into the parameter's own array (input donation,
``CompileOptions.donate``), and graph outputs the caller lets go of are
reused on the next call.  Donation must never be observable: the alias cases
below compare the jitted function with plain Python."""
from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from capture.codegen import set_entry_helper

from .helpers import assert_same_as_eager, last_entry

BACKENDS = ["cpu", None]   # None: the jit's default (the test setting's)


def _train_step(sizes=(64, 256, 256, 10), seed=0):
    frame.manual_seed(seed)
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[2]),
                          nn.ReLU(), nn.Linear(sizes[2], sizes[3]))
    opt = frame.optim.SGD(model.parameters(), lr=0.05)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, step


def _data(sizes=(64, 256, 256, 10), batch=16, seed=1):
    rng = np.random.default_rng(seed)
    return (frame.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32)),
            frame.tensor(rng.integers(0, sizes[-1], batch).astype(np.int64)))


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _counting_copyto(entry):
    calls = []

    def copyto(dst, src, **kwargs):
        calls.append(dst)
        np.copyto(dst, src, **kwargs)
    set_entry_helper(entry.fn, "__copyto", copyto)
    return calls


def test_sgd_step_writes_parameters_in_place_without_a_copy_back():
    model, step = _train_step()
    plain_model, plain_step = _train_step()
    jitted = frame.jit(step, backend="cpu")
    x, y = _data()
    params = [p._data for p in model.parameters()]
    addresses = [_address(a) for a in params]
    jitted(x, y)
    plain_step(x, y)
    copies = _counting_copyto(last_entry(jitted))
    for _ in range(4):
        loss = jitted(x, y)
        want = plain_step(x, y)
    np.testing.assert_allclose(loss.item(), want.item(), rtol=1e-5)
    for p, q in zip(model.parameters(), plain_model.parameters()):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6)
    # the parameters kept their arrays, and nothing was copied back into them
    assert [p._data for p in model.parameters()] == params
    assert [p._data is a for p, a in zip(model.parameters(), params)] == [True] * len(params)
    assert [_address(p._data) for p in model.parameters()] == addresses
    assert copies == [], f"{len(copies)} write-back copies in 4 steps"


def test_steady_state_step_allocates_no_array():
    """Old code: every step allocated the updated parameters and the gradients
    (~1.2 MB here); now the parameters are updated in place and the gradient
    arrays of two steps ago are reused.  What is left are the loss kernel's
    small temporaries (batch x classes: ~20 KB here) and Python objects, besides
    the activations the returned loss keeps for a later ``loss.backward()``
    (its compiled autograd record's saved arrays: eager's loss keeps them too)."""
    model, step = _train_step()
    jitted = frame.jit(step, backend="cpu")
    x, y = _data()
    for _ in range(3):
        jitted(x, y)
    weights = sorted(p._data.nbytes for p in model.parameters() if p._data.ndim == 2)
    assert weights[-2] >= 64 * 1024
    tracemalloc.start()
    try:
        jitted(x, y)  # tracemalloc's own first-call allocations
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        loss = jitted(x, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = sum(a.nbytes for a in loss._grad_fn[0].saved)
    assert peak - before - kept < 48 * 1024, f"{peak - before} bytes allocated by a steady step"


def test_gradients_the_caller_holds_are_never_overwritten():
    model, step = _train_step()
    jitted = frame.jit(step, backend="cpu")
    x, y = _data()
    jitted(x, y)
    held = [p.grad for p in model.parameters()]
    saved = [g.numpy().copy() for g in held]
    views = [g.numpy()[:1] for g in held]
    for _ in range(3):
        jitted(x, y)
        for g, s, v in zip(held, saved, views):
            np.testing.assert_array_equal(g.numpy(), s)
            np.testing.assert_array_equal(v, s[:1])
        assert all(not np.shares_memory(p.grad.numpy(), g.numpy())
                   for p, g in zip(model.parameters(), held))


def test_outputs_let_go_are_reused_and_held_ones_are_not():
    def f(x, y):
        return x @ y + 1.0

    rng = np.random.default_rng(0)
    x = frame.tensor(rng.standard_normal((32, 32)).astype(np.float32))
    y = frame.tensor(rng.standard_normal((32, 32)).astype(np.float32))
    jitted = frame.jit(f, backend="cpu")
    first = jitted(x, y)
    address = _address(first.numpy())
    want = first.numpy().copy()
    kept = [jitted(x, y) for _ in range(4)]   # every result held: all distinct
    assert len({_address(k.numpy()) for k in kept + [first]}) == 5
    np.testing.assert_array_equal(first.numpy(), want)
    del first, kept
    again = [_address(jitted(x, y).numpy()) for _ in range(3)]   # dropped at once: reused
    assert len(set(again)) == 1
    del address


# --------------------------------------------------------------------------- alias cases

def _param(values):
    return frame.tensor(np.asarray(values, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_update_handed_out_as_a_view_and_as_a_new_tensor(backend):
    def f(p, g):
        p -= g * 0.5
        return p.detach(), p * 2.0

    p, g = _param(np.arange(12.0).reshape(3, 4)), _param(np.ones((3, 4)))
    assert_same_as_eager(f, p, g, backend=backend)
    jitted = frame.jit(f, backend=backend)
    for _ in range(2):
        view, doubled = jitted(p, g)
    assert np.shares_memory(view.numpy(), p.numpy())
    assert not np.shares_memory(doubled.numpy(), p.numpy())
    before = doubled.numpy().copy()
    p += 100.0
    np.testing.assert_array_equal(doubled.numpy(), before)


@pytest.mark.parametrize("backend", BACKENDS)
def test_old_value_read_after_the_update(backend):
    def f(p, g):
        old = frame.tensor(p)   # a copy of the old value, read after the update
        p -= g
        return old * 2.0 + p

    assert_same_as_eager(f, _param(np.arange(8.0)), _param(np.full(8, 0.25)), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_the_caller_holds_sees_the_update_as_in_plain_python(backend):
    def f(p, g):
        p -= g * 0.1
        return (p * p).sum()

    for run in (f, frame.jit(f, backend=backend)):
        p, g = _param(np.arange(16.0).reshape(4, 4)), _param(np.ones((4, 4)))
        view = p.numpy()[1:3]
        detached = p.detach()
        for _ in range(3):
            run(p, g)
        np.testing.assert_allclose(view, np.arange(16.0).reshape(4, 4)[1:3] - 0.3, rtol=1e-6)
        np.testing.assert_allclose(detached.numpy(), p.numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_array_passed_as_two_parameters(backend):
    def f(p1, p2, g):
        p1 -= g
        p2 -= g * 2.0
        return p1.sum() + p2.sum()

    p, g = _param(np.arange(6.0)), _param(np.ones(6))
    assert_same_as_eager(f, p, p, g, backend=backend, captured=None)
    q = _param(np.arange(6.0))
    assert_same_as_eager(f, p, q, g, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameter_that_is_a_strided_view(backend):
    def f(p, g):
        p -= g * 2.0
        return p.sum()

    base = np.arange(40.0, dtype=np.float32).reshape(4, 10)
    for run in (f, frame.jit(f, backend=backend)):
        b = base.copy()
        p = frame.Tensor._wrap(b[:, ::2])   # non-contiguous, writeable, shares b
        g = _param(np.ones((4, 5)))
        for _ in range(2):
            run(p, g)
        want = base.copy()
        want[:, ::2] -= 4.0
        np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_same_tensor_passed_as_parameter_and_gradient(backend):
    def f(p, g):
        p -= g * 0.5
        return p.sum()

    p = _param(np.arange(5.0))
    assert_same_as_eager(f, p, p, backend=backend, captured=None)


def test_the_aliasing_guard_remembers_answers_only_for_the_same_objects():
    """``disjoint`` (the guard that written tensors share no memory with other
    inputs) remembers its answer per array objects: the same objects give the
    same answer, and a new object, even at a reused id, is swept again."""
    from capture import codegen
    codegen._DISJOINT_SEEN.clear()
    params = tuple(np.zeros(n, np.float32) for n in (64, 8))
    batch = np.ones(32, np.float32)
    assert codegen.disjoint(params, (batch,) + params)
    assert len(codegen._DISJOINT_SEEN) == 1
    assert codegen.disjoint(params, (batch,) + params)   # remembered
    view = params[0][4:12]                                 # overlaps a written array
    assert not codegen.disjoint(params, (view,) + params)
    assert not codegen.disjoint(params, (view,) + params)
    for _ in range(20):   # new objects, some of them at a dead view's id
        del view
        view = np.ones(8, np.float32) if _ % 2 else params[1][2:4]
        assert codegen.disjoint(params, (view,) + params) is bool(_ % 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("strict", [lambda: np.errstate(over="raise"),
                                    lambda: warnings.catch_warnings(action="error",
                                                                    category=RuntimeWarning)])
def test_a_floating_point_error_after_a_donated_write_raises_once(backend, strict):
    """Under np.errstate(over="raise") an overflow after the in-place update
    raises; a graph that wrote the donated input before raising could not rerun
    the call natively (the update would happen twice): while NumPy raises on
    floating-point errors such an entry runs natively at once."""
    def step(w, x):
        w -= np.float32(1)
        y = x * np.float32(1e38)
        return y.sum()
    jitted = frame.jit(step, backend=backend)
    w, x = np.zeros(4, np.float32), np.ones(4, np.float32)
    with np.errstate(over="ignore"):
        for _ in range(3):
            jitted(w, x)
    assert last_entry(jitted).donate   # the update is computed into w
    outcomes = []
    for fn in (step, jitted):
        w = np.zeros(4, np.float32)
        with strict():
            with pytest.raises((FloatingPointError, RuntimeWarning)) as caught:
                fn(w, x * 10)
        outcomes.append((type(caught.value), str(caught.value), w.tolist()))
    assert outcomes[1] == outcomes[0]
    assert outcomes[0][2] == [-1.0] * 4
    w = np.zeros(4, np.float32)
    small = x * np.float32(1e-3)
    with strict():   # no error: the result, w updated once
        assert jitted(w, small) == step(np.zeros(4, np.float32), small)
    assert w.tolist() == [-1.0] * 4

