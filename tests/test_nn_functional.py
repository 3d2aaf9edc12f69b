"""frame.nn.functional, frame.softmax/log_softmax and frame.fft against independent
NumPy formulas: argument forms, dropout statistics and error messages."""
from __future__ import annotations

import math

import numpy as np
import pytest

import frame
import frame.nn.functional as F
from frame.functions._core import current_op_handler, op_handler


def _rand(shape, seed=0, dtype=np.float64, low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


@pytest.fixture
def launched():
    """The op names the frame functions handed to the runtime (the eager path)."""
    names: list[str] = []
    run = current_op_handler()

    def spy(op, arrays, attrs):
        names.append(op)
        return run(op, arrays, attrs)

    with op_handler(spy):
        yield names


# --------------------------------------------------------------------------- activations, softmax

def test_reexported_activations_are_the_frame_functions():
    assert F.relu is frame.relu and F.gelu is frame.gelu
    assert F.softmax is frame.softmax and F.log_softmax is frame.log_softmax
    assert frame.softmax.__frame_op__ == "softmax"


@pytest.mark.parametrize("axis", [-1, 0, 1, -2])
def test_softmax_axes(axis, launched):
    x = _rand((3, 4), 1)
    e = np.exp(x)
    want = e / e.sum(axis=axis, keepdims=True)
    got = frame.softmax(x, axis=axis)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(frame.log_softmax(x, axis).numpy(), np.log(want), rtol=1e-12)
    assert launched == ["softmax", "log_softmax"]


def test_softmax_methods_and_defaults():
    t = frame.tensor(_rand((2, 5), 2, np.float32))
    np.testing.assert_allclose(t.softmax().numpy().sum(axis=-1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(t.log_softmax(axis=0).numpy(), frame.log_softmax(t, 0).numpy())
    assert t.softmax().dtype == frame.float32


def test_softmax_is_stable_and_canonical():
    from frame.ops import get_schema
    x = np.array([[1000.0, 1001.0], [-1000.0, -1001.0]], dtype=np.float32)
    got = frame.softmax(x).numpy()
    lo, hi = 1 / (1 + math.e), math.e / (1 + math.e)
    np.testing.assert_allclose(got, [[lo, hi], [hi, lo]], rtol=1e-6)
    # attrs hold the normalised axis; a negative one is rejected by the op itself
    with pytest.raises(frame.FrameAxisError, match="softmax: axis -1 is negative"):
        get_schema("softmax").infer([frame.ir.TensorType(frame.float32, (2, 2))], {"axis": -1})


def test_softmax_errors():
    with pytest.raises(frame.FrameAxisError, match="softmax: axis 2 is out of bounds"):
        frame.softmax(np.ones((2, 2)), axis=2)
    with pytest.raises(frame.FrameTypeError, match="log_softmax.*floating-point"):
        frame.log_softmax(np.ones(3, dtype=np.int64))


# --------------------------------------------------------------------------- linear

def test_linear_matches_numpy(launched):
    x, w, b = _rand((5, 3), 1), _rand((4, 3), 2), _rand((4,), 3)
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), x @ w.T + b, rtol=1e-12)
    assert launched == ["transpose", "matmul", "add"]
    x3 = _rand((2, 5, 3), 4)
    np.testing.assert_allclose(F.linear(x3, w).numpy(), np.einsum("bni,oi->bno", x3, w),
                               rtol=1e-12)


def test_linear_errors():
    with pytest.raises(frame.FrameValueError, match="linear: input's last dimension must be "
                                                    "in_features=3"):
        F.linear(np.ones((2, 4)), np.ones((5, 3)))
    with pytest.raises(frame.FrameValueError, match="linear: weight must be 2-D"):
        F.linear(np.ones((2, 3)), np.ones(3))
    with pytest.raises(frame.FrameValueError, match=r"linear: bias must have shape \[5\]"):
        F.linear(np.ones((2, 3)), np.ones((5, 3)), np.ones(1))


# --------------------------------------------------------------------------- losses

def _ce_loop(logits, labels):
    out = []
    for row, y in zip(np.asarray(logits, np.float64), labels):
        m = row.max()
        out.append(m + math.log(sum(math.exp(v - m) for v in row)) - row[y])
    return np.array(out)


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_cross_entropy(label_dtype, launched):
    logits = _rand((6, 5), 1, np.float32)
    labels = np.array([0, 4, 2, 2, 1, 3], dtype=label_dtype)
    per_row = _ce_loop(logits, labels)
    loss = F.cross_entropy(frame.tensor(logits), frame.tensor(labels))
    assert loss.shape == () and loss.dtype == frame.float32
    np.testing.assert_allclose(loss.item(), per_row.mean(), rtol=1e-6)
    np.testing.assert_allclose(F.cross_entropy(logits, labels, "sum").item(), per_row.sum(),
                               rtol=1e-6)
    np.testing.assert_allclose(F.cross_entropy(logits, labels, reduction="none").numpy(),
                               per_row, rtol=1e-5)
    assert launched == ["cross_entropy"] * 3


def test_cross_entropy_accepts_python_labels():
    logits = _rand((2, 3), 5)
    np.testing.assert_allclose(F.cross_entropy(logits, [2, 0]).item(),
                               _ce_loop(logits, [2, 0]).mean(), rtol=1e-12)


def test_cross_entropy_errors():
    logits = np.zeros((3, 4), np.float32)
    with pytest.raises(frame.FrameValueError, match=r"cross_entropy\(.*\): label 4 is out of range "
                                                    r"for 4 classes"):
        F.cross_entropy(logits, np.array([0, 4, 1]))
    with pytest.raises(frame.FrameValueError, match=r"cross_entropy\(.*\): label -1 is out of range"):
        F.cross_entropy(logits, np.array([0, -1, 1]))
    with pytest.raises(frame.FrameTypeError, match="cross_entropy.*labels must be an integer "
                                                   "tensor"):
        F.cross_entropy(logits, np.array([0.0, 1.0, 2.0]))
    with pytest.raises(frame.FrameValueError, match=r"cross_entropy.*labels must have shape \[3\]"):
        F.cross_entropy(logits, np.array([0, 1]))
    with pytest.raises(frame.FrameValueError, match="cross_entropy.*logits must be 2-D"):
        F.cross_entropy(np.zeros(4, np.float32), np.array([0]))
    with pytest.raises(frame.FrameValueError, match="cross_entropy.*reduction must be one of"):
        F.cross_entropy(logits, np.array([0, 1, 2]), reduction="avg")


def _ce_options_reference(logits, labels, reduction, weight, ignore_index, smoothing):
    """PyTorch's cross entropy with weight, ignore_index and label_smoothing, in
    float64 NumPy, from its definition."""
    x = logits.astype(np.float64)
    logp = x - x.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    n, c = x.shape
    keep = np.ones(n, bool) if ignore_index is None else labels != ignore_index
    safe = np.where(keep, labels, 0)
    w_class = np.ones(c) if weight is None else weight.astype(np.float64)
    w = np.where(keep, w_class[safe], 0.0)
    nll = -logp[np.arange(n), safe] * w
    smooth = np.where(keep, -(logp * w_class).sum(1), 0.0)
    if reduction == "none":
        return (1 - smoothing) * nll + smoothing / c * smooth
    if reduction == "sum":
        return (1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()
    return (1 - smoothing) * nll.sum() / w.sum() + smoothing / c * smooth.sum() / w.sum()


CE_OPTIONS = [dict(ignore_index=-100), dict(weight=True), dict(label_smoothing=0.1),
              dict(weight=True, ignore_index=2, label_smoothing=0.25)]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("options", CE_OPTIONS, ids=lambda o: "-".join(o))
def test_cross_entropy_weight_ignore_index_label_smoothing(options, reduction):
    """PyTorch's options, against their definition in NumPy, eagerly, jitted
    and through the module; gradients against central differences."""
    logits = _rand((7, 4), 3, np.float32)
    labels = np.array([0, 3, -100, 1, 2, 2, -100]) if options.get("ignore_index") == -100 \
        else np.array([0, 3, 2, 1, 2, 2, 0])
    weight = np.array([0.5, 2.0, 1.0, 0.25], np.float32) if options.get("weight") else None
    kwargs = {**options, "weight": None if weight is None else frame.tensor(weight)}
    want = _ce_options_reference(logits, labels, reduction, weight, options.get("ignore_index"),
                                 options.get("label_smoothing", 0.0))
    got = F.cross_entropy(frame.tensor(logits), frame.tensor(labels), reduction, **kwargs)
    assert got.dtype == frame.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    jitted = frame.jit(lambda x, y: F.cross_entropy(x, y, reduction, **kwargs))
    np.testing.assert_allclose(jitted(frame.tensor(logits), frame.tensor(labels)).numpy(), want,
                               rtol=1e-5, atol=1e-6)
    module = frame.nn.CrossEntropyLoss(kwargs["weight"], reduction=reduction,
                                       ignore_index=options.get("ignore_index"),
                                       label_smoothing=options.get("label_smoothing", 0.0))
    np.testing.assert_allclose(module(frame.tensor(logits), frame.tensor(labels)).numpy(), want,
                               rtol=1e-5, atol=1e-6)
    x = frame.tensor(logits.astype(np.float64), requires_grad=True)
    kw64 = {**kwargs, "weight": None if weight is None else frame.tensor(weight.astype(np.float64))}
    F.cross_entropy(x, frame.tensor(labels), "sum", **kw64).backward()
    eps, numeric = 1e-6, np.zeros(logits.shape)
    for idx in np.ndindex(*logits.shape):
        hi, lo = logits.astype(np.float64), logits.astype(np.float64)
        hi[idx] += eps
        lo[idx] -= eps
        numeric[idx] = (_ce_options_reference(hi, labels, "sum", weight, options.get("ignore_index"),
                                              options.get("label_smoothing", 0.0))
                        - _ce_options_reference(lo, labels, "sum", weight,
                                                options.get("ignore_index"),
                                                options.get("label_smoothing", 0.0))) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("options", CE_OPTIONS, ids=lambda o: "-".join(o))
def test_cross_entropy_options_match_pytorch(options):
    torch = pytest.importorskip("torch")
    logits = _rand((7, 4), 4, np.float32)
    labels = np.array([0, 3, -100, 1, 2, 2, -100]) if options.get("ignore_index") == -100 \
        else np.array([0, 3, 2, 1, 2, 2, 0])
    weight = np.array([0.5, 2.0, 1.0, 0.25], np.float32) if options.get("weight") else None
    for reduction in ("mean", "sum", "none"):
        got = F.cross_entropy(frame.tensor(logits), frame.tensor(labels), reduction,
                              **{**options, "weight": None if weight is None else frame.tensor(weight)})
        want = torch.nn.functional.cross_entropy(
            torch.tensor(logits), torch.tensor(labels), reduction=reduction,
            **{**options, "weight": None if weight is None else torch.tensor(weight)})
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_cross_entropy_option_errors():
    logits, labels = np.zeros((3, 4), np.float32), np.array([0, 1, 2])
    with pytest.raises(frame.FrameValueError, match="label_smoothing must lie in"):
        F.cross_entropy(logits, labels, label_smoothing=1.5)
    with pytest.raises(frame.FrameValueError, match=r"weight must be a float tensor of shape \[4\]"):
        F.cross_entropy(logits, labels, weight=frame.tensor(np.ones(3, np.float32)))
    with pytest.raises(frame.FrameTypeError, match="ignore_index must be an int"):
        F.cross_entropy(logits, labels, ignore_index=1.5)
    with pytest.raises(frame.FrameTypeError, match="pass reduction='sum' by name"):
        frame.nn.CrossEntropyLoss("sum")


def test_mse_loss():
    a, b = _rand((3, 4), 1, np.float32), _rand((3, 4), 2, np.float32)
    d = a.astype(np.float64) - b
    np.testing.assert_allclose(F.mse_loss(a, b).item(), (d ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(F.mse_loss(a, b, "sum").item(), (d ** 2).sum(), rtol=1e-6)
    np.testing.assert_allclose(F.mse_loss(a, b, "none").numpy(), d ** 2, rtol=1e-6)
    with pytest.raises(frame.FrameValueError, match="mse_loss.*same shape"):
        F.mse_loss(a, b[:2])
    with pytest.raises(frame.FrameTypeError, match="mse_loss.*target must have the input's dtype"):
        F.mse_loss(a, b.astype(np.float64))


# --------------------------------------------------------------------------- conv2d

def _conv_shifted(x, w, b, stride, pads, dilation, groups):
    """Sum over kernel taps of strided input slices (another method than im2col/loops)."""
    (sh, sw), (dh, dw) = stride, dilation
    top, bottom, left, right = pads
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), (top, bottom), (left, right)))
    o, cg, kh, kw = w.shape
    ho = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    wo = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    og = o // groups
    out = np.zeros((x.shape[0], o, ho, wo))
    for g in range(groups):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = np.asarray(w[g * og:(g + 1) * og], np.float64)
        for a in range(kh):
            for e in range(kw):
                tap = xg[:, :, a * dh:a * dh + sh * (ho - 1) + 1:sh, e * dw:e * dw + sw * (wo - 1) + 1:sw]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", tap, wg[:, :, a, e])
    if b is not None:
        out += np.asarray(b, np.float64)[None, :, None, None]
    return out


CONV_FORMS = [
    # kwargs, canonical (stride, padding, dilation, groups)
    ({}, ((1, 1), (0, 0, 0, 0), (1, 1), 1)),
    ({"stride": 2, "padding": 1}, ((2, 2), (1, 1, 1, 1), (1, 1), 1)),
    ({"stride": (1, 2), "padding": (2, 1)}, ((1, 2), (2, 2, 1, 1), (1, 1), 1)),
    ({"padding": (0, 1, 2, 0)}, ((1, 1), (0, 1, 2, 0), (1, 1), 1)),
    ({"padding": "same", "dilation": 2}, ((1, 1), (2, 2, 2, 2), (2, 2), 1)),
    ({"padding": "valid", "groups": 2}, ((1, 1), (0, 0, 0, 0), (1, 1), 2)),
]


@pytest.mark.parametrize("kwargs,canonical", CONV_FORMS)
def test_conv2d_argument_forms(kwargs, canonical):
    x, w, b = _rand((2, 4, 7, 6), 1), _rand((6, 4 // canonical[3], 3, 3), 2), _rand((6,), 3)
    seen = []
    run = current_op_handler()

    def spy(op, arrays, attrs):
        seen.append(dict(attrs))
        return run(op, arrays, attrs)

    with op_handler(spy):
        got = F.conv2d(x, w, b, **kwargs)
    stride, pads, dilation, groups = canonical
    assert seen == [{"stride": stride, "padding": pads, "dilation": dilation, "groups": groups}]
    np.testing.assert_allclose(got.numpy(), _conv_shifted(x, w, b, stride, pads, dilation, groups),
                               rtol=1e-12, atol=1e-12)


def test_conv2d_same_even_kernel_pads_bottom_right():
    x, w = _rand((1, 1, 5, 5), 4), _rand((1, 1, 2, 2), 5)
    got = F.conv2d(x, w, padding="same")
    assert got.shape == (1, 1, 5, 5)
    np.testing.assert_allclose(got.numpy(), _conv_shifted(x, w, None, (1, 1), (0, 1, 0, 1),
                                                          (1, 1), 1), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_conv2d_low_precision_dtypes(dtype):
    x, w = _rand((2, 3, 6, 6), 6, dtype, -1, 1), _rand((4, 3, 3, 3), 7, dtype, -1, 1)
    got = F.conv2d(x, w, padding=1)
    assert got.numpy().dtype == dtype
    np.testing.assert_allclose(got.numpy().astype(np.float64),
                               _conv_shifted(x, w, None, (1, 1), (1, 1, 1, 1), (1, 1), 1),
                               rtol=2e-3 if dtype == np.float16 else 1e-5, atol=1e-2 if dtype == np.float16 else 1e-5)


def test_conv2d_errors():
    x = np.ones((1, 3, 5, 5), np.float32)
    with pytest.raises(frame.FrameValueError, match="conv2d.*input has 3 channels but weight"):
        F.conv2d(x, np.ones((2, 2, 3, 3), np.float32))
    with pytest.raises(frame.FrameValueError, match="conv2d.*not divisible by groups=3"):
        F.conv2d(x, np.ones((4, 1, 3, 3), np.float32), groups=3)
    with pytest.raises(frame.FrameTypeError, match="conv2d.*weight must have the input's dtype"):
        F.conv2d(x, np.ones((2, 3, 3, 3)))
    with pytest.raises(frame.FrameTypeError, match="conv2d.*floating-point"):
        F.conv2d(x.astype(np.int64), np.ones((2, 3, 3, 3), np.int64))
    with pytest.raises(frame.FrameValueError, match="conv2d.*input must be 4-D"):
        F.conv2d(np.ones((3, 5, 5), np.float32), np.ones((2, 3, 3, 3), np.float32))
    with pytest.raises(frame.FrameValueError, match=r"conv2d.*bias must have shape \[2\]"):
        F.conv2d(x, np.ones((2, 3, 3, 3), np.float32), np.ones(3, np.float32))
    with pytest.raises(frame.FrameValueError, match="conv2d.*does not fit"):
        F.conv2d(x, np.ones((2, 3, 7, 7), np.float32))
    with pytest.raises(frame.FrameValueError, match="conv2d: padding='same' needs stride 1"):
        F.conv2d(x, np.ones((2, 3, 3, 3), np.float32), stride=2, padding="same")
    with pytest.raises(frame.FrameTypeError, match="conv2d: stride must be an int or a pair"):
        F.conv2d(x, np.ones((2, 3, 3, 3), np.float32), stride=(1, 1, 1))
    with pytest.raises(frame.FrameTypeError, match="conv2d: padding must be an int, an"):
        F.conv2d(x, np.ones((2, 3, 3, 3), np.float32), padding=(1, 1, 1))


# --------------------------------------------------------------------------- pooling

def test_pooling_defaults_stride_to_kernel(launched):
    x = _rand((2, 3, 6, 4), 1)
    blocks = x.reshape(2, 3, 3, 2, 2, 2)
    np.testing.assert_array_equal(F.max_pool2d(x, 2).numpy(), blocks.max(axis=(3, 5)))
    np.testing.assert_allclose(F.avg_pool2d(x, (2, 2)).numpy(), blocks.mean(axis=(3, 5)),
                               rtol=1e-12)
    assert launched == ["max_pool2d", "avg_pool2d"]


def test_avg_pool_counts_padding():
    # count_include_pad=True: a 3x3 window at a corner of a padded ones image holds 4 ones
    got = F.avg_pool2d(np.ones((1, 1, 3, 3)), 3, stride=1, padding=1).numpy()[0, 0]
    np.testing.assert_allclose(got, [[4 / 9, 6 / 9, 4 / 9], [6 / 9, 1, 6 / 9], [4 / 9, 6 / 9, 4 / 9]],
                               rtol=1e-12)


def test_max_pool_pads_with_minus_inf():
    x = -np.arange(1.0, 10.0).reshape(1, 1, 3, 3)
    got = F.max_pool2d(x, 2, stride=1, padding=1).numpy()[0, 0]
    # every window holds at least one real (negative) element; zero padding would give 0
    assert got.shape == (4, 4) and np.all(got < 0)
    assert got[0, 0] == -1.0 and got[3, 3] == -9.0


def test_pool_forms_and_errors():
    x = _rand((1, 2, 5, 7), 2)
    got = F.max_pool2d(x, (3, 2), stride=(2, 3), padding=(1, 0))
    assert got.shape == (1, 2, 3, 2)
    want = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)), constant_values=-np.inf)
    assert got.numpy()[0, 1, 2, 1] == want[0, 1, 4:7, 3:5].max()
    with pytest.raises(frame.FrameValueError, match="max_pool2d.*: top padding 2 must be at most "
                                                    "half the kernel size 3"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(frame.FrameValueError, match="avg_pool2d.*window does not fit"):
        F.avg_pool2d(x, (6, 1))
    with pytest.raises(frame.FrameValueError, match="avg_pool2d.*input must be 4-D"):
        F.avg_pool2d(np.ones((5, 5)), 2)
    with pytest.raises(frame.FrameTypeError, match="max_pool2d: kernel size must be an int"):
        F.max_pool2d(x, "2")


# --------------------------------------------------------------------------- layer_norm

def _ln(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def test_layer_norm_forms(launched):
    x, w, b = _rand((2, 3, 4), 1), _rand((3, 4), 2), _rand((3, 4), 3)
    np.testing.assert_allclose(F.layer_norm(x, (4,)).numpy(), _ln(x, 1), rtol=1e-10)
    np.testing.assert_allclose(F.layer_norm(x, 4).numpy(), _ln(x, 1), rtol=1e-10)
    np.testing.assert_allclose(F.layer_norm(x, (3, 4), w, b, eps=0.1).numpy(),
                               _ln(x, 2, w, b, 0.1), rtol=1e-10)
    np.testing.assert_allclose(F.layer_norm(x, [3, 4], w).numpy(), _ln(x, 2, w), rtol=1e-10)
    assert launched == ["layer_norm"] * 4
    launched.clear()
    np.testing.assert_allclose(F.layer_norm(x, (3, 4), b=b).numpy(), _ln(x, 2, None, b),
                               rtol=1e-10)
    assert launched == ["full", "layer_norm"]  # the ones weight comes from the op path


def test_layer_norm_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(frame.FrameValueError, match=r"layer_norm: normalized shape \[2\] must be"):
        F.layer_norm(x, 2)
    with pytest.raises(frame.FrameValueError, match=r"layer_norm.*weight shape \[4\] must equal"):
        F.layer_norm(x, 3, np.ones(4, np.float32))
    with pytest.raises(frame.FrameTypeError, match="layer_norm.*bias must have the input's dtype"):
        F.layer_norm(x, 3, np.ones(3, np.float32), np.ones(3))
    with pytest.raises(frame.FrameValueError, match="layer_norm.*: eps must be"):
        F.layer_norm(x, 3, eps=-1.0)


# --------------------------------------------------------------------------- embedding

def test_embedding():
    weight = _rand((6, 3), 1, np.float32)
    idx = np.array([[0, 5], [2, 2]], dtype=np.int32)
    got = F.embedding(idx, weight)
    assert got.shape == (2, 2, 3) and got.dtype == frame.float32
    np.testing.assert_array_equal(got.numpy(), weight[idx])
    np.testing.assert_array_equal(F.embedding(frame.tensor(4), weight).numpy(), weight[4])
    with pytest.raises(frame.FrameValueError, match=r"embedding\(.*\): index 6 is out of range for 6"):
        F.embedding(np.array([1, 6]), weight)
    with pytest.raises(frame.FrameValueError, match=r"embedding\(.*\): index -1 is out of range"):
        F.embedding(np.array([-1]), weight)
    with pytest.raises(frame.FrameTypeError, match="embedding.*indices must be an integer"):
        F.embedding(np.array([1.0]), weight)
    with pytest.raises(frame.FrameValueError, match="embedding.*weight must be 2-D"):
        F.embedding(np.array([1]), np.ones(3))


# --------------------------------------------------------------------------- dropout

def test_dropout_identity_cases():
    x = frame.tensor(_rand((4, 4), 1, np.float32))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0, True) is x
    assert F.dropout(x, 0, training=True) is x


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics(p):
    frame.manual_seed(11)
    x = np.full(200_000, 2.0, np.float32)
    y = F.dropout(x, p, True).numpy()
    dropped = y == 0
    # binomial: the fraction dropped is within 5 standard deviations of p
    assert abs(dropped.mean() - p) < 5 * math.sqrt(p * (1 - p) / x.size)
    np.testing.assert_allclose(y[~dropped], 2.0 / (1 - p), rtol=1e-6)
    assert abs(y.mean() - 2.0) < 0.05


def test_dropout_determinism_and_dtype(launched):
    x = _rand((8, 16), 3, np.float16)
    frame.manual_seed(5)
    a = F.dropout(x, 0.25, True).numpy()
    frame.manual_seed(5)
    b = F.dropout(x, 0.25, True).numpy()
    c = F.dropout(x, 0.25, True).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a == 0, c == 0)
    assert a.dtype == np.float16
    assert set(launched) == {"mul", "where"}   # the keep mask is drawn on the host


def test_dropout_errors():
    for p in (1.0, -0.1, 1.5, True, "0.5"):
        with pytest.raises(frame.FrameValueError, match=r"dropout: p must be a probability in \[0, 1\)"):
            F.dropout(np.ones(3, np.float32), p, True)
    with pytest.raises(frame.FrameTypeError, match="dropout: the input must be a floating-point"):
        F.dropout(np.ones(3, np.int64), 0.5, True)


# --------------------------------------------------------------------------- fft

@pytest.mark.parametrize("dtype,cdtype", [(np.float32, np.complex64), (np.float64, np.complex128)])
def test_rfft_irfft(dtype, cdtype, launched):
    x = _rand((3, 8), 1, dtype)
    spec = frame.fft.rfft(x)
    assert spec.shape == (3, 5) and spec.numpy().dtype == cdtype
    t = np.arange(8)
    dft = np.exp(-2j * np.pi * np.arange(5)[:, None] * t[None, :] / 8)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(spec.numpy(), x.astype(np.float64) @ dft.T, rtol=tol, atol=tol)
    back = frame.fft.irfft(spec, n=8)
    assert back.numpy().dtype == dtype
    np.testing.assert_allclose(back.numpy(), x, rtol=tol, atol=tol)
    assert frame.fft.irfft(spec).shape == (3, 8)          # default n = 2 * (5 - 1)
    assert frame.fft.rfft(x, n=5).shape == (3, 3)          # cropped
    assert frame.fft.rfft(x, 11).shape == (3, 6)           # zero-padded
    assert launched == ["rfft", "irfft", "irfft", "rfft", "rfft"]


def test_fft_errors():
    with pytest.raises(frame.FrameValueError, match="rfft: n must be a positive number"):
        frame.fft.rfft(np.ones(4), n=0)
    with pytest.raises(frame.FrameTypeError, match="irfft: n must be None or a positive int"):
        frame.fft.irfft(np.ones(4, np.complex64), n=2.5)
    with pytest.raises(frame.FrameTypeError, match="irfft.*expected a complex64 or complex128"):
        frame.fft.irfft(np.ones(4, np.float32))
    with pytest.raises(frame.FrameTypeError, match="rfft.*expected a real"):
        frame.fft.rfft(np.ones(4, np.complex64))
    with pytest.raises(frame.FrameValueError, match="rfft.*0-d tensor"):
        frame.fft.rfft(np.float32(1.0))
    with pytest.raises(frame.FrameValueError, match="irfft.*give n explicitly"):
        frame.fft.irfft(np.ones(1, np.complex128))


# --------------------------------------------------------------------------- graphs

GRAPH_CASES = [
    ("softmax", [("float16", (2, 5))], {"axis": 1}),
    ("log_softmax", [("float32", (3, 4))], {"axis": 0}),
    ("layer_norm", [("float32", (2, 3, 4)), ("float32", (3, 4)), ("float32", (3, 4))],
     {"axis": 1, "eps": 1e-3}),
    ("cross_entropy", [("float32", (4, 3)), ("int32", (4,))], {"reduction": "mean"}),
    ("mse_loss", [("float64", (2, 2)), ("float64", (2, 2))], {"reduction": "sum"}),
    ("conv2d", [("float32", (1, 2, 5, 5)), ("float32", (4, 1, 3, 3)), ("float32", (4,))],
     {"stride": (2, 1), "padding": (1, 0, 1, 1), "groups": 2}),
    ("max_pool2d", [("float32", (1, 1, 4, 4))], {"kernel": (2, 2), "stride": (2, 2)}),
    ("embedding", [("int64", (3,)), ("float32", (5, 2))], {}),
    ("rfft", [("float32", (2, 8))], {"n": 6}),
    ("irfft", [("complex128", (5,))], {}),
]


@pytest.mark.parametrize("op,inputs,attrs", GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES])
def test_nodes_and_decompositions_verify_and_round_trip(op, inputs, attrs):
    from frame.ir import GraphBuilder, dump_text, parse_text, verify
    from frame.ops import get_schema
    b = GraphBuilder()
    ins = [b.input(dtype, shape) for dtype, shape in inputs]
    graph = b.build(b.op(op, *ins, **attrs))
    verify(graph)
    assert dump_text(parse_text(dump_text(graph))) == dump_text(graph)
    schema = get_schema(op)
    if schema.decompose is not None:
        assert schema.has("composite")
        d = GraphBuilder()
        dins = [d.input(dtype, shape) for dtype, shape in inputs]
        outs = schema.decompose(d, dins, schema.normalize_attrs(attrs))
        dgraph = d.build(*outs)
        verify(dgraph)
        assert [v.type for v in dgraph.outputs] == [v.type for v in graph.outputs]
