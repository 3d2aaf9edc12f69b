"""The cpu executable reads planned transposes as views: no copies, the same
bits as the interpreter (BLAS gets the operand layout the interpreter's
transpose gives it), the checks that fall back to the copying kernel, and
plans with views surviving the persistent artifact."""
from __future__ import annotations

import json

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.backends.cpu import CpuBackend
from frame.backends.cpu import persist
from frame.backends.cpu.codegen import CpuExecutable, check_plan
from frame.hal import CompileOptions, ErrorCode, FrameError
from frame.hal.backend import Artifact
from frame.ir import Graph, GraphBuilder, clone_graph, plan_memory
from frame.ops.interpreter import evaluate
from frame.passes import PassManager, standard_pipeline
from frame.runtime import compile as rc
from ..graphcheck import assert_identical, mlp_training_graph, random_inputs


@pytest.fixture(autouse=True)
def _fresh_cache():
    rc.clear_cache()
    yield
    rc.clear_cache()


def _compiled(graph: Graph) -> tuple[CpuExecutable, Graph]:
    """The executable and the graph it was built from (after the pipeline)."""
    work = PassManager(standard_pipeline(CpuBackend())).run(clone_graph(graph))
    return CpuBackend().compile(work, CompileOptions()), work


def _inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    """Random inputs; int64 ones (training labels) made valid class indexes."""
    return [np.abs(a) % 10 if a.dtype == np.int64 else a for a in random_inputs(graph, seed)]


def _check(graph: Graph, seeds=(0, 1)) -> CpuExecutable:
    exe, work = _compiled(graph)
    for seed in seeds:
        ins = _inputs(graph, seed)
        want = evaluate(work, ins)
        for _ in range(2):  # the second run reuses the buffers
            assert_identical(exe.run(ins), want)
    return exe


def _kernel_transposes(source: str) -> list[str]:
    """Lines that always copy a transpose (not the fallback half of a checked view)."""
    return [ln for ln in source.splitlines() if "k_transpose(" in ln and " if " not in ln]


# Shapes (m, k, n) where OpenBLAS's result for a transposed operand differs in
# the last bits from its result for a contiguous copy (small-matrix kernels):
# a view is only exact because the interpreter's transpose has the view's layout.
BLAS_SENSITIVE = [(128, 128, 10), (30, 50, 20), (100, 100, 100), (7, 300, 9), (5, 4, 1)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mkn", BLAS_SENSITIVE, ids=str)
@pytest.mark.parametrize("which", ["a", "b", "both"])
def test_matmul_of_transposed_views_matches_the_interpreter(dtype, mkn, which):
    m, k, n = mkn
    b = GraphBuilder()
    a = b.input(dtype, (k, m) if which in ("a", "both") else (m, k))
    c = b.input(dtype, (n, k) if which in ("b", "both") else (k, n))
    if which in ("a", "both"):
        a = b.op("transpose", a, perm=(1, 0))
    if which in ("b", "both"):
        c = b.op("transpose", c, perm=(1, 0))
    exe = _check(b.build(b.op("matmul", a, c)), seeds=(0,))
    assert not _kernel_transposes(exe.source), exe.source
    assert ".T if " in exe.source


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_views_of_planned_values_reductions_and_elementwise(dtype):
    """Views of buffers (no runtime check), read by a reduction, an elementwise
    chain and a batched matmul."""
    b = GraphBuilder()
    x = b.input(dtype, (6, 40, 30))
    w = b.input(dtype, (6, 40, 25))
    e = b.op("exp", b.op("mul", x, b.scalar(0.1, like=x)))          # planned
    t = b.op("transpose", e, perm=(0, 2, 1))                       # (6, 30, 40)
    s = b.op("sum", t, axes=(1,), keepdims=False)                   # (6, 40)
    m = b.op("matmul", t, w)                                       # (6, 30, 25)
    u = b.op("transpose", e, perm=(2, 1, 0))                       # (30, 40, 6)
    z = b.op("tanh", b.op("add", u, b.scalar(1.0, like=u)))
    exe = _check(b.build(s, m, z))
    assert "w0.transpose((0, 2, 1))" in exe.source or ".transpose((0, 2, 1))\n" in exe.source
    assert not _kernel_transposes(exe.source), exe.source


def test_the_source_of_a_view_is_not_overwritten_while_it_is_read():
    """Greedy reuse would give neg(x) the buffer of exp(x) right after the
    transpose read it; the view reads exp(x) two nodes later."""
    b = GraphBuilder()
    x = b.input("float32", (16, 16))
    e = b.op("exp", x)
    t = b.op("transpose", e, perm=(1, 0))
    u = b.op("abs", b.op("neg", x))
    graph = b.build(b.op("tanh", b.op("add", u, t)))
    exe = CpuBackend().compile(graph, CompileOptions())   # no passes: no fusion
    assert exe.plan.views == {2: 1}
    assert ".T" in exe.source and "k_transpose" not in exe.source
    ins = random_inputs(graph)
    assert_identical(exe.run(ins), evaluate(graph, ins))


def test_inputs_with_other_strides_take_the_copying_kernel():
    """A view of a broadcast, reversed or strided input sums in another order
    than the interpreter's compact copy: such inputs are copied at run time."""
    b = GraphBuilder()
    x = b.input("float32", (1000, 300))
    t = b.op("transpose", x, perm=(1, 0))
    graph = b.build(b.op("sum", t, axes=(0, 1), keepdims=False),
                    b.op("sum", t, axes=(1,), keepdims=False))
    exe, work = _compiled(graph)
    assert ".T if " in exe.source
    base = random_inputs(graph, 3)[0]
    for xs in (base, np.asfortranarray(base), np.broadcast_to(base[:, :1], base.shape),
               base[::-1], np.repeat(base, 2, axis=0)[::2]):
        assert_identical(exe.run([xs]), evaluate(work, [xs]))


def test_a_product_of_a_value_and_its_own_transpose_is_numpys_syrk():
    """``x @ x.T`` over one array is syrk in NumPy, which can round unlike gemm:
    canonicalize makes it op ``gram``, whose kernel hands np.matmul the array and
    a view of it, so the executable (no transpose left to copy) and the
    interpreter give NumPy's bits."""
    b = GraphBuilder()
    x = b.input("float64", (33, 17))
    e = b.op("exp", b.op("mul", x, b.scalar(0.5, like=x)))
    graph = b.build(b.op("matmul", e, b.op("transpose", e, perm=(1, 0))),
                    b.op("matmul", b.op("transpose", x, perm=(1, 0)), x))
    exe = _check(graph)
    assert "k_transpose(" not in exe.source and exe.source.count("k_gram(") == 2, exe.source
    xs = _inputs(graph, 0)[0]
    es = np.exp(xs * 0.5)
    assert_identical(exe.run([xs]), [es @ es.T, xs.T @ xs])


def test_a_view_of_a_view_copies_but_stays_exact():
    b = GraphBuilder()
    x = b.input("float32", (3, 4, 5))
    e = b.op("exp", x)
    t1 = b.op("transpose", e, perm=(2, 0, 1))
    t2 = b.op("transpose", t1, perm=(0, 2, 1))
    graph = b.build(b.op("neg", t2), b.op("abs", t1))
    exe = CpuBackend().compile(graph, CompileOptions())   # canonicalize would merge them
    assert dict(exe.plan.views) == {2: 1, 3: 2}
    assert len(_kernel_transposes(exe.source)) == 1
    ins = random_inputs(graph)
    assert_identical(exe.run(ins), evaluate(graph, ins))


def test_transposes_that_are_outputs_are_fresh_copies():
    b = GraphBuilder()
    x = b.input("float32", (3, 4))
    e = b.op("exp", x)
    graph = b.build(b.op("transpose", x, perm=(1, 0)), b.op("transpose", e, perm=(1, 0)),
                    b.op("neg", b.op("transpose", e, perm=(1, 0))))
    exe = _check(graph)
    x0 = random_inputs(graph)[0]
    out = exe.run([x0])
    assert not np.shares_memory(out[0], x0)
    again = exe.run([x0])
    for a in out:
        for c in again:
            assert not np.shares_memory(a, c)


def _transpose_views(graph, plan) -> int:
    """How many of ``plan``'s views are transposes."""
    values = graph.values()
    return sum(values[n].producer.op == "transpose" for n in plan.views)


def test_training_step_has_no_transpose_copies():
    graph = mlp_training_graph()
    exe = _check(graph, seeds=(0,))
    assert not _kernel_transposes(exe.source), exe.source
    _, work = _compiled(graph)
    assert _transpose_views(work, exe.plan) == 6


def test_check_plan_rejects_bad_views():
    b = GraphBuilder()
    x = b.input("float32", (4, 4))
    e = b.op("exp", x)
    t = b.op("transpose", e, perm=(1, 0))
    n = b.op("neg", x)
    graph = b.build(b.op("add", b.op("abs", n), t))
    good = plan_memory(graph)
    check_plan(graph, good)

    def with_(**changes):
        fields = dict(buffers=good.buffers, assignment=good.assignment, lifetimes=good.lifetimes,
                      types=good.types, peak_bytes=good.peak_bytes, naive_bytes=good.naive_bytes,
                      max_live_bytes=good.max_live_bytes, views=good.views)
        fields.update(changes)
        return type(good)(**fields)

    for plan, why in [(with_(views={2: 0}), "reads %1"),
                      (with_(views={3: 0}), "can read as a view"),
                      (with_(views={2: 1, 1: 0}), "can read as a view"),
                      (with_(assignment={**good.assignment, 2: 0}), "also assigned"),
                      (with_(assignment={**good.assignment, 3: good.assignment[1]}),
                       "both are alive")]:
        with pytest.raises(FrameError, match=why) as info:
            check_plan(graph, plan)
        assert info.value.code is ErrorCode.INTERNAL
    # the same assignment is fine when %2 is no view: %1 then dies at the transpose
    check_plan(graph, with_(views={}, assignment={**good.assignment, 3: good.assignment[1]}))


def test_persisted_plans_keep_their_views():
    graph = mlp_training_graph((20, 16, 12, 10), batch=8)
    exe, work = _compiled(graph)
    art = persist.serialize(work, exe)
    assert art.meta["format"] == persist.FORMAT == 3
    loaded = persist.deserialize(Artifact(json.loads(json.dumps(art.meta)), dict(art.blobs)))
    assert loaded.plan == exe.plan and _transpose_views(work, loaded.plan) == 6
    assert loaded.source == exe.source
    assert persist.plan_from_json(persist.plan_to_json(exe.plan)) == exe.plan
    ins = _inputs(graph, 0)
    assert_identical(loaded.run(ins), exe.run(ins))


def test_format_1_artifacts_are_refused():
    graph = mlp_training_graph((20, 16, 12, 10), batch=8)
    exe, work = _compiled(graph)
    art = persist.serialize(work, exe)
    old = dict(art.meta, format=1)
    with pytest.raises(FrameError, match="format 1") as info:
        persist.deserialize(Artifact(old, dict(art.blobs)))
    assert info.value.code is ErrorCode.INTERNAL
    assert CpuBackend().artifact_version(CompileOptions()).startswith("cpu-codegen/3 ")


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 5), (5, 1), (1, 1)], ids=str)
def test_empty_and_one_wide_views(shape):
    b = GraphBuilder()
    x = b.input("float32", shape)
    y = b.input("float32", shape[:1] + (4,))
    e = b.op("exp", x)
    graph = b.build(b.op("matmul", b.op("transpose", x, perm=(1, 0)), y),
                    b.op("sum", b.op("transpose", e, perm=(1, 0)), axes=(0,), keepdims=False))
    _check(graph)


# -- squeeze / expand_dims / reshape and C-ordered slices (memplan.is_view_node) --------------

def _slice(b, x, starts, stops, steps=None):
    return b.op("slice", x, starts=tuple(starts), stops=tuple(stops),
                steps=tuple(steps or (1,) * len(starts)))


def _row_loop_graph(rows=6, cols=5, dtype="float64"):
    """``acc += a[i] * w`` unrolled, as capture traces a loop over rows."""
    b = GraphBuilder()
    a, w = b.input(dtype, (rows, cols)), b.input(dtype, (cols,))
    acc = None
    for i in range(rows):
        row = b.op("squeeze", _slice(b, a, (i, 0), (i + 1, cols)), axes=(0,))
        term = b.op("mul", row, w)
        acc = term if acc is None else b.op("add", acc, term)
    return b.build(acc)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_rows_of_an_input_are_views_and_exact(dtype):
    graph = _row_loop_graph(dtype=dtype)
    exe, work = _compiled(graph)
    values = work.values()
    ops = sorted({values[n].producer.op for n in exe.plan.views})
    assert ops == ["slice", "squeeze"], exe.source
    assert "k_slice([" in exe.source and "np_copyto" not in exe.source
    base = random_inputs(graph, 1)
    for a in (base[0], np.asfortranarray(base[0]), base[0][::-1].copy()[::-1],
              np.repeat(base[0], 2, axis=0)[::2]):   # strided: the kernel copies
        ins = [a, base[1]]
        assert_identical(exe.run(ins), evaluate(work, ins))


def test_slices_that_are_not_c_ordered_are_copies():
    b = GraphBuilder()
    x = b.input("float32", (6, 8))
    cols = _slice(b, x, (0, 2), (6, 5))                 # a column block: other strides
    every_other = _slice(b, x, (0, 0), (5, 8), (2, 1))  # a step on the leading axis
    inner = _slice(b, b.op("exp", b.op("reshape", x, shape=(2, 3, 8))), (0, 1, 0), (1, 2, 8))
    graph = b.build(b.op("neg", cols), b.op("neg", every_other), b.op("neg", inner))
    exe = CpuBackend().compile(graph, CompileOptions())   # no passes: no fusion
    values = graph.values()
    viewed = sorted(values[n].producer.op for n in exe.plan.views)
    assert viewed == ["reshape"], exe.source   # (2, 3, 8)[0:1, 1:2] keeps the parent's strides
    ins = random_inputs(graph, 2)
    assert_identical(exe.run(ins), evaluate(graph, ins))


def test_a_reshaped_view_keeps_its_buffer_alive_and_its_readers_exact():
    """exp(x) reshaped is read after neg(x) would have taken exp(x)'s buffer."""
    b = GraphBuilder()
    x = b.input("float32", (4, 6))
    e = b.op("exp", x)
    r = b.op("reshape", e, shape=(6, 4))
    u = b.op("abs", b.op("neg", x))
    s = b.op("sum", b.op("expand_dims", r, axes=(0,)), axes=(1,), keepdims=False)
    graph = b.build(b.op("add", b.op("reshape", u, shape=(6, 4)), r), s)
    exe = CpuBackend().compile(graph, CompileOptions())
    check_plan(graph, exe.plan)
    assert len(exe.plan.views) == 3, exe.source
    ins = random_inputs(graph, 4)
    for _ in range(2):
        assert_identical(exe.run(ins), evaluate(graph, ins))


def test_a_product_of_a_row_view_and_its_own_array_copies():
    b = GraphBuilder()
    x = b.input("float64", (8, 8))
    rows = _slice(b, x, (2, 0), (6, 8))
    graph = b.build(b.op("matmul", rows, x), b.op("neg", rows))
    exe, work = _compiled(graph)
    assert "k_slice([" in exe.source
    ins = random_inputs(graph, 5)
    assert_identical(exe.run(ins), evaluate(work, ins))


def test_a_view_of_a_donated_input_read_late_drops_the_donation():
    b = GraphBuilder()
    x = b.input("float32", (4, 4))
    new = b.op("sub", x, b.scalar(1.0, like=x))
    flat = b.op("reshape", x, shape=(16,))
    late = b.op("neg", flat)    # reads x, through the view, after new is made
    graph = b.build(new, late)
    assert plan_memory(graph, [(0, 0)]).donations == {}
    early = GraphBuilder()
    x = early.input("float32", (4, 4))
    flat = early.op("neg", early.op("reshape", x, shape=(16,)))
    graph = early.build(early.op("sub", x, early.scalar(1.0, like=x)), flat)
    assert plan_memory(graph, [(0, 0)]).donations != {}


def test_empty_slices_are_not_views():
    b = GraphBuilder()
    x = b.input("float32", (4, 3))
    graph = b.build(b.op("neg", _slice(b, x, (0, 0), (0, 3))))
    exe = CpuBackend().compile(graph, CompileOptions())
    assert not exe.plan.views
    ins = random_inputs(graph)
    assert_identical(exe.run(ins), evaluate(graph, ins))
