"""Op table: inv, solve, det, slogdet, eigh, eigvalsh, cholesky (frame/ops/linalg.py).

Expected values are computed independently of NumPy's linalg, in Python
numbers (complex where needed), one matrix of the batch at a time:
Gauss-Jordan elimination with partial pivoting (inverse, solve), Gaussian
elimination (determinant), the Cholesky-Banachiewicz recurrence, and the
cyclic Jacobi eigenvalue method (real symmetric matrices; a complex Hermitian
matrix ``H = X + iY`` through the real symmetric ``[[X, -Y], [Y, X]]``,
which has each eigenvalue of H twice).  Eigenvectors are only defined up to
sign, so eigh's cases use matrices whose eigenvectors are columns of the
identity (diagonal and block-diagonal matrices); tests/ops/test_linalg.py
checks eigh's vectors on general matrices by their defining properties.
"""
from __future__ import annotations

import math

import numpy as np

from .optable import Case, cases

LINALG_DTYPES = ("float32", "float64", "int32", "int64", "bool", "complex64", "complex128")
# matrix batches: one matrix, 1x1, batches (also empty ones), a 0x0 matrix
SQUARE_SHAPES = [(3, 3), (1, 1), (2, 2, 2), (2, 1, 3, 3), (0, 2, 2), (0, 0)]


def _out_dtype(*dtypes) -> np.dtype:
    """NumPy's linalg result dtype, written out: integers and bools compute in
    float64; float32 with float32 stays single precision; complex wins."""
    double = any(np.dtype(d).kind in "biu" or np.dtype(d).name in ("float64", "complex128")
                 for d in dtypes)
    complex_ = any(np.dtype(d).kind == "c" for d in dtypes)
    if complex_:
        return np.dtype(np.complex128 if double else np.complex64)
    return np.dtype(np.float64 if double else np.float32)


def _real(dt: np.dtype) -> np.dtype:
    return np.dtype({"complex64": "float32", "complex128": "float64"}.get(dt.name, dt.name))


def _well_conditioned(shape, dtype, seed) -> np.ndarray:
    """Random matrices with a dominant diagonal (invertible, positive definite
    when symmetrised)."""
    g = np.random.default_rng(seed)
    n = shape[-1]
    if dtype == "bool":
        eye = np.broadcast_to(np.eye(n, dtype=bool), shape)
        return (eye | (g.random(shape) > 0.8) & np.triu(np.ones((n, n), bool), 1)).copy()
    m = g.uniform(-1.0, 1.0, shape)
    if np.dtype(dtype).kind == "c":
        m = m + 1j * g.uniform(-1.0, 1.0, shape)
    if np.dtype(dtype).kind in "iu":
        m = np.round(m * 3)
    m = m + np.eye(n) * (2.0 * n + 1.0) if n else m
    return m.astype(dtype)


def _matrices(a):
    """The matrices of a batch, as nested lists of Python numbers, with their positions."""
    a = np.asarray(a)
    for pos in np.ndindex(*a.shape[:-2]):
        yield pos, [[complex(v) if a.dtype.kind == "c" else float(v) for v in row]
                    for row in a[pos]]


def _batch(shape, dtype, per_matrix, a):
    out = np.zeros(shape, dtype)
    for pos, m in _matrices(a):
        out[pos] = per_matrix(m)
    return out


def _gauss_jordan(m, rhs):
    """Solve m @ x = rhs (rhs a list of rows) by Gauss-Jordan with partial pivoting."""
    n = len(m)
    aug = [list(m[i]) + list(rhs[i]) for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(aug[r][c]))
        if aug[p][c] == 0:
            raise ZeroDivisionError("singular")
        aug[c], aug[p] = aug[p], aug[c]
        pivot = aug[c][c]
        aug[c] = [v / pivot for v in aug[c]]
        for r in range(n):
            if r != c and aug[r][c] != 0:
                f = aug[r][c]
                aug[r] = [v - f * w for v, w in zip(aug[r], aug[c])]
    return [row[n:] for row in aug]


def _identity(n):
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def _determinant(m):
    n = len(m)
    a = [list(row) for row in m]
    d = 1.0
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if a[p][c] == 0:
            return 0.0
        if p != c:
            a[c], a[p] = a[p], a[c]
            d = -d
        d *= a[c][c]
        for r in range(c + 1, n):
            f = a[r][c] / a[c][c]
            a[r] = [v - f * w for v, w in zip(a[r], a[c])]
    return d


def _tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return (1e-4, 1e-5) if single else (1e-10, 1e-12)


@cases("inv")
def inv_cases(op):
    for dtype in LINALG_DTYPES:
        for i, shape in enumerate(SQUARE_SHAPES):
            a = _well_conditioned(shape, dtype, i)
            out = _out_dtype(dtype)
            rtol, atol = _tol(out)
            yield Case([a], {}, lambda ins, attrs, out=out: [
                _batch(ins[0].shape, out, lambda m: _gauss_jordan(m, _identity(len(m))), ins[0])],
                rtol=rtol, atol=atol, id=f"{dtype}-{shape}")


# (a shape, b shape): one vector, a matrix of right-hand sides, a batched a with
# a 1-D b, batches broadcasting both ways, empty batches and an empty system
SOLVE_SHAPES = [((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (3,)), ((2, 1, 2, 2), (3, 2, 1)),
                ((2, 2), (4, 2, 3)), ((0, 2, 2), (2, 1)), ((0, 0), (0, 2))]


def _solved(out):
    def expected(ins, attrs):
        a, b = ins
        if b.ndim == 1:
            result = np.zeros(a.shape[:-1], out)
            for pos, m in _matrices(a):
                result[pos] = [row[0] for row in _gauss_jordan(m, [[v] for v in b.tolist()])]
            return [result]
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
        result = np.zeros(batch + b.shape[-2:], out)
        for pos, m in _matrices(a):
            result[pos] = np.array(_gauss_jordan(m, b[pos].tolist())).reshape(b.shape[-2:])
        return [result]
    return expected


@cases("solve")
def solve_cases(op):
    pairs = [(d, d) for d in LINALG_DTYPES] + [("float32", "float64"), ("int64", "float32"),
                                               ("float32", "complex64"), ("bool", "float32")]
    for da, db in pairs:
        for i, (sa, sb) in enumerate(SOLVE_SHAPES):
            a = _well_conditioned(sa, da, i)
            g = np.random.default_rng(i + 10)
            b = g.uniform(-2.0, 2.0, sb)
            if np.dtype(db).kind == "c":
                b = b + 1j * g.uniform(-2.0, 2.0, sb)
            b = (b > 0) if db == "bool" else np.round(b * 2) if np.dtype(db).kind == "i" else b
            b = b.astype(db)
            out = _out_dtype(da, db)
            rtol, atol = _tol(out)
            yield Case([a, b], {}, _solved(out), rtol=rtol, atol=atol, id=f"{da}-{db}-{sa}-{sb}")


def _slogdet_of(d, out):
    if d == 0:
        return out.type(0), -math.inf
    if isinstance(d, complex):
        return d / abs(d), math.log(abs(d))
    return math.copysign(1.0, d), math.log(abs(d))


@cases("det", "slogdet")
def det_cases(op):
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, -1.0]])
    inputs = [(_well_conditioned(shape, dtype, i), f"{dtype}-{shape}")
              for dtype in LINALG_DTYPES for i, shape in enumerate(SQUARE_SHAPES)]
    # a singular matrix (float32: the gradient rules invert A, and raise there)
    inputs += [(singular.astype(np.float32), "singular"),
               (np.array([[0.0, 1.0], [1.0, 0.0]]), "negative"),
               (np.array([[2.0, 1.0], [-1.0, 3.0]], np.float32) * 0.5, "f32-2x2")]
    for a, name in inputs:
        out = _out_dtype(a.dtype)
        rtol, atol = _tol(out)
        if op == "det":
            yield Case([a], {}, lambda ins, attrs, out=out: [
                _batch(ins[0].shape[:-2], out, _determinant, ins[0])],
                rtol=rtol, atol=atol, id=name)
        else:
            def expected(ins, attrs, out=out):
                signs = np.zeros(ins[0].shape[:-2], out)
                logs = np.zeros(ins[0].shape[:-2], _real(out))
                for pos, m in _matrices(ins[0]):
                    signs[pos], logs[pos] = _slogdet_of(_determinant(m), out)
                return [signs, logs]
            yield Case([a], {}, expected, rtol=rtol, atol=atol, id=name)


def _cholesky_factor(m):
    n = len(m)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = sum(low[i][k] * _conj(low[j][k]) for k in range(j))
            if i == j:
                d = m[i][i] - s  # real for a Hermitian matrix
                low[i][j] = math.sqrt(d.real if isinstance(d, complex) else d)
            else:
                low[i][j] = (m[i][j] - s) / low[j][j]
    return low


def _conj(v):
    return v.conjugate() if isinstance(v, complex) else v


def _hermitian(shape, dtype, seed):
    """Hermitian positive-definite matrices (real symmetric for real dtypes)."""
    a = _well_conditioned(shape, "complex128" if np.dtype(dtype).kind == "c" else "float64", seed)
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    if np.dtype(dtype).kind in "biu":
        h = np.round(h * 2)
        if dtype == "bool":
            h = np.broadcast_to(np.eye(shape[-1], dtype=bool), shape)
    return np.ascontiguousarray(h).astype(dtype)


def _from_triangle(m, upper: bool):
    """The Hermitian matrix LAPACK reads from one triangle of ``m``."""
    n = len(m)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            src = (i, j) if (i <= j) == upper or i == j else (j, i)
            v = m[src[0]][src[1]]
            out[i][j] = (v.real if i == j else v if src == (i, j) else _conj(v)) \
                if isinstance(v, complex) else v
    return out


@cases("cholesky")
def cholesky_cases(op):
    for dtype in LINALG_DTYPES:
        for i, shape in enumerate(SQUARE_SHAPES):
            a = _hermitian(shape, dtype, i)
            out = _out_dtype(dtype)
            rtol, atol = _tol(out)
            for upper in (False, True):
                def expected(ins, attrs, out=out):
                    low = _batch(ins[0].shape, out, lambda m: _cholesky_factor(
                        _from_triangle(m, attrs["upper"])), ins[0])
                    if attrs["upper"]:
                        low = np.conj(np.swapaxes(low, -1, -2))
                    return [low]
                # the triangle NumPy does not read holds junk
                spoiled = a.copy()
                if a.size and a.dtype != bool:
                    n = shape[-1]
                    spoiled[..., np.tril(np.ones((n, n), bool), -1) if upper
                            else np.triu(np.ones((n, n), bool), 1)] = 7
                yield Case([spoiled], {"upper": upper}, expected,
                           rtol=rtol, atol=atol, id=f"{dtype}-{shape}-upper={upper}")


def _jacobi_eigenvalues(m):
    """Eigenvalues of a real symmetric matrix by the cyclic Jacobi method, ascending."""
    n = len(m)
    a = [list(map(float, row)) for row in m]
    for _ in range(100):
        off = sum(a[i][j] ** 2 for i in range(n) for j in range(n) if i != j)
        if off < 1e-30:
            break
        for p in range(n):
            for q in range(p + 1, n):
                if a[p][q] == 0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1))
                c = 1 / math.sqrt(t * t + 1)
                s = t * c
                for k in range(n):  # rotate columns p, q
                    akp, akq = a[k][p], a[k][q]
                    a[k][p], a[k][q] = c * akp - s * akq, s * akp + c * akq
                for k in range(n):  # and rows p, q
                    apk, aqk = a[p][k], a[q][k]
                    a[p][k], a[q][k] = c * apk - s * aqk, s * apk + c * aqk
    return sorted(a[i][i] for i in range(n))


def _eigenvalues(m):
    if any(isinstance(v, complex) for row in m for v in row):
        n = len(m)
        big = [[m[i % n][j % n].real if (i < n) == (j < n) else
                (-m[i][j - n].imag if i < n else m[i - n][j].imag) for j in range(2 * n)]
               for i in range(2 * n)]
        return _jacobi_eigenvalues(big)[::2]  # each eigenvalue twice
    return _jacobi_eigenvalues(m)


@cases("eigvalsh")
def eigvalsh_cases(op):
    for dtype in LINALG_DTYPES:
        for i, shape in enumerate(SQUARE_SHAPES):
            a = _hermitian(shape, dtype, i)
            out = _out_dtype(dtype)
            rtol, atol = _tol(out)
            for uplo in ("L", "U"):
                spoiled = a.copy()
                if a.size and a.dtype != bool:  # the triangle not read holds junk
                    n = shape[-1]
                    spoiled[..., np.triu(np.ones((n, n), bool), 1) if uplo == "L"
                            else np.tril(np.ones((n, n), bool), -1)] = 5
                yield Case([spoiled], {"UPLO": uplo}, lambda ins, attrs, out=out: [
                    _batch(ins[0].shape[:-1], _real(out), lambda m: _eigenvalues(
                        _from_triangle(m, attrs["UPLO"] == "U")), ins[0])],
                    rtol=rtol, atol=max(atol, 1e-11), id=f"{dtype}-{shape}-{uplo}")


@cases("eigh")
def eigh_cases(op):
    # eigenvectors are columns of the identity: diagonal matrices (distinct
    # values, so each vector is unique up to sign; LAPACK's sign is +1 there)
    for dtype in LINALG_DTYPES:
        for i, diag in enumerate([[3.0, -1.0, 2.0], [5.0], [[1.0, 4.0], [2.0, -3.0]], []]):
            d = np.array(diag, dtype=np.float64)
            if dtype == "bool":
                d = np.ones_like(d) if d.ndim == 1 and d.size == 1 else d[..., :0]
            a = (d[..., :, None] * np.eye(d.shape[-1])).astype(dtype)
            out = _out_dtype(dtype)
            rtol, atol = _tol(out)
            for uplo in ("L", "U"):
                def expected(ins, attrs, out=out):
                    m = np.asarray(ins[0])
                    n = m.shape[-1]
                    values = np.zeros(m.shape[:-1], _real(out))
                    vectors = np.zeros(m.shape, out)
                    for pos in np.ndindex(*m.shape[:-2]):
                        entries = [(float(m[pos][k, k].real), k) for k in range(n)]
                        for col, (v, k) in enumerate(sorted(entries)):
                            values[pos + (col,)] = v
                            vectors[pos + (k, col)] = 1
                    return [values, vectors]
                yield Case([a], {"UPLO": uplo}, expected, rtol=rtol, atol=atol,
                           id=f"{dtype}-{i}-{uplo}")


# --------------------------------------------------------------------------- qr, svd, pinv
#
# qr: an upper-trapezoidal matrix with a positive diagonal is its own R (each
# Householder reflection of LAPACK's factorisation is the identity there), Q
# the identity's first columns.  svd: a diagonal matrix with positive entries in
# descending order is its own S with U and V identities; the singular values of
# any matrix are the square roots of the eigenvalues of A^H A (Jacobi above).
# pinv: of a matrix with independent columns, (A^H A)^-1 A^H (Gauss-Jordan); of a
# rank-one matrix, A^H / sum(|A|^2).

RECT_SHAPES = [(3, 3), (4, 2), (2, 4), (2, 3, 2), (1, 1), (0, 3, 2)]


def _upper_trapezoid(shape, dtype, seed):
    g = np.random.default_rng(seed)
    m, n = shape[-2:]
    a = np.triu(g.uniform(-2.0, 2.0, shape))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * np.triu(g.uniform(-2.0, 2.0, shape), 1)
    k = min(m, n)
    idx = np.arange(k)
    a[..., idx, idx] = 1.0 + np.arange(k)  # positive diagonal
    if dtype == "bool":
        a = a != 0
    return (np.round(a) if np.dtype(dtype).kind in "iu" else a).astype(dtype)


@cases("qr")
def qr_cases(op):
    for dtype in LINALG_DTYPES:
        for i, shape in enumerate(RECT_SHAPES):
            a = _upper_trapezoid(shape, dtype, i)
            out = _out_dtype(dtype)
            for mode in ("reduced", "complete", "r"):
                def expected(ins, attrs, out=out):
                    x = np.asarray(ins[0])
                    m, n = x.shape[-2:]
                    k = m if attrs["mode"] == "complete" else min(m, n)
                    r = np.zeros(x.shape[:-2] + (k, n), out)
                    r[..., :min(k, m), :] = x[..., :min(k, m), :]
                    if attrs["mode"] == "r":
                        return [r]
                    q = np.zeros(x.shape[:-2] + (m, k), out)
                    q[..., np.arange(min(m, k)), np.arange(min(m, k))] = 1
                    return [q, r]
                yield Case([a], {"mode": mode}, expected, id=f"{dtype}-{shape}-{mode}")


def _singular_values(m):
    """sqrt of the eigenvalues of A^H A, descending."""
    rows, cols = len(m), len(m[0]) if m else 0
    gram = [[sum(_conj(m[k][i]) * m[k][j] for k in range(rows)) for j in range(cols)]
            for i in range(cols)]
    values = _eigenvalues(gram) if cols else []
    k = min(rows, cols)
    return [math.sqrt(max(v, 0.0)) for v in sorted(values, reverse=True)[:k]]


@cases("svd")
def svd_cases(op):
    for dtype in LINALG_DTYPES:
        for i, shape in enumerate(RECT_SHAPES):
            out = _out_dtype(dtype)
            rtol, atol = _tol(out)
            # any matrix: the singular values alone
            a = _well_conditioned(shape, dtype, i) if shape[-1] == shape[-2] else \
                _upper_trapezoid(shape, dtype, i)
            yield Case([a], {"compute_uv": False}, lambda ins, attrs, out=out: [
                _batch(ins[0].shape[:-2] + (min(ins[0].shape[-2:]),), _real(out),
                       _singular_values, ins[0])],
                rtol=rtol, atol=max(atol, 1e-11), id=f"{dtype}-{shape}-values")
            if dtype == "bool":
                continue  # a bool diagonal has equal singular values: no unique vectors
            # a diagonal matrix, entries positive and descending: U, S, Vh
            m, n = shape[-2:]
            k = min(m, n)
            d = np.zeros(shape)
            d[..., np.arange(k), np.arange(k)] = np.arange(k, 0, -1) + 0.5
            d = (np.round(d + 0.5) if np.dtype(dtype).kind in "iu" else d).astype(dtype)
            for full in (True, False):
                def expected(ins, attrs, out=out):
                    x = np.asarray(ins[0])
                    m, n = x.shape[-2:]
                    k = min(m, n)
                    u_cols, v_rows = (m, n) if attrs["full_matrices"] else (k, k)
                    s = np.zeros(x.shape[:-2] + (k,), _real(out))
                    for pos in np.ndindex(*x.shape[:-2]):
                        s[pos] = [abs(complex(x[pos][j, j])) for j in range(k)]
                    u = np.zeros(x.shape[:-2] + (m, u_cols), out)
                    u[..., np.arange(min(m, u_cols)), np.arange(min(m, u_cols))] = 1
                    vh = np.zeros(x.shape[:-2] + (v_rows, n), out)
                    vh[..., np.arange(min(n, v_rows)), np.arange(min(n, v_rows))] = 1
                    return [u, s, vh]
                yield Case([d], {"full_matrices": full}, expected, rtol=rtol, atol=atol,
                           id=f"{dtype}-{shape}-diagonal-full={full}")


def _pseudo_inverse(m):
    rows = len(m)
    cols = len(m[0])
    mh = [[_conj(m[k][i]) for k in range(rows)] for i in range(cols)]  # cols x rows
    gram = [[sum(mh[i][k] * m[k][j] for k in range(rows)) for j in range(cols)]
            for i in range(cols)]
    return _gauss_jordan(gram, mh)


@cases("pinv")
def pinv_cases(op):
    for dtype in LINALG_DTYPES:
        for i, shape in enumerate([(3, 3), (4, 2), (2, 3, 3), (2, 4, 3), (1, 1)]):
            if dtype == "bool":
                a = _upper_trapezoid(shape, dtype, i)
            else:
                g = np.random.default_rng(i)
                a = g.uniform(-1.0, 1.0, shape)
                if np.dtype(dtype).kind == "c":
                    a = a + 1j * g.uniform(-1.0, 1.0, shape)
                k = min(shape[-2:])
                a[..., np.arange(k), np.arange(k)] += 3.0  # independent columns
                a = (np.round(a * 2) if np.dtype(dtype).kind in "iu" else a).astype(dtype)
            out = _out_dtype(dtype)
            rtol, atol = _tol(out)
            yield Case([a], {}, lambda ins, attrs, out=out: [
                _batch(ins[0].shape[:-2] + ins[0].shape[-2:][::-1], out, _pseudo_inverse,
                       ins[0])], rtol=rtol, atol=atol, id=f"{dtype}-{shape}")
    rank_one = np.outer([1.0, 2.0, -1.0], [2.0, 0.5])
    yield Case([rank_one], {"rcond": 1e-10},
               lambda ins, attrs: [ins[0].T / np.sum(ins[0] ** 2)], rtol=1e-10, atol=1e-12,
               id="rank-one")
