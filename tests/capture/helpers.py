"""Compare a jitted function with plain Python (Paddle SOT's ``assert_results``).

    assert_same_as_eager(fn, x, y)              # values, types, mutations, exceptions
    assert_same_as_eager(fn, x, globals_to_check=[(globals(), "counter")])
    assert_captured(fn, x, graphs=1)            # captured whole, no native entry

``assert_same_as_eager`` deep-copies the inputs (and the named globals) twice,
runs ``fn`` natively on one copy and ``frame.jit(fn, backend=backend)`` on the
other (by default the jit's default backend, which the test setting picks:
tests/conftest.py), then compares what each printed (its stdout, exactly: a
``print`` is a graph break whose output must be the plain function's) and,
recursively: the returned values (float
tolerance per backend, ``_TOLERANCE``; exact for ints and bools), their Python types (Tensor, ndarray, NumPy scalar, Python
scalar; tuple vs list; dict keys in order), which results are the very input
objects, the arguments and globals after the call, and the exception raised
(type and message).  By default it also asserts that the call was captured
(no native entry) unless the native call raised; pass ``captured=False`` when
the function is expected to run natively, ``captured=None`` to not check.
Results and inputs are also compared for memory sharing (NumPy views of an
input must stay views; two results must not share a buffer the native ones do
not share).
"""
from __future__ import annotations

import contextlib
import copy
import functools
import io
import math
import sys
import types

import numpy as np

import capture
import frame
from frame.runtime import compile as runtime_compile
from frame.runtime.stats import record, stats

__all__ = ["assert_same_as_eager", "assert_captured", "assert_same", "CompileCounter",
           "last_entry", "graph_count", "array", "tensor"]

_ABSENT = object()
# (rtol, atol) of float results by dtype, per backend that computed them (jitted vs native;
# ints, bools, shapes, dtypes and types are always compared exactly).
#   cpu: the compiled NumPy codegen may reassociate; float16 within one ulp.
#   openvino: the CPU plugin is claimed within 1e-5 relative for float32 and one float16
#     ulp (docs/openvino.md), e.g. its float32 pow is 1 ulp off NumPy's on some values; it
#     sums in another order than NumPy's pairwise sums, hence the parity tests' absolute
#     floor of 1e-5 (tests/backends/openvino/_helpers.py).  It never computes float64 or
#     complex128 (refused: the reference kernels do), but a float64 result may be
#     computed from float32 values it did compute (``x ** 3 * np.float64(...)``), so its
#     float64 bound is its float32 bound.
#   Python floats (often a float32 tensor's ``item()``): the "float" entries.
#   Under tiered compilation a call runs on the cpu tier or, once swapped in, on
#   openvino: the openvino bounds apply (they contain the cpu ones).  Backends not
#   listed (test backends) use the cpu bounds.
_TOLERANCE = {
    "cpu": {np.dtype(np.float16): (2e-3, 2e-3), np.dtype(np.float32): (1e-5, 1e-6),
            np.dtype(np.float64): (1e-12, 1e-13), np.dtype(np.complex64): (1e-5, 1e-6),
            np.dtype(np.complex128): (1e-12, 1e-13), float: (1e-6, 1e-9)},
    "openvino": {np.dtype(np.float16): (2e-3, 2e-3), np.dtype(np.float32): (1e-5, 1e-5),
                 np.dtype(np.float64): (1e-5, 1e-5), np.dtype(np.complex64): (1e-5, 1e-5),
                 np.dtype(np.complex128): (1e-5, 1e-5), float: (1e-5, 1e-5)},
}


def resolved_backend(backend: str | None = None) -> str:
    """The backend ``frame.jit(fn, backend=backend)`` compiles for: ``backend``, else
    the jit's default (the test setting's: FRAME_BACKEND, else openvino when installed)."""
    if backend is not None:
        return backend
    from frame.backends import default_backend_name
    return default_backend_name()


# -- comparing values -------------------------------------------------------------------------

def assert_gradients_close(native, jitted, what: str = "") -> None:
    """Same dtype and shape, values within 10x the jit's tolerance for the dtype
    (gradients and trained parameters: every step adds the backend's rounding)."""
    native, jitted = np.asarray(native), np.asarray(jitted)
    assert native.dtype == jitted.dtype and native.shape == jitted.shape, what
    rtol, atol = _TOLERANCE.get(resolved_backend(), _TOLERANCE["cpu"])[native.dtype]
    np.testing.assert_allclose(jitted, native, rtol=rtol * 10, atol=atol * 10, err_msg=what)


def assert_grad_matches_central_differences(loss, x: np.ndarray, eps: float = 1e-6) -> None:
    """``frame.grad(loss)`` at the float64 array ``x`` against central differences of
    ``loss`` (a function of one frame Tensor returning a 0-d Tensor)."""
    got = frame.grad(loss)(frame.tensor(x)).numpy()
    numeric = np.zeros_like(x)
    for k in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[k] = eps
        numeric[k] = (loss(frame.tensor(x + d)).item() - loss(frame.tensor(x - d)).item()) / (2 * eps)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6)


def _arrays_equal(a: np.ndarray, b: np.ndarray, path: str, backend: str) -> None:
    assert a.dtype == b.dtype, f"{path}: dtype {b.dtype} (jitted) != {a.dtype} (native)"
    assert a.shape == b.shape, f"{path}: shape {b.shape} (jitted) != {a.shape} (native)"
    if a.dtype.kind in "fc":
        rtol, atol = _TOLERANCE.get(backend, _TOLERANCE["cpu"]).get(a.dtype, (1e-5, 1e-6))
        ok = np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        assert ok, f"{path}: values differ\n native: {a!r}\n jitted: {b!r}"
    else:
        assert np.array_equal(a, b), f"{path}: values differ\n native: {a!r}\n jitted: {b!r}"


def _floats_equal(a: float, b: float, path: str, backend: str) -> None:
    if math.isnan(a) or math.isnan(b):
        assert math.isnan(a) and math.isnan(b), f"{path}: {b!r} (jitted) != {a!r} (native)"
        return
    rtol, atol = _TOLERANCE.get(backend, _TOLERANCE["cpu"])[float]
    assert math.isclose(a, b, rel_tol=rtol, abs_tol=atol), f"{path}: {b!r} (jitted) != {a!r} (native)"


def assert_same(native, jitted, path: str = "result", _seen: set | None = None, *,
                backend: str | None = None) -> None:
    """Recursive comparison: same Python types and structure, equal values (floats
    within the bounds of ``backend``, by default the jit's default backend)."""
    backend = resolved_backend(backend)
    seen = set() if _seen is None else _seen
    key = (id(native), id(jitted))
    if key in seen:
        return
    seen.add(key)
    tn, tj = type(native), type(jitted)
    assert tn is tj, f"{path}: type {tj.__name__} (jitted) != {tn.__name__} (native)"
    if isinstance(native, frame.Tensor):  # Tensor, or a subclass such as nn.Parameter
        _arrays_equal(native._data, jitted._data, path, backend)
        assert native.requires_grad == jitted.requires_grad, f"{path}: requires_grad differs"
    elif tn is np.ndarray:
        _arrays_equal(native, jitted, path, backend)
    elif isinstance(native, np.generic):
        _arrays_equal(np.asarray(native), np.asarray(jitted), path, backend)
    elif tn is float:
        _floats_equal(native, jitted, path, backend)
    elif tn is complex:
        _floats_equal(native.real, jitted.real, path + ".real", backend)
        _floats_equal(native.imag, jitted.imag, path + ".imag", backend)
    elif isinstance(native, (tuple, list)):  # namedtuples too (their type was compared)
        assert len(native) == len(jitted), f"{path}: length {len(jitted)} (jitted) != {len(native)} (native)"
        for i, (a, b) in enumerate(zip(native, jitted)):
            assert_same(a, b, f"{path}[{i}]", seen, backend=backend)
    elif tn is dict:
        assert list(native) == list(jitted), f"{path}: keys {list(jitted)} (jitted) != {list(native)} (native)"
        for k in native:
            assert_same(native[k], jitted[k], f"{path}[{k!r}]", seen, backend=backend)
    elif isinstance(native, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type)):
        assert native is jitted, f"{path}: {jitted!r} (jitted) is not {native!r} (native)"
    elif isinstance(native, np.random.Generator):   # no __dict__: compared by its state
        assert_same(native.bit_generator.state, jitted.bit_generator.state,
                    f"{path}.bit_generator.state", seen, backend=backend)
    elif tn is functools.partial:
        assert_same((native.func, native.args, native.keywords),
                    (jitted.func, jitted.args, jitted.keywords), f"{path}.<func, args, keywords>",
                    seen, backend=backend)
    elif hasattr(native, "__dict__") and not isinstance(native, (int, str, bytes)):
        assert_same(vars(native), vars(jitted), f"{path}.__dict__", seen, backend=backend)
    elif _slot_names(tn):
        assert_same(_slot_values(native), _slot_values(jitted), f"{path}.<slots>", seen, backend=backend)
    else:
        assert native == jitted, f"{path}: {jitted!r} (jitted) != {native!r} (native)"


def _slot_names(cls: type) -> list[str]:
    """The ``__slots__`` names of a Python class (empty for builtins)."""
    names = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else [n for n in slots
                                                          if n not in ("__dict__", "__weakref__")]
    return names


def _slot_values(obj) -> dict:
    return {n: getattr(obj, n) for n in _slot_names(type(obj)) if hasattr(obj, n)}


def _reachable(obj, path: str, out: dict[int, str], seen: set[int]) -> None:
    """id -> path of every mutable or tensor object reachable from ``obj``."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (frame.Tensor, np.ndarray, list, dict)) or (
            hasattr(obj, "__dict__") and not isinstance(obj, (type, types.FunctionType, types.ModuleType))):
        out.setdefault(id(obj), path)
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _reachable(v, f"{path}[{i}]", out, seen)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _reachable(v, f"{path}[{k!r}]", out, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.FunctionType, types.ModuleType)):
        for k, v in vars(obj).items():
            _reachable(v, f"{path}.{k}", out, seen)


def _identities(result, inputs) -> list[tuple[str, str | None]]:
    """For each mutable/tensor object in ``result``: (its path, the input path it is, or None)."""
    where: dict[int, str] = {}
    _reachable(inputs, "inputs", where, set())
    found: dict[int, str] = {}
    _reachable(result, "result", found, set())
    return sorted((path, where.get(i)) for i, path in found.items())


def _arrays(obj, path: str, out: list, seen: set[int]) -> None:
    """(path, array) of every Tensor's data and ndarray reachable from ``obj``."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, frame.Tensor):
        out.append((path, obj._data))
    elif isinstance(obj, np.ndarray):
        out.append((path, obj))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _arrays(v, f"{path}[{i}]", out, seen)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _arrays(v, f"{path}[{k!r}]", out, seen)
    elif hasattr(obj, "__dict__") and not isinstance(obj, (type, types.FunctionType, types.ModuleType)):
        for k, v in vars(obj).items():
            _arrays(v, f"{path}.{k}", out, seen)


def _shared_memory(result, inputs) -> list[tuple[str, str]]:
    """Pairs of distinct arrays (by path) that share memory."""
    arrays: list = []
    seen: set[int] = set()
    _arrays(result, "result", arrays, seen)
    _arrays(inputs, "inputs", arrays, seen)
    pairs = []
    for i, (pa, a) in enumerate(arrays):
        for pb, b in arrays[i + 1:]:
            if a is not b and np.shares_memory(a, b):
                pairs.append((pa, pb))
    return sorted(pairs)


# -- running ---------------------------------------------------------------------------------------

def _run(fn, args, kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - compared below
        return None, e


def _run_printing(fn, args, kwargs):
    """``_run``, and what the call printed (``print`` is a graph break: what it
    shows, and in which order, must be the plain function's)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = _run(fn, args, kwargs)
    sys.stdout.write(out.getvalue())
    return result, out.getvalue()


def _copy_inputs(args, kwargs, globals_to_check):
    values = [d.get(name, _ABSENT) for d, name in globals_to_check]
    # (the marker of an absent global stays itself: a copy would be installed as its value)
    return copy.deepcopy((args, kwargs, values), {id(_ABSENT): _ABSENT})


def _install_globals(globals_to_check, values) -> None:
    for (d, name), v in zip(globals_to_check, values):
        if v is _ABSENT:
            d.pop(name, None)
        else:
            d[name] = v


def last_entry(jitted):
    """The cache entry that served the latest call of ``jitted`` (newest first)."""
    entries = jitted._frame_cache.entries
    assert entries, "no cache entry: the call was not intercepted"
    return entries[0]


def graph_count(jitted) -> int:
    """Graphs of the latest call (until ``frame.explain`` exists: 1 if its entry
    is captured and has a graph, else 0)."""
    entry = last_entry(jitted)
    return 0 if entry.native or entry.graph is None else 1


def assert_same_as_eager(fn, *args, globals_to_check=(), captured: bool | None = True,
                         backend: str | None = None, **kwargs):
    """Run ``fn`` natively and jitted on deep copies of the inputs and compare
    everything plain Python code can observe.  Returns the jitted function
    (its ``_frame_cache.entries[0]`` served the call)."""
    pinned, backend = backend, resolved_backend(backend)
    globals_to_check = list(globals_to_check)
    originals = [d.get(name, _ABSENT) for d, name in globals_to_check]
    try:
        n_args, n_kwargs, n_globals = _copy_inputs(args, kwargs, globals_to_check)
        j_args, j_kwargs, j_globals = _copy_inputs(args, kwargs, globals_to_check)

        _install_globals(globals_to_check, n_globals)
        (native, native_exc), native_printed = _run_printing(fn, n_args, n_kwargs)
        native_globals_after = [d.get(name, _ABSENT) for d, name in globals_to_check]

        _install_globals(globals_to_check, j_globals)
        jitted_fn = frame.jit(fn, backend=pinned)  # None: the jit's default, as users call it
        (jitted, jitted_exc), jitted_printed = _run_printing(jitted_fn, j_args, j_kwargs)
        jitted_globals_after = [d.get(name, _ABSENT) for d, name in globals_to_check]
    finally:
        _install_globals(globals_to_check, originals)

    assert jitted_printed == native_printed, \
        f"printed output differs:\n native: {native_printed!r}\n jitted: {jitted_printed!r}"
    if native_exc is not None or jitted_exc is not None:
        assert jitted_exc is not None, f"native raised {native_exc!r}, jitted returned {jitted!r}"
        assert native_exc is not None, f"jitted raised {jitted_exc!r}, native returned {native!r}"
        assert type(jitted_exc) is type(native_exc), \
            f"jitted raised {type(jitted_exc).__name__}, native {type(native_exc).__name__}"
        assert str(jitted_exc) == str(native_exc), \
            f"messages differ:\n native: {native_exc}\n jitted: {jitted_exc}"
        entries = jitted_fn._frame_cache.entries
        if captured is not None and entries:  # no entry: the arguments did not bind
            assert entries[0].native, "an exception must come from a native run"
    else:
        assert_same(native, jitted, backend=backend)
        n_ids = _identities(native, (n_args, n_kwargs, n_globals))
        j_ids = _identities(jitted, (j_args, j_kwargs, j_globals))
        assert n_ids == j_ids, f"results alias inputs differently:\n native: {n_ids}\n jitted: {j_ids}"
        n_mem = _shared_memory(native, (n_args, n_kwargs, n_globals))
        j_mem = _shared_memory(jitted, (j_args, j_kwargs, j_globals))
        assert n_mem == j_mem, f"memory sharing differs:\n native: {n_mem}\n jitted: {j_mem}"
        if captured is not None:
            entry = last_entry(jitted_fn)
            if captured:
                assert not entry.native, f"expected a captured call, it ran natively: {entry.reason}"
            else:
                assert entry.native, "expected a native run, the call was captured"
    assert_same(n_args, j_args, "args after the call", backend=backend)
    assert_same(n_kwargs, j_kwargs, "kwargs after the call", backend=backend)
    for (d, name), a, b in zip(globals_to_check, native_globals_after, jitted_globals_after):
        assert (a is _ABSENT) == (b is _ABSENT), f"global {name!r}: presence differs"
        if a is not _ABSENT:
            assert_same(a, b, f"global {name!r}", backend=backend)
    return jitted_fn


def assert_captured(fn, *args, graphs: int = 1, backend: str | None = None, **kwargs):
    """Call ``frame.jit(fn)`` once; assert the call was captured whole (no native
    entry) into ``graphs`` graphs.  Returns the jitted function."""
    jitted = frame.jit(fn, backend=backend)
    jitted(*args, **kwargs)
    entry = last_entry(jitted)
    assert not entry.native, f"the call ran natively: {entry.reason}"
    assert graph_count(jitted) == graphs, f"{graph_count(jitted)} graphs, expected {graphs}"
    return jitted


# -- counting compiles -------------------------------------------------------------------------------

class CompileCounter:
    """Counters since the last ``reset()`` (Dynamo's CompileCounter): capture
    translations, backend compiles, compilation-cache hits, recompiles, breaks."""

    def reset(self) -> None:
        record.reset()
        capture.reset_caches()
        runtime_compile.clear_cache()

    @property
    def translations(self) -> int:
        return stats().translations

    @property
    def compiles(self) -> int:
        return stats().compiles

    @property
    def cache_hits(self) -> int:
        return stats().cache_hits

    @property
    def recompiles(self) -> int:
        return stats().recompiles

    @property
    def graph_breaks(self) -> dict[str, int]:
        return stats().graph_breaks

    def __repr__(self) -> str:
        return (f"CompileCounter(translations={self.translations}, compiles={self.compiles}, "
                f"recompiles={self.recompiles}, graph_breaks={self.graph_breaks})")


# -- inputs ---------------------------------------------------------------------------------------

def array(shape=(2, 3), dtype="float32", seed: int = 0, positive: bool = False) -> np.ndarray:
    """Deterministic test data: floats in about [-3, 3] (or (0.5, 3.5) when
    ``positive``), ints in [1, 5), bools half true."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        data = rng.uniform(0.5, 3.5, shape) if positive else rng.uniform(-3, 3, shape)
    elif dt.kind in "iu":
        data = rng.integers(1, 5, shape)
    elif dt.kind == "b":
        data = rng.integers(0, 2, shape).astype(bool)
    else:
        raise ValueError(f"no test data for {dt}")
    return np.ascontiguousarray(data.astype(dt))


def normal(shape, seed: int = 0) -> np.ndarray:
    """Standard normal float32 test data (weights- and activation-like)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def tensor(shape=(2, 3), dtype="float32", seed: int = 0, positive: bool = False) -> frame.Tensor:
    return frame.tensor(array(shape, dtype, seed, positive))
