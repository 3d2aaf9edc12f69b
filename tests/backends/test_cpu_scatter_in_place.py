"""The cpu executable writes a chain of ``scatter`` ops (item assignments,
``out[i] = ...``) into one array when the scattered-into value is its own and
read by nobody afterwards, and copies ``slice``/``squeeze``/``expand_dims``/
``reshape`` into planned buffers without a kernel call: the same bits as the
interpreter in every case, including the ones that must not write in place."""
from __future__ import annotations

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.backends.cpu import CpuBackend
from frame.hal import CompileOptions
from frame.ir import GraphBuilder, clone_graph
from frame.ops.interpreter import evaluate
from frame.ops.shape import canonical_slice
from frame.passes import PassManager, standard_pipeline
from frame.runtime import compile as rc
from ..graphcheck import assert_identical


@pytest.fixture(autouse=True)
def _fresh_cache():
    rc.clear_cache()
    yield
    rc.clear_cache()


def _run_both(graph, inputs):
    work = PassManager(standard_pipeline(CpuBackend())).run(clone_graph(graph))
    exe = CpuBackend().compile(work, CompileOptions())
    want = evaluate(work, inputs)
    for _ in range(2):  # the second run reuses buffers and constants
        got = exe.run([np.array(a, copy=True) for a in inputs])
        assert_identical(got, want)
    return exe.source


def _positions(b, values):
    return b.constant(np.asarray(values, np.int64))


def _rows_filled(n=4, read_middle=False, middle_out=False, reversed_rows=False):
    """x: float32[n, n] -> the rows of x * 2 scattered one by one into zeros."""
    b = GraphBuilder()
    x = b.input("float32", (n, n))
    acc = b.constant(np.zeros((n, n), np.float32))
    middle = None
    rows = range(n - 1, -1, -1) if reversed_rows else range(n)
    for k, i in enumerate(rows):
        row = b.op("squeeze", b.op("slice", x, starts=(i, 0), stops=(i + 1, n), steps=(1, 1)),
                   axes=(0,))
        upd = b.op("mul", row, b.constant(np.float32(2.0)))
        acc = b.op("scatter", acc, _positions(b, np.arange(i * n, (i + 1) * n)), upd)
        if k == 1:
            middle = acc
    outs = [acc]
    if read_middle:
        outs.append(b.op("sum", middle, axes=(0, 1), keepdims=False))
    if middle_out:
        outs.append(middle)
    return b.build(*outs)


@pytest.mark.parametrize("kw", [{}, {"read_middle": True}, {"middle_out": True},
                                {"reversed_rows": True}], ids=str)
def test_chains_of_item_assignments(kw):
    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    source = _run_both(_rows_filled(**kw), [x])
    in_place = source.count("np_put(") + source.count("scatter_into(")
    if kw.get("read_middle") or kw.get("middle_out"):
        assert in_place < 3  # the value read (or returned) later is never overwritten
    else:
        assert in_place == 3  # the first copies the constant, the others write in place


def test_repeated_positions_keep_the_last_update_and_bad_ones_raise():
    b = GraphBuilder()
    x = b.input("float64", (3,))
    p = b.input("int64", (4,))
    first = b.op("scatter", b.constant(np.zeros(5)), _positions(b, [0, 1, 2]), x)
    second = b.op("scatter", first, p, b.constant(np.array([7.0, 8.0, 9.0, 10.0])))
    g = b.build(second)
    _run_both(g, [np.array([1.0, 2.0, 3.0]), np.array([4, 4, 0, 4])])
    work = PassManager(standard_pipeline(CpuBackend())).run(clone_graph(g))
    exe = CpuBackend().compile(work, CompileOptions())
    with pytest.raises(IndexError, match="position 5 is out of bounds"):
        exe.run([np.ones(3), np.array([0, 5, 1, 1])])


def test_input_and_constant_are_never_written():
    b = GraphBuilder()
    x = b.input("float64", (2, 3))
    y = b.op("scatter", x, _positions(b, [1, 4]), b.constant(np.array([-1.0, -2.0])))
    g = b.build(y, b.op("sum", x, axes=(0, 1), keepdims=False))
    x0 = np.arange(6.0).reshape(2, 3)
    _run_both(g, [x0])
    work = PassManager(standard_pipeline(CpuBackend())).run(clone_graph(g))
    exe = CpuBackend().compile(work, CompileOptions())
    arg = x0.copy()
    exe.run([arg])
    np.testing.assert_array_equal(arg, x0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_shape_copies_match_the_kernels(dtype):
    b = GraphBuilder()
    x = b.input(dtype, (2, 3, 4))
    triples = [canonical_slice(3 if a == 1 else (2 if a == 0 else 4), *sl)
               for a, sl in enumerate([(1, 2, None), (None, None, -1), (0, None, 2)])]
    starts, stops, steps = zip(*triples)
    s = b.op("slice", x, starts=starts, stops=stops, steps=steps)
    q = b.op("squeeze", s, axes=(0,))
    e = b.op("expand_dims", q, axes=(0, 3))
    r = b.op("reshape", b.op("transpose", x, perm=(2, 0, 1)), shape=(4, 6))
    g = b.build(e, r, b.op("reshape", q, shape=(-1,)))
    x0 = (np.arange(24) % 5).reshape(2, 3, 4).astype(dtype)
    source = _run_both(g, [x0])
    assert "k_slice(" not in source and "k_squeeze(" not in source
