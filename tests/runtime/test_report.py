"""frame.report(), FRAME_REPORT, ``python -m frame run`` and the FRAME_LOG channels."""
from __future__ import annotations

import dataclasses
import io
import logging
import os
import pathlib
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

import capture
import frame
from frame.ir.text import dump_text
from frame.runtime import compile as rc
from frame.runtime import logs
from frame.runtime.stats import MAX_RECOMPILE_REASONS, record, reset_stats, stats

from .tiny_backend import tiny  # noqa: F401  (registers the "tiny" backend)

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).name


@pytest.fixture(autouse=True)
def fresh():
    capture.reset_caches()
    rc.clear_cache()
    reset_stats()
    # no persistent cache or background tier: every graph is compiled here, once
    with frame.config.override(log=(), cache=False, tiered=False):
        yield
    capture.reset_caches()
    rc.clear_cache()


def _t(*shape):
    return frame.tensor(np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10)


def _line_of(marker: str, path: pathlib.Path = pathlib.Path(__file__)) -> int:
    lines = path.read_text().splitlines()
    hits = [n for n, line in enumerate(lines, 1) if marker in line and "_line_of" not in line]
    assert len(hits) == 1, hits
    return hits[0]


def _rendered(**kwargs) -> str:
    """The report as a file gets it: 120 columns (a $COLUMNS of the test
    runner's, e.g. pytest-xdist's workers, would narrow and wrap the tables)."""
    buf = io.StringIO()
    with mock.patch.dict(os.environ):
        os.environ.pop("COLUMNS", None)
        frame.report(file=buf, **kwargs)
    return buf.getvalue()


def _row(text: str, *cells: str) -> str:
    """The one table line whose first cells are ``cells`` (cells are separated by │)."""
    rows = [line for line in text.splitlines()
            if [p.strip() for p in line.split("│")[1:-1]][:len(cells)] == list(cells)]
    assert len(rows) == 1, f"{len(rows)} rows with {cells} in:\n{text}"
    return rows[0]


def _run_program() -> None:
    """A graph break (print), a fallback (tiny lacks tanh) and a recompile (new shape)."""
    @frame.jit(backend="cpu")
    def noisy(x):
        y = (x * 2).relu()
        print("noisy", tuple(y.shape))  # REPORT-BREAK-SITE
        return y + 1

    @frame.jit(backend="tiny")
    def squash(x):
        return frame.tanh(x + 1) * 2

    for _ in range(3):
        noisy(_t(2, 3))
        squash(_t(2, 3))
    squash(_t(4, 3))  # new shape: recompile


# --- frame.report() -------------------------------------------------------------------------

def test_report_shows_compiles_breaks_recompiles_and_fallbacks(capsys):
    _run_program()
    capsys.readouterr()
    s = stats()
    text = _rendered()
    assert _row(text, "graphs compiled (passes + Backend.compile)", str(s.compiles))
    assert _row(text, "for backend tiny", "2")  # one graph per shape
    assert s.compiles_by_backend["cpu"] >= 1  # noisy's graph(s) around the print
    assert _row(text, "for backend cpu", str(s.compiles_by_backend["cpu"]))
    assert _row(text, "translations", str(s.translations))
    assert _row(text, "recompiles", "1")
    assert s.cache_hits == 0
    assert _row(text, "graph lookups (in-process compile cache)", f"{s.cache_misses} (0% in memory)")
    assert _row(text, "misses compiled now", str(s.cache_misses))
    # recompiles, with the guard that failed
    assert "recompiles: the guard that failed" in text
    assert _row(text, "_run_program.<locals>.squash", "L['x']: Tensor float32[2, 3]", "1")
    # graph breaks by kind (with the catalogue's explanation), and where
    assert "graph breaks by kind" in text
    assert _row(text, "unsupported_call", "1")
    where = f"{HERE}:{_line_of('# REPORT-BREAK-SITE')}"
    assert _row(text, where, "unsupported_call", "1", "print() has effects outside the graph")
    # fallbacks by (op, backend, target): tanh on tiny ran via the cpu reference kernel,
    # counted once per compiled graph (two shapes -> two graphs)
    assert "fallbacks by op, backend, target" in text
    assert _row(text, "tanh", "tiny", "cpu", "2")
    assert "other counters" not in text


def test_report_summary_counts_are_the_snapshot():
    _run_program()
    s = stats()
    text = _rendered(snapshot=s)
    assert _row(text, "graph breaks", str(sum(s.graph_breaks.values())))
    assert _row(text, "fallback hops", str(sum(s.fallback_targets.values())))
    assert s.graph_breaks == {"unsupported_call": 1}
    assert s.graph_break_sites == {("unsupported_call", f"{HERE}:{_line_of('# REPORT-BREAK-SITE')}"): 1}
    assert list(s.recompile_reasons.values()) == [1]


def test_report_goes_to_stderr_by_default(capsys):
    _run_program()
    capsys.readouterr()
    frame.report()
    out, err = capsys.readouterr()
    assert out == ""
    assert "frame report" in err and "graphs compiled" in err


def test_report_with_nothing_recorded_is_one_line():
    text = _rendered()
    assert text.strip().startswith("frame report: nothing to report")
    assert len(text.strip().splitlines()) == 1


def test_report_renders_extra_counters_and_timers_generically():
    record.count("disk_cache_hits", 3)
    record.add_time("disk_load", 0.25)
    text = _rendered()
    assert "other counters" in text
    assert _row(text, "disk_cache_hits", "3")
    assert _row(text, "disk_load time", "250.0 ms")


def test_report_ranks_break_sites_and_shows_how_many_more():
    for i in range(15):
        for _ in range(i + 1):
            record.graph_break("data_dependent", f"m.py:{i}", f"reason {i}")
    text = _rendered()
    assert _row(text, "m.py:14", "data_dependent", "15", "reason 14")
    assert _row(text, "m.py:5", "data_dependent", "6", "reason 5")
    assert not any("m.py:4 " in line for line in text.splitlines())  # below the top 10
    assert "... and 5 more" in text


# --- the statistics it reads ------------------------------------------------------------------

def test_graph_break_keeps_the_old_signature_and_counts_per_site():
    record.graph_break("loop_limit")
    record.graph_break("loop_limit", "a.py:3", "first")
    record.graph_break("loop_limit", "a.py:3", "second")
    s = stats()
    assert s.graph_breaks == {"loop_limit": 3}
    assert s.graph_break_sites == {("loop_limit", "a.py:3"): 2}
    assert s.graph_break_reasons == {("loop_limit", "a.py:3"): "second"}
    assert s.as_dict()["graph_break_sites"] == {"loop_limit@a.py:3": 2}


def test_recompile_reasons_are_bounded_and_keep_the_newest():
    for i in range(MAX_RECOMPILE_REASONS + 5):
        record.recompile("f", f"L['x'] == {i}")
    record.recompile("f", f"L['x'] == {MAX_RECOMPILE_REASONS + 4}")
    s = stats()
    assert s.recompiles == MAX_RECOMPILE_REASONS + 6
    assert len(s.recompile_reasons) == MAX_RECOMPILE_REASONS
    assert ("f", "L['x'] == 0") not in s.recompile_reasons
    assert s.recompile_reasons[("f", f"L['x'] == {MAX_RECOMPILE_REASONS + 4}")] == 2


def test_reset_stats_zeroes_every_field():
    _run_program()
    record.count("disk_cache_hits")
    record.add_time("disk_load", 0.1)
    before = stats()
    assert before.compiles and before.graph_breaks and before.fallbacks and before.recompile_reasons
    frame.reset_stats()
    after = stats()
    for field in dataclasses.fields(after):
        value = getattr(after, field.name)
        if field.name == "extra":  # gauges (current values, e.g. compiles pending) are not counters
            value = {k: v for k, v in value.items() if k not in record._gauges}
        assert value in (0, 0.0, {}), f"{field.name} = {value!r} after reset_stats()"
    assert _rendered().strip().startswith("frame report: nothing to report")


# --- FRAME_REPORT, python -m frame run (subprocesses) ---------------------------------------

PROGRAM = """
import frame, numpy as np
@frame.jit
def f(x):
    y = x * 3
    print("inside")
    return y - 1
for n in (2, 2, 5):
    f(frame.tensor(np.ones(n, np.float32)))
s = frame.stats()
print("STATS", s.compiles, s.recompiles, s.graph_breaks["unsupported_call"])
"""


def _stats_line(stdout: str) -> tuple[str, str, str]:
    """(compiles, recompiles, unsupported_call breaks) as PROGRAM printed them."""
    [line] = [line for line in stdout.splitlines() if line.startswith("STATS ")]
    compiles, recompiles, breaks = line.split()[1:]
    assert int(compiles) >= 1 and int(recompiles) >= 1 and int(breaks) >= 1
    return compiles, recompiles, breaks


def _python(*args: str, env: dict | None = None, cwd: pathlib.Path = ROOT):
    full = {**os.environ, "PYTHONPATH": str(ROOT), "FRAME_BACKEND": "cpu", "FRAME_CACHE": "0",
            "FRAME_TIERED": "0", "COLUMNS": "120"}
    for key in ("FRAME_REPORT", "FRAME_LOG"):
        full.pop(key, None)
    full.update(env or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=full, timeout=300)


def test_frame_report_env_prints_the_report_at_exit():
    done = _python("-c", PROGRAM, env={"FRAME_REPORT": "1"})
    assert done.returncode == 0, done.stderr
    compiles, recompiles, breaks = _stats_line(done.stdout)
    assert "frame report" in done.stderr
    assert _row(done.stderr, "graphs compiled (passes + Backend.compile)", compiles)
    assert _row(done.stderr, "recompiles", recompiles)
    assert _row(done.stderr, "f", "L['x']: Tensor float32[2]", "1")  # the shape changed 2 -> 5
    assert _row(done.stderr, "<string>:6", "unsupported_call", breaks, "print() has effects outside the graph")
    assert done.stderr.count("frame report") == 1


def test_no_report_without_the_setting():
    done = _python("-c", PROGRAM)
    assert done.returncode == 0, done.stderr
    assert "frame report" not in done.stderr


def test_report_setting_assigned_at_run_time_prints_at_exit():
    done = _python("-c", PROGRAM + "\nframe.config.report = True\n")
    assert done.returncode == 0, done.stderr
    assert _row(done.stderr, "graphs compiled (passes + Backend.compile)", _stats_line(done.stdout)[0])


def test_frame_report_with_nothing_recorded_says_so():
    done = _python("-c", "import frame", env={"FRAME_REPORT": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().startswith("frame report: nothing to report")


def test_python_m_frame_run_runs_the_example_then_reports():
    example = ROOT / "examples" / "report_demo.py"
    done = _python("-m", "frame", "run", "examples/report_demo.py", "--steps", "2")
    assert done.returncode == 0, done.stderr
    assert "report_demo: 2 steps" in done.stdout
    site = f"report_demo.py:{_line_of('capture cannot trace print', example)}"
    assert _row(done.stderr, site, "unsupported_call", "1", "print() has effects outside the graph")
    assert _row(done.stderr, "layer", "L['x']: Tensor float32[2, 8]", "1")
    assert int(_row(done.stderr, "graphs compiled (passes + Backend.compile)").split("│")[2]) >= 2  # layer for two shapes


def test_run_passes_argv_and_the_exit_status_and_reports_anyway(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text(PROGRAM + "import sys\nprint('argv', sys.argv[1:])\nsys.exit(3)\n")
    done = _python("-m", "frame", "run", str(script), "a", "--flag", "-x")
    assert done.returncode == 3, done.stderr
    assert "argv ['a', '--flag', '-x']" in done.stdout
    assert _row(done.stderr, "graphs compiled (passes + Backend.compile)", _stats_line(done.stdout)[0])


def test_run_prints_the_scripts_traceback_then_the_report(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text(PROGRAM + "raise ValueError('boom')\n")
    done = _python("-m", "frame", "run", str(script), env={"FRAME_REPORT": "1"})
    assert done.returncode == 1
    err = done.stderr
    assert "ValueError: boom" in err and f'File "{script}", line' in err
    assert "runpy" not in err  # the traceback starts at the script, as `python fails.py` shows it
    assert err.index("ValueError: boom") < err.index("frame report")
    assert err.count("frame report") == 1  # run reported; the FRAME_REPORT exit hook did not repeat it


def test_run_of_a_missing_file_is_a_usage_error():
    done = _python("-m", "frame", "run", "no/such/script.py")
    assert done.returncode == 2
    assert "no such file: no/such/script.py" in done.stderr


def test_help_lists_run():
    done = _python("-m", "frame", "--help")
    assert done.returncode == 0
    assert "run" in done.stdout and "frame.report()" in done.stdout


# --- FRAME_LOG channels ----------------------------------------------------------------------

def _layer(x, w):
    return (x @ w).relu() * 0.5


def test_graph_channel_prints_the_dump_text_of_each_compiled_graph(capsys):
    f = frame.jit(_layer, backend="cpu")
    frame.config.log = "graph"
    f(_t(2, 3), _t(3, 4))
    f(_t(2, 3), _t(3, 4))  # an entry hit: no compile, nothing printed
    err = capsys.readouterr().err
    graph = f._frame_cache.entries[0].graph
    assert err.count("[frame:graph] INFO graph compiled for backend 'cpu'") == 1
    assert dump_text(graph).rstrip() in err


def test_graph_channel_from_the_environment():
    done = _python("-c", "import frame\nf = frame.jit(lambda x: (x * 2).relu())\nf(frame.tensor([1.0, -1.0]))",
                   env={"FRAME_LOG": "graph"})
    assert done.returncode == 0, done.stderr
    assert "[frame:graph] INFO graph compiled for backend 'cpu'" in done.stderr
    assert "= relu(" in done.stderr


def test_recompiles_channel_shows_the_failing_guard(capsys):
    f = frame.jit(_layer, backend="cpu")
    with frame.config.override(log=("recompiles",)):
        f(_t(2, 3), _t(3, 4))
        f(_t(5, 3), _t(3, 4))
    f(_t(7, 3), _t(3, 4))  # channel off again: not printed
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("[frame:recompiles]")]
    assert lines == ["[frame:recompiles] INFO recompiling _layer: guard failed: L['x']: Tensor float32[2, 3]"]


def test_guards_and_bytecode_channels(capsys):
    f = frame.jit(_layer, backend="cpu")
    frame.config.log = ("guards", "bytecode")
    f(_t(2, 3), _t(3, 4))
    err = capsys.readouterr().err
    entry = f._frame_cache.entries[0]
    assert f"[frame:guards] INFO guards of _layer ({HERE}:" in err
    for guard in entry.guards:
        assert f"  {guard.text}\n" in err
    assert entry.source.rstrip() in err
    assert "[frame:bytecode] INFO original bytecode of _layer" in err
    assert "[frame:bytecode] INFO decoded (normalised) bytecode of _layer" in err
    assert "[frame:bytecode] INFO transformed bytecode of _layer" in err
    assert "BINARY_OP" in err and "RETURN_VALUE" in err


def test_fallbacks_and_graph_breaks_channels(capsys):
    frame.config.log = "fallbacks,graph_breaks"
    _run_program()
    err = capsys.readouterr().err
    assert "[frame:fallbacks] INFO fallback: op 'tanh' cannot be compiled by backend 'tiny'" in err
    assert "[frame:fallbacks] WARNING fallback: backend 'tiny' cannot compile 1 op(s)" in err
    where = f"unsupported_call at {HERE}:{_line_of('# REPORT-BREAK-SITE')}"
    assert any(line.startswith("[frame:graph_breaks] WARNING") and "_run_program.<locals>.noisy" in line
               and where in line for line in err.splitlines()), err


def test_channels_not_listed_keep_logging_defaults(caplog):
    caplog.set_level(logging.WARNING, logger="frame")
    frame.config.log = ("graph",)
    graph_logger, capture_logger = logging.getLogger("frame.graph"), logging.getLogger("frame.capture")
    assert graph_logger.level == logging.DEBUG and not graph_logger.propagate
    assert capture_logger.level == logging.NOTSET and capture_logger.propagate
    assert not any(isinstance(h, logs._StderrHandler) for h in capture_logger.handlers)
    _run_program()  # the graph-break WARN still reaches the root logger's handlers
    assert any(r.name == "frame.capture" and "unsupported_call" in r.getMessage() for r in caplog.records)
    frame.config.log = ()
    assert graph_logger.level == logging.NOTSET and graph_logger.propagate
    assert not any(isinstance(h, logs._StderrHandler) for h in graph_logger.handlers)


def test_all_switches_on_every_channel():
    frame.config.log = "all"
    assert frame.config.log == frame.settings.LOG_CHANNELS
    assert all(logs.enabled(c) for c in frame.settings.LOG_CHANNELS)
    for names in logs.CHANNEL_LOGGERS.values():
        for name in names:
            assert logging.getLogger(name).level == logging.DEBUG


def test_unknown_channel_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown FRAME_LOG channel.*'grpah'.*graph_breaks, recompiles"):
        frame.config.log = "grpah"
    assert frame.config.log == ()
    with pytest.raises(ValueError, match="unknown FRAME_LOG channel 'nope'"):
        logs.enabled("nope")
    with pytest.raises(ValueError, match="unknown FRAME_LOG channel 'nope'"):
        logs.apply(["nope"])
    # the environment is read at import: a typo is one WARN line, and frame imports
    done = _python("-c", "import frame; print(frame.config.log)", env={"FRAME_LOG": "graph,bogus"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "('graph',)"
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "'bogus'" in lines[0] and "(ignored)" in lines[0]
    assert all(c in lines[0] for c in (*frame.settings.LOG_CHANNELS, "all"))


def test_logging_channels_do_not_print_when_off(capsys):
    f = frame.jit(_layer, backend="cpu")
    f(_t(2, 3), _t(3, 4))
    f(_t(5, 3), _t(3, 4))
    assert "[frame:" not in capsys.readouterr().err


def test_introspection_doc_covers_every_channel():
    doc = (ROOT / "docs" / "introspection.md").read_text()
    for needle in ("frame.report()", "FRAME_REPORT", "python -m frame run", "FRAME_LOG",
                   *frame.settings.LOG_CHANNELS):
        assert needle in doc, needle
