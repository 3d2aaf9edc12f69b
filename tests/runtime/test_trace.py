"""FRAME_TRACE_DIR (frame/runtime/trace.py, capture/tracing.py) and the HTML page
``python -m frame trace-report`` renders from it (frame/trace_report.py).

Each test records into a directory of its own and reads the JSON lines back:
translations with guards and graph regions, breaks at their source line,
graphs with their IR before and after the passes, recompiles with the failing
guard, fallbacks, tier events linked to the translation that asked for the
graph, one file per process.  Jitted results are compared with plain calls."""
from __future__ import annotations

import inspect
import json
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import frame
from frame import trace_report
from frame.runtime import trace
from tests.runtime.test_pgo import pgo, run_until_decided  # noqa: F401 (pgo: a fixture)

ROOT = str(pathlib.Path(__file__).resolve().parents[2])


def _records(directory) -> list[dict]:
    files = sorted(pathlib.Path(directory).glob("frame-trace-*.jsonl"))
    assert len(files) == 1, files
    return [json.loads(line) for line in files[0].read_text().splitlines()]


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture
def trace_dir(tmp_path):
    directory = tmp_path / "traces"
    with frame.config.override(trace_dir=str(directory)):
        yield directory
    trace.close()


def with_break(x, w):
    y = frame.relu(x @ w)
    print("between the graphs")   # a graph break
    z = (y * 2).sum()
    return z


def test_translations_breaks_graphs_and_recompiles_are_recorded(trace_dir, capsys):
    x = frame.tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    w = frame.tensor(np.ones((3, 5), np.float32))
    f = frame.jit(with_break, backend="cpu")
    for _ in range(2):
        np.testing.assert_allclose(f(x, w).numpy(), with_break(x, w).numpy())
    x2 = frame.tensor(np.ones((2, 3), np.float32))
    np.testing.assert_allclose(f(x2, w).numpy(), with_break(x2, w).numpy())
    records = _records(trace_dir)

    assert records[0]["event"] == "process" and records[0]["pid"] == os.getpid()
    assert records[0]["settings"]["trace_dir"] == str(trace_dir)
    assert all(r["t"] >= 0 for r in records)
    file = os.path.abspath(__file__)
    sources = [r for r in records if r["event"] == "source"]
    assert [r["file"] for r in sources] == [file]
    assert "def with_break(x, w):" in sources[0]["text"]

    break_line = _line_of(with_break, "print(")
    first_line = _line_of(with_break, "frame.relu")
    last_line = _line_of(with_break, "return z")
    translations = [r for r in records if r["event"] == "translation"]
    top = [t for t in translations if not t["resume"]]
    rest = [t for t in translations if t["resume"]]
    assert len(top) == 2 and len(rest) == 2   # (4, 3) and (2, 3): each a graph and its resume
    assert all(t["function"] == "with_break" and t["file"] == file for t in translations)
    assert top[0]["kind"] == "break" and top[0]["backend"] == "cpu"
    assert top[0]["reason"]["kind"] == "unsupported_call" and top[0]["reason"]["line"] == break_line
    # the graph before the break covers the lines up to it; the resume's covers the rest
    assert first_line in top[0]["lines"] and last_line not in top[0]["lines"]
    assert last_line in rest[0]["lines"] and first_line not in rest[0]["lines"]
    assert top[0]["ops"] == ["matmul", "relu"] and rest[0]["ops"] == ["mul", "sum"]
    assert "L['x']: Tensor float32[4, 3]" in top[0]["guards"]
    assert "L['x']: Tensor float32[2, 3]" in top[1]["guards"]

    breaks = [r for r in records if r["event"] == "break"]
    assert breaks and all(b["line"] == break_line and b["graph_break"] for b in breaks)
    assert "print" in breaks[0]["reason"] and breaks[0]["hint"]

    graphs = {r["id"]: r for r in records if r["event"] == "graph"}
    assert len(graphs) == 4
    for t in translations:   # each translation compiled its graph, and the graph names it
        (gid,) = [g for g in t["graphs"] if g in graphs]
        assert graphs[gid]["translation"] == t["id"]
    g = graphs[next(gid for gid in top[0]["graphs"] if gid in graphs)]
    assert "matmul" in g["ir_before"] and "relu" in g["ir_before"]
    assert g["ir_after"] != g["ir_before"] and "fused" in g["ir_after"]
    assert [name for name, _ in g["passes"]] == [
        "canonicalize", "shape_inference", "constant_folding", "common_subexpression_elimination",
        "dead_node_elimination", "layout_assignment", "operator_fusion", "memory_planning",
        "backend_lowering"]
    assert g["compile_s"] >= g["pass_s"] >= 0 and g["backend"] == "cpu"

    recompiles = [r for r in records if r["event"] == "recompile"]
    assert [r["guard"] for r in recompiles] == ["L['x']: Tensor float32[4, 3]",
                                                 "L['y']: Tensor float32[4, 5]"]
    assert recompiles[0]["function"] == "with_break"


def native_only(n):
    yield from range(n)   # a generator function: its call runs natively


def test_native_runs_and_fallbacks_are_recorded(trace_dir):
    f = frame.jit(native_only, backend="cpu")
    assert list(f(3)) == list(native_only(3))
    # float64 on openvino: the ops fall back (issue 16's example)
    g = frame.jit(lambda a: frame.relu(a) * 2, backend="openvino")
    a = frame.tensor(np.array([-1.0, 2.0]))
    with frame.config.override(tiered=False):
        np.testing.assert_allclose(g(a).numpy(), [0.0, 4.0])
    records = _records(trace_dir)
    (native,) = [r for r in records if r["event"] == "translation" and r["function"] == "native_only"]
    assert native["kind"] == "native" and native["lines"] == []
    assert native["reason"]["kind"] == "generator_function"
    (brk,) = [r for r in records if r["event"] == "break"]
    assert brk["kind"] == "generator_function" and not brk["graph_break"]
    assert brk["function"] == "native_only" and brk["line"] == _line_of(native_only, "def native_only")
    fallbacks = [r for r in records if r["event"] == "fallback"]
    assert fallbacks and {r["backend"] for r in fallbacks} == {"openvino"}
    assert "relu" in {r["op"] for r in fallbacks} and all(r["reason"] for r in fallbacks)
    graph = [r for r in records if r["event"] == "graph" and r["backend"] == "openvino"]
    assert graph and graph[0]["fallback"] is True


def test_a_background_compile_is_linked_to_its_translation(trace_dir):
    def f(x):
        return frame.tanh(x) * 3 + 1
    x = frame.tensor(np.linspace(-1, 1, 8, dtype=np.float32))
    with frame.config.override(tiered=True, hot_threshold=1, pgo=False):
        jitted = frame.jit(f, backend="openvino")
        for _ in range(2):
            np.testing.assert_allclose(jitted(x).numpy(), f(x).numpy(), rtol=1e-5, atol=1e-6)
        exe = jitted._frame_cache.entries[0].executable
        assert exe.wait(timeout=120) == "slow"
    records = _records(trace_dir)
    (translation,) = [r for r in records if r["event"] == "translation"]
    swapped = [r for r in records if r["event"] == "tier" and r["what"] == "swapped"]
    assert len(swapped) == 1 and swapped[0]["translation"] == translation["id"]
    assert swapped[0]["graph"] in translation["graphs"]
    background = [r for r in records if r["event"] == "graph" and r["backend"] == "openvino"]
    assert len(background) == 1 and background[0]["thread"] != "MainThread"
    assert background[0]["translation"] == translation["id"]   # linked through the graph id


def test_nothing_is_recorded_or_opened_when_off(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the trace recorder ran while FRAME_TRACE_DIR is off")
    monkeypatch.setattr(trace, "_open", refuse)
    monkeypatch.setattr(trace, "source", refuse)
    assert frame.config.trace_dir is None
    x = frame.tensor(np.ones((4, 3), np.float32))
    w = frame.tensor(np.ones((3, 5), np.float32))
    f = frame.jit(with_break, backend="cpu")
    np.testing.assert_allclose(f(x, w).numpy(), with_break(x, w).numpy())
    assert trace.begin_translation() is None


def test_one_file_per_process_and_the_report_shows_them(trace_dir, tmp_path):
    script = tmp_path / "job.py"
    script.write_text("import numpy as np, frame\n"
                      "@frame.jit(backend='cpu')\n"
                      "def step(x):\n"
                      "    return (x * x).sum()\n"
                      "print(float(step(frame.tensor(np.ones(3, np.float32)))))\n")
    env = {**os.environ, "FRAME_TRACE_DIR": str(trace_dir), "PYTHONPATH": ROOT}
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3.0"
    def in_this_process(x, w):   # a code object of its own: translated here
        return with_break(x, w) + 1
    f = frame.jit(in_this_process, backend="cpu")
    x, w = frame.tensor(np.ones((4, 3), np.float32)), frame.tensor(np.ones((3, 5), np.float32))
    np.testing.assert_allclose(f(x, w).numpy(), in_this_process(x, w).numpy())
    files = sorted(trace_dir.glob("frame-trace-*.jsonl"))
    assert len(files) == 2
    traces = trace_report.load_traces(str(trace_dir))
    assert {os.path.basename(t.process["argv"][0]) for t in traces} == {"job.py",
                                                                         os.path.basename(sys.argv[0])}
    pids = {t.process["pid"] for t in traces}
    assert len(pids) == 2 and os.getpid() in pids

    page = tmp_path / "report.html"
    assert frame_main(["trace-report", str(trace_dir), "-o", str(page)]) == 0
    text = page.read_text()
    for section in trace_report.SECTIONS:
        assert f'<section id="{section}">' in text
    assert "job.py" in text and "in_this_process" in text   # both processes' sources
    assert "step" in text
    assert "graph break (unsupported_call)" in text       # annotated at its line
    assert re.search(r'class="[^"]*brk[^"]*"><td class="ln">' + str(_line_of(with_break, "print(")),
                     text)
    assert "IR before passes" in text and "mul(%0, %0)" in text   # the job's graph
    # self-contained: no resource is fetched (links and scripts are inline)
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert "<script src" not in text and "<link" not in text


def frame_main(argv):
    from frame.__main__ import main
    return main(argv)


def test_the_report_of_an_empty_or_missing_directory_says_so(tmp_path, capsys):
    assert frame_main(["trace-report", str(tmp_path / "missing"), "-o", str(tmp_path / "r.html")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert frame_main(["trace-report", str(tmp_path), "-o", str(tmp_path / "r.html")]) == 1
    assert "FRAME_TRACE_DIR" in capsys.readouterr().err


def test_a_truncated_line_is_skipped(tmp_path):
    (tmp_path / "frame-trace-x-1.jsonl").write_text(
        json.dumps({"event": "process", "t": 0, "pid": 1, "argv": ["a.py"]}) + "\n"
        + json.dumps({"event": "recompile", "t": 0.5, "function": "f", "guard": "L['x'] == 1",
                      "entries": 1, "location": "a.py:3"}) + "\n" + '{"event": "gra')
    (t,) = trace_report.load_traces(str(tmp_path))
    assert [r["event"] for r in t.records] == ["recompile"]
    page = trace_report.render([t])
    assert "L[&#x27;x&#x27;] == 1" in page


def test_a_persistent_cache_hit_is_recorded_with_its_ir(trace_dir, tmp_path, monkeypatch):
    from frame.ir import GraphBuilder
    from frame.runtime import compile as rc

    b = GraphBuilder()
    x = b.input("float32", (3,))
    g = b.build(b.op("exp", b.op("neg", x)))
    monkeypatch.setenv("FRAME_CACHE_DIR", str(tmp_path / "cache"))
    rc.clear_cache()
    try:
        with frame.config.override(cache=True, cache_dir=str(tmp_path / "cache"), tiered=False):
            rc.compile(g, "cpu")
            rc.clear_cache()
            rc.compile(g, "cpu")
    finally:
        rc.clear_cache()
    records = _records(trace_dir)
    (built,) = [r for r in records if r["event"] == "graph"]
    (loaded,) = [r for r in records if r["event"] == "graph_loaded"]
    assert loaded["id"] == built["id"] and loaded["backend"] == "cpu"
    assert loaded["ir_before"] == built["ir_before"] and "exp" in loaded["ir_before"]
    assert built["translation"] is None and loaded["translation"] is None   # no translation ran
    page = trace_report.render(trace_report.load_traces(str(trace_dir)))
    assert "loaded from the persistent cache" in page


def test_a_pgo_decision_is_recorded(trace_dir, pgo):
    from frame.runtime import compile as rc
    from tests.runtime import pgo_backends as pb
    from tests.runtime.test_tiered import graph

    pb.FAST.reset(1e-3)
    pb.SLOW.reset(3e-3)
    g = graph()
    exe = rc.compile(g, "pgoslow", pgo=True)
    run_until_decided(exe, g)
    records = _records(trace_dir)
    tiers = [r for r in records if r["event"] == "tier"]
    assert [r["what"] for r in tiers] == ["trial", "decided"]
    decided = tiers[-1]
    assert decided["decision"]["winner"] == "pgofast" and decided["decision"]["source"] == "measured"
    assert "kept over pgoslow" in decided["text"] and decided["label"] == exe.label
    assert decided["graph"] == trace.graph_id(exe._key) == tiers[0]["graph"]


def test_the_recompile_limit_is_recorded(trace_dir):
    from capture.jit import CACHE_LIMIT

    def scaled(x, k):
        return frame.ones(k + 1) * x.sum()
    f = frame.jit(scaled, backend="cpu")
    x = frame.tensor(np.ones(2, np.float32))
    for k in range(CACHE_LIMIT + 1):   # each int a new shape: a new specialisation
        np.testing.assert_allclose(f(x, k).numpy(), scaled(x, k).numpy())
    records = _records(trace_dir)
    assert len([r for r in records if r["event"] == "recompile"]) == CACHE_LIMIT - 1
    (limit,) = [r for r in records if r["event"] == "recompile_limit"]
    assert limit["function"].endswith("scaled") and limit["limit"] == CACHE_LIMIT
    assert "(k + 1) == 8 (used at test_trace.py:" in limit["guard"]   # the user's expression and line


def _helper(x):
    return frame.tanh(x) * 2   # traced into the caller's graph


def test_the_users_functions_traced_into_a_graph_are_recorded_with_their_lines(trace_dir):
    def calls_helper(x):
        return _helper(x) + np.float32(1)
    x = frame.tensor(np.linspace(-1, 1, 5, dtype=np.float32))
    f = frame.jit(calls_helper, backend="cpu")
    np.testing.assert_allclose(f(x).numpy(), calls_helper(x).numpy(), rtol=1e-6)
    (t,) = [r for r in _records(trace_dir) if r["event"] == "translation"]
    # the helper, not frame's functions nor NumPy's
    assert [i["function"] for i in t["inlined"]] == ["_helper"]
    assert t["inlined"][0]["lines"] == [_line_of(_helper, "frame.tanh")]
    assert t["inlined"][0]["file"] == os.path.abspath(__file__)
    page = trace_report.render(trace_report.load_traces(str(trace_dir)))
    helper_row = re.search(r'<tr class="([^"]*)"><td class="ln">' + str(_line_of(_helper, "frame.tanh")),
                           page)
    assert helper_row and "r0" in helper_row.group(1)   # shaded as a graph region
