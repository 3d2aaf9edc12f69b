"""Autograd fidelity of what a jitted *training step* returns (docs/compiler.md,
"Compiled autograd across the jit boundary"): a function that runs
``loss.backward()`` (and the optimizer step) inside and returns the loss hands
out a loss that requires grad, has a ``grad_fn`` and is not a leaf, as eager's;
a later ``loss.backward()`` accumulates the same gradients into the same
``.grad`` (or raises the same error).  Every test is differential: the plain
function runs on one copy of the model, the jitted one on another, and the
results, the ``.grad`` of the parameters, the parameters and what a second
backward does must be eager's."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.autograd import AutogradError

from .helpers import assert_gradients_close, last_entry, normal


def _model():
    np.random.seed(3)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


X = normal((5, 4), 1)
Y = np.array([0, 1, 2, 0, 1])


# --------------------------------------------------------------------------- steps

def step_returns_loss(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def step_returns_loss_and_logits(model, opt, x, y):
    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return loss, logits


def step_returns_dict(model, opt, x, y):
    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return {"loss": loss, "logits": logits}


def step_returns_detached(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def step_returns_item(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def step_then_forward_again(model, opt, x, y):
    """The second loss reads the parameters after the update (their next version)."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    after = F.cross_entropy(model(x), y)
    return loss, after


def step_backward_without_optimizer(model, opt, x, y):
    out = model(x)
    loss = (out * out).mean()
    loss.backward()
    return loss, out


def step_logs_the_loss(model, opt, x, y):
    """A graph break after the backward (``.item()``, ``print``): the loss is
    live at the break and reaches the resume function with its record."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print("loss", round(loss.item(), 2))
    opt.step()
    return loss


STEPS = [step_returns_loss, step_returns_loss_and_logits, step_returns_dict,
         step_returns_detached, step_returns_item, step_then_forward_again,
         step_backward_without_optimizer, step_logs_the_loss]

OPTIMIZERS = {
    "sgd": lambda params: frame.optim.SGD(params, lr=0.1),
    "sgd_momentum": lambda params: frame.optim.SGD(params, lr=0.1, momentum=0.9),
    "adam": lambda params: frame.optim.Adam(params, lr=0.01),
}


# --------------------------------------------------------------------------- observations

def _tensors(result) -> list:
    if isinstance(result, frame.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _tensors(r)]
    if isinstance(result, dict):
        return [t for r in result.values() for t in _tensors(r)]
    return []


def _describe(result):
    """What the caller can see of a result: values, types, autograd state."""
    if isinstance(result, frame.Tensor):
        return ("tensor", result.numpy().copy(), result.requires_grad, result.is_leaf,
                result.grad_fn is not None)
    if isinstance(result, (tuple, list)):
        return (type(result).__name__, [_describe(r) for r in result])
    if isinstance(result, dict):
        return ("dict", {k: _describe(v) for k, v in result.items()})
    return (type(result).__name__, result)


def _second_backwards(result, model) -> list:
    """``backward`` on each returned tensor (a non-scalar one with ``ones``), in
    order: what happens, and the parameters' ``.grad`` afterwards."""
    seen = []
    for t in _tensors(result):
        try:
            t.backward(None if t.ndim == 0 else frame.ones(t.shape, dtype=t.dtype))
            outcome = ("ok",)
        except AutogradError as e:
            outcome = ("raises", type(e).__name__, str(e).split(":")[0])
        seen.append((outcome, [None if p.grad is None else p.grad.numpy().copy()
                               for p in model.parameters()]))
    return seen


def _same(a, b, what) -> None:
    if isinstance(a, np.ndarray):
        assert_gradients_close(a, b, what)
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{what}: {a!r} vs {b!r}"
        for k, (u, v) in enumerate(zip(a, b)):
            _same(u, v, f"{what}[{k}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), what
        for k in a:
            _same(a[k], b[k], f"{what}[{k!r}]")
    elif isinstance(a, float):
        assert type(b) is float, f"{what}: {b!r}"
        assert_gradients_close(np.float32(a), np.float32(b), what)
    else:
        assert a == b, f"{what}: {a!r} vs {b!r}"


def _twins(step, make_opt, calls=3, backward_again=True):
    """Run ``step`` plainly on one model and jitted on a copy, ``calls`` times,
    then ``backward`` again on what each call returned; every observation
    must agree."""
    eager_model = _model()
    jit_model = copy.deepcopy(eager_model)
    eager_opt = make_opt(list(eager_model.parameters()))
    jit_opt = make_opt(list(jit_model.parameters()))
    jitted = frame.jit(step)
    x, y = frame.tensor(X), frame.tensor(Y)
    for call in range(calls):
        native = step(eager_model, eager_opt, x, y)
        result = jitted(jit_model, jit_opt, x, y)
        entry = last_entry(jitted)
        assert not entry.native and entry.graph is not None, entry.reason
        _same(_describe(native), _describe(result), f"call {call}: result")
        if backward_again:
            _same(_second_backwards(native, eager_model), _second_backwards(result, jit_model),
                  f"call {call}: backward on the result")
        for k, (p, q) in enumerate(zip(eager_model.parameters(), jit_model.parameters())):
            assert_gradients_close(p.numpy(), q.numpy(), f"call {call}: parameter {k}")
            assert q.requires_grad and q.is_leaf
    return jitted


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.__name__)
def test_step_results_carry_eagers_autograd_state(step):
    _twins(step, OPTIMIZERS["sgd"])


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_loss_of_a_training_step_backward_again_like_eager(opt):
    _twins(step_returns_loss, OPTIMIZERS[opt], calls=4)


def test_step_is_one_graph_and_its_loss_has_a_compiled_record():
    jitted = _twins(step_returns_loss, OPTIMIZERS["sgd"], calls=2, backward_again=False)
    entry = last_entry(jitted)
    assert entry.backward is not None
    model = _model()
    opt = OPTIMIZERS["sgd"](list(model.parameters()))
    explained = frame.explain(step_returns_loss)(model, opt, frame.tensor(X), frame.tensor(Y))
    assert explained.graph_count == 1 and explained.break_reasons == []


def test_step_with_a_break_after_the_backward_compiles_both_sides():
    _twins(step_logs_the_loss, OPTIMIZERS["sgd"], calls=2)
    model = _model()
    opt = OPTIMIZERS["sgd"](list(model.parameters()))
    explained = frame.explain(step_logs_the_loss)(model, opt, frame.tensor(X), frame.tensor(Y))
    assert explained.graph_count == 2
    assert explained.backward_graph_count == 1


def test_loss_backward_twice_after_the_step_accumulates_twice():
    eager_model = _model()
    jit_model = copy.deepcopy(eager_model)
    x, y = frame.tensor(X), frame.tensor(Y)
    jitted = frame.jit(step_returns_loss)
    warm = copy.deepcopy(eager_model)
    jitted(warm, OPTIMIZERS["sgd"](list(warm.parameters())), x, y)  # traced and compiled
    grads = []
    for model, fn in ((eager_model, step_returns_loss), (jit_model, jitted)):
        opt = OPTIMIZERS["sgd"](list(model.parameters()))
        loss = fn(model, opt, x, y)
        loss.backward()
        loss.backward()
        grads.append([p.grad.numpy().copy() for p in model.parameters()])
    assert last_entry(jitted).backward is not None
    for k, (a, b) in enumerate(zip(*grads)):
        assert_gradients_close(a, b, f"grad {k}")


# --------------------------------------------------------------------------- versions

def _square_step(w, x):
    """The gradient of w * w reads w itself: after the update a second
    backward needs w's old version."""
    loss = (w * w * x).sum()
    loss.backward()
    with frame.no_grad():
        w -= 0.1 * w.grad
    return loss


def _linear_step(w, x):
    """The gradient of x @ w reads x only: w may change."""
    loss = (x @ w).sum()
    loss.backward()
    with frame.no_grad():
        w -= 0.1 * w.grad
    return loss


@pytest.mark.parametrize("fn", [_square_step, _linear_step], ids=lambda f: f.__name__)
def test_second_backward_after_an_in_place_update_in_the_function_like_eager(fn):
    x = frame.tensor(normal((3, 3), 5))
    jitted = frame.jit(fn)
    outcomes = []
    for call in (fn, jitted, jitted):
        w = frame.tensor(normal((3, 3), 6), requires_grad=True)
        loss = call(w, x)
        version = w._version.value
        try:
            loss.backward()
            outcomes.append(("ok", version, w.grad.numpy().round(4).tolist(),
                             w.numpy().round(4).tolist()))
        except AutogradError as e:
            outcomes.append(("raises", version, str(e).split(":")[0]))
    assert outcomes[1] == outcomes[0] and outcomes[2] == outcomes[0]
    assert outcomes[0][0] == ("raises" if fn is _square_step else "ok")


def test_update_in_the_function_bumps_the_version_like_eager():
    """A record made before the jitted update reads the updated parameter:
    a backward through it raises as in eager (the version was bumped)."""
    def update(w, g):
        with frame.no_grad():
            w -= g
            w *= 0.5

    x = frame.tensor(normal((3,), 7))
    jitted = frame.jit(update)
    outcomes = []
    for call in (update, jitted, jitted):
        w = frame.tensor(normal((3,), 8), requires_grad=True)
        y = (w * w).sum()
        call(w, x)
        try:
            y.backward()
            outcomes.append(("ok", w._version.value))
        except AutogradError as e:
            outcomes.append(("raises", w._version.value, str(e).split(":")[0]))
    assert outcomes == [("raises", 2, "backward")] * 3


# --------------------------------------------------------------------------- grad mode

def test_step_under_no_grad_raises_like_eager():
    x, y = frame.tensor(X), frame.tensor(Y)
    jitted = frame.jit(step_returns_loss)
    outcomes = []
    for fn in (step_returns_loss, jitted, jitted):
        model = _model()
        opt = OPTIMIZERS["sgd"](list(model.parameters()))
        with frame.no_grad():
            try:
                fn(model, opt, x, y)
                outcomes.append("ok")
            except AutogradError as e:
                outcomes.append(("raises", str(e).split(":")[0]))
        assert all(p.grad is None for p in model.parameters())
    assert outcomes == [("raises", "backward")] * 3


def test_forward_under_no_grad_then_step():
    """The same jitted function under no_grad (no record) and then in grad mode."""
    def forward_loss(model, x, y):
        loss = F.cross_entropy(model(x), y)
        return loss

    x, y = frame.tensor(X), frame.tensor(Y)
    model = _model()
    jitted = frame.jit(forward_loss)
    with frame.no_grad():
        out = jitted(model, x, y)
        ref = forward_loss(model, x, y)
    assert not out.requires_grad and out.is_leaf and out.grad_fn is None
    assert not ref.requires_grad
    assert_gradients_close(ref.numpy(), out.numpy())
    _twins(step_returns_loss, OPTIMIZERS["sgd"], calls=2)


def test_a_relu_result_is_recomputed_not_saved():
    """The record saves what a second backward needs; relu's result is computed
    again from its (saved) input instead of being one more output of every
    call (``capture/autograd.py``, RECOMPUTE), and the second backward is still
    eager's."""
    native_model = _model()
    jit_model = copy.deepcopy(native_model)
    x = frame.tensor(normal((5, 4)))
    y = frame.tensor(np.array([0, 1, 2, 0, 1]))

    def step_of(model):
        def step(x, y):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            return loss
        return step
    native, jitted = step_of(native_model), frame.jit(step_of(jit_model))
    for _ in range(2):
        want, got = native(x, y), jitted(x, y)
    record = got._grad_fn[0]  # (the record, the index of this result among its outputs)
    saved_shapes = sorted(a.shape for a in record.saved)
    # the pre-activation (5, 8) and the logits (5, 3): not relu's (5, 8) result too
    assert saved_shapes.count((5, 8)) == 1, saved_shapes
    want.backward()
    got.backward()
    for p, q in zip(native_model.parameters(), jit_model.parameters()):
        assert_gradients_close(p.grad.numpy(), q.grad.numpy(), "second backward")
