"""Coverage corpus, more Python constructs: ``itertools``, ``collections``
(``OrderedDict``, ``defaultdict``, ``Counter``, ``deque``), ``dict | dict``,
``match`` statements (sequence, mapping, class, or-patterns, guards),
``del`` of a global, user exception classes with an ``__init__``, ``enum``,
and a few builtins on constants (``str.join``, ``frozenset``, ``complex``,
``int.from_bytes``, ``vars``), written in the style of TorchDynamo's
test_functions / test_misc and Paddle SOT's tests.  Each case is run
natively and jitted (``corpus.Case.check``) and states how it is captured
(``graphs=``, and ``breaks=`` for the breaks that are inherent)."""
from __future__ import annotations

import collections
import dataclasses
import enum
import itertools
import operator
from typing import NamedTuple

import numpy as np
import pytest

from .corpus import Corpus
from .helpers import array, tensor

case = Corpus()


# -- itertools -----------------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def chain_lists_and_tuples(x):
    total = 0
    for v in itertools.chain([1, 2], (3,), range(4, 6)):
        total += v
    return x * total


@case(lambda: (array(),), graphs=1)
def chain_of_generator_rows(x):
    rows = [r * 2 for r in itertools.chain(x, (row + 1 for row in x))]
    return rows[0] + rows[-1], len(rows)


@case(lambda: (tensor(),), graphs=1)
def chain_from_iterable_flattens(x):
    nested = [[1, 2], [], [3, 4, 5]]
    flat = list(itertools.chain.from_iterable(nested))
    return x * sum(flat), flat


@case(lambda: (tensor(),), graphs=1)
def chain_is_lazy_over_generators(x):
    log = []

    def produce(tag, n):
        for i in range(n):
            log.append((tag, i))
            yield i

    it = itertools.chain(produce("a", 2), produce("b", 3))
    first = list(itertools.islice(it, 3))
    rest = next(it)
    return x + rest, first, log


@case(lambda: (tensor(),), graphs=1)
def accumulate_running_sum_and_max(x):
    sums = list(itertools.accumulate([1, 2, 3, 4]))
    peaks = list(itertools.accumulate([3, 1, 4, 1, 5], max))
    with_initial = list(itertools.accumulate([1, 2], operator.mul, initial=10))
    return x * sums[-1], peaks, with_initial


@case(lambda: (array(),), graphs=1)
def accumulate_tensors(x):
    partial = list(itertools.accumulate(x))
    return partial[-1], len(partial)


@case(lambda: (array((2, 3)),), graphs=1)
def product_over_index_grid(x):
    acc = 0.0
    for i, j in itertools.product(range(2), range(3)):
        acc = acc + x[i, j] * (i + 1)
    return acc, list(itertools.product("ab", repeat=2))


@case(lambda: (tensor(),), graphs=1)
def zip_longest_fill(x):
    pairs = list(itertools.zip_longest([1, 2, 3], ["a"], fillvalue="-"))
    return x * len(pairs), pairs


@case(lambda: (tensor(),), graphs=1)
def islice_of_count_and_range(x):
    evens = list(itertools.islice(itertools.count(0, 2), 4))
    window = list(itertools.islice(range(10), 2, 8, 3))
    head = list(itertools.islice("abcdef", None, 2))
    return x * sum(evens), window, head


@case(lambda: (tensor(),), graphs=1)
def islice_bad_stop_raises(x):
    try:
        itertools.islice(range(3), -1)
        msg = ""
    except ValueError as e:
        msg = str(e)
    return x + 1, msg


@case(lambda: (tensor(),), graphs=1)
def starmap_pow_and_mul(x):
    powers = list(itertools.starmap(pow, [(2, 3), (3, 2), (10, 0)]))
    scaled = sum(itertools.starmap(operator.mul, zip([1, 2], [3, 4])))
    return x * scaled, powers


@case(lambda: (array(),), graphs=1)
def repeat_in_zip_and_map(x):
    scales = list(map(operator.mul, [1.0, 2.0, 3.0], itertools.repeat(0.5)))
    repeated = list(itertools.repeat("ab", 3))
    return x * scales[-1], repeated


@case(lambda: (array((4, 3)),), graphs=1)
def pairwise_row_differences(x):
    diffs = [b - a for a, b in itertools.pairwise(x)]
    return diffs[0], diffs[-1], list(itertools.pairwise("abc"))


@case(lambda: (tensor(),), graphs=1)
def groupby_word_lengths(x):
    words = sorted(["a", "bb", "cc", "d", "eee"], key=len)
    groups = {k: list(g) for k, g in itertools.groupby(words, key=len)}
    runs = [(k, len(list(g))) for k, g in itertools.groupby("aaabccdd")]
    return x * len(groups), groups, runs


@case(lambda: (tensor(),), graphs=1)
def groupby_group_outlived_by_parent(x):
    it = itertools.groupby([1, 1, 2, 2, 3])
    k1, g1 = next(it)
    k2, g2 = next(it)
    first_group = list(g1)      # the parent moved on: empty
    second = next(g2)
    return x * k2, first_group, second, [k for k, _ in it]


@case(lambda: (tensor(),), graphs=1)
def count_until_threshold(x):
    for n in itertools.count(1):
        if n * n > 20:
            break
    return x * n


@case(lambda: (array(),), graphs=1)
def cycle_weights(x):
    weights = list(itertools.islice(itertools.cycle([1.0, -1.0]), 5))
    return x * sum(weights), weights


@case(lambda: (array((3, 2)),), graphs=1)
def combinations_and_permutations(x):
    rows = list(x)
    pair_sums = [a + b for a, b in itertools.combinations(rows, 2)]
    orders = list(itertools.permutations(range(3), 2))
    with_rep = list(itertools.combinations_with_replacement("ab", 2))
    return pair_sums[0], len(pair_sums), orders, with_rep


@case(lambda: (tensor(),), graphs=1)
def combinations_bad_r(x):
    try:
        itertools.combinations([1, 2], -1)
        msg = ""
    except ValueError as e:
        msg = str(e)
    return x + 1, msg


@case(lambda: (tensor(),), graphs=1)
def tee_two_passes_over_generator(x):
    seen = []

    def gen():
        for i in range(3):
            seen.append(i)
            yield i * 2

    a, b = itertools.tee(gen())
    first = next(a)
    both = list(b)
    return x * (first + sum(both)), list(a), seen


@case(lambda: (tensor(),), graphs=1)
def take_drop_filterfalse_compress(x):
    data = [1, 4, 6, 4, 1]
    head = list(itertools.takewhile(lambda v: v < 5, data))
    tail = list(itertools.dropwhile(lambda v: v < 5, data))
    odd = list(itertools.filterfalse(lambda v: v % 2 == 0, data))
    picked = list(itertools.compress("abcde", [1, 0, 1, 0, 1]))
    return x * len(head), tail, odd, picked


# -- collections ---------------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def ordered_dict_from_pairs(x):
    od = collections.OrderedDict([("w", 2.0), ("b", 1.0)])
    od["z"] = 3.0
    od.move_to_end("w")
    od.move_to_end("z", last=False)
    k, v = od.popitem()
    first = od.popitem(last=False)
    return x * od["b"] * v, k, first, list(od), od


@case(lambda: (array(),), graphs=1)
def defaultdict_grouping(x):
    groups = collections.defaultdict(list)
    for i, row in enumerate(x):
        groups["even" if i % 2 == 0 else "odd"].append(row)
    counts = collections.defaultdict(int)
    for ch in "banana":
        counts[ch] += 1
    missing = "q" in counts            # ``in`` does not call the factory
    groups.setdefault("none", [])
    return groups["even"][0] * counts["a"], dict(counts), missing, sorted(groups)


def _default_rate():
    return 1.5


@case(lambda: (tensor(),), graphs=1)
def defaultdict_from_mapping(x):
    d = collections.defaultdict(_default_rate, {"a": 2.0}, b=3.0)
    scores = collections.defaultdict(lambda: -1, [("x", 1)])
    return x * d["a"] * d["missing"] * scores["y"], d, dict(scores)


@case(lambda: (tensor(),), graphs=1)
def counter_arithmetic(x):
    c = collections.Counter("abracadabra")
    c.update("aaz")
    d = collections.Counter(a=1, z=5)
    total = c + d
    diff = c - d
    union = c | d
    inter = c & d
    top = total.most_common(2)
    return x * top[0][1], top, diff, union, inter


@case(lambda: (tensor(),), graphs=1)
def counter_inplace(x):
    c = collections.Counter(["x", "y", "x"])
    c += collections.Counter(["y"])
    c -= collections.Counter(["x", "x", "x"])
    return x * c["y"], c, c.total()


@case(lambda: (array(),), graphs=1)
def deque_sliding_window(x):
    window = collections.deque(maxlen=3)
    for v in [1.0, 2.0, 3.0, 4.0]:
        window.append(v)
    window.appendleft(0.0)
    window.rotate(-1)
    window.extendleft([9.0])
    last = window.pop()
    first = window.popleft()
    return x * (first + last), list(window), window.maxlen


# collections objects passed in: read through them, mutations written back

@case(lambda: (tensor(), collections.OrderedDict(a=1.0, b=2.0)), graphs=1)
def ordered_dict_argument_reordered(x, od):
    od.move_to_end("a")
    od["z"] = 5.0
    k, v = od.popitem(last=False)
    return x * od["a"] * v, k


@case(lambda: (tensor(), collections.defaultdict(list, seen=[1, 2])), graphs=1)
def defaultdict_argument_grows(x, buckets):
    buckets["new"].append(3)
    return x * len(buckets["seen"]), sorted(buckets)


@case(lambda: (tensor(), collections.Counter("abca")), graphs=1)
def counter_argument_updated(x, counts):
    counts.update("ab")
    counts += collections.Counter(z=2)
    return x * counts["a"], counts.most_common(2)


@case(lambda: (array(), collections.deque([1.0, 2.0], maxlen=3)), graphs=1)
def deque_argument_as_history(x, history):
    history.append(4.0)
    history.appendleft(0.5)
    return x * sum(history), history.maxlen


# -- dict | dict ---------------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1)
def dict_merge_operators(x):
    defaults = {"lr": 0.1, "momentum": 0.9}
    overrides = {"lr": 0.5}
    cfg = defaults | overrides
    defaults |= [("wd", 1e-4)]
    defaults |= overrides
    return x * cfg["lr"], cfg, defaults


@case(lambda: (tensor(), {"lr": 0.1}), graphs=1)
def dict_ior_mutates_argument(x, cfg):
    cfg |= {"steps": 3}
    return x * cfg["lr"] * cfg["steps"]


@case(lambda: (tensor(),), graphs=1)
def ordered_dict_merge(x):
    a = collections.OrderedDict(a=1)
    b = collections.OrderedDict(b=2, a=3)
    merged = a | b
    return x * merged["a"], merged


# -- match statements ----------------------------------------------------------------------------

@dataclasses.dataclass
class Point:
    x: float
    y: float


class Pair(NamedTuple):
    left: int
    right: int


class Shape:
    __match_args__ = ("kind", "size")

    def __init__(self, kind, size):
        self.kind = kind
        self.size = size


def _describe(value):
    match value:
        case 0 | 1:
            return "bit"
        case int(n) if n < 0:
            return f"negative {n}"
        case str() as s:
            return f"text {s}"
        case [1, *rest]:
            return f"starts with one, then {len(rest)}"
        case (a, b):
            return f"pair {a},{b}"
        case {"op": "scale", "k": k, **others}:
            return f"scale {k} {sorted(others)}"
        case {"op": op}:
            return f"op {op}"
        case Point(x=0, y=y):
            return f"on the y axis at {y}"
        case Point(x, y) if x == y:
            return "diagonal"
        case Pair(left, right=2):
            return f"pair ending in 2 from {left}"
        case Shape("square", size):
            return f"square {size}"
        case _:
            return "other"


@case(lambda: (tensor(),), graphs=1)
def match_many_patterns(x):
    values = [0, 1, -3, "hi", [1, 2, 3], (4, 5), {"op": "scale", "k": 2, "extra": 1},
              {"op": "shift"}, Point(0, 2.5), Point(3, 3), Point(1, 2), Pair(7, 2), Pair(7, 3),
              Shape("square", 4), Shape("circle", 1), 2.5, [2]]
    return x + 1, [_describe(v) for v in values]


@case(calls=lambda: [(array((3, 4)),), (array((5,)),), (array((2, 2, 2)),)], graphs=1)
def match_on_shape(x):
    match x.shape:
        case (n,):
            return x * n
        case (n, m):
            return x.sum(axis=0) * m
        case _:
            return x.reshape(-1)


@case(lambda: (array((3, 4)),), graphs=1)
def match_on_shape_captured(x):
    match x.shape:
        case (n,):
            return x * n
        case (rows, cols) if rows < cols:
            return x.T * cols
        case _:
            return x


@case(calls=lambda: [(tensor(), {"act": "relu"}), (tensor(), {"act": "scale", "by": 3.0}),
                     (tensor(), {"act": "none"})], graphs=1)
def match_on_config_dict(x, cfg):
    match cfg:
        case {"act": "relu"}:
            return x * (x > 0)
        case {"act": "scale", "by": factor}:
            return x * factor
        case _:
            return x


@case(lambda: (tensor(),), graphs=1)
def match_dataclass_made_inside(x):
    p = Point(2.0, 0.5)
    match p:
        case Point(x=0.0):
            scale = 0.0
        case Point(sx, sy):
            scale = sx * sy
    return x * scale


@case(lambda: (array(),), graphs=1)
def match_tensor_is_not_a_sequence(x):
    match x:
        case [a, b]:
            return a + b
        case np.ndarray():
            return x * 2
    return x


# matching on a tensor's value is data-dependent: the graph breaks there
@case(lambda: (array(),), graphs=2, breaks="reads its value")
def match_on_tensor_value(x):
    y = x * 2
    match float(y.sum()) > 0:
        case True:
            return y + 1
        case False:
            return y - 1


# -- del of a global -----------------------------------------------------------------------------

@case(lambda: (tensor(),), graphs=1, globals_to_check=("_SCRATCH",))
def del_global_after_rebinding(x):
    global _SCRATCH
    _SCRATCH = 3.0
    y = x * _SCRATCH
    del _SCRATCH
    return y


_CACHE_ENTRY = 2.0


@case(lambda: (tensor(),), graphs=1, globals_to_check=("_CACHE_ENTRY",),
      steps=lambda: [(tensor(),), (tensor(),)])
def del_global_then_name_error(x):
    global _CACHE_ENTRY
    try:
        y = x * _CACHE_ENTRY
        del _CACHE_ENTRY
    except NameError:
        y = x
    try:
        return y + _CACHE_ENTRY
    except NameError:
        return y - 1


# -- user exceptions with __init__ ---------------------------------------------------------------

class ShapeError(ValueError):
    def __init__(self, message, expected, got):
        super().__init__(message)
        self.expected = expected
        self.got = got


class StrictShapeError(ShapeError):
    def __init__(self, got):
        super().__init__(f"expected 2 dims, got {len(got)}", 2, len(got))
        self.strict = True

    def summary(self):
        return f"{self.expected}!={self.got}"


class RawArgs(Exception):
    def __init__(self, a, b=0):
        self.total = a + b


@case(lambda: (tensor(),), graphs=1)
def user_exception_caught(x):
    try:
        raise ShapeError("bad shape", (2, 3), (3, 2))
    except ValueError as e:
        return x * len(e.expected), str(e), e.args, e.got


@case(lambda: (tensor(),), graphs=1)
def user_exception_subclass_method(x):
    try:
        if x.ndim != 3:
            raise StrictShapeError(x.shape)
        y = x
    except ShapeError as e:
        y = x * e.got
        info = (e.summary(), e.strict, str(e), type(e).__name__)
    return y, info


@case(lambda: (tensor(),), graphs=1)
def user_exception_without_super_init(x):
    try:
        raise RawArgs(1, b=4)
    except RawArgs as e:
        return x * e.total, e.args, str(e)


@case(lambda: (tensor(),), graphs=0, breaks="raises ShapeError")
def user_exception_escapes(x):
    y = x * 2
    if y.shape[0] == 2:
        raise ShapeError("rows", 3, y.shape[0])
    return y


@case(lambda: (tensor(),), graphs=0, breaks="raises StrictShapeError")
def user_exception_escapes_with_cause(x):
    y = x + 1
    try:
        {}["missing"]
    except KeyError as e:
        raise StrictShapeError(y.shape) from e
    return y


# -- enum ----------------------------------------------------------------------------------------

class Color(enum.Enum):
    R = 1
    G = 2
    B = 3

    def weight(self):
        return self.value / 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 10


class Perm(enum.Flag):
    R = 4
    W = 2
    X = 1


@case(lambda: (tensor(),), graphs=1)
def enum_value_name_iteration(x):
    names = [c.name for c in Color]
    total = sum(c.value for c in Color)
    return x * Color.G.value * total, names, Color(2), Color.B.weight(), Color["R"]


@case(lambda: (tensor(),), graphs=1)
def intenum_and_flag_arithmetic(x):
    scale = Level.HIGH + Level.LOW
    rw = Perm.R | Perm.W
    return x * scale, Perm.W in rw, rw.value, Level.HIGH > 5


@case(calls=lambda: [(tensor(), Color.R), (tensor(), Color.B), (tensor(), Color.R)], recompiles=1,
      graphs=1)
def enum_argument_picks_branch(x, color):
    if color is Color.R:
        return x * color.value
    return x - color.value


@case(lambda: (tensor(),), graphs=1)
def enum_bad_value(x):
    try:
        Color(7)
        msg = ""
    except ValueError as e:
        msg = str(e)
    return x + 1, msg


# -- builtins on constants -----------------------------------------------------------------------

@case(calls=lambda: [(array((2, 3)),), (array((4,)),)], graphs=1)
def join_shape_as_text(x):
    return x * 2, ",".join(str(d) for d in x.shape), "x".join(map(str, x.shape))


@case(lambda: (array((2, 3)),), graphs=1)
def join_shape_captured(x):
    return x * len(",".join(str(d) for d in x.shape))


@case(lambda: (tensor(),), graphs=1)
def frozenset_complex_from_bytes(x):
    allowed = frozenset(["relu", "tanh", "relu"])
    z = complex(1, 0) * complex("2+0j")
    n = int.from_bytes(b"\x01\x02", "little")
    half = float.fromhex("0x1.0p-1")
    return x * z.real * half, "relu" in allowed, len(allowed), n


class Config:
    def __init__(self):
        self.lr = 0.5
        self.steps = 2


@case(lambda: (tensor(), Config()), graphs=1)
def vars_of_config_object(x, cfg):
    cfg.extra = 1.0
    total = sum(v for v in vars(cfg).values())
    return x * total, sorted(vars(cfg)), "lr" in vars(cfg)


@case(lambda: (tensor(), Config()), graphs=1)
def vars_item_store_is_attribute_store(x, cfg):
    d = vars(cfg)
    d["lr"] = 2.0
    del d["steps"]
    return x * cfg.lr, hasattr(cfg, "steps"), len(d)


@case(lambda: (tensor(),), graphs=1)
def vars_of_object_made_inside(x):
    cfg = Config()
    d = vars(cfg)
    d["lr"] = 4.0
    cfg.more = 1
    return x * cfg.lr, dict(d), cfg


@pytest.mark.parametrize("c", case.params())
def test_coverage_python_more(c):
    c.check()
