"""``numpy.linalg`` functions and NumPy's diagonal helpers written with frame's
ops, with NumPy's own signatures (merged into ``NUMPY_FUNCTIONS``).

- ``np.linalg.inv``, ``solve``, ``det``, ``slogdet``, ``eigh``, ``eigvalsh``,
  ``cholesky``, ``qr``, ``svd`` and ``pinv`` are the ops of
  ``frame/ops/linalg.py`` (NumPy's kernels, NumPy's dtypes and errors).
  ``slogdet``, ``eigh``, ``qr`` and ``svd`` return NumPy's named tuples
  (``SlogdetResult``, ``EighResult``, ``QRResult``, ``SVDResult``).
  ``np.linalg.lstsq`` is not modelled: its residuals' shape and its rank
  depend on the values.
- ``np.diagonal`` / ``ndarray.diagonal``, ``np.trace`` / ``ndarray.trace``
  and ``np.diag`` are exact compositions of existing ops: the two axes moved
  last and flattened, the diagonal picked with ``take`` (constant indices),
  ``trace`` summing it as NumPy's ``trace`` does; ``np.diag`` of a vector puts
  it on the k-th diagonal of a zero matrix with ``take`` and ``where``.

A use frame does not model (``out=``, a ``UPLO`` NumPy rejects, ...) raises
``NotModelled`` (NumPy runs the call).
"""
from __future__ import annotations

import operator

import numpy as np

from . import functions as F
from ._numpy_functions import NotModelled, _int
from .dtypes import from_numpy
from .errors import FrameValueError
from .functions._core import apply, apply1, as_array, schema_attrs
from .ops.common import normalize_axis

__all__ = ["LINALG_FUNCTIONS"]

_linalg = getattr(np.linalg, "_linalg", None) or np.linalg.linalg  # NumPy 1.x: numpy.linalg.linalg
_EighResult = getattr(_linalg, "EighResult", None)
_SlogdetResult = getattr(_linalg, "SlogdetResult", None)
_QRResult = getattr(_linalg, "QRResult", None)
_SVDResult = getattr(_linalg, "SVDResult", None)
_NO_VALUE = getattr(np, "_NoValue", None)


def inv(a):
    """``np.linalg.inv``: the inverse of each matrix of the last two axes."""
    return apply1("inv", (as_array(a),), {})


def solve(a, b):
    """``np.linalg.solve``: x with ``a @ x == b`` (a 1-D b is one right-hand side)."""
    return apply1("solve", (as_array(a), as_array(b)), {})


def det(a):
    """``np.linalg.det``."""
    return apply1("det", (as_array(a),), {})


def slogdet(a):
    """``np.linalg.slogdet``: ``SlogdetResult(sign, logabsdet)``."""
    sign, logabsdet = apply("slogdet", (as_array(a),), {})
    return (sign, logabsdet) if _SlogdetResult is None else _SlogdetResult(sign, logabsdet)


def _uplo(function: str, UPLO) -> str:
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise NotModelled(function, f"with UPLO={UPLO!r}")  # NumPy raises its own ValueError
    return UPLO.upper()


def eigh(a, UPLO="L"):
    """``np.linalg.eigh``: ``EighResult(eigenvalues, eigenvectors)``."""
    w, v = apply("eigh", (as_array(a),), schema_attrs("eigh", UPLO=_uplo("linalg.eigh", UPLO)))
    return (w, v) if _EighResult is None else _EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """``np.linalg.eigvalsh``: the eigenvalues, ascending."""
    return apply1("eigvalsh", (as_array(a),),
                  schema_attrs("eigvalsh", UPLO=_uplo("linalg.eigvalsh", UPLO)))


def cholesky(a, /, *, upper=False):
    """``np.linalg.cholesky``: the lower (or upper) triangular factor."""
    if type(upper) not in (bool, np.bool_):
        raise NotModelled("linalg.cholesky", f"with upper={upper!r}")
    return apply1("cholesky", (as_array(a),), schema_attrs("cholesky", upper=bool(upper)))


def qr(a, mode="reduced"):
    """``np.linalg.qr``: ``QRResult(Q, R)``, or R alone for ``mode='r'``."""
    if mode not in ("reduced", "complete", "r"):
        raise NotModelled("linalg.qr", f"with mode={mode!r}")
    outs = apply("qr", (as_array(a),), schema_attrs("qr", mode=mode))
    if mode == "r":
        return outs[0]
    return tuple(outs) if _QRResult is None else _QRResult(*outs)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``np.linalg.svd``: ``SVDResult(U, S, Vh)``, or S alone without ``compute_uv``."""
    flags = {"full_matrices": full_matrices, "compute_uv": compute_uv, "hermitian": hermitian}
    for name, value in flags.items():
        if type(value) not in (bool, np.bool_):
            raise NotModelled("linalg.svd", f"with {name}={value!r}")
    outs = apply("svd", (as_array(a),),
                 schema_attrs("svd", **{k: bool(v) for k, v in flags.items()}))
    if not compute_uv:
        return outs[0]
    return tuple(outs) if _SVDResult is None else _SVDResult(*outs)


def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """``np.linalg.pinv`` with a scalar ``rcond``/``rtol`` (NumPy's defaults:
    1e-15, or ``max(M, N) * eps`` for ``rtol=None``)."""
    if type(hermitian) not in (bool, np.bool_):
        raise NotModelled("linalg.pinv", f"with hermitian={hermitian!r}")
    x = as_array(a)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            if x.ndim < 2 or x.dtype.kind not in "fc":
                raise NotModelled("linalg.pinv", f"with rtol=None of a {x.dtype} array")
            rcond = max(x.shape[-2:]) * float(np.finfo(x.dtype).eps)
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise NotModelled("linalg.pinv", "with both rcond= and rtol=")  # NumPy raises
    if not isinstance(rcond, (int, float, np.integer, np.floating)) or \
            isinstance(rcond, (bool, np.bool_)):
        raise NotModelled("linalg.pinv", f"with rcond={rcond!r}")
    return apply1("pinv", (x,), schema_attrs("pinv", rcond=float(rcond),
                                               hermitian=bool(hermitian)))


# --------------------------------------------------------------------------- diagonals

def _diagonal_indices(n: int, m: int, offset: int) -> np.ndarray:
    """Flat positions (row * m + col) of the ``offset`` diagonal of an n x m matrix."""
    row0, col0 = max(0, -offset), max(0, offset)
    length = max(0, min(n - row0, m - col0))
    r = np.arange(length, dtype=np.int64)
    return (r + row0) * m + (r + col0)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` / ``ndarray.diagonal``: the axes ``axis1`` and ``axis2``
    removed and the diagonal appended as the last axis."""
    if not (_int(offset) and _int(axis1) and _int(axis2)):
        raise NotModelled("diagonal", f"with offset={offset!r}, axis1={axis1!r}, axis2={axis2!r}")
    x = as_array(a)
    nd = x.ndim
    if nd < 2:
        raise FrameValueError("diag requires an array of at least two dimensions")
    ax1 = normalize_axis("diagonal", operator.index(axis1), nd)
    ax2 = normalize_axis("diagonal", operator.index(axis2), nd)
    if ax1 == ax2:
        raise FrameValueError("axis1 and axis2 cannot be the same")
    rest = [i for i in range(nd) if i not in (ax1, ax2)]
    n, m = x.shape[ax1], x.shape[ax2]
    moved = F.transpose(a, *rest, ax1, ax2) if rest + [ax1, ax2] != list(range(nd)) else a
    flat = F.reshape(moved, *[x.shape[i] for i in rest], n * m)
    return F.take(flat, _diagonal_indices(n, m, int(offset)), axis=len(rest))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """``np.trace``: the sums along diagonals (``diagonal(...).sum(-1, dtype)``)."""
    if out is not None:
        raise NotModelled("trace", "with out=")
    d = diagonal(a, offset, axis1, axis2)
    if dtype is None:
        return F.sum(d, axis=-1)
    dt = from_numpy(np.dtype(dtype))
    if as_array(d).dtype != dt.np:
        d = F.astype(d, dt)
    result = F.sum(d, axis=-1)
    return result if as_array(result).dtype == dt.np else F.astype(result, dt)


def diag(v, k=0):
    """``np.diag``: the k-th diagonal of a 2-D array, or a 1-D array placed on
    the k-th diagonal of a square zero matrix."""
    if not _int(k):
        raise NotModelled("diag", f"with k={k!r}")
    k = int(k)
    x = as_array(v)
    if x.ndim == 2:
        return diagonal(v, k, 0, 1)
    if x.ndim != 1:
        raise FrameValueError("Input must be 1- or 2-d.")
    n = x.shape[0]
    size = n + abs(k)
    if n == 0:
        return F.full((size, size), 0, from_numpy(x.dtype))
    rows, cols = np.indices((size, size))
    on = cols - rows == k
    index = np.where(on, np.minimum(rows, cols), 0).astype(np.int64)
    return F.where(on, F.take(v, index, axis=0), np.zeros((), x.dtype))


def diagflat(v, k=0):
    """``np.diagflat``: ``v`` flattened in C order, placed on the k-th diagonal of a
    square zero matrix (NumPy's ``diag`` of ``v.ravel()``: the same values)."""
    if not _int(k):
        raise NotModelled("diagflat", f"with k={k!r}")
    x = as_array(v)
    size = int(np.prod(x.shape, dtype=np.int64))
    return diag(v if x.ndim == 1 else F.reshape(v, (size,)), k)


LINALG_FUNCTIONS: dict = {
    np.linalg.inv: inv, np.linalg.solve: solve, np.linalg.det: det, np.linalg.slogdet: slogdet,
    np.linalg.eigh: eigh, np.linalg.eigvalsh: eigvalsh, np.linalg.cholesky: cholesky,
    np.linalg.qr: qr, np.linalg.svd: svd, np.linalg.pinv: pinv,
    np.diagonal: diagonal, np.trace: trace, np.diag: diag, np.diagflat: diagflat,
}
