"""Pass and PassManager.

A pass has a name and ``run(graph) -> graph``; it keeps no state between runs
(instances are built per compile by ``standard_pipeline``).  The PassManager
runs passes in order, verifies the graph after each, prefixes any failure with
``pass '<name>': `` and can dump the IR after a named pass (``dump_after``;
``runtime.compile`` passes ``frame.config.dump_ir_after``, FRAME_DUMP_IR_AFTER).
"""
from __future__ import annotations

import sys
import time
from typing import Sequence, TextIO

from ..errors import ErrorCode, FrameError
from ..ir.graph import Graph
from ..ir.text import dump_text
from ..ir.verify import verify

__all__ = ["Pass", "PassManager", "PassError"]


class PassError(FrameError):
    """A failure inside a pass (or in the graph it produced), named after the pass."""


class Pass:
    """Base class: subclasses set ``name`` and implement ``run``."""

    name: str = "?"

    def run(self, graph: Graph) -> Graph:  # pragma: no cover - abstract
        raise FrameError(ErrorCode.INTERNAL, f"pass {self.name} does not implement run()")

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


class PassManager:
    """Runs ``passes`` in order with ``verify`` after every one."""

    def __init__(self, passes: Sequence[Pass], dump_after: str | None = None,
                 dump_stream: TextIO | None = None, verify: bool = True):
        names = [p.name for p in passes]
        if dump_after is not None and dump_after not in names:
            raise FrameError(ErrorCode.INVALID_ARGUMENT,
                             f"cannot dump IR after unknown pass {dump_after!r}; passes: {', '.join(names)}")
        self.passes = list(passes)
        self.dump_after = dump_after
        self.dump_stream = dump_stream
        self.verify = verify
        self.timings: list[tuple[str, float]] = []

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.passes]

    def run(self, graph: Graph) -> Graph:
        for p in self.passes:
            t0 = time.perf_counter()
            try:
                graph = p.run(graph)
                if self.verify:
                    verify(graph)
            except FrameError as err:
                raise err.with_message(f"pass '{p.name}': {err.message}") from err
            except Exception as err:  # a bug in a pass: still say which one
                raise PassError(ErrorCode.INTERNAL,
                                f"pass '{p.name}': {type(err).__name__}: {err}") from err
            self.timings.append((p.name, time.perf_counter() - t0))
            if p.name == self.dump_after:
                stream = self.dump_stream or sys.stderr
                stream.write(f"// IR after {p.name}\n{dump_text(graph)}\n")
                stream.flush()
        return graph

