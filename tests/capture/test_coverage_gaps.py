"""Coverage corpus, gaps that broke graphs or ran whole functions natively
(task HW): ordering of user objects (``sorted``/``min``/``max``/``list.sort``
by ``__lt__``, ``functools.cmp_to_key``), ``functools.lru_cache`` helpers,
class and function attributes written, ``class`` statements, generator
``close()``, NumPy functions and small-integer dtype leftovers.  Written in the
style of TorchDynamo's test_misc / test_functions and Paddle SOT's tests.
Each case is run natively and jitted, and ``graphs=`` states how it is
captured (``corpus.Case.check_captured``)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from .corpus import Corpus
from .helpers import array

case = Corpus()


# -- ordering of user objects --------------------------------------------------------------------

class Version:
    compared = 0

    def __init__(self, major, minor):
        self.major, self.minor = major, minor

    def __lt__(self, other):
        return (self.major, self.minor) < (other.major, other.minor)

    def text(self):
        return f"{self.major}.{self.minor}"


@case(lambda: (array((3,)),), graphs=1)
def sorted_user_objects_by_lt(x):
    versions = [Version(1, 2), Version(0, 9), Version(1, 0), Version(0, 9)]
    ordered = sorted(versions)
    return [v.text() for v in ordered], ordered[0] is versions[1], x * len(ordered)


@case(lambda: (array((3,)),), graphs=1)
def min_max_of_user_objects(x):
    versions = [Version(2, 0), Version(1, 5), Version(3, 1)]
    low, high = min(versions), max(versions)
    return low.text(), high.text(), max(Version(0, 1), Version(0, 2)).minor * x


@case(lambda: (array((3,)),), graphs=1)
def list_sort_reverse_of_user_objects(x):
    versions = [Version(1, 1), Version(2, 0), Version(1, 3)]
    versions.sort(reverse=True)
    return [v.minor for v in versions], x + versions[0].major


class Task:
    def __init__(self, priority, name):
        self.priority, self.name = priority, name


@case(lambda: (array((3,)),), graphs=1)
def sorted_by_key_returning_user_objects(x):
    tasks = [Task(Version(1, 0), "b"), Task(Version(0, 5), "a"), Task(Version(1, 0), "c")]
    return [t.name for t in sorted(tasks, key=lambda t: t.priority)], x - 1


class Counted:
    comparisons = []

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        Counted.comparisons.append((self.v, other.v))
        return self.v < other.v


@case(lambda: (array((3,)),), graphs=1,
      xfail="an assignment to a class attribute (Counted.comparisons = []) runs the call natively")
def comparisons_made_as_python_makes_them(x):
    Counted.comparisons = []
    values = sorted([Counted(3), Counted(1), Counted(2)])
    return [c.v for c in values], list(Counted.comparisons), x


@case(lambda: (array((3,)),), graphs=1)
def comparison_log_in_a_list(x):
    log = []

    class_order = [5, 3, 8, 1]

    def cmp(a, b):
        log.append((a, b))
        return a - b
    ordered = sorted(class_order, key=functools.cmp_to_key(cmp))
    return ordered, log, x * ordered[0]


@case(lambda: (array((3,)),), graphs=1)
def cmp_to_key_made_in_the_call(x):
    def by_length_then_text(a, b):
        if len(a) != len(b):
            return len(a) - len(b)
        return (a > b) - (a < b)
    words = ["pear", "fig", "apple", "kiwi"]
    key = functools.cmp_to_key(by_length_then_text)
    return sorted(words, key=key), min(words, key=key), max(words, key=key), x * 2


@case(lambda: (array((3,)),), graphs=0, breaks="unsupported operand type(s) for <: 'Task' and 'Task'")
def sort_with_unorderable_user_objects_raises(x):
    y = x * 2
    return sorted([Task(1, "a"), Task(2, "b")]), y


@case(lambda: (array((3,)), 0.5), graphs=1)
def min_of_range_by_closure_over_scalars(x, offset):
    costs = [abs(i - 1.6) + offset for i in range(4)]
    best = min(range(4), key=lambda i: costs[i])
    return x * best, best


@case(lambda: (array((3,)),), graphs=1, breaks="min() compares tensors by their values")
def min_of_range_by_tensor_values_breaks(x):
    best = min(range(3), key=lambda i: x[i])
    return x * best


@pytest.mark.parametrize("c", case.params())
def test_coverage_gaps(c):
    c.check()
