"""What capture records under FRAME_TRACE_DIR (the recorder is
``frame/runtime/trace.py``; ``jit.py`` calls these only when it is on).

A translation record names the user's function (a resume function is named
by the function it continues, with ``resume: true``), the entry's kind, its
guards, the break or native reason, and ``lines``: the source lines of the
code the graph covers.  Those are found statically, as the lines of the
instructions reachable from the code's start without passing the break (a
resume function's prologue jumps to where the frame broke, so its region
starts there); a native entry covers none.
"""
from __future__ import annotations

import os

from frame.runtime import trace

from .errors import CATALOGUE, BreakReason
from .instructions import decode
from .library import library_dirs
from .resume import original_code

__all__ = ["record_translation", "record_break", "graph_lines"]

# instructions after which execution does not fall through to the next one
_NO_FALLTHROUGH = frozenset({"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP",
                             "JUMP_NO_INTERRUPT"})


def graph_lines(code, stop: int | None) -> list[int]:
    """Source lines of the instructions of ``code`` reachable from its start
    without executing instruction ``stop`` (None: the whole code)."""
    instrs = decode(code).instructions
    seen: set[int] = set()
    todo = [0] if instrs else []
    while todo:
        i = todo.pop()
        if i in seen or i >= len(instrs) or i == stop:
            continue
        seen.add(i)
        ins = instrs[i]
        if ins.target is not None:
            todo.append(ins.target)
        if ins.opname not in _NO_FALLTHROUGH:
            todo.append(i + 1)
    lines = {instrs[i].lineno for i in seen if instrs[i].lineno is not None}
    # the def (or decorator) line: the prologue (RESUME, cells; a resume function's jump)
    lines.discard(original_code(code).co_firstlineno)
    lines.discard(0)
    return sorted(lines)


def _function(fn) -> dict:
    code = fn.__code__
    original = original_code(code)
    return {"function": original.co_qualname, "file": os.path.abspath(original.co_filename)
            if not original.co_filename.startswith("<") else original.co_filename,
            "first_line": original.co_firstlineno, "resume": original is not code}


def _reason(reason: BreakReason | None) -> dict | None:
    if reason is None:
        return None
    line = reason.location.rpartition(":")[2]
    return {"kind": reason.kind, "reason": reason.reason, "location": reason.location,
            "detail": reason.detail, "line": int(line) if line.isdigit() else None,
            "explanation": CATALOGUE.get(reason.kind, ("", ""))[0], "hint": reason.hint}


def record_translation(tid: int, fn, entry, stop: int | None, codes, seconds: float,
                       backend: str, error: BaseException | None = None) -> None:
    """Record translation ``tid`` of ``fn`` into ``entry`` for ``backend``
    (``error``: it raised instead); ``codes`` are the code objects its trace
    ran (the user's functions among them are recorded as ``inlined``)."""
    fields = _function(fn)
    if error is not None or entry is None:
        trace.end_translation(tid, kind="error", error=f"{type(error).__name__}: {error}",
                              backend=backend, duration_s=round(seconds, 6), **fields)
        return
    graph = entry.graph
    if entry.native:
        kind = "native"
    elif entry.breaks:
        kind = "break"
    else:
        kind = "graph" if graph is not None else "empty"
    lines: list[int] = []
    inlined: list[dict] = []
    if not entry.native:
        try:
            lines = graph_lines(fn.__code__, stop if entry.breaks else None)
            inlined = _inlined(fn, codes)
        except Exception:  # noqa: BLE001 - a report detail; never fail the call for it
            lines = []
    exe = entry.executable
    describe = getattr(exe, "describe", None)
    trace.end_translation(
        tid, kind=kind, guards=[g.text for g in entry.guards], reason=_reason(entry.reason),
        lines=lines, backend=entry.backend or backend, duration_s=round(seconds, 6),
        ops=[n.op for n in graph.nodes if n.op != "constant"] if graph is not None else [],
        inputs=[str(v.type) for v in graph.inputs] if graph is not None else [],
        outputs=[str(v.type) for v in graph.outputs] if graph is not None else [],
        executable=type(exe).__name__ if exe is not None else None,
        tier=describe() if describe is not None else None, inlined=inlined, **fields)


def _inlined(fn, codes) -> list[dict]:
    """The user's functions the trace inlined into the graph (not frame's,
    capture's, the standard library's or installed packages'), with the lines
    of each (all its lines reachable from its start)."""
    top = original_code(fn.__code__)
    library = library_dirs()
    out = []
    for code in sorted(codes, key=lambda c: (c.co_filename, c.co_firstlineno)):
        if original_code(code) is top or code.co_filename.startswith("<"):
            continue
        path = os.path.abspath(code.co_filename)
        if path.startswith(library):
            continue
        out.append({"function": code.co_qualname, "file": path, "first_line": code.co_firstlineno,
                    "lines": graph_lines(code, None)})
        trace.source(path)
    return out


def record_break(fn, name: str, reason: BreakReason, graph_break: bool, raising: bool) -> None:
    """A graph break or native run as reported to the user (``jit._report``)."""
    fields = _function(fn) if hasattr(fn, "__code__") else {"function": name}
    trace.emit("break", graph_break=graph_break, raises=raising, **_reason(reason), **fields)
