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

import frame

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


@case(lambda: (array((3,)),), graphs=1)
def comparisons_made_as_python_makes_them(x):
    Counted.comparisons = []
    values = sorted([Counted(3), Counted(1), Counted(2)])
    return [c.v for c in values], list(Counted.comparisons), x * 2


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


# -- functools.cache / lru_cache helpers ---------------------------------------------------------

@functools.cache
def _binomial(n, k):
    if k in (0, n):
        return 1
    return _binomial(n - 1, k - 1) + _binomial(n - 1, k)


@functools.lru_cache(maxsize=None)
def _window(n):
    return tuple(0.5 - 0.5 * np.cos(2 * np.pi * i / (n - 1)) for i in range(n))


@case(lambda: (array((4,)),), graphs=1)
def cached_binomial_coefficients(x):
    weights = [_binomial(3, k) for k in range(4)]
    return x * np.array(weights), _binomial(10, 5)


@case(lambda: (array((4,)),), graphs=1)
def cached_window_tuple(x):
    return x * np.array(_window(4)), _window(4) is _window(4)


@functools.lru_cache(maxsize=32)
def _bounded_scale(n):
    return n / 10


@case(lambda: (array((4,)),), graphs=1, breaks="an lru_cache with maxsize=32")
def bounded_lru_cache_breaks(x):
    return x * _bounded_scale(3)


def _fresh_fibonacci():
    @functools.cache
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)
    return fib


def _uses(fib):
    def step(x, n):
        return x * fib(n), fib(n + 2), fib.__name__
    return step


@pytest.mark.parametrize("ns", [(10, 10, 12), (5, 20, 3)])
def test_cache_hits_and_misses_are_the_native_ones(ns):
    """``cache_info()`` after each call is plain Python's: misses on the first
    call (the function runs natively, filling the cache), hits later, new keys
    missing again; the results are the same."""
    from .helpers import assert_same
    plain_fib, jit_fib = _fresh_fibonacci(), _fresh_fibonacci()
    plain, jitted = _uses(plain_fib), frame.jit(_uses(jit_fib))
    x = array((3,))
    for n in ns:
        assert_same(plain(x, n), jitted(x, n))
        assert jit_fib.cache_info() == plain_fib.cache_info()
    out = frame.explain(_uses(_fresh_fibonacci()))(x, 6)
    assert (out.graph_count, out.graph_break_count) == (1, 0)


def _fresh_logged():
    seen = []

    @functools.cache
    def size(n):
        seen.append(n)
        return n * 2
    return size, seen


def test_cache_miss_with_side_effects_runs_natively():
    """A miss whose body changes state is a graph break: the call runs
    natively, once (the log and the cache are plain Python's)."""
    from .helpers import assert_same
    (plain_size, plain_seen), (jit_size, jit_seen) = _fresh_logged(), _fresh_logged()

    def uses(size):
        def f(x):
            return x * size(3), size(3)
        return f
    x = array((3,))
    for _ in range(2):
        assert_same(uses(plain_size)(x), frame.jit(uses(jit_size))(x))
        assert (jit_seen, jit_size.cache_info()) == (plain_seen, plain_size.cache_info())
    out = frame.explain(uses(_fresh_logged()[0]))(x)
    assert [r.reason for r in out.break_reasons] == [
        "a call of the cached function _fresh_logged.<locals>.size that misses, whose body has "
        "side effects"]


# -- class and function attributes written ---------------------------------------------------------

class Layer:
    instances = 0
    registry = ()
    scale = 1.0

    def __init__(self, name):
        type(self).instances += 1
        Layer.registry = Layer.registry + (name,)
        self.name = name
        self.index = self.instances

    def __call__(self, x):
        return x * self.scale


class Conv(Layer):
    pass


@case(lambda: (array((3,)),), graphs=1)
def class_counter_and_registry(x):
    Layer.instances = Conv.instances = 0
    Layer.registry = ()
    a, b, c = Layer("a"), Conv("b"), Conv("c")
    return a(x) + b(x), Layer.instances, Conv.instances, (a.index, b.index, c.index), Layer.registry


@case(lambda: (array((3,)),), graphs=1)
def class_attribute_config_read_by_instances(x):
    layer = Layer("tmp")
    Layer.scale = 0.5
    y = layer(x)
    Layer.scale = 1.0
    return y, layer(x), Layer.scale


@case(lambda: (array((3,)),), graphs=1)
def subclass_shadows_written_base_attribute(x):
    Conv.scale = 3.0
    out = Conv("c")(x), Layer("l")(x)
    Conv.scale = Layer.scale
    return out, Conv.scale


def _count_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)
    wrapper.calls = 0
    return wrapper


@_count_calls
def _affine(x):
    """An affine map."""
    return 2 * x + 1


@case(lambda: (array((3,)),), graphs=1)
def function_call_counter_attribute(x):
    before = _affine.calls
    y = _affine(_affine(x))
    return y, _affine.calls - before, _affine.__name__, _affine.__doc__, _affine.__wrapped__.__name__


def _tagged(x):
    return x + 1


@case(lambda: (array((3,)),), graphs=1)
def function_attributes_set_in_the_call(x):
    _tagged.last_shape = x.shape
    _tagged.__doc__ = "tagged"
    return _tagged(x), _tagged.last_shape, getattr(_tagged, "missing", None)


# -- generator.close() ---------------------------------------------------------------------------

@case(lambda: (array((4,)),), graphs=1)
def generator_close_runs_its_cleanup(x):
    events = []

    def stream(values):
        events.append("open")
        try:
            for v in values:
                yield v * 2
        finally:
            events.append("closed")
    g = stream(x)
    first = next(g)
    g.close()
    return first, events, list(g)


@case(lambda: (array((4,)),), graphs=1)
def generator_close_before_start_and_after_end(x):
    def pair():
        yield x
        yield x + 1
    fresh, done = pair(), pair()
    fresh.close()
    items = list(done)
    done.close()
    return items, list(fresh)


@case(lambda: (array((4,)),), graphs=1)
def generator_catches_generator_exit(x):
    log = []

    def worker():
        try:
            yield x.sum()
        except GeneratorExit:
            log.append("exit")
            raise
    g = worker()
    total = next(g)
    g.close()
    g.close()
    return total * 2, log


@case(lambda: (array((4,)),), graphs=0, breaks="generator ignored GeneratorExit")
def generator_ignoring_close_raises(x):
    def stubborn():
        try:
            yield 1
        except GeneratorExit:
            pass
        yield 2
    g = stubborn()
    next(g)
    g.close()
    return x


@case(lambda: (array((4,)),), graphs=1)
def generator_returning_on_close(x):
    def averager():
        total, n = 0.0, 0
        try:
            while True:
                total += yield
                n += 1
        except GeneratorExit:
            return total / n
    g = averager()
    next(g)
    for v in (1.0, 2.0, 6.0):
        g.send(v)
    return x * 2, g.close()


# -- a class statement in the function -------------------------------------------------------------

@case(lambda: (array((3,)),), graphs=2, breaks="a class statement (class Scaled)")
def class_statement_is_a_break(x):
    y = x * 2
    factor = 3.0

    class Scaled:
        def __init__(self, v):
            self.v = v

        def value(self):
            return self.v * factor
    s = Scaled(y)
    return s.value() + 1, type(s).__name__, Scaled.__qualname__


# -- NumPy functions ----------------------------------------------------------------------------

@case(lambda: (array((3,), "float64"), array((2, 1), "float64", seed=1)), graphs=1)
def broadcast_arrays_for_a_grid(x, y):
    xs, ys = np.broadcast_arrays(x, y)
    return xs * ys, xs.shape, ys.shape, xs.sum() + ys.sum()


@case(lambda: (array((3,), "float64"), array((2, 3), "float64", seed=1)), graphs=0)
def broadcast_arrays_views_are_handed_out(x, m):
    bx, bm = np.broadcast_arrays(x, m)
    same = np.broadcast_arrays(m, m)
    return bx, bm, same[0] is m, same[1] is m, len(same)


@case(lambda: (array((3,), "float64"), array((4,), "float64", seed=1)), graphs=0,
      breaks="shape mismatch")
def broadcast_arrays_of_mismatched_shapes_raises(x, y):
    return np.broadcast_arrays(x, y)


@case(lambda: (array((3, 4), "float64"), np.array([[1], [3], [0]])), graphs=1)
def put_along_axis_label_smoothing(logits, labels):
    target = np.full(logits.shape, 0.1 / 3)
    np.put_along_axis(target, labels, 0.9, axis=1)
    return target, -(target * logits).sum(axis=1)


@case(lambda: (array((3, 4), "float64"), np.array([[0, 2], [1, 1], [3, 0]])), graphs=1)
def put_along_axis_into_an_argument(x, idx):
    np.put_along_axis(x, idx, np.take_along_axis(x, idx, axis=-1) * 10, axis=-1)
    return x.sum()


@case(lambda: (array((3, 4), "float64"), np.array([[0.0], [1.0], [2.0]])), graphs=0,
      breaks="`indices` must be an integer array")
def put_along_axis_with_float_indices_raises(x, idx):
    np.put_along_axis(x, idx, 0.0, axis=1)
    return x


@case(lambda: (array((6,), "float64"),), graphs=1)
def covariance_of_one_variable(x):
    var = np.cov(x)
    return var, var.ndim, np.cov(x, bias=True) + 1, np.cov(x * 2, ddof=0)


@case(lambda: (array((4,), "float64"),), graphs=1)
def asfortranarray_of_vectors(x):
    col = (x * 2)[:, None]
    f = np.asfortranarray(x)
    return f is x, np.asfortranarray(x + 1) * 3, col.shape


@case(lambda: (array((3, 4), "float64"),), graphs=2, breaks="two dimensions longer than 1")
def asfortranarray_of_a_matrix_breaks(x):
    return np.asfortranarray(x * 2) + 1


def _masked_rows():
    x = array((3, 4), "float64")
    empty_row = x.copy()
    empty_row[1] = -np.abs(empty_row[1]) - 1
    return [(x,), (empty_row,), (x * 2,)]


@case(lambda: _masked_rows()[0], graphs=1, calls=_masked_rows, observe=True)
def masked_row_means(x):
    valid = x > 0
    return np.mean(x, axis=1, where=valid), np.mean(x, where=valid), x.sum()


@case(lambda: (array((3, 4), "int64"),), graphs=1)
def masked_mean_of_integers(x):
    return np.mean(x, axis=0, where=x > 1, keepdims=True), np.mean(x > 2, where=x < 4)


# np.row_stack: NumPy 2's deprecated alias of vstack (removed in later NumPy releases)
if hasattr(np, "row_stack"):
    @case(lambda: (array((3,), "float64"),), graphs=1, observe=True)
    def row_stack_of_rows_warns(x):
        rows = np.row_stack([x, x ** 2, np.ones(3)])
        return rows.sum(axis=0), rows.shape

    @case(lambda: (array((3,), "float64"),), graphs=1, breaks="numpy.row_stack, which warns, after",
          observe=True)
    def row_stack_after_a_write_breaks(x):
        x[0] = 1.0
        return np.row_stack([x, x])


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="this NumPy has no np.row_stack")
def test_row_stack_warning_filtered_to_an_error_raises_before_anything_changes():
    """Under ``warnings.simplefilter("error")`` the DeprecationWarning raises,
    jitted as plainly, and nothing the call does afterwards happens."""
    import warnings

    def f(x, log):
        rows = np.row_stack([x, x])
        log.append(rows.shape)
        return rows * 2
    jitted = frame.jit(f)
    x = array((3,), "float64")
    jitted(x, [])   # translated under the default filters
    for fn in (f, jitted):
        log = []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(DeprecationWarning, match="row_stack"):
                fn(x, log)
        assert log == []


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="this NumPy has no np.row_stack")
def test_row_stack_warning_caught_by_the_function():
    """A handler of the function catches the warning a filter made an error:
    jitted as plainly (the call inside the try is not modelled)."""
    import warnings

    def f(x):
        try:
            rows = np.row_stack([x, x])
        except DeprecationWarning:
            rows = np.vstack([x, -x])
        return rows * 2
    jitted = frame.jit(f)
    x = array((3,), "float64")
    jitted(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(jitted(x), f(x))


# -- small integer dtypes ------------------------------------------------------------------------

@case(lambda: (array((5,), "float64"),), graphs=1)
def bit_flags_from_bool_masks(x):
    positive, large = x > 0, np.abs(x) > 1
    flags = positive << 1 | large.astype(np.int8)
    return flags, positive >> 1, positive << positive, np.uint8(3) << positive, 1 << large


@case(lambda: (array((4,), "float32"),), graphs=1)
def float_bits_through_a_view(x):
    bits = x.view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    return exponent.astype(np.int32) - 127, x.view(np.uint8), bits


@case(lambda: (array((2, 3), "int32"),), graphs=1)
def bytes_of_an_int_matrix(m):
    raw = m.view(np.uint8)
    return raw.shape, raw.sum(axis=1), m.view(np.float32).dtype


@case(lambda: (array((3,), "float64"),), graphs=2, breaks="of an array computed in the function")
def view_of_a_computed_array_breaks(x):
    return (x * 2).view(np.int64) + 1


@pytest.mark.parametrize("c", case.params())
def test_coverage_gaps(c):
    c.check()
