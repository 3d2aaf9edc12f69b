"""One process of the data-parallel tests (launched by tests/distributed/test_mpi.py
under ``mpiexec -n N``; run without a launcher it is a world of one process).

    python -m tests.distributed._worker train OUTDIR   # 20 jitted data-parallel steps
    python -m tests.distributed._worker raise OUTDIR   # rank 1 raises at step 3
    python -m tests.distributed._worker collectives OUTDIR   # values and gradients

``train`` writes ``OUTDIR/rank<r>.npz``: the parameters after the last step, the
losses, and what ``frame.explain`` said of the first step (graph and break
counts, partitions), and the run's recompiles and graph breaks.
"""
from __future__ import annotations

import json
import pathlib
import sys

import numpy as np

import frame
import frame.distributed as dist
import frame.nn.functional as F
from frame import nn

STEPS = 20
GLOBAL_BATCH = 32
N_SAMPLES = 256
SIZES = (20, 16, 5)


def data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((N_SAMPLES, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], N_SAMPLES).astype(np.int64)
    return x, y


def make_model():
    frame.manual_seed(dist.rank() + 11)  # different per rank: DataParallel broadcasts rank 0's
    return nn.Sequential(nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]))


def batches(x, y, steps):
    loader = dist.ShardedLoader(x, y, batch_size=GLOBAL_BATCH, seed=3)
    out, epoch = [], 0
    while len(out) < steps:
        loader.set_epoch(epoch)
        out.extend(loader)
        epoch += 1
    return out[:steps]


def collectives(outdir: str) -> None:
    """Rank r holds x_r = r + [0, 1, 2] and w_r = (r + 1) * [1, 2, 3]; it saves the
    collectives of x and the gradients of its part of the loss summed over the
    ranks, sum(C(x_r) * w_r), eagerly and jitted."""
    r = dist.rank()
    x = frame.tensor(np.arange(3, dtype=np.float32) + r)
    w = frame.tensor((r + 1) * np.array([1.0, 2.0, 3.0], np.float32))
    out = {}
    for name, fn in {"sum": lambda t: dist.all_reduce(t, op="sum"),
                     "mean": lambda t: dist.all_reduce(t, op="mean"),
                     "bcast1": lambda t: dist.broadcast(t, root=1)}.items():
        out[f"{name}_value"] = fn(x).numpy()
        out[f"{name}_value_jit"] = frame.jit(fn)(x).numpy()
        grad = frame.grad(lambda t, fn=fn: (fn(t) * w).sum())
        out[f"{name}_grad"] = grad(x).numpy()
        out[f"{name}_grad_jit"] = frame.jit(grad)(x).numpy()
    np.savez(pathlib.Path(outdir) / f"rank{r}.npz", **out)


def main(mode: str, outdir: str) -> None:
    dist.init()
    if mode == "collectives":
        collectives(outdir)
        return
    model = dist.DataParallel(make_model())
    opt = frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(xb, yb):
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        model.average_gradients()
        opt.step()
        return loss

    jitted = frame.jit(step, backend="openvino")
    x, y = data()
    losses, info = [], {}
    for k, (xb, yb) in enumerate(batches(x, y, STEPS)):
        if mode == "raise" and k == 3 and dist.rank() == 1:
            raise ValueError("rank 1 fails on purpose")
        if k == 0:
            out = frame.explain(jitted)(xb, yb)
            if out.exception is not None:
                raise out.exception
            loss = out.result
            info = {"graph_count": out.graph_count, "graph_break_count": out.graph_break_count,
                    "partitions": out.partitions, "ops": out.ops_per_graph}
        else:
            loss = jitted(xb, yb)
        losses.append(float(loss.item()))
    s = frame.stats()
    info.update(recompiles=s.recompiles, graph_breaks=sum(s.graph_breaks.values()),
                fallbacks={f"{op}/{be}": n for (op, be), n in s.fallbacks.items()},
                collective_calls=s.extra.get("collective_calls", 0),
                world_size=dist.world_size())
    params = {f"p{i}": p.numpy() for i, p in enumerate(model.params)}
    np.savez(pathlib.Path(outdir) / f"rank{dist.rank()}.npz", losses=np.array(losses),
             info=np.array(json.dumps(info)), **params)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
