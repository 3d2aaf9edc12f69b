"""Why capture stopped: structured, not strings (kind, reason, location, hint).

``Unsupported`` is raised inside the executor when it meets something it
cannot trace.  ``jit.translate`` turns it into a graph break (graph so far,
the instruction run natively, a resume function for the rest) where one can be
placed, else the call runs natively; either way it is counted by kind and
logged at WARN once per site.  With ``full_graph=True`` it becomes
``frame.GraphBreakError``.
"""
from __future__ import annotations

import dataclasses

from frame.hal.errors import ErrorCode, FrameError

__all__ = ["Unsupported", "UserCodeRaises", "USER_RAISES", "BreakReason", "GraphBreakError", "CATALOGUE",
           "HINTS"]

# The kind of break that is no limit of capture: the traced code itself raises
# (``UserCodeRaises``); the native run raises the same exception.
USER_RAISES = "exception"

# kind -> (explanation for the user, hint)
CATALOGUE: dict[str, tuple[str, str]] = {
    "unsupported_call": ("a call to a function capture cannot trace (a C function of an unknown "
                         "library, I/O, print, random, time)",
                         "move the call out of the jitted function, or keep it and accept the break"),
    "data_dependent": ("Python control flow or a Python value that depends on a tensor's data "
                       "(.item(), .numpy(), .tolist(), float(t), if on a tensor)",
                       "express the condition with frame.where, or compute it outside the jitted function"),
    "unsupported_opcode": ("a bytecode instruction the executor does not model",
                           "rewrite the construct or report it; the function runs natively"),
    "unsupported_object": ("an object or attribute capture cannot model safely",
                           "pass plain tensors, scalars and containers, or frame modules"),
    "side_effect": ("a mutation capture cannot replay safely",
                    "mutate plain lists, dicts, attributes or globals only"),
    USER_RAISES: ("the traced code raises an exception", "the exception is raised by the native run"),
    "caught_exception": ("the traced code raises an exception that the function catches",
                         "avoid exceptions as control flow in jitted code; test the condition instead"),
    "recompile_limit": ("too many distinct guard failures for one function",
                        "avoid specialising on values that change every call"),
    "loop_limit": ("the simulated loop ran too many iterations to unroll",
                   "keep unrolled loops short, or move the loop outside"),
    "inline_limit": ("calls nested too deeply to inline", "flatten the call chain"),
    "resume_loop": ("a loop whose body broke the graph continues one iteration at a time "
                    "(internal: the iterator is a real object; not counted as a break)",
                    "none needed"),
    "generator_function": ("a generator, coroutine or async generator function: calling it "
                           "returns an object that runs the body later, step by step",
                           "jit the function that consumes the generator (generators made and "
                           "consumed inside a jitted function are captured); this one runs natively"),
    "explicit": ("an explicit request to run this call natively: frame.graph_break(), or a "
                 "function decorated with frame.disable",
                 "remove the call (or the decorator) to capture across it"),
    "capture_error": ("capture itself failed on this code (a bug in frame's capture)",
                      "please report it with the code; the function runs natively meanwhile"),
}


# Hints that depend on what consumes a value read from a tensor's data
# (``Unsupported(..., hint=HINTS[...])``): a value printed is not a condition.
HINTS: dict[str, str] = {
    "condition": "express the condition with frame.where, or compute it outside the jitted function",
    "format": "formatting a tensor (f-string, str(), repr()) reads its data: return the tensor and "
              "format or print it outside the jitted function",
    "convert": "float(t) / int(t) make a Python number of the data: keep it a tensor in the "
               "computation (0-d tensors broadcast), or convert the returned tensor outside the "
               "jitted function",
    "item": "keep the value a tensor (0-d tensors broadcast), or read .item() / .tolist() / "
            ".numpy() of the returned tensor outside the jitted function",
    "range": "loop over a Python int bound (a shape, a constant), or move the loop outside",
    "math": "use frame's elementwise functions (frame.exp, np.exp on the tensor) instead of the "
            "math module's",
    "print": "print or log the returned value outside the jitted function, or keep the call and "
             "accept the break (both sides are compiled)",
}


@dataclasses.dataclass(frozen=True)
class BreakReason:
    kind: str
    reason: str
    location: str      # "file.py:12": the line of the user's code (the call into library code)
    detail: str = ""   # where inside the called library code it happened ("encoder.py:225")
    advice: str = ""   # a hint for this case (what consumes the value), else the kind's

    @property
    def user_raises(self) -> bool:
        """The traced code raises (``UserCodeRaises``), no limit of capture."""
        return self.kind == USER_RAISES

    @property
    def explanation(self) -> str:
        return CATALOGUE.get(self.kind, ("", ""))[0]

    @property
    def hint(self) -> str:
        return self.advice or CATALOGUE.get(self.kind, ("", ""))[1]

    @property
    def where(self) -> str:
        """The location, with the library frame it happened in."""
        return f"{self.location} (in {self.detail})" if self.detail else self.location

    def __str__(self) -> str:
        return f"{self.kind} at {self.where}: {self.reason}"


class Unsupported(Exception):
    """Raised by handlers; the executor attaches the location."""

    def __init__(self, kind: str, reason: str, hint: str = ""):
        if kind not in CATALOGUE:
            raise ValueError(f"unknown graph-break kind {kind!r}")
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.hint = hint       # for this case (what consumes the value); "": the kind's
        self.location: str | None = None
        self.detail = ""       # the library frame it was raised in, when not the user's
        self.in_try = False    # raised where a try block of the function may catch it
        self.depth = 0         # inlining depth of the frame that raised it
        self.top_step: int | None = None    # the top frame's step (instructions run) then
        self.top_index: int | None = None   # and its instruction index

    def again(self) -> "Unsupported":
        """A copy to raise once more, located where this one was (a lazy value's
        break raised at each use that needs it: variables/masked.py,
        variables/lazy_scalars.py)."""
        copy = Unsupported.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.args = self.args
        return copy


class UserCodeRaises(Unsupported):
    """The traced code raises an exception (a ``TypeError`` of a bad call, an
    ``IndexError``, an explicit ``raise``): nothing capture cannot model, the
    native run raises it.  Reported with kind ``USER_RAISES``.

    ``exc`` is the exception itself where the trace knows it exactly (an
    ``ExceptionVariable``, or the real exception Python raised on the
    trace's constants): a ``try`` of the traced code may then catch it
    (``InstructionTranslator.unwind``, ``variables/flow.py``)."""

    def __init__(self, reason: str, exc=None):
        super().__init__(USER_RAISES, reason)
        self.exc = exc
        # its context is set (``InstructionTranslator._chain``), or it is restored
        # without chaining (a bare ``raise``, ``RERAISE``, ``throw()``): set no more
        self.chained = False


class GraphBreakError(FrameError):
    """``full_graph=True`` and the function cannot be captured whole."""

    def __init__(self, reason: BreakReason):
        msg = (f"cannot capture the whole function ({reason.kind}) at {reason.where}: "
               f"{reason.reason}. Hint: {reason.hint}")
        super().__init__(ErrorCode.UNIMPLEMENTED, msg)
        self.break_reason = reason
