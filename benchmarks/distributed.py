"""Data-parallel training step on MPI: step time and all-reduce time for 1 and 2
processes (``mpiexec -n N`` on this machine), MLP 784 -> 256 -> 128 -> 10,
float32, SGD with momentum, the step jitted for OpenVINO (untiered) with
``DataParallel.average_gradients()`` inside it (one all-reduce of the 235,146
gradients, 0.94 MB, per step).

    python benchmarks/distributed.py                  # 1 and 2 processes, strong and weak
    python benchmarks/distributed.py --procs 1 2 4 --steps 60

Two scalings:

* strong: the global batch (128) is split over the processes (64 each for 2);
* weak: every process trains on 128 samples (the global batch grows with N).

Per run (rank 0's view; the ranks are symmetric): the median step time, the
all-reduce time inside the step (``frame.stats()`` ``collective`` time per
step: the MPI call *including the wait for the slowest rank*), and a bare
``Allreduce`` of the same buffer after a barrier (the transfer alone).  The
step itself runs with one OpenVINO / OpenBLAS thread per process
(``INFERENCE_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS``), so N processes use N
cores; on this 2-core machine 2 processes use every core, and anything above 2
is oversubscribed.  docs/distributed.md has the numbers and the scaling model.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SIZES = (784, 256, 128, 10)
BATCH = 128


def _parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, nargs="+", default=[1, 2])
    p.add_argument("--steps", type=int, default=40, help="timed steps per run")
    p.add_argument("--scaling", choices=["strong", "weak", "both"], default="both")
    p.add_argument("--worker", metavar="JSON", help=argparse.SUPPRESS)
    p.add_argument("--local-batch", type=int, default=BATCH, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def worker(args: argparse.Namespace) -> None:
    import numpy as np

    import frame
    import frame.distributed as dist
    import frame.nn.functional as F
    from frame import nn

    dist.init()
    frame.manual_seed(0)
    model = dist.DataParallel(nn.Sequential(
        nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(),
        nn.Linear(SIZES[2], SIZES[3])))
    opt = frame.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def train_step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        model.average_gradients()
        opt.step()
        return loss

    step = frame.jit(train_step, backend="openvino")
    rng = np.random.default_rng(dist.rank())
    x = frame.tensor(rng.standard_normal((args.local_batch, SIZES[0])).astype(np.float32))
    y = frame.tensor(rng.integers(0, SIZES[-1], args.local_batch))
    for _ in range(5):  # capture, compile, warm up
        step(x, y).item()
    dist.barrier()
    frame.reset_stats()
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step(x, y).item()
        times.append(time.perf_counter() - t0)
    s = frame.stats()
    in_step = s.extra_times.get("collective", 0.0) / args.steps
    buf = np.ones(sum(p.size for p in model.params), np.float32)
    pg = dist.group()
    bare = []
    for _ in range(args.steps):
        pg.barrier()
        t0 = time.perf_counter()
        pg.all_reduce(buf, "mean")
        bare.append(time.perf_counter() - t0)
    if dist.rank() == 0:
        pathlib.Path(args.worker).write_text(json.dumps({
            "procs": dist.world_size(), "local_batch": args.local_batch,
            "step_ms": statistics.median(times) * 1e3,
            "allreduce_in_step_ms": in_step * 1e3,
            "allreduce_bare_ms": statistics.median(bare) * 1e3,
            "allreduce_bare_min_ms": min(bare) * 1e3,
            "bytes": int(buf.nbytes), "graph_breaks": sum(s.graph_breaks.values()),
            "recompiles": s.recompiles}))


def _mpiexec() -> str:
    beside = pathlib.Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if not found:
        raise SystemExit("mpiexec not found: pip install -e '.[distributed]'")
    return found


def run(n: int, local_batch: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "result.json"
        env = dict(os.environ, FRAME_TIERED="0", OPENBLAS_NUM_THREADS="1",
                   FRAME_BLAS_THREADS="1", INFERENCE_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        cmd = [_mpiexec(), "-n", str(n), sys.executable, str(pathlib.Path(__file__).resolve()),
               "--worker", str(out), "--steps", str(steps), "--local-batch", str(local_batch)]
        subprocess.run(cmd, env=env, check=True, stdin=subprocess.DEVNULL, timeout=600,
                       stderr=subprocess.DEVNULL)
        return json.loads(out.read_text())


def main(argv=None) -> None:
    args = _parse(argv)
    if args.worker:
        worker(args)
        return
    scalings = ["strong", "weak"] if args.scaling == "both" else [args.scaling]
    print(f"MLP {'-'.join(map(str, SIZES))}, float32, jitted for openvino with one all-reduce "
          f"per step; {os.cpu_count()} cores; median over {args.steps} steps")
    print(f"{'scaling':<8} {'procs':>5} {'batch/proc':>10} {'step ms':>9} {'all-reduce ms':>14} "
          f"{'bare median/min ms':>19} {'samples/s':>10}")
    for scaling in scalings:
        base = None
        for n in args.procs:
            local = BATCH // n if scaling == "strong" else BATCH
            r = run(n, local, args.steps)
            rate = local * n / (r["step_ms"] / 1e3)
            base = base or rate
            print(f"{scaling:<8} {n:>5} {local:>10} {r['step_ms']:>9.2f} "
                  f"{r['allreduce_in_step_ms']:>14.2f} "
                  f"{r['allreduce_bare_ms']:>11.3f}/{r['allreduce_bare_min_ms']:<7.3f} "
                  f"{rate:>10.0f}  (x{rate / base:.2f})")
    print("all-reduce ms: inside the step, including the wait for the slower rank; bare: the "
          "same 0.94 MB all-reduce after a barrier (transfer only), median and fastest; "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
