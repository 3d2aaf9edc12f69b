"""Functions for tests/capture/test_fidelity_frames.py: a module pickle can
import (classes made inside a jitted function are stored here as globals),
with code that inspects the frame calling it.  Each function does tensor
work first, so that the inspecting call runs at a graph break after a graph."""
from __future__ import annotations

import collections
import enum
import inspect
import json
import logging
import sys
import typing
import warnings

log = logging.getLogger("frame.tests.frames_module")


def make_namedtuple(x):
    global Point
    y = x + 1
    Point = collections.namedtuple("Point", "x y")
    return y, Point


def make_typing_namedtuple(x):
    global Pair
    y = x + 1
    Pair = typing.NamedTuple("Pair", [("a", int), ("b", str)])
    return y, Pair


def make_enum(x):
    global Color
    y = x + 1
    Color = enum.Enum("Color", "RED GREEN")
    return y, Color


def make_type(x):
    global Plain
    y = x + 1
    Plain = type("Plain", (), {"value": 1})
    return y, Plain


def log_warning(x):
    y = x * 2
    log.warning("value %s", 1)
    return y


def warn_here(x):
    y = x * 2
    warnings.warn("from warn_here", UserWarning)
    return y


def warn_caller(x):
    y = x * 2
    warnings.warn("from warn_caller", UserWarning, stacklevel=2)
    return y


def warn_in_loop(x):
    for _ in range(3):
        x = x + 1
        warnings.warn("from a loop", UserWarning)
    return x


def code_name(x):
    y = x + 1
    return y, inspect.currentframe().f_code.co_name


def line_number(x):
    y = x + 1
    return y, sys._getframe(0).f_lineno


def caller_name(x):
    y = x + 1
    return y, sys._getframe(1).f_code.co_name


def stack_function(x):
    y = x + 1
    return y, inspect.stack()[0].function


def own_globals(x):
    y = x + 1
    return y, sys._getframe(0).f_globals is sys.modules[__name__].__dict__


def globals_call(x):
    y = x + 1
    return y, globals() is sys.modules[__name__].__dict__


def code_location(x):
    y = x + 1
    code = sys._getframe(0).f_code
    return y, code.co_filename, code.co_qualname, code.co_firstlineno


def raise_from_library(x):
    y = x + 1
    return y, json.loads("{")   # a ValueError raised in a library function


def raise_after_break(x):
    y = x + 1
    print("a graph break")
    raise ValueError(f"raised after a break: {y.shape}")
