"""Accuracy of the float32 erf lowering (``frame/backends/openvino/erf.py``) in
float32 ulp: erf against the reference kernel over a dense sweep, 1 + erf (what
gelu uses) against 1 + erf or the exact erfc, the special values, and the exact
powers of two the lowering's exp(-x^2) relies on."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ._helpers import OPTIONS, assert_matches, backend

import frame  # noqa: E402
import openvino as ov  # noqa: E402
import openvino.opset16 as ops  # noqa: E402
from frame.backends.openvino import erf as erf_math  # noqa: E402
from frame.backends.openvino.executable import OpenVinoExecutable  # noqa: E402
from frame.backends.openvino.table import Lowerer  # noqa: E402
from frame.ir import GraphBuilder  # noqa: E402
from frame.ops.elementwise import erf_kernel  # noqa: E402
from frame.ops.interpreter import evaluate  # noqa: E402

# bounds measured on every float32 with 2^-8 <= |x| < 6 (see erf.py's docstring)
ERF_ULP = 2            # 2 only on 0.5 < |x| < 1 (1 - erfc), 1 elsewhere
ERFC_ULP = 4           # one_plus_erf for x < -0.5, against the exact erfc(-x)
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, 1e-30, -1e-8,
                    1e-5, 0.5, -0.5, 4.0, -4.0, 6.0, -6.0, 3.4028235e38, -3.4028235e38], np.float32)


def _near(b: float, n: int) -> np.ndarray:
    """The n float32 either side of b, both signs."""
    i = int(np.float32(b).view(np.int32))
    near = np.arange(i - n, i + n, dtype=np.int32).view(np.float32)
    return np.concatenate([near, -near])


def _sweep(stride: int) -> np.ndarray:
    pos = np.arange(1, int(np.float32(10.0).view(np.int32)), stride, dtype=np.int32).view(np.float32)
    parts = [pos, -pos, np.linspace(-7, 7, 1_400_001, dtype=np.float32), SPECIAL]
    parts += [_near(b, 2000) for b in (0.5, 1.0, 2.0, 4.0, 6.0)]
    return np.concatenate(parts)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in float32 spacings at want rounded to float32; NaN must match NaN."""
    want32 = np.asarray(want).astype(np.float32)
    finite = np.isfinite(want32)
    err = np.where(got == want32, 0.0, np.inf)  # +-inf must be equal
    with np.errstate(invalid="ignore", over="ignore"):  # spacing(FLT_MAX) is inf
        err[finite] = (np.abs(got[finite].astype(np.float64) - want32[finite])
                       / np.spacing(np.abs(want32[finite])).astype(np.float64))
    nan = np.isnan(want32)
    err[nan] = np.where(np.isnan(got[nan]), 0.0, np.inf)
    err[~nan & np.isnan(got)] = np.inf
    return err


def _worst(err: np.ndarray, x: np.ndarray) -> str:
    i = int(np.argmax(err))
    return f"max {err[i]:.0f} ulp at x = {x[i]!r}"


def _compile_op(op: str, n: int):
    """The openvino backend's own executable for ``op`` on float32[n] (no runtime tiers)."""
    b = GraphBuilder()
    g = b.build(b.op(op, b.input(frame.float32, (n,))))
    exe = backend().compile(g, OPTIONS)
    assert isinstance(exe, OpenVinoExecutable)
    return g, exe


def _run_one_plus_erf(x: np.ndarray) -> np.ndarray:
    p = ops.parameter([-1], ov.Type.f32)
    model = ov.Model([erf_math.one_plus_erf(Lowerer(), p.output(0))], [p])
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                      "CPU_DENORMALS_OPTIMIZATION": False})
    return compiled(x)[0]


def test_erf_within_ulp_of_reference_dense_sweep():
    x = _sweep(stride=389)
    g, exe = _compile_op("erf", x.size)
    got = exe.run([x])[0]
    want = evaluate(g, [x])[0]
    err = _ulps(got, erf_kernel(x))
    assert err.max() <= ERF_ULP, _worst(err, x)
    rest = ~((np.abs(x) > 0.5) & (np.abs(x) < 1))  # tiny and subnormal x included
    assert err[rest].max() <= 1, _worst(np.where(rest, err, 0), x)
    assert_matches(got, want, "erf")


def test_erf_special_values():
    g, exe = _compile_op("erf", SPECIAL.size)
    got = exe.run([SPECIAL])[0]
    want = evaluate(g, [SPECIAL])[0]
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0 stays -0
    exact = ~np.isfinite(SPECIAL) | (SPECIAL == 0) | (np.abs(SPECIAL) >= 4)
    np.testing.assert_array_equal(got[exact], want[exact])  # +-0, +-1, nan
    err = _ulps(got, want)
    assert err.max() <= 1, _worst(err, SPECIAL)  # the rest, e.g. subnormals and 2x/sqrt(pi)


def test_one_plus_erf_relative_accuracy():
    x = _sweep(stride=1553)
    x = x[np.abs(x) < 6]  # and 6 on: exactly 0 or 2, below
    got = _run_one_plus_erf(x)
    xs = x.astype(np.float64)
    want = 1.0 + erf_kernel(xs)
    # for x < -0.5 it is erfc(-x), whose size the reference's 1 + erf no longer resolves
    neg = np.flatnonzero(~np.isnan(xs) & (xs < -0.5))
    want[neg] = [math.erfc(-v) for v in xs[neg].tolist()]
    err = _ulps(got, want)
    assert err.max() <= ERFC_ULP, _worst(err, x)
    above = ~(xs < -0.5)
    assert err[above].max() <= 1, _worst(np.where(above, err, 0), x)


def test_power_of_two_is_exact():
    """2^n for the n in [-53, -1] that exp(-a^2) needs (and beyond) comes out exact."""
    n = np.arange(-126, 31, dtype=np.float32)
    p = ops.parameter([-1], ov.Type.f32)
    model = ov.Model([erf_math._pow2(Lowerer(), p.output(0))], [p])
    got = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(n)[0]
    np.testing.assert_array_equal(got, np.ldexp(np.float32(1.0), n.astype(np.int32)))


def test_erf_large_tensor():
    """Every element of a tensor past 2^25 elements is right (there, on two threads,
    the CPU plugin's Gather returns neighbours' values for the last ones)."""
    x = np.tile(np.array([0.75, 2.5, -1.5, 0.3], np.float32), (1 << 23) + 1)
    g, exe = _compile_op("erf", x.size)
    got = exe.run([x])[0].reshape(-1, 4)
    _, small_exe = _compile_op("erf", 4)
    want = small_exe.run([x[:4]])[0]
    assert (got == want).all(), np.flatnonzero((got != want).any(axis=1))[:5]
    assert (_ulps(want, erf_kernel(x[:4])) <= ERF_ULP).all()


def test_one_plus_erf_limits():
    x = np.array([6.0, -6.0, 50.0, -50.0, np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
    got = _run_one_plus_erf(x)
    np.testing.assert_array_equal(got, [2.0, 0.0, 2.0, 0.0, 2.0, 0.0, np.nan, 1.0, 1.0])


def test_gelu_matches_reference():
    x = np.concatenate([np.linspace(-12, 12, 480_001, dtype=np.float32), SPECIAL])
    g, exe = _compile_op("gelu", x.size)
    with np.errstate(invalid="ignore"):  # gelu(-inf) is nan: -inf * 0
        got, want = exe.run([x])[0], evaluate(g, [x])[0]
        assert_matches(got, want, "gelu")
    # for x < 0, erfc(-u) magnifies the last-bit difference between the lowering's
    # u = x * (1/sqrt 2) and the reference's x / sqrt 2 by up to 2u^2 (tolerance above);
    # for x >= 0 the result is as good as one_plus_erf's
    pos = x >= 0
    err = _ulps(got[pos], want[pos])
    assert err.max() <= 2, _worst(err, x[pos])


@pytest.mark.parametrize("x", [1e-5, 1e-8, 1e-20, 2.0 ** -140])
def test_erf_tiny_is_two_over_sqrt_pi_x(x):
    g, exe = _compile_op("erf", 1)
    got = float(exe.run([np.array([x], np.float32)])[0][0])
    want = float(np.float32(np.float32(x) * (2 / math.sqrt(math.pi))))
    assert abs(got - want) <= np.spacing(np.float32(want)), (got, want)
