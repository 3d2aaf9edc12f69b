"""The Tensor / nn API other frameworks' code expects (issue 15 items 7 and 8),
jitted vs plain: each new name is captured in one graph with no break, or is a
clean break whose kind and reason are asserted."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import frame
import frame.nn.functional as F

from .helpers import assert_same_as_eager


def _x(*shape, dtype=np.float32, seed=0):
    return frame.tensor(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def _i(*shape, dtype=np.int64, seed=0):
    return frame.tensor(np.random.default_rng(seed).integers(-20, 20, shape).astype(dtype))


def _one_graph(fn, *args, **kwargs):
    """Same as eager, and ``explain`` shows one graph and no break."""
    assert_same_as_eager(fn, *args, **kwargs)
    out = frame.explain(fn)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
    assert (out.graph_count, out.graph_break_count) == (1, 0), str(out)


def _breaks(fn, *args, kind: str, reason: str, graphs: int | None = None):
    """Same as eager, with breaks of ``kind`` whose reason contains ``reason``."""
    assert_same_as_eager(fn, *args, captured=None)
    out = frame.explain(fn)(*copy.deepcopy(args))
    assert out.graph_break_count >= 1, str(out)
    assert all(b.kind == kind and reason in b.reason for b in out.break_reasons), \
        [str(b) for b in out.break_reasons]
    if graphs is not None:
        assert out.graph_count == graphs, str(out)
    return out


# ----------------------------------------------------------------------------- __setitem__

SETITEMS = [
    (lambda t: t.__setitem__(0, 5.0) or t, "int"),
    (lambda t: t.__setitem__((slice(None), 1), 2.5) or t, "column"),
    (lambda t: t.__setitem__((Ellipsis, slice(1, None)), frame.ones((1, 2))) or t, "broadcast"),
    (lambda t: t.__setitem__(([0, 2, 0],), frame.zeros((3, 3))) or t, "int-array"),
    (lambda t: t.__setitem__((1, slice(None, None, -1)), frame.tensor([1.0, 2.0, 3.0])) or t, "reversed"),
]


def _setitem_int(t):
    t[0] = 5.0
    return t * 2


def _setitem_slice_value(t, v):
    t[1:, ::2] = v
    return t.sum()


def _setitem_int_array(t, v):
    t[[2, 0, 2]] = v  # repeated position: the last value wins
    return t


def _setitem_index_tensor(t, idx):
    t[idx] = -1.0
    return t + 0


def _setitem_cast(t):
    t[0, 0] = 2.7  # cast to the tensor's dtype, as NumPy
    t[1] = True
    return t


def _setitem_float64_scalar(t):
    t[0] = 0.1  # a Python float keeps float64 precision in a float64 tensor
    return t


def _setitem_broadcast_error(t):
    t[0] = frame.ones((2,))
    return t


def _setitem_new_local(x):
    y = frame.zeros((2, 3))
    y[0] = x
    y[1, 1:] = x[:2] * 10
    return y


def test_setitem_captured_one_graph():
    _one_graph(_setitem_int, _x(3, 3))
    _one_graph(_setitem_slice_value, _x(3, 4), _x(2, 2, seed=1))
    _one_graph(_setitem_int_array, _x(3, 2), _x(3, 2, seed=1))
    _one_graph(_setitem_index_tensor, _x(4, 2), frame.tensor([3, -1, 0]))
    _one_graph(_setitem_cast, _i(2, 3))
    _one_graph(_setitem_float64_scalar, _x(3, dtype=np.float64))
    _one_graph(_setitem_new_local, _x(3))


def test_setitem_errors_match():
    assert_same_as_eager(_setitem_broadcast_error, _x(3, 3))


def test_setitem_eager_numpy_semantics():
    for fn, name in SETITEMS:
        t = _x(3, 3)
        a = t.numpy().copy()
        got = fn(t).numpy()
        ref = np.array(a)
        t2 = frame.tensor(a)
        # the same assignment on the ndarray
        fn_np = {"int": lambda r: r.__setitem__(0, 5.0),
                 "column": lambda r: r.__setitem__((slice(None), 1), 2.5),
                 "broadcast": lambda r: r.__setitem__((Ellipsis, slice(1, None)), np.ones((1, 2))),
                 "int-array": lambda r: r.__setitem__(([0, 2, 0],), np.zeros((3, 3))),
                 "reversed": lambda r: r.__setitem__((1, slice(None, None, -1)), [1.0, 2.0, 3.0])}
        fn_np[name](ref)
        np.testing.assert_array_equal(got, ref, err_msg=name)
        del t2


def test_setitem_autograd_eager():
    w = frame.tensor([1.0, 2.0], requires_grad=True)
    y = frame.zeros((3,))
    y[1:] = w * 3
    (y * frame.tensor([5.0, 7.0, 11.0])).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [21.0, 33.0])
    # the overwritten elements of a recorded tensor get no gradient
    a = frame.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    b[0] = 0.0
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 2.0, 2.0])
    # a leaf that requires grad refuses in-place writes, as eager's other in-place ops
    with pytest.raises(Exception, match="in-place"):
        a[0] = 1.0


# ----------------------------------------------------------------------------- bitwise

def _bitwise(a, b):
    return a & b, a | b, a ^ b, ~a, a & 3, 5 | b, a ^ -1


def _bitwise_bool(a, b):
    return a & b, a | b, a ^ b, ~a, a & True


def _bitwise_inplace(a, b):
    a &= b
    a |= 8
    a ^= b
    return a


def _invert_float(a):
    return ~a


def test_bitwise_one_graph():
    _one_graph(_bitwise, _i(3, 4), _i(4, seed=1))
    _one_graph(_bitwise, _i(3, dtype=np.int32), _i(3, dtype=np.int64, seed=2))
    _one_graph(_bitwise_bool, frame.tensor([True, False, True]), frame.tensor([False, False, True]))
    _one_graph(_bitwise_inplace, _i(5), _i(5, seed=3))


def test_bitwise_float_raises_like_eager():
    assert_same_as_eager(_invert_float, _x(3))
    assert_same_as_eager(lambda a, b: a & b, _x(3), _x(3))


# ----------------------------------------------------------------------------- in-place methods

def _inplace_methods(x, y):
    x.add_(y).mul_(2.0)
    x.sub_(y, alpha=0.5)
    x.div_(4.0)
    x.clamp_(-0.5, 0.5)
    x.add_(1.0, alpha=3)
    return x


def _zero_then_use(x):
    y = x * 2
    y.zero_()
    return y + x


def _inplace_on_local(x):
    y = x.clone()
    y.clamp_(min=0.0)
    return y, x


def _int_div_inplace(x):
    x.div_(2)  # NumPy's same_kind rule: an int tensor cannot hold the quotient
    return x


def test_inplace_methods_one_graph():
    _one_graph(_inplace_methods, _x(3, 4), _x(3, 4, seed=1))
    _one_graph(_zero_then_use, _x(3))
    _one_graph(_inplace_on_local, _x(2, 3))


def test_inplace_method_error_like_eager():
    assert_same_as_eager(_int_div_inplace, _i(3))


def test_inplace_methods_versioned_eager():
    a = frame.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    c = b * b  # saves b
    b.add_(1.0)  # rebases b onto add: c's saved b is stale
    with pytest.raises(Exception):
        c.sum().backward()
    with pytest.raises(Exception, match="in-place"):
        a.mul_(2.0)
    x = frame.tensor([1.0, -2.0], requires_grad=True)
    y = x * 3.0
    y.clamp_(0.0, 1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])


# ----------------------------------------------------------------------------- methods

def _methods(x):
    return (x.clone(), x.flatten(), x.flatten(1), x.flatten(0, 1), x.type(frame.float64),
            x.to(frame.int32), x.to("cpu"), x.is_floating_point(), x.element_size(), x.dim(),
            x.ndimension(), x.type(), x.clamp(max=0.5))


def _like(x, n):
    return (frame.zeros_like(x), frame.ones_like(n), frame.full_like(n, 2.7),
            frame.full_like(x, 3, dtype=frame.int32), frame.empty_like(x).shape,
            frame.zeros_like(x, dtype=frame.bool_))


def _clone_is_a_copy(x):
    y = x.clone()
    y += 1
    return x, y


def _to_same_dtype_is_self(x):
    return x.to(frame.float32) is x, x.type(frame.float32) is x, x.to(frame.float32, copy=True) + 1


def test_methods_one_graph():
    _one_graph(_methods, _x(2, 3, 4))
    _one_graph(_like, _x(2, 3), _i(4))
    _one_graph(_clone_is_a_copy, _x(3))
    _one_graph(_to_same_dtype_is_self, _x(3))


def _nonzero(x):
    y = x * 2
    idx = y.nonzero()
    return idx, len(idx)


def test_nonzero_breaks_with_reason():
    _breaks(_nonzero, frame.tensor([[0.0, 1.0], [2.0, 0.0]]), kind="data_dependent",
            reason=".nonzero()", graphs=1)
    # eager: numpy.nonzero's result, int64
    got = frame.tensor([[0, 3], [4, 0]]).nonzero()
    want = np.nonzero(np.array([[0, 3], [4, 0]]))
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert all(g.dtype == frame.int64 for g in got)


def _random_like(x):
    return frame.rand_like(x).shape, frame.randn_like(x).dtype


def test_random_like_is_traced():
    # the draws are graph inputs drawn when the entry runs (tests/capture/test_random.py)
    assert_same_as_eager(_random_like, _x(2, 3), captured=None)
    out = frame.explain(_random_like)(_x(2, 3))
    assert out.graph_break_count == 0, str(out)


# ----------------------------------------------------------------------------- nn

class _Blocks(frame.nn.Module):
    def __init__(self):
        super().__init__()
        frame.manual_seed(0)
        self.layers = frame.nn.ModuleList([frame.nn.Linear(4, 4) for _ in range(3)])
        self.heads = frame.nn.ModuleDict({"a": frame.nn.Linear(4, 2), "b": frame.nn.Linear(4, 3)})
        self.softmax = frame.nn.Softmax(dim=-1)
        self.drop = frame.nn.Dropout(0.5)

    def forward(self, x, head):
        for layer in self.layers:
            x = frame.relu(layer(x))
        x = self.layers[-1](x) + x
        return self.softmax(self.drop(self.heads[head](x))), len(self.layers), "a" in self.heads


def _call(model, x, head):
    return model(x, head)


def test_module_containers_softmax_dropout_eval_one_graph():
    model = _Blocks().eval()
    with frame.no_grad():
        _one_graph(_call, model, _x(2, 4), "b")


def test_dropout_training_is_one_graph():
    model = _Blocks().train()

    def drop(m, x):
        y = x * 2
        return m.drop(y) + 1

    # the mask is never a constant of the graph: it is an input drawn at each call
    out = frame.explain(drop)(model, _x(4, 4))
    assert out.graph_break_count == 0 and out.graph_count == 1, str(out)
    frame.manual_seed(3)
    a = frame.jit(drop)(model, _x(4, 4))
    frame.manual_seed(3)
    b = drop(model, _x(4, 4))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    c = frame.jit(drop)(model, _x(4, 4))   # a cache hit draws a new mask
    assert not np.array_equal(a.numpy() == 1, c.numpy() == 1)


def test_module_containers_names_and_modes():
    model = _Blocks()
    names = [n for n, _ in model.named_parameters()]
    assert names[:2] == ["layers.0.weight", "layers.0.bias"] and "heads.b.bias" in names
    model.eval()
    assert not any(m.training for m in model.modules())
    assert len(model.layers[1:]) == 2


def test_nn_init():
    w = frame.nn.Parameter(frame.zeros((64, 32)))
    frame.manual_seed(0)
    assert frame.nn.init.kaiming_uniform_(w, a=5 ** 0.5) is w
    bound = 1 / np.sqrt(32)  # PyTorch's Linear default: gain sqrt(2/6) * sqrt(3/fan_in)
    assert np.abs(w.numpy()).max() <= bound and np.abs(w.numpy()).max() > 0.9 * bound
    frame.nn.init.xavier_normal_(w, gain=2.0)
    assert abs(w.numpy().std() - 2.0 * np.sqrt(2 / 96)) < 0.02
    frame.nn.init.constant_(w, 0.25)
    assert (w.numpy() == 0.25).all()
    frame.nn.init.zeros_(w), frame.nn.init.ones_(w)
    assert (w.numpy() == 1).all()
    frame.nn.init.normal_(w, 1.0, 0.1)
    assert abs(w.numpy().mean() - 1.0) < 0.01
    frame.nn.init.uniform_(w, -3, -2)
    assert w.numpy().min() >= -3 and w.numpy().max() < -2
    frame.nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - np.sqrt(2 / 64)) < 0.02
    assert frame.nn.init.calculate_gain("tanh") == pytest.approx(5 / 3)
    with pytest.raises(ValueError):
        frame.nn.init.xavier_uniform_(frame.zeros((3,)))
    # a parameter initialised in place is still a leaf that trains
    (w * 2).sum().backward()
    assert w.grad is not None


# ----------------------------------------------------------------------------- graph_break, disable

@frame.disable
def _native_helper(x):
    return x * 3, type(x).__name__


def _with_graph_break(x):
    y = x * 2
    frame.graph_break()
    return y + 1


def _with_disabled_call(x):
    y = x - 1
    z, name = _native_helper(y)
    return z + 1, name


def test_graph_break_is_explicit_break_with_both_sides_compiled():
    out = _breaks(_with_graph_break, _x(3), kind="explicit", reason="frame.graph_break()",
                  graphs=2)
    assert out.graph_break_count == 1
    frame.graph_break()  # eagerly a no-op


def test_disable_runs_callee_natively():
    out = _breaks(_with_disabled_call, _x(3), kind="explicit", reason="frame.disable", graphs=2)
    assert "_native_helper" in out.break_reasons[0].reason
    assert _native_helper.__wrapped__ is not None and _native_helper.__name__ == "_native_helper"
    whole = frame.explain(_native_helper)(_x(3))
    assert whole.graph_count == 0
    with pytest.raises(frame.GraphBreakError, match="explicit"):
        frame.jit(_with_graph_break, full_graph=True)(_x(3))


# ----------------------------------------------------------------------------- eager semantics

def test_eager_matches_numpy():
    a = np.array([[5, -3, 0], [7, 12, -1]], np.int32)
    b = np.array([6, 1, -2], np.int64)
    ta, tb = frame.tensor(a), frame.tensor(b)
    for got, want in [(ta & tb, a & b), (ta | tb, a | b), (ta ^ tb, a ^ b), (~ta, ~a),
                      (ta & 6, a & 6), (3 ^ tb, 3 ^ b)]:
        assert got.dtype.np == want.dtype and got.tolist() == want.tolist()
    m = np.array([True, False])
    assert (~frame.tensor(m)).tolist() == (~m).tolist()
    assert (frame.tensor(m) ^ frame.tensor([True, True])).tolist() == (m ^ True).tolist()
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    tx = frame.tensor(x)
    assert tx.flatten().tolist() == x.flatten().tolist()
    assert tx.flatten(1).shape == (2, 12) and tx.flatten(0, 1).shape == (6, 4)
    assert tx.flatten(-2).shape == (2, 12) and frame.tensor(3.0).flatten().shape == (1,)
    assert tx.dim() == tx.ndimension() == 3 and tx.element_size() == 4
    assert tx.is_floating_point() and not ta.is_floating_point()
    assert tx.type() == "frame.float32" and tx.type(frame.int64).dtype == frame.int64
    assert tx.to(frame.float32) is tx and tx.to("cpu") is tx and tx.to(frame.float32, copy=True) is not tx
    assert tx.to(ta).dtype == frame.int32
    with pytest.raises(ValueError):
        tx.to("cuda")
    c = tx.clone()
    c += 1
    assert tx.tolist() == x.tolist()
    for fn, ref in [(frame.zeros_like, np.zeros_like), (frame.ones_like, np.ones_like),
                    (lambda t: frame.full_like(t, 2.7), lambda n: np.full_like(n, 2.7))]:
        for arr in (a, x, m):
            got, want = fn(frame.tensor(arr)), ref(arr)
            assert got.dtype.np == want.dtype and got.tolist() == want.tolist()
    assert frame.empty_like(tx).shape == x.shape and frame.empty_like(ta).dtype == frame.int32
    assert frame.zeros_like(x, dtype=frame.int64).dtype == frame.int64
    assert frame.rand_like(tx).shape == x.shape and frame.randn_like(tx).dtype == frame.float32
    with pytest.raises(TypeError):
        frame.rand_like(ta)
    z = frame.tensor([1.0, 5.0, -2.0])
    assert z.clamp(0, 2).tolist() == [1.0, 2.0, 0.0]
    assert z.add_(1.0, alpha=2).tolist() == [3.0, 7.0, 0.0]
    assert z.sub_(frame.tensor([1.0, 1.0, 1.0]), alpha=3).tolist() == [0.0, 4.0, -3.0]
    with pytest.raises(TypeError):
        frame.tensor([1, 2]).div_(2)
