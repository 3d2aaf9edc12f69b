"""Time of ``import frame`` in fresh interpreters (median of 7), next to
``import numpy``, and whether openvino got imported.

    python benchmarks/import_time.py

Target (issue 2): under 0.3 s, and openvino not imported.
"""
from __future__ import annotations

import statistics
import subprocess
import sys

CODE = ("import time; t = time.perf_counter(); import {mod}; d = time.perf_counter() - t; "
        "import sys; print(d, 'openvino' in sys.modules)")


def measure(mod: str, n: int = 7) -> tuple[float, bool]:
    times, ov = [], False
    for _ in range(n):
        out = subprocess.run([sys.executable, "-c", CODE.format(mod=mod)], capture_output=True,
                             text=True, check=True).stdout.split()
        times.append(float(out[0]))
        ov = ov or out[1] == "True"
    return statistics.median(times), ov


if __name__ == "__main__":
    np_t, _ = measure("numpy")
    fr_t, ov = measure("frame")
    print(f"import numpy: {np_t * 1e3:.1f} ms")
    print(f"import frame: {fr_t * 1e3:.1f} ms (includes numpy; openvino imported: {ov})")
