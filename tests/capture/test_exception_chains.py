"""Exception chains (PEP 3134) of exceptions raised and caught in the traced
code: ``raise X from Y`` (``__cause__``, ``__suppress_context__``), implicit
``__context__`` when raising inside a handler (exceptions Python raises too),
re-raises that keep it, CPython's cycle cut, generators (their resumer's
handled exception, PEP 479) and the caller's handled exception.  Each
function describes the chain it caught with plain values, run natively and
jitted: one graph, no break, the same description."""
from __future__ import annotations

import contextlib
import sys

import numpy as np
import pytest

import frame

from .helpers import assert_same_as_eager


def _chain(e, depth=3):
    """(type name, str, cause, context, suppress) down the context chain."""
    out = []
    while e is not None and depth:
        cause = e.__cause__
        out.append((type(e).__name__, str(e), None if cause is None else type(cause).__name__,
                    e.__suppress_context__))
        e = e.__context__
        depth -= 1
    return tuple(out), e is None


def _captured_whole(fn, *args):
    out = frame.explain(fn)(*args)
    assert out.exception is None, out.exception
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons
    assert not out.break_reasons, out.break_reasons


def f_brief_attrs(x):
    try:
        raise KeyError("k", 3)
    except KeyError as e:
        return x + len(e.args), e.__cause__, e.__context__, e.__suppress_context__


def f_brief_nested(x):
    try:
        try:
            1 / 0
        except ZeroDivisionError as e:
            raise ValueError("bad") from e
    except ValueError as e2:
        return x + 1, type(e2.__cause__).__name__, str(e2), str(e2.__cause__), \
            type(e2.__context__).__name__, e2.__cause__ is e2.__context__


def f_from_none(x):
    try:
        try:
            {}["missing"]
        except KeyError:
            raise LookupError("no key") from None
    except LookupError as e:
        return x * 2, _chain(e)


def f_from_class(x):
    try:
        raise ValueError("v") from KeyError
    except ValueError as e:
        return x - 1, _chain(e), e.__cause__.args, _chain(e.__cause__)


def f_from_unraised_instance(x):
    try:
        raise ValueError("v") from IndexError("i", 2)
    except ValueError as e:
        return x + 1, _chain(e), e.__cause__.args, e.__cause__.__context__


def f_implicit_three_levels(x):
    try:
        try:
            try:
                [1, 2][5]
            except IndexError:
                int("nope")
        except ValueError:
            raise RuntimeError("third")
    except RuntimeError as e:
        return x + 3, _chain(e, depth=4)


def f_bare_reraise_keeps_context(x):
    try:
        try:
            raise KeyError("a")
        except KeyError:
            try:
                raise ValueError("b")
            except ValueError:
                raise
    except ValueError as e:
        return x + 1, _chain(e)


def f_raise_handled_itself(x):
    try:
        try:
            raise KeyError("a")
        except KeyError as e:
            raise e
    except KeyError as e2:
        return x + 1, _chain(e2)


def f_cycle_cut(x):
    try:
        try:
            raise KeyError("a")
        except KeyError as a:
            try:
                raise ValueError("b")
            except ValueError:
                raise a
    except KeyError as a2:
        # a's context is b, whose context (a) CPython cut to None
        return x + 1, _chain(a2, depth=5)


def f_finally_raises(x):
    try:
        try:
            raise KeyError("first")
        finally:
            raise ValueError("in finally")
    except ValueError as e:
        return x + 1, _chain(e)


class _Exits:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        raise TypeError(f"exit saw {kind.__name__}")


def f_exit_raises(x):
    try:
        with _Exits():
            raise KeyError("body")
    except TypeError as e:
        return x + 1, _chain(e)


def _gen():
    yield 1
    raise IndexError("in generator")


def f_generator_context_is_resumers(x):
    g = _gen()
    next(g)
    try:
        try:
            raise KeyError("resumer's")
        except KeyError:
            next(g)
    except IndexError as e:
        return x + 1, _chain(e)


def _gen_stop():
    yield 1
    next(iter(()))


def f_pep479(x):
    try:
        list(_gen_stop())
    except RuntimeError as e:
        return x + 1, _chain(e), type(e.__cause__).__name__, e.__cause__ is e.__context__


def _gen_one():
    yield 1


def f_throw_stop_iteration(x):
    g = _gen_one()
    next(g)
    try:
        g.throw(StopIteration("thrown"))
    except RuntimeError as e:
        return x + 1, _chain(e), e.__cause__.args


@contextlib.contextmanager
def _plain_cm():
    yield


def f_contextmanager_stop_iteration(x):
    # contextlib: the RuntimeError PEP 479 makes of the block's StopIteration (its
    # cause) is not raised, the StopIteration is
    try:
        with _plain_cm():
            raise StopIteration("s")
    except StopIteration as e:
        return x + 1, str(e)
    except RuntimeError as e:
        return x + 1, "runtime " + str(e)


def _gen_reporting_close(log):
    try:
        yield 1
    except GeneratorExit as e:
        log.append(type(e.__context__).__name__)
        raise


def f_close_inside_a_handler(x):
    # close()'s GeneratorExit is raised in its caller: chained to what that handles
    log = []
    g = _gen_reporting_close(log)
    next(g)
    try:
        raise KeyError("k")
    except KeyError:
        g.close()
    h = _gen_reporting_close(log)
    next(h)
    h.close()
    return x + 1, log


def f_cause_not_an_exception(x):
    try:
        raise ValueError("v") from 5
    except TypeError as e:
        return x + 1, _chain(e)


def f_context_of_unhandled_raise(x):
    try:
        raise KeyError("k")
    except KeyError as e:
        return x + 1, type(e.__context__).__name__


def f_inlined_raise_in_callers_handler(x):
    def fail():
        raise ValueError("callee")
    try:
        try:
            raise KeyError("caller")
        except KeyError:
            fail()
    except ValueError as e:
        return x + 1, _chain(e)


@pytest.mark.parametrize("fn", [
    f_brief_attrs, f_brief_nested, f_from_none, f_from_class, f_from_unraised_instance,
    f_implicit_three_levels, f_bare_reraise_keeps_context, f_raise_handled_itself, f_cycle_cut,
    f_finally_raises, f_exit_raises, f_generator_context_is_resumers, f_pep479,
    f_throw_stop_iteration, f_contextmanager_stop_iteration, f_close_inside_a_handler,
    f_cause_not_an_exception, f_context_of_unhandled_raise, f_inlined_raise_in_callers_handler,
], ids=lambda f: f.__name__)
def test_chain_as_cpython(fn):
    x = np.arange(4.0)
    assert_same_as_eager(fn, x)
    _captured_whole(fn, x)


def test_context_of_the_callers_handled_exception():
    """An exception raised outside the trace's handlers takes the exception the
    jitted function's caller handles: guarded, a call from inside an except
    block is translated again and runs natively.  An exception that leaves
    the function still runs it natively: the real chain and traceback."""
    fn = f_context_of_unhandled_raise
    jitted = frame.jit(fn)
    x = np.arange(3.0)
    assert jitted(x)[1] == fn(x)[1] == "NoneType"
    entry = jitted._frame_cache.entries[0]
    assert entry.graph is not None and not entry.breaks
    assert any("no exception is being handled" in g.text for g in entry.guards)
    try:
        raise OSError("the caller's")
    except OSError:
        assert jitted(x)[1] == fn(x)[1] == "OSError"
    assert jitted(x)[1] == "NoneType"

    def leaves(x):
        try:
            {}["k"]
        except KeyError as e:
            raise ValueError("wrapped") from e
    with pytest.raises(ValueError) as info:
        frame.jit(leaves)(np.zeros(2))
    assert type(info.value.__cause__) is KeyError and info.value.__context__ is info.value.__cause__
    assert info.value.__traceback__ is not None


def test_chain_read_before_a_graph_break():
    """A re-translation up to a break runs while capture handles its own
    exception: the chain of an exception Python raises is still the user's."""
    def f(x):
        y = x * 2
        try:
            try:
                {}["k"]
            except KeyError:
                [][1]
        except IndexError as e:
            chain = _chain(e)
        frame.graph_break()
        return y + 1, chain
    x = np.arange(3.0)
    assert_same_as_eager(f, x)
    out = frame.explain(f)(x)
    assert (out.graph_count, out.graph_break_count) == (2, 1), out.break_reasons
    assert [r.kind for r in out.break_reasons] == ["explicit"]
