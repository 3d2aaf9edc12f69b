"""capture: frame's bytecode frontend (SOT / Dynamo style).

``capture.jit`` (re-exported as ``frame.jit``) intercepts calls, simulates the
function's bytecode into a guarded, cached graph, and runs what it cannot
capture natively.
"""
from .errors import BreakReason, GraphBreakError
from .explain import ExplainOutput, explain
from .export import ExportError, export
from .jit import jit, reset_caches

__all__ = ["jit", "explain", "export", "ExportError", "ExplainOutput", "GraphBreakError",
           "BreakReason", "reset_caches"]
