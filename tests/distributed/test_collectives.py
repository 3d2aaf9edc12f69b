"""frame.distributed in one process (no mpiexec): a world of one process.

The collective ops through the passes (kept, not merged, not folded, in
order), the fallback chain (OpenVINO partitions around them), capture (one
graph, same results as the plain function), gradients, bucketing, the
sharded loader, and the error naming the ``distributed`` extra when MPI is
missing.  Several processes: test_mpi.py.
"""
from __future__ import annotations

import io
import sys

import numpy as np
import pytest

import frame
import frame.distributed as dist
import frame.nn.functional as F
from frame import nn
from frame.distributed import comm
from frame.hal import CompileOptions, get_backend
from frame.ir import GraphBuilder, clone_graph
from frame.passes import PassManager, standard_pipeline
from frame.runtime import compile as rc
from frame.runtime.fallback import FallbackExecutable
from frame.runtime.stats import reset_stats, stats

from tests.capture.helpers import assert_captured, assert_same_as_eager

COLLECTIVES = ("all_reduce", "broadcast", "reduce")


def _calls() -> int:
    return stats().extra.get("collective_calls", 0)


def _collective_graph():
    """x, c (constant): two equal all_reduce(x) (CSE bait), all_reduce of a constant
    (folding bait), an unused broadcast (DCE bait), then a reduce."""
    b = GraphBuilder()
    x = b.input(frame.float32, (4,))
    c = b.constant(np.arange(4, dtype=np.float32))
    a1 = b.op("all_reduce", x, reduction="sum")
    a2 = b.op("all_reduce", x, reduction="sum")
    a3 = b.op("all_reduce", c, reduction="mean")
    b.op("broadcast", x, root=0)
    r = b.op("reduce", b.op("add", a1, a2), root=0)
    return b.build(b.op("mul", r, a3))


def _collectives_in(graph) -> list[str]:
    out = []
    for n in graph.nodes:
        nodes = n.body.nodes if n.body is not None else [n]
        out += [f"{m.op}:{m.attrs}" for m in nodes if m.op in COLLECTIVES]
    return out


@pytest.mark.parametrize("backend", ["cpu", "openvino"])
def test_passes_keep_every_collective_in_program_order(backend):
    """has_side_effect: no CSE, no folding, no dead-node elimination, no fusion; no
    pass reorders them."""
    graph = _collective_graph()
    want = _collectives_in(graph)
    assert len(want) == 5
    passes = standard_pipeline(get_backend(backend), CompileOptions())[:-1]  # not lowering
    planned = PassManager(passes).run(clone_graph(graph))
    assert _collectives_in(planned) == want
    assert all(n.op in COLLECTIVES for n in planned.nodes if n.op in COLLECTIVES)


@pytest.mark.parametrize("backend", ["cpu", "openvino"])
def test_compiled_graph_runs_every_collective_once_per_call(backend, monkeypatch):
    monkeypatch.setattr(frame.config, "tiered", False)  # the openvino executable itself
    rc.clear_cache()
    exe = rc.compile(_collective_graph(), backend, CompileOptions())
    if backend == "openvino":
        assert isinstance(exe, FallbackExecutable)
        assert [p for p in exe.partitions if p.startswith("cpu:")] == [
            "cpu:all_reduce", "cpu:all_reduce", "cpu:all_reduce", "cpu:broadcast", "cpu:reduce"]
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    before = _calls()
    (out,) = exe.run([x])
    assert _calls() - before == 5
    np.testing.assert_allclose(out, 2 * x * np.arange(4, dtype=np.float32))


def test_openvino_refuses_collectives_with_a_reason():
    be = get_backend("openvino")
    b = GraphBuilder()
    node = b.op("all_reduce", b.input(frame.float32, (3,)), reduction="mean").producer
    assert not be.supports(node)
    why = be.why_unsupported(node)
    assert "collective" in why and "all_reduce" in why and "float32" in why


def test_world_of_one_process():
    assert dist.rank() == 0 and dist.world_size() == 1
    x = frame.tensor([[1.0, -2.0], [3.0, 0.5]])
    for y in (dist.all_reduce(x), dist.all_reduce(x, op="mean"), dist.broadcast(x, 0)):
        assert type(y) is frame.Tensor and y.dtype == frame.float32
        np.testing.assert_array_equal(y.numpy(), x.numpy())
        assert y._data is not x._data
    dist.barrier()


def test_bad_arguments_raise():
    with pytest.raises(frame.FrameValueError, match="reduction must be one of sum, mean"):
        dist.all_reduce(frame.tensor([1.0]), op="max")
    with pytest.raises(frame.FrameTypeError, match="needs a float tensor"):
        dist.all_reduce(frame.tensor([1, 2]), op="mean")
    with pytest.raises(frame.FrameTypeError, match="float32, float64, int32 or int64"):
        dist.all_reduce(frame.tensor([True]))
    with pytest.raises(frame.FrameError, match="root 1 is not a rank of this 1-process job"):
        dist.broadcast(frame.tensor([1.0]), root=1)


def _collective_fn(x, w):
    y = dist.all_reduce(x * w, op="mean") + dist.broadcast(x, 0)
    return dist.all_reduce(y.sum(axis=0), op="sum"), y


def test_jitted_collectives_match_plain():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    assert_same_as_eager(_collective_fn, frame.tensor(x), frame.tensor(x * 0.5))
    jitted = assert_captured(_collective_fn, frame.tensor(x), frame.tensor(x))
    before = _calls()
    jitted(frame.tensor(x), frame.tensor(x))
    assert _calls() - before == 3  # each collective runs once per call


def test_gradients_of_collectives():
    """Mean-all-reduce's gradient is a mean-all-reduce (sum's a sum), broadcast's
    a reduce: in a world of one process each is the identity."""
    x = frame.tensor(np.linspace(-1, 1, 6).astype(np.float32))
    for op in ("sum", "mean"):
        g = frame.grad(lambda t: (dist.all_reduce(t, op=op) * t).sum())(x)
        np.testing.assert_allclose(g.numpy(), 2 * x.numpy(), rtol=1e-6)
    g = frame.grad(lambda t: (dist.broadcast(t, 0) ** 2).sum())(x)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy(), rtol=1e-6)
    # the backward graph holds the adjoint collectives
    from frame.autograd import build_backward_graph
    b = GraphBuilder()
    t = b.input(frame.float32, (6,))
    prod = b.op("mul", b.op("broadcast", t, root=0), b.op("all_reduce", t, reduction="mean"))
    loss = b.op("sum", prod, axes=(0,), keepdims=False)
    graph = build_backward_graph(b.build(loss), 0, [t])
    ops = [f"{n.op}:{sorted(n.attrs.items())}" for n in graph.nodes if n.op in COLLECTIVES]
    assert "reduce:[('root', 0)]" in ops and ops.count("all_reduce:[('reduction', 'mean')]") == 2


def _model():
    frame.manual_seed(5)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def test_average_gradients_is_one_bucketed_all_reduce_in_one_graph():
    model = dist.DataParallel(_model())
    opt = frame.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((5, 6)).astype(np.float32)
    yb = rng.integers(0, 3, 5)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        model.average_gradients()
        opt.step()
        return loss

    out = frame.explain(step)(xb, yb)
    assert out.exception is None
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert out.ops_per_graph[0].count("all_reduce") == 1  # 4 parameters, one bucket


def test_average_gradients_eagerly_keeps_gradients_in_a_world_of_one():
    model = _model()
    x = frame.tensor(np.ones((2, 6), np.float32))
    F.mse_loss(model(x), frame.tensor(np.zeros((2, 3), np.float32))).backward()
    before = [p.grad.numpy().copy() for p in model.parameters()]
    calls = _calls()
    dist.average_gradients(model)
    assert _calls() - calls == 1
    for p, g in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.grad.numpy(), g)
        assert p.grad.shape == p.shape


def test_explain_lists_the_partitions_around_the_all_reduce(monkeypatch):
    monkeypatch.setattr(frame.config, "tiered", False)
    x = frame.tensor(np.ones((2, 3), np.float32))
    out = frame.explain(lambda t: dist.all_reduce(t * 2.0, op="mean") + 1.0, backend="openvino")(x)
    assert out.graph_count == 1
    (parts,) = out.partitions  # the constants 2.0 and 1.0 are nodes of their partitions
    assert parts == ["compiled[2 nodes]", "cpu:all_reduce", "compiled[2 nodes]"]
    assert "graph 1: compiled[2 nodes], cpu:all_reduce, compiled[2 nodes]" in str(out)


def test_report_counts_the_all_reduce(monkeypatch):
    monkeypatch.setattr(frame.config, "tiered", False)
    rc.clear_cache()
    reset_stats()
    f = frame.jit(lambda t: dist.all_reduce(t * 3.0, op="sum") - 1.0, backend="openvino")
    for _ in range(3):
        f(frame.tensor(np.ones((4,), np.float32)))
    s = stats()
    assert s.fallbacks[("all_reduce", "openvino")] == 1  # compiled once
    assert s.extra["collective_calls"] == 3 and s.extra["collective_bytes"] == 3 * 16
    assert s.extra_times["collective"] > 0
    buf = io.StringIO()
    frame.report(file=buf)
    text = buf.getvalue()
    assert "all_reduce" in text and "collective_calls" in text and "collective time" in text
    reset_stats()


def test_sharded_loader_slices_the_global_batch():
    n, batch, world = 20, 6, 3
    x = np.arange(n * 2).reshape(n, 2)
    y = np.arange(n)
    full = shard = None
    for epoch in (0, 1):
        full = dist.shard_indices(n, batch, epoch=epoch, seed=9)
        shards = [dist.shard_indices(n, batch, epoch=epoch, seed=9, rank=r, world_size=world)
                  for r in range(world)]
        assert len(full) == n // batch
        for k, idx in enumerate(full):
            np.testing.assert_array_equal(np.concatenate([s[k] for s in shards]), idx)
        loaders = [dist.ShardedLoader(x, y, batch_size=batch, seed=9, rank=r, world_size=world)
                   for r in range(world)]
        for loader in loaders:
            loader.set_epoch(epoch)
        for k, batches in enumerate(zip(*loaders)):
            xs = np.concatenate([b[0] for b in batches])
            np.testing.assert_array_equal(xs, x[full[k]])
        shard = shards
    assert not np.array_equal(dist.shard_indices(n, batch, epoch=0, seed=9)[0], full[0])
    assert shard is not None
    with pytest.raises(frame.FrameValueError, match="multiple of the number of processes"):
        dist.ShardedLoader(x, y, batch_size=7, rank=0, world_size=3)
    xt = dist.ShardedLoader(frame.tensor(x.astype(np.float32)), batch_size=4)
    (first,) = next(iter(xt))
    assert type(first) is frame.Tensor and first.shape == (4, 2)


def test_missing_mpi_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # `from mpi4py import MPI` fails
    monkeypatch.setattr(comm, "_group", None)
    for name in comm._LAUNCHER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(frame.FrameError, match=r"pip install 'frame-jit\[distributed\]'"):
        dist.init()
    # used without init() and without a launcher: a world of one process, no MPI
    assert dist.world_size() == 1 and comm._group.comm is None
    np.testing.assert_array_equal(dist.all_reduce(frame.tensor([2.0]), op="mean").numpy(), [2.0])
    # started by mpiexec without mpi4py: an error, not N processes that each train alone
    monkeypatch.setattr(comm, "_group", None)
    monkeypatch.setenv("PMI_RANK", "0")
    with pytest.raises(frame.FrameError, match="distributed"):
        dist.world_size()
