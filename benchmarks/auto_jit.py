"""Automatic jit of hot eager code (issue 18): eager vs auto-jit vs explicit
``frame.jit``, per call, after warm-up, with frame's default settings.

    python benchmarks/auto_jit.py                 # 3 rounds of the three modes
    python benchmarks/auto_jit.py --rounds 5 --calls 200
    python benchmarks/auto_jit.py --demo --backend cpu   # the acceptance run (mnist_mlp.py)

Workloads:

* ``mlp_step``: the demo's training step (MLP 784-256-128-10, SGD momentum,
  cross-entropy, batch 64): forward, ``loss.backward()``, ``opt.step()``;
* ``cnn_forward``: a small CNN (two 3x3 convolutions + ReLU, a linear head)
  forward on 8x1x28x28 under ``frame.no_grad()`` (a module unit);
* ``tiny``: ``x * 2 + 1`` on a 4-element tensor, called in a loop (auto-jit
  must not slow it down).

Each mode runs in a child process of its own (auto-jit's routing is process
state), the modes alternating round after round; a child warms up (``--warmup``
calls, waiting for background compiles), then times ``--calls`` calls.  The
table shows the median over rounds of each child's median per-call time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODES = ("eager", "auto-jit", "jit")
WORKLOADS = ("mlp_step", "cnn_forward", "tiny")


def _workload(name: str):
    import numpy as np

    import frame
    import frame.nn.functional as F
    from frame import nn

    rng = np.random.default_rng(0)
    frame.manual_seed(0)
    if name == "mlp_step":
        model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                              nn.Linear(128, 10))
        opt = frame.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def train_step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        x = frame.from_numpy(rng.standard_normal((64, 784)).astype(np.float32))
        y = frame.from_numpy(rng.integers(0, 10, 64))
        return train_step, (x, y), False
    if name == "cnn_forward":
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = nn.Conv2d(1, 8, 3)
                self.c2 = nn.Conv2d(8, 8, 3)
                self.fc = nn.Linear(8 * 24 * 24, 10)

            def forward(self, x):
                h = frame.relu(self.c2(frame.relu(self.c1(x))))
                return self.fc(h.reshape(x.shape[0], -1))
        net = Net()
        x = frame.from_numpy(rng.standard_normal((8, 1, 28, 28)).astype(np.float32))
        return net, (x,), True
    if name == "tiny":
        def tiny(x):
            return x * 2.0 + 1.0
        return tiny, (frame.from_numpy(np.arange(4, dtype=np.float32)),), False
    raise SystemExit(f"unknown workload {name!r}")


def child(mode: str, name: str, warmup: int, calls: int) -> dict:
    import frame
    if mode == "auto-jit":
        frame.config.auto_jit = True
    fn, args, no_grad = _workload(name)
    if mode == "jit":
        fn = frame.jit(fn)

    def call():
        if no_grad:
            with frame.no_grad():
                return fn(*args)
        return fn(*args)
    from frame.runtime import tiered
    for i in range(warmup):
        call()
        if i % 5 == 4:
            tiered.scheduler.idle(60)  # background compiles land during warm-up
    tiered.scheduler.idle(60)
    for _ in range(10):
        call()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    units = frame.stats().auto_jit
    return {"ms": statistics.median(times) * 1e3,
            "units": {k: v["state"] for k, v in units.items()}}


def demo_child(mode: str, backend: str, epochs: int, out: str) -> dict:
    """examples/mnist_mlp.py's training loop (``frame.demo.train``): ``eager`` is
    ``--no-jit``, ``auto-jit`` is ``--no-jit`` with FRAME_AUTO_JIT=1, ``jit`` the
    decorated step; the final parameters go to ``out`` (.npz)."""
    import numpy as np
    from rich.console import Console

    import frame
    from frame import demo
    frame.config.backend = backend  # auto-jit compiles for frame's default backend
    if mode == "auto-jit":
        frame.config.auto_jit = True
    data = demo.load_data("auto", 0)
    r = demo.train(data, jit=mode == "jit", backend=backend, epochs=epochs, lr=demo.DEFAULT_LR,
                   momentum=demo.DEFAULT_MOMENTUM, seed=0, steps_per_epoch=None,
                   console=Console(quiet=True))
    np.savez(out, *r.params)
    steps = len(r.step_times)
    tail = r.step_times[steps // 2:]  # after warm-up: the second half of the run
    return {"ms": statistics.median(tail) * 1e3, "steps": steps,
            "units": {k: v["state"] for k, v in frame.stats().auto_jit.items()}}


def demo_main(args, env) -> int:
    import tempfile

    import numpy as np
    from frame.backends import default_backend_name
    backend = args.backend or default_backend_name()
    ms: dict = {m: [] for m in MODES}
    params: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for m in MODES:
                out = os.path.join(tmp, f"{m}.npz")
                res = subprocess.run([sys.executable, __file__, "--demo-child", m, backend,
                                      str(args.epochs), out], capture_output=True, text=True,
                                     env=env, check=True)
                data = json.loads(res.stdout.strip().splitlines()[-1])
                ms[m].append(data["ms"])
                with np.load(out) as z:
                    params[m] = [z[k] for k in sorted(z.files, key=lambda k: int(k.split("_")[1]))]
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    e, a, j = (statistics.median(ms[m]) for m in MODES)
    print(f"examples/mnist_mlp.py training loop, backend {backend}, {args.epochs} epochs, "
          f"median ms/step over the second half of each run, median of {args.rounds} runs")
    print(f"  eager (--no-jit)          {e:8.3f} ms/step")
    print(f"  eager + FRAME_AUTO_JIT=1  {a:8.3f} ms/step   {j / a * 100:5.1f}% of frame.jit's "
          f"steps/s")
    print(f"  frame.jit                 {j:8.3f} ms/step")
    for m in ("auto-jit", "jit"):
        diff = max(float(np.max(np.abs(p - q))) for p, q in zip(params[m], params["eager"]))
        same = all(np.array_equal(p, q) for p, q in zip(params[m], params["eager"]))
        print(f"  final parameters, {m} vs eager: max |diff| {diff:.3g}"
              + (" (bit for bit)" if same else ""))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=60)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--demo", action="store_true",
                        help="the acceptance run instead: examples/mnist_mlp.py's loop, eager "
                             "vs eager with FRAME_AUTO_JIT=1 vs frame.jit, and the final "
                             "parameters against eager")
    parser.add_argument("--epochs", type=int, default=3, help="--demo: training epochs")
    parser.add_argument("--backend", default=None, help="--demo: backend (default: frame's)")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "WORKLOAD"), help=argparse.SUPPRESS)
    parser.add_argument("--demo-child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.warmup, args.calls)))
        return 0
    if args.demo_child:
        m, backend, epochs, out = args.demo_child
        print(json.dumps(demo_child(m, backend, int(epochs), out)))
        return 0
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("FRAME_AUTO_JIT", None)
    if args.demo:
        return demo_main(args, env)
    results: dict = {(w, m): [] for w in args.workloads.split(",") for m in MODES}
    states: dict = {}
    for r in range(args.rounds):
        for w in args.workloads.split(","):
            for m in MODES:
                out = subprocess.run([sys.executable, __file__, "--child", m, w, "--warmup",
                                      str(args.warmup), "--calls", str(args.calls)],
                                     capture_output=True, text=True, env=env, check=True)
                data = json.loads(out.stdout.strip().splitlines()[-1])
                results[(w, m)].append(data["ms"])
                if m == "auto-jit":
                    states[w] = data["units"]
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(f"{'workload':<12} {'eager ms':>10} {'auto-jit ms':>12} {'jit ms':>9} "
          f"{'auto/eager':>11} {'auto/jit':>9}  auto-jit units")
    for w in args.workloads.split(","):
        e, a, j = (statistics.median(results[(w, m)]) for m in MODES)
        units = ", ".join(f"{k.split(' (')[0]}: {v}" for k, v in states.get(w, {}).items())
        print(f"{w:<12} {e:>10.3f} {a:>12.3f} {j:>9.3f} {e / a:>10.2f}x {j / a:>8.2f}x  {units}")
    print("auto/eager above 1: auto-jit is faster than eager; auto/jit at 1: as fast as "
          "frame.jit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
