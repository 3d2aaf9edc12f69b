"""Where the MLP training step's time goes, and its floor on this machine
(issue 13: "MLP train step with default settings at most 0.8x the time of
hand-written NumPy").

    python benchmarks/mlp_floor.py --rounds 9          # timings + OpenVINO profile
    python benchmarks/mlp_floor.py --no-profile

One process, candidates interleaved round by round (order rotated every round,
``--pause`` seconds of sleep before each block so that no block runs while the
previous block's thread pool still spins), medians of ``--rounds`` blocks of
``--number`` calls, all on the MLP 784-256-128-10 SGD step, batch 128, float32
(``_mlp_numpy``):

* ``numpy step``: the hand-written step (``numpy_step``), with the BLAS pool
  the library set up ("own": NumPy as a user runs it) and with one thread
  (what frame's thread rule leaves it once OpenVINO is used);
* ``numpy 8 GEMMs``: only the step's eight matmuls (3 forward, 5 backward; no
  input gradient), same operands and transposes as the step;
* ``openvino 8 GEMMs``: the same eight matmuls as one OpenVINO model (transposes
  as MatMul flags), OpenVINO's own thread count, computed in float32
  (``INFERENCE_PRECISION_HINT`` f32, as frame compiles); ``openvino 8 GEMMs,
  bf16`` is the same model with OpenVINO's default precision, which on a CPU
  with AVX512-BF16 (this machine's) computes the matmuls in bfloat16: not the
  step's arithmetic, shown because the floor before 2026-12-07 was measured
  with it;
* ``numpy updates`` / ``param write-back``: the six ``w -= lr * g`` updates, and
  the six copies (``np.copyto``, 919 KB) the capture entry makes after an
  OpenVINO step (OpenVINO cannot write an output into an input's memory);
* ``frame default`` / ``frame cpu`` / ``frame openvino``: ``frame.jit`` of the
  step, tiers settled (background compile done, PGO decided); ``frame cpu,
  own BLAS`` runs the cpu executable with the BLAS pool the library set up.

``--profile`` (default on) then runs, in a child process, the OpenVINO
executable of the step with ``PERF_COUNT`` and prints the per-node-type time
(MatMul against the rest) as OpenVINO reports it.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def gemm_operands(x, params):
    """The eight matmuls' operands, as the step has them (values do not matter)."""
    import numpy as np
    W1, _, W2, _, W3, _ = params
    rng = np.random.default_rng(1)
    h1 = rng.random((128, 256), np.float32)
    h2 = rng.random((128, 128), np.float32)
    g3 = rng.random((128, 10), np.float32)
    g2 = rng.random((128, 128), np.float32)
    g1 = rng.random((128, 256), np.float32)
    return x, W1, W2, W3, h1, h2, g3, g2, g1


def numpy_gemms(ops):
    x, W1, W2, W3, h1, h2, g3, g2, g1 = ops

    def run():
        x @ W1.T, h1 @ W2.T, h2 @ W3.T            # forward
        g3.T @ h2, g3 @ W3, g2.T @ h1, g2 @ W2, g1.T @ x  # backward
    return run


def openvino_gemms(ops, precision: str | None = "f32"):
    """The eight matmuls as one OpenVINO model; a callable running it.
    ``precision`` is the ``INFERENCE_PRECISION_HINT`` (None: OpenVINO's
    default for the device)."""
    import openvino as ov
    import openvino.opset16 as op
    arrays = list(ops)
    params = [op.parameter(list(a.shape), ov.Type.f32) for a in arrays]
    x, W1, W2, W3, h1, h2, g3, g2, g1 = params
    outs = [op.matmul(x, W1, False, True), op.matmul(h1, W2, False, True),
            op.matmul(h2, W3, False, True), op.matmul(g3, h2, True, False),
            op.matmul(g3, W3, False, False), op.matmul(g2, h1, True, False),
            op.matmul(g2, W2, False, False), op.matmul(g1, x, True, False)]
    model = ov.Model([o.output(0) for o in outs], params, "gemms")
    config = {"PERFORMANCE_HINT": "LATENCY"}
    if precision is not None:
        config["INFERENCE_PRECISION_HINT"] = precision
    compiled = ov.Core().compile_model(model, "CPU", config)
    req = compiled.create_infer_request()
    for i, a in enumerate(arrays):
        req.set_input_tensor(i, ov.Tensor(a, shared_memory=True))

    def run():
        req.infer()
    return run


def settle(step, args, timeout=300.0):
    import frame
    from frame.runtime import tiered
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for _ in range(5):
            step(*args)
        e = frame.stats().extra
        if tiered.scheduler.pending == 0 and e.get("pgo_decisions", 0) + e.get("pgo_stored", 0):
            return
    raise RuntimeError("the tiers did not settle")


def timings(rounds: int, number: int, pause: float) -> None:
    import numpy as np
    import peers
    from _mlp_numpy import LR, frame_train_step, make_data, numpy_step
    own = peers._blas_threads()
    import frame
    x, y = make_data()
    params = peers.mlp_params()
    ops = gemm_operands(x, params)
    cands, blas = {}, {}
    npstep = numpy_step(x, y, params)
    cands["numpy step, own BLAS"], blas["numpy step, own BLAS"] = npstep, own
    cands["numpy step, BLAS 1"], blas["numpy step, BLAS 1"] = npstep, 1
    cands["numpy 8 GEMMs, own BLAS"], blas["numpy 8 GEMMs, own BLAS"] = numpy_gemms(ops), own
    cands["numpy 8 GEMMs, BLAS 1"], blas["numpy 8 GEMMs, BLAS 1"] = numpy_gemms(ops), 1
    cands["openvino 8 GEMMs"] = openvino_gemms(ops)
    cands["openvino 8 GEMMs, bf16"] = openvino_gemms(ops, None)
    ws = [p.copy() for p in params]
    gs = [np.full_like(p, 1e-3) for p in params]
    src = [p.copy() for p in params]

    def updates():
        for w, g in zip(ws, gs):
            w -= LR * g

    def write_back():
        for w, s in zip(ws, src):
            np.copyto(w, s)
    cands["numpy updates"] = updates
    cands["param write-back"] = write_back
    xt, yt = frame.tensor(x), frame.tensor(y)
    steps = {}
    for backend in (None, "cpu", "openvino"):
        _, ts = frame_train_step(LR)
        steps[backend] = step = frame.jit(ts, backend=backend)
        for _ in range(5):
            step(xt, yt)
        if backend is None:
            settle(step, (xt, yt))
    from frame.runtime import tiered
    tiered.scheduler.idle(300)
    for _ in range(20):
        steps["openvino"](xt, yt)
    cands["frame default"] = lambda: steps[None](xt, yt)
    cands["frame cpu"] = lambda: steps["cpu"](xt, yt)
    cands["frame cpu, own BLAS"], blas["frame cpu, own BLAS"] = cands["frame cpu"], own
    cands["frame openvino"] = lambda: steps["openvino"](xt, yt)
    load = os.getloadavg()
    res = peers.timed_blocks(cands, number=number, rounds=rounds, warmup=3, pause=pause,
                             blas={k: v for k, v in blas.items() if v is not None})
    base = res["numpy step, own BLAS"]
    print(f"load before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}; BLAS pool of the library: "
          f"{own}; rounds {rounds} x {number} calls")
    for k, v in res.items():
        print(f"  {k:<26} {v * 1e3:7.3f} ms   {v / base:5.2f}x of numpy step, own BLAS")
    print("tier decisions:", dict(frame.stats().tier_decisions))


def profile(calls: int) -> None:
    """Per-node-type time of the openvino executable of the step (PERF_COUNT)."""
    import frame
    from frame.backends.openvino import backend as ovb
    from frame.backends.openvino.executable import OpenVinoExecutable
    from _mlp_numpy import LR, frame_train_step, make_data
    original = ovb.OpenVinoBackend._compile_model
    made = []

    def with_perf_count(self, model, device, config):
        compiled = original(self, model, device, dict(config, PERF_COUNT=True))
        made.append(compiled)
        return compiled
    ovb.OpenVinoBackend._compile_model = with_perf_count
    x, y = (frame.tensor(a) for a in make_data())
    _, ts = frame_train_step(LR)
    step = frame.jit(ts, backend="openvino")
    from frame.runtime import tiered
    for _ in range(3):
        step(x, y)
    tiered.scheduler.idle(300)
    for _ in range(20):
        step(x, y)
    import gc
    exe = next(o for o in gc.get_objects()
               if isinstance(o, OpenVinoExecutable) and o._compiled is made[-1])
    req = exe._local.request.req
    total, count = collections.Counter(), collections.Counter()
    t0 = time.perf_counter()
    for _ in range(calls):
        step(x, y)
        for p in req.get_profiling_info():
            if p.status == p.Status.EXECUTED:
                total[p.node_type] += p.real_time.total_seconds()
                count[p.node_type] += 1
    wall = (time.perf_counter() - t0) / calls
    nodes = sum(count.values()) // calls
    inside = sum(total.values()) / calls
    print(json.dumps({"wall_ms": wall * 1e3, "nodes": nodes, "inside_ms": inside * 1e3,
                      "by_type_ms": {k: v / calls * 1e3 for k, v in total.most_common()},
                      "count": {k: v // calls for k, v in count.items()},
                      "load": os.getloadavg()[0]}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--pause", type=float, default=0.2)
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--profile-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.profile_child:
        profile(100)
        return 0
    timings(args.rounds, args.number, args.pause)
    if not args.no_profile:
        env = dict(os.environ, FRAME_CACHE="0")
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--profile-child"],
                              env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        mm = r["by_type_ms"].get("MatMul", 0.0)
        print(f"openvino executable, PERF_COUNT (child, load {r['load']:.2f}): {r['nodes']} nodes "
              f"executed, {r['inside_ms']:.3f} ms inside OpenVINO's nodes per step "
              f"(wall {r['wall_ms']:.3f} ms with profiling on); MatMul {mm:.3f} ms "
              f"({mm / r['inside_ms']:.0%}), the other {r['nodes'] - r['count'].get('MatMul', 0)} "
              f"nodes {r['inside_ms'] - mm:.3f} ms")
        for k, v in r["by_type_ms"].items():
            print(f"  {k:<20} {v:7.3f} ms  ({r['count'][k]} nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
