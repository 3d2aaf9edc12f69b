"""The cpu backend's compiled executable: whole graphs against the reference
interpreter (bit for bit), the generated code's shape, aliasing of outputs,
threads, and its error paths."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import frame
from frame.backends.cpu import CpuBackend
from frame.backends.cpu.codegen import CpuExecutable, check_plan
from frame.hal import CompileOptions, ErrorCode, FrameError
from frame.hal import get_backend
from frame.ir import Graph, GraphBuilder, Node, clone_graph, plan_memory
from frame.ops import lookup
from frame.passes import PassManager, standard_pipeline
from frame.runtime import compile as rc
from frame.ops.interpreter import evaluate
from ..graphcheck import assert_identical as _identical, random_inputs as _inputs


@pytest.fixture(autouse=True)
def _fresh_cache():
    rc.clear_cache()
    yield
    rc.clear_cache()


def _check(graph: Graph, seeds=(0, 1)) -> CpuExecutable:
    exe = rc.compile(graph, "cpu")
    assert isinstance(exe, CpuExecutable)
    for seed in seeds:
        ins = _inputs(graph, seed)
        with np.errstate(all="ignore"):
            _identical(exe.run(ins), evaluate(graph, ins))
    return exe


def _needs(*ops: str) -> None:
    missing = [op for op in ops if lookup(op) is None]
    assert not missing, f"ops not registered: {missing}"


# --------------------------------------------------------------------------- whole graphs

MATMUL_SHAPES = [((64, 64), (64, 64)), ((5,), (5,)), ((3, 5), (5,)), ((5,), (5, 4)),
                 ((2, 3, 5), (5, 4)), ((2, 1, 3, 5), (4, 5, 2)), ((7, 300), (300, 9))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "float16"])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(dtype, shapes):
    b = GraphBuilder()
    x, w = b.input(dtype, shapes[0]), b.input(dtype, shapes[1])
    m = b.op("matmul", x, w)
    _check(b.build(b.op("maximum", m, m) if m.type.rank else m, m))


def test_matmul_of_transposed_operands():
    b = GraphBuilder()
    x, w = b.input("float32", (6, 4)), b.input("float32", (5, 6))
    t = b.op("transpose", w, perm=(1, 0))
    _check(b.build(b.op("matmul", b.op("transpose", x, perm=(1, 0)), t)))


@pytest.mark.parametrize("op", ["sum", "max", "min", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "float16"])
def test_reductions(op, dtype):
    for axes in [(), (0,), (1,), (2,), (0, 2), (0, 1, 2)]:
        for keepdims in (False, True):
            b = GraphBuilder()
            x = b.input(dtype, (3, 4, 5))
            r = b.op(op, x, axes=axes, keepdims=keepdims)
            # a consumer keeps r an intermediate (planned buffer) as well as an output
            _check(b.build(r, b.op("maximum", r, r)), seeds=(0,))


def test_large_float32_sums_are_bitwise_equal():
    """Pairwise summation order must not change with out=."""
    for axes in [(0,), (1,), (0, 1)]:
        b = GraphBuilder()
        x = b.input("float32", (1000, 300))
        r = b.op("sum", b.op("exp", x), axes=axes)
        _check(b.build(b.op("neg", r)), seeds=(3,))


def test_argmax_and_zero_d_kernel_results():
    b = GraphBuilder()
    x = b.input("float32", (4, 5))
    a = b.op("argmax", x, axis=1)
    m = b.op("mean", x, axes=(0, 1))          # a 0-d kernel result (NumPy gives a scalar)
    s = b.op("add", m, m)
    _check(b.build(a, m, s))  # _identical also requires every output to be an ndarray


def test_shape_ops_between_fused_nodes():
    b = GraphBuilder()
    x = b.input("float32", (4, 6))
    y = b.op("exp", b.op("neg", x))
    r = b.op("reshape", y, shape=(6, 4))
    t = b.op("transpose", r, perm=(1, 0))
    z = b.op("relu", b.op("sub", t, x))
    _check(b.build(z, b.op("reshape", z, shape=(24,))))


def test_mlp_with_softmax():
    _needs("softmax")
    b = GraphBuilder()
    x = b.input("float32", (8, 16))
    w1, b1 = b.input("float32", (16, 32)), b.input("float32", (32,))
    w2, b2 = b.input("float32", (32, 10)), b.input("float32", (10,))
    h = b.op("relu", b.op("add", b.op("matmul", x, w1), b1))
    logits = b.op("add", b.op("matmul", h, w2), b2)
    _check(b.build(b.op("softmax", logits, axis=1)))


def test_layer_norm_and_log_softmax():
    _needs("layer_norm", "log_softmax")
    b = GraphBuilder()
    x = b.input("float32", (4, 8))
    w, bias = b.input("float32", (8,)), b.input("float32", (8,))
    n = b.op("layer_norm", b.op("mul", x, x), w, bias, axis=1, eps=1e-5)
    _check(b.build(b.op("log_softmax", b.op("tanh", n), axis=1)))


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_one_element_values_are_never_computed_in_place(shape):
    """NumPy runs a 1-element ``add(a, b, out=a)`` as a reduction, which returns
    b's NaN where ``add(a, b)`` returns a's: the sign of the NaN must follow
    the reference."""
    b = GraphBuilder()
    x, y = b.input("float32", shape), b.input("float32", shape)
    # both operands computed in the body, the first one first (so CSE keeps the order)
    graph = b.build(b.op("add", b.op("neg", x), b.op("abs", y)))
    exe = rc.compile(graph, "cpu")
    nan = np.full(shape, np.nan, np.float32)
    _identical(exe.run([nan, nan]), evaluate(graph, [nan, nan]))
    assert np.signbit(exe.run([nan, nan])[0]).all()


def test_constants_of_every_kind():
    b = GraphBuilder()
    x = b.input("int32", (3, 4))
    c32 = b.constant(np.float32(0.25))                       # 0-d float32 with int32: float64
    row = b.constant(np.arange(4, dtype=np.float64) / 3)
    s = b.op("mul", b.op("add", x, c32), row)
    _check(b.build(s, b.op("relu", s)))


def test_generic_fused_body_is_compiled_as_a_subgraph():
    """Bodies the pass does not build (two outputs, a constant and a nested fused
    node inside) still run, and a pass-through output is a copy."""
    inner = GraphBuilder()
    a = inner.input("float32", (4,))
    inner_body = inner.build(inner.op("exp", inner.op("neg", a)))
    body = GraphBuilder()
    p, q = body.input("float32", (4,)), body.input("float32", (4,))
    s = body.op("add", p, q)
    nested = Node("fused", [s], {}, body=inner_body)
    nested.set_output_types([v.type for v in inner_body.outputs])
    body.graph.append(nested)
    k = body.constant(np.arange(4, dtype=np.float32))
    body_graph = body.build(nested.outputs[0], body.op("mul", s, k), p, k)
    b = GraphBuilder()
    x, y = b.input("float32", (4,)), b.input("float32", (4,))
    node = Node("fused", [x, y], {}, body=body_graph)
    node.set_output_types([v.type for v in body_graph.outputs])
    b.graph.append(node)
    graph = b.build(b.op("relu", node.outputs[0]), *node.outputs[1:])
    exe = _check(graph)
    ins = _inputs(graph)
    out = exe.run(ins)
    assert not np.shares_memory(out[2], ins[0])
    out[3][0] = 99.0  # the body's constant must not change
    assert exe.run(ins)[3][0] == 0.0


_RANDOM_UNARY = ["exp", "neg", "abs", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "erf"]
_RANDOM_BINARY = ["add", "mul", "sub", "div", "maximum", "minimum"]


def _random_graph(seed: int) -> Graph:
    """A random DAG mixing fusable ops (with broadcasting and float32/float64
    promotion), comparisons + where, matmul, sum and transpose; several outputs,
    one of them possibly a graph input."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    pool = [b.input("float32", (4, 4)), b.input("float64", (4,)), b.input("float32", (1, 4)),
            b.input("float32", ())]
    pick = lambda: pool[int(rng.integers(len(pool)))]  # noqa: E731
    for _ in range(int(rng.integers(5, 20))):
        r = rng.random()
        a, c = pick(), pick()
        if r < 0.35:
            v = b.op(_RANDOM_UNARY[int(rng.integers(len(_RANDOM_UNARY)))], a)
        elif r < 0.75:
            v = b.op(_RANDOM_BINARY[int(rng.integers(len(_RANDOM_BINARY)))], a, c)
        elif r < 0.83:
            v = b.op("where", b.op("greater", a, c), a, c)
        elif r < 0.9 and a.type.rank == 2 and a.type.shape[0] == 4:
            v = b.op("matmul", a, b.op("transpose", a, perm=(1, 0)))
        elif a.type.rank >= 1:
            v = b.op("sum", a, axes=(a.type.rank - 1,), keepdims=bool(rng.random() < 0.5))
        else:
            v = b.op("mul", a, a)
        pool.append(v)
    outs = [pool[-1]] + [pick() for _ in range(int(rng.integers(0, 3)))]
    return b.build(*outs)


def _before_fusion(graph: Graph) -> Graph:
    """``graph`` after the pipeline's passes that precede operator_fusion."""
    passes = standard_pipeline(get_backend("cpu"))
    cut = [p.name for p in passes].index("operator_fusion")
    return PassManager(passes[:cut]).run(clone_graph(graph))


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs(seed):
    """Fusion + codegen against the interpreter on the graph they receive.

    (Compared with the graph *before* common_subexpression_elimination, a NaN's
    sign may differ: CSE puts commutative operands in a canonical order, and
    x86 returns the first operand's NaN when both are NaN.)"""
    graph = _random_graph(seed)
    reference = _before_fusion(graph)
    exe = rc.compile(graph, "cpu")
    ins = _inputs(graph, seed)
    with np.errstate(all="ignore"):
        want = evaluate(reference, ins)
        _identical(exe.run(ins), want)
        _identical(exe.run(ins), want)


# --------------------------------------------------------------------------- generated code

def test_source_is_one_straight_line_function_with_out_calls():
    b = GraphBuilder()
    x, y = b.input("float32", (64, 64)), b.input("float32", (64, 64))
    h = b.op("relu", b.op("add", b.op("matmul", x, y), x))
    out = b.op("tanh", b.op("mul", h, y))
    exe = rc.compile(b.build(out), "cpu")
    src = exe.source
    assert src.startswith("def run(inputs):")
    assert src.count("def ") == 1 and " for " not in src
    # the only branches pick the output's array from its pool (see test_output_pool_*)
    assert all(ln.strip().startswith("if getrefcount(v") for ln in src.split("\n")
               if ln.strip().startswith("if ")), src
    # one region: BLAS writes the output array, the epilogue runs in place on it
    assert "np_matmul(v0, v1, v2)" in src
    assert "np_add(v2, v0, v2)" in src
    assert "k_" not in src, "every op here has an out= lowering"
    # matmul, add, relu, mul and tanh all write one array (ufuncs take out by position)
    fused_lines = [ln.strip() for ln in src.split("\n") if ln.strip().startswith("np_")]
    targets = {ln.rsplit(", ", 1)[1].removeprefix("out=") for ln in fused_lines}
    assert targets == {"v2)"}, src


def test_fusion_disabled_gives_the_same_results():
    b = GraphBuilder()
    x, y = b.input("float32", (4, 5)), b.input("float32", (5,))
    z = b.op("tanh", b.op("mul", b.op("relu", b.op("sub", x, y)), x))
    graph = b.build(z, b.op("sum", z, axes=(0,)))
    ins = _inputs(graph)
    fused = rc.compile(graph, "cpu")
    plain = rc.compile(graph, "cpu", CompileOptions(fusion=False))
    assert "fused(" in fused.source and "fused(" not in plain.source
    _identical(plain.run(ins), evaluate(graph, ins))
    _identical(fused.run(ins), evaluate(graph, ins))


def test_constants_are_read_only_globals():
    b = GraphBuilder()
    x = b.input("float32", (3,))
    c = b.constant(np.array([1.0, 2.0, 3.0], np.float32))
    exe = rc.compile(b.build(b.op("mul", x, b.op("exp", c))), "cpu")
    consts = [v for k, v in exe.run.__globals__.items() if k.startswith("c") and
              isinstance(v, np.ndarray)]
    assert consts and all(not a.flags.writeable for a in consts)


def test_types_and_caching():
    b = GraphBuilder()
    x = b.input("float32", (2, 3))
    y = b.input("int32", (3,))
    graph = b.build(b.op("add", x, y))
    exe = rc.compile(graph, "cpu")
    assert [str(t) for t in exe.input_types] == ["float32[2,3]", "int32[3]"]
    assert [str(t) for t in exe.output_types] == ["float64[2,3]"]
    assert rc.compile(graph, "cpu") is exe


def test_compile_without_memory_planning_pass():
    b = GraphBuilder()
    x = b.input("float32", (5,))
    graph = b.build(b.op("neg", b.op("sin", b.op("exp", x))))
    assert "memory_plan" not in graph.meta
    exe = CpuBackend().compile(graph, CompileOptions())
    assert exe.plan == plan_memory(graph)
    ins = _inputs(graph)
    _identical(exe.run(ins), evaluate(graph, ins))


def test_wrong_number_of_inputs():
    b = GraphBuilder()
    x = b.input("float32", (2,))
    exe = rc.compile(b.build(b.op("exp", x)), "cpu")
    with pytest.raises(frame.hal.FrameValueError, match="expected 1 input"):
        exe.run([])
    with pytest.raises(frame.hal.FrameValueError, match="got 2"):
        exe.run([np.ones(2, np.float32)] * 2)


def test_a_plan_that_does_not_fit_is_rejected():
    b = GraphBuilder()
    x = b.input("float32", (4,))
    a = b.op("exp", x)
    c = b.op("add", b.op("neg", a), a)      # a and neg(a) are alive together
    graph = b.build(b.op("sin", c))
    good = plan_memory(graph)
    check_plan(graph, good)
    clash = dict(good.assignment)
    clash[2] = clash[1]                      # %1 (exp) and %2 (neg) in one buffer
    bad = type(good)(good.buffers, clash, good.lifetimes, good.types, good.peak_bytes,
                     good.naive_bytes, good.max_live_bytes)
    with pytest.raises(FrameError, match="both are alive") as info:
        check_plan(graph, bad)
    assert info.value.code is ErrorCode.INTERNAL
    graph.meta["memory_plan"] = bad
    with pytest.raises(FrameError, match="memory plan"):
        CpuBackend().compile(graph, CompileOptions())


def _fused_with(body: Graph, x) -> Node:
    node = Node("fused", [x], {}, body=body)
    node.set_output_types([v.type for v in body.outputs])
    return node


def test_supports_and_unsupported_bodies():
    cpu = CpuBackend()
    b = GraphBuilder()
    x = b.input("float32", (2,))
    assert cpu.supports(b.build(b.op("exp", x)).nodes[0])
    body = GraphBuilder()
    a = body.input("float32", (2,))
    alien = Node("no_such_op", [a], {})
    alien.set_output_types([a.type])
    body.graph.append(alien)
    body.build(alien.outputs[0])
    g = GraphBuilder()
    inp = g.input("float32", (2,))
    node = g.graph.append(_fused_with(body.graph, inp))
    graph = g.build(*node.outputs)
    assert not cpu.supports(node)
    with pytest.raises(FrameError) as info:
        cpu.compile(graph, CompileOptions())
    assert info.value.code is ErrorCode.UNIMPLEMENTED


# --------------------------------------------------------------------------- aliasing

def _aliasing_graph():
    b = GraphBuilder()
    x = b.input("float32", (3, 3))
    c = b.constant(np.full((3, 3), 2.0, np.float32))
    y = b.op("exp", b.op("mul", x, c))
    z = b.op("matmul", y, y)
    return b.build(z, x, c, y, z)


def test_outputs_survive_the_next_run():
    graph = _aliasing_graph()
    exe = rc.compile(graph, "cpu")
    first = exe.run([np.eye(3, dtype=np.float32)])
    keep = [o.copy() for o in first]
    exe.run([np.full((3, 3), 5.0, np.float32)])
    for o, k in zip(first, keep):
        assert o.tobytes() == k.tobytes()


def test_mutating_an_output_does_not_change_the_next_run():
    graph = _aliasing_graph()
    exe = rc.compile(graph, "cpu")
    ins = [np.eye(3, dtype=np.float32)]
    want = [o.copy() for o in exe.run(ins)]
    for o in exe.run(ins):
        o[...] = -1.0
    _identical(exe.run(ins), want)


def test_returned_input_and_constant_are_copies():
    graph = _aliasing_graph()
    exe = rc.compile(graph, "cpu")
    x = np.eye(3, dtype=np.float32)
    out = exe.run([x])
    assert out[1] is not x and not np.shares_memory(out[1], x)
    assert out[2].flags.writeable
    out[2][...] = 0.0
    assert exe.run([x])[2][0, 0] == 2.0
    # the same value returned twice comes back as two arrays: outputs never alias
    assert out[0] is not out[4] and not np.shares_memory(out[0], out[4])
    np.testing.assert_array_equal(out[0], out[4])


def test_outputs_never_share_memory_with_each_other_or_buffers():
    b = GraphBuilder()
    x = b.input("float32", (8,))
    vals = [x]
    for op in ("exp", "neg", "sin", "cos", "tanh", "abs"):
        vals.append(b.op(op, vals[-1]))
    graph = b.build(vals[2], vals[4], vals[6])
    exe = rc.compile(graph, "cpu")
    runs = [exe.run([np.full(8, float(i), np.float32)]) for i in range(3)]
    arrays = [o for r in runs for o in r]
    for i, a in enumerate(arrays):
        for other in arrays[i + 1:]:
            assert not np.shares_memory(a, other)


# --------------------------------------------------------------------------- threads

def test_one_executable_from_many_threads():
    b = GraphBuilder()
    x, w = b.input("float32", (128, 128)), b.input("float32", (128, 128))
    h = b.op("tanh", b.op("add", b.op("matmul", x, w), x))
    g = b.op("matmul", b.op("mul", h, h), w)
    graph = b.build(b.op("relu", b.op("sub", g, x)), b.op("sum", g, axes=(1,)))
    exe = rc.compile(graph, "cpu")
    cases = [_inputs(graph, seed) for seed in range(8)]
    wants = [evaluate(graph, ins) for ins in cases]
    errors: list[str] = []
    start = threading.Barrier(len(cases))

    def work(i: int) -> None:
        start.wait()
        for _ in range(25):
            got = exe.run(cases[i])
            for g_, w_ in zip(got, wants[i]):
                if g_.tobytes() != w_.tobytes():
                    errors.append(f"thread {i}: wrong result")
                    return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_value_returned_twice_gives_two_arrays():
    b = GraphBuilder()
    x = b.input(frame.float32, (3,))
    y = b.op("exp", x)
    exe = rc.compile(b.build(y, y), "cpu")
    first, second = exe.run([np.ones(3, np.float32)])
    assert not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, second)
