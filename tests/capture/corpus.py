"""The registry of the differential corpus (``test_corpus_*.py``).

Each corpus module writes plain functions in the style of other projects'
tests (closures, classes, NumPy utility code, stdlib helpers...) and registers
them with the inputs they are called with:

    case = Corpus()

    @case(lambda: (array(), [1, 2]))
    def scale_by_list(x, factors):
        ...

    @pytest.mark.parametrize("c", case.params())
    def test_corpus(c):
        c.check()

``check`` runs the function natively and jitted (``assert_same_as_eager``:
types, values, dtypes, argument and global mutation, identity, exceptions).
A case registered with ``calls=`` (a function returning several argument
tuples) is called with each in turn through one code cache (the same
function seeing a new learning rate, a counter, a temperature at every
call), each call compared with the plain one; ``recompiles=N`` also counts
the calls that translated again.
Whether the call was captured is checked only for a case registered with
``graphs=N`` (the coverage corpus, ``test_coverage_*.py``): ``frame.explain``
must show N graphs and exactly the breaks listed in ``breaks=`` (substrings
of the reasons; ``graphs=1`` alone means one graph and no break).  Elsewhere
the corpus is about what the caller sees (``python -m
tests.capture.corpus_summary`` counts graphs).
A case registered with ``observe=True`` also compares what the call reports on
the side: its warnings (message, category, file, line) and its log records
(logger, function name, module, file, line, message) outside frame's own
loggers, native vs the jitted first call (a translation) and second call (a
cache hit).  A case registered with ``steps=`` (a function returning a list
whose items are argument tuples and callables) runs the list twice, on
fresh objects each time: natively, then through one ``frame.jit`` of the
function; a tuple is a call, a callable is a change made between calls (a
global rebound, an attribute set, ``model.eval``).  Arguments may be the same
objects from call to call (a model, an optimizer, a list that grows): each
call's result or exception, and the arguments right after it, are compared.
A case may be marked ``xfail`` (always strict: a fixed bug makes the case
fail until its mark is removed), optionally only on one backend or under one
test setting (``xfail_on="untiered"``: only where OpenVINO runs every graph
from its first call).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import warnings
from typing import Callable

import pytest

from capture.jit import _default_backend

import capture
import frame

from .helpers import _ABSENT, assert_same, assert_same_as_eager

# None: the default backend (FRAME_BACKEND, else openvino when installed, else cpu)
BACKEND = None


def effective_backend() -> str:
    return BACKEND or _default_backend()


def _setting() -> str:
    """The test setting (``FRAME_TEST_SETTING``: default, untiered, cpu)."""
    from tests.conftest import SETTING
    return SETTING


@dataclasses.dataclass
class Case:
    fn: Callable
    make_args: Callable[[], tuple]
    name: str
    kwargs: dict
    globals_to_check: tuple[str, ...]
    xfail: str | None
    xfail_on: str | None
    observe: bool = False
    graphs: int | None = None
    breaks: tuple[str, ...] = ()
    calls: Callable[[], list[tuple]] | None = None
    recompiles: int | None = None
    steps: Callable[[], list] | None = None

    def args(self) -> tuple:
        if self.calls is not None:
            return tuple(self.calls()[0])
        if self.steps is not None:
            return next(tuple(s) for s in self.steps() if not callable(s))
        return tuple(self.make_args())

    def check(self) -> None:
        fn_globals = getattr(self.fn, "__globals__", None) or getattr(
            getattr(self.fn, "__wrapped__", None), "__globals__", {})
        if self.calls is not None:
            self.check_calls(fn_globals)
        elif self.steps is not None:
            self.check_steps(fn_globals)
        else:
            assert_same_as_eager(
                self.fn, *self.args(), captured=None, backend=BACKEND,
                globals_to_check=[(fn_globals, name) for name in self.globals_to_check],
                **self.kwargs)
        if self.observe:
            capture.reset_caches()
            self.check_observed()
        if self.graphs is not None:
            self.check_captured()

    def check_calls(self, fn_globals) -> None:
        """A case called several times (``calls``): each call, in order, natively
        and through one code cache; ``recompiles``: how many of the calls
        translated again (``frame.stats().recompiles``)."""
        capture.reset_caches()
        before = frame.stats().recompiles
        for args in self.calls():
            assert_same_as_eager(
                self.fn, *args, captured=None, backend=BACKEND,
                globals_to_check=[(fn_globals, name) for name in self.globals_to_check],
                **self.kwargs)
        if self.recompiles is not None:
            got = frame.stats().recompiles - before
            assert got == self.recompiles, f"{self.name}: {got} recompile(s), expected {self.recompiles}"

    def check_steps(self, fn_globals) -> None:
        """A sequence of calls on shared objects with changes in between
        (``steps``): natively, then jitted, on fresh objects and fresh copies
        of the checked globals; each call compared as it returned."""
        names = self.globals_to_check
        originals = {n: fn_globals.get(n, _ABSENT) for n in names}

        def run(fn):
            for n, v in copy.deepcopy(originals, {id(_ABSENT): _ABSENT}).items():
                if v is _ABSENT:
                    fn_globals.pop(n, None)
                else:
                    fn_globals[n] = v
            seen = []
            for step in self.steps():
                if callable(step):
                    step()
                    continue
                try:
                    out, exc = fn(*step, **self.kwargs), None
                except Exception as e:  # noqa: BLE001 - compared below
                    out, exc = None, e
                seen.append((copy.deepcopy((out, step)), exc))
            return seen, copy.deepcopy({n: fn_globals.get(n, _ABSENT) for n in names},
                                       {id(_ABSENT): _ABSENT})   # (a deleted global stays absent)

        capture.reset_caches()
        try:
            native, native_globals = run(self.fn)
            jitted, jitted_globals = run(frame.jit(self.fn, backend=BACKEND))
        finally:
            for n, v in originals.items():
                if v is _ABSENT:
                    fn_globals.pop(n, None)
                else:
                    fn_globals[n] = v
        for i, ((n_out, n_exc), (j_out, j_exc)) in enumerate(zip(native, jitted)):
            where = f"{self.name}, call {i}"
            assert type(n_exc) is type(j_exc), f"{where}: raised {j_exc!r} (jitted), {n_exc!r} (native)"
            assert str(n_exc) == str(j_exc), f"{where}: {j_exc!r} (jitted), {n_exc!r} (native)"
            assert_same(n_out[0], j_out[0], f"{where}: result", backend=BACKEND)
            assert_same(n_out[1], j_out[1], f"{where}: arguments after the call", backend=BACKEND)
        for n in names:
            a, b = native_globals[n], jitted_globals[n]
            assert (a is _ABSENT) == (b is _ABSENT), f"global {n!r}: presence differs"
            if a is not _ABSENT:
                assert_same(a, b, f"global {n!r}", backend=BACKEND)

    def check_captured(self) -> None:
        """The case's capture expectation: ``graphs`` graphs, and exactly the
        breaks named by ``breaks`` (each a substring of one break's reason, in
        order; no break when empty)."""
        capture.reset_caches()
        out = frame.explain(self.fn, backend=BACKEND)(*self.args(), **self.kwargs)
        reasons = [f"{r.kind}: {r.reason}" for r in out.break_reasons]
        shown = f"graphs={out.graph_count}, breaks={reasons}"
        assert out.graph_count == self.graphs, f"{self.name}: expected {self.graphs} graph(s); {shown}"
        assert len(reasons) == len(self.breaks), (
            f"{self.name}: expected {len(self.breaks)} break(s) {list(self.breaks)}; {shown}")
        for wanted, reason in zip(self.breaks, reasons):
            assert wanted in reason, f"{self.name}: expected a break about {wanted!r}; {shown}"


    def check_observed(self) -> None:
        native = _observed(self.fn, self.args(), self.kwargs)
        jitted = frame.jit(self.fn, backend=BACKEND)
        first = _observed(jitted, self.args(), self.kwargs)
        second = _observed(jitted, self.args(), self.kwargs)
        assert_same(native, first, "warnings and log records (first jitted call)")
        assert_same(native, second, "warnings and log records (second jitted call)")


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        if record.name != "frame" and not record.name.startswith("frame."):
            self.records.append((record.name, record.funcName, record.module, record.filename,
                                 record.lineno, record.levelname, record.getMessage()))


def _observed(fn, args, kwargs) -> tuple[list, list]:
    """The warnings and (non-frame) log records of one call (its result and
    exception are compared by ``assert_same_as_eager``)."""
    handler = _Records()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with contextlib.suppress(Exception):
                fn(*args, **kwargs)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    shown = [(str(w.message), w.category.__name__, w.filename, w.lineno) for w in caught]
    return shown, handler.records


class Corpus:
    """A list of cases; calling it gives a decorator that registers a function."""

    def __init__(self) -> None:
        self.cases: list[Case] = []

    def __call__(self, make_args: Callable[[], tuple] = tuple, *, kwargs: dict | None = None,
                 globals_to_check: tuple[str, ...] = (), xfail: str | None = None,
                 xfail_on: str | None = None, name: str | None = None, observe: bool = False,
                 graphs: int | None = None, breaks: tuple[str, ...] | str = (),
                 calls: Callable[[], list[tuple]] | None = None, recompiles: int | None = None,
                 steps: Callable[[], list] | None = None):
        def register(fn):
            self.add(fn, make_args, kwargs=kwargs, globals_to_check=globals_to_check,
                     xfail=xfail, xfail_on=xfail_on, name=name, observe=observe,
                     graphs=graphs, breaks=breaks, calls=calls, recompiles=recompiles,
                     steps=steps)
            return fn
        return register

    def add(self, fn, make_args: Callable[[], tuple] = tuple, *, kwargs: dict | None = None,
            globals_to_check: tuple[str, ...] = (), xfail: str | None = None,
            xfail_on: str | None = None, name: str | None = None, observe: bool = False,
            graphs: int | None = None, breaks: tuple[str, ...] | str = (),
            calls: Callable[[], list[tuple]] | None = None, recompiles: int | None = None,
            steps: Callable[[], list] | None = None) -> None:
        name = name or fn.__name__
        assert all(c.name != name for c in self.cases), f"two corpus cases named {name!r}"
        breaks = (breaks,) if isinstance(breaks, str) else tuple(breaks)
        assert not breaks or graphs is not None, f"{name}: breaks= needs graphs="
        assert recompiles is None or calls is not None, f"{name}: recompiles= needs calls="
        assert steps is None or calls is None, f"{name}: steps= and calls= exclude each other"
        self.cases.append(Case(fn, make_args, name, dict(kwargs or {}), tuple(globals_to_check),
                               xfail, xfail_on, observe, graphs, breaks, calls, recompiles, steps))

    def params(self) -> list:
        params = []
        for c in self.cases:
            marks = []
            if c.xfail is not None:
                # xfail_on: a backend ("openvino"), or a test setting ("untiered": every
                # graph runs on OpenVINO from its first call, tests/conftest.py)
                condition = c.xfail_on is None or c.xfail_on in (effective_backend(), _setting())
                marks.append(pytest.mark.xfail(condition, strict=True, reason=c.xfail))
            params.append(pytest.param(c, id=c.name, marks=marks))
        return params
