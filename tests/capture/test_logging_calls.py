"""``logging`` calls in traced code: a logger not enabled for the level is no
graph break (a guard asks ``isEnabledFor`` at every call), an enabled one
breaks as before and its record names the user's frame; levels, parents and
``logging.disable`` changed between calls; ``isEnabledFor`` as a guarded
constant; the module's functions and ``basicConfig``."""
from __future__ import annotations

import contextlib
import logging

import numpy as np
import pytest

import frame

from .helpers import assert_same

log = logging.getLogger("hl_test.user")
child = logging.getLogger("hl_test.user.child")


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        if record.name.startswith("frame"):
            return   # (frame's own reports of graph breaks)
        self.records.append((record.name, record.levelname, record.pathname, record.lineno,
                             record.funcName, record.getMessage(), record.exc_info is not None))


@contextlib.contextmanager
def _recorded(logger=None):
    """Records of ``logger`` (the root logger by default) in a fresh handler;
    levels and ``logging.disable`` restored after."""
    logger = logger or logging.getLogger()
    handler = _Records()
    logger.addHandler(handler)
    saved = [(lg, lg.level) for lg in (log, child, logging.getLogger("hl_test"), logging.root)]
    disabled = logging.root.manager.disable
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)
        for lg, level in saved:
            lg.setLevel(level)
        logging.disable(disabled)


def _graphs(fn, *args):
    out = frame.explain(fn)(*args)
    return out.graph_count, out.graph_break_count


def f_info(x):
    log.info("shape %s", x.shape)
    return x * 2


def f_levels(x):
    log.debug("debug %d", 1)
    y = x + 1
    log.info("info")
    log.warning("warning %s", "w")
    child.error("child error")
    log.log(logging.DEBUG, "log at debug")
    return y * 2


def f_exception(x):
    try:
        raise KeyError("k")
    except KeyError:
        log.exception("failed")
    return x - 1


def f_guarded_branch(x):
    if log.isEnabledFor(logging.DEBUG):
        return x * 3, "debug"
    return x * 2, "quiet"


def f_module_functions(x):
    logging.debug("module debug")
    logging.info("module info %s", 1)
    return x + 1


def _compare(fn, x, setups):
    """Plain and jitted calls under each setup in turn (levels changed between
    calls): the same results and records."""
    jitted = frame.jit(fn)
    plain_records, jitted_records = [], []
    for setup in setups:
        with _recorded() as records:
            setup()
            expected = fn(x)
            plain_records += records[:]
            records.clear()
            assert_same(expected, jitted(x))
            jitted_records += records[:]
    assert jitted_records == plain_records
    return plain_records


def _quiet():
    logging.getLogger("hl_test").setLevel(logging.WARNING)


def test_disabled_calls_are_no_break():
    with _recorded():
        _quiet()
        assert _graphs(f_info, np.arange(3.0)) == (1, 0)
        assert _graphs(f_levels, np.arange(3.0))[1] == 2   # (warning, error: enabled)
        log.setLevel(logging.ERROR)
        child.setLevel(logging.CRITICAL)
        assert _graphs(f_levels, np.arange(3.0)) == (1, 0)


@pytest.mark.parametrize("fn", [f_info, f_levels, f_exception, f_guarded_branch],
                         ids=lambda f: f.__name__)
def test_levels_changed_between_calls(fn):
    def set_level(logger, level):
        return lambda: (_quiet(), logger.setLevel(level))
    records = _compare(fn, np.arange(3.0), [
        _quiet, set_level(log, logging.DEBUG), _quiet, set_level(log, logging.INFO),
        set_level(logging.getLogger("hl_test"), logging.DEBUG),   # a parent's level
        lambda: (logging.getLogger("hl_test").setLevel(logging.DEBUG), logging.disable(logging.INFO)),
        _quiet])
    if fn is not f_guarded_branch:
        assert records   # some setups enable the calls: their records are the plain ones
        assert all(r[2] == __file__ for r in records)
    with _recorded():
        for lg in (log, child):
            lg.setLevel(logging.CRITICAL + 1)
        assert _graphs(fn, np.arange(3.0)) == (1, 0)


def test_guarded_constant_picks_the_branch():
    jitted = frame.jit(f_guarded_branch)
    x = np.arange(2.0)
    with _recorded():
        _quiet()
        assert jitted(x)[1] == "quiet"
        log.setLevel(logging.DEBUG)
        assert jitted(x)[1] == "debug"
        logging.disable(logging.DEBUG)
        assert jitted(x)[1] == "quiet"
    entries = jitted._frame_cache.entries
    assert len(entries) == 2 and all(e.graph is not None and not e.breaks for e in entries)


def test_module_functions_and_basic_config():
    """The module's functions configure the root logger when it has no
    handler (``basicConfig``): then the call runs natively."""
    root = logging.getLogger()
    with _recorded():
        _quiet()
        assert _graphs(f_module_functions, np.arange(2.0)) == (1, 0)
        _compare(f_module_functions, np.arange(2.0), [lambda: None,
                                                      lambda: root.setLevel(logging.DEBUG)])
    saved = root.handlers[:]
    root.handlers.clear()
    try:
        jitted = frame.jit(f_module_functions)
        jitted(np.arange(2.0))
        assert len(root.handlers) == 1   # basicConfig ran, as in the plain call
        root.removeHandler(root.handlers[0])
        f_module_functions(np.arange(2.0))
        assert len(root.handlers) == 1
    finally:
        for h in root.handlers[:]:
            root.removeHandler(h)
        root.handlers[:] = saved


class _LoudLogger(logging.Logger):
    def isEnabledFor(self, level):
        self.asked = getattr(self, "asked", 0) + 1
        return super().isEnabledFor(level)


def test_logger_with_its_own_is_enabled_for_is_not_guessed():
    """Its ``isEnabledFor`` is the program's code: inlined as before, not asked
    by a guard (which would run it once more per call); a plain logger
    beside it is no break."""
    loud = _LoudLogger("hl_test.loud")
    loud.parent = logging.getLogger("hl_test")

    def f(x):
        loud.info("x")
        return x + 1
    def g(x):
        log.info("x")
        return x + 1
    with _recorded():
        _quiet()
        jitted = frame.jit(f)
        jitted(np.arange(2.0))
        jitted(np.arange(2.0))
        assert loud.asked == 2   # once per call, as the plain call asks (no guard runs it)
        assert _graphs(g, np.arange(2.0)) == (1, 0)
