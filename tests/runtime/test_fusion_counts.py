"""Fused-node counts per phase (forward, backward, update): operator_fusion's
summary, ``frame.explain`` and ``frame.report()`` for a jitted training step."""
from __future__ import annotations

import io

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F
from frame.autograd.backward import build_backward_graph
from frame.ir import GraphBuilder, clone_graph, dump_text
from frame.passes import fusion_summary
from frame.passes.fusion import FusionSummary, OperatorFusion, PhaseCounts, phases
from frame.runtime import compile as rc
from frame.runtime.stats import reset_stats
from tests.runtime.test_report import fresh  # noqa: F401 - the report tests' autouse fixture




def _layer_step_graph():
    """loss = sum(relu(x @ w + b)); its gradient w.r.t. w and b; w - 0.1 * dw."""
    b = GraphBuilder()
    x, w, bias = b.input("float32", (4, 3)), b.input("float32", (3, 5)), b.input("float32", (5,))
    loss = b.op("sum", b.op("relu", b.op("add", b.op("matmul", x, w), bias)), axes=(0, 1))
    g = build_backward_graph(b.build(loss), 0, [1, 2])
    gb = GraphBuilder(g)
    w = g.inputs[1]   # the backward graph is a new graph
    new_w = gb.op("sub", w, gb.op("mul", g.outputs[1], gb.scalar(0.1, like=w)))
    g.set_outputs(list(g.outputs) + [new_w])
    return g


def test_backward_nodes_are_marked_and_phases_follow_gradients():
    g = _layer_step_graph()
    phase = phases(g)
    ops = {p: sorted(n.op for n in g.nodes if phase[id(n)] == p and n.op != "constant")
           for p in ("forward", "backward", "update")}
    assert ops["forward"] == ["add", "matmul", "relu", "sum"]
    assert "matmul" in ops["backward"]
    assert ops["update"] == ["mul", "sub"]
    assert all(n.backward for n in g.nodes if phase[id(n)] == "backward")
    # carried by clone_graph
    assert [n.backward for n in clone_graph(g).nodes] == [n.backward for n in g.nodes]


def test_summary_counts_every_fused_op_once():
    g = _layer_step_graph()
    n_ops = {p: sum(1 for n in g.nodes if phases(g)[id(n)] == p and n.op != "constant")
             for p in ("forward", "backward", "update")}
    fused = OperatorFusion().run(g)
    s = fused.meta["fusion"]
    assert isinstance(s, FusionSummary)
    for p in ("forward", "backward", "update"):
        assert getattr(s, p).ops == n_ops[p]
    regions = [n for n in fused.nodes if n.op == "fused"]
    assert s.forward.fused + s.backward.fused + s.update.fused == len(regions)
    assert (s.forward.fused_ops + s.backward.fused_ops + s.update.fused_ops
            == sum(len(n.body.nodes) for n in regions))
    # the forward matmul heads a region with its bias add
    assert s.forward.fused >= 1 and s.forward.fused_ops >= 2
    assert s.update.fused == 1
    # fused nodes carry their root's phase
    assert any(n.backward for n in regions) == (s.backward.fused > 0)
    # fusion_summary runs the pipeline up to fusion on a clone (canonicalize and
    # CSE may drop backward nodes first); the graph it is given stays as it was
    g2 = _layer_step_graph()
    text = dump_text(g2)
    assert fusion_summary(g2).forward == s.forward and dump_text(g2) == text
    assert PhaseCounts(4, 1, 2).fraction == 0.5 and PhaseCounts().fraction == 0.0
    assert s + FusionSummary() == s


def _train_step():
    frame.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    opt = frame.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    x = frame.tensor(np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32))
    y = frame.tensor(np.array([0, 2, 1, 2], np.int64))
    return step, x, y


def test_explain_shows_fused_nodes_forward_and_backward():
    step, x, y = _train_step()
    out = frame.explain(step, backend="cpu")(x, y)
    assert out.graph_count == 1 and out.exception is None
    s = out.fusion
    assert s.forward.fused >= 2            # matmul + bias regions
    assert s.backward.fused >= 2           # relu gradient region, cross-entropy gradient
    assert s.backward.ops > s.backward.fused_ops > 0
    assert s.update.fused == 4 and s.update.fused_ops == 8   # p - lr * g for 4 parameters
    text = str(out)
    assert f"Fused nodes: forward {s.forward.fused} fused nodes" in text
    assert "backward" in text.split("Fused nodes:")[1]


def test_report_shows_fused_nodes_per_phase():
    step, x, y = _train_step()
    out = frame.explain(step, backend="cpu")(x, y)
    rc.clear_cache()   # compiled again below, so the passes run again
    reset_stats()
    frame.jit(step, backend="cpu")(x, y)
    snap = frame.stats()
    s = out.fusion
    for phase in ("forward", "backward", "update"):
        c = getattr(s, phase)
        assert snap.extra[f"fusion_{phase}_ops"] == c.ops
        assert snap.extra[f"fusion_{phase}_fused_nodes"] == c.fused
        assert snap.extra[f"fusion_{phase}_fused_ops"] == c.fused_ops
    buf = io.StringIO()
    frame.report(file=buf)
    text = buf.getvalue()
    assert "operator fusion" in text
    row = next(line for line in text.splitlines() if "backward" in line)
    assert str(s.backward.fused) in row and f"{s.backward.fraction:.0%}" in row
    assert "fusion_backward" not in text   # not repeated under "other counters"
