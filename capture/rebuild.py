"""Run-time helpers of generated entries that rebuild, at a graph break, the
live iterators, functions and cells of the trace as real Python objects
(``Variable.reconstruct``, ``breaks.py``).

A loop whose body breaks the graph has its iterator on the stack: the entry
hands the resume function a real iterator positioned where the trace is,
whose further items are the ones the plain iterator would yield (the same
objects: rows of an ndarray are views of it, items of a list are the list's).
A function made in the frame (``def``, ``lambda``) that is live at the break
is handed over as a real function whose closure holds real cells, shared with
the resume function's own cell variables (``resume.py``): later calls and
``nonlocal`` writes behave as in Python.
"""
from __future__ import annotations

import types

__all__ = ["iter_at", "dict_iter_at", "tensor_rows", "make_function", "new_cell"]


def iter_at(iterable, state: int):
    """``iter(iterable)`` with its position set by CPython's ``__setstate__``
    (the index of the next item) without reading the items before it: a
    list's, a tuple's or a range's iterator, ``reversed(list)``'s, NumPy's
    sequence iterator over an ndarray."""
    it = iter(iterable)
    it.__setstate__(state)
    return it


def dict_iter_at(d: dict, mode: str, pos: int):
    """An iterator over ``d``'s keys, values or items (``mode``) that has
    yielded its first ``pos`` items (dict iterators have no ``__setstate__``;
    skipping reads nothing but the keys)."""
    it = iter(getattr(d, mode)())
    for _ in range(pos):
        next(it)
    return it


def tensor_rows(t, start: int, stop: int):
    """The rest of ``iter(t)`` of a frame Tensor from row ``start`` (its
    ``__iter__`` is a generator over the rows ``0..stop``, each read when asked)."""
    return (t[i] for i in range(start, stop))


def make_function(code: types.CodeType, globals_: dict, defaults, kwdefaults, closure):
    """A function made by the frame (``MAKE_FUNCTION``): its code, globals,
    defaults and real closure cells."""
    fn = types.FunctionType(code, globals_, code.co_name, defaults, closure)
    if kwdefaults:
        fn.__kwdefaults__ = kwdefaults
    return fn


def new_cell(*value):
    """A real closure cell: empty, or holding ``value``."""
    return types.CellType(*value)
