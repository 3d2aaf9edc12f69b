"""int8/int16/uint8/uint16 inside OpenVINO: i32 values wrapped back into the
dtype (``Lowerer.wrap``), compiled by the backend itself (no fallback chain)
and equal to the reference kernels over each dtype's whole range; uint32 and
uint64, and the ops whose fixed-width result the plugin does not give, refused
with a reason naming the dtype."""
from __future__ import annotations

import numpy as np
import pytest

from ._helpers import OPTIONS, assert_matches, backend, reference  # noqa: F401 -- skips without openvino

import frame
from frame.backends.openvino.support import unsupported_reason
from frame.ir import GraphBuilder

SMALL = ("int8", "int16", "uint8", "uint16")


def _full_range(dtype, shape, seed):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    x = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    x.flat[0], x.flat[1], x.flat[2], x.flat[3] = info.max, info.min, 0, info.min + 1
    return x


def _graph(dtype):
    b = GraphBuilder()
    x = b.input(dtype, (4, 6))
    y = b.input(dtype, (4, 6))
    outs = [b.op("add", x, y), b.op("sub", x, y), b.op("mul", x, y), b.op("neg", x),
            b.op("abs", x), b.op("invert", x), b.op("maximum", x, y), b.op("less", x, y),
            b.op("equal", x, y), b.op("bitwise_xor", x, y), b.op("relu", x), b.op("sign", x),
            b.op("max", x, axes=(1,), keepdims=False), b.op("argmin", x, axis=0, keepdims=False),
            b.op("add", x, b.scalar(1, like=x)), b.op("cast", x, dtype=frame.float32)]
    for dst in ("int8", "uint8", "int16", "uint16", "int32", "bool"):
        outs.append(b.op("cast", b.op("cast", x, dtype=frame.int32), dtype=dst))
    # wrapped values used inside the model (the output's Convert alone would hide a
    # missing wrap): compared, widened, reduced
    total, product = b.op("add", x, y), b.op("mul", x, y)
    outs += [b.op("less", total, y), b.op("cast", product, dtype=frame.int32),
             b.op("max", b.op("neg", x), axes=(0,), keepdims=False),
             b.op("cast", b.op("abs", x), dtype=frame.float32),
             b.op("cast", b.op("invert", x), dtype=frame.int32),
             b.op("cast", b.op("cast", b.op("cast", x, dtype=frame.int32), dtype=dtype),
                  dtype=frame.int32)]
    return b.build(*outs)


@pytest.mark.parametrize("dtype", SMALL)
def test_wrapping_ops_are_compiled_and_exact(dtype):
    g = _graph(dtype)
    for node in g.nodes:
        assert unsupported_reason(node) is None, (node.op, unsupported_reason(node))
    exe = backend().compile(g, OPTIONS)  # the whole graph: no fallback chain
    for seed in range(3):
        ins = [_full_range(dtype, (4, 6), seed), _full_range(dtype, (4, 6), seed + 10)]
        with np.errstate(all="ignore"):
            want = reference(g, ins)
        for k, (got, w) in enumerate(zip(exe.run(ins), want)):
            assert_matches(got, w, f"{dtype} output {k} ({g.outputs[k].producer.op})")


def test_uint8_add_wraps_like_numpy():
    b = GraphBuilder()
    x = b.input("uint8", (4,))
    y = b.input("uint8", (4,))
    g = b.build(b.op("add", x, y), b.op("neg", x), b.op("mul", x, y))
    exe = backend().compile(g, OPTIONS)
    a, c = np.array([200, 255, 0, 128], np.uint8), np.array([100, 1, 0, 2], np.uint8)
    got = exe.run([a, c])
    assert got[0].dtype == np.uint8 and got[0].tolist() == [44, 0, 0, 130]
    assert got[1].tolist() == [56, 1, 0, 128]
    assert got[2].tolist() == [32, 255, 0, 0]


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("op", ["floordiv", "mod", "left_shift", "matmul", "sum", "cumsum"])
def test_refused_ops_name_the_dtype(dtype, op):
    b = GraphBuilder()
    x = b.input(dtype, (3, 3))
    if op == "sum":
        out = b.op("sum", x, axes=(0,), keepdims=False)
    elif op == "cumsum":
        out = b.op("cumsum", x, axis=0)
    else:
        out = b.op(op, x, x)
    reason = unsupported_reason(out.producer)
    assert reason is not None and dtype in reason, reason


@pytest.mark.parametrize("dtype", ["uint32", "uint64"])
def test_wide_unsigned_values_are_never_claimed(dtype):
    b = GraphBuilder()
    x = b.input(dtype, (3,))
    for out in (b.op("reshape", x, shape=(1, 3)), b.op("cast", x, dtype=frame.float32)):
        reason = unsupported_reason(out.producer)
        assert reason is not None and dtype in reason, reason


def test_cast_from_float_to_small_int_is_refused():
    b = GraphBuilder()
    x = b.input("float32", (3,))
    reason = unsupported_reason(b.op("cast", x, dtype=frame.uint8).producer)
    assert reason is not None and "undefined" in reason, reason
