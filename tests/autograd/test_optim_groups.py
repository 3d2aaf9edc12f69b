"""frame.optim's parameter groups, weight decay and learning-rate schedules,
as PyTorch's optimizers have them: eager against the update rules written in
NumPy, jitted steps against eager, and the errors for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.errors import FrameTypeError, FrameValueError


def quadratic_params():
    """Two parameters with the gradient ``2 * w`` (loss ``sum(w * w)``)."""
    a = nn.Parameter(frame.tensor(np.array([0.5, -1.0, 2.0], np.float32)))
    b = nn.Parameter(frame.tensor(np.array([[1.5, -0.25]], np.float32)))
    return a, b


def run(opt, params, steps):
    for _ in range(steps):
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        opt.step()
    return [p.numpy().copy() for p in params]


def numpy_sgd(w, steps, lr, momentum=0.0, weight_decay=0.0, dampening=0.0, nesterov=False,
              maximize=False):
    """PyTorch's SGD update rule (its documentation's pseudo-code) in NumPy."""
    w, buf = w.copy(), None
    for _ in range(steps):
        g = (2 * w).astype(np.float32)
        if maximize:
            g = -g
        if weight_decay:
            g = g + w * np.float32(weight_decay)
        if momentum:
            buf = g if buf is None else buf * np.float32(momentum) + g * np.float32(1 - dampening)
            g = g + buf * np.float32(momentum) if nesterov else buf
        w = w - g * np.float32(lr)
    return w


def numpy_adam(w, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
               maximize=False, decoupled=False):
    """PyTorch's Adam (``decoupled``: AdamW) update rule in NumPy."""
    w = w.copy()
    m = v = v_max = np.zeros_like(w)
    b1, b2 = betas
    for t in range(1, steps + 1):
        g = (2 * w).astype(np.float32)
        if maximize:
            g = -g
        if weight_decay and decoupled:
            w = w * np.float32(1 - lr * weight_decay)
        elif weight_decay:
            g = g + w * np.float32(weight_decay)
        m = m * np.float32(b1) + g * np.float32(1 - b1)
        v = v * np.float32(b2) + (g * g) * np.float32(1 - b2)
        if amsgrad:
            v_max = np.maximum(v_max, v)
        c1, c2 = np.float32(1 - b1 ** t), np.float32(1 - b2 ** t)
        w = w - (m / c1) / (np.sqrt((v_max if amsgrad else v) / c2) + np.float32(eps)) * np.float32(lr)
    return w


def test_sgd_groups_have_their_own_hyperparameters():
    a, b = quadratic_params()
    a0, b0 = a.numpy().copy(), b.numpy().copy()
    opt = frame.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.02, "momentum": 0.5}],
                          lr=0.1, momentum=0.9, weight_decay=0.01)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.02]
    assert [g["momentum"] for g in opt.param_groups] == [0.9, 0.5]
    assert opt.params == [a, b]
    wa, wb = run(opt, [a, b], 4)
    np.testing.assert_allclose(wa, numpy_sgd(a0, 4, 0.1, 0.9, 0.01), rtol=1e-6)
    np.testing.assert_allclose(wb, numpy_sgd(b0, 4, 0.02, 0.5, 0.01), rtol=1e-6)


def test_adam_groups_and_weight_decay_match_numpy():
    a, b = quadratic_params()
    a0, b0 = a.numpy().copy(), b.numpy().copy()
    opt = frame.optim.Adam([{"params": [a], "weight_decay": 0.1},
                            {"params": [b], "lr": 0.05, "betas": (0.8, 0.99)}], lr=0.1)
    wa, wb = run(opt, [a, b], 5)
    np.testing.assert_allclose(wa, numpy_adam(a0, 5, 0.1, weight_decay=0.1), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(wb, numpy_adam(b0, 5, 0.05, betas=(0.8, 0.99)), rtol=1e-6, atol=1e-7)


OPTIONS = {
    "sgd_nesterov": (lambda ps: frame.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
                     lambda w, n: numpy_sgd(w, n, 0.05, 0.9, nesterov=True)),
    "sgd_dampening": (lambda ps: frame.optim.SGD(ps, 0.05, 0.9, 0.3, 0.01),
                      lambda w, n: numpy_sgd(w, n, 0.05, 0.9, 0.01, dampening=0.3)),
    "sgd_maximize": (lambda ps: frame.optim.SGD(ps, lr=0.05, momentum=0.5, maximize=True),
                     lambda w, n: numpy_sgd(w, n, 0.05, 0.5, maximize=True)),
    "adam_amsgrad": (lambda ps: frame.optim.Adam(ps, lr=0.1, amsgrad=True),
                     lambda w, n: numpy_adam(w, n, 0.1, amsgrad=True)),
    "adam_maximize": (lambda ps: frame.optim.Adam(ps, lr=0.1, weight_decay=0.1, maximize=True),
                      lambda w, n: numpy_adam(w, n, 0.1, weight_decay=0.1, maximize=True)),
    "adamw": (lambda ps: frame.optim.AdamW(ps, lr=0.1),
              lambda w, n: numpy_adam(w, n, 0.1, weight_decay=0.01, decoupled=True)),
    "adamw_amsgrad": (lambda ps: frame.optim.AdamW(ps, lr=0.1, weight_decay=0.2, amsgrad=True),
                      lambda w, n: numpy_adam(w, n, 0.1, weight_decay=0.2, amsgrad=True,
                                              decoupled=True)),
}


def _quadratic_step(opt, params):
    opt.zero_grad()
    sum((p * p).sum() for p in params).backward()
    opt.step()


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_pytorch_options_match_its_update_rules(name):
    """Nesterov, dampening, maximize, AMSGrad and AdamW: eager against the
    update rule written in NumPy, and a jitted step (one graph) against eager."""
    make, reference = OPTIONS[name]
    a, b = quadratic_params()
    a0, b0 = a.numpy().copy(), b.numpy().copy()
    wa, wb = run(make([a, b]), [a, b], 6)
    np.testing.assert_allclose(wa, reference(a0, 6), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(wb, reference(b0, 6), rtol=1e-5, atol=1e-6)
    c, d = quadratic_params()
    opt = make([c, d])
    step = frame.jit(_quadratic_step)
    for _ in range(6):
        step(opt, [c, d])
    np.testing.assert_allclose(c.numpy(), wa, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(d.numpy(), wb, rtol=1e-6, atol=1e-7)
    params = list(quadratic_params())
    out = frame.explain(_quadratic_step)(make(params), params)
    assert out.graph_break_count == 0 and out.graph_count == 1


@pytest.mark.parametrize("name", sorted(OPTIONS))
def test_pytorch_options_match_pytorch(name):
    """The same trajectories as ``torch.optim`` (when PyTorch is installed)."""
    torch = pytest.importorskip("torch")
    make, _ = OPTIONS[name]
    torch_make = {
        "sgd_nesterov": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
        "sgd_dampening": lambda ps: torch.optim.SGD(ps, 0.05, 0.9, 0.3, 0.01),
        "sgd_maximize": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.5, maximize=True),
        "adam_amsgrad": lambda ps: torch.optim.Adam(ps, lr=0.1, amsgrad=True),
        "adam_maximize": lambda ps: torch.optim.Adam(ps, lr=0.1, weight_decay=0.1, maximize=True),
        "adamw": lambda ps: torch.optim.AdamW(ps, lr=0.1),
        "adamw_amsgrad": lambda ps: torch.optim.AdamW(ps, lr=0.1, weight_decay=0.2, amsgrad=True),
    }[name]
    a, b = quadratic_params()
    ta, tb = (torch.nn.Parameter(torch.tensor(p.numpy().copy())) for p in (a, b))
    opt, topt = make([a, b]), torch_make([ta, tb])
    for _ in range(6):
        _quadratic_step(opt, [a, b])
        topt.zero_grad()
        ((ta * ta).sum() + (tb * tb).sum()).backward()
        topt.step()
    np.testing.assert_allclose(a.numpy(), ta.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), tb.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_add_param_group_extends_the_state():
    a, b = quadratic_params()
    a0, b0 = a.numpy().copy(), b.numpy().copy()
    opt = frame.optim.SGD([a], lr=0.1, momentum=0.9)
    run(opt, [a], 2)
    opt.add_param_group({"params": [b], "lr": 0.05})
    assert opt.param_groups[1]["momentum"] == 0.9      # the defaults fill it
    wa, wb = run(opt, [a, b], 3)
    np.testing.assert_allclose(wa, numpy_sgd(a0, 5, 0.1, 0.9), rtol=1e-6)
    np.testing.assert_allclose(wb, numpy_sgd(b0, 3, 0.05, 0.9), rtol=1e-6)


def test_lr_property_sets_every_group():
    a, b = quadratic_params()
    opt = frame.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    assert opt.lr == 0.1
    opt.lr = 0.01
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.01]
    assert type(opt.param_groups[0]["lr"]) is float


def test_zero_grad_set_to_none_false_keeps_zero_tensors():
    a, b = quadratic_params()
    opt = frame.optim.SGD([a, b], lr=0.1)
    (a.sum() + b.sum()).backward()
    a.grad = frame.tensor(np.array([np.inf, np.nan, 1.0], np.float32))
    grads = a.grad, b.grad
    opt.zero_grad(set_to_none=False)
    assert all(np.array_equal(p.grad.numpy(), np.zeros(p.shape, np.float32)) for p in (a, b))
    assert a.grad is grads[0] and b.grad is grads[1]      # in place, as PyTorch's
    opt.zero_grad()
    assert a.grad is None and b.grad is None


@pytest.mark.parametrize("make, error, text", [
    (lambda a, b: frame.optim.SGD([], lr=0.1), FrameValueError, "empty parameter list"),
    (lambda a, b: frame.optim.SGD([a, a], lr=0.1), FrameValueError, "more than one"),
    (lambda a, b: frame.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1),
     FrameValueError, "more than one"),
    (lambda a, b: frame.optim.SGD([{"params": [a], "betas": (0.9, 0.9)}], lr=0.1),
     FrameValueError, "no hyperparameter 'betas'"),
    (lambda a, b: frame.optim.SGD([{"params": [a], "lr": -1.0}], lr=0.1),
     FrameValueError, "learning rate must be positive"),
    (lambda a, b: frame.optim.SGD([a], lr=0.1, weight_decay=-1), FrameValueError, "weight_decay"),
    (lambda a, b: frame.optim.SGD([a], lr=0.1, momentum=-0.5), FrameValueError, "momentum"),
    (lambda a, b: frame.optim.Adam([a], betas=(1.0, 0.9)), FrameValueError, "betas"),
    (lambda a, b: frame.optim.SGD([a, np.zeros(3)], lr=0.1), FrameTypeError, "must be Tensors"),
    (lambda a, b: frame.optim.SGD([{"lr": 0.1}], lr=0.1), FrameTypeError, "'params' entry"),
    (lambda a, b: frame.optim.SGD([a], lr=0.1, nesterov=True), FrameValueError, "Nesterov"),
    (lambda a, b: frame.optim.SGD([a], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     FrameValueError, "Nesterov"),
    (lambda a, b: frame.optim.AdamW([a], eps=-1.0), FrameValueError, "eps"),
], ids=["empty", "duplicate", "duplicate-across-groups", "unknown-key", "negative-lr",
        "negative-decay", "negative-momentum", "adam-betas", "not-a-tensor", "group-without-params",
        "nesterov-without-momentum", "nesterov-with-dampening", "negative-eps"])
def test_bad_input_is_refused_with_a_clear_error(make, error, text):
    a, b = quadratic_params()
    with pytest.raises(error, match=text):
        make(a, b)


def schedule_step(model, opt, x, y, epoch):
    for group in opt.param_groups:
        group["lr"] = 0.1 * 0.8 ** epoch
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


@pytest.mark.parametrize("kind", ["sgd", "adam"])
def test_jitted_step_with_groups_and_a_schedule_matches_eager(kind):
    def make():
        frame.manual_seed(3)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        groups = [{"params": model[0].parameters()},
                  {"params": model[2].parameters(), "weight_decay": 0.01}]
        opt = (frame.optim.SGD(groups, lr=0.1, momentum=0.9) if kind == "sgd"
               else frame.optim.Adam(groups, lr=0.1))
        return model, opt

    rng = np.random.default_rng(3)
    x = frame.tensor(rng.standard_normal((16, 6)).astype(np.float32))
    y = frame.tensor(rng.integers(0, 3, 16))
    (me, oe), (mj, oj) = make(), make()
    step = frame.jit(schedule_step)
    frame.reset_stats()
    for epoch in range(6):
        le = schedule_step(me, oe, x, y, epoch)
        lj = step(mj, oj, x, y, epoch)
        np.testing.assert_allclose(lj.numpy(), le.numpy(), rtol=1e-5, atol=1e-6)
    for pe, pj in zip(me.parameters(), mj.parameters()):
        np.testing.assert_allclose(pj.numpy(), pe.numpy(), rtol=1e-5, atol=1e-6)
    assert [g["lr"] for g in oj.param_groups] == [g["lr"] for g in oe.param_groups]
    stats = frame.stats()
    assert stats.graph_breaks == {}      # (Adam's float64 step count runs on reference kernels
                                         # under OpenVINO: op fallbacks, not breaks)
    # the first call has no optimizer state, the second a new lr: then one entry serves
    assert stats.recompiles <= 2, stats.recompile_reasons
