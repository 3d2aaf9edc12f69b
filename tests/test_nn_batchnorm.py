"""BatchNorm1d / BatchNorm2d and F.batch_norm: against a NumPy reference (and
PyTorch when it is installed), analytic against numeric gradients, the running
statistics, PyTorch's errors, and a jitted training step against the eager one
(bit for bit on the cpu setting) with train/eval switching."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.errors import FrameTypeError, FrameValueError

from tests.autograd.gradcheck import numeric_grad
from tests.conftest import SETTING


def _ref_batch_norm(x, mean, var, weight, bias, training, momentum, eps):
    """NumPy's batch norm (float64): the output and the new running statistics."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        n = x.size // x.shape[1]
        batch_mean = x.mean(axis=axes)
        batch_var = x.var(axis=axes)
        y = (x - batch_mean.reshape(shape)) / np.sqrt(batch_var.reshape(shape) + eps)
        if mean is not None:
            mean = (1 - momentum) * mean + momentum * batch_mean
            var = (1 - momentum) * var + momentum * batch_var * n / (n - 1)
    else:
        y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y, mean, var


SHAPES = {"1d-NC": (nn.BatchNorm1d, (6, 3)), "1d-NCL": (nn.BatchNorm1d, (4, 3, 5)),
          "2d": (nn.BatchNorm2d, (3, 3, 4, 5))}


def _data(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape) * 2.0 + 0.5


def _module(cls, channels, seed=10, **kwargs):
    m = cls(channels, **kwargs).double()
    rng = np.random.default_rng(seed)
    if m.affine:
        m.weight.numpy()[...] = rng.uniform(0.5, 1.5, channels)
        m.bias.numpy()[...] = rng.uniform(-1, 1, channels)
    return m


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("case", sorted(SHAPES))
def test_training_and_eval_match_numpy(case, momentum):
    cls, shape = SHAPES[case]
    m = _module(cls, shape[1], momentum=momentum)
    mean, var = np.zeros(shape[1]), np.ones(shape[1])
    for step in range(1, 4):
        x = _data(shape, step)
        factor = 1.0 / step if momentum is None else momentum
        want, mean, var = _ref_batch_norm(x, mean, var, m.weight.numpy(), m.bias.numpy(), True,
                                          factor, 1e-5)
        got = m(frame.tensor(x))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(m.running_mean.numpy(), mean, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(m.running_var.numpy(), var, rtol=1e-12, atol=1e-14)
        assert m.num_batches_tracked.item() == step and m.num_batches_tracked.dtype == frame.int64
    m.eval()
    x = _data(shape, 9)
    want, _, _ = _ref_batch_norm(x, mean, var, m.weight.numpy(), m.bias.numpy(), False, 0, 1e-5)
    np.testing.assert_allclose(m(frame.tensor(x)).numpy(), want, rtol=1e-12, atol=1e-12)
    assert m.num_batches_tracked.item() == 3   # eval mode changes no statistic
    np.testing.assert_allclose(m.running_mean.numpy(), mean, rtol=1e-12, atol=1e-14)


def test_without_affine_or_running_stats():
    x = _data((5, 4), 1)
    m = nn.BatchNorm1d(4, affine=False, track_running_stats=False).double()
    assert m.weight is None and m.running_mean is None and list(m.parameters()) == []
    assert list(m.state_dict()) == [] and list(m.named_buffers()) == []
    want, _, _ = _ref_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(m(frame.tensor(x)).numpy(), want, rtol=1e-12, atol=1e-12)
    m.eval()   # no running statistics: eval mode normalises by the batch too (PyTorch)
    np.testing.assert_allclose(m(frame.tensor(x)).numpy(), want, rtol=1e-12, atol=1e-12)


def test_functional_batch_norm_matches_numpy_and_leaves_stats_alone_in_eval():
    x = _data((4, 3, 2), 2)
    rng = np.random.default_rng(3)
    mean, var = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    rm, rv = frame.tensor(mean), frame.tensor(var)
    got = F.batch_norm(frame.tensor(x), rm, rv, frame.tensor(w), frame.tensor(b), training=True,
                       momentum=0.25, eps=1e-3)
    want, new_mean, new_var = _ref_batch_norm(x, mean, var, w, b, True, 0.25, 1e-3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), new_mean, rtol=1e-12)   # updated in place
    np.testing.assert_allclose(rv.numpy(), new_var, rtol=1e-12)
    got = F.batch_norm(frame.tensor(x), rm, rv, bias=frame.tensor(b))
    want, _, _ = _ref_batch_norm(x, new_mean, new_var, None, b, False, 0, 1e-5)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), new_mean, rtol=1e-12)
    # no running statistics in training mode: batch statistics only
    got = F.batch_norm(frame.tensor(x), None, None, training=True)
    np.testing.assert_allclose(got.numpy(), _ref_batch_norm(x, None, None, None, None, True, 0,
                                                            1e-5)[0], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("case", sorted(SHAPES))
def test_gradients_match_central_differences(case, training):
    cls, shape = SHAPES[case]
    x = _data(shape, 4)
    rng = np.random.default_rng(5)
    w, b = rng.uniform(0.5, 1.5, shape[1]), rng.standard_normal(shape[1])
    mean, var = rng.standard_normal(shape[1]), rng.uniform(0.5, 2.0, shape[1])
    g = rng.standard_normal(shape)

    def ref(arrays):
        y, _, _ = _ref_batch_norm(arrays[0], mean, var, arrays[1], arrays[2], training, 0.1, 1e-5)
        return float((y * g).sum())

    xs, ws, bs = (frame.tensor(a, requires_grad=True) for a in (x, w, b))
    out = F.batch_norm(xs, frame.tensor(mean), frame.tensor(var), ws, bs, training=training)
    (out * frame.tensor(g)).sum().backward()
    for k, t in enumerate((xs, ws, bs)):
        np.testing.assert_allclose(t.grad.numpy(), numeric_grad(ref, [x, w, b], k),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs", [{}, {"momentum": None}, {"momentum": 0.3, "eps": 1e-3},
                                    {"affine": False}, {"track_running_stats": False}],
                         ids=["default", "cumulative", "momentum-eps", "no-affine", "no-stats"])
@pytest.mark.parametrize("case", sorted(SHAPES))
def test_matches_torch(case, kwargs):
    torch = pytest.importorskip("torch")
    cls, shape = SHAPES[case]
    tcls = getattr(torch.nn, cls.__name__)
    tm, m = tcls(shape[1], **kwargs), cls(shape[1], **kwargs)
    if m.affine:
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-1.0, 1.0)
    m.load_state_dict(tm.state_dict())
    assert list(m.state_dict()) == list(tm.state_dict())
    rng = np.random.default_rng(6)
    for mode in ("train", "train", "train", "eval"):
        tm.train(mode == "train")
        m.train(mode == "train")
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        tx, fx = torch.tensor(x, requires_grad=True), frame.tensor(x, requires_grad=True)
        ty, fy = tm(tx), m(fx)
        (ty * torch.tensor(g)).sum().backward()
        (fy * frame.tensor(g)).sum().backward()
        np.testing.assert_allclose(fy.numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)
        if m.affine:
            np.testing.assert_allclose(m.weight.grad.numpy(), tm.weight.grad.numpy(),
                                       rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(m.bias.grad.numpy(), tm.bias.grad.numpy(),
                                       rtol=1e-5, atol=1e-5)
        for name, value in tm.state_dict().items():
            np.testing.assert_allclose(m.state_dict()[name].numpy(), value.numpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=name)


def test_functional_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 3, 2, 2)).astype(np.float32)
    mean, var = rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)
    w, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    for training in (True, False):
        tm, tv = torch.tensor(mean), torch.tensor(var)
        fm, fv = frame.tensor(mean), frame.tensor(var)
        want = torch.nn.functional.batch_norm(torch.tensor(x), tm, tv, torch.tensor(w),
                                              torch.tensor(b), training, 0.2, 1e-4)
        got = F.batch_norm(frame.tensor(x), fm, fv, frame.tensor(w), frame.tensor(b), training,
                           0.2, 1e-4)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(fm.numpy(), tm.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(fv.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, error, text", [
    (lambda: nn.BatchNorm1d(3)(frame.ones((4,))), FrameValueError,
     r"expected 2D or 3D input \(got 1D input\)"),
    (lambda: nn.BatchNorm1d(3)(frame.ones((4, 3, 2, 2))), FrameValueError,
     r"expected 2D or 3D input \(got 4D input\)"),
    (lambda: nn.BatchNorm2d(3)(frame.ones((4, 3, 2))), FrameValueError,
     r"expected 4D input \(got 3D input\)"),
    (lambda: nn.BatchNorm1d(3)(frame.ones((4, 2))), FrameValueError,
     "running_mean should contain 2 elements not 3"),
    (lambda: nn.BatchNorm1d(3)(frame.ones((1, 3))), FrameValueError,
     r"Expected more than 1 value per channel when training, got input size \[1, 3\]"),
    (lambda: nn.BatchNorm2d(3)(frame.ones((1, 3, 1, 1))), FrameValueError,
     "Expected more than 1 value per channel when training"),
    (lambda: F.batch_norm(frame.ones((4, 3)), None, None), FrameValueError,
     "must be given in evaluation mode"),
    (lambda: F.batch_norm(frame.ones((4, 3)), frame.zeros((3,)), frame.ones((3,)),
                          frame.ones((2,))), FrameValueError, "weight should contain 3 elements not 2"),
    (lambda: F.batch_norm(frame.ones((4,)), frame.zeros((4,)), frame.ones((4,))), FrameValueError,
     "at least 2 dimensions"),
    (lambda: nn.BatchNorm1d(3)(frame.ones((4, 3), dtype=frame.float64)), FrameTypeError,
     "mixed dtype"),
    (lambda: nn.BatchNorm1d(3)(frame.ones((4, 3), dtype=frame.int64)), FrameTypeError,
     "floating-point"),
    (lambda: nn.BatchNorm1d(0), FrameValueError, "num_features must be a positive int"),
], ids=["1d-rank1", "1d-rank4", "2d-rank3", "channels", "one-value", "one-value-2d",
        "eval-without-stats", "weight-size", "rank1-functional", "mixed-dtype", "int-input",
        "num-features"])
def test_errors_as_pytorch(make, error, text):
    with pytest.raises(error, match=text):
        make()


def test_one_sample_is_fine_in_eval_mode_and_with_a_length():
    m = nn.BatchNorm1d(3)
    assert m(frame.ones((1, 3, 2))).shape == (1, 3, 2)   # two values per channel
    m.eval()
    assert m(frame.ones((1, 3))).shape == (1, 3)


def test_repr_and_buffers():
    m = nn.BatchNorm2d(4, momentum=None)
    assert repr(m) == "BatchNorm2d(4, eps=1e-05, momentum=None, affine=True, track_running_stats=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in m.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert all(not b.requires_grad for b in m.buffers())
    m(frame.tensor(_data((4, 4, 2, 2), 0).astype(np.float32)))
    m.reset_running_stats()
    assert m.num_batches_tracked.item() == 0 and m.running_mean.numpy().tolist() == [0.0] * 4
    assert m.running_var.numpy().tolist() == [1.0] * 4


# --------------------------------------------------------------------------- under jit

class ConvBNNet(nn.Module):
    def __init__(self, momentum=0.1):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1),
                                      nn.BatchNorm2d(4, momentum=momentum), nn.ReLU(),
                                      nn.MaxPool2d(2), nn.Flatten())
        self.fc = nn.Linear(4 * 4 * 4, 8)
        self.bn = nn.BatchNorm1d(8, momentum=momentum)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(F.relu(self.bn(self.fc(self.features(x)))))


def _train_step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _assert_same(a, b):
    if SETTING == "cpu":   # the cpu backend is bitwise the reference interpreter, and eager
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _batches(seed, count):
    rng = np.random.default_rng(seed)
    return [(frame.tensor(rng.standard_normal((6, 1, 8, 8)).astype(np.float32)),
             frame.tensor(rng.integers(0, 3, 6))) for _ in range(count)]


@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
def test_jitted_training_step_matches_eager_with_running_stats(momentum):
    frame.manual_seed(3)
    eager = ConvBNNet(momentum)
    jitted = copy.deepcopy(eager)
    opt_e = frame.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    opt_j = frame.optim.SGD(jitted.parameters(), lr=0.1, momentum=0.9)
    step = frame.jit(_train_step)
    for x, y in _batches(0, 4):
        loss_e = _train_step(eager, opt_e, x, y)
        loss_j = step(jitted, opt_j, x, y)
        _assert_same(loss_j.numpy(), loss_e.numpy())
        for (name, want), (_, got) in zip(eager.state_dict().items(), jitted.state_dict().items()):
            _assert_same(got.numpy(), want.numpy())
    assert jitted.bn.num_batches_tracked.item() == 4
    assert jitted.features[1].num_batches_tracked.item() == 4
    x, y = _batches(1, 1)[0]
    out = frame.explain(_train_step)(jitted, opt_j, x, y)
    assert out.graph_count == 1 and out.graph_break_count == 0, out.break_reasons


def test_jitted_forward_follows_train_and_eval():
    """The training flag is guarded: eval mode uses (and leaves) the running
    statistics, training mode updates them, and switching back reuses the
    first translation."""
    frame.manual_seed(4)
    eager = ConvBNNet()
    jitted = copy.deepcopy(eager)
    forward = frame.jit(lambda model, x: model(x))
    batches = _batches(2, 5)
    frame.reset_stats()
    for mode, (x, _) in zip(["train", "eval", "eval", "train", "eval"], batches):
        eager.train(mode == "train")
        jitted.train(mode == "train")
        with frame.no_grad():
            _assert_same(forward(jitted, x).numpy(), eager(x).numpy())
        for (name, want), (_, got) in zip(eager.state_dict().items(), jitted.state_dict().items()):
            _assert_same(got.numpy(), want.numpy())
    assert jitted.bn.num_batches_tracked.item() == 2
    assert frame.stats().translations == 2   # one per mode


def test_jitted_functional_batch_norm_writes_its_running_stats():
    x = frame.tensor(_data((5, 3), 8))
    rm_e, rv_e = frame.zeros((3,), dtype=frame.float64), frame.ones((3,), dtype=frame.float64)
    rm_j, rv_j = frame.zeros((3,), dtype=frame.float64), frame.ones((3,), dtype=frame.float64)

    def norm(x, rm, rv):
        return F.batch_norm(x, rm, rv, training=True, momentum=0.3)

    jitted = frame.jit(norm)
    for _ in range(3):
        _assert_same(jitted(x, rm_j, rv_j).numpy(), norm(x, rm_e, rv_e).numpy())
        _assert_same(rm_j.numpy(), rm_e.numpy())
        _assert_same(rv_j.numpy(), rv_e.numpy())
    assert frame.explain(norm)(x, rm_j, rv_j).graph_count == 1


def test_jitted_model_updates_its_stats_and_its_backward_runs_outside():
    """``frame.jit(model)`` in training mode: the forward updates the running
    statistics, and ``loss.backward()`` outside runs the compiled backward."""
    frame.manual_seed(5)
    eager = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))
    jitted = copy.deepcopy(eager)
    predict = frame.jit(jitted)
    opt_e = frame.optim.SGD(eager.parameters(), lr=0.1)
    opt_j = frame.optim.SGD(jitted.parameters(), lr=0.1)
    rng = np.random.default_rng(5)
    for _ in range(3):
        x = frame.tensor(rng.standard_normal((16, 8)).astype(np.float32))
        y = frame.tensor(rng.integers(0, 3, 16))
        for model, opt, forward in ((eager, opt_e, eager), (jitted, opt_j, predict)):
            opt.zero_grad()
            F.cross_entropy(forward(x), y).backward()
            opt.step()
        for (name, want), (_, got) in zip(eager.state_dict().items(), jitted.state_dict().items()):
            _assert_same(got.numpy(), want.numpy())
    assert jitted[1].num_batches_tracked.item() == 3
