"""Registry-driven parity: every registered op, every case of the op table.

Per op, the cases the backend claims (``supports``) are put side by side into
one graph and compiled once (one ``compile_model`` per op keeps the suite
fast); each result must equal the reference kernel within float tolerance, on
the table's data and again on harder data (integers near +-2**31 and float32
collisions such as 2**24 + 1; NaN, +-inf, -0 and subnormals for elementwise
ops, reductions and max pooling).  Every case it does not claim must be
refused with a reason naming the op and a dtype, ``Backend.compile`` must
raise UNIMPLEMENTED, and -- once per (op, dtypes) group -- ``runtime.compile``
must fall back to cpu with a WARN, a count, and the reference's result.
"""
from __future__ import annotations

import logging
import re

import numpy as np
import pytest

from ._helpers import OPTIONS, assert_matches, backend

from frame.dtypes import from_numpy  # noqa: E402
from frame.hal import ErrorCode, FrameError  # noqa: E402
from frame.ir import GraphBuilder, clone_graph  # noqa: E402
from frame.ops import all_ops, all_schemas, get_schema  # noqa: E402
from frame.passes import PassManager, standard_pipeline  # noqa: E402
from frame.runtime import compile as rc  # noqa: E402
from frame.runtime.stats import reset_stats, stats  # noqa: E402
from tests.ops.optable import load_all  # noqa: E402

OP_CASES = load_all()
# constant: a payload op, covered by every graph with constants; fused: by test_fused.py
NOT_FROM_TABLE = {"constant", "fused"}
TABLE_OPS = sorted(set(all_ops()) - NOT_FROM_TABLE)


def test_every_op_has_a_lowering_or_a_reason():
    from frame.backends.openvino.table import RULES
    # collectives are refused with a reason (support.py): MPI is not in a compiled model
    collective = {s.name for s in all_schemas() if s.has("collective")}
    missing = sorted(set(all_ops()) - set(RULES) - {"fused"} - collective)
    assert not missing, f"ops with no openvino lowering rule: {missing}"


def test_table_covers_every_op():
    assert not sorted(set(TABLE_OPS) - set(OP_CASES))


def _cases(op):
    schema = get_schema(op)
    out = []
    for i, case in enumerate(OP_CASES[op]()):
        attrs = schema.normalize_attrs(case.attrs)
        inputs = [np.asarray(x) for x in case.inputs]
        out.append((case.id or str(i), inputs, attrs))
    return out


def _signature(inputs, node) -> str:
    return ",".join(str(a.dtype) for a in inputs) + "->" + ",".join(
        v.type.dtype.name for v in node.outputs)


# inputs that must stay valid indices (the reference raises otherwise)
INDEX_INPUTS = {"take": {1}, "embedding": {0}, "cross_entropy": {1}, "scatter_add": {1},
                "scatter": {1}, "take_along_axis": {1}}
# ops whose NaN/inf behaviour is NumPy's by construction (elementwise, reductions, pooling)
SPECIAL_FLOATS = {s.name for s in all_schemas() if s.has("elementwise") or s.has("reduction")} \
    | {"max_pool2d"}
_INT_EDGES = np.array([2 ** 31 - 1, -2 ** 31, 2 ** 24 + 1, 2 ** 24, -(2 ** 24) - 1, 0, 1, -1],
                      np.int64)
_FLOAT_EDGES = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 1.5], np.float64)


def _harder(op: str, inputs, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    for i, x in enumerate(inputs):
        x = np.asarray(x)
        if i in INDEX_INPUTS.get(op, ()) or x.size == 0:
            out.append(x)
        elif x.dtype.kind in "iu":
            wide = rng.integers(-2 ** 31, 2 ** 31, size=x.shape, dtype=np.int64)
            mask = rng.random(x.shape) < 0.5
            wide = np.where(mask, rng.choice(_INT_EDGES, size=x.shape), wide)
            if x.dtype == np.int64 and rng.random() < 0.5:
                wide = wide * (2 ** 20)  # beyond int32: the reference re-run must take over
            out.append(wide.astype(x.dtype))
        elif x.dtype.kind == "f" and op in SPECIAL_FLOATS:
            mask = rng.random(x.shape) < 0.3
            special = rng.choice(_FLOAT_EDGES, size=x.shape)
            out.append(np.where(mask, special, x).astype(x.dtype))
        else:
            out.append(x)
    return out


def _check_batch(exe, op, cases, what: str = "") -> None:
    schema = get_schema(op)
    with np.errstate(all="ignore"):
        results = iter(exe.run([x for _, inputs, _ in cases for x in inputs]))
        for case_id, inputs, attrs in cases:
            want = schema.reference(inputs, attrs)
            for k, w in enumerate(want):
                assert_matches(next(results), np.asarray(w), f"{op}[{case_id}] {what} output {k}", op)


def _survives_pipeline(graph, op) -> bool:
    passes = standard_pipeline(backend(), OPTIONS)[:-1]  # all but backend_lowering
    planned = PassManager(passes).run(clone_graph(graph))
    names = set()
    for node in planned.nodes:
        names.add(node.op)
        if node.body is not None:
            names.update(n.op for n in node.body.nodes)
    return op in names


@pytest.fixture
def fresh_runtime():
    rc.clear_cache()
    reset_stats()
    yield
    rc.clear_cache()


def _split_cases(op):
    """(claimed cases batched into one graph, refused cases grouped by dtypes)."""
    be = backend()
    batch = GraphBuilder()
    claimed, refused = [], {}
    for case_id, inputs, attrs in _cases(op):
        single = GraphBuilder()
        values = [single.input(from_numpy(a.dtype), a.shape) for a in inputs]
        outs = single.op_multi(op, values, attrs)
        node = single.graph.nodes[-1]
        if be.supports(node):
            bvals = [batch.input(from_numpy(a.dtype), a.shape) for a in inputs]
            claimed.append((case_id, inputs, attrs, batch.op_multi(op, bvals, attrs)))
        else:
            refused.setdefault(_signature(inputs, node), []).append(
                (case_id, inputs, attrs, single.build(*outs), node))
    graph = batch.build(*[v for *_, outs in claimed for v in outs]) if claimed else None
    return graph, claimed, refused


@pytest.mark.parametrize("op", TABLE_OPS)
def test_op_parity(op):
    """Claimed cases equal the reference; refused ones say why and do not compile."""
    be = backend()
    graph, claimed, refused = _split_cases(op)
    if claimed:
        exe = be.compile(graph, OPTIONS)
        _check_batch(exe, op, [(case_id, inputs, attrs) for case_id, inputs, attrs, _ in claimed])
        # the same model on harder data: integers that float32 cannot hold, and
        # NaN/inf/-0/subnormal floats where the op's NaN semantics are defined
        harder = [(case_id, _harder(op, inputs, seed), attrs)
                  for seed, (case_id, inputs, attrs, _) in enumerate(claimed)]
        _check_batch(exe, op, harder, "hard data")
    for signature, group in refused.items():
        case_id, inputs, attrs, graph, node = group[0]
        why = be.why_unsupported(node)
        assert why and op in why, f"{op}[{case_id}]: reason {why!r} does not name the op"
        dtypes = {a.dtype.name for a in inputs} | {v.type.dtype.name for v in node.outputs}
        assert any(d in why for d in dtypes) or "empty" in why, \
            f"{op}[{case_id}]: reason {why!r} names no dtype"
        with pytest.raises(FrameError) as err:
            be.compile(graph, OPTIONS)
        assert err.value.code is ErrorCode.UNIMPLEMENTED


@pytest.mark.parametrize("op", TABLE_OPS)
def test_refused_cases_fall_back(op, fresh_runtime, caplog):
    """Through runtime.compile, a refused node falls back, says so once, is counted,
    and gives the reference's result (unless the pipeline folded it away: an op
    without inputs, or an identity)."""
    caplog.set_level(logging.WARNING, logger="frame")
    schema = get_schema(op)
    _, _, refused = _split_cases(op)
    for signature, group in refused.items():
        case_id, inputs, attrs, graph, node = group[0]
        before = stats().fallbacks.get((op, "openvino"), 0)
        caplog.clear()
        exe = rc.compile(graph, "openvino", OPTIONS)
        if _survives_pipeline(graph, op):
            assert stats().fallbacks.get((op, "openvino"), 0) == before + 1, signature
            targets = {t for (o, b, t) in stats().fallback_targets if o == op and b == "openvino"}
            assert targets <= {"cpu", "decomposition"}, (signature, targets)
            warns = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
            # one WARN for the graph, listing the ops that left OpenVINO: "(abs, exp on float64)"
            assert len(warns) == 1 and "backend 'openvino'" in warns[0], warns
            assert re.search(rf"[(, ]{op}[, ]", warns[0].split("); they run")[0]), warns
        got = exe.run(inputs)
        for k, w in enumerate(schema.reference(inputs, attrs)):
            assert_matches(got[k], np.asarray(w), f"{op}[{case_id}] fallback output {k}", op)
