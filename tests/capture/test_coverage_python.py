"""Coverage corpus, Python language (issue 15 items 4 and 5): context managers
(user classes, ``contextlib``), ``try``/``except``/``else``/``finally``,
exceptions raised and caught inside, ``raise ... from``, container methods,
``operator``, ``collections``, iteration builtins, generators, ``isinstance``
with ABCs, ``super()``, ``getattr``/``hasattr``, identity tests, string
formatting of constants and ``math`` on constants, written in the style of
TorchDynamo's test_functions / test_misc / test_exceptions / test_ctx_manager
and Paddle SOT's tests.  Each case is run natively and jitted
(``corpus.Case.check``) and states how it is captured (``graphs=``, and
``breaks=`` for the breaks that are inherent)."""
from __future__ import annotations

import collections
import collections.abc
import contextlib
import functools
import math
import numbers
import operator
import threading

import numpy as np
import pytest

import frame

from .corpus import Corpus
from .helpers import array, tensor

case = Corpus()


# -- context managers --------------------------------------------------------------------------

class CustomCtx:
    """A context manager that counts how often it is entered."""

    def __init__(self):
        self.entered = 0
        self.exited = 0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, exc_type, exc_value, tb):
        self.exited += 1
        return False


class Scale:
    """``with Scale(2.0) as s:`` gives the factor."""

    def __init__(self, factor):
        self.factor = factor

    def __enter__(self):
        return self.factor

    def __exit__(self, *exc):
        return None


class Suppressing:
    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, tb):
        return exc_type is not None and issubclass(exc_type, ValueError)


_CTX = CustomCtx()
_DOUBLE = Scale(2.0)
_HALF = Scale(0.5)
_TRIPLE = Scale(3.0)
_SUPPRESSING = Suppressing()
_LOCK = threading.Lock()
_RLOCK = threading.RLock()


@contextlib.contextmanager
def _scaled(factor):
    yield factor * 2


@contextlib.contextmanager
def _tracking(log):
    log.append("enter")
    try:
        yield len(log)
    finally:
        log.append("exit")


@case(lambda: (tensor(),), graphs=1)
def ctx_user_class_global(x):
    with _CTX:
        y = x * 2
    return y + 1


@case(lambda: (tensor(), CustomCtx()), graphs=1)
def ctx_user_class_argument(x, ctx):
    with ctx as c:
        y = x.sin()
    return y, c.entered, c.exited


@case(lambda: (tensor(),), graphs=1)
def ctx_enter_returns_value(x):
    with _TRIPLE as s:
        return x * s


@case(lambda: (tensor(),), graphs=1)
def ctx_nested_managers(x):
    with _DOUBLE as a, _HALF as b:
        y = x * a * b
    return y


@case(lambda: (tensor(),), graphs=1)
def ctx_suppresses_value_error(x):
    y = x + 1
    with _SUPPRESSING:
        raise ValueError("ignored")
    return y


@case(lambda: (tensor(),), graphs=1)
def ctx_contextmanager_function(x):
    with _scaled(1.5) as f:
        y = x * f
    return y


@case(lambda: (tensor(), []), graphs=1)
def ctx_contextmanager_with_finally(x, log):
    with _tracking(log) as n:
        y = x + n
    return y, log


@case(lambda: (tensor(),), graphs=1)
def ctx_suppress_no_exception(x):
    with contextlib.suppress(KeyError):
        y = x.exp()
    return y


@case(lambda: (tensor(),), graphs=1)
def ctx_suppress_key_error(x):
    d = {"a": x}
    y = x
    with contextlib.suppress(KeyError):
        y = d["b"]
    return y * 2


@case(lambda: (tensor(),), graphs=1)
def ctx_nullcontext(x):
    with contextlib.nullcontext(x) as v:
        return v.abs()


@case(lambda: (tensor(),), graphs=1)
def ctx_no_grad_inside_user_ctx(x):
    with _DOUBLE as s, frame.no_grad():
        y = x * s
    return y


# a lock is entered natively at a break: the block's graph runs while the lock is held,
# and the lock's (C) __exit__ is called natively at a second break
@case(lambda: (tensor(),), graphs=1, breaks=("a lock", "__exit__"))
def ctx_lock(x):
    with _LOCK:
        y = x * 2
    return y


@case(lambda: (tensor(),), graphs=3, breaks=("a lock", "__exit__"))
def ctx_rlock_between_ops(x):
    y = x + 1
    with _RLOCK:
        y = y * 2
    return y - 1


@case(lambda: (tensor(),), graphs=1, breaks=("a lock", "a lock", "__exit__", "__exit__"))
def ctx_rlock_nested(x):
    with _RLOCK:
        with _RLOCK:
            y = x - 1
    return y


# -- try / except / else / finally -----------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def try_body_no_exception(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


@case(lambda: (tensor(),), graphs=1)
def try_else_finally(x):
    out = []
    try:
        y = x + 1
    except (TypeError, ValueError):
        out.append("except")
        y = x
    else:
        out.append("else")
    finally:
        out.append("finally")
    return y, out


@case(lambda: (tensor(),), graphs=1)
def try_finally_return(x):
    try:
        return x.cos()
    finally:
        x.shape


@case(lambda: (tensor(),), graphs=1)
def caught_value_error(x):
    try:
        raise ValueError("bad")
    except ValueError:
        y = x * 3
    return y


@case(lambda: (tensor(),), graphs=1)
def caught_exception_message(x):
    try:
        raise KeyError("missing")
    except LookupError as e:
        msg = str(e)
    return x + len(msg), msg


@case(lambda: (tensor(),), graphs=1)
def caught_dict_key_error(x):
    d = {"w": 2.0}
    try:
        scale = d["missing"]
    except KeyError:
        scale = 0.5
    return x * scale


@case(lambda: (tensor(),), graphs=1)
def caught_index_error(x):
    items = [1.0, 2.0]
    try:
        v = items[5]
    except IndexError:
        v = -1.0
    return x + v


@case(lambda: (tensor(),), graphs=1)
def caught_in_called_function(x):
    def parse(s):
        try:
            return int(s)
        except ValueError:
            return 0
    return x * parse("abc") + parse("3")


class MyError(Exception):
    pass


@case(lambda: (tensor(),), graphs=1)
def caught_user_exception(x):
    def check(v):
        if v > 1:
            raise MyError("too big", v)
        return v
    try:
        check(3)
        y = x
    except MyError as e:
        y = x * e.args[1]
    return y


@case(lambda: (tensor(),), graphs=1)
def caught_and_finally(x):
    steps = []
    try:
        steps.append(1)
        raise RuntimeError("stop")
    except RuntimeError:
        steps.append(2)
    finally:
        steps.append(3)
    return x * len(steps), steps


@case(lambda: (tensor(),), graphs=1)
def caught_nested_try(x):
    try:
        try:
            raise TypeError("inner")
        except ValueError:
            y = x
    except TypeError:
        y = x * 4
    return y


@case(lambda: (tensor(),), graphs=1)
def caught_reraise_outer(x):
    try:
        try:
            raise ValueError("inner")
        except ValueError:
            raise
    except ValueError as e:
        return x - 1, e.args


@case(lambda: (tensor(),), graphs=1)
def caught_stop_iteration(x):
    it = iter([1, 2])
    next(it)
    next(it)
    try:
        next(it)
        done = False
    except StopIteration:
        done = True
    return x * 2, done


# an exception leaving the function: it runs natively, which raises the real one
@case(lambda: (tensor(),), graphs=0, breaks="raises ValueError")
def raise_from_escapes(x):
    y = x * 2
    try:
        {}["k"]
    except KeyError as e:
        raise ValueError("no key") from e
    return y


@case(lambda: (tensor(),), graphs=0, breaks="raises MyError")
def raise_user_error_escapes(x):
    y = x + 1
    if y.shape[0] == 2:
        raise MyError("shape", y.shape)
    return y


# -- dict and list methods -------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def dict_fromkeys(x):
    d = dict.fromkeys(["a", "b", "c"], 0)
    d["b"] = 2
    return x * sum(d.values()), d


@case(lambda: (tensor(),), graphs=1)
def dict_popitem(x):
    d = {"a": 1, "b": 2}
    k, v = d.popitem()
    return x + v, k, d


@case(lambda: (tensor(),), graphs=1)
def dict_setdefault(x):
    d = {}
    d.setdefault("xs", []).append(x)
    d.setdefault("xs", []).append(x * 2)
    return d["xs"][0] + d["xs"][1], len(d)


@case(lambda: (tensor(),), graphs=1)
def dict_update_pop_get(x):
    d = {"a": 1.0}
    d.update(b=2.0, c=3.0)
    c = d.pop("c")
    return x * d.get("b", 0.0) + c + d.get("z", 10.0), sorted(d)


@case(lambda: (tensor(), {"w": 1.0, "b": 2.0}), graphs=1)
def dict_items_sorted(x, cfg):
    total = x
    for k, v in sorted(cfg.items()):
        total = total + v
    return total


@case(lambda: (tensor(),), graphs=1)
def list_sort_key_reverse(x):
    items = [(3, "c"), (1, "a"), (2, "b")]
    items.sort(key=lambda p: p[0], reverse=True)
    return x * items[0][0], items


@case(lambda: (tensor(),), graphs=1)
def sorted_with_key_lambda(x):
    words = ["ccc", "a", "bb"]
    order = sorted(words, key=lambda w: len(w))
    return x + len(order[-1]), order


@case(lambda: (tensor(),), graphs=1)
def min_max_with_key(x):
    pairs = [(1, 5.0), (2, -1.0), (3, 2.0)]
    lo = min(pairs, key=lambda p: p[1])
    hi = max(pairs, key=lambda p: p[1])
    return x * lo[0] + hi[0]


@case(lambda: (tensor(),), graphs=1)
def list_methods(x):
    xs = [3, 1, 2]
    xs.append(4)
    xs.insert(0, 0)
    xs.extend([5, 6])
    xs.remove(3)
    last = xs.pop()
    xs.reverse()
    return x * (xs.index(2) + xs.count(1) + last), xs


@case(lambda: (tensor(),), graphs=1)
def del_subscript_and_local(x):
    d = {"a": 1, "b": 2}
    xs = [1, 2, 3, 4]
    del d["a"]
    del xs[1:3]
    tmp = x * 2
    y = tmp + 1
    del tmp
    return y, d, xs


class _Box:
    def __init__(self):
        self.a = 1
        self.b = 2


@case(lambda: (tensor(), _Box()), graphs=1)
def del_attribute(x, box):
    del box.a
    return x + box.b, hasattr(box, "a")


# -- operator ----------------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def operator_functions(x):
    a = operator.add(x, 1.0)
    b = operator.mul(a, 2.0)
    c = operator.neg(b)
    return operator.sub(c, operator.truediv(x, 2.0)), operator.truth(3), operator.not_(0)


@case(lambda: (tensor(),), graphs=1)
def operator_itemgetter(x):
    pairs = [(1, 0.5), (2, 1.5)]
    firsts = list(map(operator.itemgetter(0), pairs))
    get_both = operator.itemgetter(1, 0)
    return x * firsts[1] + get_both(pairs[0])[0]


class _Cfg:
    scale = 2.0
    shift = 1.0


@case(lambda: (tensor(), _Cfg()), graphs=1)
def operator_attrgetter(x, cfg):
    scale, shift = operator.attrgetter("scale", "shift")(cfg)
    return x * scale + shift


@case(lambda: (tensor(),), graphs=1)
def operator_methodcaller(x):
    upper = operator.methodcaller("upper")
    return x + len(upper("abc")), upper("abc")


@case(lambda: (tensor(),), graphs=1)
def operator_getitem_setitem(x):
    d = {}
    operator.setitem(d, "y", x)
    return operator.getitem(d, "y") * 2, operator.contains([1, 2], 2)


@case(lambda: ([tensor(seed=i) for i in range(3)],), graphs=1)
def functools_reduce_operator_add(xs):
    return functools.reduce(operator.add, xs)


# -- collections -------------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def deque_rolling(x):
    window = collections.deque(maxlen=2)
    for i in range(4):
        window.append(x * i)
    return window[0] + window[1], len(window)


@case(lambda: (tensor(),), graphs=1)
def deque_appendleft_pop(x):
    q = collections.deque([1, 2])
    q.appendleft(0)
    q.append(3)
    a = q.popleft()
    b = q.pop()
    return x * (a + b + len(q)), list(q)


@case(lambda: (tensor(),), graphs=1)
def ordered_dict_layers(x):
    layers = collections.OrderedDict()
    layers["double"] = 2.0
    layers["shift"] = 1.0
    layers.move_to_end("double")
    y = x
    for name, v in layers.items():
        y = y * v if name == "double" else y + v
    return y, list(layers)


@case(lambda: (tensor(),), graphs=1)
def defaultdict_list(x):
    groups = collections.defaultdict(list)
    for k, v in [("a", 1), ("b", 2), ("a", 3)]:
        groups[k].append(v)
    return x * sum(groups["a"]), dict(groups)


@case(lambda: (tensor(),), graphs=1)
def defaultdict_int_counts(x):
    counts = collections.defaultdict(int)
    for w in "abcab":
        counts[w] += 1
    return x + counts["a"], sorted(counts.items())


@case(lambda: (tensor(),), graphs=1)
def counter_most_common(x):
    c = collections.Counter("hello world")
    (letter, n), = c.most_common(1)
    return x * n, letter


Point = collections.namedtuple("Point", ["a", "b"])


@case(lambda: (tensor(),), graphs=1)
def namedtuple_fields(x):
    p = Point(1.0, b=2.0)
    a, b = p
    return x * p.a + b, p, p[1]


# -- iteration builtins over containers --------------------------------------------------------

@case(lambda: ([tensor(seed=i) for i in range(3)],), graphs=1)
def enumerate_list(xs):
    out = 0
    for i, t in enumerate(xs, start=1):
        out = out + t * i
    return out


@case(lambda: ((tensor(seed=0), tensor(seed=1)), [0.5, 2.0]), graphs=1)
def zip_tuple_list(ts, ws):
    return sum(t * w for t, w in zip(ts, ws))


@case(lambda: ({"a": tensor(seed=0), "b": tensor(seed=1)},), graphs=1)
def iterate_dict_views(d):
    keys = list(d.keys())
    total = 0
    for v in d.values():
        total = total + v
    for k, v in d.items():
        total = total + v * len(k)
    return total, keys


@case(lambda: (tensor(),), graphs=1)
def map_filter_range(x):
    evens = list(filter(lambda i: i % 2 == 0, range(10)))
    squares = list(map(lambda i: i * i, evens))
    return x * sum(squares), squares


@case(lambda: ([tensor(seed=i) for i in range(3)],), graphs=1)
def reversed_list_and_range(xs):
    out = xs[0]
    for t in reversed(xs):
        out = out - t
    idx = list(reversed(range(3)))
    return out, idx


@case(lambda: (tensor(),), graphs=1)
def zip_dict_and_range(x):
    d = {"a": 1, "b": 2}
    pairs = list(zip(d, range(5, 10)))
    return x * pairs[1][1], pairs


@case(lambda: (tensor(),), graphs=1)
def enumerate_set_and_string(x):
    letters = sorted({c for c in "banana"})
    total = 0
    for i, c in enumerate("abc"):
        total += i
    return x + total, letters


@case(lambda: (tensor(),), graphs=1)
def map_two_iterables(x):
    return x * sum(map(operator.mul, [1, 2, 3], (4, 5, 6)))


# -- generators --------------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def generator_function_inner(x):
    def powers(t, n):
        p = t
        for _ in range(n):
            yield p
            p = p * t
    return list(powers(x, 3))


@case(lambda: (tensor(),), graphs=1)
def generator_yield_from(x):
    def inner(t):
        yield t
        yield t + 1

    def outer(t):
        yield from inner(t)
        yield t * 10
    return sum(outer(x))


@case(lambda: (tensor(),), graphs=1)
def generator_send(x):
    def accumulate():
        total = 0
        while True:
            value = yield total
            total = total + value
    acc = accumulate()
    next(acc)
    acc.send(x)
    return acc.send(x * 2)


@case(lambda: ([tensor(seed=i) for i in range(4)],), graphs=1)
def generator_expression_sum(xs):
    return sum(t * t for t in xs)


@case(lambda: (tensor(),), graphs=1)
def generator_next_default(x):
    gen = (i for i in range(2))
    a = next(gen)
    b = next(gen)
    c = next(gen, -1)
    return x * (a + b + c)


@case(lambda: ([tensor(seed=i) for i in range(3)],), graphs=1)
def generator_any_all(xs):
    shapes_ok = all(t.shape == xs[0].shape for t in xs)
    has_big = any(t.ndim > 2 for t in xs)
    return xs[0] + xs[1], shapes_ok, has_big


# -- isinstance, super, getattr, identity --------------------------------------------------

@case(lambda: (tensor(), 2), graphs=1)
def isinstance_tuple(x, n):
    if isinstance(n, (int, float)):
        return x * n
    return x


@case(lambda: (tensor(), [1, 2], 2.5), graphs=1)
def isinstance_abcs(x, seq, scale):
    k = 0
    if isinstance(seq, collections.abc.Sequence):
        k += len(seq)
    if isinstance(scale, numbers.Number):
        k += 1
    if isinstance({}, collections.abc.Mapping):
        k += 10
    return x * k


@case(lambda: (tensor(),), graphs=1)
def issubclass_checks(x):
    a = issubclass(bool, int)
    b = issubclass(KeyError, (ValueError, LookupError))
    c = issubclass(list, collections.abc.MutableSequence)
    return x + (a + b + c)


class _Base:
    def forward(self, x):
        return x * 2

    def describe(self):
        return "base"


class _Child(_Base):
    def forward(self, x):
        return super().forward(x) + 1

    def describe(self):
        return "child:" + super().describe()


@case(lambda: (tensor(), _Child()), graphs=1)
def super_call(x, m):
    return m.forward(x), m.describe()


@case(lambda: (tensor(), _Cfg()), graphs=1)
def getattr_default_hasattr(x, cfg):
    scale = getattr(cfg, "scale", 1.0)
    bias = getattr(cfg, "bias", 0.5)
    return x * scale + bias, hasattr(cfg, "shift"), hasattr(cfg, "missing")


@case(lambda: (tensor(), None), graphs=1)
def identity_is_none(x, mask):
    if mask is None:
        mask = 1.0
    sentinel = object()
    value = getattr(x, "nonexistent_attr", sentinel)
    return x * mask, value is sentinel, mask is not None


@case(lambda: (tensor(), tensor(seed=1)), graphs=1)
def identity_tensors(x, y):
    z = x
    return x + y, z is x, y is x, x is not y


# -- strings and math ----------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def fstring_constants(x):
    name = "layer"
    idx = 3
    key = f"{name}_{idx:02d}"
    return x * len(key), key, f"{2.5:.3f}", f"{name!r}"


@case(lambda: (tensor(),), graphs=1)
def str_format_and_methods(x):
    s = "{}-{:>4}".format("a", 7)
    parts = "a,b,c".split(",")
    joined = "+".join(parts).upper()
    return x + len(s), s, joined, "abc".startswith("ab"), "x y".replace(" ", "_")


@case(lambda: (tensor(),), graphs=1)
def fstring_tensor_shape(x):
    return x * 2, f"shape={tuple(x.shape)} dtype={x.dtype}"


@case(lambda: (tensor(),), graphs=1)
def math_on_constants(x):
    scale = math.sqrt(2.0) / math.pi
    k = math.ceil(2.3) + math.floor(2.7) + math.factorial(3)
    return x * scale + k + math.log(math.e) + math.cos(0.0), math.isclose(0.1 + 0.2, 0.3)


@case(lambda: (tensor((4, 3)),), graphs=1)
def math_prod_of_shape(x):
    return x.reshape(math.prod(x.shape)) * math.gcd(12, 8)


@case(lambda: (tensor(),), graphs=1)
def all_any_sum_scalars(x):
    vals = [1, 2, 3.5]
    flags = [True, False, True]
    return x * sum(vals) + all(flags) + any(flags), sum(vals, 10), abs(-2), round(2.567, 2)


@case(lambda: (tensor(),), graphs=1)
def builtins_divmod_pow_minmax(x):
    q, r = divmod(17, 5)
    return x * pow(2, q) + max(r, 1) + min(3, 4, 5), int("12"), float("1.5"), bool([])


@case(lambda: (tensor(),), graphs=1)
def tuple_and_set_ops(x):
    a = {1, 2, 3}
    b = {2, 3, 4}
    t = (1, 2) + (3,)
    return x * len(a & b) + len(a | b) + len(a - b) + t.index(3), sorted(a ^ b), t.count(1)


@case(lambda: (tensor(),), graphs=1)
def list_comprehension_nested(x):
    grid = [[i * j for j in range(3)] for i in range(3)]
    flat = [v for row in grid for v in row if v]
    return x + sum(flat), grid


@case(lambda: (tensor(),), graphs=1)
def dict_comprehension_and_len(x):
    sq = {i: i * i for i in range(4)}
    inv = {v: k for k, v in sq.items()}
    return x * len(inv) + inv[9], sq


# -- more (Dynamo test_exceptions / test_ctx_manager / test_functions style) -----------------

@contextlib.contextmanager
def _ignoring(*classes):
    try:
        yield
    except classes:
        pass


@case(lambda: (tensor(),), graphs=1)
def ctx_contextmanager_swallows(x):
    with _ignoring(ZeroDivisionError):
        y = x * 2
        1 / 0
    return y


@case(lambda: (tensor(), CustomCtx()), graphs=1)
def ctx_in_loop(x, ctx):
    for i in range(3):
        with ctx:
            x = x + i
    return x, ctx.entered, ctx.exited


@case(lambda: (tensor(),), graphs=1)
def ctx_exit_not_suppressing_caught_outside(x):
    try:
        with _CTX:
            raise KeyError("k")
    except KeyError:
        y = x - 1
    return y


class _CodedError(RuntimeError):
    code = 7


@case(lambda: (tensor(),), graphs=1)
def caught_class_attribute(x):
    try:
        raise _CodedError("boom")
    except RuntimeError as e:
        return x * e.code, str(e), type(e).__name__


@case(lambda: (tensor(),), graphs=1)
def caught_zero_division(x):
    def safe_div(a, b):
        try:
            return a / b
        except ZeroDivisionError:
            return float("inf")
    return x * safe_div(6, 3), safe_div(1, 0)


@case(lambda: (tensor(),), graphs=1)
def generator_throw(x):
    def gen():
        try:
            yield 1
        except ValueError:
            pass
        yield 2
    g = gen()
    a = next(g)
    b = g.throw(ValueError)
    return x * (a + b)


@case(lambda: (tensor(),), graphs=1)
def operator_inplace_and_compare(x):
    total = operator.iadd(1, 2)
    return operator.mul(x, total), operator.lt(1, 2), operator.eq(x, x)


@case(lambda: (tensor(),), graphs=1)
def counter_update_and_total(x):
    c = collections.Counter(["a", "b"])
    c.update("aab")
    return x * c["a"], c.total() if hasattr(c, "total") else sum(c.values())


@case(lambda: (tensor(),), graphs=1)
def deque_rotate_extendleft(x):
    q = collections.deque(range(4))
    q.rotate(-1)
    q.extendleft([9, 8])
    return x + q[0], list(q)


@case(lambda: (tensor(),), graphs=1)
def ordered_dict_popitem(x):
    od = collections.OrderedDict()
    for k in "abc":
        od[k] = len(od)
    last = od.popitem()
    first = od.popitem(last=False)
    return x * last[1], first, od


@case(lambda: (tensor(), {"b": 2.0, "a": 3.0, "c": 1.0}), graphs=1)
def sorted_items_by_value(x, weights):
    ranked = sorted(weights.items(), key=lambda kv: kv[1], reverse=True)
    return x * ranked[0][1], [k for k, _ in ranked]


@case(lambda: (tensor(),), graphs=1)
def min_with_default(x):
    empty = min([], key=abs, default=0.5)
    return x * empty + max([-3, 2], key=abs)



@case(lambda: (tensor(), {"a": 1, "b": 2}), graphs=1)
def reversed_dict_views_and_set_error(x, d):
    keys = list(reversed(d))
    vals = list(reversed(d.values()))
    try:
        reversed({1, 2})
        ok = True
    except TypeError as e:
        ok = str(e)
    return x + vals[0], keys, ok


@pytest.mark.parametrize("c", case.params())
def test_coverage_python(c):
    c.check()
