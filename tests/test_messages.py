"""What frame tells a new user (issue 16, item 4): each message names the user's
code where it can, fits the case and says what to do.

- float64 on the default (openvino) backend: one WARN per compiled graph naming
  the jitted function and its line, the ops, the dtype and the fix; the
  counters stay per (op, backend);
- ``python -m frame run`` without a script: the usage and the error name only
  what is required;
- ``python -m frame --help`` has an Environment section made from
  ``frame.config``'s settings, and ``python -m frame config`` prints each
  setting's value and where it came from;
- ``frame.report()``'s lookups add up, persistent-cache hits beside compiles.
"""
from __future__ import annotations

import dataclasses
import inspect
import logging
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import frame
from frame.runtime import compile as rc
from frame.runtime.stats import reset_stats, stats
from frame.settings import Config

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _python(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT)}
    full.update(env or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          env=full, timeout=300)


# --- float64 on openvino ---------------------------------------------------------------------

def scaled_softmax(x, w):
    h = np.maximum(x @ w, 0.0)
    return frame.softmax(frame.relu(h) * 2.0 + 1.0, axis=-1).sum(axis=0)


def test_float64_on_openvino_is_one_warn_naming_the_function_line_ops_and_fix(caplog):
    rc.clear_cache()
    reset_stats()
    rng = np.random.default_rng(0)
    x, w = rng.random((4, 8)), rng.random((8, 3))  # float64, NumPy's default
    f = frame.jit(scaled_softmax, backend="openvino")
    caplog.set_level(logging.WARNING, logger="frame")
    with frame.config.override(tiered=False):
        got = f(x, w)
        again = f(x, w)  # a cache hit: no second message
    want = scaled_softmax(x, w)
    assert type(got) is type(want) and got.dtype == want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_array_equal(again, got)
    warns = [r.getMessage() for r in caplog.records
             if r.levelno == logging.WARNING and r.name.startswith("frame")]
    assert len(warns) == 1, warns
    [msg] = warns
    line = inspect.getsourcelines(scaled_softmax)[1]
    assert f"the graph of scaled_softmax (test_messages.py:{line})" in msg
    assert "backend 'openvino'" in msg
    assert "(matmul, maximum, relu, mul, add, softmax" in msg and "on float64)" in msg
    assert "computes float64 in single precision" in msg
    assert "Fix: pass float32 inputs (x.astype(np.float32))" in msg
    assert 'frame.jit(..., backend="cpu")' in msg
    assert "constant" not in msg
    # the counters stay per (op, backend)
    fallbacks = stats().fallbacks
    assert fallbacks[("matmul", "openvino")] == 1 and fallbacks[("relu", "openvino")] == 1
    assert all(be == "openvino" for _, be in fallbacks)
    assert not any(op == "constant" for op, _ in fallbacks)


def test_float32_on_openvino_has_no_fallback_message(caplog):
    rc.clear_cache()
    rng = np.random.default_rng(0)
    x, w = rng.random((4, 8), np.float32), rng.random((8, 3), np.float32)
    caplog.set_level(logging.WARNING, logger="frame")
    with frame.config.override(tiered=False):
        got = frame.jit(scaled_softmax, backend="openvino")(x, w)
    np.testing.assert_allclose(got, scaled_softmax(x, w), rtol=1e-5)
    assert not [r for r in caplog.records if r.name.startswith("frame")]


def test_lowering_names_an_op_not_a_constant():
    """backend_lowering's message names the first unsupported op that computes."""
    from frame.hal.backend import get_backend
    from frame.ir import GraphBuilder
    from frame.passes.lowering import BackendLowering, UnsupportedOps

    b = GraphBuilder()
    x = b.input(frame.float64, (3,))
    g = b.build(b.op("mul", x, b.constant(np.float64(2.0))))
    with pytest.raises(UnsupportedOps) as err:
        BackendLowering(get_backend("openvino")).run(g)
    assert err.value.message.startswith("op 'mul' (float64[3], float64[]) is not supported by "
                                        "backend 'openvino' (and 1 more node(s))")


# --- the command line ------------------------------------------------------------------------

def test_run_without_a_script_names_only_the_script():
    done = _python("-m", "frame", "run")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "usage: python -m frame run [-h] script [args ...]",
        "python -m frame run: error: the following argument is required: script"]


def test_help_has_an_environment_section_made_from_the_settings():
    done = _python("-m", "frame", "--help")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "\nEnvironment (read when frame is imported;" in text
    section = text.split("\nEnvironment", 1)[1]
    for field in dataclasses.fields(Config):
        env = field.metadata["env"]
        assert f"\n  {env}  (frame.config.{field.name}, default " in section, env
        first_words = " ".join(field.metadata["help"].split()[:3])
        assert first_words in section, (env, first_words)


def test_config_command_prints_values_and_where_they_came_from():
    env = {"FRAME_BACKEND": "cpu", "FRAME_HOT_THRESHOLD": "5"}
    done = _python("-m", "frame", "config",
                   env={**env, "FRAME_PGO": "", "FRAME_TIERED": "", "FRAME_CACHE": ""})
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[1:]}
    assert len(rows) == len(dataclasses.fields(Config))
    assert rows["backend"] == ["backend", "'cpu'", "env", "FRAME_BACKEND", "FRAME_BACKEND"]
    assert rows["hot_threshold"][:4] == ["hot_threshold", "5", "env", "FRAME_HOT_THRESHOLD"]
    assert "FRAME_MAX_PENDING" not in os.environ
    assert rows["max_pending"] == ["max_pending", "4", "default", "FRAME_MAX_PENDING"]


def test_settings_assigned_in_code_say_so():
    cfg = Config()
    assert cfg.source("hot_threshold") == "default"
    cfg.hot_threshold = 9
    assert cfg.source("hot_threshold") == "set in code"
    with frame.config.override(min_graph_ops=3):
        line = [r for r in frame.config.describe().splitlines() if r.startswith("min_graph_ops ")]
        assert line[0].split()[1:5] == ["3", "set", "in", "code"]


# --- frame.report(): the numbers add up --------------------------------------------------------

PROGRAM = """
import frame, numpy as np
@frame.jit(backend="cpu")
def f(x):
    return np.maximum(x * 3, 0) - 1
for n in (2, 2, 5):
    f(np.ones(n, np.float32))
"""


def _cells(report: str, label: str) -> str:
    rows = [line for line in report.splitlines()
            if [p.strip() for p in line.split("│")[1:-1]][:1] == [label]]
    assert len(rows) == 1, (label, report)
    return rows[0].split("│")[2].strip()


def test_report_counts_add_up_with_the_persistent_cache(tmp_path):
    env = {"FRAME_CACHE": "1", "FRAME_CACHE_DIR": str(tmp_path / "cache"), "FRAME_TIERED": "0",
           "FRAME_REPORT": "1", "COLUMNS": "200"}
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    first = _python(str(script), env=env)
    second = _python(str(script), env=env)
    for done in (first, second):
        assert done.returncode == 0, done.stderr
    one, two = first.stderr, second.stderr
    # first run: two shapes compiled, one in-memory hit
    assert _cells(one, "graph lookups (in-process compile cache)") == "2 (0% in memory)"
    assert _cells(one, "misses compiled now") == "2"
    assert _cells(one, "misses loaded from the persistent cache (no compile)") == "0"
    assert _cells(one, "graphs compiled (passes + Backend.compile)") == "2"
    # second run: the same lookups, served from disk; nothing compiled, and it says why
    assert _cells(two, "graph lookups (in-process compile cache)") == "2 (0% in memory)"
    assert _cells(two, "misses loaded from the persistent cache (no compile)") == "2"
    assert _cells(two, "misses compiled now") == "0"
    assert _cells(two, "graphs compiled (passes + Backend.compile)") == "0"
