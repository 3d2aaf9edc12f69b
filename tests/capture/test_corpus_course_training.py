"""Differential corpus, seventh fidelity sweep (task HK), part two: the
training side of deep-learning course code in plain NumPy -- update rules
that take and return ``config`` dicts (sgd, momentum, RMSProp, Adam with
``t += 1``), a small Solver (``_step`` over a params dict, batched
``check_accuracy`` with ``np.hstack``, learning-rate decay per epoch, a copy
of the best params), numeric gradient checks with ``np.nditer`` and
``rel_error``, kNN distances three ways with ``np.argsort`` /
``np.bincount`` votes and cross-validation over ``np.array_split`` folds, and
"neural networks from scratch" layer, activation, loss and optimizer classes
that keep their inputs and gradients as attributes.

Part one (layers, losses, convolution, normalisation, RNNs) is
``test_corpus_course.py``; same checks (``corpus.Case.check``, and bit for bit
under the ``cpu`` and ``default`` settings).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from .bitwise import check_bitwise
from .corpus import Corpus, _setting

case = Corpus()


def _rng(seed):
    return np.random.default_rng(seed)


def _normal(seed, *shape, dtype=np.float64, scale=1.0):
    return (scale * _rng(seed).normal(size=shape)).astype(dtype)


# == update rules on config dicts =================================================================

def sgd(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    w -= config["learning_rate"] * dw
    return w, config


def sgd_momentum(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("momentum", 0.9)
    v = config.get("velocity", np.zeros_like(w))
    v = config["momentum"] * v - config["learning_rate"] * dw
    next_w = w + v
    config["velocity"] = v
    return next_w, config


def rmsprop(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-2)
    config.setdefault("decay_rate", 0.99)
    config.setdefault("epsilon", 1e-8)
    config.setdefault("cache", np.zeros_like(w))
    config["cache"] = config["decay_rate"] * config["cache"] + (1 - config["decay_rate"]) * dw ** 2
    next_w = w - config["learning_rate"] * dw / (np.sqrt(config["cache"]) + config["epsilon"])
    return next_w, config


def adam(w, dw, config=None):
    if config is None:
        config = {}
    config.setdefault("learning_rate", 1e-3)
    config.setdefault("beta1", 0.9)
    config.setdefault("beta2", 0.999)
    config.setdefault("epsilon", 1e-8)
    config.setdefault("m", np.zeros_like(w))
    config.setdefault("v", np.zeros_like(w))
    config.setdefault("t", 0)
    config["t"] += 1
    config["m"] = config["beta1"] * config["m"] + (1 - config["beta1"]) * dw
    mt = config["m"] / (1 - config["beta1"] ** config["t"])
    config["v"] = config["beta2"] * config["v"] + (1 - config["beta2"]) * (dw ** 2)
    vt = config["v"] / (1 - config["beta2"] ** config["t"])
    next_w = w - config["learning_rate"] * mt / (np.sqrt(vt) + config["epsilon"])
    return next_w, config


def _update_steps(rule_config):
    w = np.linspace(-0.4, 0.6, num=20).reshape(4, 5)
    config = dict(rule_config)
    return [(w, np.linspace(-0.6, 0.4, num=20).reshape(4, 5) * (k + 1), config) for k in range(3)]


@case(calls=lambda: [(np.linspace(-1, 1, 6), np.ones(6), None), (np.ones(3, np.float32), np.ones(3, np.float32), {"learning_rate": 0.5})])
def sgd_updates_w_in_place_and_returns_it(w, dw, config):
    next_w, config = sgd(w, dw, config)
    return next_w is w, next_w, config


@case(steps=lambda: _update_steps({"learning_rate": 1e-3, "velocity": np.linspace(0.6, 0.9, num=20).reshape(4, 5)}))
def sgd_momentum_velocity_from_config_get(w, dw, config):
    next_w, config = sgd_momentum(w, dw, config)
    w[...] = next_w
    return next_w, sorted(config)


@case(steps=lambda: _update_steps({"learning_rate": 1e-2, "cache": np.linspace(0.6, 0.9, num=20).reshape(4, 5)}))
def rmsprop_cache_setdefault(w, dw, config):
    next_w, config = rmsprop(w, dw, config)
    w[...] = next_w
    return next_w, config["cache"]


@case(steps=lambda: _update_steps({"learning_rate": 1e-2, "m": np.linspace(0.6, 0.9, num=20).reshape(4, 5),
                                   "v": np.linspace(0.7, 0.5, num=20).reshape(4, 5), "t": 5}))
def adam_increments_t_in_config(w, dw, config):
    next_w, config = adam(w, dw, config)
    w[...] = next_w
    return next_w, config["t"], type(config["t"])


@case(calls=lambda: [(np.array([1.0, -2.0, 3.0]), lambda w: 2 * w, 5), (np.ones((2, 2), np.float32), lambda w: w - 0.5, 3)])
def every_rule_from_scratch_configs(w0, grad_fn, steps):
    results = {}
    for name, rule in (("sgd", sgd), ("sgd_momentum", sgd_momentum), ("rmsprop", rmsprop), ("adam", adam)):
        w = w0.copy()
        config = None
        for _ in range(steps):
            w, config = rule(w, grad_fn(w), config)
        results[name] = (w, w.dtype, sorted(config))
    return results


@case(calls=lambda: [({"W1": _normal(1, 3, 2), "b1": np.zeros(2)}, {"W1": _normal(2, 3, 2), "b1": np.ones(2)}, 0.1)])
def optim_configs_copied_per_parameter(params, grads, lr):
    optim_config = {"learning_rate": lr}
    optim_configs = {}
    for p in params:
        d = {k: v for k, v in optim_config.items()}
        optim_configs[p] = d
    for _ in range(2):
        for p, w in params.items():
            next_w, next_config = sgd_momentum(w, grads[p], optim_configs[p])
            params[p] = next_w
            optim_configs[p] = next_config
    return params, optim_configs["W1"] is not optim_configs["b1"], optim_config


@case(calls=lambda: [(np.ones(4), 0.5, 10), (np.arange(3.0), 0.95, 4)])
def lr_decay_python_float_per_epoch(w, lr_decay, epochs):
    config = {"learning_rate": 0.1}
    history = []
    for epoch in range(epochs):
        w, config = sgd(w, np.full_like(w, 0.5), config)
        config["learning_rate"] *= lr_decay
        history.append(config["learning_rate"])
    return w, history, type(config["learning_rate"])


# == a small Solver ===============================================================================

class TwoLayerNet:
    def __init__(self, input_dim=4, hidden_dim=6, num_classes=3, weight_scale=0.1, reg=0.0, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {
            "W1": weight_scale * rng.normal(size=(input_dim, hidden_dim)),
            "b1": np.zeros(hidden_dim),
            "W2": weight_scale * rng.normal(size=(hidden_dim, num_classes)),
            "b2": np.zeros(num_classes),
        }
        self.reg = reg

    def loss(self, X, y=None):
        W1, b1, W2, b2 = self.params["W1"], self.params["b1"], self.params["W2"], self.params["b2"]
        h = np.maximum(0, X.reshape(X.shape[0], -1) @ W1 + b1)
        scores = h @ W2 + b2
        if y is None:
            return scores
        N = X.shape[0]
        shifted = scores - scores.max(axis=1, keepdims=True)
        probs = np.exp(shifted)
        probs /= probs.sum(axis=1, keepdims=True)
        loss = -np.log(probs[np.arange(N), y]).mean() + 0.5 * self.reg * (np.sum(W1 ** 2) + np.sum(W2 ** 2))
        dscores = probs
        dscores[np.arange(N), y] -= 1
        dscores /= N
        grads = {"W2": h.T @ dscores + self.reg * W2, "b2": dscores.sum(axis=0)}
        dh = dscores @ W2.T
        dh = dh * (h > 0)
        grads["W1"] = X.reshape(N, -1).T @ dh + self.reg * W1
        grads["b1"] = dh.sum(axis=0)
        return loss, grads


class Solver:
    def __init__(self, model, data, update_rule=sgd, optim_config=None, lr_decay=1.0, batch_size=4,
                 num_epochs=2, num_train_samples=8, num_val_samples=None, print_every=3, verbose=True):
        self.model = model
        self.X_train, self.y_train = data["X_train"], data["y_train"]
        self.X_val, self.y_val = data["X_val"], data["y_val"]
        self.update_rule = update_rule
        self.optim_config = optim_config or {}
        self.lr_decay = lr_decay
        self.batch_size = batch_size
        self.num_epochs = num_epochs
        self.num_train_samples = num_train_samples
        self.num_val_samples = num_val_samples
        self.print_every = print_every
        self.verbose = verbose
        self._reset()

    def _reset(self):
        self.epoch = 0
        self.best_val_acc = 0
        self.best_params = {}
        self.loss_history = []
        self.train_acc_history = []
        self.val_acc_history = []
        self.optim_configs = {}
        for p in self.model.params:
            d = {k: v for k, v in self.optim_config.items()}
            self.optim_configs[p] = d

    def _step(self, it):
        num_train = self.X_train.shape[0]
        start = (it * self.batch_size) % num_train
        batch_mask = np.arange(start, start + self.batch_size) % num_train
        X_batch = self.X_train[batch_mask]
        y_batch = self.y_train[batch_mask]
        loss, grads = self.model.loss(X_batch, y_batch)
        self.loss_history.append(loss)
        for p, w in self.model.params.items():
            dw = grads[p]
            config = self.optim_configs[p]
            next_w, next_config = self.update_rule(w, dw, config)
            self.model.params[p] = next_w
            self.optim_configs[p] = next_config

    def check_accuracy(self, X, y, num_samples=None, batch_size=3):
        N = X.shape[0]
        if num_samples is not None and N > num_samples:
            mask = np.arange(N)[::2][:num_samples]
            N = num_samples
            X = X[mask]
            y = y[mask]
        num_batches = N // batch_size
        if N % batch_size != 0:
            num_batches += 1
        y_pred = []
        for i in range(num_batches):
            start = i * batch_size
            end = (i + 1) * batch_size
            scores = self.model.loss(X[start:end])
            y_pred.append(np.argmax(scores, axis=1))
        y_pred = np.hstack(y_pred)
        acc = np.mean(y_pred == y)
        return acc

    def train(self):
        num_train = self.X_train.shape[0]
        iterations_per_epoch = max(num_train // self.batch_size, 1)
        num_iterations = self.num_epochs * iterations_per_epoch
        for t in range(num_iterations):
            self._step(t)
            if self.verbose and t % self.print_every == 0:
                print("(Iteration %d / %d) loss: %f" % (t + 1, num_iterations, self.loss_history[-1]))
            epoch_end = (t + 1) % iterations_per_epoch == 0
            if epoch_end:
                self.epoch += 1
                for k in self.optim_configs:
                    self.optim_configs[k]["learning_rate"] *= self.lr_decay
            first_it = t == 0
            last_it = t == num_iterations - 1
            if first_it or last_it or epoch_end:
                train_acc = self.check_accuracy(self.X_train, self.y_train, num_samples=self.num_train_samples)
                val_acc = self.check_accuracy(self.X_val, self.y_val, num_samples=self.num_val_samples)
                self.train_acc_history.append(train_acc)
                self.val_acc_history.append(val_acc)
                if self.verbose:
                    print("(Epoch %d / %d) train acc: %f; val_acc: %f" % (self.epoch, self.num_epochs, train_acc, val_acc))
                if val_acc > self.best_val_acc:
                    self.best_val_acc = val_acc
                    self.best_params = {}
                    for k, v in self.model.params.items():
                        self.best_params[k] = v.copy()
        self.model.params = self.best_params


def _blobs(seed=0, n=12, d=4, k=3):
    r = _rng(seed)
    y = np.arange(n) % k
    X = r.normal(size=(n, d)) + 2.0 * np.eye(k, d)[y]
    return X, y


def _solver_data(seed=0):
    X, y = _blobs(seed, n=12)
    Xv, yv = _blobs(seed + 1, n=7)
    return {"X_train": X, "y_train": y, "X_val": Xv, "y_val": yv}


@case(calls=lambda: [(_solver_data(0), sgd, {"learning_rate": 0.5}, 0.9),
                     (_solver_data(3), sgd_momentum, {"learning_rate": 0.1}, 0.5),
                     (_solver_data(5), adam, {"learning_rate": 0.05}, 1.0)])
def solver_train_histories_and_best_params(data, update_rule, optim_config, lr_decay):
    model = TwoLayerNet(seed=1)
    solver = Solver(model, data, update_rule=update_rule, optim_config=optim_config, lr_decay=lr_decay)
    solver.train()
    return (solver.loss_history, solver.train_acc_history, solver.val_acc_history, solver.best_val_acc,
            model.params, solver.optim_configs["W1"]["learning_rate"], model.params is solver.best_params)


@case(calls=lambda: [(_solver_data(7), 5, 3), (_solver_data(8), None, 4)])
def solver_check_accuracy_batches_hstack(data, num_samples, batch_size):
    solver = Solver(TwoLayerNet(seed=2), data, verbose=False)
    return solver.check_accuracy(data["X_train"], data["y_train"], num_samples=num_samples, batch_size=batch_size)


def _solver_steps():
    solver = Solver(TwoLayerNet(seed=3), _solver_data(9), optim_config={"learning_rate": 0.2}, verbose=False)
    return [(solver, t) for t in range(4)]


@case(steps=_solver_steps)
def solver_step_mutates_model_params(solver, t):
    solver._step(t)
    return solver.loss_history[-1], solver.model.params["b2"]


# == numeric gradient checks ======================================================================

def eval_numerical_gradient(f, x, verbose=True, h=0.00001):
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        oldval = x[ix]
        x[ix] = oldval + h
        fxph = f(x)
        x[ix] = oldval - h
        fxmh = f(x)
        x[ix] = oldval
        grad[ix] = (fxph - fxmh) / (2 * h)
        if verbose:
            print(ix, grad[ix])
        it.iternext()
    return grad


def eval_numerical_gradient_array(f, x, df, h=1e-5):
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        oldval = x[ix]
        x[ix] = oldval + h
        pos = f(x).copy()
        x[ix] = oldval - h
        neg = f(x).copy()
        x[ix] = oldval
        grad[ix] = np.sum((pos - neg) * df) / (2 * h)
        it.iternext()
    return grad


def rel_error(x, y):
    return np.max(np.abs(x - y) / (np.maximum(1e-8, np.abs(x) + np.abs(y))))


@case(calls=lambda: [(_normal(10, 2, 3), _normal(11, 3, 2), _normal(12, 2), _normal(13, 2, 2))])
def affine_backward_vs_numeric_gradient_array(x, w, b, dout):
    dx_num = eval_numerical_gradient_array(lambda x: x @ w + b, x, dout)
    dw_num = eval_numerical_gradient_array(lambda w: x @ w + b, w, dout)
    db_num = eval_numerical_gradient_array(lambda b: x @ w + b, b, dout)
    dx, dw, db = dout @ w.T, x.T @ dout, dout.sum(axis=0)
    return dx_num, dw_num, db_num, rel_error(dx_num, dx) < 1e-7, rel_error(db_num, db)


@case(calls=lambda: [(_normal(14, 3, 2), np.array([0, 1, 1]))])
def softmax_loss_numeric_gradient_verbose(W, y):
    X = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 1.0], [0.3, 0.3, 0.3]])

    def loss(W):
        s = X @ W
        s = s - s.max(axis=1, keepdims=True)
        return np.mean(np.log(np.exp(s).sum(axis=1)) - s[np.arange(3), y])

    grad = eval_numerical_gradient(loss, W, verbose=True)
    return grad, W


@case(calls=lambda: [(_normal(15, 3, 4) + 1, np.array([1.0, 2.0, 0.5, -1.0]), np.zeros(4), _normal(16, 3, 4))])
def batchnorm_gradient_check_closure_over_dict(x, gamma, beta, dout):
    bn_param = {"mode": "train"}

    def fx(x):
        mu = x.mean(axis=0)
        var = x.var(axis=0)
        bn_param["calls"] = bn_param.get("calls", 0) + 1
        return gamma * (x - mu) / np.sqrt(var + 1e-5) + beta

    dx_num = eval_numerical_gradient_array(fx, x, dout)
    dgamma_num = eval_numerical_gradient_array(lambda g: g * (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5) + beta,
                                               gamma.copy(), dout)
    return dx_num, dgamma_num, bn_param["calls"]


@case(calls=lambda: [(_normal(17, 3, 4), 4, 0), (_normal(18, 2, 2, 2), 3, 1)])
def grad_check_sparse_python_random(x, num_checks, seed, h=1e-5):
    random.seed(seed)
    f = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    analytic_grad = np.cos(x) * x + np.sin(x)
    errors = []
    for i in range(num_checks):
        ix = tuple([random.randrange(m) for m in x.shape])
        oldval = x[ix]
        x[ix] = oldval + h
        fxph = f(x)
        x[ix] = oldval - h
        fxmh = f(x)
        x[ix] = oldval
        grad_numerical = (fxph - fxmh) / (2 * h)
        grad_analytic = analytic_grad[ix]
        rel = abs(grad_numerical - grad_analytic) / (abs(grad_numerical) + abs(grad_analytic))
        print("numerical: %f analytic: %f, relative error: %e" % (grad_numerical, grad_analytic, rel))
        errors.append(rel)
    return errors, ix


@case(calls=lambda: [(_normal(19, 2, 3), _normal(20, 2, 3)), (np.zeros((1, 2)), np.zeros((1, 2)))])
def rel_error_maximum_floor(x, y):
    return rel_error(x, y), rel_error(x, x + 1e-9), type(rel_error(x, y))


@case(calls=lambda: [(_normal(21, 3, 2),)])
def nditer_readwrite_with_context_doubles_in_place(x):
    with np.nditer(x, op_flags=["readwrite"]) as it:
        for v in it:
            v[...] = 2 * v
    return x


# == kNN and cross-validation =====================================================================

class KNearestNeighbor:
    def train(self, X, y):
        self.X_train = X
        self.y_train = y

    def predict(self, X, k=1, num_loops=0):
        if num_loops == 0:
            dists = self.compute_distances_no_loops(X)
        elif num_loops == 1:
            dists = self.compute_distances_one_loop(X)
        elif num_loops == 2:
            dists = self.compute_distances_two_loops(X)
        else:
            raise ValueError("Invalid value %d for num_loops" % num_loops)
        return self.predict_labels(dists, k=k)

    def compute_distances_two_loops(self, X):
        num_test = X.shape[0]
        num_train = self.X_train.shape[0]
        dists = np.zeros((num_test, num_train))
        for i in range(num_test):
            for j in range(num_train):
                dists[i, j] = np.sqrt(np.sum(np.square(X[i] - self.X_train[j])))
        return dists

    def compute_distances_one_loop(self, X):
        num_test = X.shape[0]
        num_train = self.X_train.shape[0]
        dists = np.zeros((num_test, num_train))
        for i in range(num_test):
            dists[i, :] = np.sqrt(np.sum(np.square(self.X_train - X[i]), axis=1))
        return dists

    def compute_distances_no_loops(self, X):
        dists = np.sqrt(-2 * X @ self.X_train.T + np.sum(X ** 2, axis=1, keepdims=True)
                        + np.sum(self.X_train ** 2, axis=1))
        return dists

    def predict_labels(self, dists, k=1):
        num_test = dists.shape[0]
        y_pred = np.zeros(num_test)
        for i in range(num_test):
            closest_y = self.y_train[np.argsort(dists[i])[:k]]
            y_pred[i] = np.bincount(closest_y).argmax()
        return y_pred


def _knn_data(seed=30, n_train=10, n_test=4, d=3):
    Xtr, ytr = _blobs(seed, n=n_train, d=d)
    Xte, _ = _blobs(seed + 1, n=n_test, d=d)
    return Xtr, ytr, Xte


@case(calls=lambda: [_knn_data(), _knn_data(32, n_train=6, n_test=2, d=5)])
def knn_distances_three_ways_frobenius(Xtr, ytr, Xte):
    clf = KNearestNeighbor()
    clf.train(Xtr, ytr)
    d2 = clf.compute_distances_two_loops(Xte)
    d1 = clf.compute_distances_one_loop(Xte)
    d0 = clf.compute_distances_no_loops(Xte)
    return d2, d1, d0, np.linalg.norm(d2 - d1, ord="fro"), np.linalg.norm(d2 - d0, ord="fro")


@case(calls=lambda: [(*_knn_data(34), 1, 0), (*_knn_data(36), 3, 1), (*_knn_data(38), 5, 2), (*_knn_data(40), 1, 3)])
def knn_predict_bincount_vote(Xtr, ytr, Xte, k, num_loops):
    clf = KNearestNeighbor()
    clf.train(Xtr, ytr)
    return clf.predict(Xte, k=k, num_loops=num_loops)


@case(calls=lambda: [(np.array([[0.0, 1.0, 1.0, 2.0], [3.0, 3.0, 0.5, 0.5]]), np.array([2, 0, 1, 1]), 2),
                     (np.array([[1.0, 1.0, 1.0]]), np.array([4, 2, 2]), 3)])
def knn_vote_ties_take_smallest_label(dists, y_train, k):
    y_pred = np.zeros(dists.shape[0])
    for i in range(dists.shape[0]):
        closest_y = y_train[np.argsort(dists[i])[:k]]
        y_pred[i] = np.bincount(closest_y).argmax()
    return y_pred, y_pred.dtype


@case(calls=lambda: [(*_blobs(42, n=15, d=2), (1, 3, 5), 3), (*_blobs(43, n=10, d=3), (1, 2), 4)])
def knn_cross_validation_array_split_folds(X_train, y_train, k_choices, num_folds):
    X_train_folds = np.array_split(X_train, num_folds)
    y_train_folds = np.array_split(y_train, num_folds)
    k_to_accuracies = {}
    for k in k_choices:
        for i in range(num_folds):
            X_tr = np.concatenate(X_train_folds[:i] + X_train_folds[i + 1:])
            y_tr = np.concatenate(y_train_folds[:i] + y_train_folds[i + 1:])
            clf = KNearestNeighbor()
            clf.train(X_tr, y_tr)
            y_pred = clf.predict(X_train_folds[i], k=k)
            acc = float(np.sum(y_pred == y_train_folds[i])) / len(y_train_folds[i])
            k_to_accuracies.setdefault(k, []).append(acc)
    for k in sorted(k_to_accuracies):
        print("k = %d, mean accuracy = %f" % (k, np.mean(k_to_accuracies[k])))
    best_k = max(k_to_accuracies, key=lambda k: np.mean(k_to_accuracies[k]))
    return k_to_accuracies, best_k, [len(f) for f in X_train_folds]


@case(calls=lambda: [(np.arange(10), 3), (np.arange(12.0).reshape(6, 2), 4), (np.arange(5), 5)])
def array_split_uneven_and_concatenate_back(x, n):
    folds = np.array_split(x, n)
    return folds, np.concatenate(folds), np.vstack(folds[:2]) if x.ndim == 2 else np.hstack(folds[::2])


@case(calls=lambda: [(_normal(44, 5, 3),), (_normal(45, 4, 6, dtype=np.float32),)])
def no_loop_distances_negative_rounding_clipped(X):
    sq = np.sum(X ** 2, axis=1)
    d2 = sq[:, None] - 2 * X @ X.T + sq[None, :]
    d2_clipped = np.maximum(d2, 0)
    return np.sqrt(d2_clipped), np.diag(d2), (d2 < 0).sum()


# == "from scratch" layer classes =================================================================

class Layer_Dense:
    def __init__(self, n_inputs, n_neurons, seed=0, weight_regularizer_l1=0.0, weight_regularizer_l2=0.0):
        self.weights = 0.1 * np.random.default_rng(seed).normal(size=(n_inputs, n_neurons))
        self.biases = np.zeros((1, n_neurons))
        self.weight_regularizer_l1 = weight_regularizer_l1
        self.weight_regularizer_l2 = weight_regularizer_l2

    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.dot(inputs, self.weights) + self.biases

    def backward(self, dvalues):
        self.dweights = np.dot(self.inputs.T, dvalues)
        self.dbiases = np.sum(dvalues, axis=0, keepdims=True)
        if self.weight_regularizer_l1 > 0:
            dL1 = np.ones_like(self.weights)
            dL1[self.weights < 0] = -1
            self.dweights += self.weight_regularizer_l1 * dL1
        if self.weight_regularizer_l2 > 0:
            self.dweights += 2 * self.weight_regularizer_l2 * self.weights
        self.dinputs = np.dot(dvalues, self.weights.T)


class Activation_ReLU:
    def forward(self, inputs):
        self.inputs = inputs
        self.output = np.maximum(0, inputs)

    def backward(self, dvalues):
        self.dinputs = dvalues.copy()
        self.dinputs[self.inputs <= 0] = 0


class Activation_Softmax:
    def forward(self, inputs):
        self.inputs = inputs
        exp_values = np.exp(inputs - np.max(inputs, axis=1, keepdims=True))
        probabilities = exp_values / np.sum(exp_values, axis=1, keepdims=True)
        self.output = probabilities

    def backward(self, dvalues):
        self.dinputs = np.empty_like(dvalues)
        for index, (single_output, single_dvalues) in enumerate(zip(self.output, dvalues)):
            single_output = single_output.reshape(-1, 1)
            jacobian_matrix = np.diagflat(single_output) - np.dot(single_output, single_output.T)
            self.dinputs[index] = np.dot(jacobian_matrix, single_dvalues)


class Activation_Sigmoid:
    def forward(self, inputs):
        self.inputs = inputs
        self.output = 1 / (1 + np.exp(-inputs))

    def backward(self, dvalues):
        self.dinputs = dvalues * (1 - self.output) * self.output


class Loss:
    def regularization_loss(self, layer):
        regularization_loss = 0
        if layer.weight_regularizer_l1 > 0:
            regularization_loss += layer.weight_regularizer_l1 * np.sum(np.abs(layer.weights))
        if layer.weight_regularizer_l2 > 0:
            regularization_loss += layer.weight_regularizer_l2 * np.sum(layer.weights * layer.weights)
        return regularization_loss

    def calculate(self, output, y):
        sample_losses = self.forward(output, y)
        data_loss = np.mean(sample_losses)
        return data_loss


class Loss_CategoricalCrossentropy(Loss):
    def forward(self, y_pred, y_true):
        samples = len(y_pred)
        y_pred_clipped = np.clip(y_pred, 1e-7, 1 - 1e-7)
        if len(y_true.shape) == 1:
            correct_confidences = y_pred_clipped[range(samples), y_true]
        elif len(y_true.shape) == 2:
            correct_confidences = np.sum(y_pred_clipped * y_true, axis=1)
        return -np.log(correct_confidences)

    def backward(self, dvalues, y_true):
        samples = len(dvalues)
        labels = len(dvalues[0])
        if len(y_true.shape) == 1:
            y_true = np.eye(labels)[y_true]
        self.dinputs = -y_true / dvalues
        self.dinputs = self.dinputs / samples


class Activation_Softmax_Loss_CategoricalCrossentropy:
    def __init__(self):
        self.activation = Activation_Softmax()
        self.loss = Loss_CategoricalCrossentropy()

    def forward(self, inputs, y_true):
        self.activation.forward(inputs)
        self.output = self.activation.output
        return self.loss.calculate(self.output, y_true)

    def backward(self, dvalues, y_true):
        samples = len(dvalues)
        if len(y_true.shape) == 2:
            y_true = np.argmax(y_true, axis=1)
        self.dinputs = dvalues.copy()
        self.dinputs[range(samples), y_true] -= 1
        self.dinputs = self.dinputs / samples


class Optimizer_SGD:
    def __init__(self, learning_rate=1.0, decay=0.0, momentum=0.0):
        self.learning_rate = learning_rate
        self.current_learning_rate = learning_rate
        self.decay = decay
        self.iterations = 0
        self.momentum = momentum

    def pre_update_params(self):
        if self.decay:
            self.current_learning_rate = self.learning_rate * (1.0 / (1.0 + self.decay * self.iterations))

    def update_params(self, layer):
        if self.momentum:
            if not hasattr(layer, "weight_momentums"):
                layer.weight_momentums = np.zeros_like(layer.weights)
                layer.bias_momentums = np.zeros_like(layer.biases)
            weight_updates = self.momentum * layer.weight_momentums - self.current_learning_rate * layer.dweights
            layer.weight_momentums = weight_updates
            bias_updates = self.momentum * layer.bias_momentums - self.current_learning_rate * layer.dbiases
            layer.bias_momentums = bias_updates
        else:
            weight_updates = -self.current_learning_rate * layer.dweights
            bias_updates = -self.current_learning_rate * layer.dbiases
        layer.weights += weight_updates
        layer.biases += bias_updates

    def post_update_params(self):
        self.iterations += 1


class Optimizer_Adagrad(Optimizer_SGD):
    def __init__(self, learning_rate=1.0, decay=0.0, epsilon=1e-7):
        super().__init__(learning_rate, decay)
        self.epsilon = epsilon

    def update_params(self, layer):
        if not hasattr(layer, "weight_cache"):
            layer.weight_cache = np.zeros_like(layer.weights)
            layer.bias_cache = np.zeros_like(layer.biases)
        layer.weight_cache += layer.dweights ** 2
        layer.bias_cache += layer.dbiases ** 2
        layer.weights += -self.current_learning_rate * layer.dweights / (np.sqrt(layer.weight_cache) + self.epsilon)
        layer.biases += -self.current_learning_rate * layer.dbiases / (np.sqrt(layer.bias_cache) + self.epsilon)


class Optimizer_RMSprop(Optimizer_SGD):
    def __init__(self, learning_rate=0.001, decay=0.0, epsilon=1e-7, rho=0.9):
        super().__init__(learning_rate, decay)
        self.epsilon = epsilon
        self.rho = rho

    def update_params(self, layer):
        if not hasattr(layer, "weight_cache"):
            layer.weight_cache = np.zeros_like(layer.weights)
            layer.bias_cache = np.zeros_like(layer.biases)
        layer.weight_cache = self.rho * layer.weight_cache + (1 - self.rho) * layer.dweights ** 2
        layer.bias_cache = self.rho * layer.bias_cache + (1 - self.rho) * layer.dbiases ** 2
        layer.weights += -self.current_learning_rate * layer.dweights / (np.sqrt(layer.weight_cache) + self.epsilon)
        layer.biases += -self.current_learning_rate * layer.dbiases / (np.sqrt(layer.bias_cache) + self.epsilon)


class Optimizer_Adam(Optimizer_SGD):
    def __init__(self, learning_rate=0.001, decay=0.0, epsilon=1e-7, beta_1=0.9, beta_2=0.999):
        super().__init__(learning_rate, decay)
        self.epsilon = epsilon
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    def update_params(self, layer):
        if not hasattr(layer, "weight_cache"):
            layer.weight_momentums = np.zeros_like(layer.weights)
            layer.weight_cache = np.zeros_like(layer.weights)
            layer.bias_momentums = np.zeros_like(layer.biases)
            layer.bias_cache = np.zeros_like(layer.biases)
        layer.weight_momentums = self.beta_1 * layer.weight_momentums + (1 - self.beta_1) * layer.dweights
        layer.bias_momentums = self.beta_1 * layer.bias_momentums + (1 - self.beta_1) * layer.dbiases
        weight_momentums_corrected = layer.weight_momentums / (1 - self.beta_1 ** (self.iterations + 1))
        bias_momentums_corrected = layer.bias_momentums / (1 - self.beta_1 ** (self.iterations + 1))
        layer.weight_cache = self.beta_2 * layer.weight_cache + (1 - self.beta_2) * layer.dweights ** 2
        layer.bias_cache = self.beta_2 * layer.bias_cache + (1 - self.beta_2) * layer.dbiases ** 2
        weight_cache_corrected = layer.weight_cache / (1 - self.beta_2 ** (self.iterations + 1))
        bias_cache_corrected = layer.bias_cache / (1 - self.beta_2 ** (self.iterations + 1))
        layer.weights += -self.current_learning_rate * weight_momentums_corrected / (np.sqrt(weight_cache_corrected) + self.epsilon)
        layer.biases += -self.current_learning_rate * bias_momentums_corrected / (np.sqrt(bias_cache_corrected) + self.epsilon)


def _spiral(seed=50, samples=6, classes=3):
    r = _rng(seed)
    X = np.zeros((samples * classes, 2))
    y = np.zeros(samples * classes, dtype="uint8")
    for class_number in range(classes):
        ix = range(samples * class_number, samples * (class_number + 1))
        radius = np.linspace(0.0, 1, samples)
        t = np.linspace(class_number * 4, (class_number + 1) * 4, samples) + r.normal(size=samples) * 0.2
        X[ix] = np.c_[radius * np.sin(t * 2.5), radius * np.cos(t * 2.5)]
        y[ix] = class_number
    return X, y


@case(calls=lambda: [_spiral(), _spiral(51, samples=4)])
def spiral_data_with_range_index_and_c_(X, y):
    ix = range(2, 5)
    X2 = X.copy()
    X2[ix] = np.c_[X[ix, 0] * 2, X[ix, 1] - 1]
    return X2, y[ix], y.dtype


class _Net:
    """Dense -> ReLU -> Dense -> softmax+cross-entropy, with an optimizer."""

    def __init__(self, optimizer, l2=0.0, l1=0.0, hidden=8):
        self.dense1 = Layer_Dense(2, hidden, seed=1, weight_regularizer_l2=l2, weight_regularizer_l1=l1)
        self.activation1 = Activation_ReLU()
        self.dense2 = Layer_Dense(hidden, 3, seed=2)
        self.loss_activation = Activation_Softmax_Loss_CategoricalCrossentropy()
        self.optimizer = optimizer


def train_epoch_nnfs(net, X, y, verbose=False, epoch=0):
    net.dense1.forward(X)
    net.activation1.forward(net.dense1.output)
    net.dense2.forward(net.activation1.output)
    data_loss = net.loss_activation.forward(net.dense2.output, y)
    regularization_loss = net.loss_activation.loss.regularization_loss(net.dense1) + \
        net.loss_activation.loss.regularization_loss(net.dense2)
    loss = data_loss + regularization_loss
    predictions = np.argmax(net.loss_activation.output, axis=1)
    if len(y.shape) == 2:
        y = np.argmax(y, axis=1)
    accuracy = np.mean(predictions == y)
    if verbose and not epoch % 2:
        print(f"epoch: {epoch}, acc: {accuracy:.3f}, loss: {loss:.3f} (data_loss: {data_loss:.3f}, "
              f"reg_loss: {regularization_loss:.3f}), lr: {net.optimizer.current_learning_rate}")
    net.loss_activation.backward(net.loss_activation.output, y)
    net.dense2.backward(net.loss_activation.dinputs)
    net.activation1.backward(net.dense2.dinputs)
    net.dense1.backward(net.activation1.dinputs)
    net.optimizer.pre_update_params()
    net.optimizer.update_params(net.dense1)
    net.optimizer.update_params(net.dense2)
    net.optimizer.post_update_params()
    return loss, accuracy


def _nnfs_steps(make_optimizer, l2=0.0, l1=0.0, one_hot=False):
    X, y = _spiral(52)
    if one_hot:
        y = np.eye(3, dtype=int)[y]
    net = _Net(make_optimizer(), l2=l2, l1=l1)
    return [(net, X, y, True, epoch) for epoch in range(3)]


@case(steps=lambda: _nnfs_steps(lambda: Optimizer_SGD(learning_rate=1.0, decay=1e-3, momentum=0.9)))
def nnfs_sgd_momentum_decay_epochs(net, X, y, verbose, epoch):
    return train_epoch_nnfs(net, X, y, verbose, epoch)


@case(steps=lambda: _nnfs_steps(lambda: Optimizer_SGD(learning_rate=0.5), one_hot=True))
def nnfs_plain_sgd_one_hot_targets(net, X, y, verbose, epoch):
    return train_epoch_nnfs(net, X, y, verbose, epoch)


@case(steps=lambda: _nnfs_steps(lambda: Optimizer_Adagrad(decay=1e-4)))
def nnfs_adagrad_hasattr_cache(net, X, y, verbose, epoch):
    return train_epoch_nnfs(net, X, y, verbose, epoch)


@case(steps=lambda: _nnfs_steps(lambda: Optimizer_RMSprop(learning_rate=0.02, decay=1e-5, rho=0.999)))
def nnfs_rmsprop(net, X, y, verbose, epoch):
    return train_epoch_nnfs(net, X, y, verbose, epoch)


@case(steps=lambda: _nnfs_steps(lambda: Optimizer_Adam(learning_rate=0.05, decay=5e-7), l2=5e-4, l1=1e-4))
def nnfs_adam_with_l1_l2_regularisation(net, X, y, verbose, epoch):
    return train_epoch_nnfs(net, X, y, verbose, epoch)


@case(calls=lambda: [(_normal(53, 3, 4), np.array([0, 3, 1])), (_normal(54, 2, 3, dtype=np.float32), np.array([2, 2]))])
def softmax_jacobian_backward_vs_combined(inputs, y):
    softmax = Activation_Softmax()
    softmax.forward(inputs)
    combined = Activation_Softmax_Loss_CategoricalCrossentropy()
    combined.forward(inputs, y)
    combined.backward(combined.output, y)
    loss = Loss_CategoricalCrossentropy()
    loss.backward(softmax.output, y)
    softmax.backward(loss.dinputs)
    return combined.dinputs, softmax.dinputs, np.abs(combined.dinputs - softmax.dinputs).max() < 1e-6


@case(calls=lambda: [(_normal(55, 4, 2), np.array([[0], [1], [1], [0]]))])
def sigmoid_output_binary_crossentropy_layer(X, y):
    dense = Layer_Dense(2, 1, seed=5)
    act = Activation_Sigmoid()
    dense.forward(X)
    act.forward(dense.output)
    y_pred_clipped = np.clip(act.output, 1e-7, 1 - 1e-7)
    loss = np.mean(-(y * np.log(y_pred_clipped) + (1 - y) * np.log(1 - y_pred_clipped)))
    dvalues = -(y / y_pred_clipped - (1 - y) / (1 - y_pred_clipped)) / len(y)
    act.backward(dvalues)
    dense.backward(act.dinputs)
    predictions = (act.output > 0.5) * 1
    return loss, dense.dweights, dense.dbiases, predictions, np.mean(predictions == y)


@case(calls=lambda: [(_normal(56, 3, 2), 0.5), (_normal(57, 2, 2), 0.0)])
def layer_attributes_set_by_forward_and_backward(X, l2):
    layer = Layer_Dense(2, 3, seed=6, weight_regularizer_l2=l2)
    layer.forward(X)
    layer.backward(np.ones_like(layer.output))
    return sorted(vars(layer)), layer.inputs is X, layer.dweights, layer.dinputs


# == d2l in NumPy ================================================================================

def d2l_sgd(params, grads, lr, batch_size):
    for param, grad in zip(params, grads):
        param[:] = param - lr * grad / batch_size


def d2l_squared_loss(y_hat, y):
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


@case(calls=lambda: [(_normal(60, 10, 2), np.array([2.0, -3.4]), 4.2, 3, 0.03)])
def d2l_linreg_minibatches_param_slice_assign(X, true_w, true_b, batch_size, lr):
    y = X @ true_w + true_b
    w = np.zeros(2)
    b = np.zeros(1)
    params = [w, b]
    losses = []
    for epoch in range(2):
        for i in range(0, len(X), batch_size):
            Xb, yb = X[i:i + batch_size], y[i:i + batch_size]
            err = Xb @ w + b - yb
            grads = [Xb.T @ err, np.array([err.sum()])]
            d2l_sgd(params, grads, lr, batch_size)
        losses.append(float(d2l_squared_loss(X @ w + b, y).mean()))
    return w, b, params[0] is w, losses


@case(calls=lambda: [(_normal(61, 4, 5), _normal(62, 5, 3, scale=0.1), np.array([2, 0, 1, 1]))])
def d2l_mlp_relu_maximum_and_cross_entropy(X, W, y):
    H = np.maximum(X @ W, 0)
    y_hat = np.exp(H) / np.exp(H).sum(1, keepdims=True)
    l = -np.log(y_hat[range(len(y_hat)), y])
    correct = float((y_hat.argmax(axis=1).astype(y.dtype) == y).sum())
    return l, correct / len(y), type(correct)


# == initialisation, sampling, bookkeeping ========================================================

@case(calls=lambda: [(4, 5, 3, 1e-2, 0), (3, 2, 2, 1.0, 7)])
def init_weights_legacy_randn_seeded(input_dim, hidden_dim, num_classes, std, seed):
    np.random.seed(seed)
    params = {}
    params["W1"] = std * np.random.randn(input_dim, hidden_dim)
    params["b1"] = np.zeros(hidden_dim)
    params["W2"] = np.random.randn(hidden_dim, num_classes) / np.sqrt(hidden_dim / 2)
    params["b2"] = np.zeros(num_classes)
    return params, {k: v.shape for k, v in params.items()}


@case(calls=lambda: [(np.arange(20.0).reshape(10, 2), np.arange(10) % 3, 4, 1),
                     (np.arange(12.0).reshape(6, 2), np.arange(6) % 2, 6, 2)])
def minibatch_random_choice_and_permutation(X, y, batch_size, seed):
    np.random.seed(seed)
    batch_mask = np.random.choice(X.shape[0], batch_size)
    X_batch, y_batch = X[batch_mask], y[batch_mask]
    perm = np.random.permutation(X.shape[0])
    return X_batch, y_batch, X[perm][:batch_size], np.random.rand()


@case(calls=lambda: [(_normal(70, 4, 3),), (_normal(71, 3, 3),)])
def softmax_without_keepdims_broadcast_error(scores):
    shifted = scores - np.max(scores, axis=1)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=1)


@case(calls=lambda: [(np.array([0, 2, 1, 1, 0]), np.array([0, 2, 2, 1, 1])), (np.array([1.0, 0.0]), np.array([1, 0]))])
def got_correct_accuracy_report(y_test_pred, y_test):
    num_correct = np.sum(y_test_pred == y_test)
    num_test = y_test.shape[0]
    accuracy = float(num_correct) / num_test
    print("Got %d / %d correct => accuracy: %f" % (num_correct, num_test, accuracy))
    return num_correct, accuracy, type(num_correct)


@case(calls=lambda: [((1e-3, 1e-2), (0.1, 0.5), _blobs(72, n=9, d=2))])
def hyperparameter_grid_results_by_tuple_key(learning_rates, regs, data):
    X, y = data
    results = {}
    best_val = -1
    best_w = None
    for lr in learning_rates:
        for reg in regs:
            W = np.zeros((X.shape[1], 3))
            for _ in range(3):
                scores = X @ W
                probs = np.exp(scores - scores.max(axis=1, keepdims=True))
                probs /= probs.sum(axis=1, keepdims=True)
                probs[np.arange(len(y)), y] -= 1
                W -= lr * (X.T @ probs / len(y) + reg * W)
            acc = np.mean(np.argmax(X @ W, axis=1) == y)
            results[(lr, reg)] = (acc, acc / 2)
            if acc > best_val:
                best_val = acc
                best_w = W
    for lr, reg in sorted(results):
        train_accuracy, val_accuracy = results[(lr, reg)]
        print("lr %e reg %e train accuracy: %f val accuracy: %f" % (lr, reg, train_accuracy, val_accuracy))
    return best_val, best_w, sorted(results)


@case(calls=lambda: [([],), ([np.array([1, 2]), np.array([0])],)])
def hstack_of_batches_empty_raises(y_pred):
    return np.hstack(y_pred)


@case(calls=lambda: [(np.array([-1.0, 0.0, 1e-6, 2.0]), 1e-5)])
def relu_gradient_check_at_the_kink(x, h):
    f = lambda x: np.maximum(0, x)  # noqa: E731
    num = (f(x + h) - f(x - h)) / (2 * h)
    analytic = (x > 0).astype(x.dtype)
    return num, analytic, rel_error(num, analytic)


@case(calls=lambda: [(_normal(73, 5, 4), 3), (_normal(74, 6, 2), 4)])
def xavier_and_he_init_scales(X, fan_out):
    fan_in = X.shape[1]
    rng = np.random.default_rng(fan_out)
    W_xavier = rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)
    W_he = rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)
    h1 = np.tanh(X @ W_xavier)
    h2 = np.maximum(0, X @ W_he)
    return h1.std(), h2.mean(), (h2 > 0).mean(), W_xavier.dtype


def _loss_history_steps():
    state = {"loss_history": [], "W": np.linspace(-1, 1, 6).reshape(3, 2)}
    X = np.arange(6.0).reshape(2, 3) / 5
    return [(state, X, 0.5, it) for it in range(4)]


@case(steps=_loss_history_steps)
def verbose_loss_history_every_n_iterations(state, X, lr, it, print_every=2):
    W = state["W"]
    loss = np.sum((X @ W) ** 2) / X.shape[0]
    dW = 2 * X.T @ (X @ W) / X.shape[0]
    state["W"] = W - lr * dW
    state["loss_history"].append(loss)
    if it % print_every == 0:
        print("iteration %d / %d: loss %f" % (it, 4, loss))
    return loss


# == the tests ===================================================================================

@pytest.mark.parametrize("c", case.params())
def test_corpus(c):
    c.check()


@pytest.mark.skipif(_setting() == "untiered", reason="OpenVINO runs every graph: within tolerance")
@pytest.mark.parametrize("c", case.params())
def test_corpus_bitwise(c):
    check_bitwise(c)
