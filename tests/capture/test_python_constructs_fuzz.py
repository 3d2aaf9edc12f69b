"""Python-level constructs around NumPy, jitted vs plain: what a random program fuzzer
found (``pyfuzz_programs.py`` generates the programs), each a focused test, and a
seeded sample of generated programs as a regression corpus.

Each corpus program is loaded as a module of its own and called four times through
one ``frame.jit`` (a cache hit, then changed shapes, dtypes, lengths, scalar types,
special float values, a global rebound: guard failures and recompiles), each call
compared with the plain call on copies of the same inputs and the same globals:
printed output, result (types, values: bitwise where the cpu backend runs, else the
backend's tolerance; which results are the inputs; memory sharing), the exception
(type and message; never one of frame's own), the arguments and the module's
globals after the call.
"""
from __future__ import annotations

import contextlib
import copy
import importlib.util
import io
import itertools
import math
import struct
import sys
import types

import numpy as np
import pytest

import frame

from . import pyfuzz_programs
from .helpers import _identities, _shared_memory, array, assert_same, assert_same_as_eager, \
    resolved_backend

# -- focused tests of what the fuzzer found ------------------------------------------------


@pytest.mark.parametrize("start", [True, False, 3, 2.5, 2 ** 70])
def test_itertools_count_of_a_bool_counts_in_ints(start):
    # CPython's count() counts in C ints when start is an int (a bool too) and step is 1:
    # count(True) gives 1, 2, 3; a step other than 1 keeps the start object itself
    def f(x, s):
        return list(itertools.islice(itertools.count(s), 3)), next(itertools.count(s, 2)), x * 2
    assert_same_as_eager(f, array(), start, captured=None)


@pytest.mark.parametrize("start", [True, np.int64(3), 2.5, np.float32(1.5), -0.0, "a"])
@pytest.mark.parametrize("keyword", [False, True])
def test_enumerate_start_is_an_index(start, keyword):
    # enumerate() takes its start by __index__ (a float raises TypeError) and counts in ints
    if keyword:
        def f(x, s):
            return list(enumerate("ab", start=s)), x + 1
    else:
        def f(x, s):
            return list(enumerate("ab", s)), x + 1
    assert_same_as_eager(f, array(), start, captured=None)


# A call that breaks the graph (print) inside an except block bound with ``as e``: the
# block's code is covered by the cleanup that deletes ``e``, itself covered by the
# handler restoring the exception state; a resume function would run without the
# exception being handled (``sys.exc_info()``, the implicit ``__context__`` of a new one).

def _context_after_break_in_named_handler(x):
    try:
        raise ValueError("a")
    except ValueError as e:
        print("handling")
        try:
            raise TypeError("b") from None
        except TypeError as e2:
            return type(e2.__context__).__name__, e2.__suppress_context__, x * 2


def _exc_info_after_break_in_named_handler(x):
    try:
        raise KeyError("k")
    except KeyError as e:
        print("handling", repr(e))
        return repr(sys.exc_info()[1]), x - 1


def _break_in_try_inside_handler(x):
    try:
        raise ValueError("outer")
    except ValueError:
        try:
            print("inner try")
            y = float(x.sum())
        except TypeError:
            y = 0.0
        return repr(sys.exc_info()[1]), y


def _comprehension_inside_named_handler(x):
    try:
        raise ValueError("outer")
    except ValueError as e:
        out = [float(x.sum()) * k for k in range(2)]
        return out, repr(sys.exc_info()[1])


@pytest.mark.parametrize("fn", [_context_after_break_in_named_handler,
                                _exc_info_after_break_in_named_handler,
                                _break_in_try_inside_handler,
                                _comprehension_inside_named_handler],
                         ids=lambda fn: fn.__name__.strip("_"))
def test_exception_state_inside_nested_handler_blocks(fn):
    assert_same_as_eager(fn, array(), captured=None)


def test_exception_raised_in_named_handler_after_a_break_has_its_context():
    def f(x):
        try:
            raise ValueError("first")
        except ValueError as e:
            print("handling")
            raise RuntimeError("second")
    with pytest.raises(RuntimeError) as native:
        f(array())
    with pytest.raises(RuntimeError) as jitted:
        frame.jit(f)(array())
    assert repr(jitted.value.__context__) == repr(native.value.__context__) == "ValueError('first')"


def test_break_in_a_plain_try_body_still_resumes():
    # the handler chain of a try body (PUSH_EXC_INFO, covered by its own cleanup) is not
    # a handler body: the print there stays a graph break with graphs on both sides
    def f(x):
        y = x * 2
        try:
            print("in try")
            z = y + 1
        except ValueError:
            z = y
        return z
    out = frame.explain(f)(array())
    assert [b.kind for b in out.break_reasons] == ["unsupported_call"]
    assert out.graph_count == 2


# -- graph breaks the generated programs had, for constructs Dynamo and SOT capture ------------

class _Dyn:
    def __init__(self, v):
        self.v = v

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return name.upper()


class _Shown:
    def __init__(self, k):
        self.k = k

    def __repr__(self):
        return f"_Shown({self.k})"


class _Loud(_Shown):
    def __str__(self):
        return f"loud {self.k}"


class _Pair:
    def __init__(self, v):
        self.v = v

    def __iter__(self):
        yield self.v
        yield -self.v


def _instance_getattr_hook(x, s):
    d = _Dyn(x)
    return d.v * 2, d.foo_bar, getattr(d, "zz", None), hasattr(d, "_hidden"), getattr(d, "_q", 7)


def _instance_repr_and_str(x, s):
    a, b = _Shown(s), _Loud(2)
    return repr(a), str(a), f"{a!r}|{a}", repr(b), str(b), f"{b}", x * 2


def _builtin_type_name(x, s):
    return type(s).__name__, type(len).__name__, x + 1


def _format_builtin(x, s):
    return format(s, ".1%"), format(x.shape[0], "03d"), x - 1


def _dtype_type(x, s):
    return x.dtype.type(s) * 2, x.dtype.type, x.dtype.type(s) * x


def _instance_python_iter(x, s):
    a, b = _Pair(x)
    return a + b, list(_Pair(s)), tuple(_Pair(x.sum())), [v * 2 for v in _Pair(x)]


@pytest.mark.parametrize("fn", [_instance_getattr_hook, _instance_repr_and_str, _builtin_type_name,
                                _format_builtin, _dtype_type, _instance_python_iter],
                         ids=lambda fn: fn.__name__.strip("_"))
@pytest.mark.parametrize("s", [2, 2.5])
def test_captured_without_a_break(fn, s):
    assert_same_as_eager(fn, array(), s)
    out = frame.explain(fn)(array(), s)
    assert out.break_reasons == [] and out.graph_count == 1, str(out)


def test_iterating_an_endless_python_iter_runs_natively():
    # unpacking takes two items and checks for a third: natively a ValueError
    class Naturals:
        def __iter__(self):
            k = 0
            while True:
                yield k
                k += 1

    def f(x):
        a, b = Naturals()
        return a, b, x
    assert_same_as_eager(f, array(), captured=None)


# -- the seeded corpus of generated programs -------------------------------------------------

# 0-89: a sample; 322: itertools.count(True) in a generator in a comprehension
CORPUS_SEEDS = list(range(90)) + [322]
CALLS = 4
GLOBALS = ("G_count", "G_list", "G_scale", "G_arr")


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("pyfuzz")


def _load(seed: int, directory) -> types.ModuleType:
    path = directory / f"pyfuzz_{seed}.py"
    path.write_text(pyfuzz_programs.make_program(seed))
    name = f"pyfuzz_program_{seed}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod        # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _bits_same(a, b, path: str, seen: set) -> None:
    """``assert_same`` without tolerance: floats and arrays bit for bit."""
    if (id(a), id(b)) in seen:
        return
    seen.add((id(a), id(b)))
    assert type(a) is type(b), f"{path}: type {type(b).__name__} (jitted) != {type(a).__name__} (native)"
    if isinstance(a, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape), f"{path}: {b.dtype}{b.shape} != {a.dtype}{a.shape}"
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes(), \
            f"{path}: bits differ\n native: {a!r}\n jitted: {b!r}"
    elif isinstance(a, float):
        assert struct.pack("d", a) == struct.pack("d", b) or (math.isnan(a) and math.isnan(b)), \
            f"{path}: {b!r} (jitted) != {a!r} (native)"
    elif isinstance(a, complex):
        _bits_same(a.real, b.real, path + ".real", seen)
        _bits_same(a.imag, b.imag, path + ".imag", seen)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{path}: length {len(b)} (jitted) != {len(a)} (native)"
        for k, (u, v) in enumerate(zip(a, b)):
            _bits_same(u, v, f"{path}[{k}]", seen)
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys {list(b)} (jitted) != {list(a)} (native)"
        for k in a:
            _bits_same(a[k], b[k], f"{path}[{k!r}]", seen)
    elif isinstance(a, (types.FunctionType, type, types.ModuleType)):
        assert a is b, path
    elif hasattr(a, "__dict__"):
        _bits_same(vars(a), vars(b), path + ".__dict__", seen)
    else:
        assert a == b, f"{path}: {b!r} (jitted) != {a!r} (native)"


def _same(native, jitted, path: str) -> None:
    if resolved_backend() == "cpu":
        _bits_same(native, jitted, path, set())
    else:
        assert_same(native, jitted, path)


def _snapshot(mod) -> dict:
    return copy.deepcopy({name: getattr(mod, name) for name in GLOBALS})


def _restore(mod, values: dict) -> None:
    """The globals' values back, in the same objects (the jitted code's guards on them
    see the objects the native call saw)."""
    for name, value in values.items():
        current = getattr(mod, name)
        if isinstance(current, list):
            current[:] = copy.deepcopy(value)
        elif isinstance(current, np.ndarray):
            current[...] = value
        else:
            setattr(mod, name, copy.deepcopy(value))


def _run(fn, args):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            return fn(*args), None, printed.getvalue()
        except Exception as e:  # noqa: BLE001 - compared below
            return None, e, printed.getvalue()


def _check_program(seed: int, directory) -> None:
    mod = _load(seed, directory)
    try:
        jitted_f = frame.jit(mod.f)
        for call in range(CALLS):
            where = f"seed {seed}, call {call}"
            inputs = pyfuzz_programs.make_inputs(seed, call)
            if call == 3:
                mod.G_scale = 2          # a global rebound between calls
            before = _snapshot(mod)
            n_args = copy.deepcopy(inputs)
            native, n_exc, n_printed = _run(mod.f, n_args)
            n_globals = _snapshot(mod)
            _restore(mod, before)
            j_args = copy.deepcopy(inputs)
            jitted, j_exc, j_printed = _run(jitted_f, j_args)
            j_globals = _snapshot(mod)
            if j_exc is not None:
                assert type(j_exc).__module__.split(".")[0] not in ("capture", "frame"), \
                    f"{where}: frame's own {type(j_exc).__name__} reached the user: {j_exc}"
            assert j_printed == n_printed, \
                f"{where}: printed output differs\n native: {n_printed!r}\n jitted: {j_printed!r}"
            if n_exc is not None or j_exc is not None:
                assert (type(n_exc), str(n_exc)) == (type(j_exc), str(j_exc)), \
                    f"{where}: native raised {n_exc!r}, jitted {j_exc!r}"
            else:
                _same(native, jitted, f"{where}: result")
                assert _identities(native, n_args) == _identities(jitted, j_args), \
                    f"{where}: results alias the inputs differently"
                assert _shared_memory(native, n_args) == _shared_memory(jitted, j_args), \
                    f"{where}: memory sharing differs"
            _same(n_args, j_args, f"{where}: arguments after the call")
            _same(n_globals, j_globals, f"{where}: globals after the call")
    finally:
        sys.modules.pop(mod.__name__, None)


# NumPy's floating-point warnings are not compared (the compiled ops warn from their own
# line, or not at all: test_corpus_python.NUMPY_WARNINGS)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("chunk", range(0, len(CORPUS_SEEDS), 13))
def test_generated_programs(chunk, program_dir):
    for seed in CORPUS_SEEDS[chunk:chunk + 13]:
        _check_program(seed, program_dir)


def test_generator_is_deterministic():
    # the corpus is the same programs on every run and Python version
    assert pyfuzz_programs.make_program(7) == pyfuzz_programs.make_program(7)
    a, b = pyfuzz_programs.make_inputs(7, 2), pyfuzz_programs.make_inputs(7, 2)
    assert [np.asarray(v).tobytes() if isinstance(v, np.ndarray) else v for v in a] == \
        [np.asarray(v).tobytes() if isinstance(v, np.ndarray) else v for v in b]
