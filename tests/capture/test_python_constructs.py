"""The mechanisms behind ``test_coverage_python_more.py``: itertools are lazy
(a generator argument runs exactly as far as natively, side effects in
order), groupby/tee share state as CPython's do, errors are Python's own;
``d |= ...`` and Counter operators mutate an argument with a write-back;
``match`` reads attributes through the trace and refuses what it cannot
model; ``del`` of a global is replayed; a user exception's ``__init__`` is
inlined (args, attributes, str); enum members are constants guarded by
identity; ``vars(obj)`` aliases the object's attributes.  Each is jitted
against plain Python and also asserts how it was captured."""
from __future__ import annotations

import collections
import copy
import enum
import itertools

import pytest

import capture
import frame

from .helpers import array, assert_same_as_eager, tensor


def _explain(fn, *args):
    capture.reset_caches()
    return frame.explain(fn)(*args)


def check(fn, *args, globals_to_check=()):
    """Jitted equals plain, the call captured as one graph without a break."""
    j = assert_same_as_eager(fn, *args, captured=True, globals_to_check=globals_to_check)
    out = _explain(fn, *copy.deepcopy(args))
    assert (out.graph_count, [str(r) for r in out.break_reasons]) == (1, [])
    return j


# -- itertools: laziness and shared state ---------------------------------------------------------

def test_chain_pulls_each_generator_only_as_far_as_needed():
    def f(x, log):
        def gen(tag, n):
            for i in range(n):
                log.append(f"{tag}{i}")
                yield i
        it = itertools.chain(gen("a", 2), gen("b", 2))
        log.append("made")           # nothing was pulled yet
        first = next(it)
        log.append("got first")
        third = list(itertools.islice(it, 2))[-1]
        return x * (first + third)
    check(f, tensor(), [])


def test_islice_stops_without_pulling_the_next_item():
    def f(x, log):
        def gen():
            for i in range(10):
                log.append(i)
                yield i
        g = gen()
        head = list(itertools.islice(g, 1, 4, 2))
        rest = next(g)   # islice left the generator right after its last item
        return x * sum(head), rest
    check(f, tensor(), [])


def test_map_side_effects_interleave_with_zip_longest_and_pairwise():
    def f(x, log):
        def note(v):
            log.append(v)
            return v * 2
        out = []
        for a, b in itertools.pairwise(map(note, [1, 2, 3])):
            log.append(("pair", a, b))
            out.append(a + b)
        for a, b in itertools.zip_longest(map(note, [7]), [8, 9]):
            log.append(("zl", a, b))
        return x * sum(out)
    check(f, tensor(), [])


def test_groupby_group_is_invalidated_when_the_parent_advances():
    def f(x):
        it = itertools.groupby("aabbbc")
        _, first = next(it)
        head = next(first)
        _, second = next(it)     # first is now exhausted
        return x * len(list(second)), head, list(first), [k for k, _ in it]
    check(f, tensor())


def test_groupby_key_function_called_once_per_item_in_order():
    def f(x, calls):
        def key(v):
            calls.append(v)
            return v // 10
        groups = [(k, list(g)) for k, g in itertools.groupby([1, 5, 12, 13, 31], key=key)]
        return x * len(groups), groups
    check(f, tensor(), [])


def test_tee_copies_buffer_the_source_once():
    def f(x, log):
        def gen():
            for i in range(3):
                log.append(i)
                yield i
        a, b, c = itertools.tee(gen(), 3)
        got = [next(a), next(a), next(b), next(c), next(a)]
        return x * sum(got), list(b), list(c)
    check(f, tensor(), [])


def test_accumulate_initial_and_func_on_tensors():
    def f(x):
        rows = list(itertools.accumulate(x, lambda acc, r: acc * 0.5 + r, initial=x[0] * 0))
        return rows[-1], len(rows)
    check(f, array((4, 3)))


def test_itertools_argument_errors_are_pythons():
    def f(x):
        errors = []
        for make in (lambda: itertools.islice([], -1), lambda: itertools.repeat(1, "2"),
                     lambda: itertools.permutations([1], -2),
                     lambda: itertools.product([1], repeat=-1)):
            try:
                make()
            except (ValueError, TypeError) as e:
                errors.append((type(e).__name__, str(e)))
        return x + 1, errors
    check(f, tensor())


def test_itertools_keywords_not_modelled_are_refused_not_raised():
    # accumulate(iterable=...) is valid Python: refused (runs natively), never a TypeError
    def f(x):
        try:
            got = list(itertools.accumulate(iterable=[1, 2]))
        except TypeError:
            got = "TypeError"
        return x * 2, got
    assert_same_as_eager(f, tensor(), captured=None)


def test_tee_of_a_tee_is_not_guessed():
    # CPython copies a tee object (the copies do not advance the original)
    def f(x):
        a, _ = itertools.tee([1, 2, 3])
        c, d = itertools.tee(a)
        first = next(c)
        return x * first, list(a), list(d)
    assert_same_as_eager(f, tensor(), captured=None)


@pytest.mark.skipif(not hasattr(itertools, "batched"), reason="itertools.batched is 3.12+")
def test_batched_is_lazy():
    def f(x, log):
        def gen():
            for i in range(5):
                log.append(i)
                yield i
        it = itertools.batched(gen(), 2)
        first = next(it)
        log.append("first batch")
        return x * sum(first), list(it)
    check(f, tensor(), [])


def test_itertools_iterator_live_at_a_break_runs_natively():
    # a lazy iterator cannot be rebuilt in an entry: the call still matches plain Python
    def f(x):
        it = itertools.count(3)
        next(it)
        print("break")
        return x * next(it)
    assert_same_as_eager(f, tensor(), captured=None)


# -- collections and dict operators ----------------------------------------------------------------

def test_dict_ior_writes_back_into_the_argument():
    def f(x, cfg, extra):
        cfg |= extra
        cfg |= [("k", 3)]
        return x * cfg["k"]
    check(f, tensor(), {"a": 1}, {"b": 2})


def test_dict_or_of_different_kinds_is_not_guessed():
    # dict | OrderedDict is OrderedDict.__ror__: not modelled, runs natively
    def f(x):
        merged = {"a": 1} | collections.OrderedDict(b=2)
        return x * 2, merged
    assert_same_as_eager(f, tensor(), captured=None)


def test_counter_operators_drop_non_positive_counts():
    def f(x):
        a = collections.Counter(a=3, b=1)
        b = collections.Counter(a=1, b=2, c=-1)
        a -= b
        return x * a["a"], a, collections.Counter(a=1) - collections.Counter(a=2)
    check(f, tensor())


def test_defaultdict_needs_a_callable_factory():
    def f(x):
        try:
            collections.defaultdict(3)
            msg = ""
        except TypeError as e:
            msg = str(e)
        return x + 1, msg
    check(f, tensor())


# -- match -----------------------------------------------------------------------------------------

class Vec:
    __match_args__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


class Lazy:
    __match_args__ = ("value",)

    @property
    def value(self):
        return 7


def test_match_class_pattern_reads_attributes_and_properties():
    def f(x, v):
        match v:
            case Vec(0, y):
                return x * y
            case Vec(a, b) if a > b:
                return x * (a - b)
        match Lazy():
            case Lazy(value=7):
                return x + 7
        return x * 0
    check(f, tensor(), Vec(0, 2.0))
    check(f, tensor(), Vec(3, 1))
    check(f, tensor(), Vec(1, 3))


def test_match_too_many_positional_subpatterns_raises_type_error():
    def f(x):
        try:
            match Vec(1, 2):
                case Vec(a, b, c):
                    return x * c
        except TypeError as e:
            return x + 1, str(e)
        return x * 2, ""
    check(f, tensor())


def test_match_mapping_does_not_call_the_defaultdict_factory():
    def f(x):
        d = collections.defaultdict(list, a=1)
        match d:
            case {"b": _}:
                found = True
            case {"a": v, **rest}:
                found = (v, rest)
        return x + 1, found, dict(d)
    check(f, tensor())


def test_match_self_of_builtin_classes():
    def f(x):
        out = []
        for v in (3, "s", 2.5, (1,), [1]):
            match v:
                case int(n):
                    out.append(("int", n))
                case str(s) | float(s):
                    out.append(("str/float", s))
                case tuple(t):
                    out.append(("tuple", t))
                case _:
                    out.append("other")
        return x + len(out), out
    check(f, tensor())


def test_match_on_tensor_values_breaks():
    def f(x):
        match bool((x > 0).all()):
            case True:
                return x
            case False:
                return -x
    out = _explain(f, array())
    assert any(r.kind == "data_dependent" for r in out.break_reasons), out.break_reasons
    assert_same_as_eager(f, array(), captured=None)


# -- del of a global -------------------------------------------------------------------------------

def test_del_global_is_replayed_and_a_later_load_finds_the_builtin():
    def f(x):
        global len
        len = lambda s: 0    # noqa: E731 - a global shadowing the builtin
        del len
        return x * len([1, 2, 3])
    g = f.__globals__
    try:
        check(f, tensor(), globals_to_check=[(g, "len")])
        assert "len" not in g
    finally:
        g.pop("len", None)


_TO_DELETE = 1


def test_del_of_a_missing_global_raises_name_error():
    def f(x):
        global _TO_DELETE
        del _TO_DELETE
        return x * 2
    g = f.__globals__
    g["_TO_DELETE"] = 1
    jitted = frame.jit(f)
    assert (jitted(array()) == array() * 2).all()
    assert "_TO_DELETE" not in g
    with pytest.raises(NameError):   # guarded: the second call does not reuse the first
        jitted(array())
    g["_TO_DELETE"] = 1
    out = _explain(f, array())
    assert (out.graph_count, [str(r) for r in out.break_reasons]) == (1, [])
    g["_TO_DELETE"] = 1


# -- user exceptions with __init__ -----------------------------------------------------------------

class TrainingError(RuntimeError):
    def __init__(self, step, loss):
        super().__init__(f"diverged at step {step}")
        self.step = step
        self.loss = loss


class NoteError(Exception):
    def __init__(self, *parts):
        self.parts = parts          # no super().__init__: args stay the call's arguments


def test_exception_init_sets_args_and_attributes():
    def f(x):
        try:
            raise TrainingError(3, float("inf"))
        except RuntimeError as e:
            return x * e.step, e.args, str(e), repr(e), e.loss
    check(f, tensor())


def test_exception_without_super_init_keeps_the_call_arguments():
    def f(x):
        try:
            raise NoteError("a", 1)
        except NoteError as e:
            return x + 1, e.args, str(e), e.parts
    check(f, tensor())


class ScaledError(Exception):
    def __init__(self, v):
        super().__init__(v)
        self.v = v              # through the property's setter

    @property
    def v(self):
        return self._v * 2

    @v.setter
    def v(self, value):
        self._v = value


def test_exception_attribute_store_through_a_property_is_not_guessed():
    def f(x):
        try:
            raise ScaledError(3)
        except ScaledError as e:
            return x * e.v
    assert_same_as_eager(f, tensor(), captured=None)


def test_exception_with_init_escaping_keeps_attributes_and_cause():
    def f(x):
        try:
            {}["k"]
        except KeyError as err:
            raise TrainingError(7, 0.5) from err
    jitted = frame.jit(f)
    with pytest.raises(TrainingError) as got:
        jitted(tensor())
    assert (got.value.step, got.value.loss, str(got.value)) == (7, 0.5, "diverged at step 7")
    assert isinstance(got.value.__cause__, KeyError)


def test_exception_init_is_guarded():
    class Flaky(Exception):
        def __init__(self, v):
            super().__init__(v)
            self.v = v

    def f(x):
        try:
            raise Flaky(2)
        except Flaky as e:
            return x * e.v
    jitted = frame.jit(f)
    first = jitted(array())

    def other_init(self, v):
        Exception.__init__(self, v)
        self.v = v * 10
    Flaky.__init__ = other_init
    assert_same_as_eager(f, array(), captured=True)
    assert (jitted(array()) == array() * 20).all() and (first == array() * 2).all()


# -- enum ------------------------------------------------------------------------------------------

class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


def test_enum_member_argument_is_guarded_by_identity():
    def f(x, mode):
        if mode.value == "train":
            return x * 2
        return x
    jitted = check(f, array(), Mode.TRAIN)
    assert (jitted(array(), Mode.EVAL) == array()).all()


def test_enum_lookup_by_value_and_iteration():
    def f(x):
        m = Mode("eval")
        return x + len(list(Mode)), m, m is Mode.EVAL, [m.name for m in Mode]
    check(f, tensor())


# -- vars() ----------------------------------------------------------------------------------------

class Holder:
    def __init__(self):
        self.a = 1.0


def test_vars_sees_pending_attribute_stores_and_writes_through():
    def f(x, h):
        h.b = 2.0
        d = vars(h)
        d["c"] = 3.0
        del h.a
        return x * h.c, list(d), len(d)
    check(f, tensor(), Holder())


def test_vars_of_instance_made_inside_is_its_dict():
    def f(x):
        h = Holder()
        d = vars(h)
        h.z = 5.0
        d["a"] = 4.0
        return x * d["z"] * h.a, h, d
    check(f, tensor())


def test_vars_without_argument_still_runs_natively():
    def f(x):
        y = x * 2
        return y, sorted(vars())
    assert_same_as_eager(f, tensor(), captured=None)
