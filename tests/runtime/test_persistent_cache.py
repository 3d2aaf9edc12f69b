"""The persistent compile cache (frame/runtime/persistent.py): warm starts
across processes, damaged entries, concurrent processes, eviction, the
command line, and the backends' serialize/deserialize hooks."""
from __future__ import annotations

import json
import logging
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest

import frame
from frame.hal import CompileOptions, get_backend
from frame.ir import GraphBuilder
from frame.passes import PassManager
from frame.runtime import compile as rc
from frame.runtime import persistent
from frame.runtime.fallback import FallbackExecutable
from frame.runtime.stats import reset_stats, stats

from .tiny_backend import tiny

ROOT = str(pathlib.Path(__file__).resolve().parents[2])

# ---------------------------------------------------------------------------- subprocesses

# Compiles four graphs: a jitted function (capture -> openvino), a graph with a
# large constant (a payload stored beside the text) on cpu and on openvino, and
# an openvino graph whose outputs include an input and a constant (no model
# output for those).  Prints outputs and counters as JSON; WARN lines go to stderr.
CHILD = r"""
import json, sys
import numpy as np
import frame
from frame.ir import GraphBuilder
from frame.runtime.compile import compile as runtime_compile

rng = np.random.default_rng(7)
x = rng.standard_normal((8, 16)).astype(np.float32)
w = rng.standard_normal((16, 4)).astype(np.float32)

@frame.jit(backend="openvino")
def mlp(x, w):
    return frame.tanh(frame.relu(x @ w) * 0.5 + 1.0)

def big_constant_graph():
    b = GraphBuilder()
    xi = b.input("float32", (8, 16))
    c = b.constant(np.linspace(-1, 1, 8 * 16, dtype=np.float32).reshape(8, 16))
    return b.build(b.op("exp", b.op("mul", b.op("add", xi, c), b.scalar(0.25, like=xi))))

def passthrough_graph():
    b = GraphBuilder()
    xi = b.input("float32", (8, 16))
    return b.build(b.op("sqrt", b.op("abs", xi)), xi, b.constant(np.arange(3, dtype=np.float32)))

outs = {"jit": mlp(frame.tensor(x), frame.tensor(w)).numpy()}
outs["cpu_const"] = runtime_compile(big_constant_graph(), "cpu").run([x])[0]
outs["ov_const"] = runtime_compile(big_constant_graph(), "openvino").run([x])[0]
for i, o in enumerate(runtime_compile(passthrough_graph(), "openvino").run([x])):
    outs[f"ov_pass{i}"] = o
s = frame.stats()
print(json.dumps({"outputs": {k: np.asarray(v).tolist() for k, v in outs.items()},
                  "compiles": s.compiles_by_backend, "translations": s.translations,
                  "extra": s.extra}))
"""
N_ENTRIES = 4  # graphs CHILD compiles, all persistable
N_RECORDS = 1  # capture's stored translation of mlp (CHILD runs as a script file)


def _env(cache_dir: pathlib.Path) -> dict[str, str]:
    env = dict(os.environ, FRAME_CACHE_DIR=str(cache_dir), FRAME_CACHE="1", FRAME_TIERED="0",
               PYTHONPATH=ROOT)
    env.pop("FRAME_BACKEND", None)
    return env


def _script(cache_dir: pathlib.Path) -> str:
    """CHILD as a file beside the cache (the same path in every run: a stored
    translation is found again by its function's file)."""
    path = cache_dir.parent / f"{cache_dir.name}-child.py"
    path.write_text(CHILD)
    return str(path)


def _run_child(cache_dir: pathlib.Path) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, _script(cache_dir)], env=_env(cache_dir), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "persistent compile cache" in line]


def _corrupt_every_file(root: pathlib.Path) -> int:
    """Flip bytes in half the files and truncate the others (OpenVINO's own
    model cache files included)."""
    n = 0
    for i, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
        path.chmod(0o644)  # OpenVINO writes its cache files read-only
        data = bytearray(path.read_bytes())
        if i % 2 and len(data) > 1:
            data = data[:len(data) // 2]
        else:
            for k in range(0, len(data), 97):
                data[k] ^= 0x5A
        path.write_bytes(bytes(data))
        n += 1
    return n


def _assert_same_outputs(a: dict, b: dict) -> None:
    assert a["outputs"].keys() == b["outputs"].keys()
    for key in a["outputs"]:
        np.testing.assert_array_equal(np.array(a["outputs"][key]), np.array(b["outputs"][key]),
                                      err_msg=key)


@pytest.fixture(scope="module")
def warm_runs(tmp_path_factory):
    """Runs 1 and 2 of CHILD on one fresh cache directory (shared by two tests)."""
    cache = tmp_path_factory.mktemp("frame-cache")
    first, first_err = _run_child(cache)
    second, second_err = _run_child(cache)
    return cache, (first, first_err), (second, second_err)


def test_second_run_hits_and_does_not_compile(warm_runs):
    cache, (first, _), (second, second_err) = warm_runs
    assert first["extra"].get("persistent_hits", 0) == 0
    assert first["extra"]["persistent_writes"] == N_ENTRIES + N_RECORDS
    assert first["compiles"] == {"openvino": 3, "cpu": 1}
    assert second["extra"]["persistent_hits"] == N_ENTRIES
    assert second["extra"].get("persistent_misses", 0) == 0
    assert second["compiles"] == {}, "a warm run compiled"
    assert first["translations"] == 1 and first["extra"]["capture_persistent_writes"] == N_RECORDS
    assert second["translations"] == 0, "a warm run translated"
    assert second["extra"]["capture_persistent_hits"] == N_RECORDS
    assert not _warnings(second_err)
    _assert_same_outputs(first, second)
    assert len(list((cache / "compiled").glob("*.fce"))) == N_ENTRIES + N_RECORDS


def test_corrupt_entries_are_recompiled_with_one_warning(warm_runs):
    cache, (first, _), _ = warm_runs
    assert _corrupt_every_file(cache) >= N_ENTRIES + N_RECORDS
    third, third_err = _run_child(cache)
    warnings = _warnings(third_err)
    assert len(warnings) == 1, third_err
    assert "ignoring" in warnings[0] and "again" in warnings[0]
    assert third["extra"]["persistent_invalid"] == N_ENTRIES + N_RECORDS
    assert third["extra"].get("persistent_hits", 0) == 0
    assert third["compiles"] == {"openvino": 3, "cpu": 1} and third["translations"] == 1
    _assert_same_outputs(first, third)
    # the entries were rewritten: the next run is warm again
    fourth, fourth_err = _run_child(cache)
    assert fourth["extra"]["persistent_hits"] == N_ENTRIES and fourth["compiles"] == {}
    assert fourth["translations"] == 0
    assert not _warnings(fourth_err)
    _assert_same_outputs(first, fourth)


def test_two_processes_on_an_empty_cache(tmp_path):
    script = _script(tmp_path)
    procs = [subprocess.Popen([sys.executable, script], env=_env(tmp_path), cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert not _warnings(err), err
        results.append(json.loads(out.strip().splitlines()[-1]))
    _assert_same_outputs(results[0], results[1])
    entries = list((tmp_path / "compiled").glob("*.fce"))
    assert len(entries) == N_ENTRIES + N_RECORDS
    assert not list((tmp_path / "compiled").glob(".tmp-*")), "a temporary file was left behind"
    third, _ = _run_child(tmp_path)
    assert third["extra"]["persistent_hits"] == N_ENTRIES and third["compiles"] == {}
    assert third["translations"] == 0
    _assert_same_outputs(results[0], third)


# ---------------------------------------------------------------------------- in process

@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """Persistent cache on, in a fresh directory (OpenVINO's model cache beside
    it); empty in-process cache and counters."""
    rc.clear_cache()
    reset_stats()
    monkeypatch.setenv("FRAME_CACHE_DIR", str(tmp_path))
    with frame.config.override(cache=True, cache_dir=str(tmp_path), tiered=False):
        yield tmp_path
    rc.clear_cache()


def graph(scale=1.5, shape=(4, 6)):
    b = GraphBuilder()
    x = b.input("float32", shape)
    y = b.input("float32", shape)
    s = b.op("tanh", b.op("mul", b.op("add", x, y), b.scalar(scale, like=x)))
    return b.build(b.op("relu", s), b.op("exp", s))


def inputs(shape=(4, 6)):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]


@pytest.fixture
def pass_runs(monkeypatch):
    runs = []
    original = PassManager.run

    def counting(self, g):
        runs.append(self.names)
        return original(self, g)
    monkeypatch.setattr(PassManager, "run", counting)
    return runs


def entries(root) -> list[pathlib.Path]:
    return sorted(pathlib.Path(root, "compiled").glob("*.fce"))


def test_cpu_hit_runs_no_pass(cache_dir, pass_runs):
    exe = rc.compile(graph(), "cpu")
    assert len(pass_runs) == 1 and len(entries(cache_dir)) == 1
    rc.clear_cache()
    loaded = rc.compile(graph(), "cpu")
    assert len(pass_runs) == 1, "a persistent hit ran the pass pipeline"
    assert loaded is not exe and loaded.source == exe.source
    assert loaded.plan == exe.plan
    for a, b in zip(exe.run(inputs()), loaded.run(inputs())):
        np.testing.assert_array_equal(a, b)
    s = stats()
    assert (s.extra["persistent_hits"], s.extra["persistent_misses"], s.compiles) == (1, 1, 1)
    assert s.extra["persistent_bytes_read"] == entries(cache_dir)[0].stat().st_size
    assert s.extra_times["persistent_load"] > 0


def test_openvino_hit_imports_the_exported_model(cache_dir, pass_runs):
    exe = rc.compile(graph(), "openvino")
    rc.clear_cache()
    loaded = rc.compile(graph(), "openvino")
    assert type(loaded).__name__ == "OpenVinoExecutable" and loaded is not exe
    assert len(pass_runs) == 1 and stats().compiles_by_backend == {"openvino": 1}
    for a, b in zip(exe.run(inputs()), loaded.run(inputs())):
        np.testing.assert_array_equal(a, b)


def test_a_loaded_openvino_executable_parses_its_graph_only_for_a_reference_rerun(cache_dir):
    b = GraphBuilder()
    table = b.input("float32", (5, 3))
    index = b.input("int32", (4,))
    g = b.build(b.op("exp", b.op("take", table, index, axis=0)))
    data = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    rc.compile(g, "openvino")
    rc.clear_cache()
    loaded = rc.compile(g, "openvino")
    assert type(loaded).__name__ == "OpenVinoExecutable" and loaded._graph_value is None
    ok = np.array([0, 4, 2, 2], np.int32)
    np.testing.assert_allclose(loaded.run([data, ok])[0], np.exp(data[ok]), rtol=1e-6)
    assert loaded._graph_value is None, "a plain run parsed the graph"
    with pytest.raises(IndexError):  # out of range: the reference re-run raises its error
        loaded.run([data, np.array([0, 9, 1, 1], np.int32)])
    assert loaded._graph_value is not None


_OPENVINO_CACHE_CHILD = """
import json
import numpy as np
import frame
from frame.backends.openvino import persist
from frame.ir import GraphBuilder
from frame.runtime.compile import compile as runtime_compile
seen = []
real = persist.loaded_from_cache
persist.loaded_from_cache = lambda exe: seen.append(real(exe)) or seen[-1]
b = GraphBuilder()
x = b.input("float32", (4, 6))
s = b.op("tanh", b.op("mul", b.op("add", x, x), b.scalar(1.5, like=x)))
out = runtime_compile(b.build(b.op("relu", s), b.op("exp", s)), "openvino").run(
    [np.linspace(-2, 2, 24, dtype=np.float32).reshape(4, 6)])
st = frame.stats()
print(json.dumps({"from_openvino_cache": seen[:1], "compiles": st.compiles_by_backend,
                  "extra": st.extra, "out": [o.tolist() for o in out]}))
"""


def test_a_model_from_openvinos_own_cache_is_persisted_too(tmp_path):
    """OpenVINO's model cache holds the compiled model, frame's store does not
    (e.g. after an upgrade of frame): the entry is written anyway, and loads.
    (Subprocesses: OpenVINO keeps the first CACHE_DIR a process compiled with.)"""
    def child(**env):
        proc = subprocess.run([sys.executable, "-c", _OPENVINO_CACHE_CHILD], cwd=ROOT,
                              env=dict(_env(tmp_path), **env), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])
    first = child()
    for entry in entries(tmp_path):  # frame's entries go, OpenVINO's model cache stays
        entry.unlink()
    assert entries(tmp_path) == [] and any((tmp_path / "openvino").iterdir())
    second = child()
    assert second["from_openvino_cache"] == [True], "OpenVINO did not use its cache"
    assert second["extra"]["persistent_writes"] == 1 and len(entries(tmp_path)) == 1
    third = child()
    assert third["extra"]["persistent_hits"] == 1 and third["compiles"] == {}
    assert first["out"] == second["out"] == third["out"]


def test_each_difference_is_another_entry(cache_dir):
    rc.compile(graph(), "cpu")
    rc.compile(graph(scale=2.5), "cpu")
    rc.compile(graph(shape=(3, 6)), "cpu")
    rc.compile(graph(), "cpu", CompileOptions(fusion=False))
    rc.compile(graph(), "openvino")
    assert len(entries(cache_dir)) == 5


def test_disabled_writes_nothing(tmp_path, pass_runs):
    rc.clear_cache()
    with frame.config.override(cache=False, cache_dir=str(tmp_path), tiered=False):
        rc.compile(graph(), "cpu")
        rc.clear_cache()
        rc.compile(graph(), "cpu")
    assert len(pass_runs) == 2
    assert not (tmp_path / "compiled").exists()


def test_unserializable_executables_are_not_persisted(cache_dir):
    rc.compile(graph(), "tiny")  # the test backend has no serialize
    b = GraphBuilder()  # float64 arithmetic is not exact on OpenVINO's CPU plugin: fallback
    x = b.input("float64", (3,))
    fb = rc.compile(b.build(b.op("exp", b.op("add", x, x))), "openvino")
    assert isinstance(fb, FallbackExecutable)
    assert entries(cache_dir) == []
    assert stats().extra.get("persistent_writes", 0) == 0


def _damage(path: pathlib.Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[:len(data) // 3])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "flipped":
        b = bytearray(data)
        b[len(b) // 2] ^= 1
        path.write_bytes(bytes(b))
    elif how == "garbage":
        path.write_bytes(os.urandom(len(data)))


@pytest.mark.parametrize("how", ["truncated", "empty", "flipped", "garbage"])
def test_damaged_entry_is_ignored_once_and_rewritten(cache_dir, how, caplog, pass_runs):
    first = [o.copy() for o in rc.compile(graph(), "cpu").run(inputs())]
    (entry,) = entries(cache_dir)
    _damage(entry, how)
    rc.clear_cache()
    with caplog.at_level(logging.DEBUG, logger="frame.cache"):
        again = rc.compile(graph(), "cpu").run(inputs())
    assert len(pass_runs) == 2, "the damaged entry was not compiled again"
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert any("ignoring entry" in r.message for r in caplog.records)
    assert stats().extra["persistent_invalid"] == 1
    assert entry.exists() and entry.stat().st_size > 100  # rewritten whole
    rc.clear_cache()
    rc.compile(graph(), "cpu")
    assert len(pass_runs) == 2 and stats().extra["persistent_hits"] == 1


def test_only_the_first_invalid_entry_warns(cache_dir, caplog, monkeypatch):
    monkeypatch.setattr(persistent, "_warn_invalid", persistent._Once())
    for scale in (1.0, 2.0, 3.0):
        rc.compile(graph(scale), "cpu")
    for path in entries(cache_dir):
        _damage(path, "flipped")
    rc.clear_cache()
    with caplog.at_level(logging.DEBUG, logger="frame.cache"):
        for scale in (1.0, 2.0, 3.0):
            rc.compile(graph(scale), "cpu")
    levels = [r.levelno for r in caplog.records if "ignoring entry" in r.message]
    assert levels == [logging.WARNING, logging.DEBUG, logging.DEBUG]
    assert stats().extra["persistent_invalid"] == 3


def test_version_mismatch_is_ignored(cache_dir, monkeypatch, caplog, pass_runs):
    rc.compile(graph(), "cpu")
    cpu = get_backend("cpu")
    monkeypatch.setattr(type(cpu), "artifact_version", lambda self, options: "cpu-codegen/999")
    rc.clear_cache()
    with caplog.at_level(logging.DEBUG, logger="frame.cache"):
        rc.compile(graph(), "cpu")
    assert len(pass_runs) == 2
    assert any("version mismatch" in r.message for r in caplog.records)


def test_an_entry_under_the_wrong_name_is_ignored(cache_dir, pass_runs):
    """A file of another graph (e.g. copied by hand) never serves this graph."""
    rc.compile(graph(scale=1.0), "cpu")
    (other,) = entries(cache_dir)
    store = persistent.active_store()
    target = pathlib.Path(store.path_for(rc.cache_key(graph(scale=2.0), "cpu", CompileOptions()),
                                         "cpu"))
    target.write_bytes(other.read_bytes())
    rc.clear_cache()
    out = rc.compile(graph(scale=2.0), "cpu").run(inputs())
    assert len(pass_runs) == 2 and stats().extra["persistent_invalid"] == 1
    ref = rc._build(graph(scale=2.0), "cpu", CompileOptions()).run(inputs())
    for a, b in zip(out, ref):
        np.testing.assert_array_equal(a, b)


def test_a_generator_change_is_refused(cache_dir, monkeypatch, pass_runs):
    """The cpu artifact is regenerated on load; a different generated source is refused."""
    from frame.backends.cpu import persist
    rc.compile(graph(), "cpu")
    real = persist._sha256
    monkeypatch.setattr(persist, "_sha256", lambda text: real(text + "# changed generator"))
    rc.clear_cache()
    rc.compile(graph(), "cpu")
    assert len(pass_runs) == 2 and stats().extra["persistent_invalid"] == 1


def test_lru_eviction_by_size(tmp_path):
    def put(scale: float, max_bytes: int) -> str:
        with frame.config.override(cache=True, cache_dir=str(tmp_path), cache_max_bytes=max_bytes,
                                   tiered=False):
            rc.clear_cache()
            rc.compile(graph(scale), "cpu")
            return persistent.active_store().path_for(
                rc.cache_key(graph(scale), "cpu", CompileOptions()), "cpu")

    paths = {1.0: put(1.0, 1 << 30)}
    bound = int(os.stat(paths[1.0]).st_size * 3.5)  # room for three entries
    paths[2.0] = put(2.0, bound)
    paths[3.0] = put(3.0, bound)
    for k, scale in enumerate((1.0, 2.0, 3.0)):
        os.utime(paths[scale], (1000 + k, 1000 + k))  # 1.0 oldest, 3.0 newest
    reset_stats()
    put(1.0, bound)  # a hit refreshes the entry: 1.0 is now the most recently used
    assert stats().extra["persistent_hits"] == 1
    paths[4.0] = put(4.0, bound)  # a fourth entry: over the bound
    left = {scale for scale, p in paths.items() if os.path.exists(p)}
    assert left == {1.0, 3.0, 4.0}, "the least recently used entry (2.0) should have gone"
    assert stats().extra["persistent_evictions"] == 1
    assert sum(p.stat().st_size for p in entries(tmp_path)) <= bound
    rc.clear_cache()


def test_stale_temporary_files_are_removed(tmp_path):
    store = persistent.PersistentCache(str(tmp_path), 1 << 20)
    os.makedirs(store.dir)
    stale = pathlib.Path(store.dir, ".tmp-1-2-3")
    fresh = pathlib.Path(store.dir, ".tmp-4-5-6")
    stale.write_bytes(b"x")
    fresh.write_bytes(b"y")
    os.utime(stale, (1, 1))
    store.evict(0)
    assert not stale.exists() and fresh.exists()  # another process may be writing fresh


def test_threads_writing_one_entry(cache_dir):
    """Concurrent writers of one entry (as two processes would): one whole entry."""
    store = persistent.active_store()
    cpu = get_backend("cpu")
    from frame.ir.clone import clone_graph
    from frame.passes import standard_pipeline
    work = PassManager(standard_pipeline(cpu, CompileOptions())).run(clone_graph(graph()))
    exe = cpu.compile(work, CompileOptions())
    key = rc.cache_key(graph(), "cpu", CompileOptions())
    barrier = threading.Barrier(8)

    def write():
        barrier.wait()
        for _ in range(5):
            assert store.save(key, cpu, work, exe, CompileOptions())
    threads = [threading.Thread(target=write) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(entries(cache_dir)) == 1
    assert not list(pathlib.Path(store.dir).glob(".tmp-*"))
    loaded = store.load(key, "cpu", CompileOptions())
    assert loaded is not None and loaded.source == exe.source


def test_command_line_info_and_clear(cache_dir, capsys):
    from frame.__main__ import main
    rc.compile(graph(), "cpu")
    rc.compile(graph(), "openvino")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "entries:   2 (cpu 1, openvino 1)" in out and str(cache_dir) in out
    assert main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out
    assert entries(cache_dir) == []
    main(["cache", "info"])
    assert "entries:   0" in capsys.readouterr().out


def test_command_line_runs_as_a_module(tmp_path):
    env = _env(tmp_path)
    out = subprocess.run([sys.executable, "-m", "frame", "cache", "info"], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert "frame compile cache" in out and "entries:   0" in out


def test_artifact_round_trips_through_json():
    """meta must survive JSON: what the store writes is what the backend reads."""
    cpu = get_backend("cpu")
    from frame.hal.backend import Artifact
    from frame.ir.clone import clone_graph
    from frame.passes import standard_pipeline
    b = GraphBuilder()
    x = b.input("float32", (5, 7))
    big = b.constant(np.arange(35, dtype=np.float32).reshape(5, 7))
    g = b.build(b.op("mul", b.op("add", x, big), x), big)
    work = PassManager(standard_pipeline(cpu, CompileOptions())).run(clone_graph(g))
    exe = cpu.compile(work, CompileOptions())
    art = cpu.serialize(work, exe, CompileOptions())
    again = cpu.deserialize(Artifact(json.loads(json.dumps(art.meta)), dict(art.blobs)),
                            CompileOptions())
    xs = [np.linspace(0, 1, 35, dtype=np.float32).reshape(5, 7)]
    for a, b_ in zip(exe.run(xs), again.run(xs)):
        np.testing.assert_array_equal(a, b_)


def test_a_backend_without_serialize_compiles_every_time(cache_dir):
    b = GraphBuilder()  # add, mul, relu: the tiny test backend compiles it whole
    x = b.input("float32", (4,))
    g = b.build(b.op("relu", b.op("mul", b.op("add", x, x), b.scalar(2.0, like=x))))
    before = len(tiny().compiled_graphs)
    rc.compile(g, "tiny")
    rc.clear_cache()
    rc.compile(g, "tiny")
    assert len(tiny().compiled_graphs) == before + 2
    assert entries(cache_dir) == []


def test_the_key_does_not_depend_on_whether_openvino_is_imported():
    """The tiered path computes openvino keys before OpenVINO is imported, the
    untiered one after: both must name the same entry."""
    import openvino  # noqa: F401  (imported here, not in the child)
    code = ("import sys; from frame.runtime import persistent; "
            "print(persistent.entry_digest('k', 'openvino')); print('openvino' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHONPATH=ROOT)).stdout.split()
    assert out == [persistent.entry_digest("k", "openvino"), "False"]
