"""Guards and the code cache, counted (Dynamo's CompileCounter): a call whose
inputs satisfy an entry's guards translates nothing and compiles nothing; each
new shape, dtype, specialised scalar or global value adds exactly one entry;
past the limit (8) one WARN and native execution; each recompile says which
guard failed (logger ``frame.recompiles``)."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import capture
import frame
from capture.jit import CACHE_LIMIT

from .helpers import array, tensor

SCALE = 2.0


def _add_relu(x, y):
    return (x + y).relu() * 2


def _scaled(x):
    return x * SCALE


def _entries(fn):
    return fn._frame_cache.entries


def test_second_call_with_equal_types_and_shapes_translates_and_compiles_nothing(compile_counter):
    f = frame.jit(_add_relu, backend="cpu")
    f(tensor(), tensor(seed=1))
    assert (compile_counter.translations, compile_counter.compiles) == (1, 1)
    f(tensor(seed=2), tensor(seed=3))  # other values, same types and shapes
    assert (compile_counter.translations, compile_counter.compiles) == (1, 1)
    assert compile_counter.recompiles == 0
    assert len(_entries(f)) == 1


def test_new_shape_makes_exactly_one_entry(compile_counter):
    f = frame.jit(_add_relu, backend="cpu")
    f(tensor((2, 3)), tensor((2, 3)))
    f(tensor((4, 3)), tensor((4, 3)))
    assert (compile_counter.translations, compile_counter.compiles) == (2, 2)
    assert compile_counter.recompiles == 1
    f(tensor((2, 3)), tensor((2, 3)))  # both shapes are cached now
    f(tensor((4, 3)), tensor((4, 3)))
    assert (compile_counter.translations, compile_counter.compiles) == (2, 2)
    assert len(_entries(f)) == 2


def test_new_dtype_makes_exactly_one_entry(compile_counter):
    f = frame.jit(_add_relu, backend="cpu")
    f(tensor(dtype="float32"), tensor(dtype="float32"))
    f(tensor(dtype="float64"), tensor(dtype="float64"))
    f(tensor(dtype="float64"), tensor(dtype="float64"))
    assert (compile_counter.translations, compile_counter.compiles) == (2, 2)


def test_ndarray_instead_of_tensor_makes_a_new_entry(compile_counter):
    f = frame.jit(lambda x: x * 2, backend="cpu")
    assert type(f(tensor())) is frame.Tensor
    assert type(f(array())) is np.ndarray
    assert compile_counter.translations == 2


def test_specialised_python_scalar_makes_one_entry_per_value(compile_counter):
    f = frame.jit(lambda x, n: x * n, backend="cpu")
    x = tensor()
    f(x, 3)
    f(x, 3)
    assert compile_counter.translations == 1
    f(x, 4)
    assert compile_counter.translations == 2
    f(x, 3.0)  # equal value, other type: its own entry
    assert compile_counter.translations == 3
    f(x, True)
    assert compile_counter.translations == 4
    f(x, 4)
    assert compile_counter.translations == 4


def test_numpy_scalar_is_specialised_on_type_and_value(compile_counter):
    f = frame.jit(lambda x, s: x * s, backend="cpu")
    f(array(), np.float32(2.0))
    f(array(), np.float32(2.0))
    f(array(), np.float32(3.0))
    f(array(), np.float64(3.0))
    assert compile_counter.translations == 3


def test_global_value_change_makes_one_entry(compile_counter):
    global SCALE
    f = frame.jit(_scaled, backend="cpu")
    x = tensor()
    try:
        first = f(x)
        SCALE = 5.0
        second = f(x)
        f(x)
    finally:
        SCALE = 2.0
    assert compile_counter.translations == 2
    np.testing.assert_allclose(second.numpy(), first.numpy() * 2.5, rtol=1e-6)


def test_redefined_global_function_makes_one_entry(compile_counter):
    ns = {"frame": frame}
    exec("def act(x):\n    return frame.relu(x)\n"  # noqa: S102 - a fresh module-like namespace
         "def f(x):\n    return act(x) * 2\n", ns)
    f = frame.jit(ns["f"], backend="cpu")
    x = tensor()
    f(x)
    exec("def act(x):\n    return -x\n", ns)  # noqa: S102
    out = f(x)
    np.testing.assert_allclose(out.numpy(), -2 * x.numpy(), rtol=1e-6)
    assert compile_counter.translations == 2


def test_flag_and_none_arguments(compile_counter):
    f = frame.jit(lambda x, b=None, train=False: (x + b if b is not None else x) * (2 if train else 1),
                  backend="cpu")
    x = tensor()
    f(x)
    f(x, None, False)   # the same as the defaults
    assert compile_counter.translations == 1
    f(x, tensor(seed=1))
    f(x, train=True)
    assert compile_counter.translations == 3


def test_requires_grad_flag_is_guarded(compile_counter):
    f = frame.jit(lambda x: x * 2, backend="cpu")
    f(tensor())
    f(frame.tensor(array(), requires_grad=True))
    assert compile_counter.translations == 2


def test_container_length_and_dict_keys_are_guarded(compile_counter):
    f = frame.jit(lambda xs, d: sum(xs) + len(d), backend="cpu")
    f([tensor(), tensor()], {"a": 1})
    f([tensor(), tensor()], {"a": 1})
    assert compile_counter.translations == 1
    f([tensor(), tensor(), tensor()], {"a": 1})
    f([tensor(), tensor()], {"b": 1})
    assert compile_counter.translations == 3


def test_attribute_tensor_shape_is_guarded(compile_counter):
    class Layer:
        def __init__(self, n):
            self.w = tensor((3, n))

        def __call__(self, x):
            return x @ self.w

    f = frame.jit(lambda layer, x: layer(x), backend="cpu")
    f(Layer(2), tensor((1, 3)))
    f(Layer(2), tensor((1, 3)))  # another object of the same class, same shapes
    assert compile_counter.translations == 1
    out = f(Layer(5), tensor((1, 3)))
    assert out.shape == (1, 5)
    assert compile_counter.translations == 2


def test_defaults_change_is_guarded(compile_counter):
    def f(x, scale=2.0):
        return x * scale
    g = frame.jit(f, backend="cpu")
    x = tensor()
    g(x)
    f.__defaults__ = (3.0,)
    np.testing.assert_allclose(g(x).numpy(), x.numpy() * 3.0, rtol=1e-6)
    assert compile_counter.translations == 2


def test_keyword_default_changed_in_place_is_guarded(compile_counter):
    """``__kwdefaults__`` is a dict: a default changed in it (not the dict
    replaced) must not serve the old default's entry, in the jitted
    function or in a function it calls."""
    def helper(x, *, shift=0.0):
        return x + shift

    def f(x, *, scale=2.0, act="relu"):
        y = helper(x * scale)
        return y.relu() if act == "relu" else y.tanh()
    g = frame.jit(f, backend="cpu")
    x = tensor()
    g(x)
    f.__kwdefaults__["scale"] = 3.0
    np.testing.assert_allclose(g(x).numpy(), np.maximum(x.numpy() * 3.0, 0), rtol=1e-6)
    f.__kwdefaults__["act"] = "tanh"
    np.testing.assert_allclose(g(x).numpy(), np.tanh(x.numpy() * 3.0), rtol=1e-6)
    helper.__kwdefaults__["shift"] = 1.0
    np.testing.assert_allclose(g(x).numpy(), np.tanh(x.numpy() * 3.0 + 1.0), rtol=1e-6)
    assert compile_counter.translations == 4
    g(x)  # the same defaults again: served from the cache
    assert compile_counter.translations == 4


@pytest.fixture
def static_scalars():
    """Python scalars stay constants of the graph (no dynamic scalars): what
    these tests count are recompiles on a value guard."""
    with frame.config.override(dynamic_scalars=False):
        yield


def test_two_wrappers_of_one_function_share_the_cache(compile_counter):
    frame.jit(_add_relu, backend="cpu")(tensor(), tensor())
    frame.jit(_add_relu, backend="cpu")(tensor(), tensor())
    assert compile_counter.translations == 1


def test_full_graph_wrapper_has_its_own_cache(compile_counter):
    frame.jit(_add_relu, backend="cpu")(tensor(), tensor())
    frame.jit(_add_relu, backend="cpu", full_graph=True)(tensor(), tensor())
    assert compile_counter.translations == 2
    assert compile_counter.compiles == 1  # the same graph: a compilation-cache hit
    assert compile_counter.cache_hits == 1


def test_equal_graphs_of_different_functions_compile_once(compile_counter):
    frame.jit(lambda a, b: (a + b).relu() * 2, backend="cpu")(tensor(), tensor())
    frame.jit(lambda p, q: (p + q).relu() * 2, backend="cpu")(tensor(), tensor())
    assert (compile_counter.translations, compile_counter.compiles) == (2, 1)


def test_recompile_limit_warns_once_then_runs_natively(compile_counter, caplog, static_scalars):
    f = frame.jit(lambda x, n: x * n, backend="cpu")
    x = tensor()
    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        for n in range(CACHE_LIMIT):
            f(x, n)
        assert compile_counter.translations == CACHE_LIMIT
        assert not caplog.records
        out = f(x, 100)            # one too many
        again = f(x, 101)
    np.testing.assert_allclose(out.numpy(), x.numpy() * 100, rtol=1e-6)
    np.testing.assert_allclose(again.numpy(), x.numpy() * 101, rtol=1e-6)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "recompile limit (8)" in warnings[0].getMessage()
    assert compile_counter.translations == CACHE_LIMIT
    assert compile_counter.graph_breaks == {"recompile_limit": 1}
    f(x, 3)  # cached entries still serve
    assert compile_counter.translations == CACHE_LIMIT


def test_recompile_limit_under_full_graph_raises(compile_counter, static_scalars):
    f = frame.jit(lambda x, n: x * n, backend="cpu", full_graph=True)
    for n in range(CACHE_LIMIT):
        f(tensor(), n)
    with pytest.raises(frame.GraphBreakError, match="recompile_limit"):
        f(tensor(), 99)


def test_recompile_log_names_the_failing_guard(compile_counter, caplog):
    f = frame.jit(_add_relu, backend="cpu")
    with caplog.at_level(logging.INFO, logger="frame.recompiles"):
        f(tensor((2, 3)), tensor((2, 3)))
        assert not caplog.records
        f(tensor((5, 3)), tensor((5, 3)))
    (record,) = caplog.records
    message = record.getMessage()
    assert "_add_relu" in message
    assert "L['x']: Tensor float32[2, 3]" in message


def test_recompile_log_for_a_scalar_guard(compile_counter, caplog, static_scalars):
    f = frame.jit(lambda x, n: x * n, backend="cpu")
    with caplog.at_level(logging.INFO, logger="frame.recompiles"):
        f(tensor(), 2)
        f(tensor(), 3)
    # the user's variable and the line that used its value
    assert "n == 2 (used at test_guards.py:" in caplog.records[-1].getMessage()


def test_entry_guards_describe_the_inputs(compile_counter):
    f = frame.jit(lambda x, n, flag: x * n if flag else x, backend="cpu")
    f(tensor((2, 3)), 4, True)
    texts = [g.text for g in _entries(f)[0].guards]
    assert "L['x']: Tensor float32[2, 3]" in texts
    assert any(t.startswith("n == 4 (used at test_guards.py:") for t in texts)   # where it is used
    assert "L['n']: int" in texts
    assert "L['flag'] is True" in texts


def test_generated_entry_is_lean(compile_counter):
    f = frame.jit(_add_relu, backend="cpu")
    f(tensor((4,)), tensor((4,)))
    src = _entries(f)[0].source
    assert src.count("__run(") == 1
    assert src.count("if not (") == 1       # one guard condition
    assert len(src.splitlines()) <= 14


def test_reset_caches_forgets_entries(compile_counter):
    f = frame.jit(_add_relu, backend="cpu")
    f(tensor(), tensor())
    capture.reset_caches()
    f(tensor(), tensor())
    assert compile_counter.translations == 2
    assert compile_counter.compiles == 1  # the executable is still in the compilation cache


def test_nan_scalar_does_not_recompile(compile_counter):
    f = frame.jit(lambda x, s: x + s, backend="cpu")
    f(tensor(), float("nan"))
    f(tensor(), float("nan"))
    f(tensor(), np.float32("nan"))
    f(tensor(), np.float32("nan"))
    assert compile_counter.translations == 2


def test_parameter_subclass_is_guarded_by_its_type(compile_counter):
    f = frame.jit(lambda w, x: x @ w, backend="cpu")
    f(frame.nn.Parameter(tensor((3, 2))), tensor((1, 3)))
    f(frame.nn.Parameter(tensor((3, 2), seed=1)), tensor((1, 3)))
    assert compile_counter.translations == 1
    f(tensor((3, 2)), tensor((1, 3)))
    assert compile_counter.translations == 2


def test_infinite_scalar_is_guarded_without_recompiling(compile_counter):
    f = frame.jit(lambda x, s: frame.minimum(x, s), backend="cpu")
    f(tensor(), float("inf"))
    f(tensor(), float("inf"))
    assert compile_counter.translations == 1
    f(tensor(), float("-inf"))
    assert compile_counter.translations == 2
