"""Signed zeros (and IEEE arithmetic) through the OpenVINO backend, driven by
the op registry: every elementwise op of one or two inputs, on data holding
-0.0, +0.0, negatives, positives, +-inf, NaN and (float32) subnormals,
against the reference kernel (NumPy's ufuncs).  Binary ops run against every scalar constant of CONSTANTS on
either side (the CPU plugin treats a one-element constant operand its own way:
``exact_arith.py``) and against a second tensor holding every pair of the
special values.  Where the reference's result is zero its sign must be the
same; elsewhere the values are within the backend's usual tolerance.

Graphs go through ``runtime.compile`` for the openvino backend, as a jitted
function's graph does: float64 nodes (and ops the backend refuses) fall back
to the cpu kernels, float32 nodes are OpenVINO's.
"""
from __future__ import annotations

import numpy as np
import pytest

from ._helpers import OPTIONS, assert_matches

from frame.dtypes import from_numpy  # noqa: E402
from frame.ir import GraphBuilder  # noqa: E402
from frame.ops import all_schemas, get_schema  # noqa: E402
from frame.runtime import compile as rc  # noqa: E402

SPECIALS = np.array([-0.0, 0.0, -1.5, -3.0, 0.5, 2.0, -np.inf, np.inf, np.nan, 1e-40, -1e-40])
CONSTANTS = (0.0, -0.0, 1.0, 2.0, -3.0, 0.5)
# an attribute variant per op where the op has more than one formula
VARIANTS = {"gelu": ({"approximate": "none"}, {"approximate": "tanh"})}


def _takes_floats(op: str, attrs: dict) -> bool:
    schema = get_schema(op)
    n = schema.num_inputs[0]
    try:
        with np.errstate(all="ignore"):
            schema.reference([np.float32(1.0)] * n, schema.normalize_attrs(attrs))
    except (TypeError, ValueError):  # bitwise ops, shifts: integers only
        return False
    return True


# the elementwise ops of one or two inputs that compute on floats (not the bitwise
# ops and shifts); cast has a dtype attribute, conj and real are for complex values
FLOAT_ELEMENTWISE = sorted(
    s.name for s in all_schemas()
    if s.has("elementwise") and s.num_inputs in ((1, 1), (2, 2))
    and s.name not in ("cast", "conj", "real")
    and any(_takes_floats(s.name, attrs) for attrs in VARIANTS.get(s.name, ({},))))


def _cases(op: str, dtype: np.dtype):
    """[(description, inputs, build)]: ``build(builder, values)`` appends the
    case's node and returns its output."""
    x = SPECIALS.astype(dtype)
    # every (left, right) pair of the special values
    left = np.repeat(SPECIALS, SPECIALS.size).astype(dtype)
    right = np.tile(SPECIALS, SPECIALS.size).astype(dtype)
    cases = []
    for attrs in VARIANTS.get(op, ({},)):
        if not _takes_floats(op, attrs):
            continue
        if get_schema(op).num_inputs[0] == 1:
            cases.append((f"{op}(x) {attrs}", [x], lambda b, vs, a=attrs: b.op(op, vs[0], **a)))
            continue
        cases.append((f"{op}(x, y)", [left, right], lambda b, vs: b.op(op, vs[0], vs[1])))
        for c in CONSTANTS:
            def right_const(b, vs, c=c):
                return b.op(op, vs[0], b.scalar(c, like=vs[0]))

            def left_const(b, vs, c=c):
                return b.op(op, b.scalar(c, like=vs[0]), vs[0])
            cases.append((f"{op}(x, {c})", [left], right_const))
            cases.append((f"{op}({c}, x)", [left], left_const))
    return cases


def _compare(got: np.ndarray, want: np.ndarray, what: str, op: str) -> None:
    assert_matches(got, want, what, op)
    if want.dtype.kind == "f":
        zero = want == 0
        wrong = np.flatnonzero(zero & (np.signbit(got) != np.signbit(want)))
        assert not wrong.size, f"{what}: sign of zero differs at {wrong.tolist()}: " \
                               f"got {got[wrong].tolist()}, reference {want[wrong].tolist()}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("op", FLOAT_ELEMENTWISE)
def test_signed_zeros_match_the_reference(op, dtype):
    cases = _cases(op, np.dtype(dtype))
    b = GraphBuilder()
    outs, inputs = [], []
    for _, case_inputs, build in cases:
        values = [b.input(from_numpy(a.dtype), a.shape) for a in case_inputs]
        inputs += case_inputs
        outs.append(build(b, values))
    graph = b.build(*outs)
    with np.errstate(all="ignore"):
        got = rc.compile(graph, "openvino", OPTIONS).run(inputs)
    # the reference: the graph's own nodes, one by one, on the same inputs
    from frame.ops.interpreter import evaluate
    with np.errstate(all="ignore"):
        want = evaluate(graph, inputs)
    for (what, _, _), g, w in zip(cases, got, want):
        _compare(np.asarray(g), np.asarray(w), f"{what} {np.dtype(dtype).name}", op)


def _matmul_then(k: float, rows: int):
    """x @ w, then times the scalar k: the plugin fuses such a multiply into the
    MatMul as a post-op unless kept apart (exact_arith.spread)."""
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 4)).astype(np.float32)
    x[0] = 0.0  # zero rows: +0.0 products, so -0.0 once multiplied by a negative k
    w = rng.standard_normal((4, 5)).astype(np.float32)
    b = GraphBuilder()
    xv, wv = b.input(from_numpy(x.dtype), x.shape), b.input(from_numpy(w.dtype), w.shape)
    y = b.op("mul", b.op("matmul", xv, wv), b.scalar(k, like=xv))
    return b.build(y), [x, w]


@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("k", [-2.0, 0.0, -0.0])
def test_multiply_after_matmul_keeps_the_sign_of_zero(k, rows):
    graph, inputs = _matmul_then(k, rows)
    from frame.ops.interpreter import evaluate
    (got,) = rc.compile(graph, "openvino", OPTIONS).run(inputs)
    (want,) = evaluate(graph, inputs)
    _compare(np.asarray(got), np.asarray(want), f"(x @ w) * {k}", "matmul")


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)], ids=["0d", "1", "1x1"])
def test_signed_zeros_of_single_values(shape):
    """One-element values (a NumPy scalar inside a jitted function): the spread
    constants need an axis of their own there (exact_arith._binary_spread)."""
    b = GraphBuilder()
    values = [np.full(shape, v, np.float32) for v in (-0.0, 0.0, -2.0)]
    ins = [b.input(from_numpy(v.dtype), v.shape) for v in values]
    outs = []
    for x in ins:
        outs.append(b.op("neg", x))
        outs.append(b.op("sub", x, x))
        for c in CONSTANTS:
            for op in ("mul", "add", "sub", "div"):
                outs.append(b.op(op, x, b.scalar(c, like=x)))
                outs.append(b.op(op, b.scalar(c, like=x), x))
    # beside a Concat: the form the plugin once failed to compile for rank 0
    outs.append(b.op("concat", *(b.op("reshape", o, shape=(1,)) for o in outs[:4]), axis=0))
    graph = b.build(*outs)
    from frame.ops.interpreter import evaluate
    with np.errstate(all="ignore"):
        got = rc.compile(graph, "openvino", OPTIONS).run(values)
        want = evaluate(graph, values)
    for k, (g, w) in enumerate(zip(got, want)):
        _compare(np.asarray(g), np.asarray(w), f"single value output {k} {shape}", "mul")
