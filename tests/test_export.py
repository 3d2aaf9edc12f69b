"""``frame.export`` (capture/export.py): the MLP (frame.demo's), the CNN and the
GELU of benchmarks/peers.py written as OpenVINO IR, read back and run by plain
OpenVINO in a process that never imports frame, with results equal to
``frame.jit(fn)``'s; named inputs and outputs; parameters stored as
constants; the refusals (a break, an op without an OpenVINO lowering, side
effects, a non-tensor result) name their cause."""
from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import frame
import frame.nn.functional as F
from frame.demo import build_mlp

GELU_C = math.sqrt(2.0 / math.pi)

# Runs in a fresh interpreter: OpenVINO and NumPy only.  Reads the model and the
# inputs (.npz, by input name), writes the outputs (by output name) and what it saw.
RUNNER = r"""
import json, sys
import numpy as np
import openvino as ov
xml, inputs_npz, outputs_npz = sys.argv[1:4]
model = ov.Core().read_model(xml)
compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
feed = dict(np.load(inputs_npz))
result = compiled(feed)
outs = {o.get_any_name(): np.asarray(result[o]) for o in compiled.outputs}
np.savez(outputs_npz, **outs)
assert not any(m == "frame" or m.startswith(("frame.", "capture")) for m in sys.modules), \
    "the runner imported frame"
print(json.dumps({"inputs": [i.get_any_name() for i in model.inputs],
                  "input_shapes": [list(i.get_shape()) for i in model.inputs],
                  "outputs": [o.get_any_name() for o in model.outputs],
                  "constants": sum(1 for op in model.get_ops() if op.get_type_name() == "Constant")}))
"""


def run_exported(tmp_path: pathlib.Path, xml: str, feed: dict[str, np.ndarray]):
    """Run ``xml`` with plain OpenVINO in a subprocess: (outputs by name, what it saw)."""
    np.savez(tmp_path / "inputs.npz", **feed)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # frame is not importable
    out = subprocess.run([sys.executable, "-c", RUNNER, xml, str(tmp_path / "inputs.npz"),
                          str(tmp_path / "outputs.npz")], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    return dict(np.load(tmp_path / "outputs.npz")), seen


def jitted(fn, *args):
    with frame.no_grad():
        result = frame.jit(fn)(*args)
    return result


def gelu(x):
    return 0.5 * x * (1.0 + frame.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def cnn(x, w1, b1, w2, b2, w3, b3):
    h = F.max_pool2d(frame.relu(F.conv2d(x, w1, b1, padding=1)), 2)
    h = F.max_pool2d(frame.relu(F.conv2d(h, w2, b2, padding=1)), 2)
    return F.linear(h.reshape(h.shape[0], -1), w3, b3)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=2e-5)


def test_the_mlp_round_trips_with_its_parameters_as_constants(tmp_path):
    model = build_mlp(0)
    x = frame.tensor(np.random.default_rng(0).standard_normal((16, 784)).astype(np.float32))
    xml = frame.export(model, x, path=tmp_path / "mlp")
    assert xml == str(tmp_path / "mlp.xml") and (tmp_path / "mlp.bin").stat().st_size > 4 * 784 * 256
    outs, seen = run_exported(tmp_path, xml, {"x": x.numpy()})
    assert seen["inputs"] == ["x"] and seen["input_shapes"] == [[16, 784]]   # weights are not inputs
    assert seen["outputs"] == ["output"] and seen["constants"] >= 6
    close(outs["output"], jitted(model, x).numpy())
    # what frame.jit made exports the same model
    again = frame.export(frame.jit(model), x, path=tmp_path / "jitted" / "mlp.xml")
    outs_jitted, seen_jitted = run_exported(tmp_path, again, {"x": x.numpy()})
    assert seen_jitted["inputs"] == ["x"]
    close(outs_jitted["output"], outs["output"])
    # the file holds the weights of export time
    for p in model.parameters():
        p._data[...] = 0
    outs_again, _ = run_exported(tmp_path, xml, {"x": x.numpy()})
    close(outs_again["output"], outs["output"])


def test_the_cnn_round_trips(tmp_path):
    rng = np.random.default_rng(2)
    s1, s2, s3 = 1 / 3, 1 / math.sqrt(72), 1 / 28
    x = rng.standard_normal((4, 1, 28, 28)).astype(np.float32)
    params = [rng.uniform(-s1, s1, (8, 1, 3, 3)), rng.uniform(-s1, s1, (8,)),
              rng.uniform(-s2, s2, (16, 8, 3, 3)), rng.uniform(-s2, s2, (16,)),
              rng.uniform(-s3, s3, (10, 784)), rng.uniform(-s3, s3, (10,))]
    args = [frame.tensor(x)] + [frame.tensor(p.astype(np.float32)) for p in params]
    xml = frame.export(cnn, *args, path=tmp_path / "cnn.xml")
    names = ["x", "w1", "b1", "w2", "b2", "w3", "b3"]
    outs, seen = run_exported(tmp_path, xml, {n: a.numpy() for n, a in zip(names, args)})
    assert seen["inputs"] == names and seen["outputs"] == ["output"]
    close(outs["output"], jitted(cnn, *args).numpy())


def test_gelu_round_trips_and_numpy_arguments_are_inputs(tmp_path):
    # 256 KiB: a large input, which frame's own models bind once per elementwise reader
    x = np.random.default_rng(1).standard_normal((256, 256)).astype(np.float32)
    xml = frame.export(gelu, frame.tensor(x), path=tmp_path / "gelu.xml")
    outs, seen = run_exported(tmp_path, xml, {"x": x})
    assert seen["inputs"] == ["x"] and seen["outputs"] == ["output"]
    close(outs["output"], jitted(gelu, frame.tensor(x)).numpy())

    def on_numpy(a):   # NumPy code: an ndarray argument is an input too
        return np.tanh(a) * 2
    xml = frame.export(on_numpy, x, path=tmp_path / "np.xml")
    outs, _ = run_exported(tmp_path, xml, {"a": x})
    close(outs["output"], np.tanh(x) * 2)


def test_outputs_are_named_and_globals_are_constants(tmp_path):
    scale = frame.tensor(np.array([1.0, 2.0, 3.0], np.float32))

    def several(a, *rest, bias=1.5):
        total = a * scale + bias
        return {"total": total, "parts": (a + rest[0], frame.relu(rest[1]))}
    # (a dict's values are flattened in order: "total", then "parts_0", "parts_1")
    a, b, c = (np.arange(3, dtype=np.float32) - k for k in range(3))
    xml = frame.export(several, frame.tensor(a), frame.tensor(b), frame.tensor(c), path=tmp_path / "m")
    outs, seen = run_exported(tmp_path, xml, {"a": a, "rest_0": b, "rest_1": c})
    assert seen["inputs"] == ["a", "rest_0", "rest_1"]
    assert seen["outputs"] == ["total", "parts_0", "parts_1"]
    expected = several(frame.tensor(a), frame.tensor(b), frame.tensor(c))
    close(outs["total"], expected["total"].numpy())
    close(outs["parts_0"], expected["parts"][0].numpy())
    close(outs["parts_1"], expected["parts"][1].numpy())


def test_an_argument_returned_as_it_is_and_an_unread_argument_stay_inputs(tmp_path):
    def passthrough(x, unused):
        return x, x * 2
    x = np.ones((2, 2), np.float32)
    xml = frame.export(passthrough, frame.tensor(x), frame.tensor(np.zeros(3, np.float32)),
                       path=tmp_path / "p")
    outs, seen = run_exported(tmp_path, xml, {"x": x + 1, "unused": np.zeros(3, np.float32)})
    assert seen["inputs"] == ["x", "unused"] and seen["outputs"] == ["output_0", "output_1"]
    close(outs["output_0"], x + 1)
    close(outs["output_1"], (x + 1) * 2)


def with_a_break(x):
    y = x * 2
    print("a graph break")
    return y + 1


def test_a_graph_break_is_refused_naming_its_line(tmp_path):
    with pytest.raises(frame.ExportError) as info:
        frame.export(with_a_break, frame.tensor(np.ones(2, np.float32)), path=tmp_path / "b")
    line = with_a_break.__code__.co_firstlineno + 2
    message = str(info.value)
    assert "with_a_break" in message and "unsupported_call" in message
    assert f"test_export.py:{line}" in message and "print" in message
    assert info.value.break_reason.kind == "unsupported_call"
    assert not (tmp_path / "b.xml").exists()


def test_an_op_without_an_openvino_lowering_is_refused_by_name(tmp_path):
    def f(x):
        return frame.relu(x) * 2
    with pytest.raises(frame.ExportError, match=r"op(s)? 'relu'.* no OpenVINO lowering.*float64"):
        frame.export(f, frame.tensor(np.array([-1.0, 2.0])), path=tmp_path / "f64")


def test_side_effects_and_non_tensor_results_are_refused(tmp_path):
    seen = []

    def appends(x):
        seen.append(1)
        return x + 1

    def returns_a_number(x):
        return x + 1, 3
    x = frame.tensor(np.ones(2, np.float32))
    with pytest.raises(frame.ExportError, match="writes containers"):
        frame.export(appends, x, path=tmp_path / "s")
    assert seen == []   # the export traced it; nothing ran
    with pytest.raises(frame.ExportError, match="returns a int .*output_1"):
        frame.export(returns_a_number, x, path=tmp_path / "n")
