"""memory_planning: golden tests, idempotence, and the plan driving the cpu executable.

``testdata/memory_planning_<case>.out.ir`` holds the expected IR (the pass
does not change it: ``dump_text`` must equal the non-comment lines) followed
by the expected plan as ``#`` comment lines (``str(MemoryPlan)``), which
``parse_text`` skips, so the file is still IR text.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.ir import Graph, dump_text, parse_text, plan_memory, verify
from frame.passes.memory_planning import MemoryPlanning

DATA = pathlib.Path(__file__).parent / "testdata"
CASES = sorted(p.name[len("memory_planning_"):-len(".in.ir")]
               for p in DATA.glob("memory_planning_*.in.ir"))


def _load(case: str) -> Graph:
    return parse_text((DATA / f"memory_planning_{case}.in.ir").read_text())


def _expected(case: str) -> tuple[str, str]:
    """(IR text, plan text) of the golden output."""
    lines = (DATA / f"memory_planning_{case}.out.ir").read_text().strip().split("\n")
    ir = [ln for ln in lines if not ln.startswith("#")]
    plan = [ln[2:] for ln in lines if ln.startswith("# ")]
    return "\n".join(ir), "\n".join(plan)


def test_golden_cases_exist():
    assert {"chain", "mlp", "dtypes", "outputs_and_constants", "multi_output",
            "growing"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_golden(case):
    graph = _load(case)
    verify(graph)
    out = MemoryPlanning().run(graph)
    verify(out)
    ir, plan = _expected(case)
    assert dump_text(out) == ir
    assert str(out.meta["memory_plan"]) == plan


@pytest.mark.parametrize("case", CASES)
def test_golden_output_parses(case):
    text = (DATA / f"memory_planning_{case}.out.ir").read_text()
    assert dump_text(parse_text(text)) == _expected(case)[0]


@pytest.mark.parametrize("case", CASES)
def test_idempotent(case):
    once = MemoryPlanning().run(_load(case))
    text, plan = dump_text(once), once.meta["memory_plan"]
    twice = MemoryPlanning().run(once)
    assert dump_text(twice) == text
    assert twice.meta["memory_plan"] == plan


@pytest.mark.parametrize("case", CASES)
def test_plan_drives_the_cpu_executable(case):
    """The planned graph compiles with this exact plan and matches the interpreter."""
    from frame.backends.cpu import CpuBackend
    from frame.ops.interpreter import evaluate

    graph = MemoryPlanning().run(_load(case))
    exe = CpuBackend().compile(graph, frame.hal.CompileOptions())
    assert exe.plan is graph.meta["memory_plan"]
    rng = np.random.default_rng(0)
    ins = [rng.uniform(-2, 2, v.type.shape).astype(v.type.dtype.np) for v in graph.inputs]
    with np.errstate(all="ignore"):
        want = evaluate(graph, ins)
        for _ in range(2):  # the second run reuses the buffers
            got = exe.run(ins)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.tobytes() == w.tobytes()


def test_plan_never_worse_than_naive():
    for case in CASES:
        plan = plan_memory(_load(case))
        assert plan.max_live_bytes <= plan.peak_bytes <= plan.naive_bytes
