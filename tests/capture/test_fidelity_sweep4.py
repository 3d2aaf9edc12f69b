"""Focused differential tests of the fourth fidelity sweep (task HU,
``test_corpus_suites.py``): what the sweep found, one test per fix."""
from __future__ import annotations

import operator

import numpy as np

import frame
import frame.nn as nn

from .helpers import array, assert_captured, assert_same_as_eager


def _no_break(fn, *args, graphs=1):
    """``frame.explain``: the call is ``graphs`` graphs and no break."""
    out = frame.explain(fn)(*args)
    assert [r.reason for r in out.break_reasons] == []
    assert out.graph_count == graphs


class _Holder:
    def __init__(self):
        self.a = 1


# -- del of an attribute / a global the call set first ---------------------------------------------

def test_attribute_set_then_deleted_on_an_input_object():
    # the object never had ``tmp``: after the call it still has none (the
    # replay deleted an attribute the real object did not have: AttributeError)
    def f(x, obj):
        obj.tmp = x * 2
        del obj.tmp
        return hasattr(obj, "tmp"), x + 1
    assert_same_as_eager(f, array(), _Holder())
    _no_break(f, array(), _Holder())


def test_existing_attribute_reset_then_deleted():
    def f(x, obj):
        obj.a = x
        del obj.a
        return x * 2
    assert_same_as_eager(f, array(), _Holder())


def test_global_set_then_deleted():
    def f(x):
        global _SWEEP4_TMP
        _SWEEP4_TMP = x
        del _SWEEP4_TMP
        return x + 1
    assert_same_as_eager(f, array(), globals_to_check=[(globals(), "_SWEEP4_TMP")])
    assert "_SWEEP4_TMP" not in globals()


# -- slices -----------------------------------------------------------------------------------------

def test_slice_attributes_and_indices():
    def f(x, n):
        s = slice(1, None, 2)
        t = slice(1, n)
        return x[s], s.start, s.stop, s.step, t.stop, t.step, s.indices(len(x)), t.indices(10)
    assert_same_as_eager(f, array((5,)), 3)
    _no_break(f, array((5,)), 3, graphs=0)


# -- with on an instance made in the call -------------------------------------------------------------

class _Scaled:
    def __init__(self, factor):
        self.factor = factor
        self.inside = False

    def __enter__(self):
        self.inside = True
        return self.factor

    def __exit__(self, exc_type, exc, tb):
        self.inside = False
        return exc_type is KeyError


def test_with_on_an_instance_made_in_the_call():
    def f(x):
        cm = _Scaled(3.0)
        with cm as k:
            was = cm.inside
            y = x * k
        return y, was, cm.inside
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_with_on_an_instance_made_in_the_call_suppresses():
    def f(x):
        cm = _Scaled(2.0)
        with cm:
            y = x * 2
            {}["missing"]
        return y, cm.inside
    assert_same_as_eager(f, array(), captured=None)


# -- hash ------------------------------------------------------------------------------------------

def test_hash_of_constant_numbers_and_tuples():
    def f(x):
        return x * 2, hash((1, 2.5, None)), hash(-1), hash(7) == hash(7.0)
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_hash_of_a_str_is_not_folded():
    # a str's hash is salted per process: not a constant of a persisted entry
    def f(x):
        return x * 2, hash("abc")
    out = frame.explain(f, backend="cpu")(array())
    assert any("hash()" in r.reason for r in out.break_reasons)
    assert_same_as_eager(f, array(), captured=None)


# -- integer / bool ops on an input that requires grad but is not a leaf ------------------------------

def _logits():
    frame.manual_seed(0)
    model = nn.Linear(3, 4)
    x = frame.tensor(np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32))
    return model(x)      # requires grad, not a leaf


def test_argmax_after_an_item_break_on_logits_that_require_grad():
    # eager's argmax adds nothing to the logits' autograd record: no break
    def accuracy(logits, labels):
        confidence = logits.max().item()
        pred = logits.argmax(axis=1)
        return (pred == labels).astype(frame.float32).mean(), round(confidence, 4), pred
    labels = frame.tensor(np.array([0, 1, 2, 3, 0]))
    assert_same_as_eager(accuracy, _logits(), labels, captured=None)
    out = frame.explain(accuracy)(_logits(), labels)
    reasons = [r.reason for r in out.break_reasons]
    assert len(reasons) == 2, reasons   # logits.max() (float: eager records it), then .item()
    assert "requires grad but is not a leaf" in reasons[0] and ".item()" in reasons[1]


def test_comparisons_of_logits_that_require_grad_are_captured():
    def f(logits):
        return logits.argmax(), logits.argmin(axis=0), (logits > 0).sum(), logits.shape
    assert_same_as_eager(f, _logits())
    _no_break(f, _logits())


def test_float_op_on_logits_that_require_grad_still_runs_eagerly():
    def f(logits):
        return logits.argmax(), logits * 2
    jitted = frame.jit(f)
    out = jitted(_logits())
    assert out[1].requires_grad and not out[0].requires_grad
    assert_same_as_eager(f, _logits(), captured=None)


# -- a tuple of scalars stored into an array row ---------------------------------------------------------

def _trajectory(x0, v0, n):
    traj = np.zeros((n, 2))
    x, v = x0, v0
    for i in range(n):
        x = x + 0.1 * v
        v = v - 0.1 * x
        traj[i] = (x, v)
    return traj


def test_tuple_of_python_floats_into_a_row():
    assert_same_as_eager(_trajectory, 0.0, 1.0, 4)
    _no_break(_trajectory, 0.0, 1.0, 4)


def test_tuple_of_dynamic_python_floats_into_a_row():
    # a new x0 at every call: after one recompile the floats are graph inputs
    jitted = frame.jit(_trajectory)
    before = frame.stats().recompiles
    for x0 in (0.0, 0.5, 1.5, 2.5):
        got, want = jitted(x0, 1.0, 3), _trajectory(x0, 1.0, 3)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert got.dtype == want.dtype
    assert frame.stats().recompiles - before == 1
    _no_break(_trajectory, 0.7, 1.0, 3)


def _rows_from_elements(a):
    out = np.zeros((3, 2), dtype=np.float32)
    for i in range(3):
        out[i] = (a[i], a[i] * 2)   # NumPy scalars: float64 items cast to float32
    out[0] = [1, 2.5]
    return out


def test_tuple_of_numpy_scalars_into_a_row():
    for a in (np.arange(3, dtype=np.float32), np.linspace(0.1, 0.7, 3)):
        assert_same_as_eager(_rows_from_elements, a)
        _no_break(_rows_from_elements, a)


def test_tuple_of_floats_into_an_int_row_runs_natively():
    # NumPy truncates a float item into an int array: not modelled, the call is still right
    def f(a):
        out = np.zeros((2, 2), dtype=np.int64)
        out[1] = (a[0] * 3.7, 1)
        return out
    assert_same_as_eager(f, np.array([1.5, 2.0]), captured=None)


# -- np.lexsort of a list of keys ----------------------------------------------------------------------

def test_lexsort_of_a_list_of_keys():
    def f(surnames, ages):
        order = np.lexsort([ages, surnames])   # surnames primary, as a tuple of keys
        return order, surnames[order], ages[order]
    s, a = np.array([3, 1, 2, 1, 3]), np.array([30.0, 20.0, 25.0, 10.0, 5.0])
    assert_same_as_eager(f, s, a)
    _no_break(f, s, a)


# -- StopIteration.value of a generator's return ----------------------------------------------------------

def test_generator_return_value_read_from_stopiteration():
    # jitted returned None (the generator's return value was dropped)
    def f(x):
        def gen():
            yield 1
            return x * 3
        g = gen()
        next(g)
        try:
            next(g)
        except StopIteration as e:
            return e.value
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_generator_return_value_via_send_then_bare_stopiteration():
    def f(x):
        def gen():
            yield 1
            return 7
        g = gen()
        next(g)
        out = []
        for _ in range(2):
            try:
                g.send(None)
            except StopIteration as e:
                out.append((e.value, e.args))
        return out, x + 1
    assert_same_as_eager(f, array())


def test_generator_return_value_escapes_as_stopiteration():
    def f(x):
        def gen():
            yield x
            return 5
        g = gen()
        next(g)
        next(g)
    assert_same_as_eager(f, array())


# -- NumPy scalar folds that warn ----------------------------------------------------------------------

def _warnings_of(fn, *args):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(*args)
    return [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def test_numpy_scalar_fold_that_warns_warns_at_every_call_from_the_users_line():
    # the overflow warned once, at trace time, from capture/translator.py
    def f(x):
        big = np.int64(2 ** 62) * np.int64(4)
        return x * 2, big, np.log(np.float64(0.0))
    native = _warnings_of(f, array())
    jitted = frame.jit(f)
    assert _warnings_of(jitted, array()) == native
    assert _warnings_of(jitted, array()) == native   # a cache hit
    assert_same_as_eager(f, array(), captured=None)


# -- np.where of two Python scalars ---------------------------------------------------------------------

def test_where_of_two_python_floats_is_float64():
    # the mask takes no part in the dtype: NumPy's default float64 (jitted: float32)
    def f(x):
        return (np.where(x > 0, 1.0, -1.0), np.where(x > 0, True, 2), np.where(x > 0, 1j, 0),
                np.where(x > 0, x, 0.0))
    for x in (array(), array(dtype="float64"), array(dtype="int64")):
        assert_same_as_eager(f, x)
        _no_break(f, x)


# -- a class's truth value; NumPy scalar types of traced values ------------------------------------------

class _Suppress:
    def __init__(self, *types):
        self.types = types

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return exc_type is not None and issubclass(exc_type, self.types)


def test_exit_testing_the_exception_class_suppresses():
    # `exc_type is not None and ...`: the truth value of a class (was a native run)
    def f(x):
        with _Suppress(KeyError):
            y = x * 2
            {}["missing"]
        return y
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_exit_testing_the_exception_class_lets_others_through():
    def f(x):
        with _Suppress(KeyError):
            raise ValueError("passes")
        return x
    assert_same_as_eager(f, array(), captured=None)


def test_numpy_scalar_types_of_traced_values():
    def f(x):
        s = x.sum()
        return np.float32(s), np.float64(s), np.int64(x.max()), np.float16(x), np.bool_(x[0])
    assert_same_as_eager(f, array(positive=True))
    _no_break(f, array(positive=True))


# -- np.array of a list of traced scalars -----------------------------------------------------------------

def test_array_of_a_list_of_traced_scalars():
    def f(x):
        a, b = x[0], x[1]
        return (np.array([a, b, a * b]), np.array((a, 2.0)), np.asarray([a, 3], dtype=np.float32),
                np.array([x, x * 2]), np.array([x.max(), x.min()], dtype=np.float64))
    for x in (array((3,)), array((3,), dtype="int64")):
        assert_same_as_eager(f, x)
        _no_break(f, x)


def test_array_of_a_ragged_list_raises_natively():
    def f(x):
        return np.array([x, 1.0])
    assert_same_as_eager(f, array((3,)), captured=None)


# -- a missing attribute of a builtin type -------------------------------------------------------------

def test_hasattr_of_a_builtin_type():
    # dataclasses' helpers ask hasattr(type(value), "__dataclass_fields__") of every value
    def f(x):
        return x * 2, hasattr(float, "__dataclass_fields__"), hasattr(tuple, "_fields")
    assert_same_as_eager(f, array())
    _no_break(f, array())


def test_missing_attribute_of_a_builtin_type_raises():
    def f(x):
        return float.missing_attribute
    assert_same_as_eager(f, array(), captured=None)


# -- np.isscalar / np.ndim / np.shape of NumPy scalars -------------------------------------------------

def test_isscalar_ndim_shape_of_numpy_scalars():
    def f(x):
        s = x.sum()
        return (x * 2, np.isscalar(x[0]), np.isscalar(x), np.ndim(x[0]), np.shape(s), np.size(s),
                np.ndim(x), np.isscalar(s))
    assert_same_as_eager(f, array((3,)))
    _no_break(f, array((3,)))


def test_generator_finished_by_a_loop_then_next_raises_a_bare_stopiteration():
    # the loop took the StopIteration holding the return value: a later next() has none
    def f(x):
        def gen():
            yield 1
            return 5
        g = gen()
        out = list(g)
        for _ in g:
            pass
        try:
            g.send(None)
        except StopIteration as e:
            return e.value, e.args, out, x
    assert_same_as_eager(f, array())
    _no_break(f, array(), graphs=0)


# -- bool() of a NumPy scalar read from the frame ----------------------------------------------------------

def test_bool_of_a_numpy_scalar_live_across_a_break():
    # after the int() break v is a NumPy scalar of the resume function's frame:
    # bool(v) returned the np.float32 itself
    def f(x):
        v = x[0]
        return int(v), bool(v), bool(x[1] * 0), operator.truth(v)
    assert_same_as_eager(f, array((4,)), captured=None)


def test_bool_of_a_numpy_scalar_argument():
    def f(x, s):
        return x * 2, bool(s), not s
    for s in (np.float32(0.5), np.float64(0.0), np.int64(3)):
        assert_same_as_eager(f, array(), s)
