"""Code that inspects its caller sees the user's function (issue 12, item 8).

Each function of ``_frames_module`` does tensor work and then calls code that
looks at the frame calling it; under ``frame.jit`` that call runs at a graph
break, in the generated entry (``capture/codegen.py``).  The entry must look
like the user's function there: its globals, file, name, qualified name and
the line of the call.  Every test compares the jitted function with the plain
one, on the first (translating) and on a later (cached) call.
"""
from __future__ import annotations

import logging
import pickle
import traceback
import warnings

import numpy as np
import pytest

import frame
from capture.codegen import ENTRY_FILENAME

from . import _frames_module as mod


def _x():
    return frame.tensor(np.arange(3, dtype=np.float32))


def _jit(fn):
    return frame.jit(fn, backend="cpu")


def _ran_at_a_break(jitted) -> None:
    """The inspecting call ran in a graph-break entry (not natively)."""
    entry = jitted._frame_cache.entries[0]
    assert entry.breaks and not entry.native


def _ran_natively_for_its_frame(jitted) -> None:
    """The frame-inspecting call (``sys._getframe``, ``inspect.currentframe``,
    ``inspect.stack``) made the function run natively: at a break it would be
    handed the entry's frame, whose locals and callers are capture's."""
    entry = jitted._frame_cache.entries[0]
    assert entry.native and "depends on the calling frame" in entry.reason.reason


def _same_tensor(a, b) -> None:
    np.testing.assert_array_equal(a.numpy(), b.numpy())


# -- classes made inside a jitted function ------------------------------------------------------

_INSTANCES = {"Point": lambda cls: cls(1, 2), "Pair": lambda cls: cls(1, "a"),
              "Color": lambda cls: cls.RED, "Plain": lambda cls: cls}


@pytest.mark.parametrize("fn,name", [(mod.make_namedtuple, "Point"),
                                     (mod.make_typing_namedtuple, "Pair"),
                                     (mod.make_enum, "Color"), (mod.make_type, "Plain")])
def test_class_made_inside_has_the_users_module_and_pickles(fn, name):
    plain_y, plain_cls = fn(_x())
    assert plain_cls.__module__ == mod.__name__
    jitted = _jit(fn)
    for _ in range(2):
        y, cls = jitted(_x())
        _same_tensor(y, plain_y)
        assert cls is getattr(mod, name)            # the global the function stored
        assert cls.__module__ == plain_cls.__module__
        assert cls.__qualname__ == plain_cls.__qualname__
        assert pickle.loads(pickle.dumps(cls)) is cls
        obj = _INSTANCES[name](cls)
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is type(obj) and back == obj


# -- logging ------------------------------------------------------------------------------------

class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def _logged(fn) -> tuple:
    handler = _Records()
    mod.log.addHandler(handler)
    try:
        y = fn(_x())
    finally:
        mod.log.removeHandler(handler)
    (r,) = handler.records
    return y, (r.funcName, r.filename, r.pathname, r.module, r.lineno, r.getMessage())


def test_log_record_names_the_users_function_and_line():
    plain_y, expected = _logged(mod.log_warning)
    jitted = _jit(mod.log_warning)
    for _ in range(2):
        y, seen = _logged(jitted)
        assert seen == expected
        _same_tensor(y, plain_y)
    _ran_at_a_break(jitted)


# -- warnings -----------------------------------------------------------------------------------

def _warned(fn, action: str = "always") -> list[tuple]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(action)
        fn(_x())
    return [(w.filename, w.lineno, str(w.message), w.category) for w in caught]


def test_warning_is_reported_at_the_users_line():
    expected = _warned(mod.warn_here)
    assert expected[0][0] == mod.__file__
    jitted = _jit(mod.warn_here)
    assert _warned(jitted) == expected
    assert _warned(jitted) == expected
    entry = jitted._frame_cache.entries[0]   # (issued by the entry: test_warn_capture.py)
    assert not entry.breaks and not entry.native


@pytest.mark.parametrize("action", ["default", "module"])
def test_warning_in_a_loop_is_shown_once_as_plain(action):
    # the registry is the module's __warningregistry__, keyed by line
    expected = _warned(mod.warn_in_loop, action)
    assert len(expected) == 1
    jitted = _jit(mod.warn_in_loop)
    assert _warned(jitted, action) == expected
    assert _warned(jitted, action) == expected
    assert "__warningregistry__" in vars(mod)


@pytest.mark.xfail(strict=True, reason="the jit wrapper's frame (capture/jit.py) is the caller "
                                       "of the frame that runs the call at a break")
def test_warning_with_stacklevel_2_is_reported_at_the_callers_line():
    expected = _warned(mod.warn_caller)       # at ``_warned``'s call of the function
    assert expected[0][0] == __file__
    assert _warned(_jit(mod.warn_caller)) == expected


# -- frames -------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [mod.code_name, mod.line_number, mod.stack_function,
                                mod.own_globals, mod.globals_call, mod.code_location],
                         ids=lambda f: f.__name__)
def test_frame_seen_inside_is_the_users(fn):
    plain = fn(_x())
    jitted = _jit(fn)
    for _ in range(2):
        got = jitted(_x())
        _same_tensor(got[0], plain[0])
        assert got[1:] == plain[1:]
    if fn is mod.globals_call:
        _ran_at_a_break(jitted)        # globals() is the entry's globals: the user's
    else:
        _ran_natively_for_its_frame(jitted)


@pytest.mark.xfail(strict=True, reason="the jit wrapper's frame (capture/jit.py) is the caller "
                                       "of the frame that runs the call at a break")
def test_caller_frame_seen_inside_is_the_callers():
    jitted = _jit(mod.caller_name)
    assert jitted(_x())[1] == mod.caller_name(_x())[1]


# -- tracebacks ---------------------------------------------------------------------------------

def _frames(err: BaseException) -> list[tuple]:
    return [(f.name, f.filename, f.lineno) for f in traceback.extract_tb(err.__traceback__)]


@pytest.mark.parametrize("fn", [mod.raise_from_library, mod.raise_after_break],
                         ids=lambda f: f.__name__)
def test_traceback_names_the_users_function_file_and_line(fn):
    with pytest.raises(ValueError) as plain:
        fn(_x())
    expected = _frames(plain.value)
    user = [f for f in expected if f[1] == mod.__file__]
    below = expected[expected.index(user[-1]):]     # the innermost user frame and the library's
    jitted = _jit(fn)
    for _ in range(2):
        with pytest.raises(ValueError) as caught:
            jitted(_x())
        assert str(caught.value) == str(plain.value)
        frames = _frames(caught.value)
        assert not [f for f in frames if f[0] == "__entry" or f[1] == ENTRY_FILENAME
                    or f[1].endswith("breaks.py")], frames
        assert frames[-len(below):] == below, frames


# -- the entries themselves ---------------------------------------------------------------------

def _global_names(code) -> set[str]:
    import dis
    found = {i.argval for i in dis.get_instructions(code)
             if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL")}
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            found |= _global_names(c)
    return found


@pytest.mark.parametrize("fn", [mod.make_namedtuple, mod.log_warning, mod.make_type,
                                mod.code_location], ids=lambda f: f.__name__)
def test_entries_read_no_global_of_the_users_module(fn):
    """An entry runs with the user's globals: its helpers, constants and the
    builtins it uses are its own cells, so a global of the user's module named
    ``type`` or ``len`` cannot change what it does."""
    jitted = _jit(fn)
    jitted(_x())
    entries = list(jitted._frame_cache.entries)
    assert entries
    for entry in entries:
        assert entry.fn.__globals__ is vars(mod)
        assert entry.fn.__code__.co_filename == mod.__file__
        assert entry.fn.__code__.co_name == fn.__name__
        assert _global_names(entry.fn.__code__) == set(), entry.source
