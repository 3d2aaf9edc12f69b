"""``warnings.warn`` in traced code: the same warnings as the plain function
(category, message, filename and line of the frame ``stacklevel`` names, in
order, with NumPy's floating-point warnings of the ops around them), the
filters' registries ("default", "once", "module") over repeated calls, and
a filter that makes the warning raise: the plain function's exception with
exactly its side effects."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import frame

from .helpers import assert_same


def _run(fn, args, calls: int, filters):
    """Results (or the exception) and warnings of ``calls`` calls of ``fn``
    under a fresh filter list set by ``filters(warnings)``."""
    out, caught = [], []
    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()
        filters(warnings)
        for _ in range(calls):
            try:
                out.append(fn(*args))
            except Exception as e:  # noqa: BLE001 -- compared with the plain run's
                out.append((type(e), str(e)))
        caught = [(w.category, str(w.message), w.filename, w.lineno) for w in seen]
    return out, caught


def _same(fn, *args, calls=1, filters=lambda w: w.simplefilter("always"), graphs=1, breaks=0,
          fp_categories=(RuntimeWarning,)):
    """Plain and jitted calls give the same results and warnings.  NumPy's own
    floating-point warnings of a graph come from frame's code (docs/capture.md):
    for those only the category and message are compared."""
    plain, plain_warned = _run(fn, args, calls, filters)
    jitted_fn = frame.jit(fn)
    jitted, jitted_warned = _run(jitted_fn, args, calls, filters)
    for p, j in zip(plain, jitted):
        assert_same(p, j)

    def shown(ws):
        return [w if "encountered" not in w[1] else w[:2] for w in ws]
    assert shown(jitted_warned) == shown(plain_warned)
    if graphs is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = frame.explain(fn)(*args)
        assert (out.graph_count, out.graph_break_count) == (graphs, breaks), out.break_reasons
    return plain_warned


def f_brief(x):
    warnings.warn("negative values clipped", RuntimeWarning)
    return np.clip(x, 0, None)


def _helper(x):
    warnings.warn("from the helper", DeprecationWarning, stacklevel=2)
    return x * 2


def f_stacklevel_2(x):
    y = x + 1
    return _helper(y)


def _outer_helper(x):
    return _inner_helper(x) + 1


def _inner_helper(x):
    warnings.warn("two levels up", FutureWarning, stacklevel=3)
    return x - 1


def f_stacklevel_3(x):
    return _outer_helper(x) * 3


def f_keywords_and_default_category(x):
    warnings.warn(message="plain")
    warnings.warn("stacklevel 1", stacklevel=1)
    warnings.warn("category kw", category=UserWarning)
    return x * 2


def f_two_lines_same_text(x):
    warnings.warn("repeated")
    y = x + 1
    warnings.warn("repeated")
    return y


def f_shape_in_message(x):
    warnings.warn(f"input of shape {x.shape} is converted", UserWarning)
    return x.astype(np.float32) + 1


def _gen(x):
    warnings.warn("in the generator", UserWarning, stacklevel=2)
    yield x * 2


def f_generator_stacklevel(x):
    g = _gen(x)
    return next(g) + 1


def f_after_a_break(x):
    y = x * 2
    frame.graph_break()
    warnings.warn("after the break")
    return y + 1


@pytest.mark.parametrize("fn", [f_brief, f_stacklevel_2, f_stacklevel_3,
                                f_keywords_and_default_category, f_two_lines_same_text,
                                f_shape_in_message, f_generator_stacklevel],
                         ids=lambda f: f.__name__)
def test_warnings_as_plain_without_a_break(fn):
    x = np.array([-1.0, 0.5, 2.0])
    assert _same(fn, x, calls=2)


def test_warning_in_a_resume_function():
    _same(f_after_a_break, np.array([1.0, 2.0]), calls=2, graphs=2, breaks=1)


@pytest.mark.parametrize("action", ["default", "once", "module", "ignore", "always"])
def test_filter_actions_over_repeated_calls(action):
    """The registries the actions keep are the module's and warnings' own: a
    warning shown once per line ("default"), text ("once") or module."""
    warned = _same(f_two_lines_same_text, np.arange(3.0), calls=3,
                   filters=lambda w: w.simplefilter(action))
    assert len(warned) == {"default": 2, "once": 1, "module": 1, "ignore": 0, "always": 6}[action]


def f_effects_around(x, log):
    log.append("before")
    warnings.warn("careful", UserWarning)
    log.append("after")
    return x + 1


def test_error_filter_raises_with_the_plain_side_effects():
    """"ignore", then "error" for the warning, then "ignore" again: the erroring
    call runs the plain function (its side effects before the warning, none
    after), the others the graph."""
    plain_log, jitted_log = [], []
    jitted = frame.jit(f_effects_around)
    x = np.arange(2.0)
    for action in ("ignore", "error", "ignore"):
        with warnings.catch_warnings():
            warnings.simplefilter(action)
            for fn, log in ((f_effects_around, plain_log), (jitted, jitted_log)):
                try:
                    result = fn(x, log)
                except UserWarning as e:
                    result = ("raised", str(e))
                if action == "error":
                    assert result == ("raised", "careful")
                else:
                    assert_same(x + 1, result)
    assert jitted_log == plain_log == ["before", "after", "before", "before", "after"]
    entry = jitted._frame_cache.entries[0]
    assert entry.graph is not None and not entry.breaks and len(jitted._frame_cache.entries) == 1


@pytest.mark.parametrize("error_filter", [
    lambda w: w.filterwarnings("error", message="care"),
    lambda w: w.filterwarnings("error", category=Warning),
    lambda w: w.filterwarnings("error", module=__name__.replace(".", r"\.")),
    lambda w: w.filterwarnings("error", lineno=f_effects_around.__code__.co_firstlineno + 2),
    lambda w: (w.simplefilter("ignore"), w.filterwarnings("error", message="other"),
               w.filterwarnings("error", lineno=1)),
], ids=["message", "base-category", "module", "lineno", "not-matching"])
def test_filters_matching_as_warnings_does(error_filter):
    def run(fn):
        log = []
        with warnings.catch_warnings(record=True) as seen:
            warnings.resetwarnings()
            error_filter(warnings)
            try:
                result = fn(np.arange(2.0), log)
            except UserWarning as e:
                result = str(e)
        return result, log, [(w.category, str(w.message), w.lineno) for w in seen]
    plain, jitted = run(f_effects_around), run(frame.jit(f_effects_around))
    assert_same(plain[0], jitted[0])
    assert plain[1:] == jitted[1:]
    out = frame.explain(f_effects_around)(np.arange(2.0), [])
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def f_caught_warning(x):
    try:
        warnings.warn("caught", UserWarning)
        y = x + 1
    except UserWarning:
        y = x - 1
    return y


def test_warning_raised_into_a_handler():
    for action in ("always", "error"):
        _same(f_caught_warning, np.arange(3.0), calls=2,
              filters=lambda w, action=action: w.simplefilter(action))


def f_warn_after_fp_op(x):
    y = np.log(x)
    warnings.warn("after the log")
    return np.maximum(y, 0.5)   # (gives no floating-point warning)


def f_warn_before_fp_op(x):
    warnings.warn("before the log")
    return np.log(x) + 1


def test_order_with_numpy_floating_point_warnings():
    """NumPy's floating-point warnings of the graph's ops come while it runs:
    a warning after them is issued after the graph; when an op that may warn
    follows a warning, the graph runs with such errors raising (the caller's
    "ignore" kept) and the plain function runs when one happens."""
    frame.reset_stats()
    x = np.array([0.0, 1.0])
    warned = _same(f_warn_after_fp_op, x, calls=2)
    assert [w[1] for w in warned][:2] == ["divide by zero encountered in log", "after the log"]
    assert frame.stats().extra.get("graph_run_errors", 0) == 0
    before = np.geterr()
    warned = _same(f_warn_before_fp_op, x, calls=2)
    assert [w[1] for w in warned][:2] == ["before the log", "divide by zero encountered in log"]
    # (the two jitted calls and explain's ran natively)
    assert frame.stats().extra.get("graph_run_errors", 0) == 3
    assert np.geterr() == before
    _same(f_warn_before_fp_op, np.array([1.0, 2.0]), calls=2)
    with np.errstate(divide="ignore"):
        warned = _same(f_warn_before_fp_op, x, calls=2)
        assert [w[1] for w in warned] == ["before the log"] * 2
        assert np.geterr()["divide"] == "ignore"
    assert frame.stats().extra.get("graph_run_errors", 0) == 3


def f_warn_before_warning_block(x):
    warnings.warn("before the block")
    with np.errstate(divide="warn"):
        return np.log(x) + 1


def test_warning_before_an_op_of_a_warning_errstate_block_breaks():
    """An op whose own ``np.errstate`` block warns would not raise: the graph
    breaks before the warning's call."""
    x = np.array([0.0, 1.0])
    _same(f_warn_before_warning_block, x, calls=2, graphs=1, breaks=1)
    out = frame.explain(f_warn_before_warning_block)(x)
    assert "floating-point warnings" in out.break_reasons[0].reason


def f_stacklevel_beyond(x):
    warnings.warn("for my caller", UserWarning, stacklevel=2)
    return x + 1


def test_stacklevel_naming_the_caller_stays_a_break():
    out = frame.explain(f_stacklevel_beyond)(np.arange(2.0))
    assert out.graph_break_count == 1
    assert "names the jitted function's caller" in out.break_reasons[0].reason


def test_filter_check_answer_follows_the_filters():
    """The entry asks the filters through a WarningCheck kept with it: the
    answer is kept until the filter list changes; an action ``warn`` does not
    know raises (RuntimeError) in the plain function, which then runs."""
    from frame.hal.fp_errors import WarningCheck
    check = WarningCheck([(UserWarning, "careful", 3, {"__name__": "m"})])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not check.raises() and not check.raises()
        warnings.filterwarnings("error", message="care")
        assert check.raises()
        warnings.filterwarnings("ignore", module="m")
        assert not check.raises()
        warnings.filterwarnings("error", module="m", lineno=4)
        assert not check.raises()
        warnings.filters.insert(0, ("no such action", None, Warning, None, 0))
        assert check.raises()

    def run(fn):
        with warnings.catch_warnings():
            warnings.resetwarnings()
            warnings.filters.insert(0, ("no such action", None, Warning, None, 0))
            log = []
            try:
                fn(np.arange(2.0), log)
            except RuntimeError as e:
                return str(e), log
    assert run(f_effects_around) == run(frame.jit(f_effects_around))
