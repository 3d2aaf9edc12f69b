"""The persistent caches are an optimisation (docs/warm_start.md): a cache
directory that cannot be used logs one WARN and everything runs uncached, on
every backend and for capture's stored translations; ``FRAME_CACHE_DIR=""``
means no persistent cache at all, for frame's entries and OpenVINO's model
cache alike.

The unusable directories work when the tests run as root (chmod does not stop
root): a regular file, a path under a regular file, and a directory under
/sys (sysfs refuses mkdir to everyone).
"""
from __future__ import annotations

import logging
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import capture
import frame
from frame.runtime import compile as rc
from frame.runtime import persistent
from frame.runtime.stats import reset_stats, stats

ROOT = str(pathlib.Path(__file__).resolve().parents[2])
BACKENDS = ["cpu", pytest.param("openvino", marks=pytest.mark.skipif(
    __import__("importlib").util.find_spec("openvino") is None, reason="openvino not installed"))]


def _unusable(kind: str, tmp_path) -> str:
    afile = tmp_path / "a-file"
    afile.write_text("not a directory")
    if kind == "file":
        return str(afile)
    if kind == "under-a-file":
        return str(afile / "cache")
    path = "/sys/frame-test-cache"  # no permission, even for root
    try:
        os.makedirs(path)
    except OSError:
        return path
    os.rmdir(path)
    pytest.skip("/sys accepts a new directory here")


@pytest.fixture
def fresh_warnings(monkeypatch):
    """Once-per-process WARN state reset, so that this test sees its WARN."""
    monkeypatch.setattr(persistent, "_warn_io", persistent._Once())
    try:
        from frame.backends.openvino import backend as ov_backend
    except ImportError:
        ov_backend = None
    if ov_backend is not None:
        monkeypatch.setattr(ov_backend, "_usable", {}, raising=False)
    capture.reset_caches()
    rc.clear_cache()
    reset_stats()
    yield
    capture.reset_caches()
    rc.clear_cache()


def _program():
    def step(x, w):
        y = (x @ w).relu() * 2.0 + 1.0
        return y.sum(axis=1), y
    return step


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["file", "under-a-file", "no-permission"])
def test_unusable_cache_dir_warns_once_and_runs_uncached(kind, backend, tmp_path, fresh_warnings,
                                                        caplog):
    cache_dir = _unusable(kind, tmp_path)
    caplog.set_level(logging.DEBUG, logger="frame.cache")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    w = rng.standard_normal((3, 5)).astype(np.float32)
    fn = _program()
    want = [t.numpy() for t in fn(frame.tensor(x), frame.tensor(w))]
    with frame.config.override(cache=True, cache_dir=cache_dir, tiered=False):
        jitted = frame.jit(fn, backend=backend)
        for scale in (1.0, 2.0, 3.0):  # three calls, two of them compiles (a new shape)
            xs = np.concatenate([x] * int(scale))
            got = [t.numpy() for t in jitted(frame.tensor(xs), frame.tensor(w))]
            ref = [t.numpy() for t in fn(frame.tensor(xs), frame.tensor(w))]
            for g, r in zip(got, ref):
                np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    assert [t.shape for t in want] == [(4,), (4, 5)]
    warns = [r for r in caplog.records if r.levelno >= logging.WARNING
             and r.name == "frame.cache"]
    assert warns, "an unusable cache directory must be reported"
    assert len([r for r in warns if "cannot write" in r.getMessage() or "cannot read" in
                r.getMessage()]) <= 1, [r.getMessage() for r in warns]
    if backend == "openvino":
        ov = [r for r in warns if "OpenVINO model cache" in r.getMessage()]
        assert len(ov) == 1, [r.getMessage() for r in warns]
    assert stats().compiles_by_backend.get(backend, 0) >= 2, stats().compiles_by_backend
    assert stats().extra.get("persistent_writes", 0) == 0
    assert stats().extra.get("capture_persistent_writes", 0) == 0
    assert not os.path.isdir(cache_dir)


def test_empty_cache_dir_setting_is_read_as_no_cache(monkeypatch):
    monkeypatch.setenv("FRAME_CACHE_DIR", "")
    assert frame.settings.Config.from_env().cache_dir == ""
    monkeypatch.delenv("FRAME_CACHE_DIR")
    assert frame.settings.Config.from_env().cache_dir  # unset: the default directory
    with frame.config.override(cache=True, cache_dir=""):
        assert persistent.active_store() is None
        if __import__("importlib").util.find_spec("openvino") is not None:
            from frame.backends.openvino import model_cache_dir
            assert model_cache_dir() is None


_EMPTY_DIR_SCRIPT = r"""
import importlib.util, numpy as np, frame
backends = ["cpu"] + (["openvino"] if importlib.util.find_spec("openvino") else [])
def f(x):
    return (x * 2.0 + 1.0).relu().sum()
for b in backends:
    g = frame.jit(f, backend=b)
    for n in (3, 4):
        x = frame.tensor(np.arange(n, dtype=np.float32))
        assert float(g(x).numpy()) == float(f(x).numpy())
print("store", frame.runtime.persistent.active_store())
print("writes", frame.stats().extra.get("persistent_writes", 0),
      frame.stats().extra.get("capture_persistent_writes", 0))
"""


def test_empty_cache_dir_writes_no_cache_anywhere(tmp_path):
    """FRAME_CACHE_DIR='' with the cache on: neither frame's entries, nor capture's
    translations, nor OpenVINO's model cache are written (HOME and XDG_CACHE_HOME
    point at an empty directory, which must stay empty)."""
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), FRAME_CACHE_DIR="", FRAME_CACHE="1", FRAME_TIERED="0",
               PYTHONPATH=ROOT)
    env.pop("XDG_CACHE_HOME", None)
    done = subprocess.run([sys.executable, "-c", _EMPTY_DIR_SCRIPT], env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "store None" in done.stdout and "writes 0 0" in done.stdout, done.stdout
    assert not list(home.rglob("*")), [str(p) for p in home.rglob("*")]


class _RacingCore:
    """An ov.Core whose compile_model fails while the model cache is on, as OpenVINO's
    does when several processes write one cache entry at once (docs/distributed.md)."""

    def __init__(self, core):
        self._core = core
        self.configs = []

    def __getattr__(self, name):
        return getattr(self._core, name)

    def compile_model(self, model, device, config):
        self.configs.append(dict(config))
        if "CACHE_DIR" in config:
            raise RuntimeError("Exception from src/inference/src/cpp/core.cpp:112:\n"
                               "filesystem error: cannot set permissions: No such file or "
                               "directory [/cache/123.blob]")
        return self._core.compile_model(model, device, config)


def test_openvino_compile_failing_in_the_model_cache_compiles_without_it(tmp_path, monkeypatch,
                                                                         caplog):
    from frame.backends.openvino.backend import OpenVinoBackend
    from frame.hal import CompileOptions
    from frame.ir import GraphBuilder

    monkeypatch.setattr(frame.config, "cache_dir", str(tmp_path))
    monkeypatch.setattr(frame.config, "cache", True)
    backend = OpenVinoBackend()
    backend.core = racing = _RacingCore(backend.core)
    b = GraphBuilder()
    x = b.input(frame.float32, (3,))
    graph = b.build(b.op("tanh", x))
    with caplog.at_level(logging.WARNING, logger="frame.cache"):
        exe = backend.compile(graph, CompileOptions())
    (out,) = exe.run([np.array([0.0, 1.0, -2.0], np.float32)])
    np.testing.assert_allclose(out, np.tanh([0.0, 1.0, -2.0]), rtol=1e-6)
    assert ["CACHE_DIR" in c for c in racing.configs] == [True, False]
    assert any("compiling this model without it" in r.getMessage() for r in caplog.records)
