"""frame.nn modules and frame.optim, against NumPy formulas."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import frame
from frame import nn
from frame.errors import FrameValueError


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def test_linear_matches_formula():
    frame.manual_seed(0)
    layer = nn.Linear(5, 4)
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    np.testing.assert_allclose(layer(frame.tensor(x)).numpy(), x @ w.T + b, rtol=1e-5)
    assert w.shape == (4, 5) and np.all(np.abs(w) <= 1 / np.sqrt(5))


def test_linear_without_bias():
    layer = nn.Linear(5, 4, bias=False)
    assert layer.bias is None and len(list(layer.parameters())) == 1


def test_parameters_order_and_names():
    m = MLP()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert all(p.requires_grad for p in m.parameters())
    assert all(isinstance(p, nn.Parameter) and isinstance(p, frame.Tensor) for p in m.parameters())


def test_shared_parameters_listed_once():
    m = MLP()
    m.fc3 = m.fc1
    assert len(list(m.parameters())) == 4


def test_sequential_and_nested_names():
    """Positions name a Sequential's parameters, as in PyTorch."""
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert [n for n, _ in s.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    y = s(frame.tensor(np.ones((4, 2), np.float32)))
    assert y.shape == (4, 1) and len(s) == 3 and isinstance(s[1], nn.ReLU)
    assert list(s) == s.layers and isinstance(s[1:], nn.Sequential) and len(s[1:]) == 2
    assert [n for n, _ in s.named_children()] == ["0", "1", "2"]
    outer = nn.Sequential(s, nn.Linear(1, 2))
    assert list(outer.state_dict())[:2] == ["0.0.weight", "0.0.bias"]
    assert s.append(nn.ReLU()) is s and len(s) == 4
    with pytest.raises(FrameValueError, match="Sequential takes modules"):
        s.append(np.tanh)


def test_a_pytorch_state_dict_loads_by_name():
    """The same architecture's PyTorch ``state_dict`` loads into frame's model
    (names and shapes agree), and both compute the same outputs."""
    torch = pytest.importorskip("torch")
    tmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    assert list(model.state_dict()) == list(tmodel.state_dict())
    model.load_state_dict(tmodel.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(model(frame.tensor(x)).numpy(),
                               tmodel(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_train_eval_propagate():
    m = MLP()
    m.eval()
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())


def test_state_dict_round_trip():
    a, b = MLP(), MLP()
    b.load_state_dict(a.state_dict())
    for (na, pa), (nb, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert na == nb and np.array_equal(pa.numpy(), pb.numpy())
    state = a.state_dict()
    state["fc1.weight"].numpy()[...] = 0  # a copy: the module is unchanged
    assert not np.all(a.fc1.weight.numpy() == 0)


def test_load_state_dict_errors():
    m = MLP()
    with pytest.raises(ValueError, match="missing keys"):
        m.load_state_dict({})
    state = m.state_dict()
    state["fc1.weight"] = frame.tensor(np.zeros((2, 2), np.float32))
    with pytest.raises(ValueError, match="shape"):
        m.load_state_dict(state)


def test_conv2d_module_matches_functional():
    conv = nn.Conv2d(2, 3, 3, padding=1)
    x = frame.randn(1, 2, 5, 5)
    expected = nn.functional.conv2d(x, conv.weight, conv.bias, padding=1)
    np.testing.assert_allclose(conv(x).numpy(), expected.numpy())
    assert conv.weight.shape == (3, 2, 3, 3)


def test_layer_norm_module():
    ln = nn.LayerNorm(4)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(ln(frame.tensor(x)).numpy(), (x - mu) / np.sqrt(var + 1e-5), atol=1e-5)


def test_parameter_pickle_and_deepcopy():
    p = nn.Parameter(np.arange(3, dtype=np.float32))
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, nn.Parameter) and q.requires_grad and q.tolist() == [0, 1, 2]
    r = copy.deepcopy(p)
    with frame.no_grad():  # in-place updates of a leaf that requires grad need no_grad
        r += 1
    assert p.tolist() == [0, 1, 2] and r.tolist() == [1, 2, 3]


def _set_grads(params, rng):
    grads = []
    for p in params:
        g = rng.standard_normal(p.shape).astype(np.float32)
        p.grad = frame.tensor(g)
        grads.append(g)
    return grads


def test_sgd_momentum_matches_formula():
    rng = np.random.default_rng(0)
    m = MLP()
    ref = [p.numpy().copy() for p in m.parameters()]
    bufs = [None] * len(ref)
    opt = frame.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        grads = _set_grads(list(m.parameters()), rng)
        opt.step()
        for i, g in enumerate(grads):
            bufs[i] = g if bufs[i] is None else 0.9 * bufs[i] + g
            ref[i] = ref[i] - 0.1 * bufs[i]
    for p, r in zip(m.parameters(), ref):
        np.testing.assert_allclose(p.numpy(), r, rtol=1e-5, atol=1e-6)


def test_adam_matches_formula():
    rng = np.random.default_rng(1)
    m = MLP()
    ref = [p.numpy().astype(np.float64) for p in m.parameters()]
    mom = [np.zeros_like(r) for r in ref]
    vel = [np.zeros_like(r) for r in ref]
    opt = frame.optim.Adam(m.parameters(), lr=0.01)
    for t in range(1, 4):
        grads = _set_grads(list(m.parameters()), rng)
        opt.step()
        for i, g in enumerate(grads):
            mom[i] = 0.9 * mom[i] + 0.1 * g
            vel[i] = 0.999 * vel[i] + 0.001 * g * g
            mhat, vhat = mom[i] / (1 - 0.9 ** t), vel[i] / (1 - 0.999 ** t)
            ref[i] = ref[i] - 0.01 * mhat / (np.sqrt(vhat) + 1e-8)
    for p, r in zip(m.parameters(), ref):
        np.testing.assert_allclose(p.numpy(), r, rtol=1e-4, atol=1e-6)


def test_zero_grad_sets_none_and_skips_in_step():
    m = MLP()
    opt = frame.optim.SGD(m.parameters(), lr=0.1)
    before = [p.numpy().copy() for p in m.parameters()]
    opt.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    opt.step()
    assert all(np.array_equal(p.numpy(), b) for p, b in zip(m.parameters(), before))


def test_optimizer_argument_errors():
    with pytest.raises(ValueError):
        frame.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        frame.optim.SGD(MLP().parameters(), lr=-1)
    with pytest.raises(TypeError):
        frame.optim.SGD([np.zeros(2)], lr=0.1)
