"""Python's scalar types as NumPy dtypes inside jitted functions.

NumPy reads ``float`` as float64, ``int`` as int64 (the platform's long),
``bool`` as bool and ``complex`` as complex128 wherever a dtype is taken:
``a.astype(float)``, ``np.zeros(n, dtype=float)``, ``a.sum(dtype=float)``.
frame's own constructors read ``float`` as its default float32 (torch-like,
API.md), so a capture that hands NumPy's argument to frame unchanged returns
float32 where the plain code returns float64 (``a.astype(float)`` did).
Each entry point is run jitted and plain on arrays of several dtypes."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import assert_same_as_eager

TYPES = (float, int, bool, complex)

ENTRY_POINTS = {
    "astype": lambda x, t: x.astype(t),
    "astype_keyword": lambda x, t: x.astype(dtype=t),
    "astype_after_slice": lambda x, t: x[::2].astype(t) * 2,
    "astype_then_ravel": lambda x, t: x.reshape(-1, 1).astype(t).ravel(),
    "scalar_astype": lambda x, t: x[0].astype(t),
    "asarray": lambda x, t: np.asarray(x, dtype=t),
    "array": lambda x, t: np.array(x, dtype=t),
    "array_positional": lambda x, t: np.array(x, t),
    "zeros_plus": lambda x, t: np.zeros(x.shape, dtype=t) + x,
    "ones_like": lambda x, t: np.ones_like(x, dtype=t),
    "full": lambda x, t: np.full(x.shape, 1, dtype=t),
    "sum_dtype": lambda x, t: x.sum(dtype=t),
    "np_sum_dtype": lambda x, t: np.sum(x, axis=0, dtype=t),
    "cumsum_dtype": lambda x, t: np.cumsum(x, dtype=t),
    "result_type": lambda x, t: np.result_type(x, t).name,
    "dtype_of_type": lambda x, t: (x.astype(t).dtype == np.dtype(t), np.dtype(t).itemsize),
}

# NumPy refuses some pairs itself (sum(dtype=bool) of floats is fine, cumsum too); what
# it raises, the jitted function must raise
_INPUTS = {
    "float32": np.array([[1.5, -2.0, 0.0], [3.25, 4.0, -0.5]], np.float32),
    "float64": np.array([[1.5, -2.0, 0.0], [3.25, 4.0, -0.5]], np.float64),
    "int32": np.array([[1, -2, 0], [3, 4, 7]], np.int32),
    "bool": np.array([[True, False, True], [False, False, True]]),
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize("python_type", TYPES, ids=lambda t: t.__name__)
@pytest.mark.parametrize("input_dtype", list(_INPUTS))
def test_python_type_as_dtype(entry, python_type, input_dtype):
    fn = ENTRY_POINTS[entry]
    x = _INPUTS[input_dtype].copy()
    assert_same_as_eager(fn, x, python_type, captured=None)


def test_astype_float_is_float64_and_captured():
    def normalize(img):
        img = img[:, ::2]
        img[img != 0] = 1
        return img.astype(float).ravel()
    img = np.array([[0.0, 144.0, 3.0, 0.0], [92.0, 0.0, 0.0, 5.0]], np.float32)
    assert_same_as_eager(normalize, img)   # one graph, float64 result, the input written


# Python scalars as operands are weak (NEP 50), complex ones too: an int array times
# ``2j`` is complex128 in NumPy (float32 with ``2j`` stays complex64).  frame made every
# Python complex a complex64 constant (found by the random-expression fuzz).
WEAK_COMPLEX = {
    "times_imaginary": lambda x: x * 2j,
    "complex_plus": lambda x: complex(1, -1) + x,
    "np_multiply": lambda x: np.multiply(x, 0.5j),
    "complex_of_sum": lambda x: complex(x.sum()) * x,
}


@pytest.mark.parametrize("name", list(WEAK_COMPLEX))
@pytest.mark.parametrize("dtype", ["int16", "uint8", "bool", "float16", "float32", "float64"])
def test_python_complex_is_weak(name, dtype):
    x = np.array([[1, 0, 3], [2, 5, 1]]).astype(dtype)
    assert_same_as_eager(WEAK_COMPLEX[name], x, captured=None)


def test_frame_tensor_with_python_complex_follows_nep50():
    import frame
    for dtype in ("int16", "float32", "float64"):
        t = frame.tensor(np.ones(3, dtype))
        assert (t * 2j).dtype.np == np.result_type(np.dtype(dtype), 2j)
