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
Whether the call was captured is not checked here: the corpus is about what
the caller sees (``python -m tests.capture.corpus_summary`` counts graphs).
A case may be marked ``xfail`` (always strict: a fixed bug makes the case
fail until its mark is removed), optionally only on one backend.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import pytest

from capture.jit import _default_backend

from .helpers import assert_same_as_eager

# None: the default backend (FRAME_BACKEND, else openvino when installed, else cpu)
BACKEND = None


def effective_backend() -> str:
    return BACKEND or _default_backend()


@dataclasses.dataclass
class Case:
    fn: Callable
    make_args: Callable[[], tuple]
    name: str
    kwargs: dict
    globals_to_check: tuple[str, ...]
    xfail: str | None
    xfail_on: str | None

    def args(self) -> tuple:
        return tuple(self.make_args())

    def check(self):
        fn_globals = getattr(self.fn, "__globals__", None) or getattr(
            getattr(self.fn, "__wrapped__", None), "__globals__", {})
        return assert_same_as_eager(
            self.fn, *self.args(), captured=None, backend=BACKEND,
            globals_to_check=[(fn_globals, name) for name in self.globals_to_check],
            **self.kwargs)


class Corpus:
    """A list of cases; calling it gives a decorator that registers a function."""

    def __init__(self) -> None:
        self.cases: list[Case] = []

    def __call__(self, make_args: Callable[[], tuple] = tuple, *, kwargs: dict | None = None,
                 globals_to_check: tuple[str, ...] = (), xfail: str | None = None,
                 xfail_on: str | None = None, name: str | None = None):
        def register(fn):
            self.add(fn, make_args, kwargs=kwargs, globals_to_check=globals_to_check,
                     xfail=xfail, xfail_on=xfail_on, name=name)
            return fn
        return register

    def add(self, fn, make_args: Callable[[], tuple] = tuple, *, kwargs: dict | None = None,
            globals_to_check: tuple[str, ...] = (), xfail: str | None = None,
            xfail_on: str | None = None, name: str | None = None) -> None:
        name = name or fn.__name__
        assert all(c.name != name for c in self.cases), f"two corpus cases named {name!r}"
        self.cases.append(Case(fn, make_args, name, dict(kwargs or {}), tuple(globals_to_check),
                               xfail, xfail_on))

    def params(self) -> list:
        params = []
        for c in self.cases:
            marks = []
            if c.xfail is not None:
                condition = c.xfail_on is None or effective_backend() == c.xfail_on
                marks.append(pytest.mark.xfail(condition, strict=True, reason=c.xfail))
            params.append(pytest.param(c, id=c.name, marks=marks))
        return params
