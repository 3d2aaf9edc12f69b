"""Differential corpus, stdlib helpers called from jitted code: math,
functools (reduce, partial, lru_cache, wraps), itertools, operator,
collections (Counter, deque, OrderedDict, defaultdict, ChainMap), json, re,
string formatting, copy, heapq, bisect, statistics, and functions jitted
that are not plain functions (a partial, an lru_cache wrapper).  Each function
is run natively and jitted (``corpus.Case.check``)."""
from __future__ import annotations

import bisect
import collections
import copy
import functools
import heapq
import itertools
import json
import math
import operator
import re
import statistics
import string

import numpy as np
import pytest

import frame

from .corpus import Corpus
from .helpers import array, assert_same_as_eager, tensor

case = Corpus()


# -- math --------------------------------------------------------------------------------------------

@case(lambda: (array(), 0.1))
def cosine_schedule(x, progress):
    lr = 0.5 * (1 + math.cos(math.pi * progress))
    return x * lr, lr


@case(lambda: (array((4, 4)),))
def math_on_shapes(x):
    n = x.shape[0]
    return math.sqrt(n), math.log2(n), math.ceil(n / 3), math.prod(x.shape), math.gcd(*x.shape)


@case(lambda: (array(),))
def xavier_bound_from_shape(w):
    fan_in, fan_out = w.shape
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return np.clip(w, -bound, bound), bound


@case(lambda: (1e308, -0.0))
def math_edge_values(big, negzero):
    return (math.isinf(big * 10), math.copysign(1.0, negzero), math.fsum([0.1] * 10),
            math.isclose(0.1 + 0.2, 0.3), math.inf > big, math.nan != math.nan)


@case(lambda: (-1.0,))
def math_domain_error(v):
    return math.sqrt(v)


@case(lambda: (array(),))
def math_on_numpy_scalar(x):
    s = x.sum()
    return math.exp(s), math.floor(s), math.isfinite(s)


@case(lambda: (10,))
def math_factorial_comb(n):
    return math.factorial(n), math.comb(n, 3), math.perm(n, 2), math.isqrt(n * n + 1)


# -- functools ----------------------------------------------------------------------------------------

def _scale(x, factor=1.0, shift=0.0):
    return x * factor + shift


@functools.lru_cache(maxsize=None)
def _fib(n):
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


@functools.lru_cache(maxsize=8)
def _window(n):
    return np.hanning(n).astype(np.float32)


def _logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fn(*args, **kwargs)
    wrapper.calls = 0
    return wrapper


@_logged
def _double(x):
    return x * 2


@case(lambda: ([array(seed=i) for i in range(4)],))
def reduce_add_arrays(arrays):
    return functools.reduce(np.add, arrays), functools.reduce(operator.mul, [1, 2, 3, 4], 1)


@case(lambda: (array(),))
def reduce_with_lambda(x):
    return functools.reduce(lambda acc, r: acc + r.sum(), x, 0.0)


@case(lambda: (array(),))
def partial_called_inside(x):
    half = functools.partial(_scale, factor=0.5)
    return half(x), half(x, shift=1.0), half.keywords


@case(lambda: (array(),))
def partial_of_numpy_function(x):
    col_sum = functools.partial(np.sum, axis=0)
    return col_sum(x), functools.partial(np.clip, a_min=-1, a_max=1)(x)


@case(lambda: (20,))
def lru_cache_called_inside(n):
    return _fib(n), _fib.cache_info().maxsize


@case(lambda: (array((2, 8)),))
def lru_cached_array_factory(x):
    return x * _window(8), _window(8) is _window(8)


@case(lambda: (array(),))
def wraps_decorated_helper(x):
    return _double(x), _double.__name__, _double.__wrapped__ is not None


def _passthrough(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@_passthrough
def _centered(x, axis=0):
    return x - x.mean(axis=axis, keepdims=True)


@_passthrough
def _fit_step(x):
    return _centered(x) * 2


@case(lambda: (array(),))
def wraps_decorator_without_state(x):
    return _centered(x), _centered(x, axis=1)


case.add(_double, lambda: (array(),), name="jit_a_wraps_decorated_function")
case.add(_centered, lambda: (array(),), kwargs={"axis": 1}, name="jit_a_wraps_passthrough")


@case(lambda: ([3, 1, 2],))
def cmp_to_key_sort(values):
    return sorted(values, key=functools.cmp_to_key(lambda a, b: b - a))


case.add(functools.partial(_scale, factor=3.0), lambda: (array(),), name="jit_a_partial")
case.add(_fib, lambda: (15,), name="jit_an_lru_cache_wrapper")


# -- itertools and operator --------------------------------------------------------------------------

@case(lambda: (array((3, 3)),))
def itertools_combinations_of_rows(x):
    return [float(np.dot(x[i], x[j])) for i, j in itertools.combinations(range(3), 2)]


@case(lambda: ([1, 2, 3, 4],))
def itertools_accumulate_chain(values):
    return (list(itertools.accumulate(values)), list(itertools.chain(values, [5, 6])),
            list(itertools.accumulate(values, operator.mul)))


@case(lambda: (array((4, 3)),))
def itertools_islice_and_count(x):
    return [(i, r.sum()) for i, r in zip(itertools.count(10, 5), itertools.islice(x, 1, None, 2))]


@case(lambda: (["a", "a", "b", "c", "c", "c"],))
def itertools_groupby(items):
    return [(k, len(list(g))) for k, g in itertools.groupby(items)]


@case(lambda: ([3, 4],))
def itertools_product_grid(shape):
    return list(itertools.product(range(shape[0]), range(shape[1])))[::3]


@case(lambda: (array(), array(seed=1)))
def itertools_zip_longest_starmap(x, y):
    pairs = list(itertools.zip_longest([1, 2, 3], [4, 5], fillvalue=0))
    return pairs, list(itertools.starmap(operator.add, pairs)), list(itertools.repeat(x.shape, 2))


@case(lambda: ({"b": 2, "a": 1, "c": 3},))
def operator_itemgetter_sort(d):
    return sorted(d.items(), key=operator.itemgetter(1)), operator.itemgetter("a", "c")(d)


@case(lambda: (array(),))
def operator_attrgetter_methodcaller(x):
    shape = operator.attrgetter("shape")(x)
    total = operator.methodcaller("sum", axis=0)(x)
    return shape, total


@case(lambda: (array(), array(seed=1)))
def operator_functions_on_arrays(x, y):
    return operator.add(x, y), operator.truediv(x, 2), operator.neg(y), operator.matmul(x, y.T)


@case(lambda: (array(), array(seed=1)))
def operator_inplace_functions(x, y):
    z = operator.iadd(x, y)
    return z is x, x


# -- collections -------------------------------------------------------------------------------------

@case(lambda: ([0, 1, 1, 2, 2, 2],))
def counter_class_weights(labels):
    counts = collections.Counter(labels)
    total = sum(counts.values())
    return {k: total / (len(counts) * v) for k, v in sorted(counts.items())}, counts.most_common(1)


@case(lambda: ("the cat and the hat",))
def counter_arithmetic(text):
    a = collections.Counter(text.split())
    b = collections.Counter("the end".split())
    return a + b, a - b, a["missing"], sorted(a.elements())


@case(lambda: (array((5, 3)),))
def deque_moving_window(x):
    window = collections.deque(maxlen=3)
    out = []
    for row in x:
        window.append(row)
        out.append(sum(window) / len(window))
    return out


@case(lambda: ([1, 2, 3],))
def deque_rotate_and_pops(values):
    d = collections.deque(values)
    d.rotate(1)
    d.appendleft(0)
    last = d.pop()
    return list(d), last, d.popleft()


@case(lambda: (array(),))
def ordered_dict_state(x):
    state = collections.OrderedDict()
    state["weight"] = x
    state["bias"] = x.sum(axis=0)
    state.move_to_end("weight")
    return list(state), state.popitem(last=False)


@case(lambda: (["apple", "avocado", "banana", "cherry"],))
def defaultdict_grouping(words):
    groups = collections.defaultdict(list)
    for w in words:
        groups[w[0]].append(w)
    return dict(groups), groups["z"], len(groups)


@case(lambda: ({"lr": 0.1},))
def chainmap_defaults(overrides):
    defaults = {"lr": 0.01, "epochs": 3}
    cfg = collections.ChainMap(overrides, defaults)
    return cfg["lr"], cfg["epochs"], dict(cfg)


@case(lambda: (array(),))
def namedtuple_in_collections_container(x):
    Item = collections.namedtuple("Item", "name value", module=__name__)
    items = [Item("a", x.sum()), Item("b", x.mean())]
    return sorted(items, key=lambda it: it.value)[0].name, [tuple(it) for it in items]


# -- json, re, string formatting ------------------------------------------------------------------

@case(lambda: (array(),))
def json_roundtrip_of_metrics(x):
    metrics = {"mean": float(x.mean()), "shape": list(x.shape), "ok": True, "none": None}
    text = json.dumps(metrics, sort_keys=True)
    return text, json.loads(text)


@case(lambda: ('{"lr": 0.1, "layers": [4, 2]}',))
def json_config_parsed(text):
    cfg = json.loads(text)
    return np.zeros(cfg["layers"], np.float32) + cfg["lr"]


@case(lambda: ("{bad json",))
def json_decode_error(text):
    return json.loads(text)


@case(lambda: (array(),))
def json_dumps_numpy_raises(x):
    return json.dumps({"sum": x.sum()})


@case(lambda: ("layer1.weight layer2.bias layer10.weight",))
def regex_parse_parameter_names(names):
    pattern = re.compile(r"layer(\d+)\.(\w+)")
    return [(int(m.group(1)), m.group(2)) for m in pattern.finditer(names)]


@case(lambda: ("epoch=3, loss=0.25, acc=0.9",))
def regex_findall_and_sub(line):
    pairs = dict(re.findall(r"(\w+)=([\d.]+)", line))
    return pairs, re.sub(r"\d", "#", line), re.split(r",\s*", line)


@case(lambda: ("(unclosed",))
def regex_compile_error(pattern):
    return re.compile(pattern)


@case(lambda: (array(), 3))
def fstring_formatting(x, epoch):
    return f"epoch {epoch:03d}: loss={float(x.mean()):.4f} shape={x.shape} {x.dtype!s}"


@case(lambda: (array(),))
def format_and_percent(x):
    return ("{:>8.3f}|{:<4}|{!r}".format(float(x.max()), "ab", "q"),
            "%5.2f %s %d" % (float(x.min()), "z", 7), format(0.5, ".1%"))


@case(lambda: (array(),))
def string_methods(x):
    name = "Layer_Norm"
    return (name.lower(), name.split("_"), "-".join(["a", "b"]), name.startswith("Lay"),
            name.replace("_", " ").title(), f"{x.ndim}".zfill(3), string.ascii_lowercase[:3])


@case(lambda: (array(),))
def string_template(x):
    t = string.Template("mean=$mean n=$n")
    return t.substitute(mean=round(float(x.mean()), 3), n=x.size)


@case(lambda: (array(),))
def repr_and_str_of_arrays(x):
    return repr(x[0]), str(x.shape), str(np.float32(1.5)), repr(np.int64(3))


# -- copy, heapq, bisect, statistics -------------------------------------------------------------

@case(lambda: ({"w": array(), "hist": [1, 2]},))
def copy_deepcopy_state(state):
    snapshot = copy.deepcopy(state)
    state["w"] += 1.0
    state["hist"].append(3)
    return snapshot


@case(lambda: ([[1, 2], [3]],))
def copy_shallow_list(nested):
    c = copy.copy(nested)
    c[0].append(9)
    c.append([4])
    return c, c[0] is nested[0]


@case(lambda: (array(),))
def copy_copy_array(x):
    y = copy.copy(x)
    y[0, 0] = 100.0
    return x, y


@case(lambda: ([5, 1, 8, 3, 9, 2],))
def heapq_top_k(values):
    h = list(values)
    heapq.heapify(h)
    smallest = [heapq.heappop(h) for _ in range(2)]
    return smallest, heapq.nlargest(3, values), heapq.nsmallest(2, values, key=lambda v: -v)


@case(lambda: (array((6, 3)),))
def heapq_rows_by_norm(x):
    heap = []
    for i, row in enumerate(x):
        heapq.heappush(heap, (float(np.linalg.norm(row)), i))
    return [heapq.heappop(heap)[1] for _ in range(len(heap))]


@case(lambda: ([0.1, 0.5, 0.9], 0.6))
def bisect_bucket(edges, value):
    i = bisect.bisect_right(edges, value)
    edges2 = list(edges)
    bisect.insort(edges2, value)
    return i, bisect.bisect_left(edges, 0.5), edges2


@case(lambda: (array((10,)),))
def bisect_on_sorted_array(x):
    s = np.sort(x)
    return bisect.bisect(s.tolist(), 0.0), np.searchsorted(s, 0.0)


@case(lambda: ([2.0, 4.0, 4.0, 5.0, 7.0],))
def statistics_summary(values):
    return (statistics.mean(values), statistics.median(values), statistics.mode(values),
            statistics.pstdev(values), statistics.variance(values))


@case(lambda: ([1.0],))
def statistics_error(values):
    return statistics.stdev(values)


@case(lambda: (array((8,)),))
def statistics_on_array_items(x):
    vals = x.tolist()
    return statistics.fmean(vals), statistics.quantiles(vals, n=4)


# -- tensors through stdlib helpers ------------------------------------------------------------------

@case(lambda: ([tensor(seed=i) for i in range(3)],))
def tensor_reduce_sum(ts):
    return functools.reduce(operator.add, ts)


def _leaky_relu(v, slope):
    return frame.maximum(v, v * slope)


@case(lambda: (tensor(),))
def tensor_partial_activation(t):
    leaky = functools.partial(_leaky_relu, slope=0.1)
    return leaky(t)


@case(lambda: (tensor(), 0.3))
def tensor_math_scale(t, dropout):
    keep = 1.0 - dropout
    return t * (1.0 / keep), math.floor(keep * 10)


@case(lambda: ({"w": tensor(), "b": tensor((3,), seed=1)},))
def tensor_state_dict_json_summary(state):
    summary = {k: list(v.shape) for k, v in sorted(state.items())}
    return json.dumps(summary), state["w"] + state["b"]


@pytest.mark.parametrize("c", case.params())
def test_corpus_stdlib(c):
    c.check()


def test_wraps_decorated_function_is_captured_with_its_own_signature():
    # the wrapper's code is (*args, **kwargs): binding the call by the wrapped
    # function's signature made the fresh entry reject its own arguments
    assert_same_as_eager(_centered, array(), axis=1, backend=None)
    assert_same_as_eager(_fit_step, array(), backend=None)
