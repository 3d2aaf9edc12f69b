"""Operators under capture: binary, unary, in-place and comparison operators on
frame Tensors, ndarrays, NumPy scalars and Python scalars, alone and mixed, with
NumPy's result types and NEP 50 weak Python scalars."""
from __future__ import annotations

import numpy as np
import pytest

import frame

from .helpers import array, assert_same_as_eager, tensor

FLOATS = ["float32", "float64"]
NUMERIC = ["float32", "float64", "int64", "int32"]


# -- binary operators on two tensors ---------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_add(dtype):
    assert_same_as_eager(lambda x, y: x + y, tensor(dtype=dtype), tensor(dtype=dtype, seed=1))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_sub(dtype):
    assert_same_as_eager(lambda x, y: x - y, tensor(dtype=dtype), tensor(dtype=dtype, seed=1))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_mul(dtype):
    assert_same_as_eager(lambda x, y: x * y, tensor(dtype=dtype), tensor(dtype=dtype, seed=1))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_truediv(dtype):
    assert_same_as_eager(lambda x, y: x / y, tensor(dtype=dtype),
                         tensor(dtype=dtype, seed=1, positive=True))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_floordiv(dtype):
    assert_same_as_eager(lambda x, y: x // y, tensor(dtype=dtype),
                         tensor(dtype=dtype, seed=1, positive=True))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_mod(dtype):
    assert_same_as_eager(lambda x, y: x % y, tensor(dtype=dtype),
                         tensor(dtype=dtype, seed=1, positive=True))


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow(dtype):
    assert_same_as_eager(lambda x, y: x ** y, tensor(dtype=dtype, positive=True),
                         tensor(dtype=dtype, seed=1))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_matmul(dtype):
    assert_same_as_eager(lambda x, y: x @ y, tensor((2, 3), dtype), tensor((3, 4), dtype, seed=1))


def test_broadcasting_add():
    assert_same_as_eager(lambda x, y: x + y, tensor((4, 1)), tensor((3,), seed=1))


def test_broadcast_mismatch_raises_same_error():
    assert_same_as_eager(lambda x, y: x + y, tensor((2, 3)), tensor((4,), seed=1))


def test_mixed_dtypes_promote():
    assert_same_as_eager(lambda x, y: (x + y, x * y), tensor(dtype="int64"),
                         tensor(dtype="float32", seed=1))


# -- Python scalars next to tensors (NEP 50: weak scalars) -------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_tensor_plus_python_int(dtype):
    assert_same_as_eager(lambda x: (x + 2, 3 - x, x * 4), tensor(dtype=dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_tensor_times_python_float_keeps_dtype(dtype):
    assert_same_as_eager(lambda x: (x * 2.5, 0.5 / x, x - 1.25), tensor(dtype=dtype, positive=True))


def test_int_tensor_times_python_float_is_float():
    assert_same_as_eager(lambda x: x * 1.5, tensor(dtype="int64"))


def test_int32_tensor_plus_out_of_range_python_int_raises():
    assert_same_as_eager(lambda x: x + 2 ** 40, tensor(dtype="int32"))


def test_reflected_scalar_ops():
    assert_same_as_eager(lambda x: (2 ** x, 10 // x, 7 % x, 1 / x),
                         tensor(dtype="float32", positive=True))


def test_scalar_argument_is_specialised():
    assert_same_as_eager(lambda x, a, b: x * a + b, tensor(), 3, 0.25)


# -- unary -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", NUMERIC)
def test_neg(dtype):
    assert_same_as_eager(lambda x: -x, tensor(dtype=dtype))


def test_pos_returns_the_same_tensor():
    assert_same_as_eager(lambda x: +x, tensor())


def test_abs_builtin_on_tensor():
    assert_same_as_eager(lambda x: abs(x), tensor())


def test_invert_bool_tensor():
    assert_same_as_eager(lambda x: ~(x > 0), tensor())


def test_invert_float_tensor_raises():
    assert_same_as_eager(lambda x: ~x, tensor())


# -- comparisons ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["<", "<=", "==", "!=", ">", ">="])
def test_compare_tensors(op):
    fn = eval(f"lambda x, y: x {op} y")  # noqa: S307 - one lambda per operator
    assert_same_as_eager(fn, tensor(), tensor(seed=1))


@pytest.mark.parametrize("op", ["<", "<=", "==", "!=", ">", ">="])
def test_compare_tensor_with_scalar(op):
    fn = eval(f"lambda x: (x {op} 0.5, 1 {op} x)")  # noqa: S307
    assert_same_as_eager(fn, tensor())


def test_chained_comparison_on_python_values():
    assert_same_as_eager(lambda x, a: x * (0 < a < 10), tensor(), 4)


def test_compare_result_used_in_where():
    assert_same_as_eager(lambda x, y: frame.where(x > y, x, y), tensor(), tensor(seed=1))


# -- in-place operators -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["+=", "-=", "*="])
def test_inplace_on_input_tensor(op):
    src = f"def f(x, y):\n    x {op} y\n    return x\n"
    ns: dict = {}
    exec(src, ns)  # noqa: S102 - one function per operator
    assert_same_as_eager(ns["f"], tensor(), tensor(seed=1))


def test_itruediv_float_tensor():
    def f(x):
        x /= 4.0
        return x
    assert_same_as_eager(f, tensor())


def test_itruediv_int_tensor_raises():
    def f(x):
        x /= 2
        return x
    assert_same_as_eager(f, tensor(dtype="int64"))


def test_ifloordiv_imod_ipow():
    def f(x, y):
        x //= y
        y %= 3.0
        y **= 2
        return x, y
    assert_same_as_eager(f, tensor(positive=True), tensor(seed=1, positive=True))


def test_imatmul():
    def f(x, w):
        x @= w
        return x
    assert_same_as_eager(f, tensor((3, 3)), tensor((3, 3), seed=1))


def test_inplace_broadcast_to_larger_shape_raises():
    def f(x, y):
        x += y
        return x
    assert_same_as_eager(f, tensor((3,)), tensor((2, 3), seed=1))


def test_inplace_same_kind_cast_into_int_tensor():
    def f(x, y):
        x += y  # int64 += int32 is fine
        return x
    assert_same_as_eager(f, tensor(dtype="int64"), tensor(dtype="int32", seed=1))


def test_rebinding_then_inplace_does_not_touch_the_input():
    def f(x):
        x = x + 1
        x *= 2
        return x
    assert_same_as_eager(f, tensor())


def test_inplace_on_python_scalars_rebinds():
    def f(x, n):
        n += 1
        n *= 3
        return x * n
    assert_same_as_eager(f, tensor(), 2)


# -- ndarrays ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "**"])
def test_ndarray_binary_op(op):
    fn = eval(f"lambda x, y: x {op} y")  # noqa: S307
    assert_same_as_eager(fn, array(positive=True), array(seed=1, positive=True))


def test_ndarray_int_truediv_gives_float64():
    assert_same_as_eager(lambda x, y: x / y, array(dtype="int64"), array(dtype="int64", seed=1))


def test_ndarray_float32_times_python_float_stays_float32():
    assert_same_as_eager(lambda x: x * 2.5, array())


def test_ndarray_matmul():
    assert_same_as_eager(lambda x, y: x @ y, array((2, 3)), array((3, 2), seed=1))


def test_ndarray_bool_bitwise_ops():
    assert_same_as_eager(lambda a, b: ((a > 0) & (b > 0), (a > 0) | (b > 0), (a > 0) ^ (b > 0)),
                         array(), array(seed=1))


def test_ndarray_int_bitwise_ops_are_captured():
    # frame's bitwise ops (bitwise_and/or/xor, invert) have NumPy's semantics
    assert_same_as_eager(lambda a, b: (a & b, a | b, a ^ b, ~a, np.bitwise_and(a, 3)),
                         array(dtype="int64"), array(dtype="int64", seed=1))


def test_ndarray_inplace_add():
    def f(x):
        x += 1.5
        return x
    assert_same_as_eager(f, array())


def test_ndarray_comparison_gives_bool_array():
    assert_same_as_eager(lambda x, y: (x < y, x == y), array(), array(seed=1))


# -- mixed kinds ------------------------------------------------------------------------------------------

def test_tensor_plus_ndarray_is_tensor():
    assert_same_as_eager(lambda t, a: (t + a, a + t, a * t), tensor(), array(seed=1))


def test_numpy_scalar_times_tensor_is_tensor():
    assert_same_as_eager(lambda t, s: (t * s, s * t), tensor(), np.float32(1.5))


def test_numpy_float64_scalar_promotes_ndarray():
    assert_same_as_eager(lambda a, s: a * s, array(), np.float64(1.5))


def test_numpy_scalar_arithmetic_gives_numpy_scalars():
    assert_same_as_eager(lambda s, t: (s * 2, s + t, s / 3, -s), np.float32(1.5), np.int64(3))


def test_zero_d_ndarray_result_is_numpy_scalar():
    assert_same_as_eager(lambda a: (a[0, 1] * 2, a.sum(), a.max() + 1), array())


def test_python_scalar_from_tensor_shape():
    assert_same_as_eager(lambda x: x * x.shape[0] + x.ndim - x.size, tensor())


# -- Python scalars alone ----------------------------------------------------------------------------------

def test_python_int_arithmetic():
    assert_same_as_eager(lambda a, b: (a + b, a - b, a * b, a // b, a % b, a ** b, a / b, -a), 7, 3)


def test_python_float_arithmetic():
    assert_same_as_eager(lambda a, b: (a + b, a * b, a / b, a ** 0.5, a // b, a % b), 7.5, 2.0)


def test_python_bitwise_and_shifts():
    assert_same_as_eager(lambda a, b: (a & b, a | b, a ^ b, a << b, a >> 1, ~a), 12, 3)


def test_python_bool_and_complex():
    assert_same_as_eager(lambda b, c: (b + 1, not b, c * 2, c.real, abs(c)), True, 3 + 4j)


def test_python_zero_division_raises():
    assert_same_as_eager(lambda a, b: a // b, 1, 0)


def test_string_ops():
    assert_same_as_eager(lambda s, n: (s + "!", s * n, s.upper(), s.split("-"), len(s)), "a-b", 2)


def test_divmod_pow_round_builtins():
    assert_same_as_eager(lambda a, b: (divmod(a, b), pow(a, 2, 5), round(a / b, 2)), 17, 5)


def test_long_expression_mixing_everything():
    def f(x, y, a):
        return ((x * 2 - y / (abs(y) + 1)) ** 2 + a * x) @ y.T - (x > 0) * 1.0
    assert_same_as_eager(f, tensor(), tensor(seed=1), 0.5)
