"""What one steady-state MLP training step copies and allocates, and how long
it takes, per tier (issue 13 item 4: no allocation and no copy).

    python benchmarks/steady_state.py                 # this checkout
    python benchmarks/steady_state.py --compare /tmp/old_checkout --pairs 3

For ``frame.jit`` with the cpu backend, the openvino backend and the default
(tiered, PGO) on the MLP 784-256-128-10 SGD step (batch 128,
``_mlp_numpy``), after warm-up:

* ``copies``: write-back copies the capture entry made (``__copyto`` calls
  and bytes): the in-place parameter updates copied back into the parameters;
* ``alloc KB``: the peak of NumPy/Python memory allocated during one step
  above what was live before it (``tracemalloc``; OpenVINO's own memory is
  not seen);
* ``ov.Tensor``: OpenVINO tensors made during the step (binding new memory);
* ``ms``: median per-step time, interleaved with hand NumPy in the same
  process (``vs numpy``: NumPy's time / frame's).

``--compare DIR`` runs the same measurement in child processes alternating
between this checkout and ``DIR`` (an older checkout, e.g. ``git archive main
| tar -x -C DIR``), ``--pairs`` times, and prints both: on a shared machine
the ratios of one pair are what to read.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TIERS = ("cpu", "openvino", "default")


def measure(rounds: int, number: int) -> dict:
    sys.path.insert(0, HERE)
    import numpy as np
    import frame
    from capture.codegen import set_entry_helper
    from capture.jit import cache_of
    from _harness import interleaved
    from _mlp_numpy import frame_train_step, make_data, numpy_step
    import frame.backends.openvino.executable as ov_exe

    x, y = make_data()
    xt, yt = frame.tensor(x), frame.tensor(y)
    steps, fns = {}, {}
    for tier in TIERS:
        _, step = frame_train_step()
        backend = None if tier == "default" else tier
        jitted = frame.jit(step, backend=backend)
        for _ in range(4):
            jitted(xt, yt)
        steps[tier] = (step, backend, jitted)
    from frame.runtime import tiered
    tiered.scheduler.idle(timeout=600)
    for tier, (step, backend, jitted) in steps.items():
        for _ in range(40):   # PGO trials, then the steady state
            jitted(xt, yt)
        fns[tier] = (lambda j=jitted: j(xt, yt))
    params = [p.numpy().copy() for p in frame_train_step()[0].parameters()]
    out = {"tiers": {}}
    real_tensor = ov_exe.ov.Tensor
    for tier, (step, backend, jitted) in steps.items():
        entry = cache_of(step, backend).entries[0]
        copies = []

        def copyto(dst, src, **kw):
            copies.append(dst.nbytes)
            np.copyto(dst, src, **kw)
        made = []
        set_entry_helper(entry.fn, "__copyto", copyto)
        ov_exe.ov.Tensor = lambda *a, **k: made.append(1) or real_tensor(*a, **k)
        try:
            jitted(xt, yt)
            copies.clear(), made.clear()
            tracemalloc.start()
            jitted(xt, yt)
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            copies.clear(), made.clear()
            jitted(xt, yt)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        finally:
            ov_exe.ov.Tensor = real_tensor
            set_entry_helper(entry.fn, "__copyto", np.copyto)
        exe = entry.executable
        runs_on = getattr(exe, "state", None) or type(exe).__name__
        out["tiers"][tier] = {"copies": len(copies), "copied_kb": sum(copies) / 1024,
                              "alloc_kb": (peak - before) / 1024, "ov_tensors": len(made),
                              "runs_on": str(runs_on)}
    fns["numpy"] = numpy_step(x, y, params)
    ms = interleaved(fns, number=number, rounds=rounds, warmup=3)
    for tier in TIERS:
        out["tiers"][tier]["ms"] = ms[tier] * 1e3
    out["numpy_ms"] = ms["numpy"] * 1e3
    out["load"] = os.getloadavg()[0]
    return out


def show(label: str, res: dict) -> None:
    print(f"{label}  (load {res['load']:.1f}; hand NumPy {res['numpy_ms']:.3f} ms)")
    print(f"  {'tier':<9} {'copies':>6} {'copied KB':>10} {'alloc KB':>9} {'ov.Tensor':>9} "
          f"{'ms':>8} {'vs numpy':>8}  runs on")
    for tier, r in res["tiers"].items():
        print(f"  {tier:<9} {r['copies']:>6} {r['copied_kb']:>10.0f} {r['alloc_kb']:>9.0f} "
              f"{r['ov_tensors']:>9} {r['ms']:>8.3f} {res['numpy_ms'] / r['ms']:>7.2f}x  {r['runs_on']}")


def child(root: str, rounds: int, number: int) -> dict | None:
    env = dict(os.environ, PYTHONPATH=root, FRAME_CACHE="0")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--rounds",
                           str(rounds), "--number", str(number)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode:
        print(proc.stderr[-3000:], file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--compare", help="another checkout to measure alternately")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.rounds, args.number)))
        return 0
    if not args.compare:
        res = child(ROOT, args.rounds, args.number)
        if res:
            show(ROOT, res)
        return 0 if res else 1
    for k in range(args.pairs):
        for root in (args.compare, ROOT):
            res = child(os.path.abspath(root), args.rounds, args.number)
            if res:
                show(f"pair {k + 1}: {root}", res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
