"""Parameters and globals named like builtins: the generated entry names the
builtins it uses ``__type``, ``__len``, ... so a user's ``def f(type, x)`` or
``def f(x, len=3)`` keeps both its own values and capture's guards right
(it raised ``RuntimeError: fresh entry ... rejected its own arguments``)."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import assert_same_as_eager


def _x():
    return np.arange(6, dtype=np.float32).reshape(2, 3)


def shadow_type(type, x):
    return x * 2 + type


def shadow_len(x, len=3):
    return x + len


def shadow_many(int, str, list, tuple, float, x):
    return x * int + float, str, list[0] + tuple[1]


def shadow_kwonly(x, *, iter=2, next=1.5, getattr=None, format="{}"):
    return x * iter - next, getattr, format.format(1)


def shadow_exception(Exception, x):
    return x + Exception


def shadow_in_a_loop(x, type, len):
    for i in range(len):     # the loop runs at capture time with the parameter's value
        x = x + type
    return x


def shadow_with_break(x, next, format):
    y = x * 2
    print(f"{format}:{float(y.sum())}")   # a break: f-string formatting of a tensor value
    return y + next


def shadow_container(x, len):
    return [x, x + 1][len], {"a": x}["a"] * len


@pytest.mark.parametrize("fn, args", [
    (shadow_type, (1.5, _x())),
    (shadow_len, (_x(),)),
    (shadow_many, (2, "s", [1, 2], (3, 4), 0.5, _x())),
    (shadow_kwonly, (_x(),)),
    (shadow_exception, (3, _x())),
    (shadow_in_a_loop, (_x(), 1.0, 3)),
    (shadow_container, (_x(), 1)),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else "")
def test_parameters_named_like_builtins(fn, args):
    assert_same_as_eager(fn, *args)


def test_parameters_named_like_builtins_keywords():
    assert_same_as_eager(shadow_kwonly, _x(), iter=3, next=0.25, getattr="g", format="<{}>")
    assert_same_as_eager(shadow_len, _x(), len=7)


def test_parameters_named_like_builtins_at_a_break(capsys):
    assert_same_as_eager(shadow_with_break, _x(), 0.5, "total", captured=None)
