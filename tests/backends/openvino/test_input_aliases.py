"""A large input read by several elementwise nodes is bound as one Parameter
per reader (``lower._alias_parameters``): the CPU plugin then fuses the chain
into fewer kernels, and the results are bit for bit those of one binding."""
from __future__ import annotations

import numpy as np
import pytest

from ._helpers import OPTIONS, backend

import frame  # noqa: E402
from frame.backends.openvino import lower  # noqa: E402
from frame.ir import GraphBuilder  # noqa: E402
from frame.ops.interpreter import evaluate  # noqa: E402
from frame.runtime import compile as rc  # noqa: E402

C = 0.7978845608028654


@pytest.fixture(autouse=True)
def fresh():
    rc.clear_cache()
    yield
    rc.clear_cache()


def _gelu(shape, dtype=frame.float32):
    """0.5 * x * (1 + tanh(C * (x + 0.044715 * x * x * x))), as Python evaluates it."""
    b = GraphBuilder()
    x = b.input(dtype, shape)
    cube = b.op("mul", b.op("mul", b.op("mul", b.scalar(0.044715, like=x), x), x), x)
    inner = b.op("mul", b.scalar(C, like=x), b.op("add", x, cube))
    half = b.op("mul", b.scalar(0.5, like=x), x)
    return b.build(b.op("mul", half, b.op("add", b.scalar(1.0, like=x), b.op("tanh", inner))))


def _eltwise_kernels(exe) -> int:
    return sum(1 for op in exe._compiled.get_runtime_model().get_ordered_ops()
               if op.get_rt_info()["layerType"].astype(str) == "Eltwise")


def _compile(graph, aliases: bool, monkeypatch):
    if not aliases:
        monkeypatch.setattr(lower, "_alias_parameters", lambda *a: [])
    try:
        return backend().compile(graph, OPTIONS)
    finally:
        monkeypatch.undo()


def test_a_large_input_gets_one_parameter_per_elementwise_reader():
    lowered = lower.lower_graph(_gelu((512, 512)))
    # x is read by five elementwise nodes: the first keeps the input's Parameter
    assert [i for i, _ in lowered.aliases] == [0, 0, 0, 0]
    assert len(lowered.model.get_parameters()) == 5


def test_small_inputs_are_not_aliased():
    lowered = lower.lower_graph(_gelu((64, 64)))  # 16 KiB, copied into a bound tensor
    assert lowered.aliases == []
    assert len(lowered.model.get_parameters()) == 1


def test_aliases_fuse_the_chain_and_change_no_bit(monkeypatch):
    graph = _gelu((512, 512))
    x = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    single = _compile(graph, False, monkeypatch)
    aliased = _compile(graph, True, monkeypatch)
    assert _eltwise_kernels(aliased) < _eltwise_kernels(single)
    np.testing.assert_array_equal(aliased.run([x])[0], single.run([x])[0])
    np.testing.assert_allclose(aliased.run([x])[0], evaluate(graph, [x])[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "new array every call"])
def test_every_parameter_of_an_input_sees_this_calls_array(layout):
    graph = _gelu((512, 512))
    exe = backend().compile(graph, OPTIONS)
    rng = np.random.default_rng(1)
    base = rng.standard_normal((512, 512)).astype(np.float32)
    for k in range(3):
        if layout == "contiguous":
            x = base * np.float32(k + 1)  # a new array each call
        elif layout == "transposed":
            x = (base * np.float32(k + 1)).T  # bound through a contiguous copy
        else:
            x = rng.standard_normal((512, 512)).astype(np.float32)
        np.testing.assert_allclose(exe.run([x])[0], evaluate(graph, [x])[0], rtol=1e-5, atol=1e-6)
    # the same array again after another: rebound, not the stale one
    first = base.copy()
    exe.run([first])
    second = base * np.float32(-1)
    exe.run([second])
    np.testing.assert_allclose(exe.run([first])[0], evaluate(graph, [first])[0], rtol=1e-5, atol=1e-6)


def test_aliases_survive_the_persistent_cache(tmp_path, monkeypatch):
    from frame.backends.openvino import persist
    graph = _gelu((512, 512))
    exe = backend().compile(graph, OPTIONS)
    artifact = persist.serialize(graph, exe, "CPU")
    assert artifact.meta["aliases"] == [list(a) for a in exe._aliases] and exe._aliases
    b = backend()
    loaded = persist.deserialize(b.core, artifact, "CPU",
                                 lambda g: b.config_for("CPU", OPTIONS, g))
    x = np.random.default_rng(2).standard_normal((512, 512)).astype(np.float32)
    np.testing.assert_array_equal(loaded.run([x])[0], exe.run([x])[0])
