"""Architecture rules checked on the source tree."""
from __future__ import annotations

import functools
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



# -- imports point down (docs/design.md §1) -------------------------------------------------
#
# Every ``import`` / ``from ... import`` statement under frame/ and capture/ is checked,
# at module level and inside functions alike (a function-level import hides a cycle from
# the interpreter, not from this test).  A module's layer is given by the longest prefix
# below that names it; it may import modules of its own layer and of the layers below.

LAYERS: list[tuple[str, tuple[str, ...]]] = [  # bottom first
    ("base", ("frame.errors", "frame.dtypes", "frame.settings")),
    ("ir", ("frame.ir",)),
    ("ops", ("frame.ops",)),
    # the graph half of autograd (graph -> graph); the eager tape is public API, below
    ("autograd", ("frame.autograd.backward", "frame.autograd.registry", "frame.autograd.helpers",
                  "frame.autograd.rules_elementwise", "frame.autograd.rules_shape",
                  "frame.autograd.rules_nn")),
    ("passes", ("frame.passes",)),
    ("hal", ("frame.hal",)),
    ("backends", ("frame.backends",)),
    ("runtime", ("frame.runtime",)),
    # public API: the Tensor class and what users call (functions, nn, optim, fft, the eager
    # autograd tape, grad/value_and_grad), the package itself, its demo and CLI
    ("api", ("frame",)),
    ("capture", ("capture",)),
]

# Imports that point up, each one a documented lazy-import point.  (importer file, imported
# module) -> why.  Keep this short: a new entry needs a reason docs/design.md accepts.
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    # docs/design.md §1: frame.jit lives in capture and is re-exported by frame lazily, on first
    # attribute access (module __getattr__), so importing frame does not import capture.
    ("frame/__init__.py", "capture"): "lazy frame.jit / frame.explain / GraphBreakError re-export; "
                                      "the auto-jit switch imports capture.autojit when turned on",
    # The persistent cache keys artifacts by frame's version and a stamp of its sources: it
    # reads frame.__version__ and frame.__file__ of the (already imported) package root.
    ("frame/runtime/persistent.py", "frame"): "frame.__version__ and the package location",
}


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int | None:
    """Index in LAYERS of ``module`` (None: not frame's or capture's)."""
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


@functools.lru_cache(maxsize=None)
def _imports(path: pathlib.Path) -> tuple:
    """``(line, imported module, function-level?)`` for every import statement in ``path``
    (parsed once per test process: several tests walk every source file)."""
    return tuple(_scan_imports(path))


def _scan_imports(path: pathlib.Path):
    import ast

    tree = ast.parse(path.read_text(), str(path))
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    in_function = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function.update(id(sub) for sub in ast.walk(node)
                               if isinstance(sub, (ast.Import, ast.ImportFrom)))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            # ``from pkg import name``: name may be a submodule; judge by the deeper name
            # only when it is one (``from .. import ops`` is an import of frame.ops)
            targets = []  # one per distinct module: ``from x import A, B`` is one import of x
            for a in node.names:
                sub = f"{prefix}.{a.name}"
                is_module = (ROOT / pathlib.Path(*sub.split("."))).is_dir() or \
                    (ROOT / pathlib.Path(*sub.split("."))).with_suffix(".py").is_file()
                target = sub if is_module else prefix
                if target not in targets:
                    targets.append(target)
        else:
            continue
        for target in targets:
            yield node.lineno, target, id(node) in in_function


def _source_files():
    return sorted(list((ROOT / "frame").rglob("*.py")) + list((ROOT / "capture").rglob("*.py")))


def test_imports_point_down():
    """docs/design.md §1: every import (module- or function-level) of frame/ and capture/ goes to
    the importer's layer or below, except the documented lazy imports of ALLOWED_UPWARD."""
    offenders, used = [], set()
    for path in _source_files():
        rel = path.relative_to(ROOT).as_posix()
        mine = _layer(_module_name(path))
        for line, target, in_fn in _imports(path):
            theirs = _layer(target)
            if theirs is None or theirs <= mine:
                continue
            key = (rel, target.split(".")[0] if target.startswith("capture") else target)
            if key in ALLOWED_UPWARD:
                used.add(key)
                continue
            offenders.append(f"{rel}:{line}: {'function-level ' if in_fn else ''}import of "
                             f"{target} ({LAYERS[theirs][0]}) from layer {LAYERS[mine][0]}")
    assert not offenders, "imports pointing up (docs/design.md §1):\n" + "\n".join(offenders)
    assert used == set(ALLOWED_UPWARD), f"stale ALLOWED_UPWARD entries: {set(ALLOWED_UPWARD) - used}"


def test_ir_imports_only_dtypes_and_errors():
    """The IR is below every other layer of frame: it reaches op schemas through the hook
    frame.ops installs (frame/ir/schemas.py), never by importing ops/hal/passes/..."""
    offenders = []
    for path in sorted((ROOT / "frame" / "ir").rglob("*.py")):
        for line, target, _ in _imports(path):
            if (target.startswith(("frame.", "capture")) or target == "frame") and \
                    not target.startswith(("frame.ir", "frame.dtypes", "frame.errors")):
                offenders.append(f"{path.relative_to(ROOT).as_posix()}:{line}: {target}")
    assert not offenders, "frame/ir imports above itself:\n" + "\n".join(offenders)


def test_frame_imports_capture_only_for_the_lazy_jit():
    offenders = [f"{path.relative_to(ROOT).as_posix()}:{line}: {target}"
                 for path in (ROOT / "frame").rglob("*.py")
                 for line, target, in_fn in _imports(path)
                 if target.split(".")[0] == "capture"
                 and not (path.relative_to(ROOT).as_posix() == "frame/__init__.py" and in_fn)]
    assert not offenders, "frame/ imports capture:\n" + "\n".join(offenders)


def test_errors_module_is_the_bottom():
    """frame/errors.py imports nothing of frame (every layer raises its error types)."""
    assert [t for _, t, _ in _imports(ROOT / "frame" / "errors.py")
            if t.split(".")[0] in ("frame", "capture")] == []


# Function-level imports of frame/capture modules inside frame/: each one is a documented
# lazy-import point.  (importer file, imported module) -> why.  A function-level import that
# only hides an import cycle is not allowed: restructure the modules instead.
ALLOWED_FUNCTION_LEVEL: dict[tuple[str, str], str] = {
    ("frame/__init__.py", "capture"):
        "frame.jit / frame.explain / GraphBreakError: capture is above frame (docs/design.md §1)",
    ("frame/backends/__init__.py", "frame.backends.openvino"):
        "backend factory: openvino (a heavy import) loads on first get_backend('openvino')",
    ("frame/backends/__init__.py", "frame.backends.cpu"):
        "backend factory: a backend's module loads on first get_backend(name)",
    ("frame/runtime/persistent.py", "frame"):
        "the cache fingerprint reads frame.__version__ and the package location",
    ("frame/tensor.py", "frame.functions._core"):
        "Tensor(data) converts with functions' rules (weak scalars, nested lists of tensors); "
        "frame.functions imports tensor.py for the Tensor class",
}


def test_function_level_imports_in_frame_are_documented_lazy_points():
    found, offenders = set(), []
    for path in sorted((ROOT / "frame").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, target, in_fn in _imports(path):
            if not in_fn or target.split(".")[0] not in ("frame", "capture"):
                continue
            key = (rel, "capture" if target.split(".")[0] == "capture" else target)
            if key in ALLOWED_FUNCTION_LEVEL:
                found.add(key)
            else:
                offenders.append(f"{rel}:{line}: function-level import of {target}")
    assert not offenders, ("function-level imports in frame/ that are not documented lazy "
                           "points (hoist them, or break the cycle they hide):\n"
                           + "\n".join(offenders))
    assert found == set(ALLOWED_FUNCTION_LEVEL), \
        f"stale ALLOWED_FUNCTION_LEVEL entries: {set(ALLOWED_FUNCTION_LEVEL) - found}"


def test_mpi_is_imported_only_by_the_process_group():
    """MPI (the optional ``distributed`` extra) is imported in one place: inside
    ``frame/distributed/comm.py``'s functions, when a process group is first wanted.
    frame.distributed is public API (layer api); the op layer's collective kernels
    reach the process group through the hook it installs
    (``frame.ops.collective.install_communicator``), never by importing it."""
    mpi, upward = [], []
    for path in _source_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, target, in_fn in _imports(path):
            if target.split(".")[0] == "mpi4py" and not (rel == "frame/distributed/comm.py"
                                                         and in_fn):
                mpi.append(f"{rel}:{line}: {'function-level ' if in_fn else ''}import of {target}")
            mine = _layer(_module_name(path))
            if target.startswith("frame.distributed") and mine < _layer("frame.distributed"):
                upward.append(f"{rel}:{line}: import of {target}")
    assert not mpi, "mpi4py imported outside frame/distributed/comm.py's functions:\n" + \
        "\n".join(mpi)
    assert not upward, "frame.distributed imported below the public API:\n" + "\n".join(upward)
    out = _run("import sys, frame, frame.distributed; print('mpi4py' in sys.modules)")
    assert out.strip() == "False"


# Function-level imports inside capture/ (capture is the top layer: it may import any of
# frame at module level).  Each one is a lazy-import point that says why on its line or the
# line above: ``# lazy: <why>`` (a heavy or optional import: openvino, bytecode, the compiler
# on the first compile).  A function-level import that only hides an import cycle is not
# one: capture's modules reach what a module above them owns through
# ``capture/variables/registry.py``'s ``HOOKS`` instead.
_LAZY_NOTE = re.compile(r"#\s*(lazy|cycle):\s*(\S.*)$")


def _function_level_statements(path: pathlib.Path):
    """``(first line, last line)`` of every import statement inside a function of ``path``."""
    import ast

    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            found.update((sub.lineno, sub.end_lineno) for sub in ast.walk(node)
                         if isinstance(sub, (ast.Import, ast.ImportFrom)))
    return sorted(found)


def test_function_level_imports_in_capture_say_why():
    offenders = []
    for path in sorted((ROOT / "capture").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        lines = path.read_text().splitlines()
        for first, last in _function_level_statements(path):
            notes = [_LAZY_NOTE.search(lines[n - 1])
                     for n in (first - 1, first, last) if n >= 1]
            note = next((m for m in notes if m), None)
            if note is None:
                offenders.append(f"{rel}:{first}: function-level import without a "
                                 f"'# lazy: why' comment")
                continue
            if note.group(1) == "cycle":
                offenders.append(f"{rel}:{first}: a function-level import that hides an import "
                                 f"cycle ({note.group(2)}): break the cycle (a hook of "
                                 f"capture/variables/registry.py) and import at module level")
    assert not offenders, ("function-level imports in capture/ must be documented lazy-import "
                           "points (or move them to module level):\n" + "\n".join(offenders))
