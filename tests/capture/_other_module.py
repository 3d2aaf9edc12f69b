"""A module with its own globals, for tests of inlining functions defined elsewhere."""
from __future__ import annotations

import frame

SCALE = 3.0
OFFSET = [1.0]


def scaled(x):
    return x * SCALE + OFFSET[0]


def uses_helper(x):
    return _private(x) * 2


def _private(x):
    return frame.relu(x) - SCALE


def bump_offset(x):
    OFFSET.append(len(OFFSET))
    return x + OFFSET[-1]


def helper_that_prints(x):
    y = x + 1
    print("helper", y.shape)
    return y
