"""Identity and type checks that must answer as Python does: a bound method
of a container is a new object at each attribute access, and an instance made
in the function is not its class."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import assert_same_as_eager


def _x():
    return np.arange(3, dtype=np.float32)


def method_of_list_is_new_each_time(x):
    lst = [1]
    return x + 1, lst.append is lst.append, lst.append == lst.append


def same_bound_method_object(x):
    lst = [1]
    m = lst.append
    return x + 1, m is m


def method_of_str_constant(x):
    return x + 1, "ab".upper is "ab".upper


def isinstance_with_an_instance_raises(x):
    return x + 1, isinstance(3, ValueError("a"))


def isinstance_tuple_stops_at_first_match(x):
    return x + 1, isinstance(3, (int, ValueError("a")))


def issubclass_with_an_instance_raises(x):
    return x + 1, issubclass(int, KeyError("k"))


@pytest.mark.parametrize("fn", [method_of_list_is_new_each_time, same_bound_method_object,
                                method_of_str_constant, isinstance_with_an_instance_raises,
                                isinstance_tuple_stops_at_first_match,
                                issubclass_with_an_instance_raises], ids=lambda f: f.__name__)
def test_identity_and_type_checks(fn):
    assert_same_as_eager(fn, _x(), captured=None)
