"""The fenced Python blocks of README.md and docs/*.md, and a runner for them
(tests/test_docs.py).

Conventions (written for the docs' authors):

- Every ```` ```python ```` block runs as it is, alone: in a fresh namespace
  (its own imports, its own inputs), as ``__main__``, with the repository
  root as the working directory.  All blocks of one file run in one fresh
  interpreter, one after the other, so a block must not rely on an earlier
  one.
- A block that shows its output is followed by a ```` ```text ```` block
  (only blank lines between).  The block's stdout must equal that text, where
  ``...`` stands for any characters (also across lines), as in doctest's
  ELLIPSIS, and a line that is only ``...`` for any number of lines, none
  included; trailing spaces are ignored.
- A block that truly cannot run here says why in its info string:
  ```` ```python no-run (excerpt of frame/runtime/fallback.py) ````.  Such
  blocks are few (``MAX_NO_RUN`` for all the docs together).

``python -m tests.docs_blocks FILE`` (from the repository root) runs FILE's blocks and prints one JSON
list: ``{"line": n, "ok": bool, "stdout": ..., "error": ...}`` per block.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import pathlib
import re
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
MAX_NO_RUN = 4


@dataclasses.dataclass(frozen=True)
class Block:
    path: pathlib.Path
    line: int                 # 1-based line of the opening fence
    info: str                 # the fence's info string ("python", "python no-run (...)")
    code: str
    expected: str | None      # the following ```text block, if any

    @property
    def runs(self) -> bool:
        return "no-run" not in self.info.split()

    @property
    def no_run_reason(self) -> str:
        return self.info.split("no-run", 1)[1].strip(" ()") if not self.runs else ""

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[pathlib.Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _fences(text: str) -> list[tuple[int, int, str, str]]:
    """(opening line, closing line, info, body) for every fenced block of ``text``
    (1-based lines)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = re.match(r"^```(.*)$", lines[i])
        if opening is None:
            i += 1
            continue
        start, info, body = i, opening.group(1).strip(), []
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        blocks.append((start + 1, i + 1, info, "\n".join(body) + "\n"))
        i += 1
    return blocks


def blocks_of(path: pathlib.Path) -> list[Block]:
    """The ```python blocks of ``path``, each with the ```text block that follows it."""
    text = path.read_text()
    fences = _fences(text)
    lines = text.splitlines()
    found = []
    for k, (line, end, info, body) in enumerate(fences):
        if info.split()[:1] != ["python"]:
            continue
        expected = None
        if k + 1 < len(fences) and fences[k + 1][2] == "text":
            between = lines[end:fences[k + 1][0] - 1]  # the lines after the closing fence
            if all(not part.strip() for part in between):
                expected = fences[k + 1][3]
        found.append(Block(path, line, info, body, expected))
    return found


def matches(expected: str, got: str) -> bool:
    """Does ``got`` equal ``expected``, ``...`` matching anything (a line that is
    only ``...``: any number of lines, none included), trailing spaces ignored?"""
    def norm(s: str) -> str:
        return "\n".join(line.rstrip() for line in s.strip("\n").splitlines()) + "\n"
    parts = []
    for line in norm(expected).splitlines():
        if line == "...":
            parts.append(r"(?:.*?\n)?")
        else:
            parts.append(".*?".join(re.escape(p) for p in line.split("...")) + r"\n")
    return re.fullmatch("".join(parts), norm(got), re.DOTALL) is not None


def _run_all(path: pathlib.Path) -> list[dict]:
    results = []
    for block in blocks_of(path):
        if not block.runs:
            continue
        out = io.StringIO()
        namespace = {"__name__": "__main__", "__file__": str(path)}
        error = None
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(block.code, f"{block.name}", "exec"), namespace)
        except BaseException:  # noqa: BLE001 - reported to the test
            error = traceback.format_exc()
        results.append({"line": block.line, "ok": error is None, "stdout": out.getvalue(),
                        "error": error})
    return results


if __name__ == "__main__":
    real_stdout = sys.stdout
    results = _run_all(pathlib.Path(sys.argv[1]).resolve())
    real_stdout.write("\n@@RESULTS@@" + json.dumps(results) + "\n")
