"""The openvino backend, measured side by side in one process (interleaved rounds).

    python benchmarks/openvino_backend.py            # everything
    python benchmarks/openvino_backend.py gelu       # one part: gelu | overhead | compile | threads

(a) gelu: tanh-GELU written as 8 elementwise frame ops on a 1024x1024 float32
    array, compiled by ``runtime.compile(graph, "openvino")``, vs the same
    formula in hand-written NumPy.  Target: >= 3x faster than NumPy.
(b) overhead: a 4-element ``relu(x) + 1`` graph, our ``Executable.run`` vs the
    fastest raw OpenVINO call style (pre-bound tensors, ``.data`` written,
    ``infer()``, output view read).  Target: within 1.3x.
(c) compile: a 30-node graph, compiled cold and warm (OpenVINO's model cache
    under ``FRAME_CACHE_DIR``), each in a fresh process.
(d) threads: ``INFERENCE_NUM_THREADS`` 1 / 2 / frame's size rule (one thread
    below 64K elements) on (a) and (b), with NumPy (OpenBLAS) work interleaved.
"""
from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import frame  # noqa: E402
from frame.hal import CompileOptions  # noqa: E402
from frame.ir import GraphBuilder  # noqa: E402
from frame.runtime import compile as rc  # noqa: E402

from _harness import interleaved, show  # noqa: E402

C = math.sqrt(2.0 / math.pi)


def gelu_graph(shape):
    """0.5 * x * (1 + tanh(c * (x + 0.044715 * x^3))): 8 elementwise ops."""
    b = GraphBuilder()
    x = b.input(frame.float32, shape)
    cube = b.op("mul", b.op("mul", x, x), x)
    inner = b.op("mul", b.scalar(C, like=x), b.op("add", x, b.op("mul", b.scalar(0.044715, like=x), cube)))
    y = b.op("mul", b.op("mul", b.scalar(0.5, like=x), x), b.op("add", b.scalar(1.0, like=x), b.op("tanh", inner)))
    return b.build(y)


def gelu_numpy(x):
    """Hand-written NumPy, tuned: x*x*x rather than x**3 (NumPy's float power is slow)."""
    return 0.5 * x * (1.0 + np.tanh(np.float32(C) * (x + np.float32(0.044715) * x * x * x)))


def gelu_numpy_textbook(x):
    """The formula as usually written (the PyTorch/JAX docs' form), kept in float32
    (a Python-float constant; np.sqrt(2 / np.pi) would be a float64 scalar and,
    under NEP 50, turn the whole computation into float64)."""
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def part_gelu() -> None:
    x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    exe = rc.compile(gelu_graph(x.shape), "openvino")
    np.testing.assert_allclose(exe.run([x])[0], gelu_numpy(x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gelu_numpy_textbook(x), gelu_numpy(x), rtol=1e-5, atol=1e-6)
    res = interleaved({"numpy, x*x*x (tuned)": lambda: gelu_numpy(x),
                       "numpy, x**3 (textbook)": lambda: gelu_numpy_textbook(x),
                       "openvino Executable.run": lambda: exe.run([x])},
                      number=20, rounds=9, warmup=5)
    print("(a) tanh-GELU, 1024x1024 float32, 8 elementwise ops:")
    show(res, "openvino Executable.run")
    for base in ("numpy, x*x*x (tuned)", "numpy, x**3 (textbook)"):
        print(f"    openvino is {res[base] / res['openvino Executable.run']:.2f}x faster than "
              f"{base} (target >= 3x)")


def _raw_prebound(x, compiled):
    """The fastest raw call style measured (FACTS.md), on the executable's own
    compiled model (same settings): pre-bound tensors, ``.data`` written, infer()."""
    import openvino as ov
    req = compiled.create_infer_request()
    t_in = ov.Tensor(ov.Type.f32, [4])
    req.set_input_tensor(0, t_in)
    t_out = ov.Tensor(ov.Type.f32, [4])
    req.set_output_tensor(0, t_out)
    view_in, view_out = t_in.data, t_out.data

    def call():
        view_in[...] = x
        req.infer()
        return view_out  # aliases the request: a real caller must copy it
    return call


def small_graph():
    b = GraphBuilder()
    x = b.input(frame.float32, (4,))
    return b.build(b.op("add", b.op("relu", x), b.scalar(1.0, like=x)))


def part_overhead() -> None:
    x = np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
    exe = rc.compile(small_graph(), "openvino")
    raw = _raw_prebound(x, exe._compiled)
    np.testing.assert_array_equal(exe.run([x])[0], raw())
    res = interleaved({"raw: prebound + infer() (no copy)": raw,
                       "openvino Executable.run": lambda: exe.run([x]),
                       "numpy relu(x)+1": lambda: np.maximum(x, 0) + 1},
                      number=3000, rounds=11)
    print("(b) 4-element relu(x)+1, per-run overhead:")
    show(res, "raw: prebound + infer() (no copy)")
    ratio = res["openvino Executable.run"] / res["raw: prebound + infer() (no copy)"]
    print(f"    Executable.run / raw = {ratio:.2f} (target <= 1.3)")


_COMPILE = """
import sys, time
import numpy as np, frame
from frame.hal import get_backend
from frame.ir import GraphBuilder
from frame.runtime import compile as rc
t0 = time.perf_counter()
get_backend("openvino")   # import openvino, create the Core
t1 = time.perf_counter()
b = GraphBuilder()
x = b.input(frame.float32, (64, 64))
w = b.input(frame.float32, (64, 64))
v = x
for k in range(6):   # 5 nodes per step, 30 in all
    v = b.op("tanh", b.op("add", b.op("matmul", v, w), b.scalar(0.1 * k, like=x)))
    v = b.op("mul", b.op("relu", v), b.scalar(1.0 + k, like=x))
g = b.build(v)
assert len(g.nodes) >= 30
t2 = time.perf_counter()
exe = rc.compile(g, "openvino")
t3 = time.perf_counter()
exe.run([np.ones((64, 64), np.float32), np.ones((64, 64), np.float32) / 64])
t4 = time.perf_counter()
print(f"{t1 - t0:.4f} {t3 - t2:.4f} {t4 - t3:.4f}")
"""


def part_compile() -> None:
    print("(c) compile time of a 30-node graph (64x64 matmul/add/tanh/relu/mul chain), fresh processes:")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = {"cold (empty cache)": [], "warm (model cache)": [], "no cache": []}
    for trial in range(3):
        with tempfile.TemporaryDirectory() as cache:
            for label in ("cold (empty cache)", "warm (model cache)"):
                env = dict(os.environ, FRAME_CACHE_DIR=cache, PYTHONPATH=here)
                out = subprocess.run([sys.executable, "-c", _COMPILE], env=env, check=True,
                                     capture_output=True, text=True).stdout.split()
                rows[label].append([float(v) for v in out])
        env = dict(os.environ, FRAME_CACHE_DIR="", PYTHONPATH=here)
        out = subprocess.run([sys.executable, "-c", _COMPILE], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        rows["no cache"].append([float(v) for v in out])
    for label, samples in rows.items():
        imp, comp, first = (statistics.median(s[i] for s in samples) for i in range(3))
        print(f"  {label:<20} runtime.compile {comp * 1e3:7.1f} ms   first run {first * 1e3:6.2f} ms"
              f"   (import openvino + Core, before: {imp * 1e3:.0f} ms)")


def part_threads() -> None:
    print("(d) INFERENCE_NUM_THREADS (cores: %d), with NumPy work interleaved:" % os.cpu_count())
    x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    a = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)
    s = np.array([-1.0, 0.5, 2.0, -3.0], np.float32)
    big, small = {}, {}
    for threads in ("1", "2", None):
        opts = CompileOptions(extra=(("INFERENCE_NUM_THREADS", threads),) if threads else ())
        label = f"threads={threads}" if threads else "frame's choice (size rule)"
        g = rc.compile(gelu_graph(x.shape), "openvino", opts)
        t = rc.compile(small_graph(), "openvino", opts)
        big[label] = (lambda g=g: (g.run([x]), a @ a))
        small[label] = (lambda t=t: t.run([s]))
    big["numpy gelu + matmul"] = lambda: (gelu_numpy(x), a @ a)
    print("  gelu 1024x1024 + a 256x256 NumPy matmul per call:")
    show(interleaved(big, number=10, rounds=7, warmup=3), "numpy gelu + matmul")
    print("  4-element relu(x)+1:")
    show(interleaved(small, number=2000, rounds=7), "frame's choice (size rule)")


PARTS = {"gelu": part_gelu, "overhead": part_overhead, "compile": part_compile,
         "threads": part_threads}


def main(argv: list[str]) -> None:
    for name in (argv or list(PARTS)):
        PARTS[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
