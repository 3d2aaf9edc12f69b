"""0-d arrays against NumPy scalars in results.

NumPy decides per function whether a 0-d result is an array or a scalar: a
ufunc or a full reduction gives a scalar (``np.float64``), while ``astype``,
``reshape``, ``.T``, ``np.transpose``, ``np.squeeze`` or ``np.broadcast_to`` of
a 0-d array give a 0-d ``ndarray``, and ``np.float32(a)`` of one gives a scalar
again.  Capture asks NumPy itself, on the meta arrays, whenever a call of NumPy
semantics returns a 0-d array (``InstructionTranslator._numpy_result``); before,
every 0-d result was a scalar, so ``a.astype(np.uint8)`` of a 0-d argument came
back as ``np.uint8`` where NumPy returns an array (found by a random-expression
fuzz)."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


pytestmark = pytest.mark.usefixtures("quiet_fresh_stats")


FUNCTIONS = {
    "astype": lambda a: a.astype(np.uint8),
    "astype_same_dtype_no_copy": lambda a: a.astype(a.dtype, copy=False),
    "astype_then_T": lambda a: a.astype(np.float32).T,
    "T": lambda a: a.T,
    "reshape_0d": lambda a: a.reshape(()),
    "np_transpose": lambda a: np.transpose(a),
    "np_squeeze": lambda a: np.squeeze(a),
    "broadcast_to_0d": lambda a: np.broadcast_to(a, ()),
    "ellipsis_index": lambda a: a[...],
    "empty_tuple_index": lambda a: a[()],
    "copy": lambda a: a.copy(),
    "np_array": lambda a: np.array(a),
    "asarray_dtype": lambda a: np.asarray(a, dtype=np.float32),
    "ufunc": lambda a: a + 1,
    "ufunc_call": lambda a: np.maximum(a, 0),
    "negative": lambda a: -a,
    "full_reduction": lambda a: a.sum(),
    "reduction_no_axes": lambda a: np.sum(a, axis=()),
    "np_scalar_type_of_0d": lambda a: np.float32(a),
    "np_scalar_type_of_sum": lambda a: np.int64(a.sum()),
    "where": lambda a: np.where(a > 0, a, 0),
    "chain": lambda a: (a.astype(np.float64) * 2).astype(np.int8).reshape(()),
    "tuple_of_both": lambda a: (a.astype(np.int16), a * 2, a.T + 1),
}


@pytest.mark.parametrize("dtype", ["int64", "float64", "float32", "bool"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_0d_argument(name, dtype):
    a = np.array(5 if dtype != "bool" else True, dtype=dtype)
    assert_same_as_eager(FUNCTIONS[name], a, captured=None)


@pytest.mark.parametrize("name", ["astype", "T", "reshape_0d", "np_transpose", "np_squeeze",
                                  "copy", "np_array", "np_scalar_type_of_0d", "tuple_of_both"])
def test_numpy_scalar_argument(name):
    """The same functions on a NumPy scalar: ``s.astype`` and ``s.T`` stay scalars."""
    assert_same_as_eager(FUNCTIONS[name], np.float64(2.5), captured=None)


def test_0d_results_of_array_arguments():
    def f(x, v):
        return x.sum(axis=(0, 1)).astype(np.float32), np.cov(v), v.dot(v), np.squeeze(x[:1, :1])
    rng = np.random.default_rng(0)
    assert_same_as_eager(f, rng.random((2, 3)), rng.random(4), captured=None)


AXIS_ON_0D = {
    "sum_axis0": lambda v: v.sum().sum(axis=0),        # a ufunc's reduce: 0 and -1 name the 0-d axis
    "max_axis_minus1": lambda v: np.max(v.max(), axis=-1),
    "sum_axis_tuple": lambda v: np.sum(v.sum(), axis=(0,)),   # AxisError
    "mean_axis0": lambda v: v.std().mean(axis=0),       # AxisError: NumPy counts along the axis
    "np_mean_axis0": lambda v: np.mean(v.max(), axis=0),
    "var_axis_minus1": lambda v: np.var(v.sum(), axis=-1),
    "std_axis0": lambda v: v.sum().std(axis=0),
    "average_axis0": lambda v: np.average(v.sum(), axis=0),
    "mean_no_axes": lambda v: np.mean(v.sum(), axis=()),
}


@pytest.mark.parametrize("name", sorted(AXIS_ON_0D))
def test_axis_of_a_0d_value(name):
    """NumPy's ufunc reductions accept an int axis 0/-1 on a 0-d value; its
    mean/var/std raise AxisError (found by the random-expression fuzz)."""
    assert_same_as_eager(AXIS_ON_0D[name], np.arange(4.0), captured=None)


def write_into_a_scalar(a):
    s = a.sum()
    s[:] = s.ravel()     # TypeError: a NumPy scalar has no item assignment (a break)
    return s


def write_into_a_scalar_reshaped(a):
    s = a.sum()
    r = s.reshape(1)     # a new array, not a view of the scalar
    r[0] = 5
    return s, r


def scalar_T_and_ravel(a):
    s = a.max()
    u = s.ravel()
    u += 1
    return s, s.T, u


@pytest.mark.parametrize("fn", [write_into_a_scalar, write_into_a_scalar_reshaped,
                                scalar_T_and_ravel], ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_arrays_made_from_a_numpy_scalar_are_not_its_views(fn, dtype):
    """A NumPy scalar has no memory to share: ``s.ravel()`` is remade at a break
    by NumPy's own call, not ``np.ndarray.ravel(s)`` (which raised a TypeError of
    its own; found by the random-expression fuzz)."""
    assert_same_as_eager(fn, np.array([1, 2], dtype), captured=None)


def _write_into_asarray(a):
    s = a.sum()
    z = np.asarray(s)    # a new 0-d array: writing it leaves the scalar alone
    z[...] = 7
    z += 1
    return s, z, type(z)


ARRAYS_OF_A_SCALAR = {
    "asarray": lambda a: (np.asarray(a.sum()), type(np.asarray(a.sum()))),
    "asarray_arithmetic": lambda a: (np.asarray(a.sum()) + 1, type(np.asarray(a.max()) * 2)),
    "asanyarray": lambda a: np.asanyarray(a.min()),
    "array_dtype": lambda a: np.array(a.max(), dtype=np.float32),
    "array_dtype_overflowing_cast": lambda a: np.array(a.max() * 1e10, dtype=np.int8),
    "asarray_dtype_int": lambda a: np.asarray(a.mean(), dtype=np.int64),
    "asarray_dtype_bool": lambda a: np.asarray(a.sum(), dtype=bool),
    "asarray_order": lambda a: np.asarray(a.sum(), order="F") * a,
    "copy": lambda a: np.copy(a.sum()),
    "atleast": lambda a: (np.atleast_1d(a.sum()), np.atleast_2d(a.min()), np.atleast_3d(a.max())),
    "scalar_of_index": lambda a: np.asarray(a[0, 1]) * a,
    "write_into_asarray": _write_into_asarray,
}


@pytest.mark.parametrize("dtype", ["int64", "float64", "float32"])
@pytest.mark.parametrize("name", sorted(ARRAYS_OF_A_SCALAR))
def test_array_of_a_numpy_scalar(name, dtype):
    """``np.asarray``/``np.array``/``np.copy``/``np.atleast_<n>d`` of a NumPy scalar
    made in the function: a new array of its value, in the graph (they were breaks,
    "numpy.asarray on a tensor has no frame op")."""
    a = (np.arange(6).reshape(2, 3) - 2).astype(dtype)
    fn = ARRAYS_OF_A_SCALAR[name]
    with np.errstate(invalid="ignore"):
        assert_same_as_eager(fn, a, captured=None)
        out = frame.explain(fn)(a.copy())
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


@pytest.mark.parametrize("fn", [lambda a: np.array(a.sum(), ndmin=2),
                                lambda a: np.array(a.sum(), copy=False)])
def test_array_of_a_numpy_scalar_not_modelled(fn):
    """``ndmin=`` and ``copy=False`` (NumPy raises) stay NumPy's calls."""
    assert_same_as_eager(fn, np.arange(4.0), captured=None)
