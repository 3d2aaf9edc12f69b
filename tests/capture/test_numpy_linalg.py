"""``numpy.linalg`` (inv, solve, det, slogdet, eigh, eigvalsh, cholesky) and
NumPy's diagonal helpers under capture and on frame Tensors.

- A graph holding a linalg op that raises at run time (a singular matrix, a
  matrix that is not positive definite) raises the plain function's
  exception after the plain function's side effects: the entry runs the plain
  function instead (capture/codegen.py, schema trait ``may_raise``).
- Shapes NumPy always rejects, float16, and UPLO values NumPy rejects raise
  NumPy's exceptions, jitted as natively.
- ``np.diagonal``/``ndarray.diagonal``/``np.diag`` of a 2-D array are NumPy
  read-only views: writing them raises, and they show later writes into
  their array.
- Eagerly, ``np.linalg.*`` of a frame Tensor runs the ops (Tensors back), with
  gradients for inv/solve/det/slogdet and a clear error for eigh/cholesky.
The realistic functions (least squares, PCA, Newton steps, ...) are the
coverage corpus in test_coverage_linalg.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame
from frame.autograd import NonDifferentiableError

from .helpers import assert_same_as_eager

SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
GOOD = np.array([[2.0, 1.0], [1.0, 3.0]])


def _run(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared below
        return None, e


def _same_raise(fn, good_args, bad_args):
    """``fn`` jitted: first called on ``good_args`` (compiled), then on
    ``bad_args`` (the graph raises): same exception, same argument mutation and
    side effects as the plain function."""
    jitted = frame.jit(fn)
    copies = lambda args: [a.copy() if isinstance(a, (np.ndarray, list)) else a  # noqa: E731
                           for a in args]
    n_ok, j_ok = _run(fn, *copies(good_args)), _run(jitted, *copies(good_args))
    assert n_ok[1] is None and j_ok[1] is None, (n_ok, j_ok)
    np.testing.assert_allclose(j_ok[0], n_ok[0], rtol=1e-6)
    n_args, j_args = copies(bad_args), copies(bad_args)
    _, n_exc = _run(fn, *n_args)
    _, j_exc = _run(jitted, *j_args)
    assert n_exc is not None and j_exc is not None, (n_exc, j_exc)
    assert type(j_exc) is type(n_exc) and str(j_exc) == str(n_exc), (n_exc, j_exc)
    for n, j in zip(n_args, j_args):
        if isinstance(n, np.ndarray):
            np.testing.assert_array_equal(j, n)
        else:
            assert j == n
    assert jitted._frame_cache.entries and not jitted._frame_cache.entries[0].native


def inverse_after_update(a, log):
    log.append("inverting")
    a[0, 0] += 1.0
    return np.linalg.inv(a) * 2.0


def solve_after_update(a, b, log):
    log.append(len(log))
    b *= 2.0
    return np.linalg.solve(a, b) + 1.0


def cholesky_after_update(a, log):
    log.append("factor")
    a -= 0.5 * np.eye(2)
    return np.linalg.cholesky(a).sum()


def test_singular_inverse_raises_after_the_plain_side_effects():
    _same_raise(inverse_after_update, (GOOD, []), (SINGULAR - np.diag([1.0, 0.0]), []))


def test_singular_solve_raises_after_the_plain_side_effects():
    _same_raise(solve_after_update, (GOOD, np.ones(2), []), (SINGULAR, np.ones(2), ["x"]))


def test_cholesky_of_an_indefinite_matrix_raises_after_the_plain_side_effects():
    _same_raise(cholesky_after_update, (GOOD, []), (np.array([[0.5, 2.0], [2.0, 0.5]]), []))


def test_a_singular_matrix_in_det_and_slogdet_is_a_value():
    def f(a):
        return np.linalg.det(a), np.linalg.slogdet(a)
    assert_same_as_eager(f, SINGULAR)


@pytest.mark.parametrize("fn_name", ["inv", "det", "slogdet", "eigh", "eigvalsh", "cholesky", "qr",
                                     "svd", "pinv"])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (4, 2, 3)])
def test_shapes_numpy_rejects_raise_numpys_error(fn_name, shape):
    fn = getattr(np.linalg, fn_name)

    def f(a):
        return fn(a)
    assert_same_as_eager(f, np.ones(shape))


def test_solve_with_mismatched_operands_raises_numpys_error():
    def f(a, b):
        return np.linalg.solve(a, b)
    assert_same_as_eager(f, GOOD, np.ones(3))
    assert_same_as_eager(f, GOOD, np.ones((3, 1)))


def test_float16_is_refused_as_numpy_refuses_it():
    def f(a):
        return np.linalg.inv(a)
    assert_same_as_eager(f, GOOD.astype(np.float16))


def test_uplo_numpy_rejects():
    def f(a):
        return np.linalg.eigvalsh(a, UPLO="X")
    assert_same_as_eager(f, GOOD)


def test_options_frame_does_not_model_are_a_break_naming_the_function():
    def f(a):
        return np.linalg.qr(a, mode="raw")[1] + 1.0
    capture.reset_caches()
    out = frame.explain(f)(GOOD)
    assert [r.reason for r in out.break_reasons] == \
        ["numpy.linalg.qr with mode='raw' has no frame op"]
    assert_same_as_eager(f, GOOD, captured=None)


def test_decompositions_on_tensors_return_numpys_named_tuples():
    a = frame.tensor(np.arange(6.0).reshape(3, 2) + np.eye(3, 2))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    assert type(np.linalg.svd(a)).__name__ == "SVDResult" and isinstance(s, frame.Tensor)
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), a.numpy(), atol=1e-12)
    q, r = np.linalg.qr(a)
    assert type(np.linalg.qr(a)).__name__ == "QRResult"
    np.testing.assert_allclose(q.numpy() @ r.numpy(), a.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.linalg.pinv(a).numpy(), np.linalg.pinv(a.numpy()), rtol=1e-12)


def test_lists_are_converted_as_numpy_converts_them():
    def f(a):
        return np.linalg.solve(a, [1, 2]), np.diag([1.5, 2.0]) @ a, np.trace([[1, 2], [3, 4]])
    assert_same_as_eager(f, GOOD)


# -- diagonals are read-only views -----------------------------------------------------------------

def write_into_diagonal(a):
    d = a.diagonal()
    d[0] = 5.0
    return d


def write_into_diag(a):
    d = np.diag(a)
    d += 1.0
    return d


def diagonal_after_base_write(a):
    d = np.diagonal(a)
    a[1, 1] = -7.0
    return d.sum(), d


def diag_of_vector_is_a_copy(v):
    m = np.diag(v)
    m[0, 0] = 9.0
    return m, v


@pytest.mark.parametrize("fn", [write_into_diagonal, write_into_diag, diagonal_after_base_write,
                                diag_of_vector_is_a_copy])
def test_diagonal_views(fn):
    arg = np.arange(4.0) if fn is diag_of_vector_is_a_copy else np.arange(9.0).reshape(3, 3)
    assert_same_as_eager(fn, arg, captured=None)


def test_diag_of_a_vector_and_diagonal_are_one_graph():
    def f(a, v):
        return np.diag(v, -1)[1:, :3] @ a.diagonal(), np.trace(a, 1)
    capture.reset_caches()
    out = frame.explain(f)(np.arange(9.0).reshape(3, 3), np.ones(3))
    assert out.graph_count == 1 and not out.break_reasons


# -- frame Tensors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize("shape", [(3,), (2, 2), (), (1, 3)])
@pytest.mark.parametrize("k", [0, 1, -2])
def test_diagflat(shape, k, dtype):
    """``np.diagflat`` (the softmax Jacobian ``np.diagflat(s) - s @ s.T``): one graph,
    NumPy's values, dtype and layout."""
    def fn(v):
        return np.diagflat(v * 1, k), np.diagflat(v.T * 1, k)
    v = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype)
    assert_same_as_eager(fn, v, captured=None)
    out = frame.explain(fn)(v)
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def test_numpy_linalg_on_tensors_runs_the_ops():
    a = frame.tensor(GOOD)
    inv = np.linalg.inv(a)
    assert isinstance(inv, frame.Tensor)
    np.testing.assert_allclose(inv.numpy(), np.linalg.inv(GOOD))
    w, v = np.linalg.eigh(a)
    assert isinstance(w, frame.Tensor) and isinstance(v, frame.Tensor)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(GOOD))
    assert isinstance(np.linalg.slogdet(a).logabsdet, frame.Tensor)
    np.testing.assert_allclose(np.trace(a).numpy(), 5.0)
    np.testing.assert_array_equal(np.diag(frame.tensor(np.array([1.0, 2.0]))).numpy(),
                                  np.diag([1.0, 2.0]))
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.inv(frame.tensor(SINGULAR))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        np.linalg.inv(frame.tensor(np.ones((2, 3))))


def test_gradients_of_inv_det_and_solve_on_tensors():
    a = frame.tensor(GOOD, requires_grad=True)
    b = frame.tensor(np.array([1.0, -1.0]), requires_grad=True)
    loss = np.linalg.det(a) + np.linalg.inv(a).sum() + np.linalg.solve(a, b).sum()
    loss.backward()
    inv = np.linalg.inv(GOOD)
    x = np.linalg.solve(GOOD, np.array([1.0, -1.0]))
    gb = np.linalg.solve(GOOD.T, np.ones(2))
    expected_a = np.linalg.det(GOOD) * inv.T - inv.T @ np.ones((2, 2)) @ inv.T - np.outer(gb, x)
    np.testing.assert_allclose(a.grad.numpy(), expected_a, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), gb, rtol=1e-12)


@pytest.mark.parametrize("fn", [np.linalg.eigvalsh, np.linalg.cholesky,
                                lambda a: np.linalg.eigh(a).eigenvectors,
                                lambda a: np.linalg.qr(a).R, lambda a: np.linalg.svd(a).S,
                                np.linalg.pinv])
def test_decompositions_have_no_gradient(fn):
    a = frame.tensor(GOOD, requires_grad=True)
    with pytest.raises(NonDifferentiableError, match="eigh|eigvalsh|cholesky|qr|svd|pinv"):
        fn(a).sum().backward()


def test_singular_constant_matrix_raises_like_numpy_after_side_effects():
    """Every input of the inv is a constant: constant folding leaves the node
    (its kernel raises), the graph raises at run time, the call runs natively."""
    seen = []

    def f(x):
        seen.append(1)
        return x + np.linalg.inv(np.zeros((2, 2)))

    assert_same_as_eager(f, np.ones((2, 2)), captured=None)
    seen.clear()
    with pytest.raises(np.linalg.LinAlgError, match="^Singular matrix$"):
        frame.jit(f)(np.ones((2, 2)))
    assert len(seen) == 1
