"""Input donation in the memory plan and the cpu executable
(``CompileOptions.donate``, ``plan.donations``): an output computed straight
into a donated input array, only where no reader can tell, with the same bits
as the reference interpreter."""
from __future__ import annotations

import json

import numpy as np
import pytest

import frame  # noqa: F401  (registers ops)
from frame.backends.cpu import persist
from frame.backends.cpu.codegen import check_plan
from frame.hal import CompileOptions, ErrorCode, FrameError
from frame.hal.backend import Artifact
from frame.ir import GraphBuilder, plan_memory
from frame.ops.interpreter import evaluate
from frame.runtime import compile as rc
from ..graphcheck import assert_identical


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _run_donated(graph, inputs, donate):
    """(results, want): the executable compiled with ``donate`` run on copies
    of ``inputs``, and the reference interpreter's results."""
    want = evaluate(graph, [a.copy() for a in inputs])
    exe = rc.compile(graph, "cpu", CompileOptions(donate=donate))
    mine = [a.copy() for a in inputs]
    return exe, mine, exe.run(mine), want


def _sgd_graph(shape=(64, 32)):
    b = GraphBuilder()
    w, g = b.input("float32", shape), b.input("float32", shape)
    lr = b.constant(np.array(0.1, np.float32))
    return b.build(b.op("sub", w, b.op("mul", g, lr)), g)


def test_elementwise_update_is_computed_into_the_donated_input():
    graph = _sgd_graph()
    inputs = [_rand((64, 32), 0), _rand((64, 32), 1)]
    exe, mine, out, want = _run_donated(graph, inputs, ((0, 0),))
    assert list(exe.plan.donations.values()) == [0]
    assert out[0] is mine[0], exe.source
    assert out[1] is not mine[1] and not np.shares_memory(out[1], mine[1])
    assert_identical(out, want)
    # the next run reads the updated array, as a caller that wrote it back would
    want2 = evaluate(graph, [out[0].copy(), mine[1]])
    assert_identical(exe.run([mine[0], mine[1]]), want2)


def test_no_donation_without_the_option_or_for_other_backends_partitions():
    graph = _sgd_graph()
    inputs = [_rand((64, 32), 0), _rand((64, 32), 1)]
    exe = rc.compile(graph, "cpu")
    assert not exe.plan.donations
    out = exe.run(inputs)
    assert not np.shares_memory(out[0], inputs[0])


def test_region_that_does_not_read_the_donated_input():
    b = GraphBuilder()
    x, w = b.input("float32", (32, 32)), b.input("float32", (32, 32))
    h = b.op("relu", x)
    out = b.op("add", b.op("matmul", h, w), b.constant(np.array(1.0, np.float32)))
    graph = b.build(out)
    inputs = [_rand((32, 32), 2), _rand((32, 32), 3)]
    exe, mine, res, want = _run_donated(graph, inputs, ((0, 0),))
    assert res[0] is mine[0], exe.source
    assert_identical(res, want)


@pytest.mark.parametrize("case", ["read_after", "type", "listed_twice", "input_is_output",
                                  "two_outputs_one_input"])
def test_plan_refuses_donations_a_reader_could_tell(case):
    b = GraphBuilder()
    x, g = b.input("float32", (8, 8)), b.input("float32", (8, 8))
    if case == "read_after":      # x is read after the node making output 0
        graph = b.build(b.op("add", x, g), b.op("mul", x, g))
        donate = ((0, 0),)
    elif case == "type":
        graph = b.build(b.op("cast", b.op("add", x, g), dtype=frame.float64))
        donate = ((0, 0),)
    elif case == "listed_twice":
        y = b.op("add", x, g)
        graph = b.build(y, y)
        donate = ((0, 0),)
    elif case == "input_is_output":
        graph = b.build(b.op("add", x, g), x)
        donate = ((0, 0),)
    else:
        graph = b.build(b.op("add", x, g), b.op("sub", x, g))
        donate = ((0, 0), (1, 0))
    plan = plan_memory(graph, donate)
    if case == "two_outputs_one_input":
        assert len(plan.donations) == 1 and list(plan.donations.values()) == [0]
        return
    assert not plan.donations
    inputs = [_rand((8, 8), 4), _rand((8, 8), 5)]
    exe, mine, out, want = _run_donated(graph, inputs, donate)
    assert_identical(out, want)
    assert all(not np.shares_memory(o, a) for o in out for a in mine)


def test_producer_reading_a_view_of_the_donated_input_writes_a_fresh_array():
    b = GraphBuilder()
    x = b.input("float32", (16, 16))
    graph = b.build(b.op("add", x, b.op("transpose", x, perm=(1, 0))))
    inputs = [_rand((16, 16), 6)]
    exe, mine, out, want = _run_donated(graph, inputs, ((0, 0),))
    assert exe.plan.donations   # the plan allows it; the code generator does not
    assert out[0] is not mine[0]
    assert_identical(out, want)
    np.testing.assert_array_equal(mine[0], inputs[0])


def test_one_element_update_is_not_done_in_place():
    b = GraphBuilder()
    x, g = b.input("float32", (1,)), b.input("float32", (1,))
    graph = b.build(b.op("add", x, g))
    exe, mine, out, want = _run_donated(graph, [np.array([np.nan], np.float32),
                                                np.array([-np.nan], np.float32)], ((0, 0),))
    assert out[0] is not mine[0]
    assert_identical(out, want)


@pytest.mark.parametrize("layout", ["strided", "read_only"])
def test_donated_input_without_standard_strides_or_read_only(layout):
    graph = _sgd_graph((8, 6))
    exe = rc.compile(graph, "cpu", CompileOptions(donate=((0, 0),)))
    base = _rand((8, 12), 7)
    w = base[:, ::2] if layout == "strided" else base[:, :6].copy()
    if layout == "read_only":
        w.setflags(write=False)
    g = _rand((8, 6), 8)
    before = base.copy()
    want = evaluate(graph, [np.ascontiguousarray(w), g])
    out = exe.run([w, g])
    assert out[0] is not w and not np.shares_memory(out[0], base)
    assert_identical(out, want)
    np.testing.assert_array_equal(base, before)


def test_check_plan_and_persistence_keep_donations():
    graph = _sgd_graph()
    exe = rc.compile(graph, "cpu", CompileOptions(donate=((0, 0),)))
    plan = exe.plan
    art = persist.serialize(_planned(graph), exe)
    loaded = persist.deserialize(Artifact(json.loads(json.dumps(art.meta)), dict(art.blobs)))
    assert loaded.plan.donations == plan.donations and loaded.source == exe.source
    # a plan donating an input that is read later is refused
    b = GraphBuilder()
    x, g = b.input("float32", (8, 8)), b.input("float32", (8, 8))
    bad_graph = b.build(b.op("add", x, g), b.op("mul", x, g))
    good = plan_memory(bad_graph)
    import dataclasses
    from types import MappingProxyType
    bad = dataclasses.replace(good, donations=MappingProxyType({2: 0}))
    with pytest.raises(FrameError, match="read after") as info:
        check_plan(bad_graph, bad)
    assert info.value.code is ErrorCode.INTERNAL


def _planned(graph):
    from frame.ir import clone_graph
    from frame.passes import PassManager, standard_pipeline
    from frame.hal import get_backend
    options = CompileOptions(donate=((0, 0),))
    return PassManager(standard_pipeline(get_backend("cpu"), options)).run(clone_graph(graph))


def test_large_update_run_in_parallel_chunks_into_the_donated_input():
    """A large elementwise region runs in row blocks on the worker pool
    (``fused_parallel``): the block of the donated input is read before the
    block of the output (the same memory) is written."""
    graph = _sgd_graph((1024, 1024))
    inputs = [_rand((1024, 1024), 9), _rand((1024, 1024), 10)]
    exe, mine, out, want = _run_donated(graph, inputs, ((0, 0),))
    assert out[0] is mine[0]
    assert_identical(out, want)


@pytest.mark.parametrize("fused", [True, False])
def test_a_where_over_the_donated_input_is_not_computed_into_it(fused):
    # np.exp(x, out=o, where=x > 0): the update is where(x > 0, exp(x), o).
    # where's bit select reads o again after its first write, so writing it
    # into o's own array (the donation) would read its own partial result
    b = GraphBuilder()
    x, o = b.input("float32", (8, 16)), b.input("float32", (8, 16))
    mask = b.op("greater", x, b.constant(np.array(0.0, np.float32)))
    y = b.op("exp", x) if fused else x
    graph = b.build(b.op("where", mask, y, o))
    inputs = [_rand((8, 16), 0), np.full((8, 16), 7.0, np.float32)]
    exe, mine, out, want = _run_donated(graph, inputs, ((0, 1),))
    assert_identical(out, want)
