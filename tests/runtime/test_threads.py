"""frame.runtime.threads: the thread settings parse, override, and are applied
(threadpoolctl sees the BLAS limit; OpenVINO's compiled model reports its
INFERENCE_NUM_THREADS / ENABLE_CPU_PINNING)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import frame
from frame.ir import GraphBuilder
from frame.runtime import compile as rc
from frame.runtime import threads
from frame.settings import Config

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


@pytest.fixture(autouse=True)
def fresh():
    """Every test starts from the process's own pools and leaves them so."""
    rc.clear_cache()
    threads.reset()
    yield
    rc.clear_cache()
    threads.reset()


def graph(elements: int, const: float = 1.5):
    b = GraphBuilder()
    x = b.input(frame.float32, (elements,))
    return b.build(b.op("relu", b.op("mul", x, b.scalar(const, like=x))))


# --------------------------------------------------------------------------- parsing

ENV = ("FRAME_BLAS_THREADS", "FRAME_OV_THREADS", "FRAME_OV_PINNING")


def test_env_unset_means_frames_rule(monkeypatch):
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    cfg = Config.from_env()
    assert (cfg.blas_threads, cfg.ov_threads, cfg.ov_pinning) == (None, None, None)
    for var in ENV:
        monkeypatch.setenv(var, "")
    cfg = Config.from_env()
    assert (cfg.blas_threads, cfg.ov_threads, cfg.ov_pinning) == (None, None, None)


def test_env_values_parse(monkeypatch):
    monkeypatch.setenv("FRAME_BLAS_THREADS", "3")
    monkeypatch.setenv("FRAME_OV_THREADS", "0")
    monkeypatch.setenv("FRAME_OV_PINNING", "off")
    cfg = Config.from_env()
    assert (cfg.blas_threads, cfg.ov_threads, cfg.ov_pinning) == (3, 0, False)
    monkeypatch.setenv("FRAME_OV_PINNING", "1")
    assert Config.from_env().ov_pinning is True


@pytest.mark.parametrize("bad", ["-1", "two", "1.5"])
def test_env_bad_thread_count_is_an_error(monkeypatch, bad):
    monkeypatch.setenv("FRAME_BLAS_THREADS", bad)
    with pytest.raises(ValueError, match="FRAME_BLAS_THREADS"):
        Config.from_env()


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True])
def test_config_bad_thread_count_is_an_error(bad):
    with pytest.raises(ValueError, match="frame.config.ov_threads"):
        frame.config.ov_threads = bad
    assert frame.config.ov_threads is None


def test_override_restores():
    with frame.config.override(blas_threads=1, ov_threads=2, ov_pinning=False):
        assert (frame.config.blas_threads, frame.config.ov_threads, frame.config.ov_pinning) == (1, 2, False)
    assert (frame.config.blas_threads, frame.config.ov_threads, frame.config.ov_pinning) == (None, None, None)


# --------------------------------------------------------------------------- BLAS

def test_blas_limit_applied_by_a_compile_and_restored():
    before = blas_threads()
    assert before, "NumPy's BLAS is not visible to threadpoolctl"
    with frame.config.override(blas_threads=1):
        rc.compile(graph(8), "cpu")
        assert blas_threads() == [1] * len(before)
        assert threads.current()["blas_limit"] == 1
        with frame.config.override(blas_threads=0):  # 0: the library's own size again
            rc.compile(graph(8, const=2.5), "cpu")
            assert blas_threads() == before
    threads.reset()
    assert blas_threads() == before


def test_blas_limit_applied_by_a_jitted_call():
    with frame.config.override(blas_threads=1):
        f = frame.jit(lambda x: (x @ x).relu(), backend="cpu")
        x = frame.tensor(np.eye(4, dtype=np.float32))
        np.testing.assert_array_equal(f(x).numpy(), np.eye(4, dtype=np.float32))
        assert set(blas_threads()) == {1}


def test_blas_limit_env_in_a_fresh_process():
    code = ("import numpy as np, frame\n"
            "from threadpoolctl import threadpool_info\n"
            "f = frame.jit(lambda x: x * 2, backend='cpu')\n"
            "f(frame.tensor(np.ones(3, np.float32)))\n"
            "print([i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'])\n")
    env = dict(os.environ, FRAME_BLAS_THREADS="1", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert set(eval(out.strip().splitlines()[-1])) == {1}


# --------------------------------------------------------------------------- OpenVINO

ov = pytest.importorskip("openvino")


@pytest.fixture
def untiered():
    """``rc.compile(graph, "openvino")`` returns the OpenVINO executable itself
    (under tiered compilation, FRAME_TEST_SETTING=default or cpu, it would be
    a TieredExecutable starting on the cpu tier)."""
    with frame.config.override(tiered=False):
        yield


def _compiled_property(exe, name):
    return exe._compiled.get_property(name)


def test_openvino_threads_reported_by_the_compiled_model(untiered):
    big = 1 << 17  # above the one-thread rule for small graphs
    with frame.config.override(ov_threads=1):
        exe = rc.compile(graph(big), "openvino")
        assert int(_compiled_property(exe, "INFERENCE_NUM_THREADS")) == 1
    with frame.config.override(ov_threads=2):
        exe = rc.compile(graph(big, const=2.5), "openvino")
        assert int(_compiled_property(exe, "INFERENCE_NUM_THREADS")) == 2
    x = np.linspace(-1, 1, big, dtype=np.float32)
    np.testing.assert_array_equal(exe.run([x])[0], np.maximum(x * np.float32(2.5), 0))


def test_openvino_pinning_reported_by_the_compiled_model(untiered):
    for pin in (False, True):
        with frame.config.override(ov_pinning=pin):
            exe = rc.compile(graph(1 << 17, const=1.0 + pin), "openvino")
            assert bool(_compiled_property(exe, "ENABLE_CPU_PINNING")) is pin


def test_small_graph_rule_still_wins(untiered):
    with frame.config.override(ov_threads=2):
        exe = rc.compile(graph(16), "openvino")
        assert int(_compiled_property(exe, "INFERENCE_NUM_THREADS")) == 1


def test_openvino_zero_leaves_the_library_default(untiered):
    from frame.hal import get_backend
    with frame.config.override(ov_threads=3):
        rc.compile(graph(1 << 17), "openvino")
    with frame.config.override(ov_threads=0, ov_pinning=None):
        rc.compile(graph(1 << 17, const=3.5), "openvino")
        core = get_backend("openvino").core
        assert int(core.get_property("CPU", "INFERENCE_NUM_THREADS")) == 0


# --------------------------------------------------------------------------- frame's rule

def test_rule_openvino_takes_the_cores_from_blas():
    before = blas_threads()
    rc.compile(graph(8), "cpu")
    assert blas_threads() == before, "the cpu backend alone leaves BLAS as it is"
    rc.compile(graph(1 << 17), "openvino")
    assert set(blas_threads()) == {1}
    assert threads.current()["blas_limit"] == 1


def test_rule_can_be_overridden():
    before = blas_threads()
    with frame.config.override(blas_threads=0):
        rc.compile(graph(1 << 17), "openvino")
        assert blas_threads() == before


def test_rule_leaves_openvino_its_own_threads_and_pinning(untiered):
    from frame.hal import get_backend
    exe = rc.compile(graph(1 << 17), "openvino")
    core = get_backend("openvino").core
    assert int(core.get_property("CPU", "INFERENCE_NUM_THREADS")) == 0
    assert threads.current()["openvino"] == {}
    assert bool(_compiled_property(exe, "ENABLE_CPU_PINNING")) is bool(
        core.get_property("CPU", "ENABLE_CPU_PINNING"))


def test_rule_applies_with_the_default_backend_in_a_fresh_process():
    code = ("import numpy as np, frame\n"
            "from threadpoolctl import threadpool_info\n"
            "f = frame.jit(lambda x: (x @ x).relu())\n"
            "x = frame.tensor(np.eye(8, dtype=np.float32))\n"
            "for _ in range(3): f(x)\n"
            "print([i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'])\n")
    env = dict(os.environ, PYTHONPATH=ROOT, FRAME_BACKEND="", FRAME_TIERED="1")
    env.pop("FRAME_BLAS_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=300).stdout
    assert set(eval(out.strip().splitlines()[-1])) == {1}


def test_rule_stays_after_openvino_when_the_cpu_backend_compiles():
    rc.compile(graph(1 << 17), "openvino")
    rc.compile(graph(8, const=4.5), "cpu")
    assert set(blas_threads()) == {1}


def test_openvino_threads_apply_to_a_model_loaded_from_the_persistent_cache(tmp_path, monkeypatch):
    from frame.runtime.stats import reset_stats, stats
    monkeypatch.setenv("FRAME_CACHE_DIR", str(tmp_path))
    with frame.config.override(cache=True, cache_dir=str(tmp_path), tiered=False):
        reset_stats()
        with frame.config.override(ov_threads=2):
            rc.compile(graph(1 << 17, const=5.5), "openvino")
        assert stats().extra.get("persistent_writes", 0) == 1
        rc.clear_cache()
        with frame.config.override(ov_threads=1):
            exe = rc.compile(graph(1 << 17, const=5.5), "openvino")
        assert stats().extra.get("persistent_hits", 0) == 1
        assert int(_compiled_property(exe, "INFERENCE_NUM_THREADS")) == 1
