"""Bit-for-bit comparison of a corpus case's native and jitted calls (the
``test_corpus_bitwise`` tests of ``test_corpus_sweep6.py`` and
``test_corpus_course*.py``, run where the cpu executable runs first)."""
from __future__ import annotations

import math
import struct

import numpy as np

import capture
import frame

from .corpus import BACKEND
from .helpers import _copy_inputs


def _bits(value: float) -> bytes:
    return struct.pack("<d", value)


def assert_bitwise(native, jitted, path: str = "result") -> None:
    """Same Python types, dtypes, shapes, float bits (signed zeros; a NaN equals a
    NaN), the contiguity and writeable flags of arrays, recursively."""
    tn, tj = type(native), type(jitted)
    assert tn is tj, f"{path}: type {tj.__name__} (jitted) != {tn.__name__} (native)"
    if isinstance(native, (np.ndarray, np.generic)):
        a, b = np.asarray(native), np.asarray(jitted)
        assert a.dtype == b.dtype, f"{path}: dtype {b.dtype} (jitted) != {a.dtype} (native)"
        assert a.shape == b.shape, f"{path}: shape {b.shape} (jitted) != {a.shape} (native)"
        if tn is np.ndarray:
            for flag in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE"):
                assert a.flags[flag] == b.flags[flag], f"{path}: flags[{flag}] {b.flags[flag]} (jitted)"
        if a.dtype.kind in "fc":
            nan_a, nan_b = np.isnan(a), np.isnan(b)
            assert np.array_equal(nan_a, nan_b), f"{path}: NaNs differ\n native: {a!r}\n jitted: {b!r}"
            same = (a == b) & (np.signbit(a.real) == np.signbit(b.real))
            if a.dtype.kind == "c":
                same &= np.signbit(a.imag) == np.signbit(b.imag)
            assert np.all(same | nan_a), f"{path}: bits differ\n native: {a!r}\n jitted: {b!r}"
        else:
            assert np.array_equal(a, b), f"{path}: values differ\n native: {a!r}\n jitted: {b!r}"
    elif tn is float:
        assert (math.isnan(native) and math.isnan(jitted)) or _bits(native) == _bits(jitted), \
            f"{path}: {jitted!r} (jitted) != {native!r} (native)"
    elif tn is complex:
        assert_bitwise(native.real, jitted.real, path + ".real")
        assert_bitwise(native.imag, jitted.imag, path + ".imag")
    elif isinstance(native, (tuple, list)):
        assert len(native) == len(jitted), f"{path}: length {len(jitted)} != {len(native)}"
        for i, (a, b) in enumerate(zip(native, jitted)):
            assert_bitwise(a, b, f"{path}[{i}]")
    elif tn is dict:
        assert list(native) == list(jitted), f"{path}: keys {list(jitted)} != {list(native)}"
        for k in native:
            assert_bitwise(native[k], jitted[k], f"{path}[{k!r}]")
    elif isinstance(native, np.random.Generator):
        assert native.bit_generator.state == jitted.bit_generator.state, f"{path}: generator state"
    elif hasattr(native, "__dict__") and not isinstance(native, type) and not callable(native):
        assert_bitwise(vars(native), vars(jitted), f"{path}.__dict__")   # a model, a solver
    else:
        assert native == jitted, f"{path}: {jitted!r} (jitted) != {native!r} (native)"


def _call_lists(c) -> list[list[tuple]]:
    if c.calls is not None:
        return [c.calls()]
    if c.steps is not None:
        return [[s for s in c.steps() if not callable(s)]]
    return [[c.make_args()]]


def _run(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return None, e


def check_bitwise(c) -> None:
    """Case ``c`` called natively and jitted on equal copies of its arguments (``steps``:
    the same objects from call to call; the steps' changes between calls are not
    made), each result and the arguments after each call compared bit for bit."""
    capture.reset_caches()
    for calls in _call_lists(c):
        shared = c.steps is not None   # steps: the same objects from call to call
        n_calls = _copy_inputs(tuple(calls), {}, [])[0]
        j_calls = _copy_inputs(tuple(calls), {}, [])[0]
        jitted = frame.jit(c.fn, backend=BACKEND)
        for i, (n_args, j_args) in enumerate(zip(n_calls, j_calls)):
            if not shared:
                n_args, j_args = _copy_inputs(n_args, {}, [])[0], _copy_inputs(j_args, {}, [])[0]
            native, n_exc = _run(c.fn, n_args)
            got, j_exc = _run(jitted, j_args)
            assert type(n_exc) is type(j_exc), f"call {i}: raised {j_exc!r} (jitted), {n_exc!r} (native)"
            assert_bitwise(native, got, f"call {i}: result")
            assert_bitwise(n_args, j_args, f"call {i}: arguments after the call")
