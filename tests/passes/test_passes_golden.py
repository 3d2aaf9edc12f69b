"""Golden tests for the passes of the standard pipeline (fusion and memory planning
have their own files): IR text in -> pass -> expected IR text, idempotence, and
the PassManager's contract (verify after every pass, errors named after the pass,
FRAME_DUMP_IR_AFTER).

Regenerate expected files after a deliberate change with
``FRAME_REGEN_GOLDEN=1 python -m pytest tests/passes/test_passes_golden.py`` and
review the diff.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np

import pytest

import frame
from frame.hal import CompileOptions, ErrorCode, FrameError, get_backend
from frame.ir import GraphBuilder, TensorType, dump_text, parse_text
from frame.passes import PASS_NAMES, Pass, PassManager, standard_pipeline

DATA = pathlib.Path(__file__).parent / "testdata"
OWN_FILES = {"operator_fusion", "memory_planning"}  # golden tests in their own modules
GOLDEN_PASSES = [n for n in PASS_NAMES if n not in OWN_FILES]


def _pass(name: str) -> Pass:
    for p in standard_pipeline(get_backend("cpu"), CompileOptions()):
        if p.name == name:
            return p
    raise KeyError(name)


def _cases():
    for path in sorted(DATA.glob("*.in.ir")):
        for name in GOLDEN_PASSES:
            if path.name.startswith(name + "_"):
                yield pytest.param(name, path, id=path.name[:-6])


CASES = list(_cases())


def test_every_pass_has_a_golden_case():
    covered = {name for name, _ in (c.values for c in CASES)}
    assert covered == set(GOLDEN_PASSES)


@pytest.mark.parametrize("name,path", CASES)
def test_golden(name, path):
    out_path = path.with_name(path.name.replace(".in.ir", ".out.ir"))
    graph = _pass(name).run(parse_text(path.read_text()))
    frame.ir.verify(graph)
    text = dump_text(graph)
    if os.environ.get("FRAME_REGEN_GOLDEN"):
        out_path.write_text(text + "\n")
    assert text == out_path.read_text().strip()


@pytest.mark.parametrize("name,path", CASES)
def test_idempotent(name, path):
    once = _pass(name).run(parse_text(path.read_text()))
    first = dump_text(once)
    assert dump_text(_pass(name).run(once)) == first


def test_pipeline_order_is_fixed():
    names = [p.name for p in standard_pipeline(get_backend("cpu"))]
    assert names == ["canonicalize", "shape_inference", "constant_folding",
                     "common_subexpression_elimination", "dead_node_elimination",
                     "layout_assignment", "operator_fusion", "memory_planning",
                     "backend_lowering"] == PASS_NAMES


def _small_graph():
    b = GraphBuilder()
    x = b.input(frame.float32, (3,))
    return b.build(b.op("relu", b.op("exp", x)))


class _Breaks(Pass):
    """Produces an invalid graph: the relu node reads a value defined nowhere."""
    name = "breaks_things"

    def run(self, graph):
        from frame.ir import Value
        graph.nodes[-1].inputs = (Value(TensorType(frame.float32, (3,))),)
        return graph


class _Counts(Pass):
    name = "after"
    runs = 0

    def run(self, graph):
        _Counts.runs += 1
        return graph


def test_invalid_graph_fails_at_once_with_the_pass_name():
    _Counts.runs = 0
    with pytest.raises(FrameError) as info:
        PassManager([_pass("canonicalize"), _Breaks(), _Counts()]).run(_small_graph())
    assert str(info.value).startswith("pass 'breaks_things': V1")
    assert _Counts.runs == 0  # the pipeline stopped at the broken pass


def test_exceptions_inside_a_pass_are_named():
    class Crashes(Pass):
        name = "crashes"

        def run(self, graph):
            raise KeyError("boom")
    with pytest.raises(FrameError) as info:
        PassManager([Crashes()]).run(_small_graph())
    assert info.value.code is ErrorCode.INTERNAL and "pass 'crashes': KeyError" in str(info.value)


def test_shape_inference_rejects_mismatch_and_dynamic_dims():
    g = _small_graph()
    g.nodes[0].outputs[0].type = TensorType(frame.float32, (4,))
    with pytest.raises(FrameError, match="infer"):
        _pass("shape_inference").run(g)
    b = GraphBuilder()
    x = b.input(frame.float32, (3,))
    g = b.build(b.op("exp", x))
    g.inputs[0].type = TensorType(frame.float32, (-1,))
    with pytest.raises(FrameError, match="dynamic"):
        _pass("shape_inference").run(g)


def test_backend_lowering_names_op_and_backend():
    from tests.runtime.tiny_backend import tiny
    b = GraphBuilder()
    x = b.input(frame.float32, (3,))
    g = b.build(b.op("tanh", x))
    from frame.passes.lowering import BackendLowering
    with pytest.raises(FrameError) as info:
        BackendLowering(tiny()).run(g)
    assert info.value.code is ErrorCode.UNIMPLEMENTED
    assert "'tanh'" in str(info.value) and "'tiny'" in str(info.value)


def test_unknown_dump_pass_is_an_error():
    with pytest.raises(FrameError, match="unknown pass"):
        PassManager(standard_pipeline(get_backend("cpu")), dump_after="no_such_pass")


def test_frame_dump_ir_after_prints_that_pass_output(tmp_path):
    script = tmp_path / "dump.py"
    script.write_text(
        "import frame\n"
        "from frame.ir import GraphBuilder\n"
        "from frame.runtime.compile import compile\n"
        "b = GraphBuilder()\n"
        "x = b.input(frame.float32, (3,))\n"
        "c = b.op('mul', b.scalar(2.0, dtype=frame.float32), b.scalar(3.0, dtype=frame.float32))\n"
        "compile(b.build(b.op('add', x, c)), 'cpu')\n")
    env = dict(os.environ, FRAME_DUMP_IR_AFTER="constant_folding", FRAME_CACHE="0", FRAME_TIERED="0")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         check=True, cwd=pathlib.Path(__file__).parents[2])
    assert "// IR after constant_folding" in out.stderr
    # the folded constant 2*3 appears, the mul does not
    dumped = out.stderr.split("// IR after constant_folding", 1)[1]
    assert "value=[6.0]" in dumped and "mul(" not in dumped


def test_constant_folding_keeps_a_node_whose_kernel_raises():
    """A kernel's own check failing on constant inputs (an index out of range)
    is the graph's run-time error, not a compile error: the node stays."""
    b = GraphBuilder()
    table = b.constant(np.arange(6.0).reshape(2, 3))
    bad = b.op("take", table, b.constant(np.array([0, 5], np.int64)), axis=1)
    good = b.op("take", table, b.constant(np.array([0, 2], np.int64)), axis=1)
    g = _pass("constant_folding").run(b.build(bad, good))
    assert [n.op for n in g.nodes if n.op != "constant"] == ["take"]
