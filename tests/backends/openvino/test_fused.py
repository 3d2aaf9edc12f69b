"""Fused chains of elementwise ops through ``runtime.compile(graph, "openvino")``,
over several shapes and every dtype the backend claims for elementwise ops.

float32, int32 and bool chains compile whole (one model, fused nodes lowered
from their bodies); int64 chains use only the ops that keep int64 exact and
are checked with values beyond int32 too; float16 chains fall back op by op
after the first (OpenVINO would keep the intermediates in float32) and must
still equal the reference, which rounds every intermediate.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from ._helpers import assert_matches

import frame  # noqa: E402
from frame.backends.openvino.executable import OpenVinoExecutable  # noqa: E402
from frame.ir import GraphBuilder  # noqa: E402
from frame.runtime import compile as rc  # noqa: E402
from frame.ops.interpreter import evaluate  # noqa: E402
from frame.runtime.stats import reset_stats, stats  # noqa: E402

SHAPES = [((), ()), ((7,), ()), ((3, 4), (4,)), ((2, 3, 5), (3, 1))]
GRAPHS_PER_SHAPE = 3


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    reset_stats()
    yield
    rc.clear_cache()


# Each pool entry: (name, arity, builder(b, values) -> value).  The float pool keeps
# values bounded and avoids discontinuous ops on computed values (floor of a value
# that differs in the last ulp would differ by 1).
def _f(b, x, v):
    return b.scalar(v, like=x)


FLOAT_POOL = [
    ("tanh", 1, lambda b, x: b.op("tanh", x)),
    ("sin", 1, lambda b, x: b.op("sin", x)),
    ("sigmoid", 1, lambda b, x: b.op("sigmoid", x)),
    ("gelu", 1, lambda b, x: b.op("gelu", x)),
    ("gelu_tanh", 1, lambda b, x: b.op("gelu", x, approximate="tanh")),
    ("erf", 1, lambda b, x: b.op("erf", x)),
    ("relu", 1, lambda b, x: b.op("relu", x)),
    ("neg", 1, lambda b, x: b.op("neg", x)),
    ("exp_tanh", 1, lambda b, x: b.op("exp", b.op("tanh", x))),
    ("log1p_abs", 1, lambda b, x: b.op("log", b.op("add", b.op("abs", x), _f(b, x, 1.0)))),
    ("rsqrt", 1, lambda b, x: b.op("rsqrt", b.op("add", b.op("mul", x, x), _f(b, x, 0.5)))),
    ("add", 2, lambda b, x, y: b.op("add", x, y)),
    ("sub", 2, lambda b, x, y: b.op("sub", x, y)),
    ("mul", 2, lambda b, x, y: b.op("mul", x, y)),
    ("div", 2, lambda b, x, y: b.op("div", x, b.op("add", b.op("abs", y), _f(b, y, 1.0)))),
    ("maximum", 2, lambda b, x, y: b.op("maximum", x, y)),
    ("minimum", 2, lambda b, x, y: b.op("minimum", x, y)),
    ("pow", 2, lambda b, x, y: b.op("pow", b.op("add", b.op("abs", x), _f(b, x, 0.5)), b.op("tanh", y))),
    ("where", 2, lambda b, x, y: b.op("where", b.op("less", x, y), x, b.op("mul", y, _f(b, y, 0.5)))),
    ("clip", 2, lambda b, x, y: b.op("clip", x, b.op("neg", b.op("abs", y)), b.op("abs", y))),
]
# applied to graph inputs only (exact there)
FLOAT_FIRST = [
    ("floor", 1, lambda b, x: b.op("floor", b.op("mul", x, _f(b, x, 4.0)))),
    ("sign", 1, lambda b, x: b.op("sign", x)),
]
INT_POOL = [
    ("neg", 1, lambda b, x: b.op("neg", x)),
    ("abs", 1, lambda b, x: b.op("abs", x)),
    ("relu", 1, lambda b, x: b.op("relu", x)),
    ("sign", 1, lambda b, x: b.op("sign", x)),
    ("add", 2, lambda b, x, y: b.op("add", x, y)),
    ("sub", 2, lambda b, x, y: b.op("sub", x, y)),
    ("mul", 2, lambda b, x, y: b.op("mul", x, y)),
    ("maximum", 2, lambda b, x, y: b.op("maximum", x, y)),
    ("minimum", 2, lambda b, x, y: b.op("minimum", x, y)),
    ("where", 2, lambda b, x, y: b.op("where", b.op("greater", x, y), x, y)),
]
BOOL_POOL = [
    ("not", 1, lambda b, x: b.op("logical_not", x)),
    ("and", 2, lambda b, x, y: b.op("logical_and", x, y)),
    ("or", 2, lambda b, x, y: b.op("logical_or", x, y)),
    ("ne", 2, lambda b, x, y: b.op("not_equal", x, y)),
    ("eq", 2, lambda b, x, y: b.op("equal", x, y)),
    ("add", 2, lambda b, x, y: b.op("add", x, y)),
    ("mul", 2, lambda b, x, y: b.op("mul", x, y)),
    ("where", 2, lambda b, x, y: b.op("where", x, y, b.op("logical_not", y))),
]
# int64 keeps exact only through selection and comparison
INT64_POOL = [
    ("relu", 1, lambda b, x: b.op("relu", x)),
    ("sign", 1, lambda b, x: b.op("sign", x)),
    ("maximum", 2, lambda b, x, y: b.op("maximum", x, y)),
    ("minimum", 2, lambda b, x, y: b.op("minimum", x, y)),
    ("where", 2, lambda b, x, y: b.op("where", b.op("less", x, y), y, x)),
    ("clip", 2, lambda b, x, y: b.op("clip", x, b.op("minimum", x, y), b.op("maximum", x, y))),
]
POOLS = {"float32": (FLOAT_POOL, FLOAT_FIRST), "float16": (FLOAT_POOL, FLOAT_FIRST),
         "int32": (INT_POOL, []), "bool": (BOOL_POOL, []), "int64": (INT64_POOL, [])}


def _chain(dtype: str, shapes, seed: int):
    """A random single-exit DAG of 4-7 pool ops over two inputs."""
    rng = np.random.default_rng(seed)
    pool, first = POOLS[dtype]
    b = GraphBuilder()
    x = b.input(frame.dtypes.as_dtype(dtype), shapes[0])
    y = b.input(frame.dtypes.as_dtype(dtype), shapes[1])
    live = [x, y]
    if first:
        name, _, build = first[rng.integers(len(first))]
        live.append(build(b, x))
    for _ in range(int(rng.integers(4, 8))):
        name, arity, build = pool[rng.integers(len(pool))]
        args = [live[rng.integers(len(live))] for _ in range(arity)]
        live.append(build(b, *args))
    out = live[-1]
    for v in live[2:-1]:
        if rng.random() < 0.3:  # join earlier values so the group is a DAG, not a path
            out = pool[-1][2](b, out, v) if dtype != "bool" else b.op("logical_or", out, v)
    return b.build(out)


def _data(dtype: str, shape, seed: int, wide: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    if dtype in ("int32", "int64"):
        if wide:  # beyond int32: only exact through the reference re-run
            return rng.integers(-2 ** 40, 2 ** 40, size=shape, dtype=np.int64)
        return rng.integers(-2 ** 31, 2 ** 31 - 1, size=shape, dtype=np.int64).astype(dtype)
    return rng.uniform(-3, 3, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool", "int64"])
@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}-{b}" for a, b in SHAPES])
def test_fused_chains_compile_whole(dtype, shapes):
    for k in range(GRAPHS_PER_SHAPE):
        seed = zlib.crc32(repr((dtype, shapes, k)).encode())
        graph = _chain(dtype, shapes, seed)
        exe = rc.compile(graph, "openvino")
        assert isinstance(exe, OpenVinoExecutable), f"{dtype} chain fell back: {stats().fallbacks}"
        for trial in range(2):
            ins = [_data(dtype, v.type.shape, seed + 10 * trial + i) for i, v in enumerate(graph.inputs)]
            assert_matches(exe.run(ins)[0], evaluate(graph, ins)[0], f"{dtype} chain {k}", "fused")
        if dtype == "int64":
            ins = [_data(dtype, v.type.shape, seed + i, wide=True) for i, v in enumerate(graph.inputs)]
            assert_matches(exe.run(ins)[0], evaluate(graph, ins)[0], f"int64 chain {k} (wide)")
    assert stats().fallbacks == {}


@pytest.mark.parametrize("shapes", SHAPES[1:3], ids=["vector", "matrix"])
def test_float16_chains_stay_exact(shapes):
    for k in range(GRAPHS_PER_SHAPE):
        seed = zlib.crc32(repr(("float16", shapes, k)).encode())
        graph = _chain("float16", shapes, seed)
        exe = rc.compile(graph, "openvino")
        ins = [_data("float16", v.type.shape, seed + i) for i, v in enumerate(graph.inputs)]
        with np.errstate(all="ignore"):
            assert_matches(exe.run(ins)[0], evaluate(graph, ins)[0], f"float16 chain {k}")


def test_float16_intermediates_are_rounded_like_numpy():
    # 300 * 300 overflows float16 (inf in NumPy); OpenVINO alone would give 300
    b = GraphBuilder()
    x = b.input(frame.float16, (3,))
    g = b.build(b.op("div", b.op("mul", x, x), x))
    ins = [np.array([300.0, 2.0, -0.5], np.float16)]
    with np.errstate(over="ignore"):
        got = rc.compile(g, "openvino").run(ins)[0]
        want = evaluate(g, ins)[0]
    assert np.isinf(got[0]) and got[1] == 2.0
    assert_matches(got, want, "x*x/x")
