"""The openvino backend's contract: devices, the run path (threads, aliasing,
binding), run-time exactness checks, partitioning around unsupported nodes,
eager kernels, the model cache and the default backend choice."""
from __future__ import annotations

import dataclasses
import logging
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

from ._helpers import OPTIONS, assert_matches, backend

import capture  # noqa: E402
import frame  # noqa: E402
from frame.backends import default_backend_name  # noqa: E402
from frame.backends.openvino import executable as ov_executable  # noqa: E402
from frame.backends.openvino.eager import EagerKernel  # noqa: E402
from frame.backends.openvino.executable import OpenVinoExecutable  # noqa: E402
from frame.backends.openvino.table import RULES  # noqa: E402
from frame.hal import (CompileOptions, ErrorCode, FrameError, KernelInvocation,  # noqa: E402
                       kernel_registry)
from frame.ir import GraphBuilder  # noqa: E402
from frame.ops.interpreter import evaluate  # noqa: E402
from frame.runtime import compile as rc  # noqa: E402
from frame.runtime.fallback import FallbackExecutable  # noqa: E402
from frame.runtime.stats import reset_stats, stats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    reset_stats()
    yield
    rc.clear_cache()


def _mlp_like(shape=(4,)):
    """relu(x + y) * 2 - tanh(x): a few fusable ops and a constant."""
    b = GraphBuilder()
    x = b.input(frame.float32, shape)
    y = b.input(frame.float32, shape)
    h = b.op("mul", b.op("relu", b.op("add", x, y)), b.scalar(2.0, like=x))
    return b.build(b.op("sub", h, b.op("tanh", x)))


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(dtype)


# --------------------------------------------------------------------------- devices

@pytest.mark.parametrize("device", ["GPU", "NPU", "TPU"])
def test_unavailable_device_is_not_found_listing_devices(device):
    if device in backend().available_devices():
        pytest.skip(f"{device} is present on this machine")
    with pytest.raises(FrameError) as err:
        backend().compile(_mlp_like(), CompileOptions(device=device))
    assert err.value.code is ErrorCode.NOT_FOUND
    for present in backend().available_devices():
        assert present in str(err.value)
    assert device in str(err.value)
    # through the runtime it stays a hard error: no fallback for a missing device
    with pytest.raises(FrameError) as err:
        rc.compile(_mlp_like(), "openvino", CompileOptions(device=device))
    assert err.value.code is ErrorCode.NOT_FOUND
    assert stats().fallbacks == {}


@pytest.mark.parametrize("device", ["CPU", "cpu", "AUTO"])
def test_available_and_virtual_devices_compile(device):
    g = _mlp_like()
    ins = [_rand((4,), 1), _rand((4,), 2)]
    got = backend().compile(g, CompileOptions(device=device)).run(ins)
    assert_matches(got[0], evaluate(g, ins)[0], device)


def test_bad_precision_is_invalid_argument():
    with pytest.raises(FrameError) as err:
        backend().compile(_mlp_like(), CompileOptions(precision="f99"))
    assert err.value.code is ErrorCode.INVALID_ARGUMENT


def test_precision_is_pinned_to_f32_by_default():
    config = backend().config_for("CPU", CompileOptions())
    assert config["INFERENCE_PRECISION_HINT"] == "f32"
    assert backend().config_for("CPU", CompileOptions(precision="bf16"))["INFERENCE_PRECISION_HINT"] == "bf16"


@pytest.mark.parametrize("k", [64, 784])
def test_float32_matmul_is_computed_in_float32(k):
    """On a CPU with AVX512-BF16 OpenVINO's default precision runs a float32
    MatMul in bfloat16 (8 mantissa bits): 1 + 2**-10 rounds to 1 there, so a
    product of such entries is off by ~0.2% where float32 is off by ~1e-7.
    (On a CPU without bf16 the default is f32 and this holds either way.)"""
    a = np.full((16, k), 1 + 2.0 ** -10, np.float32)
    b = np.full((k, 8), 1 + 2.0 ** -9, np.float32)
    fn = frame.jit(lambda x, w: x @ w, backend="openvino")
    got = np.asarray(fn(frame.tensor(a), frame.tensor(b)).numpy())
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_thread_count_follows_graph_size():
    small = backend().config_for("CPU", CompileOptions(), _mlp_like((4,)))
    large = backend().config_for("CPU", CompileOptions(), _mlp_like((512, 512)))
    assert small["INFERENCE_NUM_THREADS"] == 1
    assert "INFERENCE_NUM_THREADS" not in large  # all cores
    chosen = backend().config_for("CPU", CompileOptions(extra=(("INFERENCE_NUM_THREADS", "2"),)),
                                  _mlp_like((4,)))
    assert chosen["INFERENCE_NUM_THREADS"] == "2"


# --------------------------------------------------------------------------- run path

@pytest.mark.parametrize("shape", [(4,), (512, 512)], ids=["prebound", "shared"])
def test_threads_share_one_executable(shape):
    g = _mlp_like(shape)
    exe = backend().compile(g, OPTIONS)
    errors: list[str] = []

    def worker(seed: int) -> None:
        for k in range(20):
            ins = [_rand(shape, seed * 100 + k), _rand(shape, seed * 100 + k + 50)]
            got = exe.run(ins)[0]
            want = evaluate(g, ins)[0]
            if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                errors.append(f"thread {seed} run {k}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("shape", [(4,), (512, 512)], ids=["prebound", "shared"])
def test_outputs_never_alias(shape):
    b = GraphBuilder()
    x = b.input(frame.float32, shape)
    c = b.constant(np.full(shape, 3.0, np.float32))
    r = b.op("relu", x)
    g = b.build(r, x, c, r)
    exe = backend().compile(g, OPTIONS)
    xin = _rand(shape, 3)
    first = exe.run([xin])
    assert not np.shares_memory(first[1], xin)
    assert not np.shares_memory(first[0], first[3])
    kept = first[0].copy()
    first[2][...] = 99.0  # must not reach the executable's constant
    second = exe.run([_rand(shape, 4)])
    np.testing.assert_array_equal(first[0], kept)  # the next run did not overwrite it
    assert (second[2] == 3.0).all()
    assert_matches(second[0], np.maximum(_rand(shape, 4), 0), "relu")


def test_a_caller_holding_the_last_output_costs_no_new_output_memory(monkeypatch):
    """A training step holds its gradients for one step: the shared outputs
    take turns in two arrays the request has seen, instead of binding a new
    array (and OpenVINO setting it up) on every call (issue 13 item 4)."""
    b = GraphBuilder()
    x, y = b.input(frame.float32, (512, 1)), b.input(frame.float32, (1, 512))
    exe = backend().compile(b.build(b.op("mul", x, y)), OPTIONS)
    assert exe._model_outputs[0][3], "a 1 MiB output is shared"
    assert not any(slot.share for slot in exe._inputs)
    xs = [_rand((512, 1), i) for i in range(8)]
    ys = [_rand((1, 512), 10 + i) for i in range(8)]
    held = exe.run([xs[0], ys[0]])[0]
    held = exe.run([xs[1], ys[1]])[0]
    made = []
    real = ov_executable.ov.Tensor
    monkeypatch.setattr(ov_executable.ov, "Tensor", lambda *a, **k: made.append(a) or real(*a, **k))
    addresses = set()
    for i in range(2, 8):
        previous, kept = held, held.copy()
        held = exe.run([xs[i], ys[i]])[0]
        np.testing.assert_array_equal(previous, kept)   # the held one was not written
        assert not np.shares_memory(previous, held)
        assert_matches(held, xs[i] * ys[i], "mul")
        addresses.add(held.ctypes.data)
        del previous
    assert made == [] and len(addresses) == 2


def test_a_large_input_array_seen_again_is_not_bound_again_and_its_new_contents_count(monkeypatch):
    b = GraphBuilder()
    x = b.input(frame.float32, (512, 512))
    exe = backend().compile(b.build(b.op("sum", x, axes=(0,), keepdims=False)), OPTIONS)
    assert all(slot.share for slot in exe._inputs)
    xa = _rand((512, 512), 1)
    assert_matches(exe.run([xa])[0], xa.sum(axis=0), "sum")
    made = []
    real = ov_executable.ov.Tensor
    monkeypatch.setattr(ov_executable.ov, "Tensor", lambda *a, **k: made.append(a) or real(*a, **k))
    xa *= 2.0                              # the same array, written in place
    assert_matches(exe.run([xa])[0], xa.sum(axis=0), "sum")
    assert made == []
    xb = _rand((512, 512), 2)              # another array: bound
    assert_matches(exe.run([xb])[0], xb.sum(axis=0), "sum")
    assert len(made) == 1
    assert_matches(exe.run([xa])[0], xa.sum(axis=0), "sum")
    assert len(made) == 2


@pytest.mark.parametrize("shape", [(200, 200), (512, 512)], ids=["one_thread", "threads"])
def test_a_run_makes_no_copy_of_the_outputs_it_does_not_return(shape):
    """``InferRequest.infer()`` (the Python wrapper) copies every output into
    the dict it returns; the executable never reads that dict."""
    import tracemalloc
    b = GraphBuilder()
    x = b.input(frame.float32, shape)
    exe = backend().compile(b.build(b.op("exp", b.op("neg", x)), b.op("neg", x)), OPTIONS)
    xa = _rand(shape, 3)
    exe.run([xa])
    exe.run([xa])
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        out = exe.run([xa])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(o.nbytes >= ov_executable.SHARE_BYTES for o in out)   # none copied out
    assert peak - before < 16 * 1024, f"{peak - before} bytes allocated by a run"
    assert_matches(out[0], np.exp(-xa), "exp")


def test_a_shared_output_is_bound_again_only_when_nobody_holds_it():
    shape = (512, 512)
    b = GraphBuilder()
    x = b.input(frame.float32, shape)
    g = b.build(b.op("exp", b.op("neg", x)))
    exe = backend().compile(g, OPTIONS)
    assert exe._model_outputs[0][3], "a 1 MiB output is shared"
    x1, x2 = _rand(shape, 1), _rand(shape, 2)
    held = exe.run([x1])[0]
    address = held.ctypes.data
    kept = held.copy()
    again = exe.run([x2])[0]          # `held` is still referenced: new memory
    assert not np.shares_memory(held, again)
    np.testing.assert_array_equal(held, kept)
    view = held[1:3]                  # a view keeps its base alive too
    del held
    third = exe.run([x1])[0]
    assert third.ctypes.data != address
    np.testing.assert_array_equal(view, kept[1:3])
    address = third.ctypes.data
    del view, third, again
    reused = exe.run([x2])[0]         # the previous array was dropped: bound again
    assert reused.ctypes.data == address
    assert_matches(reused, np.exp(-x2), "exp")


def test_binding_mode_follows_the_measured_crossover():
    small = backend().compile(_mlp_like((4,)), OPTIONS)
    large = backend().compile(_mlp_like((512, 512)), OPTIONS)
    assert not any(slot.share for slot in small._inputs)
    assert all(slot.share for slot in large._inputs)
    assert 4 * 512 * 512 >= ov_executable.SHARE_BYTES > 4 * 4


def test_inputs_are_checked():
    exe = backend().compile(_mlp_like(), OPTIONS)
    with pytest.raises(FrameError):
        exe.run([_rand((4,))])
    with pytest.raises(FrameError):
        exe.run([_rand((4,)), _rand((4,), dtype=np.float64)])
    with pytest.raises(FrameError):
        exe.run([_rand((5,)), _rand((5,))])


def test_non_contiguous_and_scalar_inputs():
    g = _mlp_like((512, 512))
    exe = backend().compile(g, OPTIONS)
    x = _rand((512, 512), 5).T  # a transposed view: not C-contiguous
    y = _rand((512, 512), 6)
    assert_matches(exe.run([x, y])[0], evaluate(g, [x, y])[0], "non-contiguous")
    b = GraphBuilder()
    s = b.input(frame.float32, ())
    g0 = b.build(b.op("exp", s))
    assert_matches(backend().compile(g0, OPTIONS).run([np.float32(0.5)])[0],
                   np.exp(np.float32(0.5)), "0-d")


def test_identity_outputs_come_back_right():
    # a Result fed straight by a Parameter is garbage in the plugin when both
    # tensors are bound: such outputs are copies of the input instead
    b = GraphBuilder()
    x = b.input(frame.int32, (3,))
    f = b.input(frame.float32, (3,))
    g = b.build(b.op("floor", x), b.op("sum", f, axes=()), b.op("abs", b.input(frame.bool_, (3,))))
    ins = [np.array([5, -6, 7], np.int32), np.array([1.5, 2.5, -3.0], np.float32),
           np.array([True, False, True])]
    got = backend().compile(g, OPTIONS).run(ins)
    for k, want in enumerate(evaluate(g, ins)):
        np.testing.assert_array_equal(got[k], want)


# --------------------------------------------------------------------------- run-time checks

def test_out_of_range_index_raises_the_reference_error():
    b = GraphBuilder()
    x = b.input(frame.float32, (5, 3))
    i = b.input(frame.int64, (4,))
    g = b.build(b.op("take", x, i, axis=0))
    exe = backend().compile(g, OPTIONS)
    xin = _rand((5, 3))
    ok = np.array([0, -1, 4, 2], np.int64)
    np.testing.assert_array_equal(exe.run([xin, ok])[0], np.take(xin, ok, axis=0))
    with pytest.raises(IndexError, match="out of bounds"):
        exe.run([xin, np.array([0, 5, 1, 1], np.int64)])


@pytest.mark.parametrize("bad", [6, -1, 2 ** 24, 2 ** 24 + 1, 2 ** 24 + 6, -2 ** 24 - 1,
                                 2 ** 31 - 1, -2 ** 31])
def test_each_out_of_range_int32_index_is_caught(bad):
    """The index range check compares in float32 inside the plugin: exact for
    the constant bounds, also for indices that float32 cannot hold."""
    b = GraphBuilder()
    w = b.input(frame.float32, (6, 2))
    i = b.input(frame.int32, (3,))
    g = b.build(b.op("embedding", i, w))
    exe = backend().compile(g, OPTIONS)
    weights = _rand((6, 2))
    for good in ([0, 5, 1], [5, 5, 5]):
        idx = np.array(good, np.int32)
        np.testing.assert_array_equal(exe.run([weights, idx])[0], weights[idx])
    with pytest.raises(ValueError, match="out of range"):
        exe.run([weights, np.array([0, bad, 1], np.int32)])


@pytest.mark.parametrize("where", ["input, checked on the host", "computed, checked in the model",
                                   "large input, checked in the model"])
def test_index_checks_on_the_host_and_in_the_model_agree(where):
    b = GraphBuilder()
    x = b.input(frame.float32, (5, 3))
    n = 40000 if where.startswith("large") else 4  # 160 KB of int32: bound without a copy
    i = b.input(frame.int32, (n,))
    index = b.op("add", i, b.scalar(1, like=i)) if where.startswith("computed") else i
    g = b.build(b.op("take", x, index, axis=0))
    exe = backend().compile(g, OPTIONS)
    lowered_checks = exe._host_checks
    assert bool(lowered_checks) == where.endswith("host")
    xin = _rand((5, 3))
    shift = 1 if where.startswith("computed") else 0
    ok = np.resize(np.array([0, -1, 4, 2, -5], np.int32), n) - shift
    np.testing.assert_array_equal(exe.run([xin, ok])[0], np.take(xin, ok + shift, axis=0))
    for bad in (5, -6, 2 ** 31 - 2):
        idx = ok.copy()
        idx[n // 2] = bad - shift
        with pytest.raises(IndexError, match="out of bounds"):
            exe.run([xin, idx])


def test_embedding_and_labels_out_of_range_raise():
    b = GraphBuilder()
    w = b.input(frame.float32, (6, 2))
    i = b.input(frame.int32, (3,))
    g = b.build(b.op("embedding", i, w))
    exe = backend().compile(g, OPTIONS)
    with pytest.raises(ValueError, match="out of range"):
        exe.run([_rand((6, 2)), np.array([0, 6, 1], np.int32)])
    b = GraphBuilder()
    logits = b.input(frame.float32, (2, 3))
    labels = b.input(frame.int64, (2,))
    g = b.build(b.op("cross_entropy", logits, labels))
    exe = backend().compile(g, OPTIONS)
    good = exe.run([_rand((2, 3)), np.array([2, 0], np.int64)])[0]
    assert_matches(good, evaluate(g, [_rand((2, 3)), np.array([2, 0], np.int64)])[0], "ce", "cross_entropy")
    with pytest.raises(ValueError, match="out of range"):
        exe.run([_rand((2, 3)), np.array([3, 0], np.int64)])


def test_int64_inputs_beyond_int32_are_exact():
    b = GraphBuilder()
    x = b.input(frame.int64, (4,))
    y = b.input(frame.int64, (4,))
    g = b.build(b.op("maximum", x, y), b.op("less", x, y), b.op("reshape", x, shape=(2, 2)))
    exe = backend().compile(g, OPTIONS)
    assert isinstance(exe, OpenVinoExecutable)
    small = [np.array([1, -2, 3, 2 ** 31 - 1], np.int64), np.array([0, 5, -3, -2 ** 31], np.int64)]
    big = [np.array([2 ** 40 + 20, -5, 3, -2 ** 50], np.int64), np.array([20, 2 ** 33, 3, 7], np.int64)]
    for ins in (small, big, small):
        for got, want in zip(exe.run(ins), evaluate(g, ins)):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("value", [2 ** 31, -2 ** 31 - 1, 2 ** 32, -2 ** 32, 2 ** 32 - 1,
                                   (2 ** 24 + 1) << 32, -(2 ** 24 + 1) << 32, 2 ** 62, -2 ** 63,
                                   2 ** 63 - 1])
@pytest.mark.parametrize("n", [4, 1 << 15])  # checked by the executable / inside the model
def test_each_int64_value_beyond_int32_is_caught(value, n):
    """The in-range check on every kind of value outside int32, each alone in an
    otherwise in-range input: on the host for a small input, in the model (high
    word == the low word's sign extension) for a large one bound without a copy."""
    b = GraphBuilder()
    x = b.input(frame.int64, (n,))
    y = b.input(frame.int64, (n,))
    g = b.build(b.op("maximum", x, y), b.op("less", x, y))
    exe = backend().compile(g, OPTIONS)
    assert isinstance(exe, OpenVinoExecutable)
    zeros = np.zeros(n, np.int64)

    def with_values(*values):
        a = np.zeros(n, np.int64)
        a[:len(values)] = values
        return a
    for ins in ([with_values(0, -1, 2 ** 31 - 1, -2 ** 31), zeros],
                [with_values(3, value, -7, 0), zeros],
                [zeros, with_values(3, value, -7, 0)]):
        for got, w in zip(exe.run(ins), evaluate(g, ins)):
            np.testing.assert_array_equal(got, w)


# --------------------------------------------------------------------------- honesty

def test_reasons_name_op_and_dtype():
    b = GraphBuilder()
    d = b.input(frame.float64, (2,))
    i = b.input(frame.int64, (2,))
    h = b.input(frame.float16, (2,))
    nodes = {
        "float64": b.op("add", d, d),
        "int64": b.op("mul", i, i),
        "float16": b.op("exp", b.op("mul", h, h)),
    }
    for dtype, v in nodes.items():
        why = backend().why_unsupported(v.producer)
        assert why and f"'{v.producer.op}'" in why and dtype in why, why
        assert not backend().supports(v.producer)


@pytest.mark.parametrize("k", [0, 7, 2 ** 24 - 1, -(2 ** 24 - 1), 2 ** 24, -2 ** 24, 2 ** 31 - 1])
def test_int32_equality_with_a_constant_is_exact(k):
    """Against a constant under 2**24 the plugin's own Equal is used (exact
    there); at 2**24 and beyond, the integer-only comparison."""
    b = GraphBuilder()
    x = b.input(frame.int32, (12,))
    c = b.scalar(k, like=x)
    g = b.build(b.op("equal", x, c), b.op("not_equal", c, x), b.op("equal", c, x))
    exe = backend().compile(g, OPTIONS)
    near = [k - 2, k - 1, k, k + 1, k + 2, 2 ** 24 + 1, 2 ** 24, -2 ** 24 - 1, 2 ** 31 - 1, -2 ** 31,
            0, 16777217]
    ins = [np.array([v for v in near], np.int64).clip(-2 ** 31, 2 ** 31 - 1).astype(np.int32)]
    for got, want in zip(exe.run(ins), evaluate(g, ins)):
        np.testing.assert_array_equal(got, want)


def test_int32_comparisons_are_exact_beyond_float32():
    # the plugin's own Equal/Less on i32 run in float32: 16777217 == 16777216 there
    b = GraphBuilder()
    x = b.input(frame.int32, (4,))
    y = b.input(frame.int32, (4,))
    g = b.build(b.op("equal", x, y), b.op("less", x, y), b.op("where", b.op("greater", x, y),
                                                             b.op("add", x, y), b.op("sub", x, y)))
    ins = [np.array([16777217, 2 ** 30 + 1, -2 ** 31, 5], np.int32),
           np.array([16777216, 2 ** 30, 2 ** 31 - 1, 5], np.int32)]
    with np.errstate(over="ignore"):
        want = evaluate(g, ins)
    for got, w in zip(rc.compile(g, "openvino").run(ins), want):
        np.testing.assert_array_equal(got, w)
    assert stats().fallbacks == {}


# --------------------------------------------------------------------------- partitioning

@pytest.fixture
def tanh_refused(monkeypatch):
    """Force the backend to refuse tanh (in graphs and as an eager kernel)."""
    monkeypatch.setitem(RULES, "tanh", dataclasses.replace(
        RULES["tanh"], check=lambda node: "op 'tanh' refused by this test"))
    backend().eager.clear()
    yield
    backend().eager.clear()


@pytest.mark.parametrize("fusion", [True, False])
def test_unsupported_op_is_partitioned_around(tanh_refused, fusion, caplog):
    caplog.set_level(logging.WARNING, logger="frame")
    b = GraphBuilder()
    x = b.input(frame.float32, (3, 4))
    y = b.input(frame.float32, (3, 4))
    s = b.op("add", b.op("mul", x, y), y)
    t = b.op("tanh", s)
    g = b.build(b.op("relu", b.op("sub", b.op("mul", t, y), x)))
    exe = rc.compile(g, "openvino", CompileOptions(fusion=fusion))
    assert isinstance(exe, FallbackExecutable)
    parts = exe.partitions
    assert parts[1] == "cpu:tanh", parts
    assert parts[0].startswith("compiled[") and parts[2].startswith("compiled["), parts
    assert len(parts) == 3
    ins = [_rand((3, 4), 7), _rand((3, 4), 8)]
    assert_matches(exe.run(ins)[0], evaluate(g, ins)[0], "partitioned", "fused")
    assert stats().fallbacks == {("tanh", "openvino"): 1}
    assert any("op 'tanh'" in r.getMessage() and "refused by this test" in r.getMessage()
               for r in caplog.records)


# --------------------------------------------------------------------------- eager kernels

def test_launch_runs_one_op_models_and_caches_them():
    be = backend()
    a, c = _rand((2, 3), 1), _rand((3,), 2)
    before = len(be.eager)
    got = be.launch(KernelInvocation("add", [a, c], {}))
    assert_matches(got[0], a + c, "eager add")
    after_first = len(be.eager)
    be.launch(KernelInvocation("add", [_rand((2, 3), 3), _rand((3,), 4)], {}))
    assert len(be.eager) == after_first >= before  # the same model, no new compile
    assert_matches(be.launch(KernelInvocation("sum", [a], {"axes": (1,), "keepdims": False}))[0],
                   a.sum(axis=1), "eager sum", "sum")


def test_launch_refuses_what_it_cannot_do_exactly():
    with pytest.raises(FrameError) as err:
        backend().launch(KernelInvocation("add", [np.ones(2), np.ones(2)], {}))
    assert err.value.code is ErrorCode.UNIMPLEMENTED
    assert "add" in str(err.value) and "float64" in str(err.value)


def test_kernel_provider_and_accepts():
    kernel = kernel_registry.get("add", "openvino")
    assert isinstance(kernel, EagerKernel)
    assert kernel_registry.get("floordiv", "openvino") is None  # refused for every dtype
    b = GraphBuilder()
    f = b.input(frame.float32, (2,))
    d = b.input(frame.float64, (2,))
    h = b.input(frame.float16, (2,))
    ok, bad = b.op("add", f, f), b.op("add", d, d)
    # inside a graph this mul would read an unrounded float16 value; on host arrays
    # (an eager kernel's inputs) it is exact
    chained = b.op("mul", b.op("exp", h), h)
    assert kernel.accepts(ok.producer) and not kernel.accepts(bad.producer)
    assert not backend().supports(chained.producer)
    assert kernel_registry.get("mul", "openvino").accepts(chained.producer)
    assert_matches(kernel([np.ones(2, np.float32), np.ones(2, np.float32)], {})[0],
                   np.full(2, 2.0, np.float32), "kernel call")


# --------------------------------------------------------------------------- cache, defaults

_COMPILE_SCRIPT = """
import sys, time, numpy as np, frame
from frame.hal import get_backend
from frame.ir import GraphBuilder
b = GraphBuilder()
x = b.input(frame.float32, (8, 8))
v = x
for k in range(10):
    v = b.op("add", b.op("tanh", b.op("mul", v, b.scalar(1.0 + k / 10, like=x))), x)
g = b.build(v)
t0 = time.perf_counter()
exe = get_backend("openvino").compile(g)
print(time.perf_counter() - t0)
print(float(exe.run([np.ones((8, 8), np.float32)])[0].sum()))
"""


def test_model_cache_lives_under_frame_cache_dir(tmp_path):
    env = dict(os.environ, FRAME_CACHE_DIR=str(tmp_path), FRAME_CACHE="1", PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], env=env, cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
            for _ in range(2)]
    cache = tmp_path / "openvino"
    assert cache.is_dir() and any(cache.iterdir()), "OpenVINO wrote no cache files"
    assert runs[0][1] == runs[1][1]  # the cached model computes the same


def test_cache_dir_setting(monkeypatch, tmp_path):
    from frame.backends.openvino import model_cache_dir
    with frame.config.override(cache_dir=""):
        assert model_cache_dir() is None
        assert "CACHE_DIR" not in backend().config_for("CPU", CompileOptions())
    with frame.config.override(cache_dir=str(tmp_path), cache=True):
        assert backend().config_for("CPU", CompileOptions())["CACHE_DIR"] == str(tmp_path / "openvino")
    with frame.config.override(cache_dir=str(tmp_path), cache=False):  # FRAME_CACHE=0
        assert model_cache_dir() == str(tmp_path / "openvino")  # `frame cache clear` finds it
        assert "CACHE_DIR" not in backend().config_for("CPU", CompileOptions())
    monkeypatch.delenv("FRAME_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with frame.config.override(cache_dir=frame.settings.Config.from_env().cache_dir):
        assert model_cache_dir() == str(tmp_path / "xdg" / "frame" / "openvino")


def test_default_backend_name(monkeypatch):
    monkeypatch.delenv("FRAME_BACKEND", raising=False)
    with frame.config.override(backend=None):
        assert default_backend_name() == "openvino"  # importable here (the module did import it)
        monkeypatch.setenv("FRAME_BACKEND", "cpu")
        assert default_backend_name() == "cpu"
    monkeypatch.delenv("FRAME_BACKEND")
    with frame.config.override(backend="cpu"):  # "same as FRAME_BACKEND=cpu" (frame.settings)
        assert default_backend_name() == "cpu"


@pytest.mark.parametrize("chosen", ["cpu", "openvino"])
def test_frame_config_backend_picks_the_jits_backend(monkeypatch, chosen):
    """``frame.config.backend`` set after import is the jit's default backend, as
    FRAME_BACKEND is at import (it was ignored: frame.jit read the environment)."""
    monkeypatch.delenv("FRAME_BACKEND", raising=False)
    capture.reset_caches()  # the setting applies to compiles after it: f's code is shared

    def f(x):
        return x * 2 + 1

    x = frame.tensor(np.array([1.0, -2.0, 3.0], np.float32))
    with frame.config.override(backend=chosen, tiered=False):
        jitted = frame.jit(f)
        out = jitted(x)
    np.testing.assert_array_equal(out.numpy(), f(x).numpy())
    entry = jitted._frame_cache.entries[0]
    assert not entry.native and entry.backend == chosen


def test_default_backend_name_does_not_import_openvino():
    code = ("import sys, frame; from frame.backends import default_backend_name; "
            "name = default_backend_name(); print(name, 'openvino' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "FRAME_BACKEND"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env).stdout.split()
    assert out == ["openvino", "False"]


def test_frame_imports_openvino_with_its_telemetry_off():
    """OpenVINO's telemetry forks from a thread to send an event; a fork during a
    multithreaded OpenBLAS call deadlocks (frame/backends/openvino/__init__.py)."""
    pytest.importorskip("openvino_telemetry")
    child = ("import os, sys\n"
             "from frame.hal import get_backend\n"
             "get_backend('openvino')\n"
             "import openvino_telemetry\n"
             "print(openvino_telemetry.Telemetry().consent, os.environ.get('CI'), "
             "'openvino' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(pathlib.Path(__file__).resolve().parents[3])
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "None", "True"]
