"""Numerical equivalence, registry-driven: for every op with the ``elementwise``
trait, graphs of it (alone, in fused chains/trees, broadcasting, mixed
dtypes, 0-d, with constants, as the epilogue of a matmul region and inside a
region ending in a reduction) give bit-identical results through

    the interpreter on the original graph
    the interpreter on the graph after operator_fusion
    the cpu executable (frame.runtime.compile.compile(graph, "cpu"))

Dtype combinations are the ones the op's own type inference accepts (from a
small pool), attrs are the schema's defaults plus sample values for required
ones, so a newly registered elementwise op is covered without editing this file.
"""
from __future__ import annotations

import itertools
from typing import Callable

import numpy as np
import pytest

import frame
from frame.dtypes import as_dtype
from frame.ir import Graph, GraphBuilder, TensorType, Value, clone_graph
from frame.ops import REQUIRED, all_schemas
from frame.ops.schema import OpSchema
from frame.passes.fusion import OperatorFusion
from frame.runtime import compile as rc
from frame.ops.interpreter import evaluate
from ..graphcheck import assert_identical as _identical

ELEMENTWISE = [s for s in all_schemas() if s.has("elementwise")]
POOL = ("float32", "int32", "bool", "float64")      # dtype combinations come from these ...
EXTRA_UNARY = ("float16", "int64")                  # ... plus these for unary ops
MIXED_FOR_VARIANTS = 6  # mixed-dtype combos per op that get every graph variant

_ATTR_SAMPLES: dict[str, tuple] = {
    "dtype": ("float32", "int64", "bool", "float16"),
}


@pytest.fixture(scope="module", autouse=True)
def _fresh_cache():
    rc.clear_cache()
    yield
    rc.clear_cache()


def _attr_sets(schema: OpSchema) -> list[dict]:
    """Defaults, crossed with sample values for every required attr."""
    choices = []
    for name, spec in schema.attrs.items():
        if spec.default is REQUIRED:
            if spec.kind not in _ATTR_SAMPLES:
                raise AssertionError(f"{schema.name}: no sample values for a required "
                                     f"'{spec.kind}' attr; add some to _ATTR_SAMPLES")
            choices.append([(name, v) for v in _ATTR_SAMPLES[spec.kind]])
    return [schema.normalize_attrs(dict(combo)) for combo in itertools.product(*choices)]


def _accepts(schema: OpSchema, dtypes: tuple[str, ...], attrs: dict) -> bool:
    try:
        schema.infer([TensorType(as_dtype(d), (2,)) for d in dtypes], attrs)
    except (frame.hal.FrameError, TypeError, ValueError):
        return False
    return True


def _dtype_combos(schema: OpSchema, attrs: dict) -> list[tuple[str, ...]]:
    k = schema.num_inputs[0]
    pool = POOL + EXTRA_UNARY if k == 1 else POOL
    return [c for c in itertools.product(pool, repeat=k) if _accepts(schema, c, attrs)]


def _sample(t: TensorType, rng: np.random.Generator, special: bool) -> np.ndarray:
    dt = t.dtype.np
    if dt.kind == "b":
        return rng.random(t.shape) > 0.5
    if dt.kind == "i":  # positive: no integer division by zero, no negative powers
        return rng.integers(1, 5, t.shape).astype(dt)
    x = rng.uniform(-3, 3, t.shape).astype(dt)
    if special and x.size >= 4:
        flat = x.reshape(-1)
        flat[:4] = np.array([np.nan, np.inf, -0.0, -np.inf], dt)
    return x


# --------------------------------------------------------------------------- graph variants
# Each builder returns (graph, fused_expected): whether operator_fusion must fuse something.

Builder = Callable[[OpSchema, tuple[str, ...], dict], tuple[Graph, bool]]


def _single(schema, dtypes, attrs):
    b = GraphBuilder()
    ins = [b.input(d, (2, 3)) for d in dtypes]
    return b.build(b.op(schema.name, *ins, **attrs)), False


def _tree(schema, dtypes, attrs, shapes=None):
    """maximum(a_i, b_i) per operand -> op -> maximum(., p) -> maximum(., op): one
    fused group with the op's result read twice inside it."""
    b = GraphBuilder()
    shapes = shapes or [(2, 3)] * len(dtypes)
    operands = [b.op("maximum", b.input(d, s), b.input(d, s)) for d, s in zip(dtypes, shapes)]
    r = b.op(schema.name, *operands, **attrs)
    p = b.input(r.type.dtype, r.type.shape)
    return b.build(b.op("maximum", b.op("maximum", r, p), r)), True


def _broadcast(schema, dtypes, attrs):
    shapes = [(2, 1, 4), (3, 1), (4,)][:len(dtypes)] if len(dtypes) > 1 else [(3, 1)]
    if len(dtypes) == 1:  # the operand is itself broadcast: maximum((3,1), (4,)) -> (3,4)
        b = GraphBuilder()
        x = b.op("maximum", b.input(dtypes[0], (3, 1)), b.input(dtypes[0], (4,)))
        r = b.op(schema.name, x, **attrs)
        return b.build(b.op("maximum", r, b.input(r.type.dtype, (2, 1, 1)))), True
    return _tree(schema, dtypes, attrs, shapes)


def _zero_d(schema, dtypes, attrs):
    return _tree(schema, dtypes, attrs, [()] * len(dtypes))


def _mixed_rank(schema, dtypes, attrs):
    return _tree(schema, dtypes, attrs, [(5,)] + [()] * (len(dtypes) - 1))


def _constants(schema, dtypes, attrs):
    """A 0-d constant of the operand's dtype for the last operand (a full-shape
    one for unary ops, fed through maximum)."""
    b = GraphBuilder()
    rng = np.random.default_rng(7)
    ins: list[Value] = [b.input(d, (2, 3)) for d in dtypes[:-1]]
    last = TensorType(as_dtype(dtypes[-1]), ())
    if len(dtypes) == 1:
        full = TensorType(as_dtype(dtypes[0]), (2, 3))
        x = b.op("maximum", b.input(dtypes[0], (2, 3)), b.constant(_sample(full, rng, False)))
        ins.append(x)
    else:
        ins.append(b.constant(_sample(last, rng, False)))
    r = b.op(schema.name, *ins, **attrs)
    k = b.constant(_sample(TensorType(r.type.dtype, ()), rng, False))
    return b.build(b.op("maximum", r, k)), True


def _accepted(b: GraphBuilder, op: str, *args, **attrs) -> Value | None:
    """``b.op(...)``, or None when the op's type inference rejects the operands."""
    try:
        return b.op(op, *args, **attrs)
    except (frame.hal.FrameError, TypeError, ValueError):
        return None


def _matmul_epilogue(schema, dtypes, attrs):
    """A region: the op's first operand is a matmul (the region's head, BLAS
    writing into the region's array), the op and a maximum its epilogue."""
    b = GraphBuilder()
    head = _accepted(b, "matmul", b.input(dtypes[0], (2, 4)), b.input(dtypes[0], (4, 3)))
    if head is None or head.type.dtype.name != dtypes[0]:
        return _single(schema, dtypes, attrs)
    r = b.op(schema.name, head, *[b.input(d, (2, 3)) for d in dtypes[1:]], **attrs)
    return b.build(b.op("maximum", r, b.input(r.type.dtype, (2, 3)))), True


def _reduction_root(schema, dtypes, attrs):
    """A region ending in a reduction: sum(maximum(op(...), p), axis 1)."""
    b = GraphBuilder()
    r = b.op(schema.name, *[b.input(d, (2, 3)) for d in dtypes], **attrs)
    m = b.op("maximum", r, b.input(r.type.dtype, (2, 3)))
    total = _accepted(b, "sum", m, axes=(1,), keepdims=False)
    if total is None:
        return _single(schema, dtypes, attrs)
    return b.build(total), True


VARIANTS: dict[str, Builder] = {
    "single": _single, "tree": _tree, "broadcast": _broadcast, "zero_d": _zero_d,
    "mixed_rank": _mixed_rank, "constants": _constants,
    "matmul_epilogue": _matmul_epilogue, "reduction_root": _reduction_root,
}


def _check(graph: Graph, fused_expected: bool, what: str, special: bool) -> None:
    rng = np.random.default_rng(abs(hash(what)) % 2**32)
    inputs = [_sample(v.type, rng, special) for v in graph.inputs]
    fused = OperatorFusion().run(clone_graph(graph))
    if fused_expected:
        assert any(n.op == "fused" for n in fused.nodes), f"{what}: nothing was fused"
    with np.errstate(all="ignore"):
        try:
            want = evaluate(graph, inputs)
        except (ArithmeticError, ValueError, TypeError) as err:  # the definition raises
            with pytest.raises(type(err)):
                rc.compile(graph, "cpu").run(inputs)
            return
        _identical(evaluate(fused, inputs), want, f"{what}: fused interpreter")
        exe = rc.compile(graph, "cpu")
        _identical(exe.run(inputs), want, f"{what}: cpu executable")
        _identical(exe.run(inputs), want, f"{what}: cpu executable, second run")


@pytest.mark.parametrize("schema", ELEMENTWISE, ids=lambda s: s.name)
def test_elementwise_op_equivalence(schema):
    checked = 0
    for attrs in _attr_sets(schema):
        combos = _dtype_combos(schema, attrs)
        assert combos, f"{schema.name} {attrs}: no dtype combination accepted"
        same = [c for c in combos if len(set(c)) == 1]
        mixed = [c for c in combos if len(set(c)) > 1]
        for dtypes in same + mixed:
            full = dtypes in same or dtypes in mixed[:MIXED_FOR_VARIANTS]
            names = VARIANTS if full else ("single", "tree")
            for name in names:
                graph, fused_expected = VARIANTS[name](schema, dtypes, attrs)
                what = f"{schema.name}{attrs or ''} {dtypes} {name}"
                _check(graph, fused_expected, what, special=(name == "single"))
                checked += 1
    assert checked > 0


def test_every_elementwise_op_is_fusable():
    """The pass fuses by the ``fusable`` trait; every elementwise op carries it."""
    assert ELEMENTWISE and all(s.has("fusable") for s in ELEMENTWISE)


def test_mixed_int_and_float_constant_promotion():
    """np.add(int32, float32 0-d) is float64 in NumPy 2 (0-d arrays are not weak):
    the executable writes it into a float64 buffer with the reference's values."""
    b = GraphBuilder()
    x = b.input("int32", (4,))
    c = b.constant(np.array(0.1, np.float32))
    s = b.op("add", x, c)
    assert s.type.dtype is frame.float64
    graph = b.build(b.op("mul", s, s))
    x_in = np.array([1, 2, -3, 2**30], np.int32)
    exe = rc.compile(graph, "cpu")
    _identical(exe.run([x_in]), evaluate(graph, [x_in]), "int32 + float32 0-d")
