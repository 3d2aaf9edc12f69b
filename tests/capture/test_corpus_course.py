"""Differential corpus, seventh fidelity sweep (task HK), part one: the NumPy
code of deep-learning courses (CS231n-style assignments, "neural networks from
scratch", d2l in NumPy) -- layers written as forward/backward pairs with
``cache`` tuples, SVM and softmax losses naive (Python loops over samples and
classes) and vectorised, convolution and max pooling with nested loops over a
padded input, im2col/col2im with index arrays and ``np.add.at``, batch and
layer normalisation with ``bn_param`` dicts, dropout from the legacy global
``np.random`` state, vanilla RNN and LSTM steps and sequences, word embeddings
and a masked temporal softmax loss.

The training side (update rules on ``config`` dicts, a Solver, gradient
checks, kNN and cross-validation, "from scratch" layer classes) is
``test_corpus_course_training.py``.

Each case runs natively and jitted (``corpus.Case.check``: types, values,
mutations, aliasing, exceptions), most with several inputs through one code
cache; under the ``cpu`` and ``default`` settings every case is also compared
bit for bit (``bitwise.check_bitwise``).
"""
from __future__ import annotations

import numpy as np
import pytest

from .bitwise import check_bitwise
from .corpus import Corpus, _setting

case = Corpus()


def _rng(seed):
    return np.random.default_rng(seed)


def _normal(seed, *shape, dtype=np.float64, scale=1.0):
    return (scale * _rng(seed).normal(size=shape)).astype(dtype)


# == layers: forward/backward pairs with caches ===================================================

def affine_forward(x, w, b):
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    x, w, b = cache
    dx = dout.dot(w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T.dot(dout)
    db = np.sum(dout, axis=0)
    return dx, dw, db


def relu_forward(x):
    out = np.maximum(0, x)
    cache = x
    return out, cache


def relu_backward(dout, cache):
    x = cache
    dx = dout * (x > 0)
    return dx


def sigmoid_forward(x):
    out = 1 / (1 + np.exp(-x))
    return out, out


def sigmoid_backward(dout, cache):
    out = cache
    return dout * out * (1 - out)


def affine_relu_forward(x, w, b):
    a, fc_cache = affine_forward(x, w, b)
    out, relu_cache = relu_forward(a)
    cache = (fc_cache, relu_cache)
    return out, cache


def affine_relu_backward(dout, cache):
    fc_cache, relu_cache = cache
    da = relu_backward(dout, relu_cache)
    dx, dw, db = affine_backward(da, fc_cache)
    return dx, dw, db


def _affine_inputs(seed, n=3, shape=(2, 3), m=4, dtype=np.float64):
    d = int(np.prod(shape))
    return (_normal(seed, n, *shape, dtype=dtype), _normal(seed + 1, d, m, dtype=dtype),
            _normal(seed + 2, m, dtype=dtype), _normal(seed + 3, n, m, dtype=dtype))


@case(calls=lambda: [_affine_inputs(0), _affine_inputs(4, n=2, shape=(5,), m=3),
                     _affine_inputs(8, dtype=np.float32)])
def affine_forward_backward_reshapes_dx(x, w, b, dout):
    out, cache = affine_forward(x, w, b)
    dx, dw, db = affine_backward(dout, cache)
    return out, dx, dw, db, dx.shape == x.shape


@case(calls=lambda: [(_normal(10, 4, 5), _normal(11, 4, 5)), (np.array([[-1.0, 0.0, 2.0]]), np.ones((1, 3))),
                     (_normal(12, 3, 3, dtype=np.float32), _normal(13, 3, 3, dtype=np.float32))])
def relu_forward_backward_mask_multiply(x, dout):
    out, cache = relu_forward(x)
    dx = relu_backward(dout, cache)
    return out, dx, cache is x


@case(calls=lambda: [(_normal(14, 4, 5), _normal(15, 4, 5)),
                     (np.array([-800.0, -30.0, 0.0, 30.0, 800.0]), np.ones(5))])
def sigmoid_forward_backward_cache_is_output(x, dout):
    with np.errstate(over="ignore"):
        out, cache = sigmoid_forward(x)
    return out, sigmoid_backward(dout, cache), cache is out


@case(calls=lambda: [_affine_inputs(16), _affine_inputs(20, n=5, shape=(2, 2), m=2)])
def affine_relu_sandwich_nested_cache(x, w, b, dout):
    out, cache = affine_relu_forward(x, w, b)
    dx, dw, db = affine_relu_backward(dout, cache)
    (cx, cw, cb), relu_in = cache
    return out, dx, dw, db, cx is x, cw is w, relu_in.shape


@case(calls=lambda: [(_normal(24, 3, 4), _normal(25, 3, 4), 0.01), (_normal(26, 2, 2), np.ones((2, 2)), 0.2)])
def leaky_relu_with_where(x, dout, alpha):
    out = np.where(x > 0, x, alpha * x)
    dx = np.where(x > 0, dout, alpha * dout)
    return out, dx


@case(calls=lambda: [(_normal(27, 3, 4), _normal(28, 3, 4)), (np.zeros((2, 2)), np.ones((2, 2)))])
def tanh_forward_backward(x, dout):
    out = np.tanh(x)
    cache = out
    dx = dout * (1 - cache ** 2)
    return out, dx


@case(calls=lambda: [(_normal(29, 4, 3), _normal(30, 4, 3))])
def relu_backward_copy_then_mask_store(x, dout):
    dx = dout.copy()
    dx[x <= 0] = 0
    return dx


@case(calls=lambda: [(_normal(31, 3, 5),), (np.array([[-1000.0, 0.0, 1000.0]]),)])
def stable_sigmoid_with_positive_mask(x):
    pos_mask = x >= 0
    neg_mask = x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


@case(calls=lambda: [(_normal(32, 4, 3), _normal(33, 3, 5), np.zeros(5), _normal(34, 5, 2), np.zeros(2),
                      np.array([0, 1, 1, 0]))])
def two_layer_net_loss_and_grads_dict(X, W1, b1, W2, b2, y, reg=0.05):
    h, cache1 = affine_relu_forward(X, W1, b1)
    scores, cache2 = affine_forward(h, W2, b2)
    shifted = scores - np.max(scores, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    N = X.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    loss += 0.5 * reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
    dscores = np.exp(log_probs)
    dscores[np.arange(N), y] -= 1
    dscores /= N
    grads = {}
    dh, grads["W2"], grads["b2"] = affine_backward(dscores, cache2)
    _, grads["W1"], grads["b1"] = affine_relu_backward(dh, cache1)
    grads["W2"] += reg * W2
    grads["W1"] += reg * W1
    return loss, grads


@case(calls=lambda: [(_normal(35, 3, 4), _normal(36, 4, 3),), (_normal(37, 2, 4), _normal(38, 4, 3))])
def predict_returns_scores_when_y_is_none(X, W, y=None):
    scores = X @ W
    if y is None:
        return scores
    return np.argmax(scores, axis=1) == y


# == losses: SVM and softmax, naive and vectorised ================================================

def _linear_data(seed, n=6, d=4, c=3, dtype=np.float64):
    r = _rng(seed)
    return (0.01 * r.normal(size=(d, c))).astype(dtype), r.normal(size=(n, d)).astype(dtype), \
        r.integers(0, c, n)


def svm_loss_naive(W, X, y, reg):
    dW = np.zeros(W.shape)
    num_classes = W.shape[1]
    num_train = X.shape[0]
    loss = 0.0
    for i in range(num_train):
        scores = X[i].dot(W)
        correct_class_score = scores[y[i]]
        for j in range(num_classes):
            if j == y[i]:
                continue
            margin = scores[j] - correct_class_score + 1
            if margin > 0:
                loss += margin
                dW[:, j] += X[i]
                dW[:, y[i]] -= X[i]
    loss /= num_train
    dW /= num_train
    loss += reg * np.sum(W * W)
    dW += 2 * reg * W
    return loss, dW


def svm_loss_vectorized(W, X, y, reg):
    N = X.shape[0]
    scores = X.dot(W)
    correct = scores[np.arange(N), y]
    margins = np.maximum(0, scores - correct[:, np.newaxis] + 1)
    margins[np.arange(N), y] = 0
    loss = np.sum(margins) / N + reg * np.sum(W * W)
    binary = (margins > 0).astype(float)
    row_sum = np.sum(binary, axis=1)
    binary[np.arange(N), y] = -row_sum
    dW = X.T.dot(binary) / N + 2 * reg * W
    return loss, dW


@case(calls=lambda: [(*_linear_data(40), 0.1), (*_linear_data(41, n=4, d=3, c=4), 0.0)])
def svm_loss_naive_double_loop(W, X, y, reg):
    loss, dW = svm_loss_naive(W, X, y, reg)
    return loss, dW, type(loss)


@case(calls=lambda: [(*_linear_data(42), 0.1), (*_linear_data(43, n=5, d=2, c=5), 1e-3),
                     (*_linear_data(44, dtype=np.float32), 0.5)])
def svm_loss_vectorized_binary_row_sum(W, X, y, reg):
    return svm_loss_vectorized(W, X, y, reg)


@case(calls=lambda: [(*_linear_data(45, n=8), 0.05)])
def svm_naive_vs_vectorized_difference_norm(W, X, y, reg):
    loss_naive, grad_naive = svm_loss_naive(W, X, y, reg)
    loss_vec, grad_vec = svm_loss_vectorized(W, X, y, reg)
    difference = np.linalg.norm(grad_naive - grad_vec, ord="fro")
    return loss_naive - loss_vec, difference


def softmax_loss_naive(W, X, y, reg):
    loss = 0.0
    dW = np.zeros_like(W)
    num_train = X.shape[0]
    num_classes = W.shape[1]
    for i in range(num_train):
        scores = X[i].dot(W)
        scores -= np.max(scores)
        p = np.exp(scores) / np.sum(np.exp(scores))
        loss += -np.log(p[y[i]])
        for j in range(num_classes):
            dW[:, j] += (p[j] - (j == y[i])) * X[i]
    loss = loss / num_train + 0.5 * reg * np.sum(W * W)
    dW = dW / num_train + reg * W
    return loss, dW


def softmax_loss_vectorized(W, X, y, reg):
    N = X.shape[0]
    scores = X.dot(W)
    shift = scores - scores.max(1, keepdims=True)
    probs = np.exp(shift) / np.sum(np.exp(shift), axis=1, keepdims=True)
    loss = -np.log(probs[range(N), y]).sum() / N + 0.5 * reg * np.sum(W * W)
    dscores = probs.copy()
    dscores[range(N), y] -= 1
    dW = X.T.dot(dscores) / N + reg * W
    return loss, dW


@case(calls=lambda: [(*_linear_data(46), 0.1), (*_linear_data(47, n=3, d=5, c=2), 0.0),
                     (*_linear_data(48, dtype=np.float32), 0.1)])
def softmax_loss_naive_inner_class_loop(W, X, y, reg):
    return softmax_loss_naive(W, X, y, reg)


@case(calls=lambda: [(*_linear_data(49), 0.1), (*_linear_data(50, n=7, d=3, c=4), 1e-2),
                     (*_linear_data(51, dtype=np.float32), 0.1)])
def softmax_loss_vectorized_range_index(W, X, y, reg):
    return softmax_loss_vectorized(W, X, y, reg)


@case(calls=lambda: [(*_linear_data(52, n=10, d=5, c=4), 1e-3)])
def softmax_naive_vs_vectorized_sanity(W, X, y, reg):
    loss_naive, grad_naive = softmax_loss_naive(W, X, y, reg)
    loss_vec, grad_vec = softmax_loss_vectorized(W, X, y, reg)
    print("naive loss: %e" % loss_naive)
    print("loss difference: %f" % np.abs(loss_naive - loss_vec))
    print("Gradient difference: %f" % np.linalg.norm(grad_naive - grad_vec, ord="fro"))
    return loss_vec, -np.log(0.1 * 10 / W.shape[1])


def svm_loss(x, y):
    N = x.shape[0]
    correct_class_scores = x[np.arange(N), y]
    margins = np.maximum(0, x - correct_class_scores[:, np.newaxis] + 1.0)
    margins[np.arange(N), y] = 0
    loss = np.sum(margins) / N
    num_pos = np.sum(margins > 0, axis=1)
    dx = np.zeros_like(x)
    dx[margins > 0] = 1
    dx[np.arange(N), y] -= num_pos
    dx /= N
    return loss, dx


def softmax_loss(x, y):
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    log_probs = shifted_logits - np.log(Z)
    probs = np.exp(log_probs)
    N = x.shape[0]
    loss = -np.sum(log_probs[np.arange(N), y]) / N
    dx = probs.copy()
    dx[np.arange(N), y] -= 1
    dx /= N
    return loss, dx


@case(calls=lambda: [(_normal(53, 5, 4), np.array([0, 3, 1, 1, 2])), (_normal(54, 2, 6, dtype=np.float32), np.array([5, 0]))])
def svm_loss_layer_mask_store_and_num_pos(x, y):
    return svm_loss(x, y)


@case(calls=lambda: [(_normal(55, 5, 4), np.array([0, 3, 1, 1, 2])), (_normal(56, 2, 6, dtype=np.float32), np.array([5, 0])),
                     (np.array([[1000.0, -1000.0], [0.0, 0.0]]), np.array([1, 0]))])
def softmax_loss_layer_log_probs(x, y):
    loss, dx = softmax_loss(x, y)
    return loss, dx, type(loss)


@case(calls=lambda: [(np.array([[0.7, 0.1, 0.2], [0.1, 0.5, 0.4], [0.02, 0.9, 0.08]]), np.array([0, 1, 1])),
                     (np.array([[0.7, 0.1, 0.2], [0.1, 0.5, 0.4], [0.0, 1.0, 0.0]]),
                      np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0]])),
                     (np.array([[1.0, 0.0], [0.0, 1.0]], np.float32), np.array([1, 1]))])
def categorical_crossentropy_sparse_or_one_hot(y_pred, y_true):
    samples = len(y_pred)
    y_pred_clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
    if len(y_true.shape) == 1:
        correct_confidences = y_pred_clipped[range(samples), y_true]
    elif len(y_true.shape) == 2:
        correct_confidences = np.sum(y_pred_clipped * y_true, axis=1)
    negative_log_likelihoods = -np.log(correct_confidences)
    return np.mean(negative_log_likelihoods), negative_log_likelihoods


@case(calls=lambda: [(np.array([[0.2, 0.8], [0.9, 0.1], [0.5, 0.5]]), np.array([[0, 1], [1, 0], [0, 1]])),
                     (np.array([[0.3], [0.9]]), np.array([[0], [1]]))])
def binary_crossentropy_sample_mean(y_pred, y_true):
    y_pred_clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
    sample_losses = -(y_true * np.log(y_pred_clipped) + (1 - y_true) * np.log(1 - y_pred_clipped))
    sample_losses = np.mean(sample_losses, axis=-1)
    outputs = len(y_pred[0])
    dinputs = -(y_true / y_pred_clipped - (1 - y_true) / (1 - y_pred_clipped)) / outputs / len(y_pred)
    return np.mean(sample_losses), dinputs


@case(calls=lambda: [(np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.3, 0.3, 0.4]]), np.array([1, 0, 0])),
                     (np.array([[0.1, 0.9], [0.6, 0.4]]), np.array([[0, 1], [0, 1]]))])
def accuracy_argmax_one_hot_or_sparse(softmax_outputs, class_targets):
    predictions = np.argmax(softmax_outputs, axis=1)
    if len(class_targets.shape) == 2:
        class_targets = np.argmax(class_targets, axis=1)
    accuracy = np.mean(predictions == class_targets)
    return accuracy, predictions


@case(calls=lambda: [(_normal(57, 6, 1), _normal(58, 6, 1)), (np.arange(4.0).reshape(4, 1), np.arange(4.0).reshape(4, 1) + 0.001)])
def regression_mse_mae_and_precision_accuracy(y_pred, y_true):
    mse = np.mean((y_true - y_pred) ** 2, axis=-1)
    mae = np.mean(np.abs(y_true - y_pred), axis=-1)
    dmse = -2 * (y_true - y_pred) / len(y_pred[0]) / len(y_pred)
    dmae = np.sign(y_true - y_pred) / len(y_pred[0]) / len(y_pred)
    precision = np.std(y_true) / 250
    accuracy = np.mean(np.absolute(y_pred - y_true) < precision)
    return mse.mean(), mae.mean(), dmse, dmae, accuracy


# == convolution and pooling: naive loops =========================================================

def conv_forward_naive(x, w, b, conv_param):
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    H_out = 1 + (H + 2 * pad - HH) // stride
    W_out = 1 + (W + 2 * pad - WW) // stride
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode="constant", constant_values=0)
    out = np.zeros((N, F, H_out, W_out))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    window = x_pad[n, :, i * stride:i * stride + HH, j * stride:j * stride + WW]
                    out[n, f, i, j] = np.sum(window * w[f]) + b[f]
    cache = (x, w, b, conv_param)
    return out, cache


def conv_backward_naive(dout, cache):
    x, w, b, conv_param = cache
    stride, pad = conv_param["stride"], conv_param["pad"]
    N, C, H, W = x.shape
    F, _, HH, WW = w.shape
    _, _, H_out, W_out = dout.shape
    x_pad = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), "constant")
    dx_pad = np.zeros_like(x_pad)
    dw = np.zeros_like(w)
    db = np.sum(dout, axis=(0, 2, 3))
    for n in range(N):
        for f in range(F):
            for i in range(H_out):
                for j in range(W_out):
                    hs, ws = i * stride, j * stride
                    dw[f] += x_pad[n, :, hs:hs + HH, ws:ws + WW] * dout[n, f, i, j]
                    dx_pad[n, :, hs:hs + HH, ws:ws + WW] += w[f] * dout[n, f, i, j]
    dx = dx_pad[:, :, pad:pad + H, pad:pad + W]
    return dx, dw, db


def _conv_case(seed, n=1, c=2, h=4, f=2, k=3, stride=1, pad=1, dtype=np.float64):
    return (_normal(seed, n, c, h, h, dtype=dtype), _normal(seed + 1, f, c, k, k, dtype=dtype, scale=0.5),
            _normal(seed + 2, f, dtype=dtype), {"stride": stride, "pad": pad})


@case(calls=lambda: [_conv_case(60), _conv_case(63, h=5, stride=2, pad=1), _conv_case(66, k=2, pad=0)])
def conv_forward_naive_strides_and_pads(x, w, b, conv_param):
    out, cache = conv_forward_naive(x, w, b, conv_param)
    return out, cache[3] is conv_param


@case(calls=lambda: [_conv_case(69), _conv_case(72, h=5, stride=2, pad=1, f=1)])
def conv_backward_naive_through_padded_dx(x, w, b, conv_param):
    out, cache = conv_forward_naive(x, w, b, conv_param)
    dout = np.ones_like(out) * 0.5 + out * 0.01
    return conv_backward_naive(dout, cache)


@case(calls=lambda: [_conv_case(75, dtype=np.float32)])
def conv_forward_naive_float32_input_float64_out(x, w, b, conv_param):
    out, _ = conv_forward_naive(x, w, b, conv_param)
    return out, out.dtype


def max_pool_forward_naive(x, pool_param):
    ph, pw, stride = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    H_out = 1 + (H - ph) // stride
    W_out = 1 + (W - pw) // stride
    out = np.zeros((N, C, H_out, W_out))
    for n in range(N):
        for c in range(C):
            for i in range(H_out):
                for j in range(W_out):
                    out[n, c, i, j] = np.max(x[n, c, i * stride:i * stride + ph, j * stride:j * stride + pw])
    return out, (x, pool_param)


def max_pool_backward_naive(dout, cache):
    x, pool_param = cache
    ph, pw, stride = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H_out, W_out = dout.shape
    dx = np.zeros_like(x)
    for n in range(N):
        for c in range(C):
            for i in range(H_out):
                for j in range(W_out):
                    window = x[n, c, i * stride:i * stride + ph, j * stride:j * stride + pw]
                    idx = np.unravel_index(np.argmax(window), window.shape)
                    dx[n, c, i * stride + idx[0], j * stride + idx[1]] += dout[n, c, i, j]
    return dx


def _pool_case(seed, n=1, c=2, h=4, size=2, stride=2):
    return _normal(seed, n, c, h, h), {"pool_height": size, "pool_width": size, "stride": stride}


@case(calls=lambda: [_pool_case(80), _pool_case(81, h=5, size=3, stride=1), _pool_case(82, n=2, c=1)])
def max_pool_naive_backward_unravel_index(x, pool_param):
    out, cache = max_pool_forward_naive(x, pool_param)
    dx = max_pool_backward_naive(out + 1.0, cache)
    return out, dx


@case(calls=lambda: [(np.array([[[[1.0, 1.0], [0.0, 1.0]]]]), {"pool_height": 2, "pool_width": 2, "stride": 2})])
def max_pool_backward_ties_first_argmax(x, pool_param):
    out, cache = max_pool_forward_naive(x, pool_param)
    return max_pool_backward_naive(np.full_like(out, 3.0), cache)


@case(calls=lambda: [_pool_case(83)])
def max_pool_backward_mask_equal_to_max(x, pool_param):
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    out, _ = max_pool_forward_naive(x, pool_param)
    dout = np.ones_like(out)
    dx = np.zeros_like(x)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            window = x[:, :, i * s:i * s + ph, j * s:j * s + pw]
            m = np.max(window, axis=(2, 3), keepdims=True)
            dx[:, :, i * s:i * s + ph, j * s:j * s + pw] += (window == m) * dout[:, :, i:i + 1, j:j + 1]
    return dx


@case(calls=lambda: [_pool_case(84), _pool_case(85, h=6, size=3, stride=3)])
def avg_pool_forward_backward_loops(x, pool_param):
    ph, pw, s = pool_param["pool_height"], pool_param["pool_width"], pool_param["stride"]
    N, C, H, W = x.shape
    Ho, Wo = (H - ph) // s + 1, (W - pw) // s + 1
    out = np.zeros((N, C, Ho, Wo))
    for i in range(Ho):
        for j in range(Wo):
            out[:, :, i, j] = x[:, :, i * s:i * s + ph, j * s:j * s + pw].mean(axis=(2, 3))
    dx = np.zeros_like(x)
    for i in range(Ho):
        for j in range(Wo):
            dx[:, :, i * s:i * s + ph, j * s:j * s + pw] += out[:, :, i, j][:, :, None, None] / (ph * pw)
    return out, dx


# == im2col / col2im with index arrays ============================================================

def get_im2col_indices(x_shape, field_height, field_width, padding=1, stride=1):
    N, C, H, W = x_shape
    assert (H + 2 * padding - field_height) % stride == 0
    assert (W + 2 * padding - field_height) % stride == 0
    out_height = (H + 2 * padding - field_height) // stride + 1
    out_width = (W + 2 * padding - field_width) // stride + 1
    i0 = np.repeat(np.arange(field_height), field_width)
    i0 = np.tile(i0, C)
    i1 = stride * np.repeat(np.arange(out_height), out_width)
    j0 = np.tile(np.arange(field_width), field_height * C)
    j1 = stride * np.tile(np.arange(out_width), out_height)
    i = i0.reshape(-1, 1) + i1.reshape(1, -1)
    j = j0.reshape(-1, 1) + j1.reshape(1, -1)
    k = np.repeat(np.arange(C), field_height * field_width).reshape(-1, 1)
    return (k, i, j)


def im2col_indices(x, field_height, field_width, padding=1, stride=1):
    p = padding
    x_padded = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), mode="constant")
    k, i, j = get_im2col_indices(x.shape, field_height, field_width, padding, stride)
    cols = x_padded[:, k, i, j]
    C = x.shape[1]
    cols = cols.transpose(1, 2, 0).reshape(field_height * field_width * C, -1)
    return cols


def col2im_indices(cols, x_shape, field_height=3, field_width=3, padding=1, stride=1):
    N, C, H, W = x_shape
    H_padded, W_padded = H + 2 * padding, W + 2 * padding
    x_padded = np.zeros((N, C, H_padded, W_padded), dtype=cols.dtype)
    k, i, j = get_im2col_indices(x_shape, field_height, field_width, padding, stride)
    cols_reshaped = cols.reshape(C * field_height * field_width, -1, N)
    cols_reshaped = cols_reshaped.transpose(2, 0, 1)
    np.add.at(x_padded, (slice(None), k, i, j), cols_reshaped)
    if padding == 0:
        return x_padded
    return x_padded[:, :, padding:-padding, padding:-padding]


@case(calls=lambda: [((1, 2, 4, 4), 3, 3, 1, 1), ((2, 1, 5, 5), 3, 3, 1, 2), ((1, 3, 4, 4), 2, 2, 0, 2)])
def im2col_index_arrays_repeat_tile(x_shape, fh, fw, padding, stride):
    k, i, j = get_im2col_indices(x_shape, fh, fw, padding, stride)
    return k, i, j, k.dtype, i.shape


@case(calls=lambda: [(_normal(90, 1, 2, 4, 4), 3, 3, 1, 1), (_normal(91, 2, 1, 5, 5), 3, 3, 1, 2),
                     (_normal(92, 1, 3, 4, 4, dtype=np.float32), 2, 2, 0, 2)])
def im2col_fancy_index_padded_input(x, fh, fw, padding, stride):
    cols = im2col_indices(x, fh, fw, padding, stride)
    return cols, cols.flags["C_CONTIGUOUS"]


@case(calls=lambda: [(_normal(93, 1, 2, 4, 4), 3, 3, 1, 1), (_normal(94, 2, 1, 5, 5), 3, 3, 1, 2),
                     (_normal(95, 1, 2, 4, 4, dtype=np.float32), 2, 2, 0, 2)])
def col2im_add_at_roundtrip_counts_overlaps(x, fh, fw, padding, stride):
    cols = im2col_indices(x, fh, fw, padding, stride)
    back = col2im_indices(cols, x.shape, fh, fw, padding, stride)
    ones = col2im_indices(np.ones_like(cols), x.shape, fh, fw, padding, stride)
    return back, ones, np.allclose(back, x * ones)


def conv_forward_im2col(x, w, b, conv_param):
    N, C, H, W = x.shape
    num_filters, _, filter_height, filter_width = w.shape
    stride, pad = conv_param["stride"], conv_param["pad"]
    out_height = (H + 2 * pad - filter_height) // stride + 1
    out_width = (W + 2 * pad - filter_width) // stride + 1
    x_cols = im2col_indices(x, w.shape[2], w.shape[3], pad, stride)
    res = w.reshape((w.shape[0], -1)).dot(x_cols) + b.reshape(-1, 1)
    out = res.reshape(w.shape[0], out_height, out_width, x.shape[0])
    out = out.transpose(3, 0, 1, 2)
    cache = (x, w, b, conv_param, x_cols)
    return out, cache


def conv_backward_im2col(dout, cache):
    x, w, b, conv_param, x_cols = cache
    stride, pad = conv_param["stride"], conv_param["pad"]
    db = np.sum(dout, axis=(0, 2, 3))
    num_filters, _, filter_height, filter_width = w.shape
    dout_reshaped = dout.transpose(1, 2, 3, 0).reshape(num_filters, -1)
    dw = dout_reshaped.dot(x_cols.T).reshape(w.shape)
    dx_cols = w.reshape(num_filters, -1).T.dot(dout_reshaped)
    dx = col2im_indices(dx_cols, x.shape, filter_height, filter_width, pad, stride)
    return dx, dw, db


@case(calls=lambda: [_conv_case(100), _conv_case(103, h=5, stride=2, pad=1), _conv_case(106, k=3, pad=1, n=2)])
def conv_im2col_matches_naive(x, w, b, conv_param):
    out_fast, _ = conv_forward_im2col(x, w, b, conv_param)
    out_naive, _ = conv_forward_naive(x, w, b, conv_param)
    return out_fast, np.max(np.abs(out_fast - out_naive)) < 1e-12, out_fast.flags["C_CONTIGUOUS"]


@case(calls=lambda: [_conv_case(109), _conv_case(112, h=5, stride=2, pad=1)])
def conv_im2col_backward_col2im(x, w, b, conv_param):
    out, cache = conv_forward_im2col(x, w, b, conv_param)
    dout = np.cos(out)
    return conv_backward_im2col(dout, cache)


@case(calls=lambda: [(_normal(115, 2, 2, 4, 4), 2, 2), (_normal(116, 1, 3, 6, 6), 3, 3)])
def max_pool_im2col_argmax_over_rows(X, size, stride):
    n, d, h, w = X.shape
    h_out, w_out = (h - size) // stride + 1, (w - size) // stride + 1
    X_reshaped = X.reshape(n * d, 1, h, w)
    X_col = im2col_indices(X_reshaped, size, size, padding=0, stride=stride)
    max_idx = np.argmax(X_col, axis=0)
    out = X_col[max_idx, range(max_idx.size)]
    out = out.reshape(h_out, w_out, n, d).transpose(2, 3, 0, 1)
    dX_col = np.zeros_like(X_col)
    dout_flat = out.transpose(2, 3, 0, 1).ravel()
    dX_col[max_idx, range(max_idx.size)] = dout_flat
    dX = col2im_indices(dX_col, (n * d, 1, h, w), size, size, padding=0, stride=stride)
    return out, dX.reshape(X.shape)


@case(calls=lambda: [(_normal(117, 2, 3, 4, 4),), (_normal(118, 1, 2, 2, 6),)])
def max_pool_reshape_trick_and_broadcast_mask(x):
    N, C, H, W = x.shape
    x_reshaped = x.reshape(N, C, H // 2, 2, W // 2, 2)
    out = x_reshaped.max(axis=3).max(axis=4)
    dx_reshaped = np.zeros_like(x_reshaped)
    out_newaxis = out[:, :, :, np.newaxis, :, np.newaxis]
    mask = x_reshaped == out_newaxis
    dout_broadcast, _ = np.broadcast_arrays(out_newaxis, dx_reshaped)
    dx_reshaped[mask] = dout_broadcast[mask]
    dx_reshaped /= np.sum(mask, axis=(3, 5), keepdims=True)
    return out, dx_reshaped.reshape(x.shape)


# == normalisation and dropout ====================================================================

def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.9)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.zeros(D, dtype=x.dtype))
    out, cache = None, None
    if mode == "train":
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = (x, x_hat, sample_mean, sample_var, gamma, eps)
        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var
    elif mode == "test":
        out = gamma * (x - running_mean) / np.sqrt(running_var + eps) + beta
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)
    bn_param["running_mean"] = running_mean
    bn_param["running_var"] = running_var
    return out, cache


def batchnorm_backward(dout, cache):
    x, x_hat, mu, var, gamma, eps = cache
    N = x.shape[0]
    dgamma = np.sum(dout * x_hat, axis=0)
    dbeta = np.sum(dout, axis=0)
    dx_hat = dout * gamma
    dvar = np.sum(dx_hat * (x - mu) * -0.5 * (var + eps) ** -1.5, axis=0)
    dmu = np.sum(-dx_hat / np.sqrt(var + eps), axis=0) + dvar * np.mean(-2 * (x - mu), axis=0)
    dx = dx_hat / np.sqrt(var + eps) + dvar * 2 * (x - mu) / N + dmu / N
    return dx, dgamma, dbeta


def batchnorm_backward_alt(dout, cache):
    x, x_hat, mu, var, gamma, eps = cache
    N = dout.shape[0]
    dgamma = np.sum(dout * x_hat, axis=0)
    dbeta = dout.sum(axis=0)
    dx = gamma / (N * np.sqrt(var + eps)) * (N * dout - dbeta - x_hat * dgamma)
    return dx, dgamma, dbeta


def _bn_steps():
    gamma, beta = np.array([1.0, 2.0, 0.5]), np.array([0.0, -1.0, 0.25])
    bn = {"mode": "train", "momentum": 0.8}
    steps = [(_normal(120 + i, 5, 3) * 2 + 1, gamma, beta, bn) for i in range(3)]
    return steps + [lambda: bn.update(mode="test"), (_normal(130, 4, 3), gamma, beta, bn)]


@case(steps=_bn_steps)
def batchnorm_running_averages_in_bn_param(x, gamma, beta, bn_param):
    out, cache = batchnorm_forward(x, gamma, beta, bn_param)
    return out, cache is None, sorted(bn_param)


@case(calls=lambda: [(_normal(131, 6, 4) + 3, _normal(132, 4), _normal(133, 4), _normal(134, 6, 4)),
                     (_normal(135, 3, 2, dtype=np.float32), np.ones(2, np.float32), np.zeros(2, np.float32),
                      np.ones((3, 2), np.float32))])
def batchnorm_backward_graph_vs_alt(x, gamma, beta, dout):
    bn_param = {"mode": "train"}
    _, cache = batchnorm_forward(x, gamma, beta, bn_param)
    dx1, dgamma1, dbeta1 = batchnorm_backward(dout, cache)
    dx2, dgamma2, dbeta2 = batchnorm_backward_alt(dout, cache)
    return dx1, dx2, dgamma1, dbeta1, np.max(np.abs(dx1 - dx2)), bn_param["running_var"].dtype


@case(lambda: (_normal(136, 2, 3), np.ones(3), np.zeros(3), {"mode": "eval"}))
def batchnorm_invalid_mode_message(x, gamma, beta, bn_param):
    return batchnorm_forward(x, gamma, beta, bn_param)


def layernorm_forward(x, gamma, beta, ln_param):
    eps = ln_param.get("eps", 1e-5)
    x_t = x.T
    mu = x_t.mean(axis=0)
    var = x_t.var(axis=0)
    x_hat = ((x_t - mu) / np.sqrt(var + eps)).T
    out = gamma * x_hat + beta
    cache = (x_t, x_hat.T, mu, var, gamma, eps)
    return out, cache


def layernorm_backward(dout, cache):
    x_t, x_hat_t, mu, var, gamma, eps = cache
    dgamma = np.sum(dout * x_hat_t.T, axis=0)
    dbeta = np.sum(dout, axis=0)
    dx_hat_t = (dout * gamma).T
    D = dx_hat_t.shape[0]
    dx_t = (D * dx_hat_t - dx_hat_t.sum(axis=0) - x_hat_t * (dx_hat_t * x_hat_t).sum(axis=0)) / (D * np.sqrt(var + eps))
    return dx_t.T, dgamma, dbeta


@case(calls=lambda: [(_normal(137, 4, 5), _normal(138, 5), _normal(139, 5), _normal(140, 4, 5), {}),
                     (_normal(141, 2, 3, dtype=np.float32), np.ones(3, np.float32), np.zeros(3, np.float32),
                      np.ones((2, 3), np.float32), {"eps": 1e-3})])
def layernorm_by_transposing_batchnorm(x, gamma, beta, dout, ln_param):
    out, cache = layernorm_forward(x, gamma, beta, ln_param)
    dx, dgamma, dbeta = layernorm_backward(dout, cache)
    return out, dx, dgamma, dbeta, out.flags["C_CONTIGUOUS"]


@case(calls=lambda: [(_normal(142, 2, 4, 3, 3), _normal(143, 1, 4, 1, 1), _normal(144, 1, 4, 1, 1), 2),
                     (_normal(145, 1, 6, 2, 2), np.ones((1, 6, 1, 1)), np.zeros((1, 6, 1, 1)), 3)])
def spatial_groupnorm_forward(x, gamma, beta, G, eps=1e-5):
    N, C, H, W = x.shape
    x_group = np.reshape(x, (N, G, C // G, H, W))
    mean = np.mean(x_group, axis=(2, 3, 4), keepdims=True)
    var = np.var(x_group, axis=(2, 3, 4), keepdims=True)
    x_groupnorm = (x_group - mean) / np.sqrt(var + eps)
    x_norm = np.reshape(x_groupnorm, (N, C, H, W))
    out = x_norm * gamma + beta
    return out, (G, x, x_norm, mean, var, gamma, beta, eps)[3].shape


def dropout_forward(x, dropout_param):
    p, mode = dropout_param["p"], dropout_param["mode"]
    if "seed" in dropout_param:
        np.random.seed(dropout_param["seed"])
    mask = None
    out = None
    if mode == "train":
        mask = (np.random.rand(*x.shape) < p) / p
        out = x * mask
    elif mode == "test":
        out = x
    cache = (dropout_param, mask)
    out = out.astype(x.dtype, copy=False)
    return out, cache


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    mode = dropout_param["mode"]
    dx = None
    if mode == "train":
        dx = dout * mask
    elif mode == "test":
        dx = dout
    return dx


@case(calls=lambda: [(_normal(146, 6, 5) + 10, {"mode": "train", "p": 0.3, "seed": 123}),
                     (_normal(147, 4, 4, dtype=np.float32), {"mode": "train", "p": 0.75, "seed": 0}),
                     (_normal(148, 3, 3), {"mode": "test", "p": 0.5, "seed": 1})])
def dropout_seeded_legacy_mask(x, dropout_param):
    out, cache = dropout_forward(x, dropout_param)
    dx = dropout_backward(np.ones_like(x), cache)
    return out, dx, out.mean(), (out == 0).mean(), cache[0] is dropout_param


def _unseeded_dropout_steps():
    x = np.ones((3, 4))
    param = {"mode": "train", "p": 0.5}
    return [lambda: np.random.seed(7), (x, param), (x, param), lambda: np.random.seed(7), (x, param)]


@case(steps=_unseeded_dropout_steps, name="dropout_unseeded_continues_global_stream")
def dropout_unseeded(x, dropout_param):
    out, (_, mask) = dropout_forward(x, dropout_param)
    return out, mask, np.random.rand()


@case(calls=lambda: [(np.ones((4, 5)), 0.1, 3), (np.arange(6.0).reshape(2, 3), 0.5, 9)])
def inverted_dropout_binomial_nnfs_style(inputs, rate, seed):
    np.random.seed(seed)
    keep = 1 - rate
    binary_mask = np.random.binomial(1, keep, size=inputs.shape) / keep
    output = inputs * binary_mask
    dinputs = np.ones_like(inputs) * binary_mask
    return output, dinputs, binary_mask.dtype


# == recurrent networks ===========================================================================

def rnn_step_forward(x, prev_h, Wx, Wh, b):
    next_h = np.tanh(x.dot(Wx) + prev_h.dot(Wh) + b)
    cache = (x, prev_h, Wx, Wh, next_h)
    return next_h, cache


def rnn_step_backward(dnext_h, cache):
    x, prev_h, Wx, Wh, next_h = cache
    dtanh = dnext_h * (1 - next_h ** 2)
    dx = dtanh.dot(Wx.T)
    dprev_h = dtanh.dot(Wh.T)
    dWx = x.T.dot(dtanh)
    dWh = prev_h.T.dot(dtanh)
    db = dtanh.sum(axis=0)
    return dx, dprev_h, dWx, dWh, db


def rnn_forward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    cache = []
    prev_h = h0
    for t in range(T):
        prev_h, step_cache = rnn_step_forward(x[:, t, :], prev_h, Wx, Wh, b)
        h[:, t, :] = prev_h
        cache.append(step_cache)
    return h, cache


def rnn_backward(dh, cache):
    N, T, H = dh.shape
    D = cache[0][0].shape[1]
    dx = np.zeros((N, T, D))
    dWx = np.zeros((D, H))
    dWh = np.zeros((H, H))
    db = np.zeros(H)
    dprev_h = np.zeros((N, H))
    for t in reversed(range(T)):
        dx[:, t, :], dprev_h, dWx_t, dWh_t, db_t = rnn_step_backward(dh[:, t, :] + dprev_h, cache[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    dh0 = dprev_h
    return dx, dh0, dWx, dWh, db


def _rnn_case(seed, n=2, t=3, d=4, h=5, dtype=np.float64):
    return (_normal(seed, n, t, d, dtype=dtype), _normal(seed + 1, n, h, dtype=dtype),
            _normal(seed + 2, d, h, dtype=dtype, scale=0.3), _normal(seed + 3, h, h, dtype=dtype, scale=0.3),
            _normal(seed + 4, h, dtype=dtype, scale=0.1))


@case(calls=lambda: [(_rnn_case(150)[0][:, 0], *_rnn_case(150)[1:]),
                     (_rnn_case(151, dtype=np.float32)[0][:, 1], *_rnn_case(151, dtype=np.float32)[1:])])
def rnn_step_forward_backward(x, prev_h, Wx, Wh, b):
    next_h, cache = rnn_step_forward(x, prev_h, Wx, Wh, b)
    return next_h, rnn_step_backward(np.ones_like(next_h), cache)


@case(calls=lambda: [_rnn_case(155), _rnn_case(160, n=1, t=5, d=2, h=3)])
def rnn_sequence_forward_backward_reversed_loop(x, h0, Wx, Wh, b):
    h, cache = rnn_forward(x, h0, Wx, Wh, b)
    dh = np.linspace(-1, 1, h.size).reshape(h.shape)
    return h, rnn_backward(dh, cache), len(cache)


def sigmoid(x):
    pos_mask = x >= 0
    neg_mask = x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


def plain_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b, act=plain_sigmoid):
    H = prev_h.shape[1]
    a = x @ Wx + prev_h @ Wh + b
    i = act(a[:, :H])
    f = act(a[:, H:2 * H])
    o = act(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    next_c = f * prev_c + i * g
    next_h = o * np.tanh(next_c)
    cache = (x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c)
    return next_h, next_c, cache


def lstm_step_backward(dnext_h, dnext_c, cache):
    x, prev_h, prev_c, Wx, Wh, i, f, o, g, next_c = cache
    tanh_c = np.tanh(next_c)
    do = dnext_h * tanh_c
    dc = dnext_c + dnext_h * o * (1 - tanh_c ** 2)
    df = dc * prev_c
    di = dc * g
    dg = dc * i
    dprev_c = dc * f
    da = np.hstack((di * i * (1 - i), df * f * (1 - f), do * o * (1 - o), dg * (1 - g ** 2)))
    dx = da @ Wx.T
    dprev_h = da @ Wh.T
    dWx = x.T @ da
    dWh = prev_h.T @ da
    db = da.sum(axis=0)
    return dx, dprev_h, dprev_c, dWx, dWh, db


def _lstm_case(seed, n=2, d=3, h=4, dtype=np.float64):
    return (_normal(seed, n, d, dtype=dtype), _normal(seed + 1, n, h, dtype=dtype), _normal(seed + 2, n, h, dtype=dtype),
            _normal(seed + 3, d, 4 * h, dtype=dtype, scale=0.4), _normal(seed + 4, h, 4 * h, dtype=dtype, scale=0.4),
            _normal(seed + 5, 4 * h, dtype=dtype, scale=0.1))


@case(calls=lambda: [_lstm_case(170), _lstm_case(176, n=3, d=2, h=2), _lstm_case(182, dtype=np.float32)])
def lstm_step_gates_sliced_from_one_affine(x, prev_h, prev_c, Wx, Wh, b):
    next_h, next_c, cache = lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b)
    grads = lstm_step_backward(np.ones_like(next_h), 0.5 * np.ones_like(next_c), cache)
    return next_h, next_c, grads


@case(calls=lambda: [_lstm_case(188)])
def lstm_step_with_masked_stable_sigmoid(x, prev_h, prev_c, Wx, Wh, b):
    next_h, next_c, _ = lstm_step_forward(x, prev_h, prev_c, Wx, Wh, b, act=sigmoid)
    return next_h, next_c


@case(calls=lambda: [(_normal(194, 2, 3, 3), _normal(195, 2, 2), _normal(196, 3, 8, scale=0.4),
                      _normal(197, 2, 8, scale=0.4), np.zeros(8))])
def lstm_forward_over_time_and_backward(x, h0, Wx, Wh, b):
    N, T, D = x.shape
    H = h0.shape[1]
    h = np.zeros((N, T, H))
    prev_h, prev_c = h0, np.zeros_like(h0)
    caches = []
    for t in range(T):
        prev_h, prev_c, cache = lstm_step_forward(x[:, t, :], prev_h, prev_c, Wx, Wh, b)
        h[:, t, :] = prev_h
        caches.append(cache)
    dh = np.ones_like(h)
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dprev_h, dprev_c = np.zeros((N, H)), np.zeros((N, H))
    for t in reversed(range(T)):
        dx[:, t, :], dprev_h, dprev_c, dWx_t, dWh_t, db_t = lstm_step_backward(dh[:, t, :] + dprev_h, dprev_c, caches[t])
        dWx += dWx_t
        dWh += dWh_t
        db += db_t
    return h, dx, dprev_h, dWx, dWh, db


@case(calls=lambda: [(np.array([[0, 3, 1], [2, 2, 0]]), _normal(200, 4, 3)),
                     (np.array([[1, 1, 1, 1]]), _normal(201, 3, 2, dtype=np.float32))])
def word_embedding_forward_backward_add_at(x, W):
    out = W[x]
    cache = (x, W)
    dout = np.ones_like(out) * np.arange(out.shape[-1])
    x_c, W_c = cache
    dW = np.zeros_like(W_c)
    np.add.at(dW, x_c, dout)
    return out, dW, out.dtype


@case(calls=lambda: [(np.array([[0, 3, 1], [2, 2, 0]]), _normal(202, 4, 3))])
def word_embedding_fancy_iadd_loses_repeats(x, W):
    dW_add_at = np.zeros_like(W)
    np.add.at(dW_add_at, x, 1.0)
    dW_iadd = np.zeros_like(W)
    dW_iadd[x] += 1.0
    return dW_add_at, dW_iadd


def temporal_softmax_loss(x, y, mask, verbose=False):
    N, T, V = x.shape
    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)
    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]
    if verbose:
        print("dx_flat: ", dx_flat.shape)
    dx = dx_flat.reshape(N, T, V)
    return loss, dx


@case(calls=lambda: [(_normal(203, 2, 3, 4), np.array([[0, 3, 1], [2, 2, 0]]), np.array([[1, 1, 0], [1, 0, 0]], bool)),
                     (_normal(204, 1, 4, 3, dtype=np.float32), np.array([[2, 1, 0, 0]]), np.array([[True] * 4]), True)])
def temporal_softmax_loss_with_mask(x, y, mask, verbose=False):
    return temporal_softmax_loss(x, y, mask, verbose)


@case(calls=lambda: [(_normal(205, 2, 4), _normal(206, 4, 5), _normal(207, 3, 4, scale=0.5),
                      _normal(208, 4, 4, scale=0.5), np.zeros(4), _normal(209, 4, 5), 4)])
def captioning_greedy_sample_loop(features, W_proj_unused, W_embed, Wh, b, W_vocab, max_length):
    N = features.shape[0]
    captions = 0 * np.ones((N, max_length), dtype=np.int32)
    prev_h = features
    word = np.ones(N, dtype=np.int32) * 1
    for t in range(max_length):
        x = W_embed[word]
        prev_h = np.tanh(x @ np.eye(W_embed.shape[1], Wh.shape[0]) + prev_h @ Wh + b)
        scores = prev_h @ W_vocab
        word = np.argmax(scores, axis=1)
        captions[:, t] = word
    return captions, captions.dtype, word.dtype


# == the tests ===================================================================================

@pytest.mark.parametrize("c", case.params())
def test_corpus(c):
    c.check()


def _bitwise_params() -> list:
    # the unseeded dropout's calls share NumPy's global RandomState: its steps reseed it,
    # which check_bitwise (native and jitted calls interleaved, no steps) does not do
    return [p for p in case.params() if p.values[0].name != "dropout_unseeded_continues_global_stream"]


@pytest.mark.skipif(_setting() == "untiered", reason="OpenVINO runs every graph: within tolerance")
@pytest.mark.parametrize("c", _bitwise_params())
def test_corpus_bitwise(c):
    check_bitwise(c)
