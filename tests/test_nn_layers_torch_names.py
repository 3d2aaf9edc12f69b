"""The PyTorch-named layers, activations and losses of frame.nn (Tanh, Sigmoid,
GELU, SiLU, LeakyReLU, Flatten, Identity, Embedding, MaxPool2d, AvgPool2d,
LogSoftmax; CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCEWithLogitsLoss and
their functional forms): against NumPy formulas in float64, analytic against
numeric gradients, jitted against eager, and the errors for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.errors import FrameValueError

from tests.autograd.gradcheck import numeric_grad


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# (module, NumPy formula in float64)
ACTIVATIONS = {
    "Tanh": (lambda: nn.Tanh(), np.tanh),
    "Sigmoid": (lambda: nn.Sigmoid(), _sigmoid),
    "SiLU": (lambda: nn.SiLU(), lambda x: x * _sigmoid(x)),
    "LeakyReLU": (lambda: nn.LeakyReLU(0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "GELU-tanh": (lambda: nn.GELU("tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "Softplus": (lambda: _Functional(F.softplus), lambda x: np.log1p(np.exp(x))),
    "Softplus-beta": (lambda: _Functional(lambda x: F.softplus(x, beta=2.0, threshold=3.0)),
                      lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    "Identity": (lambda: nn.Identity(), lambda x: x),
    "LogSoftmax": (lambda: nn.LogSoftmax(axis=-1),
                   lambda x: x - x.max(-1, keepdims=True)
                   - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True))),
}


class _Functional(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _data(shape=(3, 5), seed=0, scale=3.0):
    return np.random.default_rng(seed).uniform(-scale, scale, shape)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_numpy_and_its_gradient(name):
    make, ref = ACTIVATIONS[name]
    x = _data()
    module = make()
    got = module(frame.tensor(x)).numpy()
    np.testing.assert_allclose(got, ref(x), rtol=1e-12, atol=1e-12)
    got32 = module(frame.tensor(x.astype(np.float32)))
    assert got32.dtype == frame.float32
    np.testing.assert_allclose(got32.numpy(), ref(x), rtol=2e-6, atol=2e-6)
    # d sum(w * f(x)) / dx, analytic against central differences
    w = _data(seed=1)
    xt = frame.tensor(x, requires_grad=True)
    (module(xt) * frame.tensor(w)).sum().backward()
    numeric = numeric_grad(lambda a: float((ref(a[0]) * w).sum()), [x], 0)
    np.testing.assert_allclose(xt.grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_softplus_does_not_overflow_past_the_threshold():
    x = np.array([-100.0, 0.0, 50.0, 1000.0], np.float32)
    got = F.softplus(frame.tensor(x)).numpy()
    np.testing.assert_allclose(got, [np.exp(-100.0), np.log(2.0), 50.0, 1000.0], rtol=1e-6, atol=1e-40)
    assert np.isfinite(got).all()


def _log_softmax(z):
    m = z.max(1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(1, keepdims=True))


def _bce(x, t, pos_weight=1.0):
    return (1 - t) * x + (1 + (pos_weight - 1) * t) * np.log1p(np.exp(-x))


LOSSES = {
    "CrossEntropyLoss": (nn.CrossEntropyLoss, "labels",
                         lambda z, y: -_log_softmax(z)[np.arange(len(y)), y]),
    "NLLLoss": (nn.NLLLoss, "labels", lambda z, y: -z[np.arange(len(y)), y]),
    "MSELoss": (nn.MSELoss, "same", lambda a, b: (a - b) ** 2),
    "L1Loss": (nn.L1Loss, "same", lambda a, b: np.abs(a - b)),
    "BCEWithLogitsLoss": (nn.BCEWithLogitsLoss, "probabilities", _bce),
}


def _loss_inputs(kind, seed=2):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-3, 3, (6, 4))
    if kind == "labels":
        return a, rng.integers(0, 4, 6)
    if kind == "probabilities":
        return a, rng.uniform(0, 1, (6, 4))
    return a, rng.uniform(-3, 3, (6, 4))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_numpy_and_its_gradient(name, reduction):
    cls, kind, ref = LOSSES[name]
    a, b = _loss_inputs(kind)
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    loss = cls(reduction=reduction)
    got = loss(frame.tensor(a), frame.tensor(b))
    np.testing.assert_allclose(got.numpy(), reduce(ref(a, b)), rtol=1e-12, atol=1e-12)
    at = frame.tensor(a, requires_grad=True)
    w = _data(np.shape(reduce(ref(a, b))), seed=3)
    (loss(at, frame.tensor(b)) * frame.tensor(w)).sum().backward()
    numeric = numeric_grad(lambda arrs: float((reduce(ref(arrs[0], b)) * w).sum()), [a], 0)
    np.testing.assert_allclose(at.grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_nll_of_log_softmax_is_cross_entropy():
    z, y = _loss_inputs("labels", seed=4)
    zt, yt = frame.tensor(z.astype(np.float32)), frame.tensor(y)
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(zt), yt).item(),
                               F.cross_entropy(zt, yt).item(), rtol=1e-6)


def test_bce_pos_weight_and_extreme_logits():
    x = np.array([-30.0, -2.0, 0.0, 3.0, 40.0])
    t = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    got = F.binary_cross_entropy_with_logits(frame.tensor(x), frame.tensor(t), reduction="none")
    np.testing.assert_allclose(got.numpy(), np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x))),
                               rtol=1e-12, atol=1e-300)
    weighted = nn.BCEWithLogitsLoss(reduction="none", pos_weight=3.0)(frame.tensor(x), frame.tensor(t))
    np.testing.assert_allclose(weighted.numpy(), _bce(x, t, 3.0), rtol=1e-12)


@pytest.mark.parametrize("start, end, shape", [(1, -1, (2, 60)), (0, -1, (120,)), (1, 2, (2, 12, 5)),
                                               (-2, -1, (2, 3, 20))])
def test_flatten(start, end, shape):
    x = frame.tensor(np.arange(120.0).reshape(2, 3, 4, 5))
    got = nn.Flatten(start, end)(x)
    assert got.shape == shape
    np.testing.assert_array_equal(got.numpy(), np.arange(120.0).reshape(shape))


def test_embedding_is_seeded_and_looks_up_rows():
    frame.manual_seed(5)
    a = nn.Embedding(7, 3)
    frame.manual_seed(5)
    b = nn.Embedding(7, 3)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    idx = np.array([[0, 6], [3, 3]])
    got = a(frame.tensor(idx))
    np.testing.assert_array_equal(got.numpy(), a.weight.numpy()[idx])
    assert [n for n, _ in a.named_parameters()] == ["weight"]


def test_pool_modules_are_the_functions():
    x = frame.tensor(_data((2, 3, 6, 6), seed=6).astype(np.float32))
    np.testing.assert_array_equal(nn.MaxPool2d(2)(x).numpy(), F.max_pool2d(x, 2).numpy())
    np.testing.assert_array_equal(nn.AvgPool2d(3, stride=1, padding=1)(x).numpy(),
                                  F.avg_pool2d(x, 3, 1, 1).numpy())


@pytest.mark.parametrize("make, error, text", [
    (lambda: nn.MSELoss(reduction="avg"), FrameValueError, "reduction must be"),
    (lambda: nn.GELU("fast"), FrameValueError, "approximate must be"),
    (lambda: nn.Embedding(0, 3), FrameValueError, "sizes must be positive"),
    (lambda: nn.Flatten(2, 5)(frame.ones((2, 3))), FrameValueError, "do not fit"),
    (lambda: F.softplus(frame.ones((2,)), beta=0.0), FrameValueError, "beta must be positive"),
    (lambda: F.l1_loss(frame.ones((2,)), frame.ones((3,))), FrameValueError, "shapes must match"),
    (lambda: F.nll_loss(frame.ones((2, 3)), frame.tensor([0.5, 1.0])), FrameValueError,
     "integer labels"),
    (lambda: F.binary_cross_entropy_with_logits(frame.ones((2,)), frame.ones((2, 1))),
     FrameValueError, "shapes must match"),
], ids=["reduction", "gelu-approximate", "embedding-size", "flatten-dims", "softplus-beta",
        "l1-shapes", "nll-float-labels", "bce-shapes"])
def test_bad_input_is_refused(make, error, text):
    with pytest.raises(error, match=text):
        make()


def test_nll_label_out_of_range_raises_an_index_error():
    with pytest.raises(IndexError):
        F.nll_loss(frame.zeros((2, 3)), frame.tensor([0, 3]))


class TorchStyleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.features = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.LeakyReLU(0.1),
                                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3 * 3 * 3, 8),
                                      nn.SiLU())
        self.head = nn.Sequential(nn.Linear(12, 8), nn.Tanh(), nn.Linear(8, 5), nn.Identity())

    def forward(self, img, tok):
        h = self.features(img)
        e = self.emb(tok).mean(axis=1)
        return self.head(frame.concat([h, e], axis=1))


CRITERIA = nn.ModuleDict({"ce": nn.CrossEntropyLoss(), "bce": nn.BCEWithLogitsLoss(),
                          "l1": nn.L1Loss(reduction="sum"), "sigmoid": nn.Sigmoid()})


def _train_step(model, opt, img, tok, y, target):
    opt.zero_grad()
    logits = model(img, tok)
    loss = CRITERIA["ce"](logits, y) + 0.1 * CRITERIA["bce"](logits, target) \
        + 0.01 * CRITERIA["l1"](CRITERIA["sigmoid"](logits), target)
    loss.backward()
    opt.step()
    return loss


def test_jitted_training_step_with_the_torch_named_layers_matches_eager():
    def make():
        frame.manual_seed(8)
        model = TorchStyleNet()
        return model, frame.optim.Adam(model.parameters(), lr=0.01)

    rng = np.random.default_rng(8)
    (me, oe), (mj, oj) = make(), make()
    step = frame.jit(_train_step)
    for _ in range(3):
        img = frame.tensor(rng.standard_normal((4, 1, 6, 6)).astype(np.float32))
        tok = frame.tensor(rng.integers(0, 10, (4, 3)))
        y = frame.tensor(rng.integers(0, 5, 4))
        target = frame.tensor(rng.uniform(0, 1, (4, 5)).astype(np.float32))
        le = _train_step(me, oe, img, tok, y, target)
        lj = step(mj, oj, img, tok, y, target)
        np.testing.assert_allclose(lj.numpy(), le.numpy(), rtol=1e-5, atol=1e-6)
    for pe, pj in zip(me.parameters(), mj.parameters()):
        np.testing.assert_allclose(pj.numpy(), pe.numpy(), rtol=1e-4, atol=1e-5)
    out = frame.explain(_train_step)(mj, oj, img, tok, y, target)
    assert out.graph_count == 1 and out.graph_break_count == 0, out


def test_softmax_family_accepts_pytorch_dim():
    """``dim=`` is PyTorch's name for ``axis`` (functions, Tensor methods,
    modules, under jit); giving both is a TypeError."""
    x = frame.tensor(_data((3, 4), seed=9))
    for fn in (F.softmax, F.log_softmax):
        want = fn(x, axis=0).numpy()
        np.testing.assert_array_equal(fn(x, dim=0).numpy(), want)
        np.testing.assert_array_equal(frame.jit(lambda t: fn(t, dim=0))(x).numpy(), want)
        with pytest.raises(TypeError, match="both 'axis' and 'dim'"):
            fn(x, axis=-1, dim=0)
        with pytest.raises(TypeError, match="both 'axis' and 'dim'"):
            fn(x, 1, dim=1)
        np.testing.assert_array_equal(fn(x).numpy(), fn(x, axis=-1).numpy())
    np.testing.assert_array_equal(x.softmax(dim=0).numpy(), frame.softmax(x, axis=0).numpy())
    np.testing.assert_array_equal(nn.Softmax(dim=0)(x).numpy(), F.softmax(x, axis=0).numpy())
    np.testing.assert_array_equal(nn.LogSoftmax(dim=0)(x).numpy(), F.log_softmax(x, axis=0).numpy())
    assert nn.Softmax().axis == -1 and nn.Softmax(dim=1).axis == 1
    with pytest.raises(TypeError, match="both 'axis' and 'dim'"):
        nn.Softmax(axis=-1, dim=1)
    with pytest.raises(TypeError, match="both 'axis' and 'dim'"):
        nn.LogSoftmax(0, dim=1)
