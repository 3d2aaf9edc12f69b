"""Linear algebra: matmul with NumPy's full rules, and ``numpy.linalg``'s
inv, solve, det, slogdet, eigh, eigvalsh, cholesky, qr, svd and pinv.

matmul: 1-D operands are promoted (a vector on the left gets a leading 1, on
the right a trailing 1) and the added dimension is removed from the result;
leading (batch) dimensions broadcast; dtypes resolve as ``numpy.matmul``'s
loops do (bool @ bool is bool, int32 @ float16 is float64, ...).

The ``numpy.linalg`` ops work on the last two axes (the leading ones are a
batch, as NumPy's gufuncs batch) and their reference kernels are NumPy's own
functions, so values, batching and run-time errors are NumPy's: a singular
matrix raises ``numpy.linalg.LinAlgError`` ("Singular matrix"), so does a
matrix that is not positive definite for cholesky (as ``FrameLinAlgError``,
which is both a LinAlgError and a frame error).  The ops that raise so carry
the schema trait ``may_raise`` (capture runs the plain function when such a
graph raises).  Dtypes follow NumPy's linalg rule (``linalg_dtype``): bool and integers compute in float64, float32,
float64, complex64 and complex128 keep their dtype, float16 is refused with
NumPy's TypeError; eigenvalues and log-determinants are real.  Shapes that can
never work raise at trace time with NumPy's exception type: ``FrameLinAlgError``
(a ``numpy.linalg.LinAlgError``) for an operand of rank < 2 or a non-square
matrix, FrameValueError (a ValueError) for solve's mismatched operands.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import DType, complex64, complex128, float32, float64, from_numpy
from ..ir.types import TensorType
from ..errors import FrameTypeError, FrameValueError
from .common import broadcast_shapes, ufunc_result_dtype
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["FrameLinAlgError", "linalg_dtype", "LINALG_OPS"]


class FrameLinAlgError(FrameValueError, np.linalg.LinAlgError):
    """NumPy's LinAlgError as frame raises it (a frame error too, so eager op
    errors keep their type): an operand whose shape ``numpy.linalg`` always
    rejects (rank < 2, not square), or a kernel's LinAlgError (a singular
    matrix), with NumPy's message."""


def _lapack(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` (a ``numpy.linalg`` function), its LinAlgError
    raised as a FrameLinAlgError."""
    try:
        return fn(*args, **kwargs)
    except np.linalg.LinAlgError as e:
        raise FrameLinAlgError(str(e)) from e


def _fmt(shape) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _matmul_infer(types, attrs):
    a, b = types
    for i, t in enumerate(types):
        if t.rank == 0:
            raise FrameValueError(f"matmul: operand {i} is zero-dimensional ({t}); matmul needs "
                                  f"at least one dimension (use mul for scalars)")
    a_shape = (1,) + a.shape if a.rank == 1 else a.shape
    b_shape = b.shape + (1,) if b.rank == 1 else b.shape
    if a_shape[-1] != b_shape[-2]:
        raise FrameValueError(f"matmul: shapes {_fmt(a.shape)} and {_fmt(b.shape)} are not "
                              f"aligned: the contracted dimensions are {a_shape[-1]} (last of "
                              f"operand 0) and {b_shape[-2]} (operand 1)")
    try:
        batch = broadcast_shapes("matmul", a_shape[:-2], b_shape[:-2])
    except FrameValueError:
        raise FrameValueError(f"matmul: the batch dimensions of shapes {_fmt(a.shape)} and "
                              f"{_fmt(b.shape)} cannot be broadcast together") from None
    shape = batch + ((a_shape[-2],) if a.rank > 1 else ()) + ((b_shape[-1],) if b.rank > 1 else ())
    return [TensorType(ufunc_result_dtype("matmul", np.matmul, [a.dtype, b.dtype]), shape)]


def _matmul_kernel(ins, attrs):
    return (np.asarray(np.matmul(ins[0], ins[1])),)


register(OpSchema("matmul", 2, _matmul_infer, _matmul_kernel, traits=("broadcast",),
                  doc="numpy.matmul: 1-D promotion, batch broadcasting, NumPy dtypes."))


def _gram_infer(types, attrs):
    (t,) = types
    if t.rank < 2 or t.dtype.kind not in "fc" or (attrs["dot"] and t.rank != 2):
        raise FrameValueError(f"gram: needs a float or complex operand of rank >= 2 (2 with "
                              f"dot), got {t}")
    n = t.shape[-1] if attrs["transposed_first"] else t.shape[-2]
    return [TensorType(t.dtype, t.shape[:-2] + (n, n))]


def _gram_kernel(ins, attrs):
    x = np.asarray(ins[0])
    t = np.swapaxes(x, -1, -2)   # a view: NumPy sees one array and its transpose (syrk)
    product = np.dot if attrs["dot"] else np.matmul
    return (np.asarray(product(t, x) if attrs["transposed_first"] else product(x, t)),)


register(OpSchema("gram", 1, _gram_infer, _gram_kernel,
                  attrs={"transposed_first": AttrSpec("bool"), "dot": AttrSpec("bool")},
                  doc="numpy.matmul (numpy.dot with dot) of x and its own transpose (last "
                      "two axes swapped): x.T @ x (transposed_first) or x @ x.T. NumPy "
                      "multiplies an array by a view of itself with BLAS's syrk, which "
                      "rounds unlike the gemm of two arrays; canonicalize makes this op of "
                      "such a product."))


def _vector_norm_infer(types, attrs):
    (t,) = types
    if t.dtype.kind != "f":
        raise FrameValueError(f"vector_norm: needs a real float operand, got {t}")
    return [TensorType(t.dtype, ())]


def _vector_norm_kernel(ins, attrs):
    return (np.asarray(np.linalg.norm(ins[0])),)


register(OpSchema("vector_norm", 1, _vector_norm_infer, _vector_norm_kernel,
                  doc="numpy.linalg.norm(x) of real floats, no axis, ord None: the square "
                      "root of BLAS's dot of x.ravel(order='K') with itself (the elements "
                      "in memory order, so the sum's order follows x's layout)."))


# --------------------------------------------------------------------------- numpy.linalg

# the ops below (frame/_numpy_linalg.py maps numpy.linalg's functions to them)
LINALG_OPS = ("inv", "solve", "det", "slogdet", "eigh", "eigvalsh", "cholesky", "qr", "svd",
              "pinv")

_REAL = {complex64.name: float32, complex128.name: float64}


def linalg_dtype(op: str, *dtypes: DType) -> DType:
    """The dtype ``numpy.linalg`` computes in for operands of ``dtypes``
    (NumPy's ``_commonType``): float64 when any operand is bool, an integer or
    float64/complex128, else float32; complex when any operand is complex.
    float16 is refused as NumPy refuses it (TypeError)."""
    double = complex_ = False
    for dt in dtypes:
        if dt.kind not in "fc":
            double = True
        elif dt.itemsize == 2:
            raise FrameTypeError(f"{op}: array type float16 is unsupported in linalg")
        else:
            double |= dt.name in ("float64", "complex128")
            complex_ |= dt.kind == "c"
    if complex_:
        return complex128 if double else complex64
    return float64 if double else float32


def real_dtype(dt: DType) -> DType:
    """The real dtype of ``dt``'s values (eigenvalues, log-determinants)."""
    return _REAL.get(dt.name, dt)


def _square(op: str, t: TensorType) -> None:
    if t.rank < 2:
        raise FrameLinAlgError(f"{op}: {t.rank}-dimensional array given. Array must be at least "
                               f"two-dimensional")
    if t.shape[-1] != t.shape[-2]:
        raise FrameLinAlgError(f"{op}: Last 2 dimensions of the array must be square (got "
                               f"{_fmt(t.shape)})")


def _check_uplo(op: str, attrs) -> None:
    if attrs["UPLO"] not in ("L", "U"):
        raise FrameValueError(f"{op}: UPLO argument must be 'L' or 'U', got {attrs['UPLO']!r}")


def _cast(x, dt: DType) -> np.ndarray:
    arr = np.asarray(x, dtype=dt.np)  # a 0-d result (det of one matrix) stays 0-d
    return arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)


def _square_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        _square(op, t)
        return [TensorType(linalg_dtype(op, t.dtype), t.shape)]
    return infer


def _inv_kernel(ins, attrs):
    return (_cast(_lapack(np.linalg.inv, ins[0]), linalg_dtype("inv", _dt(ins[0]))),)


def _dt(x) -> DType:
    return from_numpy(np.asarray(x).dtype)


register(OpSchema("inv", 1, _square_infer("inv"), _inv_kernel, traits=("may_raise",),
                  doc="numpy.linalg.inv(a): the inverse of each matrix of the last two axes; a "
                      "singular matrix raises numpy.linalg.LinAlgError."))


def _solve_infer(types, attrs):
    a, b = types
    _square("solve", a)
    dt = linalg_dtype("solve", a.dtype, b.dtype)
    n = a.shape[-1]
    if b.rank == 0:
        raise FrameValueError("solve: operand 1 (b) must be at least one-dimensional")
    if b.rank == 1:  # NumPy 2: b is a vector exactly when it is 1-D
        if b.shape[0] != n:
            raise FrameValueError(f"solve: b of shape {_fmt(b.shape)} does not match the "
                                  f"{n}x{n} matrices of a {_fmt(a.shape)}")
        return [TensorType(dt, a.shape[:-1])]
    if b.shape[-2] != n:
        raise FrameValueError(f"solve: b of shape {_fmt(b.shape)} does not match the {n}x{n} "
                              f"matrices of a {_fmt(a.shape)} (its second-to-last dimension "
                              f"must be {n})")
    try:
        batch = broadcast_shapes("solve", a.shape[:-2], b.shape[:-2])
    except FrameValueError:
        raise FrameValueError(f"solve: the batch dimensions of a {_fmt(a.shape)} and b "
                              f"{_fmt(b.shape)} cannot be broadcast together") from None
    return [TensorType(dt, batch + b.shape[-2:])]


def _solve_kernel(ins, attrs):
    dt = linalg_dtype("solve", _dt(ins[0]), _dt(ins[1]))
    return (_cast(_lapack(np.linalg.solve, ins[0], ins[1]), dt),)


register(OpSchema("solve", 2, _solve_infer, _solve_kernel, traits=("may_raise",),
                  doc="numpy.linalg.solve(a, b): x with a @ x == b; a 1-D b is one right-hand "
                      "side, else the last two axes of b are a matrix of them; batches "
                      "broadcast; a singular a raises numpy.linalg.LinAlgError."))


def _det_infer(types, attrs):
    (t,) = types
    _square("det", t)
    return [TensorType(linalg_dtype("det", t.dtype), t.shape[:-2])]


def _det_kernel(ins, attrs):
    return (_cast(_lapack(np.linalg.det, ins[0]), linalg_dtype("det", _dt(ins[0]))),)


register(OpSchema("det", 1, _det_infer, _det_kernel,
                  doc="numpy.linalg.det(a): the determinant of each matrix of the last two "
                      "axes (LU factorisation, as NumPy computes it)."))


def _slogdet_infer(types, attrs):
    (t,) = types
    _square("slogdet", t)
    dt = linalg_dtype("slogdet", t.dtype)
    return [TensorType(dt, t.shape[:-2]), TensorType(real_dtype(dt), t.shape[:-2])]


def _slogdet_kernel(ins, attrs):
    dt = linalg_dtype("slogdet", _dt(ins[0]))
    sign, logabsdet = _lapack(np.linalg.slogdet, ins[0])
    return _cast(sign, dt), _cast(logabsdet, real_dtype(dt))


register(OpSchema("slogdet", 1, _slogdet_infer, _slogdet_kernel,
                  doc="numpy.linalg.slogdet(a): (sign, logabsdet) of each determinant; a "
                      "singular matrix gives sign 0 and logabsdet -inf."))


def _eigh_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        _square(op, t)
        _check_uplo(op, attrs)
        dt = linalg_dtype(op, t.dtype)
        w = TensorType(real_dtype(dt), t.shape[:-1])
        return [w, TensorType(dt, t.shape)] if op == "eigh" else [w]
    return infer


def _eigh_kernel(ins, attrs):
    dt = linalg_dtype("eigh", _dt(ins[0]))
    w, v = _lapack(np.linalg.eigh, ins[0], UPLO=attrs["UPLO"])
    return _cast(w, real_dtype(dt)), _cast(v, dt)


def _eigvalsh_kernel(ins, attrs):
    dt = linalg_dtype("eigvalsh", _dt(ins[0]))
    return (_cast(_lapack(np.linalg.eigvalsh, ins[0], UPLO=attrs["UPLO"]), real_dtype(dt)),)


register(OpSchema("eigh", 1, _eigh_infer("eigh"), _eigh_kernel,
                  attrs={"UPLO": AttrSpec("str", "L")}, traits=("nondifferentiable", "may_raise"),
                  doc="numpy.linalg.eigh(a, UPLO): eigenvalues (ascending) and eigenvectors "
                      "(columns) of each Hermitian matrix, read from its lower ('L') or upper "
                      "('U') triangle."))
register(OpSchema("eigvalsh", 1, _eigh_infer("eigvalsh"), _eigvalsh_kernel,
                  attrs={"UPLO": AttrSpec("str", "L")}, traits=("nondifferentiable", "may_raise"),
                  doc="numpy.linalg.eigvalsh(a, UPLO): the eigenvalues (ascending) of each "
                      "Hermitian matrix, read from its lower ('L') or upper ('U') triangle."))


def _cholesky_kernel(ins, attrs):
    dt = linalg_dtype("cholesky", _dt(ins[0]))
    return (_cast(_lapack(np.linalg.cholesky, ins[0], upper=attrs["upper"]), dt),)


register(OpSchema("cholesky", 1, _square_infer("cholesky"), _cholesky_kernel,
                  attrs={"upper": AttrSpec("bool", False)},
                  traits=("nondifferentiable", "may_raise"),
                  doc="numpy.linalg.cholesky(a, upper): the lower (or, with upper, upper) "
                      "triangular factor of each Hermitian positive-definite matrix; one that "
                      "is not positive definite raises numpy.linalg.LinAlgError."))


# --------------------------------------------------------------------------- qr, svd, pinv

QR_MODES = ("reduced", "complete", "r")


def _matrices(op: str, t: TensorType) -> None:
    if t.rank < 2:
        raise FrameLinAlgError(f"{op}: {t.rank}-dimensional array given. Array must be at least "
                               f"two-dimensional")


def _qr_infer(types, attrs):
    (t,) = types
    _matrices("qr", t)
    mode = attrs["mode"]
    if mode not in QR_MODES:
        raise FrameValueError(f"qr: mode must be one of {QR_MODES}, got {mode!r}")
    dt = linalg_dtype("qr", t.dtype)
    *batch, m, n = t.shape
    k = m if mode == "complete" else min(m, n)
    r = TensorType(dt, (*batch, k, n))
    return [r] if mode == "r" else [TensorType(dt, (*batch, m, k)), r]


def _qr_kernel(ins, attrs):
    dt = linalg_dtype("qr", _dt(ins[0]))
    result = _lapack(np.linalg.qr, ins[0], mode=attrs["mode"])
    if attrs["mode"] == "r":
        return (_cast(result, dt),)
    return _cast(result[0], dt), _cast(result[1], dt)


register(OpSchema("qr", 1, _qr_infer, _qr_kernel, attrs={"mode": AttrSpec("str", "reduced")},
                  traits=("nondifferentiable", "may_raise"),
                  doc="numpy.linalg.qr(a, mode): Q (orthonormal columns) and R (upper "
                      "triangular) of each matrix of the last two axes, by LAPACK's Householder "
                      "factorisation as NumPy calls it; mode 'reduced', 'complete' or 'r' "
                      "(R only)."))


def _svd_infer(types, attrs):
    (t,) = types
    _matrices("svd", t)
    if attrs["hermitian"]:
        _square("svd", t)
    dt = linalg_dtype("svd", t.dtype)
    *batch, m, n = t.shape
    k = min(m, n)
    s = TensorType(real_dtype(dt), (*batch, k))
    if not attrs["compute_uv"]:
        return [s]
    full = attrs["full_matrices"]
    return [TensorType(dt, (*batch, m, m if full else k)), s,
            TensorType(dt, (*batch, n if full else k, n))]


def _svd_kernel(ins, attrs):
    dt = linalg_dtype("svd", _dt(ins[0]))
    result = _lapack(np.linalg.svd, ins[0], full_matrices=attrs["full_matrices"],
                     compute_uv=attrs["compute_uv"], hermitian=attrs["hermitian"])
    if not attrs["compute_uv"]:
        return (_cast(result, real_dtype(dt)),)
    u, s, vh = result
    return _cast(u, dt), _cast(s, real_dtype(dt)), _cast(vh, dt)


register(OpSchema("svd", 1, _svd_infer, _svd_kernel,
                  attrs={"full_matrices": AttrSpec("bool", True),
                         "compute_uv": AttrSpec("bool", True),
                         "hermitian": AttrSpec("bool", False)},
                  traits=("nondifferentiable", "may_raise"),
                  doc="numpy.linalg.svd(a, full_matrices, compute_uv, hermitian): U, the "
                      "singular values (descending) and Vh of each matrix of the last two axes "
                      "(or the singular values alone without compute_uv); an SVD that does not "
                      "converge raises numpy.linalg.LinAlgError."))


def _pinv_infer(types, attrs):
    (t,) = types
    _matrices("pinv", t)
    if attrs["hermitian"]:
        _square("pinv", t)
    if 0 in t.shape[-2:]:
        raise FrameValueError("pinv: of an empty matrix NumPy returns an uninitialised array "
                              "of the input's dtype")
    *batch, m, n = t.shape
    return [TensorType(linalg_dtype("pinv", t.dtype), (*batch, n, m))]


def _pinv_kernel(ins, attrs):
    dt = linalg_dtype("pinv", _dt(ins[0]))
    return (_cast(_lapack(np.linalg.pinv, ins[0], rcond=attrs["rcond"],
                          hermitian=attrs["hermitian"]), dt),)


register(OpSchema("pinv", 1, _pinv_infer, _pinv_kernel,
                  attrs={"rcond": AttrSpec("float", 1e-15), "hermitian": AttrSpec("bool", False)},
                  traits=("nondifferentiable", "may_raise"),
                  doc="numpy.linalg.pinv(a, rcond, hermitian): the Moore-Penrose pseudo-inverse "
                      "of each matrix of the last two axes (NumPy's SVD, singular values at or "
                      "below rcond times the largest dropped)."))
