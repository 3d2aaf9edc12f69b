"""Context managers, exceptions raised and caught inside the traced code,
generators' send/throw/yield from, and the builtins and containers of issue 15
items 4 and 5: jitted against plain Python, each also asserting that the call
was captured (one graph, or the breaks stated).  The broad corpus is
``test_coverage_python.py``."""
from __future__ import annotations

import collections
import contextlib
import copy
import operator
import threading
import traceback

import numpy as np
import pytest

import capture
import frame

from .helpers import array, assert_captured, assert_same, assert_same_as_eager, tensor


def _explain(fn, *args):
    capture.reset_caches()
    return frame.explain(fn)(*args)


def check(fn, *args):
    """Jitted equals plain (``assert_same_as_eager``, a captured call), and
    ``frame.explain`` shows one graph and no break.  Returns the jitted function."""
    j = assert_same_as_eager(fn, *args, captured=True)
    out = _explain(fn, *copy.deepcopy(args))
    assert (out.graph_count, [str(r) for r in out.break_reasons]) == (1, [])
    return j


# -- exceptions --------------------------------------------------------------------------------

def test_raise_from_escaping_keeps_type_message_cause_and_line():
    def f(x):
        y = x * 2
        try:
            {}["k"]
        except KeyError as e:
            raise ValueError(f"no key {y.shape}") from e
        return y

    with pytest.raises(ValueError) as native:
        f(tensor())
    with pytest.raises(ValueError) as jitted:
        frame.jit(f)(tensor())
    assert str(jitted.value) == str(native.value) == "no key (2, 3)"
    assert type(jitted.value.__cause__) is KeyError and jitted.value.__cause__.args == ("k",)
    line = f.__code__.co_firstlineno + 5
    frames = traceback.extract_tb(jitted.value.__traceback__)
    assert any(fr.lineno == line and fr.name == "f" for fr in frames), frames


def test_caught_exception_is_one_graph():
    def f(x, d):
        try:
            scale = d["scale"]
        except KeyError as e:
            scale = len(str(e))
        else:
            scale = scale + 1
        finally:
            x = x + 1
        return x * scale
    check(f, tensor(), {})
    check(f, tensor(), {"scale": 2.0})
    out = _explain(f, tensor(), {})
    assert out.graph_count == 1 and out.graph_break_count == 0


def test_exception_raised_in_callee_caught_by_caller():
    class Invalid(ValueError):
        pass

    def validate(v):
        if v < 0:
            raise Invalid("negative", v)
        return v

    def f(x, vals):
        total = 0
        for v in vals:
            try:
                total += validate(v)
            except Invalid as e:
                total -= e.args[1] * 10
        return x * total
    check(f, tensor(), [1, -2, 3])


def test_bare_raise_and_nested_handlers():
    def f(x):
        out = []
        try:
            try:
                raise IndexError("inner")
            except IndexError:
                out.append("inner")
                raise
        except LookupError as e:
            out.append(type(e).__name__)
        return x + len(out), out
    check(f, tensor())


def test_exception_object_leaving_the_function_runs_natively():
    def f(x):
        try:
            raise ValueError("kept")
        except ValueError as e:
            err = e
        return x * 2, err
    native, jitted = f(tensor()), frame.jit(f)(tensor())
    assert type(jitted[1]) is ValueError and jitted[1].args == native[1].args
    assert _explain(f, tensor()).graph_count == 0


def test_exception_context_is_read_in_the_trace():
    # (more in test_exception_chains.py)
    def f(x):
        try:
            try:
                raise KeyError("a")
            except KeyError:
                raise ValueError("b")
        except ValueError as e:
            ctx = type(e.__context__).__name__
        return x, ctx
    assert_same_as_eager(f, tensor(), captured=True)


def test_exception_class_with_init_is_caught_in_the_trace():
    # its __init__ is inlined: super().__init__ sets the args str() shows
    class Loud(Exception):
        def __init__(self, msg):
            super().__init__(msg.upper())

    def f(x):
        try:
            raise Loud("quiet")
        except Loud as e:
            return x, str(e)
    assert_same_as_eager(f, tensor(), captured=True)


def test_unmodelled_exception_class_is_not_caught_in_the_trace():
    class Shouting(Exception):   # a Python __str__: not modelled
        def __str__(self):
            return "LOUD"

    def f(x):
        try:
            raise Shouting("quiet")
        except Shouting as e:
            return x, str(e)
    assert_same_as_eager(f, tensor(), captured=False)


def test_caught_stop_iteration_and_pep479():
    def gen():
        yield 1
        next(iter([]))   # StopIteration inside a generator: RuntimeError (PEP 479)

    def f(x):
        try:
            list(gen())
        except RuntimeError as e:
            return x * 2, str(e)
    check(f, tensor())


def test_exception_class_attribute_is_guarded():
    class Coded(Exception):
        code = 3

    def f(x):
        try:
            raise Coded("c")
        except Coded as e:
            return x * e.code
    j = check(f, tensor())
    assert_same(f(tensor()), j(tensor()))   # (its cache entry, after check's explain)
    Coded.code = 5
    assert_same(f(tensor()), j(tensor()))


# -- context managers --------------------------------------------------------------------------

class Recorder:
    def __init__(self, suppress=()):
        self.events = []
        self.suppress = suppress

    def __enter__(self):
        self.events.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.events.append(exc_type.__name__ if exc_type is not None else "exit")
        return exc_type is not None and issubclass(exc_type, self.suppress)


def test_user_context_manager_inlined_with_side_effects():
    def f(x, rec):
        with rec as r:
            y = x * 2
            r.events.append("body")
        return y, rec.events
    check(f, tensor(), Recorder())


def test_exit_receives_the_exception_and_suppresses_it():
    def f(x, rec):
        with rec:
            y = x + 1
            raise KeyError("gone")
        return y, rec.events
    check(f, tensor(), Recorder(suppress=(KeyError,)))


def test_exit_that_does_not_suppress_lets_the_exception_reach_the_handler():
    def f(x, rec):
        try:
            with rec:
                raise ValueError("out")
        except ValueError as e:
            return x * 3, rec.events, str(e)
    check(f, tensor(), Recorder())


@contextlib.contextmanager
def _swallowing(log):
    log.append("enter")
    try:
        yield 7
    except ZeroDivisionError:
        log.append("swallowed")
    finally:
        log.append("finally")


def test_contextmanager_generator_exit_and_throw():
    def f(x, log):
        with _swallowing(log) as v:
            y = x * v
        with _swallowing(log):
            y = y + 1
            1 / 0
        return y, log
    check(f, tensor(), [])


def test_contextlib_suppress_and_nullcontext():
    def f(x):
        with contextlib.suppress(IndexError, KeyError):
            [][1]
        with contextlib.nullcontext(x * 2) as y:
            return y + 1
    check(f, tensor())


def test_grad_mode_block_left_by_an_exception():
    def f(x):
        try:
            with frame.no_grad():
                y = x * 2
                raise ValueError("leave")
        except ValueError:
            pass
        return y + 1, frame.autograd.is_grad_enabled()
    check(f, tensor())


def test_lock_is_held_while_the_block_runs():
    # the lock is entered natively at a break, the block's graph runs in the
    # resume function while it is held, and its __exit__ is called natively
    lock = threading.Lock()

    def f(x):
        y = x + 1
        with lock:
            y = y * 2
        return y - 1
    j = assert_same_as_eager(f, tensor())
    assert_same(f(tensor()), j(tensor()))
    assert not lock.locked()
    out = _explain(f, tensor())
    assert out.graph_count == 3
    assert [r.kind for r in out.break_reasons] == ["unsupported_object", "unsupported_call"]
    assert "lock" in out.break_reasons[0].reason


def test_np_errstate_block_runs_inside_the_state():
    def f(x):
        with np.errstate(divide="ignore"):
            y = np.log(x * 0)
        return y
    with np.errstate(divide="raise"):
        assert_same_as_eager(f, array(positive=True))


def test_exception_inside_a_lock_block_releases_it():
    lock = threading.Lock()

    def f(x):
        with lock:
            y = x * 2
            if y.shape[0] == 2:
                raise RuntimeError("inside")
        return y
    assert_same_as_eager(f, tensor(), captured=None)
    assert not lock.locked()


# -- generators --------------------------------------------------------------------------------

def test_generator_send_throw_and_yield_from():
    def running_mean():
        total, n = 0.0, 0
        while True:
            value = yield (total / n if n else 0.0)
            total += value
            n += 1

    def worker():
        try:
            yield "ready"
        except ValueError:
            pass
        yield "recovered"

    def chain(*its):
        for it in its:
            yield from it

    def f(x):
        avg = running_mean()
        next(avg)
        avg.send(2.0)
        m = avg.send(4.0)
        w = worker()
        first = next(w)
        after = w.throw(ValueError("stop"))
        return x * m, first, after, list(chain([1, 2], (3,), range(2)))
    check(f, tensor())


def test_yield_from_return_value():
    def inner():
        yield 1
        return 10

    def outer():
        got = yield from inner()
        yield got

    def f(x):
        return x + sum(outer())
    check(f, tensor())


# -- builtins and containers -------------------------------------------------------------------

def test_sorting_with_keys_matches_python():
    def f(x, words):
        by_len = sorted(words, key=len, reverse=True)
        words.sort(key=lambda w: (w[-1], w))
        shortest = min(words, key=len)
        longest = max(words, key=lambda w: len(w))
        return x * len(by_len[0]), by_len, shortest, longest, words
    check(f, tensor(), ["pear", "fig", "apple", "kiwi"])


def test_sort_comparison_error_is_pythons():
    def f(x):
        try:
            sorted([1, "a"], key=lambda v: v)
        except TypeError as e:
            return x * 2, str(e)
    check(f, tensor())


def test_del_attribute_is_replayed():
    class Box:
        pass
    box = Box()
    box.a, box.b = 1, 2

    def f(x, b):
        del b.a
        return x + b.b, hasattr(b, "a")
    j = check(f, tensor(), box)   # (on copies of box)
    assert_same(j(tensor(), box), (tensor() + 2, False))
    assert not hasattr(box, "a")
    box.a = 3
    assert_same(j(tensor(), box), (tensor() + 2, False))
    assert not hasattr(box, "a")


def test_operator_module():
    def f(x, pairs):
        key = operator.itemgetter(1)
        best = max(pairs, key=key)
        total = operator.add(operator.mul(x, best[1]), operator.neg(1.0))
        names = list(map(operator.attrgetter("real"), [1, 2]))
        return total, operator.truth([]), names, operator.methodcaller("split", ",")("a,b")
    check(f, tensor(), [("a", 2.0), ("b", 3.0)])


def test_collections_made_inside():
    def f(x):
        q = collections.deque([1, 2, 3], maxlen=3)
        q.append(4)
        q.rotate(1)
        od = collections.OrderedDict(a=1) if False else collections.OrderedDict()
        od["b"] = 2
        od["a"] = 1
        od.move_to_end("b")
        dd = collections.defaultdict(list)
        dd["k"].append(2.0)
        c = collections.Counter("abracadabra")
        return x * dd["k"][0] * q[0], q, od, dd, c, c.most_common(2), c["z"]
    check(f, tensor())


def test_dict_subclasses_made_inside_do_not_compare_as_dicts():
    def f(x):
        a = collections.OrderedDict()
        a[1], a[2] = 1, 2
        b = collections.OrderedDict()
        b[2], b[1] = 2, 1
        return x, a == b, a == {1: 1, 2: 2}
    assert_same_as_eager(f, tensor(), captured=None)


class _EnterOnly:
    def __enter__(self):
        return 1


class _Plain:
    pass


def test_with_on_an_object_without_exit_raises_pythons_error():
    def f(x, mgr):
        y = x * 2
        with mgr:
            y = y + 1
        return y
    assert_same_as_eager(f, tensor(), _EnterOnly(), captured=None)
    assert_same_as_eager(f, tensor(), _Plain(), captured=None)


def test_resume_function_starting_inside_a_try_block():
    # a data-dependent break whose continuation starts a try block: the resume
    # function enters it through its TryBegin and keeps the exception table
    def f(x, d):
        if x.sum() > 0:
            try:
                y = x * d["k"]
            except KeyError:
                y = x - 1
        else:
            y = -x
        return y + 1
    for d in ({}, {"k": 2.0}):
        for x in (tensor(positive=True), -tensor(positive=True)):
            j = assert_same_as_eager(f, x, d, captured=None)
            assert_same(f(x, d), j(x, d))
    out = _explain(f, tensor(positive=True), {})
    assert [r.kind for r in out.break_reasons] == ["data_dependent"]
    assert out.graph_count == 2


Pair = collections.namedtuple("Pair", "a b")


def test_identity_of_objects_made_in_the_function():
    def f(x):
        p, q = Pair(1, 2), Pair(1, 2)
        g1, g2 = operator.itemgetter(0), operator.itemgetter(0)
        o1, o2 = collections.OrderedDict(), collections.OrderedDict()
        e1, e2 = ValueError("a"), ValueError("a")
        return x * 2, p is q, p is p, g1 is g2, o1 is o2, o1 is o1, e1 is e2, type(p) is Pair
    check(f, tensor())


def test_exception_class_patched_later_is_traced_again():
    class Note(Exception):
        pass

    def f(x):
        try:
            raise Note("a")
        except Note as e:
            return x * 2, str(e)
    j = check(f, tensor())
    assert_same(f(tensor()), j(tensor()))   # (its cache entry, after check's explain)
    Note.__str__ = lambda self: "patched"
    try:
        assert_same(f(tensor()), j(tensor()))
    finally:
        del Note.__str__


class _Lazy:
    @property
    def value(self):
        raise ValueError("not ready")

    @property
    def missing(self):
        raise AttributeError("missing")


def test_hasattr_and_getattr_default_catch_only_attribute_errors():
    def f(x, obj):
        has = hasattr(obj, "missing")
        got = getattr(obj, "missing", 1.5)
        try:
            hasattr(obj, "value")
            caught = None
        except ValueError as e:
            caught = str(e)
        return x * got, has, caught
    check(f, tensor(), _Lazy())
