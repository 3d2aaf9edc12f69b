"""Differential corpus, third fidelity sweep (task HO): whole programs as
people write them -- 20-80 line functions and small classes combining many
features, in the style of NumPy tutorials, textbook ML code written from
scratch, scientific scripts, sklearn-like library code, and torch-style
training loops written with ``frame`` tensors and ``frame.nn``.

Each program is run natively and jitted (``corpus.Case.check``: values,
dtypes, types, identity, argument mutation, globals, printed output,
exceptions); programs a user calls again on changed inputs or changed object
state are registered with ``steps=`` (each call compared).  ``graphs=`` /
``breaks=`` record how each program is captured where that is stable: a
break on data-dependent Python control flow (a tolerance loop, early
stopping) or on ``print`` is inherent and asserted with its reason."""
from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F

from .corpus import Corpus

case = Corpus()


def _blobs(n=24, k=3, d=2, seed=0):
    """Three Gaussian blobs and their labels (float64, like most tutorials)."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, 3.0]])[:k, :d]
    labels = np.repeat(np.arange(k), n // k)
    x = centers[labels] + rng.normal(scale=0.7, size=(n, d))
    return x, labels


def _binary_data(n=32, d=3, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(dtype)
    w = np.array([1.5, -2.0, 0.5][:d])
    y = (x @ w + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    return x, y


# == ML from scratch in NumPy ========================================================================

@case(lambda: (_blobs()[0], 3))
def kmeans_lloyd(x, k, n_iter=5, seed=0):
    rng = np.random.default_rng(seed)
    centroids = x[rng.choice(len(x), size=k, replace=False)].copy()
    history = []
    for it in range(n_iter):
        # squared distances of every point to every centroid
        d2 = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
        assign = np.argmin(d2, axis=1)
        new = np.empty_like(centroids)
        for j in range(k):
            members = x[assign == j]
            if len(members) == 0:
                new[j] = centroids[j]          # keep an empty cluster where it was
            else:
                new[j] = members.mean(axis=0)
        shift = np.sqrt(((new - centroids) ** 2).sum(axis=1)).max()
        centroids = new
        history.append(float(shift))
    inertia = d2[np.arange(len(x)), assign].sum()
    return centroids, assign, inertia, history


@case(lambda: (np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [5.0, 5.0]]),
               np.array([[0.0, 0.0], [5.0, 5.0], [100.0, 100.0]])))
def kmeans_step_with_empty_cluster(x, centroids):
    d = np.linalg.norm(x[:, None] - centroids[None], axis=2)
    labels = d.argmin(axis=1)
    counts = np.bincount(labels, minlength=len(centroids))
    out = centroids.copy()
    for j, c in enumerate(counts):
        if c > 0:
            out[j] = x[labels == j].mean(axis=0)
        else:
            # re-seed an empty cluster at the point farthest from its centroid
            far = d[np.arange(len(x)), labels].argmax()
            out[j] = x[far]
    return out, labels, counts


@case(lambda: (np.random.default_rng(3).normal(size=(20, 4)) @ np.diag([3.0, 1.0, 0.5, 0.1]), 2), graphs=1)
def pca_svd(X, n_components):
    mean = X.mean(axis=0)
    Xc = X - mean
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    # fix the sign so that the largest component of each axis is positive
    signs = np.sign(Vt[np.arange(Vt.shape[0]), np.abs(Vt).argmax(axis=1)])
    Vt = Vt * signs[:, None]
    components = Vt[:n_components]
    explained_variance = S ** 2 / (len(X) - 1)
    ratio = explained_variance / explained_variance.sum()
    Z = Xc @ components.T
    X_back = Z @ components + mean
    err = np.mean((X - X_back) ** 2)
    return components, ratio[:n_components], Z, err


@case(lambda: (np.random.default_rng(4).normal(size=(30, 3)).astype(np.float32),))
def pca_eigh_covariance(X):
    Xc = X - X.mean(axis=0, keepdims=True)
    cov = Xc.T @ Xc / (X.shape[0] - 1)
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    evecs = evecs * np.where(evecs[0] < 0, -1, 1)
    cum = np.cumsum(evals) / np.sum(evals)
    k = int(np.searchsorted(cum, 0.9) + 1)
    return evals, evecs, cum, k


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@case(lambda: _binary_data(), graphs=1)
def logistic_regression_gd(X, y, lr=0.5, n_steps=20):
    n, d = X.shape
    w = np.zeros(d)
    b = 0.0
    losses = []
    for step in range(n_steps):
        p = _sigmoid(X @ w + b)
        eps = 1e-12
        loss = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        grad_w = X.T @ (p - y) / n
        grad_b = np.sum(p - y) / n
        w -= lr * grad_w
        b -= lr * grad_b
        losses.append(loss)
    acc = np.mean((_sigmoid(X @ w + b) > 0.5) == y)
    return w, b, losses, acc


def _softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


@case(lambda: _blobs(n=30, seed=2), graphs=1)
def softmax_regression_gd(X, y, n_classes=3, lr=0.1, epochs=15, reg=1e-3):
    n, d = X.shape
    W = np.zeros((d, n_classes))
    b = np.zeros(n_classes)
    Y = np.eye(n_classes)[y]
    for epoch in range(epochs):
        P = _softmax(X @ W + b)
        loss = -np.sum(Y * np.log(P + 1e-9)) / n + 0.5 * reg * np.sum(W * W)
        dZ = (P - Y) / n
        W -= lr * (X.T @ dZ + reg * W)
        b -= lr * dZ.sum(axis=0)
    pred = np.argmax(X @ W + b, axis=1)
    return W, b, float(loss), (pred == y).mean()


class TwoLayerNet:
    """The cs231n-style two-layer net: params in a dict, forward caches for backward."""

    def __init__(self, d_in, hidden, d_out, std=0.1, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {
            "W1": std * rng.standard_normal((d_in, hidden)).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "W2": std * rng.standard_normal((hidden, d_out)).astype(np.float32),
            "b2": np.zeros(d_out, np.float32),
        }

    def loss(self, X, y=None, reg=0.0):
        W1, b1 = self.params["W1"], self.params["b1"]
        W2, b2 = self.params["W2"], self.params["b2"]
        h = np.maximum(0, X @ W1 + b1)
        scores = h @ W2 + b2
        if y is None:
            return scores
        shifted = scores - scores.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        n = X.shape[0]
        loss = -log_probs[np.arange(n), y].mean() + reg * (np.sum(W1 * W1) + np.sum(W2 * W2))
        dscores = np.exp(log_probs)
        dscores[np.arange(n), y] -= 1
        dscores /= n
        grads = {"W2": h.T @ dscores + 2 * reg * W2, "b2": dscores.sum(axis=0)}
        dh = dscores @ W2.T
        dh[h <= 0] = 0
        grads["W1"] = X.T @ dh + 2 * reg * W1
        grads["b1"] = dh.sum(axis=0)
        return loss, grads


def _mlp_steps():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    net = TwoLayerNet(4, 6, 3)
    return [(net, X, y), (net, X, y), (net, X[:4], y[:4]), (net, X, None)]


@case(steps=_mlp_steps, graphs=1)
def mlp_manual_backprop_sgd_step(net, X, y, lr=0.1, reg=1e-3):
    if y is None:
        return net.loss(X).argmax(axis=1)
    loss, grads = net.loss(X, y, reg=reg)
    for name in net.params:
        net.params[name] -= lr * grads[name]
    return loss, {k: np.abs(g).max() for k, g in grads.items()}


def adam_update(params, grads, state, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8):
    state["t"] = state.get("t", 0) + 1
    t = state["t"]
    for k in params:
        m = state.setdefault("m_" + k, np.zeros_like(params[k]))
        v = state.setdefault("v_" + k, np.zeros_like(params[k]))
        m[...] = beta1 * m + (1 - beta1) * grads[k]
        v[...] = beta2 * v + (1 - beta2) * grads[k] ** 2
        m_hat = m / (1 - beta1 ** t)
        v_hat = v / (1 - beta2 ** t)
        params[k] -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


def _quadratic_grads(p):
    # f(w, b) = sum((w - 3)^2) + (b + 1)^2
    return {"w": 2 * (p["w"] - 3.0), "b": 2 * (p["b"] + 1.0)}


def _adam_steps():
    params = {"w": np.array([0.0, 1.0, -2.0]), "b": np.array(0.5)}
    state = {}
    return [(params, state)] * 4


@case(steps=_adam_steps)
def adam_by_hand_state_in_dicts(params, state):
    for _ in range(3):
        adam_update(params, _quadratic_grads(params), state)
    return sum(float(np.sum((v - t) ** 2)) for v, t in zip(params.values(), (3.0, -1.0))), state["t"]


@case(lambda: ({"w": np.linspace(-1, 1, 5).astype(np.float32)},), graphs=1)
def rmsprop_and_momentum_compared(p0, steps=6):
    def grad(w):
        return 4 * w ** 3 - 2 * w           # the double-well x^4 - x^2
    results = {}
    for method in ("momentum", "rmsprop", "sgd"):
        w = p0["w"].copy()
        cache = np.zeros_like(w)
        vel = np.zeros_like(w)
        for _ in range(steps):
            g = grad(w)
            if method == "momentum":
                vel = 0.9 * vel - 0.05 * g
                w = w + vel
            elif method == "rmsprop":
                cache = 0.9 * cache + 0.1 * g * g
                w = w - 0.05 * g / (np.sqrt(cache) + 1e-6)
            else:
                w = w - 0.05 * g
        results[method] = w
    return results


class BatchNorm1d:
    def __init__(self, n, momentum=0.1, eps=1e-5):
        self.gamma = np.ones(n, np.float32)
        self.beta = np.zeros(n, np.float32)
        self.running_mean = np.zeros(n, np.float32)
        self.running_var = np.ones(n, np.float32)
        self.momentum = momentum
        self.eps = eps
        self.training = True

    def __call__(self, x):
        if self.training:
            mu = x.mean(axis=0)
            var = x.var(axis=0)
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mu
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var
        else:
            mu, var = self.running_mean, self.running_var
        xhat = (x - mu) / np.sqrt(var + self.eps)
        return self.gamma * xhat + self.beta


def _bn_steps():
    rng = np.random.default_rng(6)
    bn = BatchNorm1d(3)
    batches = [(rng.normal(2.0, 3.0, (8, 3)).astype(np.float32)) for _ in range(3)]

    def to_eval():
        bn.training = False
    return [(bn, batches[0]), (bn, batches[1]), to_eval, (bn, batches[2]), (bn, batches[2])]


@case(steps=_bn_steps, graphs=1)
def batchnorm_train_then_eval(bn, x):
    y = bn(x)
    return y, bn.running_mean.copy(), bn.running_var.copy()


@case(lambda: (np.random.default_rng(7).normal(size=(2, 4, 6)).astype(np.float32),
               np.linspace(0.5, 1.5, 6).astype(np.float32), np.full(6, 0.1, np.float32)), graphs=1)
def layer_norm_and_residual(x, gamma, beta, eps=1e-5):
    def layer_norm(h):
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        return gamma * (h - mean) / np.sqrt(var + eps) + beta
    y = layer_norm(x)
    y = x + np.tanh(y)                   # a residual branch
    return layer_norm(y), y.std(axis=-1)


@case(lambda: (np.ones((4, 5), np.float32),),
      graphs=1)
def dropout_with_default_rng(x, p=0.4, seed=42, training=True):
    if not 0 <= p < 1:
        raise ValueError(f"dropout probability has to be in [0, 1), got {p}")
    if not training:
        return x
    rng = np.random.default_rng(seed)
    mask = rng.random(x.shape) >= p
    out = np.where(mask, x / (1 - p), 0.0).astype(x.dtype)
    return out, mask.mean(), out.sum()


@case(lambda: (np.ones((4, 5), np.float32),), kwargs={"p": 1.5}, graphs=0, breaks='the function raises')
def dropout_rejects_bad_probability(x, p=0.4):
    return dropout_with_default_rng(x, p=p)


@case(lambda: (np.random.default_rng(8).normal(size=(5, 4)).astype(np.float32),
               np.random.default_rng(9).normal(size=(4, 4)).astype(np.float32)), graphs=1)
def causal_self_attention(x, w, n_heads=2):
    T, D = x.shape
    hd = D // n_heads
    q = (x @ w).reshape(T, n_heads, hd).transpose(1, 0, 2)
    k = (x @ w.T).reshape(T, n_heads, hd).transpose(1, 0, 2)
    v = x.reshape(T, n_heads, hd).transpose(1, 0, 2)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    scores = np.where(mask, -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    att = np.exp(scores)
    att /= att.sum(axis=-1, keepdims=True)
    out = (att @ v).transpose(1, 0, 2).reshape(T, D)
    return out, att[0]


@case(lambda: (np.random.default_rng(10).normal(size=(2, 3, 4)), np.array([3, 2])), graphs=1)
def padded_attention_with_lengths(h, lengths):
    B, T, D = h.shape
    scores = h @ h.transpose(0, 2, 1) / math.sqrt(D)
    key_mask = np.arange(T)[None, :] < lengths[:, None]           # (B, T)
    scores[~np.broadcast_to(key_mask[:, None, :], scores.shape)] = -np.inf
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    ctx = w @ h
    pooled = (ctx * key_mask[..., None]).sum(1) / lengths[:, None]
    return pooled, w


def im2col(x, kh, kw, stride=1, pad=0):
    n, c, h, w = x.shape
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (w + 2 * pad - kw) // stride + 1
    cols = np.zeros((n, c, kh, kw, oh, ow), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n * oh * ow, -1), oh, ow


@case(lambda: (np.random.default_rng(11).normal(size=(2, 2, 5, 5)).astype(np.float32),
               np.random.default_rng(12).normal(size=(3, 2, 3, 3)).astype(np.float32),
               np.array([0.1, 0.0, -0.1], np.float32)), graphs=1)
def conv2d_im2col_relu_maxpool(x, w, b, stride=1, pad=1):
    n = x.shape[0]
    f, c, kh, kw = w.shape
    cols, oh, ow = im2col(x, kh, kw, stride, pad)
    out = cols @ w.reshape(f, -1).T + b
    out = out.reshape(n, oh, ow, f).transpose(0, 3, 1, 2)
    out = np.maximum(out, 0)
    # 2x2 max pooling by reshape (crop to an even size first)
    H, W = (oh // 2) * 2, (ow // 2) * 2
    pooled = out[:, :, :H, :W].reshape(n, f, H // 2, 2, W // 2, 2).max(axis=(3, 5))
    return out.shape, pooled


class GRUCell:
    def __init__(self, d_in, d_h, seed=0):
        rng = np.random.default_rng(seed)
        s = 1 / np.sqrt(d_h)
        self.Wz, self.Wr, self.Wh = (rng.uniform(-s, s, (d_in + d_h, d_h)).astype(np.float32)
                                     for _ in range(3))
        self.bz = np.zeros(d_h, np.float32)

    def __call__(self, x, h):
        xh = np.concatenate([x, h], axis=-1)
        z = _sigmoid(xh @ self.Wz + self.bz)
        r = _sigmoid(xh @ self.Wr)
        h_tilde = np.tanh(np.concatenate([x, r * h], axis=-1) @ self.Wh)
        return (1 - z) * h + z * h_tilde


@case(lambda: (GRUCell(3, 4), np.random.default_rng(13).normal(size=(6, 2, 3)).astype(np.float32)),
      graphs=1)
def gru_unrolled_over_sequence(cell, xs):
    T, B, _ = xs.shape
    h = np.zeros((B, cell.bz.shape[0]), np.float32)
    outputs = []
    for t in range(T):
        h = cell(xs[t], h)
        outputs.append(h)
    hs = np.stack(outputs)
    return hs, h, hs.mean(axis=0)


@case(lambda: (np.random.default_rng(14).normal(size=(4, 5)).astype(np.float32),
               np.random.default_rng(15).normal(size=(5, 5)).astype(np.float32) * 0.5), graphs=1)
def rnn_tanh_elman(xs, W, h0=None):
    T, d = xs.shape
    h = np.zeros(d, np.float32) if h0 is None else h0
    states = np.empty((T, d), np.float32)
    for t, x in enumerate(xs):
        h = np.tanh(x + W @ h)
        states[t] = h
    return states, np.linalg.norm(states, axis=1)


@case(lambda: (np.random.default_rng(16).normal(size=(6, 6)).astype(np.float32),))
def greedy_decoding(transition, bos=0, eos=5, max_len=6):
    seq = [bos]
    logp_total = 0.0
    for _ in range(max_len):
        logits = transition[seq[-1]]
        logp = logits - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
        nxt = int(np.argmax(logp))
        logp_total += float(logp[nxt])
        seq.append(nxt)
        if nxt == eos:
            break
    return seq, logp_total


# int(tok) of the beam's tokens is made after the graph (capture/variables/lazy_scalars.py);
# sorting the candidates by their scores breaks at each step's sorted()
@case(lambda: (np.log(np.random.default_rng(17).dirichlet(np.ones(4), size=4)),),
      graphs=3, breaks=("sort() compares tensors by their values",) * 3)
def beam_search_small(log_trans, beam=2, steps=3, start=0):
    beams = [([start], 0.0)]
    for _ in range(steps):
        candidates = []
        for seq, score in beams:
            row = log_trans[seq[-1]]
            for tok in np.argsort(row)[::-1][:beam]:
                candidates.append((seq + [int(tok)], score + row[tok]))
        candidates.sort(key=lambda c: c[1], reverse=True)
        beams = candidates[:beam]
    return [(s, round(float(v), 6)) for s, v in beams]


class GaussianNB:
    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.theta_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        self.var_ = np.array([X[y == c].var(axis=0) for c in self.classes_]) + 1e-9
        self.prior_ = np.array([np.mean(y == c) for c in self.classes_])
        return self

    def predict_log_proba(self, X):
        jll = []
        for i in range(len(self.classes_)):
            n_ij = -0.5 * np.sum(np.log(2.0 * np.pi * self.var_[i]))
            n_ij = n_ij - 0.5 * np.sum((X - self.theta_[i]) ** 2 / self.var_[i], axis=1)
            jll.append(np.log(self.prior_[i]) + n_ij)
        jll = np.array(jll).T
        m = jll.max(axis=1, keepdims=True)
        return jll - (m + np.log(np.exp(jll - m).sum(axis=1, keepdims=True)))

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_log_proba(X), axis=1)]


@case(lambda: _blobs(n=18, seed=3))
def gaussian_naive_bayes_fit_predict(X, y):
    model = GaussianNB().fit(X[:12], y[:12])
    pred = model.predict(X[12:])
    return pred, model.theta_, model.predict_log_proba(X[12:]), (pred == y[12:]).mean()


@case(lambda: (*_blobs(n=15, seed=4), np.array([[0.2, 0.1], [3.5, 4.2], [-3.0, 2.5]])))
def knn_classifier_argsort(X_train, y_train, X_test, k=3):
    d = np.sqrt(((X_test[:, None, :] - X_train[None, :, :]) ** 2).sum(-1))
    idx = np.argsort(d, axis=1, kind="stable")[:, :k]
    votes = y_train[idx]
    pred = np.array([np.bincount(v, minlength=3).argmax() for v in votes])
    return pred, idx, d[np.arange(len(X_test))[:, None], idx]


@case(lambda: _binary_data(n=20, d=2, seed=5))
def decision_stump_search(X, y):
    best = {"err": np.inf}
    w = np.full(len(y), 1 / len(y))
    for feat in range(X.shape[1]):
        for thr in np.unique(X[:, feat]):
            for sign in (1, -1):
                pred = np.where(sign * (X[:, feat] - thr) > 0, 1, 0)
                err = w[pred != y].sum()
                if err < best["err"]:
                    best = {"err": err, "feat": feat, "thr": thr, "sign": sign}
    return best


@case(lambda: (np.array([2, 0, 1, 2, 1, 0]), 4))
def one_hot_encoding_three_ways(labels, n_classes):
    a = np.eye(n_classes, dtype=np.float32)[labels]
    b = np.zeros((labels.size, n_classes), dtype=np.float32)
    b[np.arange(labels.size), labels] = 1
    c = (labels[:, None] == np.arange(n_classes)).astype(np.float32)
    back = a.argmax(axis=1)
    return a, np.array_equal(a, b), np.array_equal(b, c), back


@case(lambda: (np.arange(40, dtype=np.float64).reshape(20, 2), np.arange(20) % 2),
      graphs=1)
def train_test_split_with_permutation(X, y, test_size=0.25, seed=0, shuffle=True):
    n = len(X)
    if not 0 < test_size < 1:
        raise ValueError("test_size must be in (0, 1)")
    n_test = int(math.ceil(n * test_size))
    idx = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    test_idx, train_idx = idx[:n_test], idx[n_test:]
    return X[train_idx], X[test_idx], y[train_idx], y[test_idx]


@case(lambda: (np.random.default_rng(18).normal(size=(11, 3)), np.random.default_rng(19).normal(size=11)))
def minibatch_linear_regression(X, y, batch_size=4, epochs=3, lr=0.05):
    n, d = X.shape
    w = np.zeros(d)
    rng = np.random.default_rng(0)
    epoch_losses = []
    for epoch in range(epochs):
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, batch_size):
            batch = order[start:start + batch_size]
            xb, yb = X[batch], y[batch]
            err = xb @ w - yb
            total += float((err ** 2).sum())
            w -= lr * 2 * xb.T @ err / len(batch)
        epoch_losses.append(total / n)
    return w, epoch_losses


@case(lambda: (np.array([0, 1, 2, 2, 1, 0, 1, 2, 0, 0]), np.array([0, 2, 2, 2, 1, 0, 0, 1, 0, 1])))
def classification_report(y_true, y_pred, n_classes=3):
    cm = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(cm, (y_true, y_pred), 1)
    tp = np.diag(cm)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(cm.sum(0) > 0, tp / cm.sum(0), 0.0)
        recall = np.where(cm.sum(1) > 0, tp / cm.sum(1), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    report = {}
    for c in range(n_classes):
        report[f"class_{c}"] = {"precision": round(float(precision[c]), 4),
                                "recall": round(float(recall[c]), 4), "support": int(cm[c].sum())}
    report["accuracy"] = tp.sum() / cm.sum()
    report["macro_f1"] = f1.mean()
    return cm, report


@case(lambda: (np.array([0, 0, 1, 1, 0, 1, 1, 0]), np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.6, 0.65])))
def roc_auc_by_sorting(y, scores):
    order = np.argsort(-scores, kind="mergesort")
    y_sorted = y[order]
    tps = np.cumsum(y_sorted)
    fps = np.cumsum(1 - y_sorted)
    tpr = np.concatenate([[0], tps / tps[-1]])
    fpr = np.concatenate([[0], fps / fps[-1]])
    auc = np.trapezoid(tpr, fpr) if hasattr(np, "trapezoid") else np.trapz(tpr, fpr)
    # the rank-sum (Mann-Whitney) formula gives the same number
    ranks = np.empty(len(scores))
    ranks[np.argsort(scores)] = np.arange(1, len(scores) + 1)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    auc_rank = (ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return auc, auc_rank, fpr, tpr


# the zip of the two arrays is live at the break and rebuilt; the continuations
# compare NumPy ints (constants) and compute nothing in a graph
@case(lambda: (np.array([1, 0, 1, 1, 0, 1]), np.array([1, 0, 0, 1, 1, 1])),
      graphs=1, breaks='the truth value of a tensor')
def confusion_counts_with_loops(y_true, y_pred):
    counts = {"tp": 0, "fp": 0, "tn": 0, "fn": 0}
    for t, p in zip(y_true, y_pred):
        if t == 1 and p == 1:
            counts["tp"] += 1
        elif t == 0 and p == 1:
            counts["fp"] += 1
        elif t == 0 and p == 0:
            counts["tn"] += 1
        else:
            counts["fn"] += 1
    precision = counts["tp"] / (counts["tp"] + counts["fp"])
    recall = counts["tp"] / (counts["tp"] + counts["fn"])
    return counts, precision, recall, 2 * precision * recall / (precision + recall)


# == scientific scripts ===============================================================================

def lotka_volterra(t, z, a=1.0, b=0.1, c=1.5, d=0.075):
    x, y = z
    return np.array([a * x - b * x * y, -c * y + d * x * y])


@case(lambda: (np.array([10.0, 5.0]), 0.0, 2.0, 20))
def rk4_integration(y0, t0, t1, n_steps, f=lotka_volterra):
    h = (t1 - t0) / n_steps
    t, y = t0, np.asarray(y0, dtype=float)
    ts, ys = [t], [y]
    for _ in range(n_steps):
        k1 = f(t, y)
        k2 = f(t + h / 2, y + h / 2 * k1)
        k3 = f(t + h / 2, y + h / 2 * k2)
        k4 = f(t + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t + h
        ts.append(t)
        ys.append(y)
    return np.array(ts), np.stack(ys)


@case(lambda: (np.array([1.0, 0.0], np.float32), 0.1, 30))
def euler_damped_oscillator(state, dt, steps, k=4.0, c=0.3):
    x, v = float(state[0]), float(state[1])
    traj = np.zeros((steps + 1, 2), np.float32)
    traj[0] = state
    energy = []
    for i in range(1, steps + 1):
        a = -k * x - c * v
        x, v = x + dt * v, v + dt * a           # explicit Euler
        traj[i] = (x, v)
        energy.append(0.5 * v * v + 0.5 * k * x * x)
    return traj, energy[-1] < energy[0], max(energy)


def _cubic(x):
    return x ** 3 - 2 * x - 5


def _cubic_prime(x):
    return 3 * x ** 2 - 2


def _neg_sin(x):
    return -np.sin(x)


def _no_real_root(x):
    return x * x + 1


def _double(x):
    return 2 * x


def _newton_steps():
    return [(_cubic, _cubic_prime, 2.0), (np.cos, _neg_sin, np.float64(1.0)),
            (_no_real_root, _double, 0.0), (_no_real_root, _double, 0.5)]


@case(steps=_newton_steps, graphs=0)
def newton_with_tolerance(f, fprime, x0, tol=1e-10, max_iter=50):
    x = x0
    for i in range(max_iter):
        fx = f(x)
        dfx = fprime(x)
        if dfx == 0:
            raise ZeroDivisionError(f"zero derivative at iteration {i}")
        step = fx / dfx
        x = x - step
        if abs(step) < tol:
            return x, i + 1
    raise RuntimeError(f"Newton's method did not converge in {max_iter} iterations (x={x:.4f})")


# the local closure p is live at the breaks (a real function over real cells).
# np.sign(fm) of the dynamic NumPy floats fm and flo is computed by the graph
# (one break per iteration at the if, each continuation compiled once). On
# 3.13 the if's outcome reaches the continuation as a bool on the stack, which
# recompiles per outcome until the recompile limit, then runs natively
@case(lambda: (np.array([1.0, -6.0, 11.0, -6.0]), 2.5, 4.0),
      graphs=6, breaks=('the truth value of a tensor',) * 6)   # on 3.13 too (TO_BOOL + jump)
def bisection_on_polynomial(coeffs, lo, hi, tol=1e-8):
    def p(x):
        acc = 0.0
        for c in coeffs:                       # Horner's rule
            acc = acc * x + c
        return acc
    flo, fhi = p(lo), p(hi)
    if flo * fhi > 0:
        raise ValueError("root is not bracketed")
    n = 0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        fm = p(mid)
        if np.sign(fm) == np.sign(flo):
            lo, flo = mid, fm
        else:
            hi = mid
        n += 1
    return 0.5 * (lo + hi), n


@case(lambda: (np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], np.float32),), graphs=1)
def power_iteration_fixed_steps(A, n_iter=25):
    b = np.ones(A.shape[1], dtype=A.dtype)
    lam = 0.0
    for _ in range(n_iter):
        Ab = A @ b
        b = Ab / np.linalg.norm(Ab)
        lam = b @ A @ b
    residual = np.linalg.norm(A @ b - lam * b)
    return lam, b, residual


@case(lambda: (np.array([[10.0, -1.0, 2.0], [-1.0, 11.0, -1.0], [2.0, -1.0, 10.0]]),
               np.array([6.0, 25.0, -11.0])))
def jacobi_and_gauss_seidel(A, b, sweeps=8):
    D = np.diag(A)
    R = A - np.diagflat(D)
    x_j = np.zeros_like(b)
    for _ in range(sweeps):
        x_j = (b - R @ x_j) / D
    x_gs = np.zeros_like(b)
    n = len(b)
    for _ in range(sweeps):
        for i in range(n):
            s = A[i, :i] @ x_gs[:i] + A[i, i + 1:] @ x_gs[i + 1:]
            x_gs[i] = (b[i] - s) / A[i, i]
    exact = np.linalg.solve(A, b)
    return x_j, x_gs, np.abs(x_j - exact).max() > np.abs(x_gs - exact).max()


@case(lambda: (np.sin(np.linspace(0, np.pi, 12)).astype(np.float32),), graphs=1)
def heat_equation_explicit(u0, alpha=0.4, steps=15):
    u = u0.copy()
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1] = u[:-2] - 2 * u[1:-1] + u[2:]
        u = u + alpha * lap
        u[0] = u[-1] = 0.0                     # Dirichlet boundaries
    return u, u.sum() < u0.sum(), u0


@case(lambda: (np.zeros((6, 6)),))
def laplace_2d_jacobi_stencil(grid, n_iter=10):
    g = grid.copy()
    g[0, :] = 1.0                               # hot top edge
    for _ in range(n_iter):
        g[1:-1, 1:-1] = 0.25 * (g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
    dx = np.gradient(g, axis=1)
    return g, dx, grid


@case(lambda: (20000,), graphs=1)
def monte_carlo_pi_and_integral(n, seed=123):
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-1, 1, size=(n, 2))
    inside = (pts ** 2).sum(axis=1) <= 1.0
    pi_est = 4 * inside.mean()
    stderr = 4 * inside.std(ddof=1) / np.sqrt(n)
    u = rng.random(n)
    integral = np.mean(np.exp(-u ** 2))        # int_0^1 exp(-x^2) dx
    return pi_est, stderr, integral, abs(pi_est - np.pi) < 5 * stderr


class KalmanFilter1D:
    def __init__(self, q=1e-3, r=0.1):
        self.x = np.zeros(2)                     # position, velocity
        self.P = np.eye(2)
        self.F = np.array([[1.0, 1.0], [0.0, 1.0]])
        self.H = np.array([[1.0, 0.0]])
        self.Q = q * np.eye(2)
        self.R = np.array([[r]])

    def step(self, z):
        # predict
        self.x = self.F @ self.x
        self.P = self.F @ self.P @ self.F.T + self.Q
        # update
        y = z - self.H @ self.x
        S = self.H @ self.P @ self.H.T + self.R
        K = self.P @ self.H.T @ np.linalg.inv(S)
        self.x = self.x + (K @ y).ravel()
        self.P = (np.eye(2) - K @ self.H) @ self.P
        return self.x.copy()


def _kalman_steps():
    kf = KalmanFilter1D()
    zs = [np.array([1.0]), np.array([2.1]), np.array([2.9]), np.array([4.2])]
    return [(kf, z) for z in zs]


@case(steps=_kalman_steps, graphs=1)
def kalman_filter_tracking(kf, z):
    est = kf.step(z)
    return est, np.trace(kf.P)


@case(lambda: (np.array([2.0, -3.0, 0.0, 5.0]), np.linspace(-1, 1, 7).astype(np.float32)))
def horner_and_derivative(coeffs, x):
    p = np.zeros_like(x)
    dp = np.zeros_like(x)
    for c in coeffs:
        dp = dp * x + p
        p = p * x + c
    return p, dp, np.allclose(p, np.polyval(coeffs, x), atol=1e-5)


class RunningStats:
    """Welford's online mean and variance."""

    def __init__(self):
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def push(self, x):
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    @property
    def variance(self):
        return self.m2 / (self.n - 1) if self.n > 1 else 0.0


def _welford_steps():
    rs = RunningStats()
    rng = np.random.default_rng(20)
    return [(rs, rng.normal(3, 2, 5)), (rs, rng.normal(3, 2, 4)), (rs, np.array([]))]


@case(steps=_welford_steps, graphs=1)
def welford_running_statistics(rs, chunk):
    for v in chunk:
        rs.push(v)
    return rs.n, rs.mean, rs.variance


@case(lambda: (np.array([0.5, 1.2, 3.3, 2.2, 4.9, 0.1, 2.5, 3.0]), np.array([0.0, 1.0, 2.5, 4.0])))
def histogram_binning(values, edges):
    idx = np.searchsorted(edges, values, side="right") - 1
    idx_d = np.digitize(values, edges) - 1
    counts = np.zeros(len(edges), dtype=np.int64)
    for i in idx:
        counts[min(i, len(edges) - 1)] += 1
    overflow = counts[-1]
    hist, _ = np.histogram(values, bins=edges)
    return idx, np.array_equal(idx, idx_d), counts[:-1], overflow, hist


@case(lambda: (np.random.default_rng(21).integers(0, 256, (6, 7)).astype(np.float32),))
def image_box_blur_and_sobel(img):
    p = np.pad(img, 1, mode="edge")
    blur = sum(p[1 + dy:p.shape[0] - 1 + dy, 1 + dx:p.shape[1] - 1 + dx]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1)) / 9.0
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    mag = np.hypot(gx, gy)
    norm = (mag - mag.min()) / (mag.max() - mag.min() + 1e-8)
    as_u8 = np.clip(norm * 255 + 0.5, 0, 255).astype(np.uint8)
    return blur, as_u8, as_u8.dtype, blur.dtype


@case(lambda: (np.random.default_rng(22).integers(0, 256, (4, 4, 3), dtype=np.uint8),))
def image_to_grayscale_and_back(rgb, gamma=2.2):
    x = rgb.astype(np.float32) / 255.0
    lin = x ** gamma
    gray = lin @ np.array([0.2126, 0.7152, 0.0722], dtype=np.float32)
    srgb = gray ** (1 / gamma)
    out = (np.clip(srgb, 0.0, 1.0) * 255).round().astype(np.uint8)
    thumb = out.reshape(2, 2, 2, 2).mean(axis=(1, 3))
    return out, thumb, np.stack([out] * 3, axis=-1).shape


# == library-style code ==============================================================================

class NotFittedError(ValueError, AttributeError):
    pass


class StandardScaler:
    def __init__(self, with_mean=True, with_std=True):
        self.with_mean = with_mean
        self.with_std = with_std

    def fit(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
        self.mean_ = X.mean(axis=0) if self.with_mean else None
        scale = X.std(axis=0) if self.with_std else None
        if scale is not None:
            scale = np.where(scale == 0.0, 1.0, scale)     # constant features
        self.scale_ = scale
        self.n_samples_seen_ = X.shape[0]
        return self

    def transform(self, X):
        if not hasattr(self, "n_samples_seen_"):
            raise NotFittedError("This StandardScaler instance is not fitted yet. "
                                 "Call 'fit' with appropriate arguments before using this estimator.")
        X = np.array(X, dtype=np.float64, copy=True)
        if self.with_mean:
            X -= self.mean_
        if self.with_std:
            X /= self.scale_
        return X

    def fit_transform(self, X):
        return self.fit(X).transform(X)

    def inverse_transform(self, X):
        X = np.array(X, dtype=np.float64, copy=True)
        if self.with_std:
            X *= self.scale_
        if self.with_mean:
            X += self.mean_
        return X


class MinMaxScaler:
    def __init__(self, feature_range=(0, 1)):
        self.feature_range = feature_range

    def fit(self, X):
        lo, hi = self.feature_range
        if lo >= hi:
            raise ValueError("Minimum of desired feature range must be smaller than maximum. "
                             f"Got {self.feature_range!r}.")
        self.data_min_ = np.min(X, axis=0)
        self.data_max_ = np.max(X, axis=0)
        rng = self.data_max_ - self.data_min_
        rng[rng == 0] = 1
        self.scale_ = (hi - lo) / rng
        self.min_ = lo - self.data_min_ * self.scale_
        return self

    def transform(self, X):
        return X * self.scale_ + self.min_


def _scaler_steps():
    rng = np.random.default_rng(23)
    X = rng.normal(5, 2, (6, 3))
    X[:, 2] = 7.0                                          # a constant column
    sc = StandardScaler()
    return [(sc, X), (sc, X[:3] + 1), (StandardScaler(with_std=False), X), (sc, X.tolist()),
            (sc, X[0])]


@case(steps=_scaler_steps)
def standard_scaler_fit_transform_roundtrip(scaler, X):
    Z = scaler.fit_transform(X)
    back = scaler.inverse_transform(Z)
    return Z, np.allclose(back, X), scaler.mean_, scaler.n_samples_seen_


def _unfitted_steps():
    sc = StandardScaler()
    X = np.arange(6.0).reshape(3, 2)
    return [(sc, X), lambda: sc.fit(X * 2), (sc, X)]


@case(steps=_unfitted_steps, graphs=0, breaks='the function raises')
def standard_scaler_transform_before_fit(scaler, X):
    return scaler.transform(X)


class Pipeline:
    def __init__(self, steps):
        names = [name for name, _ in steps]
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        self.steps = steps
        self._cache = {}

    @property
    def named_steps(self):
        return dict(self.steps)

    def fit(self, X):
        for name, step in self.steps:
            X = step.fit(X).transform(X)
        return self

    def transform(self, X):
        key = (X.shape, float(X.sum()))
        if key in self._cache:
            return self._cache[key]
        for _, step in self.steps:
            X = step.transform(X)
        self._cache[key] = X
        return X


def _pipeline_steps():
    rng = np.random.default_rng(24)
    X = rng.uniform(-2, 6, (5, 2))
    pipe = Pipeline([("std", StandardScaler()), ("mm", MinMaxScaler((-1, 1)))])
    return [(pipe, X), (pipe, X), (pipe, X[:2] * 3), (pipe, X)]


@case(steps=_pipeline_steps,
      graphs=3, breaks=('float() of a tensor reads its', 'float() of a tensor reads its',
        'dict with keys that are not', 'dict with keys that are not'))
def pipeline_fit_then_transform_with_cache(pipe, X):
    if not hasattr(pipe.named_steps["std"], "mean_"):
        pipe.fit(X)
    out = pipe.transform(X)
    return out, len(pipe._cache), out.min(axis=0), pipe.named_steps["mm"].data_min_


@case(lambda: ([("a", StandardScaler()), ("a", MinMaxScaler())],))
def pipeline_rejects_duplicate_names(steps):
    return Pipeline(steps)


@case(lambda: (np.arange(8.0).reshape(4, 2),), kwargs={"feature_range": (1, 0)},
      graphs=0, breaks='the function raises')
def minmax_scaler_bad_range(X, feature_range=(0, 1)):
    return MinMaxScaler(feature_range).fit(X).transform(X)


ACTIVATIONS = {}


def register_activation(name):
    def deco(fn):
        ACTIVATIONS[name] = fn
        return fn
    return deco


@register_activation("relu")
def _relu(x):
    return np.maximum(x, 0)


@register_activation("leaky_relu")
def _leaky(x, slope=0.01):
    return np.where(x > 0, x, slope * x)


@register_activation("gelu")
def _gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


@register_activation("swish")
def _swish(x, beta=1.0):
    return x / (1 + np.exp(-beta * x))


def get_activation(name):
    try:
        return ACTIVATIONS[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown activation {name!r}; choose from {sorted(ACTIVATIONS)}") from None


@dataclasses.dataclass
class MLPConfig:
    sizes: tuple = (4, 8, 3)
    activation: str = "relu"
    final_activation: str | None = None
    seed: int = 0
    dtype: str = "float32"

    def __post_init__(self):
        if len(self.sizes) < 2:
            raise ValueError("an MLP needs at least an input and an output size")


def build_mlp(cfg):
    rng = np.random.default_rng(cfg.seed)
    return [(rng.standard_normal((a, b)).astype(cfg.dtype) / np.sqrt(a), np.zeros(b, cfg.dtype))
            for a, b in zip(cfg.sizes[:-1], cfg.sizes[1:])]


def _config_steps():
    x = np.random.default_rng(25).normal(size=(2, 4)).astype(np.float32)
    return [(MLPConfig(), x), (MLPConfig(activation="GELU"), x),
            (MLPConfig(activation="swish", final_activation="relu"), x),
            (MLPConfig(sizes=(4, 5, 5, 2), activation="leaky_relu", dtype="float64"), x),
            (MLPConfig(activation="tanh"), x)]


@case(steps=_config_steps)
def config_driven_mlp_forward(cfg, x):
    layers = build_mlp(cfg)
    act = get_activation(cfg.activation)
    h = x.astype(cfg.dtype)
    for i, (W, b) in enumerate(layers):
        h = h @ W + b
        if i < len(layers) - 1:
            h = act(h)
        elif cfg.final_activation is not None:
            h = get_activation(cfg.final_activation)(h)
    return h, h.dtype, dataclasses.asdict(cfg)


def smooth(y, **kwargs):
    """Moving average / exponential smoothing with options (pandas-like kwargs)."""
    method = kwargs.pop("method", "ema")
    if kwargs.get("window") is not None and kwargs["window"] < 1:
        raise ValueError(f"window must be >= 1, got {kwargs['window']}")
    if method == "ema":
        alpha = kwargs.pop("alpha", 0.5)
        out = np.empty_like(y, dtype=float)
        out[0] = y[0]
        for i in range(1, len(y)):
            out[i] = alpha * y[i] + (1 - alpha) * out[i - 1]
    elif method == "sma":
        w = kwargs.pop("window", 3)
        kernel = np.ones(w) / w
        out = np.convolve(y, kernel, mode=kwargs.pop("mode", "valid"))
    else:
        raise TypeError(f"smooth() got an unexpected method {method!r}")
    if kwargs.pop("center", False):
        out = out - out.mean()
    if kwargs:
        raise TypeError(f"smooth() got unexpected keyword arguments {sorted(kwargs)}")
    return out


def _smooth_steps():
    y = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 6.0, 8.0])
    return [(y, {}), (y, {"alpha": 0.2, "center": True}), (y, {"method": "sma", "window": 2}),
            (y, {"method": "sma", "mode": "same"}), (y, {"method": "sma", "window": 0}),
            (y, {"method": "median"}), (y, {"alpha": 0.3, "bogus": 1})]


@case(steps=_smooth_steps, graphs=1)
def smoothing_with_kwargs_options(y, opts):
    return smooth(y, **opts)


def _validate_steps():
    return [(np.ones(3), 2), ([1, 2, 3], 2), (np.ones((2, 2)), 2), (np.ones(3), 0),
            (np.ones(3), 2.5), (np.array([1, np.nan, 3]), 2)]


@case(steps=_validate_steps)
def argument_validation_errors(x, degree):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"x must be a numpy.ndarray, not {type(x).__name__}")
    if x.ndim != 1:
        raise ValueError(f"x must be 1-dimensional, got shape {x.shape}")
    if not isinstance(degree, int):
        raise TypeError(f"degree must be an integer, got {degree!r}")
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x contains NaN or infinity")
    V = np.vander(x, degree + 1, increasing=True)
    return V, V.shape


@case(lambda: (np.random.default_rng(26).normal(size=(8, 2)), np.random.default_rng(27).normal(size=8)))
def training_loop_logs_progress(X, y, steps=9, lr=0.1, log_every=3):
    w = np.zeros(X.shape[1])
    for step in range(1, steps + 1):
        residual = X @ w - y
        loss = 0.5 * np.mean(residual ** 2)
        w -= lr * X.T @ residual / len(y)
        if step % log_every == 0 or step == 1:
            print(f"step {step:3d}  loss={loss:.6f}  |w|={np.linalg.norm(w):.4f}")
    print("done:", np.round(w, 4))
    return w


class FeatureCache:
    """Expensive features computed once per key, reused across calls."""

    def __init__(self):
        self.cache = {}
        self.misses = 0

    def features(self, name, x):
        if name not in self.cache:
            self.misses += 1
            centered = x - x.mean()
            self.cache[name] = np.stack([centered, centered ** 2, np.abs(centered)], axis=1)
        return self.cache[name]


def _cache_steps():
    fc = FeatureCache()
    a, b = np.linspace(0, 1, 5), np.linspace(-1, 3, 5)
    return [(fc, "a", a), (fc, "a", a), (fc, "b", b), (fc, "a", b), lambda: fc.cache.clear(), (fc, "a", b)]


@case(steps=_cache_steps, graphs=1)
def cached_features_on_object(fc, name, x):
    feats = fc.features(name, x)
    return feats @ np.array([1.0, 0.5, -0.25]), fc.misses, sorted(fc.cache)


# == frame tensors and frame.nn, torch style ============================================================

class Block(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class TinyClassifier(nn.Module):
    def __init__(self, d_in=6, d=8, n_classes=3, n_blocks=2):
        super().__init__()
        self.embed = nn.Linear(d_in, d)
        self.blocks = nn.ModuleList([Block(d, 2 * d) for _ in range(n_blocks)])
        self.head = nn.Linear(d, n_classes)

    def forward(self, x):
        h = self.embed(x)
        for blk in self.blocks:
            h = blk(h)
        return self.head(h)


def _classifier_data(seed=0, n=8):
    frame.manual_seed(seed)
    rng = np.random.default_rng(seed)
    x = frame.tensor(rng.normal(size=(n, 6)).astype(np.float32))
    y = frame.tensor(rng.integers(0, 3, n))
    return x, y


def _train_steps():
    x, y = _classifier_data()
    model = TinyClassifier()
    opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return [(model, opt, x, y)] * 3


@case(steps=_train_steps)
def train_step_module_with_submodules(model, opt, x, y):
    model.train()
    opt.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    acc = (logits.argmax(axis=-1) == y).astype(frame.float32).mean()
    return loss.item(), acc.item(), model.head.weight.numpy().copy()


def _fit_steps():
    x, y = _classifier_data(seed=1)
    model = TinyClassifier(n_blocks=1)
    opt = frame.optim.Adam(model.parameters(), lr=1e-2)
    return [(model, opt, x, y, 2), (model, opt, x, y, 1)]


@case(steps=_fit_steps)
def fit_loop_with_adam_and_eval_under_no_grad(model, opt, x, y, epochs):
    history = []
    for epoch in range(epochs):
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        model.eval()
        with frame.no_grad():
            val = F.cross_entropy(model(x), y)
        history.append((round(loss.item(), 5), round(val.item(), 5)))
    return history, opt.steps


def focal_loss(logits, target, gamma=2.0):
    logp = F.log_softmax(logits, axis=-1)
    n = logits.shape[0]
    logp_t = logp[frame.arange(n), target]
    p_t = logp_t.exp()
    return (-(1 - p_t) ** gamma * logp_t).mean()


def clip_grad_norm_(params, max_norm):
    params = [p for p in params if p.grad is not None]
    total = math.sqrt(sum(float((p.grad * p.grad).sum().item()) for p in params))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        with frame.no_grad():
            for p in params:
                p.grad = p.grad * coef
    return total


def _clip_steps():
    x, y = _classifier_data(seed=2)
    model = TinyClassifier(n_blocks=1)
    opt = frame.optim.SGD(model.parameters(), lr=0.5)
    return [(model, opt, x, y, 0.5), (model, opt, x, y, 100.0), (model, opt, x, y, 0.1)]


@case(steps=_clip_steps)
def custom_loss_and_gradient_clipping(model, opt, x, y, max_norm):
    opt.zero_grad()
    loss = focal_loss(model(x), y)
    loss.backward()
    norm_before = clip_grad_norm_(model.parameters(), max_norm)
    norm_after = math.sqrt(sum((p.grad * p.grad).sum().item() for p in model.parameters()))
    opt.step()
    return loss.item(), norm_before, norm_after <= max_norm * 1.001


def _early_stop_steps():
    frame.manual_seed(3)
    rng = np.random.default_rng(3)
    x = frame.tensor(rng.normal(size=(16, 2)).astype(np.float32))
    y = x @ frame.tensor(np.array([[2.0], [-1.0]], np.float32)) + 0.5
    model = nn.Linear(2, 1)
    return [(model, x, y, 1e-9, 30), (model, x, y, 0.05, 30)]


@case(steps=_early_stop_steps)
def early_stopping_on_python_float_loss(model, x, y, tol, max_epochs, patience=2):
    opt = frame.optim.SGD(model.parameters(), lr=0.1)
    best, bad_epochs, best_state = float("inf"), 0, None
    epoch = 0
    for epoch in range(max_epochs):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        value = loss.item()
        if value < best - tol:
            best, bad_epochs = value, 0
            best_state = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                break
    return epoch, round(best, 5), sorted(best_state)


def _checkpoint_steps():
    frame.manual_seed(4)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = frame.tensor(np.random.default_rng(4).normal(size=(5, 3)).astype(np.float32))
    return [(model, x), (model, x)]


@case(steps=_checkpoint_steps)
def save_and_restore_state_dict(model, x):
    checkpoint = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    before = model(x)
    opt = frame.optim.SGD(model.parameters(), lr=1.0)
    opt.zero_grad()
    (model(x) ** 2).sum().backward()
    opt.step()
    changed = model(x)
    model.load_state_dict({k: frame.tensor(v) for k, v in checkpoint.items()})
    restored = model(x)
    return before, changed, restored, list(checkpoint)


class CharRNN(nn.Module):
    def __init__(self, vocab=5, hidden=6):
        super().__init__()
        self.hidden = hidden
        self.embed = nn.Parameter(frame.randn(vocab, hidden) * 0.3)
        self.w_hh = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens, h=None):
        if h is None:
            h = frame.zeros((tokens.shape[0], self.hidden))
        logits = []
        for t in range(tokens.shape[1]):
            h = frame.tanh(self.embed[tokens[:, t]] + self.w_hh(h))
            logits.append(self.out(h))
        return frame.stack(logits, axis=1), h


def _char_rnn_steps():
    frame.manual_seed(5)
    model = CharRNN()
    opt = frame.optim.Adam(model.parameters(), lr=0.05)
    seq = frame.tensor(np.array([[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]]))
    return [(model, opt, seq)] * 3


@case(steps=_char_rnn_steps)
def char_rnn_next_token_training(model, opt, seq):
    inputs, targets = seq[:, :-1], seq[:, 1:]
    opt.zero_grad()
    logits, h = model(inputs)
    B, T, V = logits.shape
    loss = F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
    loss.backward()
    opt.step()
    return loss.item(), h.shape, logits.argmax(axis=-1).numpy()


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 3 * 3, 2)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv(x)), 2)
        h = self.drop(h.reshape(h.shape[0], -1))
        return self.fc(h)


def _convnet_steps():
    frame.manual_seed(6)
    model = ConvNet()
    x = frame.tensor(np.random.default_rng(6).normal(size=(3, 1, 6, 6)).astype(np.float32))
    return [model.eval, (model, x), (model, x), model.train, model.eval, (model, x)]


@case(steps=_convnet_steps,
      graphs=2, breaks=(".tolist() reads the tensor's", ".numpy() reads the tensor's values",
        ".numpy() reads the tensor's values"))
def convnet_inference_softmax_topk(model, x, k=1):
    with frame.no_grad():
        logits = model(x)
    probs = frame.softmax(logits, axis=-1)
    conf = probs.max(axis=-1)
    pred = probs.argmax(axis=-1)
    return pred.tolist(), conf.numpy(), probs.sum(axis=-1).numpy()


def _linreg_steps():
    rng = np.random.default_rng(7)
    X = frame.tensor(rng.normal(size=(10, 3)).astype(np.float32))
    true_w = frame.tensor(np.array([[1.0], [-2.0], [0.5]], np.float32))
    y = X @ true_w
    w = frame.tensor(np.zeros((3, 1), np.float32), requires_grad=True)
    return [(w, X, y, 0.1), (w, X, y, 0.1), (w, X, y, 0.05)]


@case(steps=_linreg_steps,
      graphs=2, breaks=(".item() reads the tensor's values", ".numpy() reads the tensor's values"))
def manual_gradient_descent_on_leaf_tensor(w, X, y, lr):
    for _ in range(3):
        loss = ((X @ w - y) ** 2).mean()
        loss.backward()
        with frame.no_grad():
            w -= lr * w.grad
        w.grad = None
    return loss.item(), w.numpy().copy()


@case(lambda: (frame.tensor(np.random.default_rng(8).normal(size=(4, 3)).astype(np.float32)),), graphs=1)
def value_and_grad_of_a_loss(x):
    def loss_fn(w, x):
        logits = x @ w
        return F.log_softmax(logits, axis=-1).mean() * -1.0

    w = frame.tensor(np.full((3, 2), 0.1, np.float32))
    val, g = frame.value_and_grad(loss_fn)(w, x)
    for _ in range(2):
        w = w - 0.5 * g
        val, g = frame.value_and_grad(loss_fn)(w, x)
    return val, g, w


# == more programs: data pipelines, classic algorithms, small frameworks ==============================

def iterate_minibatches(X, y, batch_size, shuffle=False, seed=0):
    idx = np.arange(len(X))
    if shuffle:
        np.random.default_rng(seed).shuffle(idx)
    for start in range(0, len(X) - batch_size + 1, batch_size):
        sel = idx[start:start + batch_size]
        yield X[sel], y[sel]


@case(lambda: (np.linspace(-1, 1, 24).reshape(12, 2), np.arange(12) % 3), graphs=1)
def generator_data_loader_with_early_exit(X, y, max_batches=3):
    seen, sums = 0, []
    for i, (xb, yb) in enumerate(iterate_minibatches(X, y, 4)):
        if i >= max_batches:
            break
        sums.append((xb.sum(axis=0), int(yb.max())))
        seen += len(xb)
    return seen, sums


def normalize_(X, eps=1e-8):
    """In place, like sklearn's ``copy=False``: returns the same array."""
    X -= X.mean(axis=0)
    X /= X.std(axis=0) + eps
    return X


@case(lambda: (np.arange(12, dtype=np.float64).reshape(4, 3) ** 1.5,))
def in_place_normalization_returns_argument(X):
    Y = normalize_(X)
    first_col = Y[:, 0]                 # a view of the argument
    return Y is X, first_col, np.shares_memory(first_col, X), Y


@case(lambda: (np.random.default_rng(30).integers(0, 8, (5, 6)),))
def histogram_equalization_lookup_table(img, levels=8):
    hist = np.bincount(img.ravel(), minlength=levels)
    cdf = hist.cumsum()
    cdf_min = cdf[cdf > 0].min()
    lut = np.round((cdf - cdf_min) / (img.size - cdf_min) * (levels - 1)).astype(np.int64)
    return lut[img], lut, hist


@case(lambda: (np.array([0, 2, 3, 6]), np.array([0, 2, 1, 0, 1, 2]),
               np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), np.array([1.0, -1.0, 2.0])),
      graphs=6, breaks=('range() bounds that are not', 'range() bounds that are not',
        'range() bounds that are not', 'a slice whose bounds are integer'))
def csr_matvec_by_loops(indptr, indices, data, x):
    n_rows = len(indptr) - 1
    y = np.zeros(n_rows)
    for i in range(n_rows):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * x[indices[k]]
        y[i] = acc
    dense = np.zeros((n_rows, len(x)))
    for i in range(n_rows):
        dense[i, indices[indptr[i]:indptr[i + 1]]] = data[indptr[i]:indptr[i + 1]]
    return y, np.allclose(dense @ x, y)


def _loss_for_gradcheck(w):
    return np.sum(np.tanh(w) ** 2) + 0.5 * np.sum(w ** 3)


@case(lambda: (np.array([[0.3, -0.2], [0.1, 0.5]]),))
def numerical_gradient_check(w, h=1e-5):
    analytic = 2 * np.tanh(w) * (1 - np.tanh(w) ** 2) + 1.5 * w ** 2
    numeric = np.zeros_like(w)
    for i in range(w.size):
        old = w.flat[i]
        w.flat[i] = old + h
        fp = _loss_for_gradcheck(w)
        w.flat[i] = old - h
        fm = _loss_for_gradcheck(w)
        w.flat[i] = old                   # restore the argument
        numeric.flat[i] = (fp - fm) / (2 * h)
    rel = np.abs(analytic - numeric) / np.maximum(1e-8, np.abs(analytic) + np.abs(numeric))
    return rel.max() < 1e-6, w


class Value:
    """micrograd's scalar autograd node."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t ** 2) * out.grad
        out._backward = _backward
        return out

    __radd__ = __add__
    __rmul__ = __mul__

    def backward(self):
        topo, visited = [], set()

        def build(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build(child)
                topo.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(topo):
            v._backward()


@case(lambda: ([0.5, -1.5, 2.0], [1.0, 0.25, -0.5]))
def micrograd_neuron(xs, ws, b=0.1):
    x = [Value(v) for v in xs]
    w = [Value(v) for v in ws]
    act = sum((wi * xi for wi, xi in zip(w, x)), Value(b))
    out = act.tanh()
    out.backward()
    return round(out.data, 10), [round(wi.grad, 10) for wi in w], [round(xi.grad, 10) for xi in x]


@case(lambda: (np.random.default_rng(31).normal(size=(6, 4)).astype(np.float32), np.array([0, 3, 1, 1, 2, 0]),
               np.array([1.0, 2.0, 1.0, 0.5], np.float32)))
def label_smoothed_weighted_cross_entropy(logits, labels, class_weights, smoothing=0.1):
    n, c = logits.shape
    z = logits - logits.max(axis=1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    target = np.full((n, c), smoothing / (c - 1), dtype=logits.dtype)
    np.put_along_axis(target, labels[:, None], 1.0 - smoothing, axis=1)
    per_sample = -(target * log_probs).sum(axis=1)
    w = class_weights[labels]
    nll = -np.take_along_axis(log_probs, labels[:, None], axis=1)[:, 0]
    return (w * per_sample).sum() / w.sum(), nll.mean(), target.dtype


@case(lambda: (np.random.default_rng(32).uniform(0, 10, 15),))
def least_squares_fit_and_r2(x, degree=2, noise=0.5):
    rng = np.random.default_rng(1)
    y = 1.5 - 0.8 * x + 0.12 * x ** 2 + noise * rng.standard_normal(len(x))
    A = np.vander(x, degree + 1)
    coef, residuals, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    normal = np.linalg.solve(A.T @ A, A.T @ y)
    pred = A @ coef
    ss_res = np.sum((y - pred) ** 2)
    ss_tot = np.sum((y - y.mean()) ** 2)
    return coef, np.allclose(coef, normal), 1 - ss_res / ss_tot, rank


def lr_at(step, base_lr=0.1, warmup=3, total=12, min_lr=1e-3):
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (base_lr - min_lr) * (1 + math.cos(math.pi * progress))


@case(lambda: (np.array([2.0, -3.0]),), graphs=1)
def sgd_with_warmup_cosine_schedule(w0, total=12):
    w = w0.copy()
    lrs = []
    for step in range(total):
        lr = lr_at(step, total=total)
        grad = 2 * w * np.array([1.0, 10.0])      # an ill-conditioned quadratic
        w = w - lr * grad / (1 + step) ** 0.5
        lrs.append(round(lr, 8))
    return w, lrs


@case(lambda: (np.log(np.array([[0.7, 0.3], [0.4, 0.6]])), np.log(np.array([[0.9, 0.1], [0.2, 0.8]])),
               np.log(np.array([0.6, 0.4])), [0, 0, 1, 1, 0]),
      graphs=6, breaks=('int() of a tensor reads its value',) * 2)
def viterbi_decoding(log_A, log_B, log_pi, obs):
    T, S = len(obs), log_A.shape[0]
    delta = np.zeros((T, S))
    psi = np.zeros((T, S), dtype=np.int64)
    delta[0] = log_pi + log_B[:, obs[0]]
    for t in range(1, T):
        scores = delta[t - 1][:, None] + log_A
        psi[t] = scores.argmax(axis=0)
        delta[t] = scores.max(axis=0) + log_B[:, obs[t]]
    path = [int(delta[-1].argmax())]
    for t in range(T - 1, 0, -1):
        path.append(int(psi[t, path[-1]]))
    return path[::-1], delta[-1].max()


# the zip over the rows is live at the break in the inner loop and rebuilt
@case(lambda: (*_binary_data(n=16, d=2, seed=7), 10),
      graphs=10, breaks=('the truth value of a tensor',) * 5)
def perceptron_until_no_mistakes(X, y, max_epochs):
    w = np.zeros(X.shape[1])
    b = 0.0
    t = np.where(y == 1, 1, -1)
    for epoch in range(max_epochs):
        mistakes = 0
        for xi, ti in zip(X, t):
            if ti * (xi @ w + b) <= 0:
                w += ti * xi
                b += ti
                mistakes += 1
        if mistakes == 0:
            break
    return w, b, epoch, mistakes


@case(lambda: (["the cat sat on the mat", "the dog sat", "a cat and a dog"],), graphs=1)
def bag_of_words_cosine_similarity(docs):
    vocab = {}
    tokenized = [d.lower().split() for d in docs]
    for toks in tokenized:
        for tok in toks:
            if tok not in vocab:
                vocab[tok] = len(vocab)
    X = np.zeros((len(docs), len(vocab)))
    for i, toks in enumerate(tokenized):
        for tok in toks:
            X[i, vocab[tok]] += 1
    idf = np.log(len(docs) / (1 + (X > 0).sum(axis=0))) + 1
    tfidf = X * idf
    unit = tfidf / np.linalg.norm(tfidf, axis=1, keepdims=True)
    sim = unit @ unit.T
    return sorted(vocab, key=vocab.get), np.round(sim, 8), int(np.argsort(sim[0])[-2])


def _ema_steps():
    params = {"w": np.ones(3), "b": np.zeros(1)}
    ema = {k: v.copy() for k, v in params.items()}
    return [(params, ema, 0.5), (params, ema, 0.9), lambda: params["w"].__imul__(2.0), (params, ema, 0.9)]


@case(steps=_ema_steps, graphs=1)
def exponential_moving_average_of_weights(params, ema, decay):
    for k, v in params.items():
        v -= 0.1 * (v - 2.0)                 # a training step moves the weights
        ema[k] = decay * ema[k] + (1 - decay) * v
    return {k: v.round(10) for k, v in ema.items()}


STEP = 0
HISTORY = []


@case(lambda: (np.arange(5.0),), globals_to_check=("STEP", "HISTORY"),
      graphs=1)
def global_step_counter_and_history(x, log_every=2):
    global STEP
    for _ in range(3):
        STEP += 1
        x = x * 0.5 + 1
        if STEP % log_every == 0:
            HISTORY.append((STEP, float(x.sum())))
    return x, STEP


def _bad_batches_steps():
    good = [np.ones(3), np.arange(3.0)]
    return [(good, []), (good + [np.ones(4)], []), ([np.full(3, np.nan)], [])]


@case(steps=_bad_batches_steps, graphs=1, breaks='the truth value of a tensor')
def process_batches_raises_midway(batches, results):
    total = np.zeros(3)
    for i, batch in enumerate(batches):
        if batch.shape != total.shape:
            raise ValueError(f"batch {i} has shape {batch.shape}, expected {total.shape}")
        total += batch
        results.append(total.copy())
    if np.isnan(total).any():
        raise FloatingPointError("NaN in the accumulated batches")
    return total, len(results)


class Summary:
    __slots__ = ("_data", "_cache")

    def __init__(self, data):
        self._data = np.asarray(data, dtype=np.float64)
        self._cache = {}

    @property
    def mean(self):
        if "mean" not in self._cache:
            self._cache["mean"] = self._data.mean()
        return self._cache["mean"]

    @property
    def std(self):
        if "std" not in self._cache:
            self._cache["std"] = np.sqrt(((self._data - self.mean) ** 2).mean())
        return self._cache["std"]

    def zscores(self):
        return (self._data - self.mean) / self.std


@case(lambda: ([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0],), graphs=1)
def slotted_class_with_cached_properties(values):
    s = Summary(values)
    z = s.zscores()
    return s.mean, s.std, z, sorted(s._cache)


@case(lambda: (np.array([1e8, 1.0, -1e8, 1e-3] * 4),), graphs=1, breaks='math.fsum() of a tensor reads its')
def kahan_summation(values):
    total, comp = 0.0, 0.0
    for v in values:
        y = v - comp
        t = total + y
        comp = (t - total) - y
        total = t
    naive = 0.0
    for v in values:
        naive += v
    return total, naive, math.fsum(values)


class MultiTaskNet(nn.Module):
    def __init__(self, d_in=4, hidden=8, tasks=(("cls", 3), ("reg", 1))):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU())
        self.heads = nn.ModuleDict({name: nn.Linear(hidden, n) for name, n in tasks})

    def forward(self, x, task=None):
        h = self.trunk(x)
        if task is not None:
            return self.heads[task](h)
        return {name: head(h) for name, head in self.heads.items()}


def _multitask_steps():
    frame.manual_seed(9)
    rng = np.random.default_rng(9)
    net = MultiTaskNet()
    opt = frame.optim.SGD(net.parameters(), lr=0.05)
    x = frame.tensor(rng.normal(size=(6, 4)).astype(np.float32))
    targets = {"cls": frame.tensor(rng.integers(0, 3, 6)),
               "reg": frame.tensor(rng.normal(size=(6, 1)).astype(np.float32))}
    weights = {"cls": 1.0, "reg": 0.5}
    return [(net, opt, x, targets, weights), (net, opt, x, targets, dict(weights)),
            (net, opt, x, targets, {"cls": 0.0, "reg": 1.0})]


# 3.11: the dict comprehension is a function; its break resumes (the dict's items
# iterator is rebuilt) and the rest is compiled.  3.12+ inlines it: the break is
# placed inside it too (its exception handler only puts the variables back): one
# break per item of the loop, which is the function's own
@case(steps=_multitask_steps, graphs=1,
      breaks=(".item() reads the tensor's values",) * (1 if sys.version_info < (3, 12) else 2))
def multitask_heads_weighted_loss(net, opt, x, targets, weights):
    opt.zero_grad()
    outputs = net(x)
    losses = {"cls": F.cross_entropy(outputs["cls"], targets["cls"]),
              "reg": F.mse_loss(outputs["reg"], targets["reg"])}
    total = sum(weights[k] * v for k, v in losses.items())
    total.backward()
    opt.step()
    return {k: round(v.item(), 5) for k, v in losses.items()}, net(x, task="reg").shape


def masked_attention(q, k, v, mask=None):
    d = q.shape[-1]
    scores = (q @ k.transpose(0, 2, 1)) / math.sqrt(d)
    if mask is not None:
        scores = frame.where(mask, scores, frame.full(scores.shape, -1e9))
    weights = frame.softmax(scores, axis=-1)
    return weights @ v, weights


class AttentionBlock(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.d = d

    def forward(self, x, causal=True):
        B, T, D = x.shape
        qkv = self.qkv(self.norm(x))
        q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
        mask = None
        if causal:
            mask = frame.tensor(np.tril(np.ones((T, T), dtype=bool)))[None]
        out, w = masked_attention(q, k, v, mask)
        return x + self.proj(out), w


def _attention_steps():
    frame.manual_seed(10)
    block = AttentionBlock()
    x = frame.tensor(np.random.default_rng(10).normal(size=(2, 5, 8)).astype(np.float32))
    return [block.eval, (block, x, True), (block, x, False), (block, x[:, :3], True)]


@case(steps=_attention_steps)
def attention_block_inference(block, x, causal):
    with frame.no_grad():
        y, w = block(x, causal=causal)
    upper = w.numpy()[:, np.triu_indices(x.shape[1], k=1)[0], np.triu_indices(x.shape[1], k=1)[1]]
    return y, float(np.abs(upper).max()) if causal else None, w.sum(axis=-1)


@pytest.mark.parametrize("c", case.params())
def test_corpus_programs(c):
    c.check()
