"""Shared helpers of the openvino backend tests."""
from __future__ import annotations

import numpy as np
import pytest

openvino = pytest.importorskip(
    "openvino", reason="the openvino package is not installed: the openvino backend cannot load")

import frame  # noqa: E402
from frame.hal import CompileOptions, get_backend  # noqa: E402

OPTIONS = CompileOptions()


def backend():
    return get_backend("openvino")


def tolerance(dtype: np.dtype, op: str | None = None) -> tuple[float, float]:
    """(rtol, atol) against the reference kernel.

    float32: 1e-5 relative, as the op table's own tolerance, with an absolute
    floor of 1e-5 for ops that accumulate (the CPU plugin sums in another
    order than NumPy's pairwise sums); float16 results are rounded once from
    float32, as NumPy rounds them, so one float16 ulp of slack suffices.
    """
    dt = np.dtype(dtype)
    if dt == np.float16:
        return 2e-3, 2e-3
    if dt in (np.float32, np.complex64):
        return 1e-5, (1e-5 if op in ACCUMULATING else 1e-6)
    return 0.0, 0.0


ACCUMULATING = {"sum", "mean", "prod", "matmul", "conv2d", "avg_pool2d", "softmax", "rfft", "irfft",
                "log_softmax", "layer_norm", "cross_entropy", "mse_loss", "fused"}


def assert_matches(got: np.ndarray, want: np.ndarray, what: str, op: str | None = None) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != reference {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != reference {want.shape}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    rtol, atol = tolerance(want.dtype, op)
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=rtol,
                               atol=atol, equal_nan=True, err_msg=what)


def reference(graph, inputs):
    from frame.ops.interpreter import evaluate
    return evaluate(graph, inputs)


__all__ = ["frame", "backend", "OPTIONS", "tolerance", "assert_matches", "reference", "openvino"]
