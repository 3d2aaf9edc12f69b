"""Parallel elementwise regions of the cpu executable (issue 13: tanh-GELU
1024x1024 >= 2x faster than float32 NumPy; the 20-node 64x64 graph no slower
than NumPy), side by side in one process, interleaved rounds.

    python benchmarks/parallel_regions.py                  # gelu 1024^2 and g20
    python benchmarks/parallel_regions.py --sweep 128 256 512 1024 2048
    python benchmarks/parallel_regions.py --rounds 31 --number 20
    python benchmarks/parallel_regions.py --openvino     # snippets on/off, 1 thread

Candidates:

* ``numpy``: hand-written float32 NumPy (``openvino_backend.gelu_numpy``);
* ``cpu 1 thread``: ``frame.jit(backend="cpu")`` run with
  ``frame.config.cpu_threads = 1``: the unchunked code, which is what the
  cpu executable ran before regions were chunked ("old");
* ``cpu``: the same executable at default settings (chunks on the pool);
* ``openvino``: ``frame.jit(backend="openvino")``;
* ``default``: ``frame.jit(fn)``, tiered with profile-guided tier choice,
  timed after its background compile and decision.

``--sweep`` times tanh-GELU on n x n arrays for the cpu executable on one
thread and chunked on the pool, with the work thresholds of
``chunks.py`` set to 0 so every size is chunked: where parallel chunks
start to pay is how ``PARALLEL_MIN_*`` were chosen.  The load average is
printed before and after: the machine may be shared.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import frame  # noqa: E402
from frame.backends.cpu import chunks  # noqa: E402
from frame.hal import threadpool as pool  # noqa: E402

from compiled_cpu import mlp_eager, mlp_numpy  # noqa: E402
from openvino_backend import gelu_numpy  # noqa: E402

C = math.sqrt(2.0 / math.pi)


def gelu(x):
    return 0.5 * x * (1.0 + frame.tanh(C * (x + 0.044715 * x * x * x)))


def one_thread(f):
    def run(*args):
        with frame.config.override(cpu_threads=1):
            return f(*args)
    return run


def interleaved(cands: dict, number: int, rounds: int) -> dict[str, list[float]]:
    for fn in cands.values():
        for _ in range(3):
            fn()
    samples: dict[str, list[float]] = {k: [] for k in cands}
    for _ in range(rounds):
        for k, fn in cands.items():
            t = time.perf_counter()
            for _ in range(number):
                fn()
            samples[k].append((time.perf_counter() - t) / number)
    return samples


def p10(v: list[float]) -> float:
    """The 10th percentile: on a shared machine, the rounds least disturbed."""
    return sorted(v)[len(v) // 10]


def show(title: str, samples: dict[str, list[float]], base: str = "numpy") -> None:
    ref, ref10 = statistics.median(samples[base]), p10(samples[base])
    print(f"{title}")
    for k, v in samples.items():
        med = statistics.median(v)
        print(f"  {k:<16} median {med * 1e3:8.3f} ms (x{ref / med:5.2f} vs {base})   "
              f"p10 {p10(v) * 1e3:8.3f} ms (x{ref10 / p10(v):5.2f})   min {min(v) * 1e3:8.3f} ms")


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def print_decisions() -> None:
    """The default candidates' tier decisions (profile-guided tier choice)."""
    from frame.runtime.stats import record
    for label, text in record.snapshot().tier_decisions.items():
        print(f"  tier decision {label}: {text}")


def wait_for_tiers() -> None:
    from frame.runtime import tiered
    if not tiered.scheduler.idle(timeout=600):
        raise RuntimeError("background compiles did not finish")


def workloads(rounds: int, number: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1024, 1024)).astype(np.float32)
    xt = frame.tensor(x)
    cpu = frame.jit(gelu, backend="cpu")
    ov = frame.jit(gelu, backend="openvino")
    dflt = frame.jit(gelu)
    cands = {"numpy": lambda: gelu_numpy(x), "cpu 1 thread": lambda: one_thread(cpu)(xt),
             "cpu": lambda: cpu(xt), "openvino": lambda: ov(xt), "default": lambda: dflt(xt)}
    for fn in cands.values():
        for _ in range(8):
            fn()
    wait_for_tiers()
    for _ in range(20):
        dflt(xt)   # the PGO trials
    wait_for_tiers()
    assert cpu(xt).numpy().tobytes() == one_thread(cpu)(xt).numpy().tobytes()
    np.testing.assert_allclose(cpu(xt).numpy(), gelu_numpy(x), rtol=1e-5, atol=1e-6)
    show(f"tanh-GELU float32 1024x1024, {rounds} rounds x {number} calls",
         interleaved(cands, number, rounds))
    print_decisions()

    g = [rng.uniform(-1, 1, s).astype(np.float32) for s in [(64, 64)] * 4 + [(64,)] * 2]
    g.append(np.array(0.5, np.float32))
    gt = [frame.tensor(a) for a in g]
    gcpu, gdflt = frame.jit(mlp_eager, backend="cpu"), frame.jit(mlp_eager)
    for _ in range(8):
        gcpu(*gt), gdflt(*gt)
    wait_for_tiers()
    for _ in range(20):
        gdflt(*gt)
    wait_for_tiers()
    show(f"20-node graph 64x64 (3 matmuls), {rounds} rounds x {number * 20} calls",
         interleaved({"numpy": lambda: mlp_numpy(*g), "cpu": lambda: gcpu(*gt),
                      "default": lambda: gdflt(*gt)}, number * 20, rounds))
    print_decisions()


def sweep(sizes: list[int], rounds: int) -> None:
    chunks.PARALLEL_MIN_ELEMENTS = chunks.PARALLEL_MIN_WORK = 0
    print(f"tanh-GELU n x n float32, cpu executable, every size chunked ({pool.size()} threads)")
    for n in sizes:
        x = frame.tensor(np.random.default_rng(0).standard_normal((n, n)).astype(np.float32))
        f = frame.jit(gelu, backend="cpu")
        number = max(5, 20 * (1024 * 1024) // (n * n))
        number = min(number, 2000)
        s = interleaved({"numpy": lambda: gelu_numpy(x.numpy()), "cpu 1 thread": lambda: one_thread(f)(x),
                         "cpu": lambda: f(x)}, number, rounds)
        med = {k: statistics.median(v) for k, v in s.items()}
        print(f"  n={n:5d} ({n * n:8d} elements): numpy {med['numpy'] * 1e6:9.1f} us, "
              f"1 thread {med['cpu 1 thread'] * 1e6:9.1f} us, chunked {med['cpu'] * 1e6:9.1f} us "
              f"(x{med['cpu 1 thread'] / med['cpu']:4.2f} vs 1 thread)")


def openvino_variants(rounds: int, number: int) -> None:
    """The openvino executable of the GELU graph under the settings that could
    matter: frame's (snippets off, every core), snippets on, one thread."""
    from frame.hal import CompileOptions
    from frame.runtime import compile as rc
    from openvino_backend import gelu_graph
    x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    cands = {"numpy": lambda: gelu_numpy(x)}
    for name, extra in (("ov frame's", ()), ("ov snippets on", (("SNIPPETS_MODE", "ENABLE"),)),
                        ("ov 1 thread", (("INFERENCE_NUM_THREADS", "1"),))):
        with frame.config.override(tiered=False, cache=False):
            exe = rc.compile(gelu_graph(x.shape), "openvino", CompileOptions(extra=extra))
        cands[name] = (lambda exe=exe: exe.run([x]))
    cpu = rc.compile(gelu_graph(x.shape), "cpu")
    cands["cpu"] = lambda: cpu.run([x])
    show(f"tanh-GELU 1024x1024, executables, {rounds} rounds x {number} calls",
         interleaved(cands, number, rounds))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--sweep", type=int, nargs="*", help="GELU sizes n (n x n) to sweep")
    ap.add_argument("--openvino", action="store_true",
                    help="the GELU graph's openvino executable: snippets, threads")
    ap.add_argument("--chunk-bytes", type=int, help="chunks.CHUNK_BYTES for this run")
    args = ap.parse_args()
    if args.chunk_bytes:
        chunks.CHUNK_BYTES = args.chunk_bytes
    print(f"load average before: {load()}; cpu pool: {pool.size()} threads; "
          f"numpy {np.__version__}")
    if args.sweep:
        sweep(args.sweep, args.rounds)
    elif args.openvino:
        openvino_variants(args.rounds, args.number)
    else:
        workloads(args.rounds, args.number)
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
