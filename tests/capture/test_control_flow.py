"""Control flow under capture: branches on Python values, loops (unrolled) over
ranges, containers, iterators and a tensor's first axis, break/continue/else,
comprehensions (nested code objects on 3.11, inlined on 3.12+), generator
expressions, f-strings, asserts, and what must not be captured (branching on
a tensor's values)."""
from __future__ import annotations

import sys

import numpy as np

import frame

from .helpers import last_entry, array, assert_same_as_eager, tensor


# -- branches ---------------------------------------------------------------------------------

def test_if_on_python_int():
    def f(x, n):
        if n > 2:
            return x * n
        return x - n
    assert_same_as_eager(f, tensor(), 3)
    assert_same_as_eager(f, tensor(), 1)


def test_if_elif_else_chain():
    def f(x, mode):
        if mode == "relu":
            y = frame.relu(x)
        elif mode == "tanh":
            y = x.tanh()
        else:
            y = x
        return y
    for mode in ("relu", "tanh", "none"):
        assert_same_as_eager(f, tensor(), mode)


def test_if_on_none_and_bool_flags():
    def f(x, bias=None, training=False):
        if bias is not None:
            x = x + bias
        if not training:
            x = x * 0.5
        return x
    assert_same_as_eager(f, tensor())
    assert_same_as_eager(f, tensor(), tensor(seed=1), True)


def test_conditional_expression():
    assert_same_as_eager(lambda x, n: x * 2 if n % 2 else x / 2, tensor(), 3)


def test_and_or_return_operands():
    def f(x, a, b):
        return (a and b), (a or b), (b or x), ([] or x), (a and x)
    assert_same_as_eager(f, tensor(), 0, "s")


def test_branch_on_shape():
    def f(x):
        if x.shape[0] > 2 and x.ndim == 2:
            return x.sum(axis=0)
        return x.T
    assert_same_as_eager(f, tensor((4, 3)))
    assert_same_as_eager(f, tensor((2, 3)))


def test_branch_on_isinstance():
    def f(x):
        if isinstance(x, np.ndarray):
            return x * 2
        if isinstance(x, (list, tuple)):
            return len(x)
        return x + 1
    assert_same_as_eager(f, array())
    assert_same_as_eager(f, tensor())
    assert_same_as_eager(f, [1, 2])


def test_branch_on_container_truthiness():
    def f(x, items):
        if items:
            return x * len(items)
        return x
    assert_same_as_eager(f, tensor(), [1, 2])
    assert_same_as_eager(f, tensor(), [])


def test_if_on_tensor_value_runs_natively():
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    j = assert_same_as_eager(f, tensor(), captured=None)  # both branches resume
    assert last_entry(j).breaks


def test_if_on_python_value_inside_inlined_function():
    def act(x, kind):
        return frame.relu(x) if kind == "relu" else frame.sigmoid(x)
    assert_same_as_eager(lambda x: act(x, "relu") + act(x, "sigmoid"), tensor())


def test_match_on_literals():
    def f(x, n):
        match n:
            case 1:
                return x
            case 2 | 3:
                return x * n
            case _:
                return -x
    for n in (1, 3, 9):
        assert_same_as_eager(f, tensor(), n)


# -- loops ---------------------------------------------------------------------------------------------

def test_for_over_range():
    def f(x, n):
        for i in range(n):
            x = x * 0.5 + i
        return x
    assert_same_as_eager(f, tensor(), 4)


def test_for_over_range_with_step_and_negative():
    def f(x):
        for i in range(10, 0, -3):
            x = x + i
        return x
    assert_same_as_eager(f, tensor())


def test_for_over_list_and_tuple():
    def f(xs, ws):
        out = 0
        for x in xs:
            for w in ws:
                out = out + x * w
        return out
    assert_same_as_eager(f, [tensor(), tensor(seed=1)], (1.0, 2.0, 3.0))


def test_for_over_dict_and_items():
    def f(d):
        keys = []
        total = 0
        for k in d:
            keys.append(k)
        for k, v in d.items():
            total = total + v
        for v in d.values():
            total = total * 1.0 + v
        return keys, total
    assert_same_as_eager(f, {"a": tensor(), "b": tensor(seed=1)})


def test_for_enumerate_zip_reversed():
    def f(xs, scales):
        out = []
        for i, (x, s) in enumerate(zip(xs, scales), start=1):
            out.append(x * s + i)
        for x in reversed(xs):
            out.append(x)
        return out
    assert_same_as_eager(f, [tensor(), tensor(seed=1)], [2.0, 3.0, 4.0])


def test_for_over_tensor_rows_unrolled():
    def f(x):
        acc = x[0] * 0
        for row in x:
            acc = acc + row * row
        return acc
    fn = assert_same_as_eager(f, tensor((4, 3)))
    assert fn._frame_cache.entries[0].graph is not None


def test_for_over_ndarray_rows():
    def f(a):
        return [row.sum() for row in a]
    assert_same_as_eager(f, array((3, 2)))


def test_while_with_python_condition():
    def f(x, n):
        i = 0
        while i < n:
            x = x + x
            i += 1
        return x, i
    assert_same_as_eager(f, tensor(), 3)


def test_break_and_continue():
    def f(x):
        for i in range(10):
            if i % 2 == 0:
                continue
            if i > 6:
                break
            x = x + i
        return x
    assert_same_as_eager(f, tensor())


def test_for_else_and_while_else():
    def f(x, stop):
        for i in range(3):
            if i == stop:
                break
        else:
            x = x * 10
        j = 0
        while j < 2:
            j += 1
        else:
            x = x + j
        return x
    assert_same_as_eager(f, tensor(), 5)
    assert_same_as_eager(f, tensor(), 1)


def test_nested_loops_with_inner_break():
    def f(x):
        count = 0
        for i in range(4):
            for j in range(4):
                if j > i:
                    break
                count += 1
                x = x + j
        return x, count
    assert_same_as_eager(f, tensor())


def test_loop_over_iterator_with_next():
    def f(xs):
        it = iter(xs)
        first = next(it)
        rest = [x * 2 for x in it]
        return first, rest, next(it, "done")
    assert_same_as_eager(f, [tensor(), tensor(seed=1), tensor(seed=2)])


def test_list_grown_during_iteration_is_visited():
    def f(values):
        for v in values:
            if len(values) < 6:
                values.append(v + 10)
        return values
    assert_same_as_eager(f, [1, 2])


def test_map_and_filter():
    def f(xs):
        doubled = list(map(lambda x: x * 2, xs))
        kept = list(filter(lambda n: n > 1, [0, 1, 2, 3]))
        truthy = list(filter(None, [0, 1, "", "a"]))
        return doubled, kept, truthy
    assert_same_as_eager(f, [tensor(), tensor(seed=1)])


def test_all_any_short_circuit():
    def f(x):
        seen = []

        def check(i):
            seen.append(i)
            return i > 1
        return x * any(check(i) for i in range(5)), all(check(i) for i in [3, 0, 5]), seen
    assert_same_as_eager(f, tensor())


# -- comprehensions --------------------------------------------------------------------------------------

def test_list_comprehension():
    assert_same_as_eager(lambda x: [x * i for i in range(3)], tensor())


def test_list_comprehension_with_condition():
    assert_same_as_eager(lambda xs: [x + 1 for i, x in enumerate(xs) if i != 1],
                         [tensor(), tensor(seed=1), tensor(seed=2)])


def test_dict_comprehension():
    assert_same_as_eager(lambda x: {f"p{i}": x ** i for i in range(1, 4)}, tensor())


def test_nested_comprehension():
    assert_same_as_eager(lambda x: [[x * i + j for j in range(2)] for i in range(3)], tensor())


def test_comprehension_does_not_leak_or_clobber_its_variable():
    def f(x):
        i = 100
        squares = [i * i for i in range(3)]
        return x + i, squares
    assert_same_as_eager(f, tensor())


def test_comprehension_reads_enclosing_locals():
    def f(x, scale):
        bias = 1.0
        return [x * scale + bias + k for k in (1, 2)]
    assert_same_as_eager(f, tensor(), 2.0)


def test_generator_expression_in_sum():
    assert_same_as_eager(lambda x: sum(x * i for i in range(4)), tensor())


def test_generator_expression_in_tuple_and_max():
    assert_same_as_eager(lambda x, l: (tuple(x + v for v in l), max(v * 2 for v in l)), tensor(), [1, 5, 3])


def test_comprehension_code_kind_matches_version():
    # 3.11 compiles the comprehension to a nested code object; 3.12+ inlines it
    def f(x):
        return [x for _ in range(2)]
    nested = [c for c in f.__code__.co_consts if hasattr(c, "co_code")]
    assert bool(nested) == (sys.version_info < (3, 12))
    assert_same_as_eager(f, tensor())


# -- strings, asserts ---------------------------------------------------------------------------------------

def test_fstring_conversions_and_specs():
    def f(x, n, s):
        label = f"{n!r}|{s!s}|{s!a}|{n:>5}|{n / 3:.2f}|{s:^7}|{n!r:>4}"
        return x * n, label
    assert_same_as_eager(f, tensor(), 7, "ab")


def test_str_format_and_join():
    def f(x, n):
        return x, "{}-{:03d}".format("n", n), "/".join(["a", str(n)]), "%d%%" % n
    assert_same_as_eager(f, tensor(), 5)


def test_fstring_of_tensor_shape():
    assert_same_as_eager(lambda x: (x, f"shape={x.shape} dtype={x.dtype}"), tensor())


def test_fstring_of_tensor_value_runs_natively():
    j = assert_same_as_eager(lambda x: f"{x}", tensor(), captured=None)  # formatted at a break
    assert last_entry(j).breaks


def test_assert_on_python_value_passes():
    def f(x, n):
        assert n > 0, "n must be positive"
        assert x.ndim == 2
        return x * n
    assert_same_as_eager(f, tensor(), 2)


def test_assert_on_python_value_fails():
    def f(x, n):
        assert n > 0, f"n must be positive, got {n}"
        return x * n
    assert_same_as_eager(f, tensor(), -1)


def test_try_without_exception_is_captured():
    def f(x):
        try:
            y = x * 2
        except ValueError:
            y = x
        return y
    assert_same_as_eager(f, tensor())


def test_try_with_caught_exception_is_captured():
    def f(x, d):
        try:
            scale = d["scale"]
        except KeyError:
            scale = 3.0
        return x * scale
    assert_same_as_eager(f, tensor(), {}, captured=True)
    assert_same_as_eager(f, tensor(), {"scale": 2.0}, captured=True)


def test_try_with_unmodelled_caught_exception_runs_natively():
    def f(x, path):
        try:
            raise OSError(2, path)
        except FileNotFoundError as e:
            scale = len(e.filename or "ab")
        return x * scale
    assert_same_as_eager(f, tensor(), "missing", captured=False)


def test_loop_over_tensor_rows_sees_in_place_updates():
    def f(x):
        rows = []
        for row in x:
            rows.append(row * 1)
            x += 1
        return rows
    assert_same_as_eager(f, tensor((3, 2)))


def test_with_statement_runs_natively():
    import contextlib

    def f(x):
        with contextlib.nullcontext():
            y = x * 2
        return y
    # a break at the call making the context manager; the resume runs the with block natively
    assert_same_as_eager(f, tensor(), captured=None)
