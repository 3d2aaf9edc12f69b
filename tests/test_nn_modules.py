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


# --------------------------------------------------------------------------- buffers

class WithStats(nn.Module):
    """A module with a persistent and a non-persistent buffer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("count", frame.zeros((), dtype=frame.int64))
        self.register_buffer("scale", frame.ones((2,)))
        self.register_buffer("cache", frame.zeros((2,)), persistent=False)

    def forward(self, x):
        return self.fc(x) * self.scale


def test_buffers_are_listed_and_persistent_ones_are_state():
    m = WithStats()
    assert [n for n, _ in m.named_buffers()] == ["count", "scale", "cache"]
    assert [n for n, _ in m.named_parameters()] == ["fc.weight", "fc.bias"]
    assert list(m.state_dict()) == ["fc.weight", "fc.bias", "count", "scale"]
    assert all(not b.requires_grad for b in m.buffers())
    assert [n for n, _ in m.named_buffers(prefix="net.")][0] == "net.count"
    assert len(list(frame.optim.SGD(m.parameters(), lr=0.1).params)) == 2


def test_buffers_through_nested_containers():
    """Buffers are named by their path through Sequential, ModuleList,
    ModuleDict and plain lists, as PyTorch names them."""
    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([WithStats(), nn.Sequential(nn.ReLU(), WithStats())])
            self.heads = nn.ModuleDict({"a": WithStats()})
            self.extra = [WithStats()]

    names = [n for n, _ in Holder().named_buffers()]
    assert names == ["blocks.0.count", "blocks.0.scale", "blocks.0.cache", "blocks.1.1.count",
                     "blocks.1.1.scale", "blocks.1.1.cache", "heads.a.count", "heads.a.scale",
                     "heads.a.cache", "extra.0.count", "extra.0.scale", "extra.0.cache"]
    seq = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias",
                                      "1.running_mean", "1.running_var", "1.num_batches_tracked"]
    assert [n for n, _ in seq.named_buffers(recurse=False)] == []
    assert [n for n, _ in seq[1].named_buffers(recurse=False)] == [
        "running_mean", "running_var", "num_batches_tracked"]


def test_assigning_a_buffer_replaces_it_and_state_dict_round_trips():
    a, b = WithStats(), WithStats()
    a.scale = frame.tensor([2.0, 3.0])   # replaces the buffer, as in PyTorch
    assert [n for n, _ in a.named_buffers()] == ["count", "scale", "cache"]
    a.count += 5
    a.cache = None                       # a None buffer is left out
    assert [n for n, _ in a.named_buffers()] == ["count", "scale"]
    scale = b.scale
    b.load_state_dict(a.state_dict())
    assert b.scale is scale and b.scale.tolist() == [2.0, 3.0] and b.count.item() == 5
    state = a.state_dict()
    state["scale"].numpy()[...] = 0      # a copy: the module is unchanged
    assert a.scale.tolist() == [2.0, 3.0]
    del state["count"]
    with pytest.raises(ValueError, match=r"missing keys \['count'\]"):
        b.load_state_dict(state)
    state["count"], state["cache"] = frame.tensor(1), frame.zeros((2,))
    with pytest.raises(ValueError, match=r"unexpected keys \['cache'\]"):
        b.load_state_dict(state)
    b.load_state_dict(state, strict=False)
    assert b.count.item() == 1
    a.scale = 3.0                        # no __setattr__ refuses it: traversal does
    with pytest.raises(TypeError, match="holds a float"):
        a.state_dict()


@pytest.mark.parametrize("call, error, text", [
    (lambda m: m.register_buffer("fc", frame.zeros((1,))), KeyError, "attribute 'fc' already exists"),
    (lambda m: m.register_buffer("a.b", frame.zeros((1,))), KeyError, 'contain "."'),
    (lambda m: m.register_buffer("", frame.zeros((1,))), KeyError, "empty string"),
    (lambda m: m.register_buffer("x", np.zeros(2)), TypeError, "frame Tensor or None required"),
    (lambda m: m.register_buffer(3, frame.zeros((1,))), TypeError, "should be a string"),
], ids=["existing", "dot", "empty", "ndarray", "name-type"])
def test_register_buffer_errors(call, error, text):
    with pytest.raises(error, match=text):
        call(WithStats())


def test_state_dict_round_trip_with_torch_batchnorm():
    """A PyTorch model with BatchNorm loads into the same frame model by its
    state_dict keys (running statistics and num_batches_tracked too), both
    give the same eval outputs, and frame's state loads back into PyTorch."""
    torch = pytest.importorskip("torch")
    tmodel = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3),
                                 torch.nn.Flatten(), torch.nn.Linear(12, 4), torch.nn.BatchNorm1d(4))
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 4),
                          nn.BatchNorm1d(4))
    rng = np.random.default_rng(0)
    for _ in range(3):   # running statistics that are not the initial ones
        tmodel(torch.tensor(rng.standard_normal((5, 2, 4, 4)).astype(np.float32)))
    assert list(model.state_dict()) == list(tmodel.state_dict())
    model.load_state_dict(tmodel.state_dict())
    assert model[1].num_batches_tracked.item() == 3 and model[1].num_batches_tracked.dtype == frame.int64
    tmodel.eval()
    model.eval()
    x = rng.standard_normal((5, 2, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(model(frame.tensor(x)).numpy(),
                               tmodel(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    model[1].running_mean.numpy()[...] = 7.0
    tmodel.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    assert tmodel[1].running_mean.tolist() == [7.0] * 3


# --------------------------------------------------------------------------- Module.to

def test_to_dtype_converts_in_place_and_keeps_the_parameters():
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    params = list(m.parameters())
    opt = frame.optim.SGD(m.parameters(), lr=0.1)   # made before the conversion
    m[0].weight.grad = frame.ones((4, 3))
    assert m.double() is m
    assert [p for p in m.parameters()] == params and all(a is b for a, b in zip(m.parameters(), params))
    assert all(p.dtype == frame.float64 and p.requires_grad for p in m.parameters())
    assert m[0].weight.grad.dtype == frame.float64
    assert m[1].running_mean.dtype == frame.float64
    assert m[1].num_batches_tracked.dtype == frame.int64   # integer buffers keep their dtype
    x = frame.tensor(np.random.default_rng(0).standard_normal((5, 3)))
    before = m[0].weight.numpy().copy()
    opt.zero_grad()
    m(x).sum().backward()
    assert m[0].weight.grad.dtype == frame.float64
    opt.step()
    assert m[0].weight.dtype == frame.float64 and not np.array_equal(m[0].weight.numpy(), before)
    assert m.float()[0].weight.dtype == frame.float32
    assert m.to(frame.float64, ) is m and m[0].bias.dtype == frame.float64
    assert m.to("cpu") is m and m.cpu() is m and m[0].bias.dtype == frame.float64
    assert m.to("cpu", frame.float32)[0].bias.dtype == frame.float32
    assert m.to(device="cpu", dtype="float64")[0].bias.dtype == frame.float64
    assert m.to(frame.zeros((1,), dtype=frame.float32))[0].bias.dtype == frame.float32
    assert m.half()[1].running_var.dtype == frame.float16


def test_to_errors():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="only accepts floating point dtypes.*int64"):
        m.to(frame.int64)
    with pytest.raises(ValueError, match="only the 'cpu' device, got 'cuda'"):
        m.to("cuda")
    with pytest.raises(ValueError, match="only the 'cpu' device"):
        m.to(device="cuda:0")
    with pytest.raises(TypeError, match="expected a frame dtype"):
        m.to(3)
    assert m.weight.dtype == frame.float32


def test_to_matches_torch_conversion():
    torch = pytest.importorskip("torch")
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).double()
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).double()
    assert {k: str(v.dtype).split(".")[-1] for k, v in tm.state_dict().items()} == \
        {k: v.dtype.name for k, v in m.state_dict().items()}
