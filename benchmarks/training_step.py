"""Training step: MLP 784 -> 256 -> 128 -> 10 (ReLU), batch 128, float32, softmax
cross-entropy, plain SGD (lr 0.01), synthetic data -- one full step (forward,
backward, parameter update) per call, candidates interleaved in one process:

* a hand-written NumPy step (the floor a framework has to beat),
* frame eager (``loss.backward()``, ``opt.step()`` op by op),
* ``frame.jit(train_step, backend="cpu")`` and ``backend="openvino"``,
* PyTorch eager and ``torch.compile`` when torch is importable (skipped otherwise;
  an optional peer, never a dependency of frame).

Every candidate starts from the same parameters and data; the table shows each
one's first-step loss (they must agree) and its median ms/step over rounds.

    python benchmarks/training_step.py                      # thread pools at their defaults
    python benchmarks/training_step.py --blas-threads 1 --ov-threads 1
    python benchmarks/training_step.py --sweep              # each thread setting in its own process

Thread pools: NumPy's OpenBLAS, OpenVINO's and torch's pools share the machine's
cores; on 2 cores they interfere.  ``--blas-threads`` sets ``OPENBLAS_NUM_THREADS``
(and friends) before NumPy loads, ``--ov-threads`` sets ``INFERENCE_NUM_THREADS`` on
frame's OpenVINO core before anything compiles (frame's own choice otherwise: one
thread below 64K elements per tensor, OpenVINO's default above -- this step's
784x256 weights are above), ``--torch-threads`` calls ``torch.set_num_threads``.
``--sweep`` runs the benchmark in a subprocess per setting and tabulates them.
frame's own thread rule (docs/performance.md) limits the BLAS pool to one thread
once the openvino candidate compiles, whatever ``--blas-threads`` set; run with
``FRAME_BLAS_THREADS=0`` to keep the library's pool (``benchmarks/threads.py`` is
the sweep of frame's settings).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blas-threads", type=int, default=None, help="OpenBLAS/OpenMP threads for NumPy")
    ap.add_argument("--ov-threads", type=int, default=None, help="OpenVINO INFERENCE_NUM_THREADS")
    ap.add_argument("--torch-threads", type=int, default=None, help="torch.set_num_threads")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--number", type=int, default=20, help="steps per candidate per round")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch even if installed")
    ap.add_argument("--no-torch-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--sweep", action="store_true",
                    help="run each thread setting in its own subprocess and tabulate")
    ap.add_argument("--timeout", type=float, default=300, help="--sweep: seconds per setting")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # used by --sweep
    return ap.parse_args(argv)


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and ARGS.blas_threads and not ARGS.sweep:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.blas_threads)

import numpy as np  # noqa: E402

from _mlp_numpy import (BATCH, LR, SIZES, frame_model, frame_train_step, make_data,  # noqa: E402
                        numpy_step as _numpy_step, torch_train_step)


# --------------------------------------------------------------------------- candidates

def frame_step(x, y, backend: str | None):
    """A frame training step on its own model (same initial parameters every time);
    ``backend=None`` is eager, else ``frame.jit(step, backend=backend)``."""
    import frame
    _, train_step = frame_train_step(LR)
    xt, yt = frame.tensor(x), frame.tensor(y)

    step = train_step if backend is None else frame.jit(train_step, backend=backend)
    return lambda: step(xt, yt), lambda out: float(out.item())


def numpy_step(x, y, params: list[np.ndarray]):
    """The hand-written NumPy step (``_mlp_numpy``) and how to read its loss."""
    return _numpy_step(x, y, params), float


def torch_step(x, y, params: list[np.ndarray], compiled: bool):
    import torch
    train_step = torch_train_step(params, LR)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    step = torch.compile(train_step) if compiled else train_step
    return lambda: step(xt, yt), lambda out: float(out.item())


# --------------------------------------------------------------------------- one process

def run_once(args: argparse.Namespace) -> dict:
    import frame
    from frame.hal import get_backend

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _harness import interleaved

    settings = {"OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
                "ov INFERENCE_NUM_THREADS": str(args.ov_threads) if args.ov_threads else "frame's default"}
    try:
        from threadpoolctl import threadpool_info
        settings["BLAS pools (threadpoolctl)"] = ", ".join(
            f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info()) or "none"
    except ImportError:
        pass
    if args.ov_threads:
        get_backend("openvino").core.set_property("CPU", {"INFERENCE_NUM_THREADS": args.ov_threads})

    x, y = make_data()
    params = [p.numpy().copy() for p in frame_model().parameters()]
    candidates: dict[str, tuple] = {
        "numpy (hand-written)": numpy_step(x, y, params),
        "frame eager": frame_step(x, y, None),
        "frame.jit(cpu)": frame_step(x, y, "cpu"),
        "frame.jit(openvino)": frame_step(x, y, "openvino"),
    }
    skipped: list[str] = []
    torch_version = None
    if args.no_torch:
        skipped.append("PyTorch (--no-torch)")
    else:
        try:
            import torch
        except ImportError:
            skipped.append("PyTorch (not installed)")
        else:
            torch_version = torch.__version__
            if args.torch_threads:
                torch.set_num_threads(args.torch_threads)
            settings["torch threads"] = str(torch.get_num_threads())
            candidates["torch eager"] = torch_step(x, y, params, compiled=False)
            if args.no_torch_compile:
                skipped.append("torch.compile (--no-torch-compile)")
            else:
                candidates["torch.compile"] = torch_step(x, y, params, compiled=True)

    # first step of each (includes capture and compilation): losses must agree
    first_loss, first_s = {}, {}
    for name, (fn, to_float) in candidates.items():
        t0 = time.perf_counter()
        first_loss[name] = to_float(fn())
        first_s[name] = time.perf_counter() - t0
    # the openvino candidate is tiered by default: its first calls run on the cpu
    # tier while OpenVINO compiles in the background; time it once swapped
    from frame.runtime import tiered
    for _ in range(3):
        candidates["frame.jit(openvino)"][0]()
    if not tiered.scheduler.idle(timeout=300):
        raise RuntimeError("the openvino tier did not finish compiling within 300 s")
    swaps = frame.stats().extra.get("tier_swaps", 0)
    frame.reset_stats()
    times = interleaved({name: fn for name, (fn, _) in candidates.items()},
                        number=args.number, rounds=args.rounds, warmup=5)
    s = frame.stats()
    return {"settings": settings, "first_loss": first_loss, "first_s": first_s,
            "ms": {k: v * 1e3 for k, v in times.items()}, "skipped": skipped,
            "torch": torch_version,
            "frame_steady": {"tier_swaps_before": swaps, "translations": s.translations,
                             "compiles": s.compiles,
                             "graph_breaks": sum(s.graph_breaks.values()),
                             "cache_hits": s.cache_hits}}


def show(res: dict, args: argparse.Namespace) -> None:
    print(f"MLP {'-'.join(map(str, SIZES))} training step, batch {BATCH}, float32, SGD lr {LR}, "
          f"synthetic data; median ms/step over {args.rounds} interleaved rounds of "
          f"{args.number} steps")
    print("threads: " + "; ".join(f"{k}={v}" for k, v in res["settings"].items()))
    if res["torch"]:
        print(f"torch {res['torch']}")
    ms = res["ms"]
    numpy_ms = ms["numpy (hand-written)"]
    torch_ms = ms.get("torch eager")
    header = f"  {'candidate':<22} {'ms/step':>8} {'vs numpy':>9}"
    header += f" {'vs torch':>9}" if torch_ms else ""
    header += f" {'1st step ms':>12} {'1st loss':>10}"
    print(header)
    for name, v in ms.items():
        line = f"  {name:<22} {v:8.3f} {numpy_ms / v:8.2f}x"
        if torch_ms:
            line += f" {torch_ms / v:8.2f}x"
        line += f" {res['first_s'][name] * 1e3:12.1f} {res['first_loss'][name]:10.5f}"
        print(line)
    print("  (vs X: X's time / this time; above 1 is faster than X)")
    fs = res["frame_steady"]
    print(f"frame during the timed rounds: translations {fs['translations']}, compiles "
          f"{fs['compiles']}, graph breaks {fs['graph_breaks']}, cache hits {fs['cache_hits']} "
          f"(the openvino candidate's OpenVINO tier was swapped in before: "
          f"{fs['tier_swaps_before']} swap(s))")
    for s in res["skipped"]:
        print(f"skipped: {s}")


SWEEP = [  # (label, blas threads, openvino threads, torch threads)
    ("defaults", None, None, None),
    ("BLAS 1", 1, None, None),
    ("OpenVINO 1", None, 1, None),
    ("BLAS 1, OpenVINO 1, torch 1", 1, 1, 1),
]


def sweep(args: argparse.Namespace) -> None:
    rows = []
    for label, blas, ovt, tt in SWEEP:
        cmd = [sys.executable, os.path.abspath(__file__), "--json", "--rounds", str(args.rounds),
               "--number", str(args.number)]
        for flag, val in (("--blas-threads", blas), ("--ov-threads", ovt), ("--torch-threads", tt)):
            if val:
                cmd += [flag, str(val)]
        if args.no_torch:
            cmd.append("--no-torch")
        if args.no_torch_compile:
            cmd.append("--no-torch-compile")
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                                 timeout=args.timeout).stdout
        except subprocess.TimeoutExpired:
            # seen with torch's OpenMP pool and OpenBLAS both at 2 threads on 2 cores:
            # oversubscription makes every step tens of ms and torch.compile crawl
            print(f"== {label}: timed out after {args.timeout:.0f} s (thread oversubscription?)")
            continue
        res = json.loads(out.strip().splitlines()[-1])
        print(f"== {label}")
        show(res, args)
        rows.append((label, res["ms"]))
    if not rows:
        return
    names = list(rows[0][1])
    print("\nsummary, ms/step (each setting in its own process):")
    print(f"  {'setting':<30}" + "".join(f" {n[:20]:>20}" for n in names))
    for label, ms in rows:
        print(f"  {label:<30}" + "".join(f" {ms.get(n, float('nan')):20.3f}" for n in names))


def main() -> int:
    if ARGS.sweep:
        sweep(ARGS)
        return 0
    res = run_once(ARGS)
    if ARGS.json:
        print(json.dumps(res))
    else:
        show(res, ARGS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
