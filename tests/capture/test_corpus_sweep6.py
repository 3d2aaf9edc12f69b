"""Differential corpus, sixth fidelity sweep (task HD): scientific-computing
cookbook code (finite differences, explicit ODE integrators, Jacobi and
Gauss-Seidel iterations, stencils, quadrature, Horner, moving averages, Kalman
filters, image ops by slicing and padding, histogram equalisation, root
finding and fixed-point loops), ML-from-scratch code (k-means, PCA by eigh and
svd, naive Bayes, logistic and softmax regression epochs, decision stumps,
kNN, group norm, Adam/RMSProp on dicts of arrays, seeded dropout, im2col and
col2im) and the idioms around them: in-place ops on arguments, ``out=``,
``np.add.at``, mutated dicts and lists of arrays, NEP 50 promotion, integer
overflow, division by zero, NumPy scalar vs Python scalar vs 0-d results,
early returns on data and ``while`` loops to convergence.

Each case runs natively and jitted (``corpus.Case.check``: types, values,
mutations, aliasing, exceptions), most with several inputs through one code
cache.  Under the cpu and default settings every case is also compared
*bitwise* (``test_corpus_bitwise``): float bits with signed zeros (NaNs equal
to NaNs), dtypes, Python types, shapes, the contiguity and writeable flags of
returned arrays, and the arguments after each call.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import capture
import frame

from .bitwise import check_bitwise
from .corpus import BACKEND, Corpus, _setting

case = Corpus()

# what this sweep found and did not fix (strict xfails)
WARNING_LOCATION = (
    "NumPy's RuntimeWarnings of compiled ops are not the user's: the cpu executable warns from "
    "'<frame cpu executable ...>', the reference kernels from frame/ops/elementwise.py, natively "
    "from the user's line (docs/capture.md, floating-point errors)")
# cases whose values are NumPy's but whose bitwise comparison (flags included) is not
BITWISE_XFAIL: dict[str, str] = {}


def _rng(seed):
    return np.random.default_rng(seed)


def _grid(n=9, seed=0):
    return _rng(seed).uniform(-1, 1, (n, n))


# == finite differences and stencils =================================================================

@case(calls=lambda: [(np.sin(np.linspace(0, 3, 11)), 0.3), (np.cos(np.linspace(0, 1, 7)), 1 / 6),
                     (np.arange(6.0) ** 2, 1.0)])
def central_difference_with_one_sided_ends(f, h):
    d = np.empty_like(f)
    d[1:-1] = (f[2:] - f[:-2]) / (2 * h)
    d[0] = (-3 * f[0] + 4 * f[1] - f[2]) / (2 * h)
    d[-1] = (3 * f[-1] - 4 * f[-2] + f[-3]) / (2 * h)
    return d


@case(calls=lambda: [(np.linspace(0, 1, 8) ** 3, 0.1), (_rng(1).normal(size=12), 0.5)])
def periodic_laplacian_with_roll(u, dx):
    return (np.roll(u, -1) - 2 * u + np.roll(u, 1)) / dx**2


@case(calls=lambda: [(np.exp(-np.linspace(-2, 2, 15) ** 2), 0.4, 10),
                     (np.r_[np.zeros(4), np.ones(4), np.zeros(4)], 0.25, 6)])
def heat_equation_explicit_in_place(u, r, steps):
    u = u.copy()
    for _ in range(steps):
        u[1:-1] += r * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(calls=lambda: [(_grid(8), 1e-3), (_grid(6, seed=3), 1e-6)])
def jacobi_poisson_until_converged(f, tol):
    u = np.zeros_like(f)
    h2 = (1.0 / (f.shape[0] - 1)) ** 2
    it = 0
    while True:
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                  - h2 * f[1:-1, 1:-1])
        diff = np.max(np.abs(new - u))
        u = new
        it += 1
        if diff < tol or it >= 200:
            break
    return u, it, diff


@case(calls=lambda: [(np.full(6, 2.0), 4), (np.linspace(1, 2, 5), 3)])
def gauss_seidel_1d_python_index_loop(b, sweeps):
    n = b.shape[0]
    x = np.zeros(n)
    for _ in range(sweeps):
        for i in range(n):
            left = x[i - 1] if i > 0 else 0.0
            right = x[i + 1] if i < n - 1 else 0.0
            x[i] = (b[i] + left + right) / 4.0
    return x


@case(lambda: (_rng(2).uniform(0, 255, (6, 7)),))
def box_blur_with_edge_padding(img):
    p = np.pad(img, 1, mode="edge")
    out = np.zeros_like(img)
    for dy in range(3):
        for dx in range(3):
            out += p[dy:dy + img.shape[0], dx:dx + img.shape[1]]
    return out / 9


@case(calls=lambda: [(_rng(3).uniform(0, 1, (6, 6)),), (np.eye(5),)])
def sobel_magnitude_reflect_pad(img):
    p = np.pad(img, 1, mode="reflect")
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    return np.hypot(gx, gy), np.arctan2(gy, gx)


@case(calls=lambda: [(_rng(4).integers(0, 2, (6, 6)).astype(np.uint8),),
                     (np.eye(5, dtype=np.uint8),)])
def game_of_life_step_with_roll(board):
    n = sum(np.roll(np.roll(board, dy, 0), dx, 1)
            for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0))
    alive = (n == 3) | ((board == 1) & (n == 2))
    return alive.astype(np.uint8), n.dtype


@case(lambda: (np.arange(12.0).reshape(3, 4),))
def image_flips_and_rotations_are_views(img):
    return np.flipud(img), np.fliplr(img), np.rot90(img), img.T, img[::-1, ::2]


@case(calls=lambda: [(_rng(5).integers(0, 200, (5, 6)).astype(np.uint8),),
                     (np.full((3, 3), 7, np.uint8),)])
def histogram_equalisation_uint8(img):
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = hist.cumsum()
    nz = cdf[cdf > 0]
    denom = cdf[-1] - nz.min()
    if denom == 0:
        return img.copy(), 0
    lut = np.round((cdf - nz.min()) * 255.0 / denom)
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    return lut[img], int(denom)


@case(lambda: (_rng(6).uniform(0, 1, (4, 5)), np.array([0.5, 1.7, 3.2]), np.array([0.25, 2.9, 1.0])))
def bilinear_sample_with_floor_and_clip(img, ys, xs):
    y0 = np.clip(np.floor(ys).astype(int), 0, img.shape[0] - 2)
    x0 = np.clip(np.floor(xs).astype(int), 0, img.shape[1] - 2)
    wy, wx = ys - y0, xs - x0
    top = img[y0, x0] * (1 - wx) + img[y0, x0 + 1] * wx
    bot = img[y0 + 1, x0] * (1 - wx) + img[y0 + 1, x0 + 1] * wx
    return top * (1 - wy) + bot * wy


# == quadrature, polynomials, averages ==============================================================

@case(calls=lambda: [(np.linspace(0, 1, 9), np.linspace(0, 1, 9) ** 2),
                     (np.array([0.0, 0.1, 0.5, 2.0]), np.array([1.0, -1.0, 2.0, 0.5]))])
def cumulative_trapezoid_with_initial_zero(x, y):
    steps = (y[1:] + y[:-1]) / 2 * np.diff(x)
    return np.concatenate(([0.0], np.cumsum(steps))), np.trapezoid(y, x)


@case(calls=lambda: [(np.sin(np.linspace(0, np.pi, 9)), np.pi / 8), (np.linspace(0, 1, 5) ** 4, 0.25)])
def simpson_rule_by_strided_sums(y, h):
    return h / 3 * (y[0] + 4 * y[1:-1:2].sum() + 2 * y[2:-1:2].sum() + y[-1])


@case(calls=lambda: [([1.0, -2.0, 0.5, 3.0], np.linspace(-1, 1, 5)),
                     ([2, 0, 1], np.arange(4, dtype=np.float32)),
                     ([1, 2, 3], np.arange(3))])
def horner_python_loop(coeffs, x):
    result = np.zeros_like(x)
    for c in coeffs:
        result = result * x + c
    return result, np.polyval(coeffs, x)


@case(lambda: (np.array([3.0, -1.0, 0.5, 2.0]), np.float64(0.75)))
def horner_scalar_and_derivative(p, x0):
    val, der = 0.0, 0.0
    for c in p:
        der = der * x0 + val
        val = val * x0 + c
    return val, der, np.polyval(np.polyder(p), x0)


@case(calls=lambda: [(np.arange(10.0), 3), (np.arange(8), 4), (_rng(7).normal(size=9).astype(np.float32), 2)])
def moving_average_by_cumsum(x, w):
    cs = np.cumsum(np.insert(x, 0, 0))
    return (cs[w:] - cs[:-w]) / w, np.convolve(x, np.ones(w) / w, mode="valid")


@case(calls=lambda: [(_rng(8).normal(size=10), 0.3), (np.ones(4, np.float32), 0.5)])
def exponential_moving_average_loop(x, alpha):
    out = np.empty_like(x)
    s = x[0]
    for i in range(x.shape[0]):
        s = alpha * x[i] + (1 - alpha) * s
        out[i] = s
    return out, s


@case(lambda: (np.linspace(0, 2, 7), np.array([0.0, 0.5, 1.0, 1.5, 2.0]), np.array([1.0, 3.0, 2.0, 0.0, -1.0])))
def interp_and_gradient_nonuniform(xq, xp, fp):
    return np.interp(xq, xp, fp), np.interp(xq, xp, fp, left=np.nan, right=-0.0), np.gradient(fp, xp)


# == ODE integrators =============================================================================

@case(calls=lambda: [(np.array([1.0, 0.5]), 0.1, 20), (np.array([2.0, 0.0]), 0.05, 8)])
def rk4_harmonic_oscillator(y0, dt, n):
    def f(y):
        return np.array([y[1], -y[0]])

    y = y0.copy()
    traj = [y]
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + dt / 2 * k1)
        k3 = f(y + dt / 2 * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        traj.append(y)
    return np.array(traj)


@case(calls=lambda: [(10.0, 5.0, 0.01, 30), (4.0, 2.0, 0.02, 12)])
def euler_lotka_volterra_python_floats(prey, pred, dt, n):
    a, b, c, d = 1.1, 0.4, 0.4, 0.1
    xs = np.empty(n + 1)
    ys = np.empty(n + 1)
    xs[0], ys[0] = prey, pred
    for i in range(n):
        xs[i + 1] = xs[i] + dt * (a * xs[i] - b * xs[i] * ys[i])
        ys[i + 1] = ys[i] + dt * (d * xs[i] * ys[i] - c * ys[i])
    return xs, ys


@case(calls=lambda: [(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.5]]), np.zeros((3, 2)), 0.01, 5),
                     (np.array([[0.0, 0.0], [2.0, 1.0]]), np.array([[0.0, 0.1], [0.0, -0.1]]), 0.05, 3)])
def velocity_verlet_nbody(pos, vel, dt, steps):
    def accel(p):
        d = p[None, :, :] - p[:, None, :]
        r2 = (d ** 2).sum(-1) + 1e-3
        np.fill_diagonal(r2, np.inf)
        return (d / r2[..., None] ** 1.5).sum(1)

    a = accel(pos)
    for _ in range(steps):
        pos = pos + vel * dt + 0.5 * a * dt**2
        a_new = accel(pos)
        vel += 0.5 * (a + a_new) * dt
        a = a_new
    return pos, vel


@case(calls=lambda: [(3.7, 0.2, 12), (2.5, 0.9, 6)])
def logistic_map_fill_preallocated(r, x0, n):
    x = np.empty(n)
    x[0] = x0
    for i in range(n - 1):
        x[i + 1] = r * x[i] * (1 - x[i])
    return x, x.mean(), float(x[-1])


# == iterations to convergence ===================================================================

@case(calls=lambda: [(np.array([2.0, 9.0, 0.5]),), (np.array([16.0]),)])
def newton_sqrt_while_not_close(a):
    x = a.copy()
    n = 0
    while np.any(np.abs(x * x - a) > 1e-12 * a):
        x = 0.5 * (x + a / x)
        n += 1
    return x, n


@case(calls=lambda: [(1.0, 2.0), (0.0, 1.0)])
def bisection_on_numpy_function(lo, hi):
    f = lambda t: np.cos(t) - t * 0.5  # noqa: E731
    flo = f(lo)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        fm = f(mid)
        if np.sign(fm) == np.sign(flo):
            lo, flo = mid, fm
        else:
            hi = mid
    return mid, type(fm).__name__


@case(calls=lambda: [(np.array([[2.0, 1.0], [1.0, 3.0]]),), (np.diag([1.0, 5.0, 2.0]) + 0.1,)])
def power_iteration_with_norm(A):
    v = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
    lam = 0.0
    for i in range(500):
        w = A @ v
        v_new = w / np.linalg.norm(w)
        lam_new = v_new @ A @ v_new
        if abs(lam_new - lam) < 1e-12:
            break
        v, lam = v_new, lam_new
    return lam_new, v_new, i


@case(calls=lambda: [(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])),
                     (np.diag([2.0, 3.0, 4.0]) + 0.5, np.ones(3))])
def conjugate_gradient_early_break(A, b):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for k in range(len(b) * 2):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        if np.sqrt(rs_new) < 1e-10:
            break
        p = r + rs_new / rs * p
        rs = rs_new
    return x, k


@case(calls=lambda: [(np.array([2.0, -1.0, -1.0]), np.array([4.0, 4.0, 4.0, 4.0]), np.array([-1.0, -1.0, 0.0]),
                      np.array([5.0, 5.0, 10.0, 23.0])),
                     (np.array([1.0]), np.array([2.0, 2.0]), np.array([1.0]), np.array([3.0, 3.0]))])
def thomas_tridiagonal_solver(a, b, c, d):
    n = len(d)
    cp = np.zeros(n - 1)
    dp = np.zeros(n)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i - 1] * cp[i - 1] if i < n else b[i]
        if i < n - 1:
            cp[i] = c[i] / m
        dp[i] = (d[i] - a[i - 1] * dp[i - 1]) / m
    x = np.zeros(n)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


@case(calls=lambda: [(np.linspace(-2, 0.5, 5), np.linspace(-1, 1, 4), 12)])
def mandelbrot_escape_counts_masked_updates(re, im, max_iter):
    c = re[None, :] + 1j * im[:, None]
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=int)
    for _ in range(max_iter):
        mask = np.abs(z) <= 2
        z[mask] = z[mask] ** 2 + c[mask]
        counts += mask
    return counts, z.real.dtype


# == Kalman filters ==============================================================================

@case(calls=lambda: [(np.array([1.1, 0.9, 1.3, 1.0, 0.8]), 1e-5, 0.01),
                     (np.array([5.0, 5.5, 4.8]), 1e-3, 0.5)])
def kalman_1d_list_of_estimates(z, q, r):
    x, p = 0.0, 1.0
    estimates, gains = [], []
    for meas in z:
        p = p + q
        k = p / (p + r)
        x = x + k * (meas - x)
        p = (1 - k) * p
        estimates.append(x)
        gains.append(k)
    return estimates, gains, type(x).__name__


@case(calls=lambda: [(np.array([0.0, 1.0]), np.eye(2), np.array([1.2]), 0.1),
                     (np.array([1.0, -1.0]), np.eye(2) * 4, np.array([0.3]), 1.0)])
def kalman_matrix_predict_update(x, P, z, dt):
    F = np.array([[1.0, dt], [0.0, 1.0]])
    H = np.array([[1.0, 0.0]])
    Q = 0.01 * np.eye(2)
    R = np.array([[0.25]])
    x = F @ x
    P = F @ P @ F.T + Q
    y = z - H @ x
    S = H @ P @ H.T + R
    K = P @ H.T @ np.linalg.inv(S)
    x = x + K @ y
    P = (np.eye(2) - K @ H) @ P
    return x, P, y


# == ML from scratch ===============================================================================

def _blobs(n=18, d=2, k=3, seed=0):
    rng = _rng(seed)
    centers = rng.uniform(-4, 4, (k, d))
    y = np.arange(n) % k
    return centers[y] + rng.normal(0, 0.5, (n, d)), y


@case(calls=lambda: [(_blobs()[0], _blobs()[0][:3].copy()),
                     (_blobs(seed=1)[0], np.array([[0.0, 0.0], [100.0, 100.0], [1.0, 1.0]]))])
def kmeans_step_keeps_empty_cluster(X, centers):
    d = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(-1)
    labels = d.argmin(1)
    new = centers.copy()
    for j in range(centers.shape[0]):
        members = labels == j
        if np.any(members):
            new[j] = X[members].mean(axis=0)
    inertia = d[np.arange(len(X)), labels].sum()
    return new, labels, inertia, np.allclose(new, centers)


@case(calls=lambda: [(_blobs(d=3)[0],), (_rng(9).normal(size=(10, 3)),)])
def pca_by_eigh_sorted_descending(X):
    Xc = X - X.mean(axis=0)
    cov = np.cov(Xc, rowvar=False)
    w, V = np.linalg.eigh(cov)
    order = np.argsort(w)[::-1]
    w, V = w[order], V[:, order]
    return w / w.sum(), (Xc @ V[:, :2]).shape


@case(calls=lambda: [(_blobs(d=3)[0],), (_rng(10).normal(size=(7, 4)),)])
def pca_by_svd_explained_ratio(X):
    Xc = X - X.mean(0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    var = S ** 2 / (X.shape[0] - 1)
    return var / var.sum(), S.dtype, U.shape, Vt.shape


@case(calls=lambda: [(*_blobs(), np.array([[0.0, 0.0], [3.0, -2.0]]))])
def gaussian_naive_bayes_log_likelihood(X, y, Xq):
    classes = np.unique(y)
    ll = []
    for c in classes:
        Xc = X[y == c]
        mu, var = Xc.mean(0), Xc.var(0) + 1e-9
        prior = np.log(len(Xc) / len(X))
        ll.append(prior - 0.5 * np.sum(np.log(2 * np.pi * var)) - 0.5 * np.sum((Xq - mu) ** 2 / var, axis=1))
    ll = np.array(ll).T
    return classes[np.argmax(ll, axis=1)], ll


@case(calls=lambda: [(np.array([[1, 0, 2], [0, 3, 1], [2, 2, 0], [0, 1, 4]]), np.array([0, 1, 0, 1]), 1.0)])
def multinomial_nb_laplace_smoothing(counts, y, alpha):
    k = y.max() + 1
    fc = np.zeros((k, counts.shape[1]))
    np.add.at(fc, y, counts)
    log_prob = np.log((fc + alpha) / (fc.sum(1, keepdims=True) + alpha * counts.shape[1]))
    log_prior = np.log(np.bincount(y) / len(y))
    return counts @ log_prob.T + log_prior, fc


def _logreg_data(seed=0, n=16):
    rng = _rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(float)
    return X, y


@case(calls=lambda: [(*_logreg_data(), 0.1, 3, 4), (*_logreg_data(1, 10), 0.5, 2, 5)])
def logistic_regression_minibatch_epochs(X, y, lr, epochs, batch):
    w = np.zeros(X.shape[1])
    b = 0.0
    losses = []
    for _ in range(epochs):
        for s in range(0, len(X), batch):
            xb, yb = X[s:s + batch], y[s:s + batch]
            p = 1 / (1 + np.exp(-(xb @ w + b)))
            w -= lr * xb.T @ (p - yb) / len(xb)
            b -= lr * np.mean(p - yb)
        p = np.clip(1 / (1 + np.exp(-(X @ w + b))), 1e-12, 1 - 1e-12)
        losses.append(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return w, b, losses


@case(calls=lambda: [(_blobs()[0], _blobs()[1], 0.2, 4), (_blobs(seed=2)[0].astype(np.float32), _blobs(seed=2)[1], 0.1, 2)])
def softmax_regression_one_hot_epochs(X, y, lr, epochs):
    k = y.max() + 1
    W = np.zeros((X.shape[1], k), X.dtype)
    Y = np.eye(k)[y]
    for _ in range(epochs):
        z = X @ W
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        W -= lr * X.T @ (p - Y) / len(X)
    return W, (p.argmax(1) == y).mean()


@case(calls=lambda: [(_logreg_data()[0], np.where(_logreg_data()[1] > 0, 1, -1), np.full(16, 1 / 16)),
                     (np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([1, 1, -1, -1]), np.full(4, 0.25))])
def decision_stump_search_with_argsort(X, y, w):
    best = (np.inf, None, None, None)
    for j in range(X.shape[1]):
        order = np.argsort(X[:, j], kind="stable")
        xs, ys, ws = X[order, j], y[order], w[order]
        left_pos = np.cumsum(ws * (ys == 1))
        left_neg = np.cumsum(ws * (ys == -1))
        total_pos, total_neg = left_pos[-1], left_neg[-1]
        err_le = left_pos + (total_neg - left_neg)
        err_gt = left_neg + (total_pos - left_pos)
        for i in range(len(xs) - 1):
            if xs[i] == xs[i + 1]:
                continue
            thr = (xs[i] + xs[i + 1]) / 2
            for err, pol in ((err_le[i], 1), (err_gt[i], -1)):
                if err < best[0]:
                    best = (err, j, thr, pol)
    return best


@case(calls=lambda: [(*_blobs(), _blobs(n=5, seed=3)[0], 3), (*_blobs(), np.zeros((2, 2)), 1)])
def knn_argpartition_bincount_vote(X, y, Xq, k):
    d = np.sqrt(((Xq[:, None] - X[None]) ** 2).sum(-1))
    idx = np.argpartition(d, k - 1, axis=1)[:, :k]
    preds = []
    for row in idx:
        preds.append(np.bincount(y[row], minlength=y.max() + 1).argmax())
    return np.array(preds), np.sort(np.take_along_axis(d, idx, 1), axis=1)


@case(calls=lambda: [(_rng(11).normal(size=(2, 4, 3, 3)), 2), (_rng(12).normal(size=(1, 6, 2, 2)), 3)])
def group_norm_forward(x, groups):
    N, C, H, W = x.shape
    g = x.reshape(N, groups, C // groups, H, W)
    mean = g.mean(axis=(2, 3, 4), keepdims=True)
    var = g.var(axis=(2, 3, 4), keepdims=True)
    out = ((g - mean) / np.sqrt(var + 1e-5)).reshape(N, C, H, W)
    return out, mean.squeeze(), var.ravel()


@case(calls=lambda: [(_rng(13).normal(size=(5, 4)), _rng(14).normal(size=(5, 4)), np.ones(4), np.zeros(4))])
def batchnorm_forward_backward_in_one(x, dout, gamma, beta):
    mu = x.mean(0)
    xc = x - mu
    var = (xc ** 2).mean(0)
    std = np.sqrt(var + 1e-5)
    xn = xc / std
    out = gamma * xn + beta
    dbeta = dout.sum(0)
    dgamma = (dout * xn).sum(0)
    dxn = dout * gamma
    dx = (dxn - dxn.mean(0) - xn * (dxn * xn).mean(0)) / std
    return out, dx, dgamma, dbeta


def _adam_state():
    rng = _rng(15)
    params = {"W": rng.normal(size=(3, 2)), "b": np.zeros(2)}
    grads = {"W": rng.normal(size=(3, 2)), "b": np.array([0.5, -0.5])}
    state = {"t": 0, "m": {k: np.zeros_like(v) for k, v in params.items()},
             "v": {k: np.zeros_like(v) for k, v in params.items()}}
    return params, grads, state


def adam_update_dict_in_place(params, grads, state, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    state["t"] += 1
    t = state["t"]
    for k in params:
        m, v = state["m"][k], state["v"][k]
        m *= b1
        m += (1 - b1) * grads[k]
        v *= b2
        v += (1 - b2) * grads[k] ** 2
        mhat = m / (1 - b1 ** t)
        vhat = v / (1 - b2 ** t)
        params[k] -= lr * mhat / (np.sqrt(vhat) + eps)
    return t


def _adam_steps():
    params, grads, state = _adam_state()
    return [(params, grads, state), (params, grads, state), (params, grads, state)]


case.add(adam_update_dict_in_place, steps=_adam_steps)


def _rmsprop_steps():
    rng = _rng(16)
    w, cache = rng.normal(size=4), np.zeros(4)
    g1, g2 = rng.normal(size=4), rng.normal(size=4)
    return [(w, g1, cache, 0.01), (w, g2, cache, 0.01), (w, g1, cache, 0.05)]


@case(steps=_rmsprop_steps)
def rmsprop_with_out_arguments(w, g, cache, lr):
    np.multiply(cache, 0.9, out=cache)
    cache += 0.1 * g * g
    step = np.divide(g, np.sqrt(cache) + 1e-8)
    np.subtract(w, lr * step, out=w)
    return np.linalg.norm(step)


@case(calls=lambda: [(np.ones((3, 4)), 0.5, 0), (np.arange(6.0).reshape(2, 3), 0.2, 7)])
def dropout_seeded_generator(x, p, seed):
    rng = np.random.default_rng(seed)
    mask = (rng.random(x.shape) >= p) / (1 - p)
    return x * mask, mask, rng.random()


@case(calls=lambda: [(np.ones(5), _rng(17))])
def dropout_generator_argument_state_advances(x, rng):
    keep = rng.random(x.shape) > 0.3
    return x * keep, rng.integers(0, 100)


@case(calls=lambda: [(_rng(18).normal(size=(2, 2, 4, 4)), 3, 3, 1, 1), (np.arange(32.0).reshape(1, 2, 4, 4), 2, 2, 2, 0)])
def im2col_loops_then_matmul(x, kh, kw, stride, pad):
    N, C, H, W = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (H + 2 * pad - kh) // stride + 1
    ow = (W + 2 * pad - kw) // stride + 1
    cols = np.zeros((N, C, kh, kw, oh, ow))
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
    cols = cols.transpose(0, 4, 5, 1, 2, 3).reshape(N * oh * ow, -1)
    w = np.arange(C * kh * kw, dtype=float).reshape(1, -1) / 10
    return (cols @ w.T).reshape(N, oh, ow), cols.shape


@case(calls=lambda: [(np.zeros((2, 2, 1, 3)),), (np.zeros((1, 2, 1, 3)),)])
def flags_of_a_reshaped_transpose_computed_in_the_function(x):
    cols = (x * 2).transpose(0, 3, 1, 2).reshape(x.shape[0] * 3, -1)
    return cols.flags["C_CONTIGUOUS"], cols.strides


@case(calls=lambda: [(np.arange(36.0).reshape(9, 4), (1, 1, 4, 4), 3, 1),
                     (np.arange(18.0).reshape(2, 9), (1, 1, 4, 4), 3, 1)])   # NumPy's reshape error
def col2im_with_add_at(cols, shape, k, stride):
    N, C, H, W = shape
    oh, ow = (H - k) // stride + 1, (W - k) // stride + 1
    out = np.zeros(shape)
    cols = cols.reshape(N, C, k, k, oh, ow)
    for i in range(k):
        for j in range(k):
            np.add.at(out, (slice(None), slice(None), slice(i, i + stride * oh, stride),
                            slice(j, j + stride * ow, stride)), cols[:, :, i, j])
    return out


@case(calls=lambda: [([np.ones(3), np.full((2, 2), 3.0)], 1.0), ([np.array([0.1, 0.2])], 5.0)])
def clip_grad_norm_list_in_place(grads, max_norm):
    total = np.sqrt(sum(np.sum(g * g) for g in grads))
    scale = max_norm / (total + 1e-6)
    if scale < 1:
        for g in grads:
            g *= scale
    return total, scale < 1


@case(calls=lambda: [(_logreg_data()[0], _logreg_data()[0] @ np.array([1.0, 2.0, 3.0]), 0.05, 2),
                     (_logreg_data(2)[0], np.zeros(16), 0.05, 2)])
def linear_regression_early_stopping(X, y, lr, patience):
    w = np.zeros(X.shape[1])
    best, bad, history = np.inf, 0, {"loss": []}
    epoch = 0
    while bad < patience and epoch < 100:
        grad = X.T @ (X @ w - y) / len(y)
        w = w - lr * grad
        loss = np.mean((X @ w - y) ** 2)
        history["loss"].append(loss)
        if loss < best - 1e-4:
            best, bad = loss, 0
        else:
            bad += 1
        epoch += 1
    return w, epoch, history


@case(lambda: (np.array([[1.0, 0.0], [0.0, 0.0], [3.0, 4.0]]),))
def cosine_similarity_zero_vector_nan(A):
    norms = np.linalg.norm(A, axis=1, keepdims=True)
    An = A / norms
    return An @ An.T, norms.dtype


case.add(cosine_similarity_zero_vector_nan, lambda: (np.array([[1.0, 0.0], [0.0, 0.0]]),),
         name="cosine_similarity_zero_vector_nan_warnings", observe=True, xfail=WARNING_LOCATION)


@case(calls=lambda: [(np.array([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]]), np.array([0, 1]), 0.1),
                     (np.array([[1.0, 1.0]], np.float32), np.array([1]), 0.0)])
def label_smoothing_cross_entropy(logits, y, eps):
    k = logits.shape[1]
    target = np.full(logits.shape, eps / k)
    target[np.arange(len(y)), y] += 1 - eps
    z = logits - logits.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return -(target * logp).sum(1).mean(), logp.dtype


@case(calls=lambda: [(np.array([0.2, 0.9, 0.4, 0.7]), np.array([0, 1, 0, 1]), [0.3, 0.5, 0.8])])
def roc_points_python_thresholds(scores, y, thresholds):
    pts = []
    for t in thresholds:
        pred = scores >= t
        tpr = (pred & (y == 1)).sum() / max((y == 1).sum(), 1)
        fpr = (pred & (y == 0)).sum() / max((y == 0).sum(), 1)
        pts.append((fpr, tpr))
    return pts


# == idioms =======================================================================================

@case(calls=lambda: [(np.array([1.0, -2.0, 3.0]), np.array([True, False, True])),
                     (np.array([0.5, 0.25]), np.array([False, False]))])
def masked_store_zero_and_add_at_on_arguments(x, mask):
    x[mask] = 0
    np.add.at(x, [0, 0, -1], 1.5)
    np.clip(x, -1, 2, out=x)
    return x.sum()


@case(lambda: (np.arange(6.0), np.zeros(6), np.zeros(3, np.float32)))
def out_arguments_return_the_out_array(x, out, small):
    r1 = np.add(x, 1, out=out)
    r2 = np.multiply(x[:3], 2, out=small, casting="same_kind")
    r3 = np.sqrt(x, out=out, where=x > 2)
    return r1 is out, r2 is small, r3 is out, small


@case(steps=lambda: [({"w": [np.ones(2)], "n": 0}, 2.0), ({"w": [np.ones(2)], "n": 5}, -1.0)])
def dict_of_list_of_arrays_mutated(state, scale):
    last = state["w"][-1]
    state["w"].append(last * scale)
    state["w"][0] += 1
    state["n"] += len(state["w"])
    state["total"] = sum(a.sum() for a in state["w"])
    return state["total"]


@case(lambda: (np.arange(3, dtype=np.float32), np.arange(3, dtype=np.int8), np.arange(3, dtype=np.uint8)))
def nep50_promotion_table(f32, i8, u8):
    return ((f32 * 2.0).dtype, (f32 * np.float64(2.0)).dtype, (np.float32(3) + 3.0).dtype,
            (i8 + np.int64(1)).dtype, (i8 + 1).dtype, (u8 * 2).dtype, (f32 + i8).dtype,
            (u8 + i8).dtype, type(np.float32(1.5) * 2), type(np.float64(1.5) * 2),
            (i8 / 2).dtype, (f32 + 1j).dtype, (u8 // np.uint8(2)).dtype)


@case(lambda: (np.arange(3, dtype=np.uint8),))
def nep50_python_int_out_of_range_raises(u8):
    return u8 + 300


@case(lambda: (np.array([120, -100, 5], np.int8), np.array([2**31 - 1, 1], np.int32)), observe=True)
def integer_overflow_wraps_silently(i8, i32):
    return i8 + np.int8(10), i8 * 2, i32 + 1, i32.sum(), i32.sum(dtype=np.int32), np.cumsum(i8)


@case(lambda: (np.int32(2**31 - 1), np.int8(-128)), observe=True)
def numpy_scalar_overflow_warns(a, b):
    return a + np.int32(1), -b, abs(b), b // np.int8(-1)


@case(lambda: (np.array([1.0, 0.0, -1.0, np.nan]), np.array([3, 0, -3])))
def division_by_zero_inf_nan(f, i):
    return f / 0.0, f / -0.0, i // 0, i % 0, np.where(i != 0, 6 / i, 0.0), 1 / f


case.add(division_by_zero_inf_nan, lambda: (np.array([1.0, 0.0]), np.array([3, 0])),
         name="division_by_zero_inf_nan_warnings", observe=True, xfail=WARNING_LOCATION)


@case(lambda: (np.array([1.5, -2.5, 0.0]),))
def scalar_result_types(x):
    return (x.sum(), float(x.sum()), x.sum(keepdims=True), np.asarray(x.max()), x @ x, np.dot(x, x),
            x[0], x[0].item(), x[:1].sum(axis=0), np.linalg.det(np.diag(x + 3)), x.mean(axis=None),
            np.float64(x[1]) * 2, round(x[0]), round(x[0], 1), x.tolist(), np.round(x), int(x[1]),
            np.sum(x, axis=0, keepdims=False), x[1] ** 2, divmod(x[1], 2.0), np.median(x))


@case(lambda: (np.array([1.5, 2.5, -0.5], np.float32),))
def float32_scalar_results(x):
    total = np.float32(0)
    for v in x:
        total += v
    return total, x.sum(), x.mean(), x[0] * 2.0, x[0] * np.float64(2), x.max().item(), x.std(ddof=1)


@case(calls=lambda: [(np.array([1.0, 2.0]),), (np.array([np.nan, 1.0]),), (np.array([-1.0, 2.0]),),
                     (np.array([1.0, 3.0]),)])
def early_returns_on_data(x):
    if np.any(np.isnan(x)):
        return None
    if (x < 0).any():
        return "negative", x.min()
    if np.all(x > 0) and x.sum() > 3:
        return {"big": x.sum()}
    return x * 2


@case(calls=lambda: [(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 0.0])),
                     (np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([1.0, 0.0]))])
def solve_singular_matrix_raises(A, b):
    return np.linalg.solve(A, b)


@case(calls=lambda: [(np.array([[4.0, 2.0], [2.0, 3.0]]),), (np.array([[1.0, 2.0], [2.0, 1.0]]),)])
def cholesky_falls_back_on_not_positive_definite(A):
    try:
        L = np.linalg.cholesky(A)
        return L, True
    except np.linalg.LinAlgError as e:
        return str(e), False


@case(lambda: (np.arange(12.0).reshape(3, 4), np.arange(3.0)))
def im2col_shape_mismatch_message(cols, w):
    return cols @ w


@case(lambda: (np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1.234567]),))
def rounding_half_even_and_decimals(x):
    return np.round(x), np.round(x, 2), np.around(x, -1), np.rint(x), np.fix(x), x.round(1)


@case(lambda: (np.arange(12.0).reshape(3, 4),))
def memory_layouts_of_results(a):
    return (a.T @ a, np.asfortranarray(a), np.ascontiguousarray(a.T), a.T.reshape(-1), a[:, ::2] + 0,
            np.transpose(a)[1:], a.copy(order="F"), a.T.ravel(), np.copy(a.T), a.T.copy(order="K"),
            (a @ a.T).T, a.T[::2])


@case(lambda: (np.arange(12.0).reshape(3, 4),))
def copy_of_a_transpose_is_c_ordered(a):
    return a.T.copy(), a.T.copy(order="C")


@case(lambda: (np.arange(12.0).reshape(3, 4),))
def ufunc_of_a_transpose_is_fortran_ordered(a):
    return a.T * 2, np.exp(a.T), a.T + a.T


@case(calls=lambda: [(np.array([3.0, 1.0, 2.0]),), (np.array([5.0, 5.0, 1.0, 0.0]),)])
def while_loop_bubble_sort_in_place(x):
    n = len(x)
    swapped = True
    passes = 0
    while swapped:
        swapped = False
        for i in range(n - 1 - passes):
            if x[i] > x[i + 1]:
                x[i], x[i + 1] = x[i + 1], x[i]
                swapped = True
        passes += 1
    return passes


@case(calls=lambda: [(np.array([0.1, 0.2, 0.7]), 1.0), (np.array([0.1, 0.2, 0.7]), 0.25),
                     (np.array([1.0, 1.0], np.float32), 2.0)])
def softmax_temperature_per_call(logits, temperature):
    z = logits / temperature
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum(), np.log(e.sum()) + logits.max() / temperature


@case(calls=lambda: [(np.zeros(4), np.array([0, -1, 1, -1])), (np.zeros(3), np.array([0, 3]))])
def add_at_negative_and_out_of_bounds_indices(acc, idx):
    np.add.at(acc, idx, 1.0)
    return acc


@case(lambda: (np.arange(4), np.array([1.5, 2.0, 0.0, 4.0])))
def int_argument_in_place_true_divide_raises(counts, w):
    counts /= w
    return counts


@case(lambda: (np.array([True, False, True, True]), np.array([0.5, 1.5], np.float32)))
def bool_cumsum_and_python_sum_of_numpy_scalars(m, f):
    return np.cumsum(m), m.sum(), sum(v for v in f), sum(f, 0.0), max(f.max(), 1.0), min(0, f.min())


@case(lambda: (np.array([4.0, 9.0]),))
def math_functions_of_numpy_scalars(x):
    return math.sqrt(x[0]), math.exp(x[1] / 9), math.floor(x[1] / 2), math.isclose(x[0], 4.0), math.log(x.sum())


@case(lambda: (np.array([2, 3, 4]), np.int64(2)))
def integer_negative_power_raises(a, e):
    return a ** -e


@case(lambda: (np.empty((0, 3)),))
def mean_of_empty_slice_is_nan(x):
    return x.mean(axis=0), x.sum(axis=0), x.shape


case.add(mean_of_empty_slice_is_nan, name="mean_of_empty_slice_warnings", observe=True, xfail=(
    "np.mean's 'Mean of empty slice' (stacklevel=2) comes from NumPy's fromnumeric.py when the "
    "mean kernel calls np.mean, natively from the user's line; untiered, the second warning "
    "('invalid value encountered in divide') is missing"), make_args=lambda: (np.empty((0, 3)),))


@case(calls=lambda: [(np.array([1.0, 2.0, 4.0]), 0.0), (np.array([1.0, 2.0, 4.0]), 1e-3)])
def relative_change_loop_python_float_tolerance(x, tol):
    prev = x.copy()
    history = []
    for k in range(50):
        x = 0.5 * (x + 2.0 / x)
        change = np.abs(x - prev).max() / np.abs(prev).max()
        history.append(float(change))
        if change <= tol:
            break
        prev = x
    return x, k, history


@case(calls=lambda: [(_rng(19).normal(size=(6, 3)), np.array([0, 1, 0, 1, 1, 0])),
                     (_rng(20).normal(size=(4, 3)), np.array([1, 1, 1, 1]))])
def class_means_scatter_matrices_lda(X, y):
    classes = np.unique(y)
    mean = X.mean(0)
    Sw = np.zeros((X.shape[1], X.shape[1]))
    Sb = np.zeros_like(Sw)
    for c in classes:
        Xc = X[y == c]
        mc = Xc.mean(0)
        Sw += (Xc - mc).T @ (Xc - mc)
        d = (mc - mean)[:, None]
        Sb += len(Xc) * d @ d.T
    return Sw, Sb, len(classes)


@case(lambda: (np.array([[1.0, 2.0], [3.0, 4.0]]),))
def in_place_ops_through_views_of_argument(A):
    A[0] *= 2
    A[:, 1] -= A[:, 0]
    A.T[0] += 10
    diag = np.einsum("ii->i", A)
    return diag.sum(), A


@case(steps=lambda: [([], np.array([1.0, 2.0])), ([], np.array([3.0]))])
def list_of_running_losses_appended(log, batch):
    loss = np.mean(batch ** 2)
    log.append(loss)
    log.append(loss.item())
    return len(log), np.mean(log)


def _regression(n, d, seed):
    rng = _rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) + rng.normal(0, 0.1, n)


@case(calls=lambda: [(*_regression(64, 3, 21), 0.1), (*_regression(200, 4, 22), 0.5)])
def ridge_coordinate_descent_np_dot_of_columns(X, y, lam):
    # np.dot of a column X[:, j]: NumPy hands the strided vector to BLAS as it is
    n, d = X.shape
    w = np.zeros(d)
    r = y.copy()
    for _ in range(5):
        for j in range(d):
            xj = X[:, j]
            r += xj * w[j]
            w[j] = np.dot(xj, r) / (xj.dot(xj) + lam)
            r -= xj * w[j]
    return w, np.dot(r, r)


@case(lambda: (_rng(23).normal(size=(3, 100)), _rng(24).normal(size=3)))
def gram_matrix_normal_equations(X, y):
    # NumPy runs X @ X.T and X.T @ X on one array as BLAS's syrk
    G = X.T @ X + 0.1 * np.eye(X.shape[1])
    return X @ X.T, G, np.linalg.solve(X @ X.T + np.eye(3), y)


@case(lambda: (_rng(3).normal(size=(2, 64)),))
def covariance_of_rows(X):
    return np.cov(X), np.corrcoef(X)


@case(lambda: (_rng(25).normal(size=(7, 4)), _rng(26).normal(size=64)))
def einsum_row_dots_and_totals(A, v):
    return np.einsum("ij,ij->i", A, A), np.einsum("ij->", A), np.einsum("i,i->", v, v)


@case(lambda: (_rng(27).normal(size=64),))
def moving_average_convolve_same(x):
    return np.convolve(x, np.ones(3) / 3, mode="same"), np.convolve(x, np.array([0.25, 0.5, 0.25]))


# == running the corpus ===========================================================================

@pytest.mark.parametrize("c", case.params())
def test_corpus(c):
    c.check()


def _bitwise_params() -> list:
    params = []
    for p in case.params():
        c = p.values[0]
        if c.observe:   # the warnings of a case whose values another case compares
            continue
        if c.name in BITWISE_XFAIL:
            p = pytest.param(c, id=c.name, marks=[pytest.mark.xfail(strict=True, reason=BITWISE_XFAIL[c.name])])
        params.append(p)
    return params


@pytest.mark.skipif(_setting() == "untiered", reason="OpenVINO runs every graph: within tolerance")
@pytest.mark.parametrize("c", _bitwise_params())
def test_corpus_bitwise(c):
    check_bitwise(c)
