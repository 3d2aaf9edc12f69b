"""operator_fusion: golden IR tests, idempotence, structural invariants on
random graphs, and interpreter(original) == interpreter(fused).

Golden files: ``testdata/operator_fusion_<case>.in.ir`` is parsed, the pass
runs, and ``dump_text`` must equal ``operator_fusion_<case>.out.ir``.
The registry-wide numerical equivalence (every elementwise op, through the
cpu executable too) is in ``tests/backends/test_cpu_equivalence.py``.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.ir import Graph, GraphBuilder, clone_graph, dump_text, parse_text, verify
from frame.ops import get_schema
from frame.passes import PASS_NAMES, standard_pipeline
from frame.passes.fusion import HEAD_OPS, REDUCTION_ROOTS, OperatorFusion, find_groups
from frame.ops.interpreter import evaluate
from ..graphcheck import assert_identical as _assert_identical
from ..graphcheck import random_inputs

DATA = pathlib.Path(__file__).parent / "testdata"
CASES = sorted(p.name[len("operator_fusion_"):-len(".in.ir")]
               for p in DATA.glob("operator_fusion_*.in.ir"))


def _load(case: str) -> Graph:
    return parse_text((DATA / f"operator_fusion_{case}.in.ir").read_text())


def _expected(case: str) -> str:
    return (DATA / f"operator_fusion_{case}.out.ir").read_text().strip()


def test_golden_cases_exist():
    assert {"chain", "tree", "diamond", "escaping", "barrier", "already_fused",
            "nothing_to_fuse"} <= set(CASES)
    for case in CASES:
        assert (DATA / f"operator_fusion_{case}.out.ir").exists(), case


@pytest.mark.parametrize("case", CASES)
def test_golden(case):
    graph = _load(case)
    verify(graph)
    fused = OperatorFusion().run(graph)
    verify(fused)
    assert dump_text(fused) == _expected(case)


@pytest.mark.parametrize("case", CASES)
def test_golden_output_parses_back(case):
    assert dump_text(parse_text(_expected(case))) == _expected(case)


@pytest.mark.parametrize("case", CASES)
def test_idempotent(case):
    once = OperatorFusion().run(_load(case))
    text = dump_text(once)
    twice = OperatorFusion().run(once)
    assert dump_text(twice) == text
    # and on a graph read back from text (fresh objects)
    assert dump_text(OperatorFusion().run(parse_text(text))) == text


@pytest.mark.parametrize("case", CASES)
def test_fused_graph_computes_the_same(case):
    original = _load(case)
    fused = OperatorFusion().run(clone_graph(original))
    with np.errstate(all="ignore"):
        for seed in range(3):
            ins = random_inputs(original, seed, int_range=4)
            _assert_identical(evaluate(fused, ins), evaluate(original, ins))


def test_disabled_is_a_no_op():
    graph = _load("tree")
    before = dump_text(graph)
    nodes = list(graph.nodes)
    assert OperatorFusion(enabled=False).run(graph) is graph
    assert dump_text(graph) == before and graph.nodes == nodes


def test_inputs_and_outputs_are_kept():
    graph = _load("escaping")
    inputs = list(graph.inputs)
    out = OperatorFusion().run(graph)
    assert out.inputs == inputs
    assert [v.type for v in out.outputs] == [v.type for v in _load("escaping").outputs]


def test_fused_node_shape():
    fused = OperatorFusion().run(_load("constants"))
    (node,) = [n for n in fused.nodes if n.op == "fused"]
    assert node.attrs == {}
    body = node.body
    assert len(body.inputs) == len(node.inputs) and len(body.outputs) == len(node.outputs) == 1
    assert [v.type for v in body.inputs] == [v.type for v in node.inputs]
    assert body.outputs[0].type == node.outputs[0].type
    # constants stay outside, as inputs
    assert [v.producer.op for v in node.inputs[1:]] == ["constant", "constant"]


def test_pass_is_in_the_pipeline_and_follows_options():
    assert "operator_fusion" in PASS_NAMES
    on = [p for p in standard_pipeline(None) if p.name == "operator_fusion"]
    off = [p for p in standard_pipeline(None, frame.hal.CompileOptions(fusion=False))
           if p.name == "operator_fusion"]
    assert on[0].enabled and not off[0].enabled


def test_fused_schema():
    schema = get_schema("fused")
    assert schema.arity_ok(1) and schema.arity_ok(7) and not schema.arity_ok(0)
    assert schema.attrs == {}
    assert not schema.has("fusable") and not schema.has("elementwise")
    with pytest.raises(frame.hal.FrameError, match="body"):
        schema.infer([], {})
    with pytest.raises(frame.hal.FrameError, match="body"):
        schema.reference([], {})


# --------------------------------------------------------------------------- random graphs

_UNARY = ["exp", "neg", "abs", "tanh", "sigmoid", "relu", "sin"]
_BINARY = ["add", "mul", "sub", "maximum"]


def _random_graph(seed: int) -> Graph:
    """A random DAG of elementwise ops with matmul/sum barriers, several outputs."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    pool = [b.input("float32", (4, 4)) for _ in range(3)]
    for _ in range(int(rng.integers(4, 16))):
        r = rng.random()
        a = pool[int(rng.integers(len(pool)))]
        c = pool[int(rng.integers(len(pool)))]
        if r < 0.4:
            v = b.op(_UNARY[int(rng.integers(len(_UNARY)))], a)
        elif r < 0.85:
            v = b.op(_BINARY[int(rng.integers(len(_BINARY)))], a, c)
        elif r < 0.95:
            v = b.op("matmul", a, c)
        else:
            v = b.op("sum", a, axes=(1,), keepdims=True)
            v = b.op("add", v, c)
        pool.append(v)
    n_out = int(rng.integers(1, 3))
    return b.build(*pool[-n_out:], pool[int(rng.integers(3, len(pool)))])


def _check_structure(n_nodes_before: int, fused: Graph) -> None:
    verify(fused)
    users = fused.users()
    escaping = {id(v) for v in fused.outputs}
    covered = 0
    for node in fused.nodes:
        if node.op != "fused":
            covered += 1
            continue
        body = node.body
        assert len(body.nodes) >= 2, "single-node groups stay unfused"
        assert len(body.outputs) == 1 and body.outputs[0].producer is body.nodes[-1]
        # elementwise members, at most one contraction head whose operands come
        # from outside the region, a reduction only as the root
        heads = [n for n in body.nodes if n.op in HEAD_OPS]
        assert len(heads) <= 1
        assert all(v.producer is None for h in heads for v in h.inputs), "head operands outside"
        assert all(get_schema(n.op).has("fusable") or n.op in HEAD_OPS
                   or (n.op in REDUCTION_ROOTS and n is body.nodes[-1]) for n in body.nodes)
        covered += len(body.nodes)
    assert covered == n_nodes_before, "every node is kept exactly once (nothing computed twice)"
    # maximality: an unfused fusable node whose only reader is a fused node
    # (and which is not a graph output) should have joined that group, unless
    # the region's contraction head reads it (a head's operands stay outside)
    for node in fused.nodes:
        if node.op == "fused" or not get_schema(node.op).has("fusable"):
            continue
        out = node.outputs[0]
        consumers = users.get(id(out), [])
        if id(out) not in escaping and len(consumers) == 1 and consumers[0].op == "fused":
            region = consumers[0]
            inner = {id(region.body.inputs[i]) for i, v in enumerate(region.inputs) if v is out}
            readers = [n for n in region.body.nodes if any(id(v) in inner for v in n.inputs)]
            if any(n.op in HEAD_OPS for n in readers):
                continue
            raise AssertionError(f"{node.op} could have joined its only consumer's group")


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs(seed):
    original = _random_graph(seed)
    work = clone_graph(original)
    inputs, n_before = list(work.inputs), len(work.nodes)
    fused = OperatorFusion().run(work)
    assert fused.inputs == inputs
    _check_structure(n_before, fused)
    text = dump_text(fused)
    assert dump_text(OperatorFusion().run(fused)) == text
    ins = random_inputs(original, seed, int_range=4)
    with np.errstate(all="ignore"):
        _assert_identical(evaluate(fused, ins), evaluate(original, ins))


def test_groups_are_in_root_order_and_maximal():
    groups = find_groups(_load("escaping"))
    assert [[n.op for n in g] for g in groups] == [["add", "exp"], ["neg", "relu"]]
