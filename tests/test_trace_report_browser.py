"""The trace report page in a real browser: headless Chromium (Debian's
``chromium`` package; ``.ci/run`` installs it) renders the page that
``python -m frame trace-report`` wrote for a recorded program, takes a
screenshot (a test artifact: its path is printed; ``tests/artifacts/`` is
ignored by git), and the page must render every section with no console
message (Chromium's ``--enable-logging=stderr`` prints each console message
and uncaught error as a ``CONSOLE`` line) and no error caught by the page's
own ``error`` hook (``--dump-dom``: ``data-rendered="ok"``).

Marked ``browser``; skipped, with the reason, where Chromium is absent.  A
control page with a failing script checks that the console check sees errors.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from frame import trace_report

ROOT = pathlib.Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"

pytestmark = pytest.mark.browser

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
                 if p), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not found (Debian: apt-get install chromium; "
                             ".ci/run installs it)")

PROGRAM = '''\
import numpy as np
import frame


class MLP(frame.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = frame.nn.Linear(8, 16)
        self.fc2 = frame.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(frame.relu(self.fc1(x)))


model = MLP()


@frame.jit
def predict(x):
    h = model(x)
    print("logits ready")                 # a graph break
    return frame.softmax(h, axis=-1).argmax(axis=-1)


with frame.no_grad():                     # inference
    for batch in (4, 4, 8):               # the batch of 8 recompiles
        x = frame.tensor(np.random.default_rng(0).standard_normal((batch, 8)).astype(np.float32))
        predict(x)
'''

def _chromium(*args: str, user_data: pathlib.Path) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={user_data}", "--enable-logging=stderr", "--v=0"]
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=180)


def _console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def _record(tmp_path: pathlib.Path) -> pathlib.Path:
    """Run PROGRAM with FRAME_TRACE_DIR in a fresh process; the page for its traces."""
    script = tmp_path / "predict.py"
    script.write_text(PROGRAM)
    traces = tmp_path / "traces"
    env = {**os.environ, "FRAME_TRACE_DIR": str(traces), "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    page = tmp_path / "report.html"
    out = subprocess.run([sys.executable, "-m", "frame", "trace-report", str(traces), "-o", str(page)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return page


@needs_chromium
def test_the_report_renders_in_headless_chromium(tmp_path):
    page = _record(tmp_path)
    dom = _chromium("--dump-dom", page.as_uri(), user_data=tmp_path / "profile-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert _console_messages(dom.stderr) == []
    html = dom.stdout
    assert 'data-rendered="ok"' in html, re.findall(r'<pre id="js-errors"[^>]*>(.*?)</pre>', html, re.S)
    assert f'data-sections="{len(trace_report.SECTIONS)}"' in html
    for section in trace_report.SECTIONS:
        assert f'<section id="{section}">' in html
    # the user's source with the break annotated at its line, the graphs' IR, the recompile
    assert "predict.py" in html and "graph break (unsupported_call)" in html
    assert "IR after passes" in html and "recompile of predict" in html
    assert "<svg" in html   # the timeline

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "trace-report.png"
    if shot.exists():
        shot.unlink()
    taken = _chromium(f"--screenshot={shot}", "--window-size=1280,2000", "--hide-scrollbars",
                      page.as_uri(), user_data=tmp_path / "profile-shot")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert _console_messages(taken.stderr) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    print(f"screenshot of the trace report: {shot}")


@needs_chromium
def test_the_console_check_sees_a_failing_script(tmp_path):
    """Control: the checks above would see a page whose script fails."""
    bad = tmp_path / "bad.html"
    html = trace_report.render([])
    bad.write_text(html.replace('<pre id="js-errors"', '<script>undefinedFunction();</script>'
                                                        '<pre id="js-errors"', 1))
    dom = _chromium("--dump-dom", bad.as_uri(), user_data=tmp_path / "profile")
    assert dom.returncode == 0
    assert any("undefinedFunction" in m for m in _console_messages(dom.stderr))
    assert 'data-rendered="errors"' in dom.stdout and "undefinedFunction" in dom.stdout
    good = tmp_path / "good.html"
    good.write_text(html)
    dom = _chromium("--dump-dom", good.as_uri(), user_data=tmp_path / "profile")
    assert _console_messages(dom.stderr) == [] and 'data-rendered="ok"' in dom.stdout
