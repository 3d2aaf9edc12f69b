"""frame against hand-written NumPy and its peers (PyTorch eager, torch.compile,
JAX jit), default settings, on six workloads.

    python benchmarks/peers.py                       # everything, table + peers.png
    python benchmarks/peers.py --rounds 11 --png /tmp/peers.png
    python benchmarks/peers.py --no-first            # skip the first-call children
    python benchmarks/peers.py --passes 3 --rounds 5 # children 3 times each, rotated

Workloads (float32):

* ``tiny``: ``relu(x) + 1`` on 4 elements: per-call overhead;
* ``first``: the first call of a new function (the 20-node graph below):
  capture/trace + compile + run, each candidate in a fresh process, libraries
  already imported (frame's ``capture`` too, as ``torch._dynamo`` is), every
  on-disk compile cache off or empty, Python's bytecode cached as an installed
  package has it (``_harness.bytecode_cache_env``);
* ``mlp``: the MLP 784-256-128-10 SGD training step, batch 128 (``_mlp_numpy``);
* ``gelu``: tanh-GELU on 1024x1024;
* ``g20``: the 20-node 64x64 graph of ``compiled_cpu.py`` (3 matmuls);
* ``cnn``: a small CNN forward, batch 32, 1x28x28 -> conv3x3(8) relu maxpool2
  -> conv3x3(16) relu maxpool2 -> linear(784, 10).

Fairness: thread pools that spin after a call (OpenBLAS, OpenMP, TBB, XLA's)
take cores from whatever runs next, so each library family runs in its own
child process, all with the same (default) thread settings: frame's three
backends with the hand NumPy baseline in one process (the comparison a user of
frame and NumPy gets), torch eager and torch.compile in another, JAX in a
third.  Every child also times hand NumPy interleaved with its candidates, so
each row has a same-process anchor (``vs numpy``).  Inside a child the
candidates run in interleaved rounds and the table shows medians.  torch and
JAX are optional (``pip install 'frame-jit[bench]'``); missing ones are
skipped.  The load average is printed with each child: the machine may be
shared.

Frame's thread rule (docs/performance.md) limits the BLAS pool to one thread
once OpenVINO is used, and that limit holds for NumPy in the same process too.
So frame's child times hand NumPy twice: under the rule ("numpy (frame
process)", what a program using both gets) and with the BLAS pool the
library set up ("numpy, own BLAS threads": the pool size is restored around
its blocks with threadpoolctl; NumPy as a user runs it without frame).  Each
frame row shows both ratios.  Before every timed block the child sleeps
``--pause`` seconds (0.2) so that no block runs while the previous block's
thread pool is still spinning (OpenBLAS's workers spin ~0.1-0.15 s after a
call here); the order of the candidates rotates every round.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKLOADS = ("tiny", "mlp", "gelu", "g20", "cnn")
GELU_C = math.sqrt(2.0 / math.pi)
CNN_BATCH = 32


# --------------------------------------------------------------------------- data

def data():
    """Every workload's inputs as NumPy arrays (same values for every library)."""
    import numpy as np
    sys.path.insert(0, HERE)
    from _mlp_numpy import make_data
    rng = np.random.default_rng(0)
    d = {"tiny": [np.array([-1.0, 0.5, 2.0, -3.0], np.float32)],
         "gelu": [rng.standard_normal((1024, 1024)).astype(np.float32)],
         "g20": [rng.uniform(-1, 1, s).astype(np.float32) for s in [(64, 64)] * 4 + [(64,)] * 2]
         + [np.array(0.5, np.float32)]}
    x, y = make_data()
    d["mlp"] = [x, y]
    s1, s2, s3 = 1 / 3, 1 / math.sqrt(72), 1 / 28
    d["cnn"] = [rng.standard_normal((CNN_BATCH, 1, 28, 28)).astype(np.float32),
                rng.uniform(-s1, s1, (8, 1, 3, 3)).astype(np.float32),
                rng.uniform(-s1, s1, (8,)).astype(np.float32),
                rng.uniform(-s2, s2, (16, 8, 3, 3)).astype(np.float32),
                rng.uniform(-s2, s2, (16,)).astype(np.float32),
                rng.uniform(-s3, s3, (10, 784)).astype(np.float32),
                rng.uniform(-s3, s3, (10,)).astype(np.float32)]
    return d


def mlp_params():
    """The MLP's initial parameters (frame's initialisation, seed 0), PyTorch layout."""
    from _mlp_numpy import frame_model
    return [p.numpy().copy() for p in frame_model(0).parameters()]


# --------------------------------------------------------------------------- numpy

def numpy_candidates(d, params):
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view
    from _mlp_numpy import numpy_step
    from compiled_cpu import mlp_numpy
    from openvino_backend import gelu_numpy

    def conv(x, w, b):  # 3x3, padding 1: im2col by tensordot
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        win = sliding_window_view(xp, (3, 3), axis=(2, 3))
        return np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2) + b[:, None, None]

    def pool(x):
        n, c, h, w = x.shape
        return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))

    def cnn(x, w1, b1, w2, b2, w3, b3):
        h = pool(np.maximum(conv(x, w1, b1), 0))
        h = pool(np.maximum(conv(h, w2, b2), 0))
        return h.reshape(len(x), -1) @ w3.T + b3

    tiny = d["tiny"][0]
    return {"tiny": lambda: np.maximum(tiny, 0) + 1,
            "mlp": numpy_step(*d["mlp"], params),
            "gelu": lambda: gelu_numpy(d["gelu"][0]),
            "g20": lambda: mlp_numpy(*d["g20"]),
            "cnn": lambda: cnn(*d["cnn"])}


# --------------------------------------------------------------------------- frame

def frame_functions():
    """The workloads as frame functions (to be jitted) and their argument makers."""
    import frame
    import frame.nn.functional as F
    from compiled_cpu import mlp_eager

    def tiny(x):
        return frame.relu(x) + 1

    def gelu(x):
        return 0.5 * x * (1.0 + frame.tanh(GELU_C * (x + 0.044715 * x * x * x)))

    def cnn(x, w1, b1, w2, b2, w3, b3):
        h = F.max_pool2d(frame.relu(F.conv2d(x, w1, b1, padding=1)), 2)
        h = F.max_pool2d(frame.relu(F.conv2d(h, w2, b2, padding=1)), 2)
        return F.linear(h.reshape(h.shape[0], -1), w3, b3)
    return {"tiny": tiny, "gelu": gelu, "g20": mlp_eager, "cnn": cnn}


def frame_candidates(d, backend: str | None):
    import frame
    from _mlp_numpy import LR, frame_train_step

    fns = frame_functions()
    out = {}
    for name in ("tiny", "gelu", "g20", "cnn"):
        f = frame.jit(fns[name], backend=backend)
        args = [frame.tensor(a) for a in d[name]]
        out[name] = (lambda f=f, args=args: f(*args))
    _, train_step = frame_train_step(LR)
    xt, yt = (frame.tensor(a) for a in d["mlp"])
    step = frame.jit(train_step, backend=backend)
    out["mlp"] = lambda: step(xt, yt)
    return out


# --------------------------------------------------------------------------- torch

def torch_candidates(d, params, compiled: bool):
    import torch
    import torch.nn.functional as TF
    from _mlp_numpy import LR, torch_train_step
    wrap = torch.compile if compiled else (lambda f: f)
    c = GELU_C

    def tiny(x):
        return torch.relu(x) + 1

    def gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * x * x * x)))

    def g20(x, w1, w2, w3, b1, b2, half):
        h = torch.relu(x @ w1 + b1)
        g = torch.tanh(h * x)
        k = torch.exp(-torch.abs(g @ w2 - b2))
        m = k * g + h
        n = torch.maximum(m @ w3, x)
        n = torch.sqrt(torch.abs(n)) * half
        return torch.tanh(n + m) - x

    def cnn(x, w1, b1, w2, b2, w3, b3):
        h = TF.max_pool2d(torch.relu(TF.conv2d(x, w1, b1, padding=1)), 2)
        h = TF.max_pool2d(torch.relu(TF.conv2d(h, w2, b2, padding=1)), 2)
        return TF.linear(h.reshape(h.shape[0], -1), w3, b3)

    out = {}
    with torch.no_grad():
        for name, fn in (("tiny", tiny), ("gelu", gelu), ("g20", g20), ("cnn", cnn)):
            f = wrap(fn)
            args = [torch.from_numpy(a) for a in d[name]]
            out[name] = (lambda f=f, args=args: _no_grad(torch, f, args))
    xt, yt = (torch.from_numpy(a) for a in d["mlp"])
    step = wrap(torch_train_step(params, LR))
    out["mlp"] = lambda: step(xt, yt)
    return out


def _no_grad(torch, f, args):
    with torch.no_grad():
        return f(*args)


# --------------------------------------------------------------------------- jax

def jax_candidates(d, params):
    import jax
    import jax.numpy as jnp
    from _mlp_numpy import LR
    c = GELU_C

    @jax.jit
    def tiny(x):
        return jax.nn.relu(x) + 1

    @jax.jit
    def gelu(x):
        return 0.5 * x * (1.0 + jnp.tanh(c * (x + 0.044715 * x * x * x)))

    @jax.jit
    def g20(x, w1, w2, w3, b1, b2, half):
        h = jax.nn.relu(x @ w1 + b1)
        g = jnp.tanh(h * x)
        k = jnp.exp(-jnp.abs(g @ w2 - b2))
        m = k * g + h
        n = jnp.maximum(m @ w3, x)
        n = jnp.sqrt(jnp.abs(n)) * half
        return jnp.tanh(n + m) - x

    def pool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def conv(x, w, b):
        return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1))) + b[:, None, None]

    @jax.jit
    def cnn(x, w1, b1, w2, b2, w3, b3):
        h = pool(jax.nn.relu(conv(x, w1, b1)))
        h = pool(jax.nn.relu(conv(h, w2, b2)))
        return h.reshape(h.shape[0], -1) @ w3.T + b3

    def loss_fn(ps, x, y):
        h = x
        for i in range(0, 6, 2):
            h = h @ ps[i].T + ps[i + 1]
            if i < 4:
                h = jax.nn.relu(h)
        return jnp.mean(jax.nn.logsumexp(h, axis=1) - jnp.take_along_axis(h, y[:, None], 1)[:, 0])

    @jax.jit
    def step(ps, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ps, x, y)
        return loss, [p - LR * g for p, g in zip(ps, grads)]

    out = {}
    for name, f in (("tiny", tiny), ("gelu", gelu), ("g20", g20), ("cnn", cnn)):
        args = [jnp.asarray(a) for a in d[name]]
        out[name] = (lambda f=f, args=args: f(*args).block_until_ready())
    state = [[jnp.asarray(p) for p in params]]
    xj, yj = (jnp.asarray(a) for a in d["mlp"])

    def mlp():
        loss, state[0] = step(state[0], xj, yj)
        return loss.block_until_ready()
    out["mlp"] = mlp
    return out


# --------------------------------------------------------------------------- children

GROUPS = {  # child process -> candidates (numpy is in every child as the anchor)
    "frame": ("frame default", "frame cpu", "frame openvino"),
    "torch": ("torch eager", "torch.compile"),
    "jax": ("jax jit",),
}
# the frame child's second NumPy row: NumPy with the BLAS pool the library set up
NUMPY_OWN = "numpy, own BLAS threads"
NUMBER = {"tiny": 2000, "mlp": 20, "gelu": 20, "g20": 400, "cnn": 20}


def candidates_for(group: str, d, params) -> dict[str, dict]:
    cands = {"numpy": numpy_candidates(d, params)}
    if group == "frame":
        cands["frame default"] = frame_candidates(d, None)
        cands["frame cpu"] = frame_candidates(d, "cpu")
        cands["frame openvino"] = frame_candidates(d, "openvino")
    elif group == "torch":
        cands["torch eager"] = torch_candidates(d, params, compiled=False)
        cands["torch.compile"] = torch_candidates(d, params, compiled=True)
    elif group == "jax":
        cands["jax jit"] = jax_candidates(d, params)
    return cands


def _blas_threads() -> int | None:
    """The BLAS pool size in force now (the first BLAS library's), or None."""
    from threadpoolctl import threadpool_info
    sizes = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    return sizes[0] if sizes else None


def timed_blocks(cands: dict, number: int, rounds: int, warmup: int, pause: float,
                 blas: dict[str, int]) -> dict[str, float]:
    """Median per-call seconds of each candidate over ``rounds`` interleaved
    rounds of ``number`` calls, the order rotated every round (each candidate
    follows each other one equally often).  ``pause`` seconds of sleep before
    every block let the thread pools of the block before stop spinning
    (OpenBLAS's workers spin ~0.1-0.15 s after a call on this machine).
    ``blas``: candidates whose blocks run with the BLAS pool at that size (set
    with threadpoolctl around the block, the pool size outside it restored)."""
    from threadpoolctl import ThreadpoolController
    from _harness import per_call_seconds
    controller = ThreadpoolController().select(user_api="blas") if blas else None

    def block(name, n):
        if name in blas:
            with controller.limit(limits=blas[name]):
                return per_call_seconds(cands[name], n)
        return per_call_seconds(cands[name], n)

    names = list(cands)
    for name in names:
        block(name, warmup)
    samples: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            if pause:
                time.sleep(pause)
            samples[name].append(block(name, number))
    return {n: statistics.median(v) for n, v in samples.items()}


SETTLE_BLOCK = 12  # calls of one graph in a row while frame's tiers settle


def settle_frame(cands: dict, timeout: float, pause: float) -> None:
    """Call frame's candidates until every tiered graph is settled: the pinned
    openvino graphs swapped in, the default's PGO decisions made.  A graph whose
    background compile was refused for backpressure asks again on a later call
    (after ``cooldown_s``), and PGO decides on calls; so four calls and waiting
    for the scheduler are not enough: timed rounds would otherwise include
    background compiles and trials (on 2 cores, the cnn default then measured
    20% slower than either tier)."""
    import gc

    import frame
    from frame.runtime import tiered
    final = (tiered.SLOW, tiered.PGO_FAST, tiered.FAILED, tiered.ABANDONED)
    deadline = time.monotonic() + timeout
    while True:
        # Every tiered graph in its final state: swapped in, or kept by PGO.  (A
        # count of decisions and swaps is not enough: with a decision read from
        # the persistent cache the default's graph swaps only once its
        # background compile is done, after the pinned graphs' swaps were counted.)
        states = [t.state for t in gc.get_objects() if isinstance(t, tiered.TieredExecutable)]
        if tiered.scheduler.pending == 0 and states and all(s in final for s in states):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"frame's tiers did not settle within {timeout:g} s: states "
                               f"{states}, {frame.stats().extra}")
        # each graph in a block of calls after a pause, as the timed rounds call
        # it: PGO's trial then sees the conditions the table measures (called
        # round-robin between the other graphs instead, the tanh-GELU trial
        # once kept the cpu tier, 0.98 against 1.14 ms, which runs 1.22 ms in
        # blocks where OpenVINO runs 0.59)
        for name in ("frame default", "frame openvino"):
            for fn in cands[name].values():
                time.sleep(pause)
                for _ in range(SETTLE_BLOCK):
                    fn()


def child_steady(group: str, rounds: int, pause: float) -> dict:
    sys.path.insert(0, HERE)
    import numpy  # noqa: F401 -- loads the BLAS library
    own_blas = _blas_threads()  # before frame's thread rule: NumPy as a user runs it
    d = data()
    params = mlp_params()
    cands = candidates_for(group, d, params)
    for per in cands.values():  # compile, and let frame's tiers swap in
        for fn in per.values():
            for _ in range(4):
                fn()
    blas: dict[str, int] = {}
    decisions = None
    if group == "frame":
        import frame
        from frame.runtime import threads
        settle_frame(cands, timeout=600, pause=pause)
        decisions = dict(frame.stats().tier_decisions)
        pools = threads.current()
        if own_blas is not None and _blas_threads() != own_blas:
            # the thread rule limited BLAS: also time NumPy with its own pool size
            cands[NUMPY_OWN] = cands["numpy"]
            blas[NUMPY_OWN] = own_blas
    else:
        pools = None
    ms = {}
    for w in WORKLOADS:
        res = timed_blocks({name: per[w] for name, per in cands.items()}, number=NUMBER[w],
                           rounds=rounds, warmup=3, pause=pause, blas=blas)
        ms[w] = {k: v * 1e3 for k, v in res.items()}
    after = None
    if group == "frame":  # what the timed blocks ran on: a drift re-trial shows here
        import frame
        extra = frame.stats().extra
        after = {"decisions": dict(frame.stats().tier_decisions),
                 "counters": {k: extra.get(k, 0) for k in ("pgo_trials", "pgo_decisions",
                                                           "pgo_drifts", "pgo_switches")}}
    return {"ms": ms, "threads": pools, "own_blas": own_blas, "decisions": decisions,
            "after": after, "versions": _versions(group)}


def _versions(group: str) -> dict:
    import numpy
    v = {"numpy": numpy.__version__}
    if group == "frame":
        import openvino
        v["openvino"] = openvino.get_version().split("-")[0]
    elif group == "torch":
        import torch
        v["torch"] = torch.__version__
    elif group == "jax":
        import jax
        v["jax"] = jax.__version__
    return v


def child_first(cand: str) -> float:
    """Seconds for the first call of a new g20 function under ``cand``."""
    sys.path.insert(0, HERE)
    d = data()
    args = d["g20"]
    if cand.startswith("frame"):
        import frame
        backend = {"frame default": None, "frame cpu": "cpu", "frame openvino": "openvino"}[cand]
        from compiled_cpu import mlp_eager
        ts = [frame.tensor(a) for a in args]
        frame.tanh(ts[0])  # frame's lazy eager imports, not the first call's work
        if backend != "cpu":
            from frame.hal import get_backend
            get_backend("openvino")  # import openvino, as `import torch` is outside too
        jit = frame.jit  # imports capture, as `import torch._dynamo` is outside too
        t0 = time.perf_counter()
        jit(mlp_eager, backend=backend)(*ts)
        return time.perf_counter() - t0
    if cand.startswith("torch"):
        import torch
        import torch._dynamo  # noqa: F401
        cands = torch_candidates(d, mlp_params(), compiled=cand == "torch.compile")
        t0 = time.perf_counter()
        cands["g20"]()
        return time.perf_counter() - t0
    if cand == "jax jit":
        import jax  # noqa: F401
        cands = jax_candidates(d, mlp_params())
        t0 = time.perf_counter()
        cands["g20"]()
        return time.perf_counter() - t0
    if cand == "numpy":
        from compiled_cpu import mlp_numpy
        t0 = time.perf_counter()
        mlp_numpy(*args)
        return time.perf_counter() - t0
    raise ValueError(cand)


# --------------------------------------------------------------------------- parent

def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def _run_child(argv: list[str], env: dict, timeout: float) -> dict | float | None:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), *argv], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode:
        print(f"child {argv} failed:\n{proc.stderr[-3000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--first-runs", type=int, default=3, help="fresh processes per first-call row")
    ap.add_argument("--no-first", action="store_true")
    ap.add_argument("--passes", type=int, default=1,
                    help="run every child this many times, rotating their order; cells are "
                         "medians over the passes")
    ap.add_argument("--only", nargs="*", choices=list(GROUPS), help="child groups to run")
    ap.add_argument("--pause", type=float, default=0.2,
                    help="seconds of sleep before each timed block (spinning pools go quiet)")
    ap.add_argument("--png", default=os.path.join(HERE, "peers.png"))
    ap.add_argument("--json-out", help="also write the raw results here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--first", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child_steady(args.child, args.rounds, args.pause)))
        return 0
    if args.first:
        print(json.dumps(child_first(args.first)))
        return 0

    groups = [g for g in (args.only or GROUPS)
              if g == "frame" or _has({"torch": "torch", "jax": "jax"}[g])]
    skipped = [g for g in (args.only or GROUPS) if g not in groups]
    sys.path.insert(0, HERE)
    from _harness import bytecode_cache_env
    tmp = tempfile.mkdtemp(prefix="frame-peers-")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               FRAME_CACHE_DIR=os.path.join(tmp, "frame"),
               TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"))
    # frame's children cache bytecode as an installed package has it (torch's and
    # JAX's is beside their sources); a throwaway child fills the cache first
    envs = {g: bytecode_cache_env(env) if g == "frame" else env for g in groups}
    if "frame" in groups:
        _run_child(["--first", "frame default"], dict(envs["frame"], FRAME_CACHE="0"), timeout=600)
    results: dict = {"steady": {}, "first": {}, "load": {}, "threads": None, "versions": {},
                     "decisions": None, "own_blas": {}}
    # Each pass runs every group's child once, the order rotated pass by pass; a
    # cell is the median over the passes of its child's medians (the machine's
    # speed drifts over minutes on a shared host, and children run minutes apart).
    passes: dict[str, list[dict]] = {g: [] for g in groups}
    for p in range(args.passes):
        for g in groups[p % len(groups):] + groups[:p % len(groups)]:
            before = _load()
            t0 = time.perf_counter()
            res = _run_child(["--child", g, "--rounds", str(args.rounds), "--pause",
                              str(args.pause)], envs[g], timeout=1800)
            if res is None:
                continue
            print(f"pass {p + 1}, child {g}: {time.perf_counter() - t0:.0f} s, load before "
                  f"{before}", flush=True)
            passes[g].append(res["ms"])
            results["load"].setdefault(g, []).append(before)
            results["versions"].update(res["versions"])
            results["own_blas"][g] = res["own_blas"]
            if res["threads"] is not None:
                results["threads"] = res["threads"]
            if res["decisions"] is not None:
                results["decisions"] = res["decisions"]
            if res.get("after") is not None:
                results.setdefault("after", []).append(res["after"])
    for g, runs in passes.items():
        if runs:
            results["steady"][g] = {
                w: {c: statistics.median(r[w][c] for r in runs if c in r.get(w, {}))
                    for c in runs[0][w]}
                for w in runs[0]}
    results["load"] = {g: " / ".join(loads) for g, loads in results["load"].items()}
    if not args.no_first:
        for g in groups:
            for cand in ("numpy",) + GROUPS[g]:
                if cand in results["first"]:
                    continue
                runs = []
                for _ in range(args.first_runs):
                    cold = dict(envs[g], FRAME_CACHE="0",
                                TORCHINDUCTOR_CACHE_DIR=tempfile.mkdtemp(dir=tmp))
                    v = _run_child(["--first", cand], cold, timeout=600)
                    if v is not None:
                        runs.append(v * 1e3)
                if runs:
                    results["first"][cand] = statistics.median(runs)
    report(results, args, skipped)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def _rows(results: dict) -> tuple[list[str], dict[str, dict[str, float]], dict[str, dict[str, float]],
                                  dict[str, dict[str, float]]]:
    """Candidates in order, ms per workload, each one's same-process ratio to
    NumPy, and (frame's process) to NumPy with its own BLAS pool."""
    order, ms, vs, vs_own = [], {}, {}, {}
    for g, per_w in results["steady"].items():
        for w, per_c in per_w.items():
            for cand, v in per_c.items():
                name = cand if cand != "numpy" else f"numpy ({g} process)"
                if name == NUMPY_OWN:
                    name = f"{NUMPY_OWN} ({results['own_blas'].get(g)}, {g} process)"
                if name not in order:
                    order.append(name)
                ms.setdefault(name, {})[w] = v
                vs.setdefault(name, {})[w] = per_c["numpy"] / v
                if NUMPY_OWN in per_c:
                    vs_own.setdefault(name, {})[w] = per_c[NUMPY_OWN] / v
    return order, ms, vs, vs_own


def report(results: dict, args, skipped: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table
    order, ms, vs, vs_own = _rows(results)
    units = {"tiny": "µs", "first": "ms"}
    table = Table(title="Median time per call (first: one fresh process each); "
                        "(x) = same-process NumPy time / this time, above 1 is faster than NumPy; "
                        "(x / y) in frame's process: x against NumPy under frame's thread rule, "
                        "y against NumPy with its own BLAS pool")
    table.add_column("candidate")
    for w in WORKLOADS[:1] + ("first",) + WORKLOADS[1:]:
        table.add_column(f"{w} [{units.get(w, 'ms')}]", justify="right")
    for name in order:
        cells = []
        for w in WORKLOADS[:1] + ("first",) + WORKLOADS[1:]:
            if w == "first":
                key = name if not name.startswith("numpy") else "numpy"
                v = results["first"].get(key)
                cells.append("" if v is None or (name.startswith("numpy") and "frame" not in name)
                             else f"{v:.1f}")
                continue
            v = ms[name].get(w)
            if v is None:
                cells.append("")
                continue
            shown = v * 1e3 if w == "tiny" else v
            if name.startswith("numpy"):
                cells.append(f"{shown:.2f}")
            elif w in vs_own.get(name, {}):
                cells.append(f"{shown:.2f} ({vs[name][w]:.2f}x / {vs_own[name][w]:.2f}x)")
            else:
                cells.append(f"{shown:.2f} ({vs[name][w]:.2f}x)")
        table.add_row(name, *cells)
    console = Console(width=200)
    console.print(table)
    console.print(f"cores {os.cpu_count()}; load average before each child: "
                  + "; ".join(f"{g} {l}" for g, l in results["load"].items()))
    console.print("versions: " + ", ".join(f"{k} {v}" for k, v in results["versions"].items()))
    if results["threads"]:
        console.print(f"frame's thread settings in force: {results['threads']}")
    if results["own_blas"]:
        console.print("BLAS pool before frame's rule, per child: "
                      + ", ".join(f"{g} {n}" for g, n in results["own_blas"].items()))
    for label, text in (results["decisions"] or {}).items():
        console.print(f"tier decision: {label}: {text}")
    for k, after in enumerate(results.get("after", ())):
        console.print(f"frame child {k + 1} after timing: PGO counters {after['counters']}")
        for label, text in after["decisions"].items():
            if text != (results["decisions"] or {}).get(label):
                console.print(f"  changed while timed: {label}: {text}")
    for g in skipped:
        console.print(f"skipped: {g} (not installed)")
    _chart(results, order, {n: {**vs[n], **vs_own.get(n, {})} for n in vs}, args.png)
    console.print(f"bar chart: {args.png}")


def _chart(results: dict, order: list[str], vs: dict, path: str) -> None:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib not installed: no chart")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [n for n in order if not n.startswith("numpy")]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        xs = [k + i * width for k in range(len(WORKLOADS))]
        ax.bar(xs, [vs[name].get(w, 0) for w in WORKLOADS], width, label=name)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")  # from 1/30 to 30x: ratios, so a log axis
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(WORKLOADS))], WORKLOADS)
    ax.set_ylabel("NumPy time / time, same process\n(frame: NumPy with its own BLAS pool;\n"
                  "above 1: faster than NumPy)")
    ax.set_title(f"frame vs peers, default settings ({os.cpu_count()} cores)")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
