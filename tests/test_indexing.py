"""Tensor.__getitem__ against NumPy's ``a[idx]``: values, shape and dtype."""
from __future__ import annotations

import random

import numpy as np
import pytest

import frame
from frame.functions._core import op_handler
from frame.runtime import eager

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]
BASE = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)

INDICES = [
    0, -1, 1, (0, 1), (1, -1, 2, -5), (slice(None), 1), (Ellipsis, 2), (Ellipsis,), slice(None),
    (None,), (None, Ellipsis, None), (1, None, slice(None, None, -1)),
    (slice(1, None), None, 1, slice(None, None, -2), -1), (slice(None, None, 3), Ellipsis, None),
    (slice(10, -10, -1),), (slice(3, 3),), (slice(None), slice(2, 0)), (slice(-100, 100, 7),),
    ([1, 0],), [1, 0, 1], (slice(None), [2, 0, 2]), (Ellipsis, [[0, 1], [2, 3]]),
    (0, slice(None), [1, 2]), (0, [1, 2]), ([1, 0], 2), (0, None, [1, 2]),
    (1, Ellipsis, np.array([[0, 1], [2, 3]])), (slice(None), 0, Ellipsis, [1, 2, 3]),
    (None, 0, slice(None), [1, 2, 3]), ([1, 0], None, 0), (slice(None), [-1, -2], slice(None, 2)),
    (np.array(1), slice(None), [1, 2]), ([],), (slice(None), []), (np.int64(1), np.int32(-1)),
    (slice(None), np.array([2, 0], dtype=np.int32)), (0, 0, 0, 0), (Ellipsis, 0, 0, 0, 0),
    ([[1], [0]], slice(None, None, -1)),
]


def _check(a: np.ndarray, idx) -> None:
    expected = a[idx]
    got = frame.tensor(a)[idx]
    assert isinstance(got, frame.Tensor)
    assert got.shape == expected.shape, f"{idx!r}: shape {got.shape} != {expected.shape}"
    assert got.numpy().dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_index_matches_numpy(idx):
    _check(BASE.astype(np.float32), idx)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype(dtype):
    a = (BASE % 3).astype(dtype)
    for idx in ((1, slice(None, None, -1)), (Ellipsis, [2, 0]), (None, 0, 1, slice(1, 3))):
        _check(a, idx)


def test_frame_tensors_as_index():
    a = BASE.astype(np.float64)
    t = frame.tensor(a)
    np.testing.assert_array_equal(t[frame.tensor([1, 0])].numpy(), a[[1, 0]])
    np.testing.assert_array_equal(t[:, frame.tensor([[2], [0]])].numpy(), a[:, [[2], [0]]])
    zero_d = frame.tensor(2)
    assert t[0, zero_d].shape == a[0, 2].shape
    np.testing.assert_array_equal(t[0, zero_d].numpy(), a[0, 2])


def test_zero_dim_and_one_dim():
    s = np.array(3.5, dtype=np.float32)
    for idx in ((), Ellipsis, None, (None, Ellipsis)):
        _check(s, idx)
    v = np.arange(6)
    for idx in (-6, 5, slice(None, None, -1), [5, -6], (None, slice(1, 4)), [[0, 1], [2, 3]]):
        _check(v, idx)


def test_random_index_expressions_match_numpy():
    """Seeded random mixes of ints, slices, None, ..., and index lists (up to
    three, of lengths that may not broadcast together)."""
    rnd = random.Random(1234)
    a = BASE.astype(np.int32)

    def entry(allow_array: bool):
        r = rnd.random()
        if r < 0.25:
            return rnd.randint(-2, 1)
        if r < 0.6:
            return slice(rnd.choice([None, -5, -2, -1, 0, 1, 2, 6]),
                         rnd.choice([None, -5, -1, 0, 1, 3, 6]), rnd.choice([None, 1, 2, -1, -2, 3]))
        if r < 0.75:
            return None
        if r < 0.85 or not allow_array:
            return Ellipsis
        return [rnd.randint(-2, 1) for _ in range(rnd.randint(0, 3))]

    checked = 0
    for _ in range(600):
        entries = []
        for _ in range(rnd.randint(0, 5)):
            e = entry(sum(isinstance(x, list) for x in entries) < 3)
            if e is Ellipsis and Ellipsis in entries:
                continue
            entries.append(e)
        idx = tuple(entries)
        try:
            a[idx]
        except IndexError:
            with pytest.raises(IndexError):
                frame.tensor(a)[idx]
            continue
        _check(a, idx)
        checked += 1
    assert checked > 300


def test_results_are_new_tensors():
    t = frame.tensor([1.0, 2.0, 3.0])
    for view in (t[...], t[:], t[None], t[::-1]):
        assert view is not t
        view += 1
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_iteration_uses_indexing():
    t = frame.tensor(BASE[0])
    rows = list(t)
    assert len(rows) == 3 and rows[2].tolist() == BASE[0][2].tolist()


def test_every_step_goes_through_the_launch_path():
    ops = []

    def record(op, arrays, attrs):
        ops.append(op)
        return eager.run_op(op, arrays, attrs)

    t = frame.tensor(BASE.astype(np.float32))
    with op_handler(record):
        out = t[0, None, [1, 2], ::-2]
    assert out.shape == BASE[0, None, [1, 2], ::-2].shape
    assert set(ops) <= {"slice", "take", "squeeze", "transpose", "expand_dims"} and "take" in ops


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("idx,match", [
    (2, "index 2 is out of bounds for axis 0 with size 2"),
    (-3, "out of bounds"),
    ((0, 3), "index 3 is out of bounds for axis 1 with size 3"),
    ((0, 0, 0, 0, 0), "too many indices"),
    ((Ellipsis, Ellipsis), "single ellipsis"),
    (0.5, "valid indices"),
    (np.array([1.0]), "integer type"),
    ("a", "valid indices"),
])
def test_index_errors(idx, match):
    t = frame.tensor(BASE)
    with pytest.raises(IndexError, match=match):
        t[idx]


def test_out_of_range_index_list_is_an_index_error():
    with pytest.raises(IndexError, match=r"take\(.*\): index 5 is out of bounds for axis 0 with size 2"):
        frame.tensor(BASE)[[0, 5]]


@pytest.mark.parametrize("idx", [np.array([True, False]), frame.tensor([True, False]), True,
                                 [True, False], (slice(None), np.zeros((3,), bool))])
def test_boolean_masks_are_unsupported(idx):
    t = frame.tensor(BASE)
    with pytest.raises(TypeError, match="boolean .* not supported"):
        t[idx]
    with pytest.raises(IndexError):
        t[idx]


SEVERAL_ARRAYS = [
    ([0, 1], [1, 2]), ([1, 0, -1], slice(None), [3, 0, 2]), (slice(None), [2, 0], [1, -1]),
    (0, [1, 2], slice(None), [4, 0]), ([1, 0], 2, [3, 1]), ([[0], [1]], [[0, 2]]),
    ([1, 0], None, [2, 1]), (Ellipsis, [1, 0], [4, 3]), ([1, 0], Ellipsis, [4, 3]),
    (None, [1], [0, 2], None, slice(1, 3), [0, 4]), ([], []), ([0, 1], [1, 2], [3, 0], [4, 4]),
    (slice(None, None, -1), [2, 0], slice(1, None), [1, 3]), (np.array([1, 0]), frame.tensor([2, 1])),
    (np.array([[1, 0], [0, 1]], np.int32), np.array([0, 2]), 1), ([0, 1], slice(0, 0), [1, 2]),
]


@pytest.mark.parametrize("idx", SEVERAL_ARRAYS, ids=repr)
def test_several_index_arrays_match_numpy(idx):
    """Several integer arrays broadcast together (ints next to them count as
    arrays), the block placed where NumPy places it."""
    a = BASE.astype(np.float32)
    np_idx = tuple(e.numpy() if isinstance(e, frame.Tensor) else e for e in idx)
    expected = a[np_idx]
    got = frame.tensor(a)[idx]
    assert got.shape == expected.shape, f"{idx!r}: shape {got.shape} != {expected.shape}"
    np.testing.assert_array_equal(got.numpy(), expected)
    # the functional setitem finds its positions with the same indexing
    b = np.array(a)
    t = frame.tensor(a)
    value = np.arange(expected.size, dtype=np.float32).reshape(expected.shape) + 100
    b[np_idx] = value
    t[idx] = value
    np.testing.assert_array_equal(t.numpy(), b)


@pytest.mark.parametrize("idx,match", [
    (([0, 1, 1], [1, 2]), r"could not be broadcast together with shapes \(3,\) \(2,\)"),
    (([0, 2], [1, 2]), "index 2 is out of bounds for axis 0 with size 2"),
    ((slice(None), [0, 1], [4, 1]), "index 4 is out of bounds for axis 2 with size 4"),
    (([0, 1], [1, 2], 9), "index 9 is out of bounds for axis 2 with size 4"),
])
def test_several_index_arrays_errors(idx, match):
    with pytest.raises(IndexError, match=match):
        BASE[idx]
    with pytest.raises(IndexError, match=match):
        frame.tensor(BASE)[idx]


def test_zero_slice_step():
    with pytest.raises(IndexError, match="step cannot be zero"):
        frame.tensor(BASE)[::0]


@pytest.mark.parametrize("mask,value", [
    (BASE > 50, 0), (BASE % 3 == 0, -1.5), ((BASE % 2 == 0)[:, :, :, 0], 7),
    ((BASE < 30)[:, 0, 0, 0], np.array([2.0])), (np.zeros((2, 3, 4, 5), bool), 1),
    ([True, False], 3), ((BASE > 10)[0, 0], np.float32(4.0)),
])
def test_boolean_mask_assignment_of_one_value(mask, value):
    """``t[mask] = v`` with one value is ``where``; NumPy's result, bit for bit."""
    for dtype in ("float32", "int64"):
        a = BASE.astype(dtype)
        if np.asarray(mask).shape != a.shape[:np.asarray(mask).ndim]:
            a = a[0, 0]
        b, t = np.array(a), frame.tensor(a)
        b[mask] = value
        t[frame.tensor(mask) if isinstance(mask, np.ndarray) else mask] = value
        assert t.numpy().dtype == b.dtype
        np.testing.assert_array_equal(t.numpy(), b)


def test_boolean_mask_assignment_errors():
    t = frame.tensor(BASE.astype(np.float64))
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 1"):
        t[np.ones((2, 2), bool)] = 0
    with pytest.raises(TypeError, match="not supported"):
        t[BASE > 3] = np.arange(3.0)  # the values' count would depend on the data
