"""Every fenced ```python block of README.md and docs/*.md runs as it is, and
shows what it prints (conventions: tests/docs_blocks.py).  The blocks of one
file run in one fresh interpreter, each in a fresh namespace; files run in
parallel (two at a time)."""
from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import subprocess
import sys

import pytest

from .docs_blocks import MAX_NO_RUN, ROOT, blocks_of, doc_files, matches

BLOCKS = [b for path in doc_files() for b in blocks_of(path)]
RUNNABLE = [b for b in BLOCKS if b.runs]


def _run_file(path) -> dict[int, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "tests.docs_blocks", str(path)],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    marker = "\n@@RESULTS@@"
    assert marker in done.stdout, f"{path}: the runner failed:\n{done.stdout}\n{done.stderr}"
    results = json.loads(done.stdout.rsplit(marker, 1)[1])
    return {r["line"]: r for r in results}


@functools.lru_cache(maxsize=None)
def _results() -> dict:
    """path -> {line: result}, every file with runnable blocks run once, two at a time."""
    paths = sorted({b.path for b in RUNNABLE})
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(paths, pool.map(_run_file, paths)))


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.name for b in RUNNABLE])
def test_block_runs_and_prints_what_it_shows(block):
    result = _results()[block.path][block.line]
    assert result["ok"], f"{block.name} raised:\n{result['error']}"
    if block.expected is not None:
        assert matches(block.expected, result["stdout"]), (
            f"{block.name} printed:\n{result['stdout']}\nthe doc shows:\n{block.expected}")


def test_blocks_that_cannot_run_are_few_and_say_why():
    no_run = [b for b in BLOCKS if not b.runs]
    assert len(no_run) <= MAX_NO_RUN, [b.name for b in no_run]
    for block in no_run:
        assert block.no_run_reason, f"{block.name}: say why it cannot run"


def test_the_docs_have_python_blocks_and_shown_outputs():
    """The extraction itself: README and getting-started have runnable blocks,
    some with shown output."""
    names = {b.path.name for b in RUNNABLE}
    assert {"README.md", "getting-started.md"} <= names
    assert sum(b.expected is not None for b in RUNNABLE) >= 3


def test_matching_convention():
    assert matches("a ... c\n", "a b c")
    assert matches("x\n...\nz", "x\n1\n2\nz  ")
    assert not matches("a ... c", "a b d")
    assert matches("x\n...\nz", "x\nz")
    assert matches("x\n...\nz", "x\n1\nz")
    assert not matches("x\nz", "x\n1\nz")


def test_ci_runs_the_readmes_test_command():
    """.ci/run reads the README's test command with this pattern: exactly one line."""
    pattern = re.search(r"grep -E '([^']+)'", (ROOT / ".ci" / "run").read_text()).group(1)
    lines = [line for line in (ROOT / "README.md").read_text().splitlines()
             if re.search(pattern, line)]
    assert lines == ['python3.11 -m venv .venv && .venv/bin/pip install -e ".[test]" && '
                     '.venv/bin/python -m pytest -n auto tests']
