"""Compiled autograd across the jit boundary (docs/compiler.md): ``jit(model)(x)``
in grad mode is one graph whose results carry one autograd record; a backward
outside the jitted function runs the record's compiled backward.  Every test is
differential: the same computation runs eagerly on a copy of the parameters,
and the results, the gradients (``.grad`` of parameters and inputs) and the
exceptions must be eager's."""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.autograd import AutogradError, gradients
from frame.runtime.stats import stats

from .helpers import assert_gradients_close, last_entry, normal


# --------------------------------------------------------------------------- models

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = frame.tanh(self.fc2(x))
        return self.out(x)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.reshape(x.shape[0], -1))


class NormModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 12)
        self.norm = nn.LayerNorm(12)
        self.head = nn.Linear(12, 4)

    def forward(self, x):
        return self.head(frame.gelu(self.norm(self.proj(x))))


MODELS = {
    "mlp": (MLP, (5, 6)),
    "cnn": (SmallCNN, (2, 1, 12, 12)),
    "layernorm": (NormModel, (3, 7, 8)),
}


def _model(name):
    np.random.seed(1)
    cls, shape = MODELS[name]
    return cls(), frame.tensor(normal(shape))


def _grads(model, extra=()):
    return [None if p.grad is None else p.grad.numpy().copy()
            for p in list(model.parameters()) + list(extra)]


def _compare_grads(eager_model, jit_model, extra_eager=(), extra_jit=()):
    for k, (a, b) in enumerate(zip(_grads(eager_model, extra_eager),
                                   _grads(jit_model, extra_jit))):
        assert (a is None) == (b is None), f"grad {k}: {a} vs {b}"
        if a is not None:
            assert_gradients_close(a, b, f"grad {k}")


def _with_compiled_backward(jitted) -> None:
    """The latest call of ``jitted`` ran its graph, whose results carry a record."""
    entry = last_entry(jitted)
    assert not entry.native and entry.graph is not None, entry.reason
    assert entry.backward is not None


def _step(model, call, x):
    out = call(x)
    loss = (out * out).mean() + out.sum() * 0.5
    loss.backward()
    return out, loss


# --------------------------------------------------------------------------- the models

@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("how", ["module", "function"])
def test_model_forward_then_eager_backward_matches_eager(name, how):
    """``jit(model)(x)`` (or ``@jit def predict(x): return model(x)``) then
    ``loss.backward()`` outside: gradients equal eager's, over several calls
    (the second and third are cache hits), accumulating as eager does."""
    model, x = _model(name)
    twin = copy.deepcopy(model)
    if how == "module":
        jitted = frame.jit(twin)
    else:
        jitted = frame.jit(lambda x: twin(x))
    for _ in range(3):
        out_e, loss_e = _step(model, model, x)
        out_j, loss_j = _step(twin, jitted, x)
        _with_compiled_backward(jitted)
        assert out_j.requires_grad and not out_j.is_leaf
        assert_gradients_close(out_e.numpy(), out_j.numpy(), "result")
        assert_gradients_close(loss_e.numpy(), loss_j.numpy(), "loss")
        _compare_grads(model, twin)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_is_one_graph_with_a_compiled_backward(name):
    model, x = _model(name)
    out = frame.explain(model)(x)
    assert (out.graph_count, out.graph_break_count) == (1, 0), str(out)
    assert out.backward_graph_count == 1, str(out)
    assert out.backward_ops_per_graph[0], str(out)
    assert "its backward" in str(out)
    assert out.result.requires_grad


def test_backward_runs_are_counted_and_compiled_on_the_first_backward():
    """Inference under grad mode never compiles the backward; the first backward
    compiles it once, every backward runs it once."""
    model, x = _model("mlp")
    jitted = frame.jit(model)
    before = stats().extra
    compiles0 = before.get("compiled_backward_compiles", 0)
    runs0 = before.get("compiled_backward_runs", 0)
    for _ in range(2):
        jitted(x)
    assert stats().extra.get("compiled_backward_compiles", 0) == compiles0
    for k in range(3):
        jitted(x).sum().backward()
        now = stats().extra
        assert now.get("compiled_backward_compiles", 0) == compiles0 + 1
        assert now.get("compiled_backward_runs", 0) == runs0 + k + 1


def test_inputs_that_require_grad_get_their_grad():
    model, _ = _model("mlp")
    twin = copy.deepcopy(model)
    jitted = frame.jit(twin)
    x_e = frame.tensor(normal((4, 6), 3), requires_grad=True)
    x_j = frame.tensor(normal((4, 6), 3), requires_grad=True)
    for _ in range(2):
        (model(x_e) ** 2).sum().backward()
        (jitted(x_j) ** 2).sum().backward()
        _with_compiled_backward(jitted)
        assert_gradients_close(x_e.grad.numpy(), x_j.grad.numpy(), "x.grad")
        _compare_grads(model, twin)


def test_training_loop_with_sgd_matches_eager():
    """jit(model) for the forward, eager loss, backward and optimizer step."""
    model, x = _model("mlp")
    twin = copy.deepcopy(model)
    jitted = frame.jit(twin)
    labels = frame.tensor(np.array([0, 2, 1, 1, 0], dtype=np.int64))
    opt_e = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt_j = frame.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    for _ in range(4):
        for m, call, opt in ((model, model, opt_e), (twin, jitted, opt_j)):
            opt.zero_grad()
            loss = F.cross_entropy(call(x), labels)
            loss.backward()
            opt.step()
    _with_compiled_backward(jitted)
    for p, q in zip(model.parameters(), twin.parameters()):
        assert_gradients_close(p.numpy(), q.numpy(), "parameter after training")


# --------------------------------------------------------------------------- results

W0 = normal((4, 3), 5)
B0 = normal((3,), 6)


def _params():
    return (frame.tensor(W0.copy(), requires_grad=True),
            frame.tensor(B0.copy(), requires_grad=True))


def _several(w, b, x):
    h = frame.tanh(x @ w + b)
    return h, h.sum(), x * 2.0, (h * w.sum()).mean()


def test_several_results_and_results_that_do_not_require_grad():
    x = frame.tensor(normal((5, 4), 7))
    (we, be), (wj, bj) = _params(), _params()
    jitted = frame.jit(_several)
    for _ in range(2):
        re_, rj = _several(we, be, x), jitted(wj, bj, x)
        _with_compiled_backward(jitted)
        assert [t.requires_grad for t in rj] == [t.requires_grad for t in re_] == \
            [True, True, False, True]
        for t, u in zip(re_, rj):
            assert_gradients_close(t.numpy(), u.numpy(), "result")
        for (h, s, _, m), w in ((re_, we), (rj, wj)):
            ((h * h).sum() + s * 3.0 + m).backward()
        assert_gradients_close(we.grad.numpy(), wj.grad.numpy(), "w.grad")
        assert_gradients_close(be.grad.numpy(), bj.grad.numpy(), "b.grad")


def test_only_some_results_reach_the_loss():
    x = frame.tensor(normal((5, 4), 8))
    (we, be), (wj, bj) = _params(), _params()
    jitted = frame.jit(_several)
    _several(we, be, x)[1].backward()
    jitted(wj, bj, x)[1].backward()
    _with_compiled_backward(jitted)
    assert_gradients_close(we.grad.numpy(), wj.grad.numpy())
    assert_gradients_close(be.grad.numpy(), bj.grad.numpy())


def test_backward_twice_accumulates_twice_like_eager():
    """frame keeps records alive (no retain_graph needed): a second backward
    through the same result accumulates again, through the compiled backward."""
    x = frame.tensor(normal((5, 4), 9))
    (we, be), (wj, bj) = _params(), _params()
    jitted = frame.jit(_several)
    for fn, w, b in ((_several, we, be), (jitted, wj, bj)):
        loss = fn(w, b, x)[1] * 2.0
        loss.backward()
        loss.backward()
    _with_compiled_backward(jitted)
    assert_gradients_close(we.grad.numpy(), wj.grad.numpy())
    assert_gradients_close(be.grad.numpy(), bj.grad.numpy())


def test_accumulates_into_existing_grad():
    x = frame.tensor(normal((5, 4), 10))
    (we, be), (wj, bj) = _params(), _params()
    for w in (we, wj):
        w.grad = frame.tensor(np.full((4, 3), 0.25, dtype=np.float32))
    jitted = frame.jit(_several)
    for fn, w, b in ((_several, we, be), (jitted, wj, bj)):
        fn(w, b, x)[0].sum().backward()
    _with_compiled_backward(jitted)
    assert_gradients_close(we.grad.numpy(), wj.grad.numpy())
    assert_gradients_close(be.grad.numpy(), bj.grad.numpy())


def test_backward_with_gradient_and_gradients_wrt_a_result():
    x = frame.tensor(normal((5, 4), 11))
    g = frame.tensor(normal((5, 3), 12))
    (we, be), (wj, bj) = _params(), _params()
    jitted = frame.jit(_several)
    _several(we, be, x)[0].backward(g)
    jitted(wj, bj, x)[0].backward(g)
    _with_compiled_backward(jitted)
    assert_gradients_close(we.grad.numpy(), wj.grad.numpy())
    he = _several(we, be, x)[0]
    hj = jitted(wj, bj, x)[0]
    for a, b in zip(gradients((he * he).sum(), [he, we]), gradients((hj * hj).sum(), [hj, wj])):
        assert_gradients_close(a.numpy(), b.numpy())


def test_scalar_result_backward_directly():
    x = frame.tensor(normal((5, 4), 13))
    (we, be), (wj, bj) = _params(), _params()
    _several(we, be, x)[3].backward()
    jitted = frame.jit(_several)
    jitted(wj, bj, x)[3].backward()
    _with_compiled_backward(jitted)
    assert_gradients_close(we.grad.numpy(), wj.grad.numpy())
    assert_gradients_close(be.grad.numpy(), bj.grad.numpy())


# --------------------------------------------------------------------------- versions

def _two_layers(w, v, x):
    return (frame.tanh(x @ w) @ v).sum()


def _versions(update):
    x = frame.tensor(normal((5, 4), 14))
    outcomes = []
    jitted = frame.jit(_two_layers)
    for fn in (_two_layers, jitted, jitted):
        w = frame.tensor(W0.copy(), requires_grad=True)
        v = frame.tensor(normal((3, 2), 15), requires_grad=True)
        loss = fn(w, v, x)
        if fn is jitted:
            _with_compiled_backward(jitted)
        update(w, v, loss)
        try:
            loss.backward()
            outcomes.append(("ok", w.grad.numpy().round(4).tolist()))
        except AutogradError as e:
            outcomes.append(("raises", type(e).__name__))
    return outcomes


def test_parameter_updated_in_place_after_the_forward_raises_like_eager():
    def update(w, v, loss):
        with frame.no_grad():
            v += 1.0   # d/dw needs v: eager refuses the backward
    outcomes = _versions(update)
    assert outcomes == [("raises", "AutogradError")] * 3


def test_parameter_not_needed_by_the_backward_may_change():
    def update(w, v, loss):
        with frame.no_grad():
            w += 0.0   # (the gradients need v and the activations, not w itself)
    outcomes = _versions(update)
    assert outcomes[0][0] == "ok"
    assert outcomes[1:] == outcomes[:1] * 2 or all(o[0] == "ok" for o in outcomes)


def test_result_updated_in_place_after_the_forward_raises_like_eager():
    x = frame.tensor(normal((5, 4), 16))
    jitted = frame.jit(lambda w, x: frame.exp(x @ w))   # exp's gradient reads its result
    outcomes = []
    for fn in (lambda w, x: frame.exp(x @ w), jitted):
        w = frame.tensor(W0.copy(), requires_grad=True)
        y = fn(w, x)
        if fn is jitted:
            _with_compiled_backward(jitted)
        z = (y * 2.0).sum()
        with frame.no_grad():
            y += 1.0
        with pytest.raises(AutogradError, match="modified by an in-place operation"):
            z.backward()
        outcomes.append(w.grad)
    assert outcomes == [None, None]


def test_parameter_frozen_after_the_forward_gets_no_grad_like_eager():
    """A leaf whose ``requires_grad`` is turned off between the forward and the
    backward (a layer frozen) gets no gradient in eager (the backward asks each
    leaf whether it still requires grad); the compiled record's leaves too."""
    model, x = _model("mlp")
    eager_model = copy.deepcopy(model)
    jitted = frame.jit(model)
    for m, call in ((eager_model, eager_model), (model, jitted)):
        out = call(x)
        if call is jitted:
            _with_compiled_backward(jitted)
        for p in m.fc1.parameters():
            p.requires_grad = False
        (out * out).mean().backward()
    assert [p.grad for p in model.fc1.parameters()] == [None, None]
    _compare_grads(eager_model, model)


# --------------------------------------------------------------------------- grad mode

def test_no_grad_around_the_call_gives_no_record():
    model, x = _model("mlp")
    jitted = frame.jit(model)
    with frame.no_grad():
        out = jitted(x)
    assert not out.requires_grad and out.is_leaf
    out2 = jitted(x)           # grad mode on: the other entry, with its record
    assert out2.requires_grad
    assert_gradients_close(out.numpy(), out2.numpy())
    explained = frame.explain(frame.no_grad()(model))(x)
    assert explained.backward_graph_count == 0


def test_create_graph_gradient_penalty_matches_eager():
    """``create_graph=True`` through a jitted call: the gradients are recorded
    (the joint graph runs op by op), so a penalty on them differentiates again."""
    x = frame.tensor(normal((5, 4), 17))
    (we, be), (wj, bj) = _params(), _params()
    jitted = frame.jit(_several)
    for _ in range(2):
        results = []
        for fn, w, b in ((_several, we, be), (jitted, wj, bj)):
            w.grad = b.grad = None
            h = fn(w, b, x)[0]
            if fn is jitted:
                _with_compiled_backward(jitted)
            gw, gb = gradients((h * h).sum(), [w, b], create_graph=True)
            assert gw.requires_grad
            penalty = (gw * gw).sum() + (gb * gb).sum() + h.mean()
            penalty.backward()
            results.append((penalty.numpy(), w.grad.numpy(), b.grad.numpy()))
        for a, b in zip(*results):
            assert_gradients_close(a, b)


def test_backward_create_graph_accumulates_recorded_grads():
    x = frame.tensor(normal((5, 4), 18))
    (we, be), (wj, bj) = _params(), _params()
    jitted = frame.jit(_several)
    for fn, w, b in ((_several, we, be), (jitted, wj, bj)):
        fn(w, b, x)[3].backward(create_graph=True)
        assert w.grad.requires_grad
        (w.grad * w.grad).sum().backward()
    _with_compiled_backward(jitted)
    assert_gradients_close(we.grad.numpy(), wj.grad.numpy())
    assert_gradients_close(be.grad.numpy(), bj.grad.numpy())


def test_result_used_by_a_second_jitted_call_runs_that_call_natively():
    """A result of a jitted call is not a leaf: a jitted function it is passed to
    runs natively (eager extends its record), and the gradients still flow."""
    model, x = _model("mlp")
    twin = copy.deepcopy(model)
    first = frame.jit(twin)
    second = frame.jit(lambda y: (y * y).sum())
    second(first(x)).backward()
    _with_compiled_backward(first)
    assert last_entry(second).native
    (model(x) ** 2).sum().backward()
    _compare_grads(model, twin)


# --------------------------------------------------------------------------- how results leave

class _Holder:
    pass


def _returned_twice(w, x, box, acc):
    h = frame.tanh(x @ w)
    return h, h


def _stored_in_attribute(w, x, box, acc):
    h = frame.tanh(x @ w)
    box.last = h
    return h.sum()


def _appended_to_argument(w, x, box, acc):
    acc.append(frame.tanh(x @ w))
    return len(acc)


def _with_views(w, x, box, acc):
    h = frame.tanh(x @ w)
    return h, h.T, h[0]


def _two_dtypes(w, x, box, acc):
    return (x @ w).sum(), (x.astype(frame.float64) @ w.astype(frame.float64)).sum()


@pytest.mark.parametrize("fn", [_returned_twice, _stored_in_attribute, _appended_to_argument,
                                _with_views, _two_dtypes], ids=lambda f: f.__name__[1:])
def test_results_leaving_in_any_way_carry_the_record(fn):
    x = frame.tensor(normal((5, 4), 19))
    jitted = frame.jit(fn)
    grads = []
    for call in (fn, jitted, jitted):
        w, box, acc = _params()[0], _Holder(), []
        out = call(w, x, box, acc)
        tensors = [t for t in (out if isinstance(out, tuple) else (out,))
                   if isinstance(t, frame.Tensor)] + acc + [getattr(box, "last", None)]
        loss = None
        for t in tensors:
            if t is not None:
                term = (t.astype(frame.float32) ** 2).sum()
                loss = term if loss is None else loss + term
        loss.backward()
        grads.append(w.grad.numpy())
    _with_compiled_backward(jitted)
    assert_gradients_close(grads[0], grads[1])
    assert_gradients_close(grads[0], grads[2])


def test_report_shows_compiled_backward_runs():
    import io
    model, x = _model("mlp")
    jitted = frame.jit(model)
    for _ in range(2):
        jitted(x).sum().backward()
    out = io.StringIO()
    frame.report(out)
    text = out.getvalue()
    assert "compiled backwards (of jitted calls' results)" in text
    runs = stats().extra["compiled_backward_runs"]
    assert runs >= 2
    assert re.search(r"compiled backward runs\s*│?\s*" + str(runs), text), text


@pytest.mark.parametrize("name", sorted(MODELS))
def test_cpu_gradients_are_eagers_bit_for_bit(name):
    """On the cpu backend the compiled backward computes what eager computes, with
    the same NumPy kernels: the gradients are equal, not just close."""
    model, x = _model(name)
    twin = copy.deepcopy(model)
    jitted = frame.jit(twin, backend="cpu")
    for _ in range(2):
        _step(model, model, x)
        _step(twin, jitted, x)
        _with_compiled_backward(jitted)
    for a, b in zip(_grads(model), _grads(twin)):
        np.testing.assert_array_equal(b, a)


def test_dropout_in_training_mode_matches_eager_for_the_same_seed():
    """The dropout mask is a graph input drawn when the entry runs; the backward
    reads the same mask (saved) as eager's."""
    frame.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Dropout(0.5), nn.Linear(12, 3))
    twin = copy.deepcopy(model)
    jitted = frame.jit(twin)
    x = frame.tensor(normal((5, 6), 20))
    for step in range(3):
        frame.manual_seed(step)
        out_e, _ = _step(model, model, x)
        frame.manual_seed(step)
        out_j, _ = _step(twin, jitted, x)
        _with_compiled_backward(jitted)
        assert_gradients_close(out_e.numpy(), out_j.numpy())
        _compare_grads(model, twin)
