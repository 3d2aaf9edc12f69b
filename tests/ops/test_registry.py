"""Registry-driven op tests: every registered op, every case.

For each case: the reference kernel agrees with the independent formula;
``infer`` agrees with the reference result's shape and dtype; the eager path
returns exactly the reference result; a decomposition (when the op has one)
agrees with the reference.

One test item per (check, op) loops over the op's cases (thousands of
one-case items cost more in pytest/xdist bookkeeping than in checking); every
case is still run, and a failure lists every failing case by id.
"""
from __future__ import annotations

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.dtypes import from_numpy
from frame.ir import GraphBuilder, TensorType
from frame.ops import all_ops, get_schema
from frame.runtime import eager
from frame.ops.interpreter import evaluate

from .optable import check_each, load_all, tolerance

OP_CASES = load_all()
NO_CASES_NEEDED = {"constant", "fused"}  # payload/body ops: covered by IR, fusion and interpreter tests


# op -> [(case id, case)]
ALL_CASES = {op: [(f"{op}-{case.id or i}", case) for i, case in enumerate(OP_CASES[op]())]
             for op in sorted(OP_CASES)}


def _each_case(op, check) -> None:
    check_each(op, [(case_id, (op, case)) for case_id, case in ALL_CASES[op]], check)


def test_every_op_has_cases():
    missing = sorted(set(all_ops()) - set(OP_CASES) - NO_CASES_NEEDED)
    assert not missing, f"ops without registry test cases: {missing}"


def test_cases_only_for_registered_ops():
    assert not sorted(set(OP_CASES) - set(all_ops()))


def _reference(op, case):
    schema = get_schema(op)
    attrs = schema.normalize_attrs(case.attrs)
    return [np.asarray(o) for o in schema.reference(case.inputs, attrs)], attrs


def _close(actual, expected, case, what):
    rtol, atol = tolerance(actual.dtype)
    rtol = case.rtol if case.rtol is not None else rtol
    atol = case.atol if case.atol is not None else atol
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if actual.dtype.kind == "b" or expected.dtype.kind == "b":
        np.testing.assert_array_equal(actual, expected.astype(actual.dtype), err_msg=what)
    else:
        np.testing.assert_allclose(actual.astype(np.complex128 if actual.dtype.kind == "c" else np.float64),
                                   expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64),
                                   rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def _reference_matches_formula(op, case):
    outs, attrs = _reference(op, case)
    expected = case.expected(case.inputs, attrs)
    assert len(outs) == len(expected)
    for i, (o, e) in enumerate(zip(outs, expected)):
        _close(o, e, case, f"{op} output {i}")


def _infer_matches_reference(op, case):
    outs, attrs = _reference(op, case)
    types = get_schema(op).infer([TensorType(from_numpy(a.dtype), a.shape) for a in case.inputs], attrs)
    assert [str(t) for t in types] == [str(TensorType(from_numpy(o.dtype), o.shape)) for o in outs]


def _eager_equals_reference(op, case):
    outs, attrs = _reference(op, case)
    got = eager.run_op(op, case.inputs, attrs)
    for o, g in zip(outs, got):
        assert g.dtype == o.dtype and g.shape == o.shape
        np.testing.assert_array_equal(g, o)


def _decomposition_matches_reference(op, case):
    outs, attrs = _reference(op, case)
    b = GraphBuilder()
    ins = [b.input(from_numpy(a.dtype), a.shape) for a in case.inputs]
    results = get_schema(op).decompose(b, ins, attrs)
    graph = b.build(*results)
    assert op not in graph.op_names(), "a decomposition must not use the op itself"
    got = evaluate(graph, case.inputs)
    for o, g in zip(outs, got):
        assert g.dtype == o.dtype and g.shape == o.shape
        rtol, atol = tolerance(o.dtype)
        np.testing.assert_allclose(g.astype(np.float64), o.astype(np.float64),
                                   rtol=max(rtol, 1e-6) * 10, atol=max(atol, 1e-6) * 10)


DECOMPOSED = [op for op in ALL_CASES if get_schema(op).decompose is not None]


@pytest.mark.parametrize("op", list(ALL_CASES))
def test_reference_matches_formula(op):
    _each_case(op, _reference_matches_formula)


@pytest.mark.parametrize("op", list(ALL_CASES))
def test_infer_matches_reference(op):
    _each_case(op, _infer_matches_reference)


@pytest.mark.parametrize("op", list(ALL_CASES))
def test_eager_equals_reference(op):
    _each_case(op, _eager_equals_reference)


@pytest.mark.parametrize("op", DECOMPOSED)
def test_decomposition_matches_reference(op):
    _each_case(op, _decomposition_matches_reference)
