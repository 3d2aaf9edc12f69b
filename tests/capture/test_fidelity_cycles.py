"""Objects that contain themselves reach capture as arguments, globals or values
live across a graph break (a module's globals dict bound to one of its own
names, a list appended to itself).  Wrapping them recursed without end
(RecursionError); they are refused instead, and the code runs natively."""
from __future__ import annotations

import numpy as np

from .helpers import assert_same_as_eager

MODULE_GLOBALS = globals()   # this module's globals dict holds itself


def _x():
    return np.arange(6, dtype=np.float32).reshape(2, 3)


def globals_live_across_a_break(x):
    g = globals()
    y = x * 2
    print("sum", float(y.sum()))      # a graph break: g is passed to the resume function
    return y + (1 if "MODULE_GLOBALS" in g else 0)


def first_of_a_list_that_holds_itself(items, x):
    return x * items[0] + len(items)


def dict_that_holds_itself(d, x):
    return x + d["k"]


def test_module_globals_live_across_a_break(capsys):
    assert_same_as_eager(globals_live_across_a_break, _x(), captured=None)


def test_list_that_holds_itself():
    items = [2.0]
    items.append(items)
    assert_same_as_eager(first_of_a_list_that_holds_itself, items, _x(), captured=None)


def test_dict_that_holds_itself():
    d = {"k": 1.5}
    d["self"] = d
    assert_same_as_eager(dict_that_holds_itself, d, _x(), captured=None)
