"""Architecture rules checked on the source tree."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_launch_is_called_only_from_runtime():
    """``Backend.launch`` is the eager escape hatch: only frame/runtime/ calls it."""
    offenders = []
    for path in list((ROOT / "frame").rglob("*.py")) + list((ROOT / "capture").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("frame/runtime/"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"\.launch\(", code) and not re.search(r"def launch\(", code) \
                    and "super().launch(" not in code:
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "Backend.launch called outside frame/runtime/:\n" + "\n".join(offenders)


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=ROOT).stdout


def test_import_frame_does_not_import_openvino():
    out = _run("import sys, frame; x = frame.tensor([1.0]) + 1; print('openvino' in sys.modules)")
    assert out.strip() == "False"

