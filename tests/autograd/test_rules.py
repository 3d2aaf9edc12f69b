"""Registry-driven gradient checks: every differentiable op has a rule, and
every rule agrees with central differences (first order, and second order by
differentiating the gradient graph again).

Inputs and attrs come from the op table (``tests/ops/cases_*.py``): every
case whose floating inputs and outputs are float64/complex128 (so central
differences are accurate), which covers 0-d, n-d and broadcasting shapes,
plus the extra cases below (ties, zeros in products, complex arithmetic,
casts).  The loss is ``sum(op(inputs) * random_weights)`` (real part for
complex outputs).  Step and tolerances: ``gradcheck.EPS`` = 1e-6,
``RTOL`` = 1e-5, ``ATOL`` = 1e-6.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.autograd import build_backward_graph, is_differentiable
from frame.dtypes import as_dtype, from_numpy
from frame.ir import TensorType
from frame.ops import all_schemas, get_schema
from frame.ops.interpreter import evaluate
from tests.ops.optable import check_each, load_all

from .gradcheck import (ATOL, EPS, RTOL, add_scalar_output, check_gradients, is_diff_array,
                        op_loss_graph)

OP_CASES = load_all()
DIFFERENTIABLE = sorted(s.name for s in all_schemas() if is_differentiable(s))


@dataclasses.dataclass
class GradCase:
    op: str
    inputs: list
    attrs: dict
    id: str
    eps: float = EPS
    rtol: float = RTOL
    atol: float = ATOL
    smooth: bool = True  # twice differentiable near the inputs (second-order check)


def _precise(op: str, inputs, attrs) -> bool:
    """Floating inputs and outputs are all float64/complex128, and at least one
    input and one output can carry a gradient."""
    arrays = [np.asarray(a) for a in inputs]
    if any(a.dtype.kind in "fc" and a.dtype not in (np.float64, np.complex128) for a in arrays):
        return False
    schema = get_schema(op)
    outs = schema.infer([TensorType(from_numpy(a.dtype), a.shape) for a in arrays],
                        schema.normalize_attrs(attrs))
    floats = [t for t in outs if t.dtype.kind in "fc"]
    return (any(is_diff_array(a) for a in arrays) and bool(floats)
            and all(t.dtype.name in ("float64", "complex128") for t in floats))


def _rng(seed):
    return np.random.default_rng(seed)


def _extra_cases() -> list[GradCase]:
    r = _rng(7)
    f64 = lambda *shape: r.uniform(-2.0, 2.0, shape)  # noqa: E731
    c128 = lambda *shape: f64(*shape) + 1j * f64(*shape)  # noqa: E731
    out = [
        # casts: to complex and back, and to float32 (coarser step and tolerance)
        GradCase("cast", [f64(2, 3)], {"dtype": as_dtype("complex128")}, "f64->c128"),
        GradCase("cast", [c128(2, 3)], {"dtype": as_dtype("complex128")}, "c128->c128"),
        GradCase("cast", [f64(2, 3)], {"dtype": as_dtype("float32")}, "f64->f32",
                 eps=1e-2, rtol=1e-3, atol=1e-3),
        GradCase("cast", [c128(3)], {"dtype": as_dtype("float64")}, "c128->f64"),
        # products containing zeros: one zero per group, two zeros, none
        GradCase("prod", [np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [1.0, 2.0, -1.0]])],
                 {"axes": (1,), "keepdims": False}, "zeros-rows"),
        GradCase("prod", [np.array([[0.0, 2.0], [3.0, 0.5]])], {"axes": (0, 1), "keepdims": True},
                 "zero-all"),
        # two-way ties: half to each, which is also the central difference
        # (a kink: the gradient jumps there, so no second-order check)
        GradCase("maximum", [np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.5, -1.0])], {}, "ties",
                 smooth=False),
        GradCase("minimum", [np.array([[1.0], [3.0]]), np.array([1.0, 3.0])], {}, "ties-bcast",
                 smooth=False),
        GradCase("max", [np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]])],
                 {"axes": (1,), "keepdims": False}, "ties", smooth=False),
        GradCase("min", [np.array([[1.0, 3.0], [1.0, 0.0]])], {"axes": (0,), "keepdims": True},
                 "ties", smooth=False),
        # clip with array bounds (broadcast) and lo > hi
        GradCase("clip", [f64(2, 3), np.array([-1.0, 0.0, 1.5]), np.array([[1.0], [-0.5]])], {},
                 "bcast-bounds"),
        # complex arithmetic: conjugated derivative factors
        GradCase("mul", [c128(2, 3), c128(3)], {}, "complex"),
        GradCase("mul", [f64(2, 3), c128(3)], {}, "real*complex"),
        GradCase("div", [c128(4), c128(4) + 3.0], {}, "complex"),
        GradCase("exp", [c128(3)], {}, "complex"),
        GradCase("log", [c128(3) + 3.0], {}, "complex"),
        GradCase("sqrt", [c128(3) + 3.0], {}, "complex"),
        GradCase("tanh", [0.5 * c128(3)], {}, "complex"),
        GradCase("sin", [c128(3)], {}, "complex"),
        GradCase("reciprocal", [c128(3) + 3.0], {}, "complex"),
        GradCase("abs", [c128(2, 2)], {}, "complex"),
        GradCase("sign", [c128(2, 2)], {}, "complex"),
        GradCase("matmul", [c128(2, 3), c128(3, 2)], {}, "complex"),
        GradCase("sum", [c128(2, 3)], {"axes": (1,), "keepdims": False}, "complex"),
        GradCase("pow", [c128(3) + 3.0, np.array(2.5 + 0.5j)], {}, "complex"),
        # pow with a zero base (d/db taken as 0 there) and an integer-valued exponent
        # (pow is undefined for a base just below 0: no second-order check)
        GradCase("pow", [np.array([0.0, 1.5, 2.0]), np.array([2.0, 3.0, 0.5])], {}, "zero-base",
                 smooth=False),
        # matmul: both operands 1-D, and batch broadcasting on both sides
        GradCase("matmul", [f64(3), f64(3)], {}, "vec-vec"),
        GradCase("matmul", [f64(2, 1, 2, 3), f64(4, 3, 2)], {}, "batch-bcast"),
    ]
    for c in out:
        c.id = f"{c.op}-{c.id}"
    return out


def _cases() -> list[GradCase]:
    cases = []
    for op in DIFFERENTIABLE:
        for i, case in enumerate(OP_CASES.get(op, lambda: [])()):
            if _precise(op, case.inputs, case.attrs):
                cases.append(GradCase(op, [np.asarray(a) for a in case.inputs], dict(case.attrs),
                                      f"{op}-{case.id or i}"))
    return cases + _extra_cases()


CASES = _cases()


def test_every_differentiable_op_has_a_rule():
    missing = [s.name for s in all_schemas() if is_differentiable(s) and s.gradient is None]
    assert not missing, f"differentiable ops without a gradient rule: {missing}"


def test_nondifferentiable_ops_have_no_rule():
    wrong = [s.name for s in all_schemas() if not is_differentiable(s) and s.gradient is not None]
    assert not wrong


def test_every_differentiable_op_is_gradient_checked():
    checked = {c.op for c in CASES}
    assert not sorted(set(DIFFERENTIABLE) - checked), "ops without a gradient check case"


def _wrt(case: GradCase) -> list[int]:
    return [i for i, a in enumerate(case.inputs) if is_diff_array(a)]


@pytest.fixture(autouse=True)
def _quiet_complex_casts():
    # cast complex -> float discards the imaginary part, as NumPy does, with a warning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


def _by_op(cases: list[GradCase]) -> dict[str, list[GradCase]]:
    """Cases grouped per op: one test item per (check, op) runs all of them
    (``check_each`` names every failing case)."""
    out: dict[str, list[GradCase]] = {}
    for c in cases:
        out.setdefault(c.op, []).append(c)
    return out


def _each(op: str, cases: dict[str, list[GradCase]], check) -> None:
    check_each(op, [(c.id, (c,)) for c in cases[op]], check)


BY_OP = _by_op(CASES)


@pytest.mark.parametrize("op", list(BY_OP))
def test_gradient_matches_central_differences(op):
    _each(op, BY_OP, _gradient_matches_central_differences)


def _gradient_matches_central_differences(case):
    graph = op_loss_graph(case.op, case.inputs, case.attrs)
    check_gradients(graph, case.inputs, _wrt(case), case.eps, case.rtol, case.atol, case.id)


SECOND = _by_op([c for c in CASES if c.smooth and c.eps == EPS])


@pytest.mark.parametrize("op", list(SECOND))
def test_second_order_matches_central_differences(op):
    """Differentiate ``sum(grad * w2)`` again: the gradient rules' own graphs
    must be differentiable and correct."""
    _each(op, SECOND, _second_order_matches_central_differences)


def _second_order_matches_central_differences(case):
    wrt = _wrt(case)
    first = check_gradients(op_loss_graph(case.op, case.inputs, case.attrs), case.inputs, wrt,
                            what=case.id)
    grads = first.outputs[1:]
    second = add_scalar_output(first, grads)
    check_gradients(second, case.inputs, wrt, rtol=1e-4, atol=1e-5, what=f"{case.id} (2nd)")


# --------------------------------------------------------------------------- lower precision

def _low_precision_cases() -> list[GradCase]:
    """Per differentiable op, its first table case with float32 inputs and its
    first with float16 inputs (all floating inputs of that dtype)."""
    out = []
    for op in DIFFERENTIABLE:
        for dtype in (np.float32, np.float16):
            for i, case in enumerate(OP_CASES.get(op, lambda: [])()):
                arrays = [np.asarray(a) for a in case.inputs]
                floats = [a for a in arrays if a.dtype.kind == "f"]
                if floats and all(a.dtype == dtype for a in floats) and \
                        not any(a.dtype.kind == "c" for a in arrays):
                    out.append(GradCase(op, arrays, dict(case.attrs),
                                        f"{op}-{case.id or i}"))
                    break
    return out


LOW = _by_op(_low_precision_cases())


@pytest.mark.parametrize("op", list(LOW))
def test_low_precision_gradients_keep_dtypes_and_agree_with_float64(op):
    """float32/float16 graphs: every gradient has its input's dtype (the engine
    checks each rule's result type) and is close to the float64 gradient of
    the same values."""
    _each(op, LOW, _low_precision_gradients_keep_dtypes_and_agree_with_float64)


def _low_precision_gradients_keep_dtypes_and_agree_with_float64(case):
    wrt = _wrt(case)
    low = build_backward_graph(op_loss_graph(case.op, case.inputs, case.attrs), 0, wrt)
    wide_inputs = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in case.inputs]
    wide = build_backward_graph(op_loss_graph(case.op, wide_inputs, case.attrs), 0, wrt)
    got = evaluate(low, case.inputs)[1:]
    want = evaluate(wide, wide_inputs)[1:]
    tol = 2e-2 if case.inputs[wrt[0]].dtype == np.float16 else 1e-4
    for k, g, w in zip(wrt, got, want):
        assert g.dtype == case.inputs[k].dtype
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        np.testing.assert_allclose(g.astype(np.float64), w, rtol=tol, atol=tol * scale,
                                   err_msg=f"{case.id}: input {k}")
