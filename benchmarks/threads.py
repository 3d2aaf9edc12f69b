"""Thread settings swept, each in its own child process: who owns the cores when
NumPy's OpenBLAS pool and OpenVINO's pool share one process.

    python benchmarks/threads.py                    # every setting of SETTINGS
    python benchmarks/threads.py --only default "BLAS 1"
    python benchmarks/threads.py --rounds 11 --repeat 2

Workloads, candidates interleaved in each child (median of rounds):

* ``mlp``: the MLP 784-256-128-10 SGD training step, batch 128 (``_mlp_numpy``),
  as ``frame.jit`` with the default backend (tiered; timed after the OpenVINO
  tier is swapped in), ``backend="cpu"``, ``backend="openvino"``, and by hand
  in NumPy;
* ``gelu``: tanh-GELU on 1024x1024 float32, the same four ways;
* ``g20``: the 20-node 64x64 graph of ``compiled_cpu.py`` (3 matmuls), the same
  four ways.

A setting is a set of environment variables for the child: frame's own
(``FRAME_BLAS_THREADS``, ``FRAME_OV_THREADS``, ``FRAME_OV_PINNING``, see
docs/performance.md) or the libraries' (``OPENBLAS_NUM_THREADS``,
``OPENBLAS_THREAD_TIMEOUT``).  ``library defaults`` turns frame's rule off and
leaves every pool as the libraries set it up; ``default`` is what a user gets.
The last column sums a frame default step and a hand NumPy step: the cost of a
process that runs both, the case the default is chosen for.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

OFF = {"FRAME_BLAS_THREADS": "0", "FRAME_OV_THREADS": "0", "FRAME_OV_PINNING": ""}
SETTINGS: list[tuple[str, dict[str, str]]] = [
    ("default", {}),
    ("library defaults", dict(OFF)),
    ("BLAS 1", dict(OFF, FRAME_BLAS_THREADS="1")),
    ("OpenVINO 1", dict(OFF, FRAME_OV_THREADS="1")),
    ("BLAS 1, OpenVINO 1", dict(OFF, FRAME_BLAS_THREADS="1", FRAME_OV_THREADS="1")),
    ("OpenVINO pinning off", dict(OFF, FRAME_OV_PINNING="0")),
    ("BLAS 1, OpenVINO pinning off", dict(OFF, FRAME_BLAS_THREADS="1", FRAME_OV_PINNING="0")),
    ("BLAS 1, OpenVINO pinning on", dict(OFF, FRAME_BLAS_THREADS="1", FRAME_OV_PINNING="1")),
    # diagnostics: the libraries' own environment variables (read when they load)
    ("diag: OPENBLAS_NUM_THREADS=1", dict(OFF, OPENBLAS_NUM_THREADS="1")),
    ("diag: OPENBLAS_THREAD_TIMEOUT=4", dict(OFF, OPENBLAS_THREAD_TIMEOUT="4")),
]


# --------------------------------------------------------------------------- child

def _wait_tiers() -> None:
    from frame.runtime import tiered
    if not tiered.scheduler.idle(timeout=300):
        raise RuntimeError("background compiles did not finish within 300 s")


def child(args: argparse.Namespace) -> dict:
    sys.path.insert(0, HERE)
    import numpy as np

    import frame
    from _harness import interleaved
    from _mlp_numpy import LR, frame_train_step, make_data, numpy_step
    from compiled_cpu import mlp_eager, mlp_numpy, N
    from openvino_backend import gelu_numpy

    out: dict = {"ms": {}, "pools": None}

    def jitted(fn, backend):
        return fn if backend == "numpy" else frame.jit(fn, backend=None if backend == "default" else backend)

    # ---- mlp
    x, y = make_data()

    def frame_step(backend):
        model, train_step = frame_train_step(LR)
        xt, yt = frame.tensor(x), frame.tensor(y)
        step = frame.jit(train_step, backend=None if backend == "default" else backend)
        return lambda: step(xt, yt), model

    cands, params = {}, None
    for b in ("default", "cpu", "openvino"):
        cands[b], model = frame_step(b)
        params = [p.numpy().copy() for p in model.parameters()]
    cands["numpy"] = numpy_step(x, y, params)
    workloads = {"mlp": (cands, 20)}

    # ---- gelu
    c = np.float32(0.7978845608028654)

    def gelu(v):
        return 0.5 * v * (1.0 + frame.tanh(c * (v + 0.044715 * v * v * v)))
    xg = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    tg = frame.tensor(xg)
    cands = {b: (lambda f=frame.jit(gelu, backend=None if b == "default" else b): f(tg))
             for b in ("default", "cpu", "openvino")}
    cands["numpy"] = lambda: gelu_numpy(xg)
    workloads["gelu"] = (cands, 20)

    # ---- 20-node graph
    rng = np.random.default_rng(0)
    arrs = [rng.uniform(-1, 1, s).astype(np.float32) for s in [(N, N)] * 4 + [(N,)] * 2]
    half = np.array(0.5, np.float32)
    ts = [frame.tensor(a) for a in arrs] + [frame.tensor(half)]
    cands = {b: (lambda f=frame.jit(mlp_eager, backend=None if b == "default" else b): f(*ts))
             for b in ("default", "cpu", "openvino")}
    cands["numpy"] = lambda: mlp_numpy(*arrs, half)
    workloads["g20"] = (cands, 400)

    # compile everything, let the tiers swap, then time
    for cands, _ in workloads.values():
        for fn in cands.values():
            for _ in range(4):
                fn()
    _wait_tiers()
    from threadpoolctl import threadpool_info
    out["pools"] = [f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()]
    for name, (cands, number) in workloads.items():
        res = interleaved(cands, number=number, rounds=args.rounds, warmup=3)
        out["ms"][name] = {k: v * 1e3 for k, v in res.items()}
    return out


# --------------------------------------------------------------------------- parent

def load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=1, help="run the whole sweep this many times")
    ap.add_argument("--only", nargs="*", help="labels of SETTINGS to run")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    chosen = [(l, e) for l, e in SETTINGS if not args.only or l in args.only]
    print(f"cores: {os.cpu_count()}; median ms per call of interleaved rounds ({args.rounds}), "
          f"each setting in its own process")
    cache = tempfile.mkdtemp(prefix="frame-threads-")
    rows = []
    for rep in range(args.repeat):
        for label, env in chosen[rep % len(chosen):] + chosen[:rep % len(chosen)]:
            full = dict(os.environ, FRAME_CACHE_DIR=cache, PYTHONPATH=ROOT)
            for k in list(full):
                if k in OFF or k.startswith("OPENBLAS_") or k == "OMP_NUM_THREADS":
                    del full[k]
            full.update(env)
            before = load()
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                   "--rounds", str(args.rounds)], env=full, capture_output=True,
                                  text=True, timeout=900)
            if proc.returncode:
                print(f"== {label}: failed\n{proc.stderr[-2000:]}")
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append((label, res, before))
            ms = res["ms"]
            print(f"== {label} ({time.perf_counter() - t0:.0f} s, load before {before}; "
                  f"BLAS pools {', '.join(res['pools'])})", flush=True)
            for w, vals in ms.items():
                print(f"   {w:<5}" + "".join(f"  {k} {v:7.3f}" for k, v in vals.items()))
    cols = [(w, k) for w in ("mlp", "gelu", "g20") for k in ("default", "cpu", "openvino", "numpy")]
    print(f"\nsummary, ms per call, median over {args.repeat} run(s) of each setting "
          f"(default = frame.jit with the default backend; loads: 1-min load average before "
          f"each run):")
    print(f"  {'setting':<32}" + "".join(f" {w + ' ' + k:>13}" for w, k in cols)
          + f" {'mlp dflt+np':>12}  loads")
    for label, _ in chosen:
        runs = [(res, before) for l, res, before in rows if l == label]
        if not runs:
            continue
        med = {c: statistics.median(r["ms"][c[0]][c[1]] for r, _ in runs) for c in cols}
        both = statistics.median(r["ms"]["mlp"]["default"] + r["ms"]["mlp"]["numpy"] for r, _ in runs)
        print(f"  {label:<32}" + "".join(f" {med[c]:13.3f}" for c in cols)
              + f" {both:12.3f}  " + ",".join(b.split()[0] for _, b in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
