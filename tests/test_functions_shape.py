"""User-facing reduction, shape, linalg and creation functions against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.functions._core import op_handler
from frame.runtime import eager

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


def _data(shape, dtype, seed=0):
    g = np.random.default_rng(seed)
    if dtype == "bool":
        return g.random(shape) > 0.5
    return g.integers(-3, 4, size=shape).astype(dtype)  # exact in every dtype


def _same(got, expected):
    expected = np.asarray(expected)
    assert isinstance(got, frame.Tensor)
    assert got.shape == expected.shape, f"shape {got.shape} != {expected.shape}"
    assert got.numpy().dtype == expected.dtype, f"dtype {got.numpy().dtype} != {expected.dtype}"
    np.testing.assert_allclose(got.numpy().astype(np.float64), expected.astype(np.float64),
                               rtol=1e-3 if expected.dtype == np.float16 else 1e-6)


# --------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_match_numpy(name, dtype):
    a = _data((2, 3, 4), dtype)
    t = frame.tensor(a)
    for axis in (None, 0, -1, (0, 2), (-1, 1), (), [0, 1, 2]):
        for keepdims in (False, True):
            np_axis = tuple(axis) if isinstance(axis, list) else axis
            expected = getattr(np, name)(a, axis=np_axis, keepdims=keepdims)
            _same(getattr(frame, name)(t, axis=axis, keepdims=keepdims), expected)
            _same(getattr(t, name)(axis=axis, keepdims=keepdims), expected)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_reductions_match_numpy(name, dtype):
    a = _data((3, 4, 2), dtype, seed=1)
    t = frame.tensor(a)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            expected = getattr(np, name)(a, axis=axis, keepdims=keepdims).astype(np.int64)
            _same(getattr(frame, name)(t, axis=axis, keepdims=keepdims), expected)
            _same(getattr(t, name)(axis, keepdims=keepdims), expected)


def test_reductions_of_zero_d():
    a = np.array(2.5, np.float32)
    t = frame.tensor(a)
    for axis in (None, 0, -1, ()):
        _same(frame.sum(t, axis=axis), np.sum(a, axis=axis))
        _same(frame.max(t, axis=axis, keepdims=True), np.max(a, axis=axis, keepdims=True))
    _same(frame.argmax(t), np.argmax(a).astype(np.int64))
    _same(frame.argmax(t, axis=0), np.argmax(a, axis=0).astype(np.int64))
    with pytest.raises(frame.FrameAxisError):
        frame.sum(t, axis=1)


def test_numpy_functions_call_the_methods():
    a = _data((3, 4), "int32")
    t = frame.tensor(a)
    for fn in (np.sum, np.mean, np.max, np.min, np.prod, np.argmax, np.argmin):
        index = fn in (np.argmax, np.argmin)  # frame's index dtype is int64 everywhere
        for kwargs in ({}, {"axis": 1}, {"axis": 0, "keepdims": True}):
            expected = np.asarray(fn(a, **kwargs))
            _same(fn(t, **kwargs), expected.astype(np.int64) if index else expected)


def test_dtype_and_out_are_accepted_only_as_none():
    t = frame.tensor([1.0, 2.0])
    assert t.sum(dtype=None, out=None).item() == 3.0
    assert t.mean(axis=None, dtype=None, out=None).item() == 1.5
    with pytest.raises(TypeError, match="sum: the dtype argument is not supported"):
        t.sum(dtype=np.float64)
    with pytest.raises(TypeError, match="max: the out argument"):
        t.max(out=np.zeros(()))
    with pytest.raises(TypeError, match="argmax: the out argument"):
        t.argmax(out=np.zeros((), np.int64))


def test_reduction_errors():
    t = frame.tensor(np.zeros((2, 0), np.float32))
    with pytest.raises(ValueError, match="max.*size 0"):
        frame.max(t)
    with pytest.raises(ValueError, match="min.*size 0"):
        t.min(axis=1)
    assert frame.max(t, axis=0).shape == (0,)
    assert frame.sum(t).item() == 0.0 and frame.prod(t).item() == 1.0
    with pytest.raises(ValueError, match="argmax.*empty"):
        frame.argmax(t, axis=1)
    for bad in (2, -3, (0, 2)):
        with pytest.raises(frame.FrameAxisError) as info:
            frame.sum(t, axis=bad)
        assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)
        assert "sum" in str(info.value) and "out of bounds" in str(info.value)
    with pytest.raises(ValueError, match="repeated axis"):
        frame.mean(t, axis=(0, -2))
    with pytest.raises(TypeError, match="axis must be"):
        frame.sum(t, axis=1.0)
    with pytest.raises(frame.FrameAxisError):
        frame.argmin(t, axis=2)


# --------------------------------------------------------------------------- shape functions

def test_reshape_forms():
    a = np.arange(24, dtype=np.float32)
    t = frame.tensor(a)
    _same(frame.reshape(t, (2, 3, 4)), a.reshape(2, 3, 4))
    _same(frame.reshape(t, 2, 3, 4), a.reshape(2, 3, 4))
    _same(t.reshape(4, -1), a.reshape(4, -1))
    _same(t.reshape((-1, 2, 3)), a.reshape(-1, 2, 3))
    _same(t.reshape([24]), a)
    _same(np.reshape(t, (6, 4)), a.reshape(6, 4))
    _same(frame.reshape(frame.tensor(5.0), 1, 1), np.reshape(np.float32(5.0), (1, 1)))
    _same(frame.reshape(frame.tensor([7]), ()), np.array(7))


def test_reshape_errors_name_the_shapes():
    t = frame.tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"reshape.*: cannot reshape a tensor of shape \[2,3\].*\[4,2\]"):
        t.reshape(4, 2)
    with pytest.raises(ValueError, match="one unknown dimension"):
        t.reshape(-1, -1)
    with pytest.raises(ValueError, match=r"\[4, -1\]"):
        t.reshape(4, -1)
    with pytest.raises(ValueError, match="order"):
        t.reshape(6, order="F")
    with pytest.raises(TypeError, match="shape"):
        t.reshape(2.0, 3)


def test_transpose_forms():
    a = _data((2, 3, 4), "int64")
    t = frame.tensor(a)
    _same(frame.transpose(t), a.T)
    _same(t.T, a.T)
    _same(t.transpose(1, 0, 2), a.transpose(1, 0, 2))
    _same(t.transpose((2, 0, 1)), a.transpose(2, 0, 1))
    _same(t.transpose(-1, 0, -2), a.transpose(-1, 0, -2))
    _same(np.transpose(t), a.T)
    _same(np.transpose(t, (0, 2, 1)), a.transpose(0, 2, 1))
    with pytest.raises(ValueError, match="repeated axis"):
        t.transpose(0, 0, 1)
    with pytest.raises(ValueError, match="do not match"):
        t.transpose(0, 1)
    with pytest.raises(frame.FrameAxisError):
        t.transpose(0, 1, 3)


def test_broadcast_expand_squeeze():
    a = _data((3, 1), "float32")
    t = frame.tensor(a)
    _same(frame.broadcast_to(t, (2, 3, 4)), np.broadcast_to(a, (2, 3, 4)))
    _same(frame.broadcast_to(frame.tensor(1.5), 3), np.broadcast_to(np.float32(1.5), 3))
    with pytest.raises(ValueError, match=r"broadcast_to\(.*\): cannot broadcast .*\[3,1\] to shape \[2,4\]"):
        frame.broadcast_to(t, (2, 4))
    for axis in (0, -1, 2, (0, 1), (-1, 0), (0, 3)):
        _same(frame.expand_dims(t, axis), np.expand_dims(a, axis))
    _same(t.expand_dims(1), np.expand_dims(a, 1))
    with pytest.raises(frame.FrameAxisError):
        frame.expand_dims(t, 3)
    b = _data((1, 3, 1, 1), "int32")
    u = frame.tensor(b)
    for axis in (None, 0, -1, (0, 2), (2, -1)):
        _same(frame.squeeze(u, axis), np.squeeze(b, axis))
    _same(u.squeeze(), np.squeeze(b))
    _same(np.squeeze(u, axis=0), np.squeeze(b, axis=0))
    with pytest.raises(ValueError, match=r"squeeze\(.*\): cannot squeeze axis 1 of size 3"):
        frame.squeeze(u, 1)


def test_concat_and_stack():
    a, b = _data((2, 3), "int32"), _data((1, 3), "float16", 1)
    _same(frame.concat([a, b]), np.concatenate([a, b]))
    _same(frame.concat((a, a, a), axis=-1), np.concatenate((a, a, a), axis=-1))
    _same(frame.concat([a, b], axis=None), np.concatenate([a, b], axis=None))
    _same(frame.concat([frame.tensor(a), frame.tensor(a)], axis=1), np.concatenate([a, a], 1))
    with pytest.raises(ValueError, match=r"concat\(.*\): .* input 0 has shape \[2,3\], input 1 has shape \[1,3\]"):
        frame.concat([a, b], axis=1)
    with pytest.raises(ValueError, match="zero-dimensional"):
        frame.concat([np.float32(1), np.float32(2)])
    with pytest.raises(ValueError, match="at least one"):
        frame.concat([])
    with pytest.raises(TypeError, match="list or tuple"):
        frame.concat(frame.tensor(a))
    for axis in (0, 1, 2, -1, -3):
        _same(frame.stack([a, a + 1], axis=axis), np.stack([a, a + 1], axis=axis))
    _same(frame.stack([a, a.astype(np.bool_)]), np.stack([a, a.astype(np.bool_)]))
    with pytest.raises(ValueError, match=r"stack\(.*\): .*\[2,3\].*\[1,3\]"):
        frame.stack([a, b])
    with pytest.raises(frame.FrameAxisError):
        frame.stack([a, a], axis=3)


@pytest.mark.parametrize("sections", [3, 1, [2], [1, 4], [3, 1], [-2], [], [0, 0, 6], [2, 10],
                                      np.array([1, 3])])
def test_split_forms(sections):
    a = _data((6, 2), "float64")
    got = frame.split(a, sections)
    expected = np.split(a, sections)
    assert isinstance(got, list) and len(got) == len(expected)
    for g, e in zip(got, expected):
        _same(g, e)


def test_split_axis_and_errors():
    a = _data((2, 6), "int64")
    for g, e in zip(frame.tensor(a).split(3, axis=-1), np.split(a, 3, axis=-1)):
        _same(g, e)
    with pytest.raises(ValueError, match="split: axis 1 of size 6 cannot be split into 4 equal"):
        frame.split(a, 4, axis=1)
    with pytest.raises(ValueError, match="positive"):
        frame.split(a, 0)
    with pytest.raises(frame.FrameAxisError):
        frame.split(a, 2, axis=2)


def test_strided_slice():
    a = _data((4, 5), "int32")
    t = frame.tensor(a)
    _same(frame.strided_slice(t, [1], [None]), a[1:])
    _same(frame.strided_slice(t, [None, -1], [None, None], [-1, -2]), a[::-1, -1::-2])
    _same(t.strided_slice([10], [-10], [-3]), a[10:-10:-3])
    with pytest.raises(ValueError, match="step"):
        frame.strided_slice(t, [0], [1], [0])


def test_take():
    a = _data((3, 4), "float32")
    t = frame.tensor(a)
    _same(frame.take(t, [5, -1, 0]), np.take(a, [5, -1, 0]))
    _same(frame.take(t, np.array([[1, 0]], np.int32), axis=1), np.take(a, [[1, 0]], axis=1))
    _same(t.take(2, axis=0), np.take(a, 2, axis=0))
    _same(frame.take(t, [], axis=-1), np.take(a, [], axis=-1))
    _same(np.take(t, [1, 1], axis=0), np.take(a, [1, 1], axis=0))
    with pytest.raises(IndexError, match=r"take\(.*\): index 4 is out of bounds for axis 1 with size 4"):
        frame.take(t, [0, 4], axis=1)
    with pytest.raises(IndexError, match="out of bounds"):
        frame.take(t, [-13])
    with pytest.raises(TypeError, match=r"take\(.*\): indices must be an integer tensor"):
        frame.take(t, [0.5])
    with pytest.raises(TypeError, match=r"take\(.*\): indices must be an integer tensor"):
        frame.take(t, [True])


@pytest.mark.parametrize("width", [1, (1, 2), ((1, 2),), ((1, 2), (0, 3)), ((1,), (2,)), 0,
                                   np.array([[2, 0], [1, 1]])])
def test_pad_forms(width):
    a = _data((2, 3), "int32")
    _same(frame.pad(a, width), np.pad(a, width))
    _same(frame.pad(a, width, value=-2.9), np.pad(a, width, constant_values=-2.9))
    _same(frame.pad(a.astype(np.float16), width, 0.5),
          np.pad(a.astype(np.float16), width, constant_values=0.5))


def test_pad_errors():
    a = _data((2, 3), "float32")
    with pytest.raises(ValueError, match="non-negative"):
        frame.pad(a, -1)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        frame.pad(a, (1, 2, 3))
    with pytest.raises(TypeError, match="ints"):
        frame.pad(a, 1.5)
    with pytest.raises(ValueError, match=r"pad\(int32\[2,3\]\): cannot fill an int32"):
        frame.pad(a.astype(np.int32), 1, float("nan"))


def test_flip():
    a = _data((2, 3, 4), "bool")
    t = frame.tensor(a)
    for axis in (None, 0, -1, (0, 2), ()):
        _same(frame.flip(t, axis), np.flip(a, axis))
    _same(t.flip(1), np.flip(a, 1))
    with pytest.raises(frame.FrameAxisError):
        frame.flip(t, 3)


def test_results_do_not_alias_inputs():
    t = frame.tensor(np.zeros((2, 3), np.float32))
    for r in (t.reshape(6), t.T, frame.broadcast_to(t, (2, 2, 3)), t.expand_dims(0),
              frame.flip(t), frame.split(t, 2)[0]):
        r += 1
    assert t.numpy().sum() == 0


# --------------------------------------------------------------------------- matmul

@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((2, 1, 2, 3), (5, 3, 2)), ((0, 3), (3, 2)), ((3,), (2, 3, 4))])
@pytest.mark.parametrize("da,db", [("float32", "float32"), ("int32", "float16"), ("bool", "bool"),
                                   ("int32", "int64"), ("bool", "float64"), ("float16", "float16")])
def test_matmul_matches_numpy(sa, sb, da, db):
    a, b = _data(sa, da), _data(sb, db, 1)
    expected = np.matmul(a, b)
    _same(frame.matmul(a, b), expected)
    _same(frame.tensor(a) @ frame.tensor(b), expected)
    _same(a @ frame.tensor(b), expected)
    _same(frame.tensor(a) @ b, expected)


def test_matmul_errors_and_inplace():
    a = frame.tensor(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"matmul\(.*\): shapes \[2,3\] and \[2,3\] are not aligned"):
        a @ a
    with pytest.raises(ValueError, match="zero-dimensional"):
        a @ 2.0
    with pytest.raises(ValueError, match="batch dimensions"):
        frame.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 1)))
    s = frame.tensor(np.eye(3, dtype=np.float32) * 2)
    ident = s
    s @= frame.tensor(np.ones((3, 3), np.float32))
    assert s is ident and s.tolist() == [[2.0] * 3] * 3
    with pytest.raises(ValueError, match="cannot be written"):
        a @= frame.tensor(np.ones((3, 1), np.float32))


# --------------------------------------------------------------------------- creation

def test_zeros_ones_full_dtypes():
    _same(frame.zeros((2, 3)), np.zeros((2, 3), np.float32))
    _same(frame.zeros(4, dtype=frame.int32), np.zeros(4, np.int32))
    _same(frame.ones([2], "float64"), np.ones(2))
    _same(frame.ones((), frame.bool_), np.ones((), bool))
    _same(frame.full((2, 2), 1.5), np.full((2, 2), 1.5, np.float32))
    _same(frame.full((2,), 7), np.full(2, 7, np.int64))
    _same(frame.full(3, True), np.full(3, True))
    _same(frame.full((2,), 2.7, dtype=frame.int32), np.full(2, 2.7, np.int32))
    _same(frame.full((0, 3), -1, dtype=frame.float16), np.full((0, 3), -1, np.float16))
    with pytest.raises(ValueError, match="negative"):
        frame.zeros((2, -1))
    with pytest.raises(ValueError, match="too large"):
        frame.full(1, 2 ** 60)
    with pytest.raises(ValueError, match=r"full\(\): cannot fill an int64"):
        frame.full(1, float("inf"), dtype=frame.int64)
    with pytest.raises(TypeError, match="real number"):
        frame.full(1, "x")


@pytest.mark.parametrize("args", [(5,), (2, 10), (10, 2, -3), (2, 11, 3), (0,), (5, 1), (-3, 3),
                                  (0.0, 1.0, 0.1), (1, 2, 0.1), (0, 5, 1.5), (-1.5, 2, 0.5),
                                  (0.5, 0.50000001, 1e-9), (10.0, -1.0, -0.7), (3.5,)])
def test_arange_matches_numpy(args):
    all_int = all(isinstance(v, int) for v in args)
    default = np.int64 if all_int else np.float32
    got = frame.arange(*args)
    assert got.dtype == default
    _same(got, np.arange(*args, dtype=default))
    for dtype in ("float64", "float32", "int64"):
        if dtype == "int64" and any(abs(v) < 1 and v for v in args[2:]):
            continue
        _same(frame.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype))


def test_arange_errors():
    with pytest.raises(ValueError, match=r"arange\(\): step must not be zero"):
        frame.arange(0, 5, 0)
    with pytest.raises(ValueError, match="finite"):
        frame.arange(0, float("inf"))
    with pytest.raises(TypeError, match="bool result"):
        frame.arange(0, 3, dtype=frame.bool_)
    _same(frame.arange(2, dtype=frame.bool_), np.arange(2, dtype=bool))


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (2, 4, 0), (4, 2, 1), (3, 3, -1), (0, None, 0),
                                   (3, 3, 5)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "float16"])
def test_eye(n, m, k, dtype):
    _same(frame.eye(n, m, dtype=dtype, k=k), np.eye(n, m, k=k, dtype=dtype))


def test_eye_defaults_and_launch_path():
    ops = []

    def record(op, arrays, attrs):
        ops.append(op)
        return eager.run_op(op, arrays, attrs)

    with op_handler(record):
        e = frame.eye(3)
        frame.zeros(2)
        frame.arange(3)
    _same(e, np.eye(3, dtype=np.float32))
    assert "arange" in ops and "equal" in ops and "full" in ops
    with pytest.raises(ValueError, match="negative"):
        frame.eye(-1)
    with pytest.raises(TypeError, match="eye: n must be an int"):
        frame.eye(2.5)


def test_methods_are_bound():
    t = frame.tensor(np.arange(6.0).reshape(2, 3))
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "reshape", "transpose",
                 "broadcast_to", "expand_dims", "squeeze", "split", "take", "pad", "flip",
                 "matmul", "strided_slice"):
        assert callable(getattr(t, name)), name
    for name in ("concat", "stack", "zeros", "arange", "eye", "full"):
        assert not hasattr(frame.Tensor, name), name
    assert frame.sum.__frame_op__ == "sum" and frame.strided_slice.__frame_op__ == "slice"
