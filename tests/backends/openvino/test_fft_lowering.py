"""irfft on OpenVINO with fewer bins than ``n // 2 + 1``: the bins are
zero-padded by the lowering (``rules_nn._irfft``).  IRDFT's own padding read
memory it had not written: of 60 fresh compiles of irfft of 4 bins with n=10,
2 gave 1e30 or wrong values (OpenVINO 2026.4).  Every fresh compile is checked
against numpy.fft.irfft here."""
from __future__ import annotations

import numpy as np
import pytest

import frame
from frame.ir import GraphBuilder
from frame.runtime import compile as rc


@pytest.mark.parametrize("shape,n", [((4,), 10), ((3, 5), 12), ((2, 3), 9), ((6,), 10)])
def test_irfft_with_padding_on_fresh_compiles(shape, n):
    rng = np.random.default_rng(0)
    for _ in range(15):
        rc.clear_cache()
        b = GraphBuilder()
        x = b.input("complex64", shape)
        graph = b.build(b.op("irfft", x, n=n))
        with frame.config.override(cache=False, tiered=False):
            exe = rc.compile(graph, "openvino")
        assert type(exe).__name__ == "OpenVinoExecutable"
        v = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
        np.testing.assert_allclose(exe.run([v])[0], np.fft.irfft(v, n=n), rtol=1e-4, atol=1e-5)
