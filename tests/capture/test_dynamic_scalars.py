"""Automatic dynamic Python scalars (issue 15, item 9) and break locations at
the user's line (item 10).

A Python int/float that changes between calls (a learning rate, a counter, a
temperature) is guarded by value only where the trace uses its value; after
such a guard fails, the next translation passes it to the graph as a 0-d
input of NEP 50's weak dtype, so later calls hit the cache.  Every call is
compared with the plain function (``assert_same_as_eager``: types, values,
dtypes)."""
from __future__ import annotations

import json
import logging
import math

import numpy as np
import pytest

import frame
from capture.jit import CACHE_LIMIT

from ._other_module import helper_that_prints
from .helpers import array, assert_same_as_eager, tensor

LR = 0.1


def sgd_step(w, g, lr):
    return w - lr * g


def test_learning_rate_changing_every_call_recompiles_once(compile_counter):
    w, g = tensor((4, 3)), tensor((4, 3), seed=1)
    recompiles = []
    for i in range(8):
        lr = 0.1 * 0.9 ** i
        jitted = assert_same_as_eager(sgd_step, w, g, lr)
        recompiles.append(compile_counter.recompiles)
        assert jitted(w, g, lr).dtype == frame.float32   # float32 * Python float stays float32
    assert recompiles == [0, 1, 1, 1, 1, 1, 1, 1]   # only the second call translated again
    assert compile_counter.translations == 2
    assert compile_counter.graph_breaks == {}


def test_explain_and_report_count_no_recompile_after_the_second_call(compile_counter):
    f = frame.jit(sgd_step, backend="cpu")
    w, g = tensor(), tensor(seed=1)
    f(w, g, 0.5)
    f(w, g, 0.25)
    before = frame.stats().recompiles
    for lr in (0.125, 0.3, 1e-3, 7.0):
        got = f(w, g, lr)
        np.testing.assert_array_equal(got.numpy(), sgd_step(w, g, lr).numpy())
    assert frame.stats().recompiles == before
    out = frame.explain(f)(w, g, 0.7)
    assert out.graph_count == 1 and out.graph_break_count == 0


def test_nep50_weak_dtypes_of_a_dynamic_scalar():
    def f(x, s):
        return x * s, x + s, x / s
    for x in (array(dtype="float16"), array(dtype="float64"), array(dtype="int32"),
              tensor(dtype="float16"), tensor(dtype="int64")):
        for s in (2.5, 3.0, -1.5):
            assert_same_as_eager(f, x, s)
        for s in (2, 7):
            assert_same_as_eager(f, x, s)


def test_int_out_of_range_for_the_tensor_dtype_raises_as_plain():
    def f(x, n):
        return x + n
    x = frame.tensor(np.arange(4, dtype=np.int32))
    for n in (1, 2, 3, 2 ** 40, 5, -2 ** 40, 7):
        assert_same_as_eager(f, x, n)


def test_python_arithmetic_on_scalars_is_recomputed_by_the_entry(compile_counter):
    def schedule(x, step, base_lr):
        warm = min(1.0, (step + 1) / 10)
        lr = base_lr * warm * 0.5 * (1 + math.cos(math.pi * step / 100))
        return x * lr, lr, step + 1
    x = tensor()
    for step in range(12):
        assert_same_as_eager(schedule, x, step, 0.1)
    assert compile_counter.recompiles == 1


def test_a_comparison_guards_its_outcome_not_the_value(compile_counter):
    def f(x, step, warmup):
        if step < warmup:
            return x * (step / warmup)
        return x * 2.0
    x = tensor()
    for step in range(8):
        assert_same_as_eager(f, x, step, 4)
    # the second call makes step dynamic; the outcome flips once (step 4)
    assert compile_counter.recompiles == 2


def test_a_value_deciding_a_shape_stays_guarded(compile_counter):
    def f(x, n):
        return x.reshape(n, -1) * n
    x = tensor((4, 6))
    for n in (1, 2, 3, 4, 2, 3):
        assert_same_as_eager(f, x, n)
    assert compile_counter.translations == 4   # one per distinct n, re-used after


def test_attributes_items_globals_and_cells_become_dynamic(compile_counter):
    class Opt:
        def __init__(self, lr):
            self.lr = lr
            self.param_groups = [{"lr": lr}]

    def by_attr(w, g, opt):
        return w - opt.lr * g

    def by_item(w, g, opt):
        return w - opt.param_groups[0]["lr"] * g

    def by_global(w, g):
        return w - LR * g

    def make_closure(scale):
        def by_cell(w):
            return w * scale
        return by_cell

    w, g = tensor(), tensor(seed=1)
    global LR
    for lr in (0.1, 0.2, 0.3, 0.4):
        assert_same_as_eager(by_attr, w, g, Opt(lr))
        assert_same_as_eager(by_item, w, g, Opt(lr))
        LR = lr
        assert_same_as_eager(by_global, w, g)
        assert_same_as_eager(make_closure(lr), w)
    LR = 0.1
    assert compile_counter.recompiles == 4   # one per function, at its second call


def test_counter_attribute_updated_every_call(compile_counter):
    class Model:
        def __init__(self):
            self.steps = 0
            self.scale = 1.0

        def forward(self, x):
            self.steps += 1
            self.scale = self.scale * 0.5
            return x * self.scale + self.steps

    m_native, m_jit = Model(), Model()
    f = frame.jit(m_jit.forward, backend="cpu")
    x = tensor()
    for _ in range(6):
        want, got = m_native.forward(x), f(x)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        assert (m_jit.steps, m_jit.scale) == (m_native.steps, m_native.scale)
        assert type(m_jit.steps) is int and type(m_jit.scale) is float
    assert compile_counter.recompiles == 1


def test_bools_never_become_dynamic(compile_counter):
    def f(x, flag):
        return x * flag
    x = tensor()
    for flag in (True, False, True, False):
        assert_same_as_eager(f, x, flag)
    assert compile_counter.translations == 2   # one per value, each a constant of its graph


def test_item_fed_back_into_math(compile_counter):
    def f(x, prev_loss):
        loss = (x * prev_loss).mean()
        return loss, x - 0.1 * loss
    x = tensor()
    prev = 1.0
    for _ in range(5):
        assert_same_as_eager(f, x, prev)
        prev = float(f(x, prev)[0].item())
    assert compile_counter.recompiles == 1


def test_switched_off_by_config(compile_counter):
    w, g = tensor(), tensor(seed=1)
    with frame.config.override(dynamic_scalars=False):
        for lr in (0.1, 0.2, 0.3):
            assert_same_as_eager(sgd_step, w, g, lr)
    assert compile_counter.translations == 3


def test_dynamic_scalar_on_openvino_keeps_float32():
    """The graph input has the tensor's dtype: no float64 node for OpenVINO."""
    f = frame.jit(sgd_step, backend="openvino")
    w, g = tensor(), tensor(seed=1)
    for lr in (0.1, 0.2, 0.3):
        got = f(w, g, lr)
        want = sgd_step(w, g, lr)
        assert got.dtype == want.dtype == frame.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    graph = f._frame_cache.entries[0].graph
    assert all(v.type.dtype == frame.float32 for v in graph.inputs)


# -- messages name the user's variable and line ---------------------------------------------------

def test_recompile_message_names_the_variable_and_the_line(caplog):
    f = frame.jit(sgd_step, backend="cpu")
    w, g = tensor(), tensor(seed=1)
    with caplog.at_level(logging.INFO, logger="frame.recompiles"):
        f(w, g, 0.1)
        f(w, g, 0.2)
    (record,) = caplog.records
    message = record.getMessage()
    line = sgd_step.__code__.co_firstlineno + 1
    assert f"lr == 0.1 (used at test_dynamic_scalars.py:{line})" in message
    assert "lr becomes a graph input" in message


def test_attribute_path_is_named_as_the_user_writes_it(caplog):
    class Opt:
        def __init__(self, lr):
            self.param_groups = [{"lr": lr}]

    def f(w, opt):
        return w.reshape(opt.param_groups[0]["lr"], -1)

    jitted = frame.jit(f, backend="cpu")
    with caplog.at_level(logging.INFO, logger="frame.recompiles"):
        jitted(tensor((2, 6)), Opt(2))
        jitted(tensor((2, 6)), Opt(3))
    message = caplog.records[-1].getMessage()
    assert "opt.param_groups[0]['lr'] == 2 (used at test_dynamic_scalars.py:" in message


def combine(x, n, _):
    return x.reshape(n, -1) + n


def test_limit_message_names_the_user_variable_not_the_resume_slot(caplog):
    def f(x, n):
        y = x * 2
        return combine(y, n, print("step"))   # a break: y and n are the resume function's stack

    jitted = frame.jit(f, backend="cpu")
    x = tensor((8, 9, 10, 7))
    with caplog.at_level(logging.INFO, logger="frame"):
        for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10):
            got = jitted(x, n)
            np.testing.assert_array_equal(got.numpy(), f(x, n).numpy())
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "recompile limit" in text
    assert "_resume_stack" not in text
    assert "n == " in text and "used at test_dynamic_scalars.py:" in text


# -- item 10: breaks at the user's line ---------------------------------------------------------

def _line_of(fn, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_break_inside_library_code_is_reported_at_the_users_call(caplog):
    def dump(x, meta):
        y = x * 2
        s = json.dumps(meta)
        return y + 1, s

    assert_same_as_eager(dump, tensor(), {"lr": 0.1, "steps": [1, 2]})
    out = frame.explain(dump, backend="cpu")(tensor(), {"lr": 0.1, "steps": [1, 2]})
    assert out.graph_break_count >= 1
    reason = out.break_reasons[0]
    assert reason.location == f"test_dynamic_scalars.py:{_line_of(dump, 'json.dumps')}"
    assert reason.detail.startswith("encoder.py:") or reason.detail.startswith("__init__.py:")
    assert f"at test_dynamic_scalars.py:{_line_of(dump, 'json.dumps')} (in " in str(out)


def test_break_in_a_helper_of_another_module_is_at_the_call():
    def f(x):
        return helper_that_prints(x * 2) + 1

    out = frame.explain(f, backend="cpu")(tensor())
    reason = out.break_reasons[0]
    assert reason.location == f"test_dynamic_scalars.py:{_line_of(f, 'helper_that_prints(')}"
    assert reason.detail.startswith("_other_module.py:")


def test_hint_fits_what_consumes_the_value():
    def printed(x):
        y = x * 2
        print(str(float(y.sum())))
        return y

    def condition(x):
        if x.sum() > 0:
            return x * 2
        return x

    def formatted(x):
        return f"{x * 2}"

    def item(x):
        return x * (x.sum().item() + 1.0)

    hints = {}
    for fn in (printed, condition, formatted, item):
        out = frame.explain(fn, backend="cpu")(tensor())
        hints[fn.__name__] = out.break_reasons[0].hint
    assert "float(t)" in hints["printed"] and "condition" not in hints["printed"]
    assert "frame.where" in hints["condition"]
    assert "format" in hints["formatted"]
    assert ".item()" in hints["item"]


def test_warn_line_names_the_users_line_and_the_library_frame(caplog):
    def dump_meta(x, meta):
        y = x * 2
        s = json.dumps(meta)
        return y + 1, s

    with caplog.at_level(logging.WARNING, logger="frame.capture"):
        frame.jit(dump_meta, backend="cpu")(tensor(), {"a": 1})
    (record,) = [r for r in caplog.records if "dump_meta" in r.getMessage()]
    message = record.getMessage()
    where = f"test_dynamic_scalars.py:{_line_of(dump_meta, 'json.dumps')} (in "
    assert f"at {where}" in message
    assert "encoder.py:" in message or "__init__.py:" in message
    # frame.report()'s per-site counts name the same place
    assert any(where in loc for _, loc in frame.stats().graph_break_sites)


def test_a_scalar_accumulated_in_a_long_loop_stays_correct():
    def decay(x, lr):
        for _ in range(300):
            lr = lr * 0.99
        return x * lr, lr
    for lr in (0.1, 0.2, 0.3):
        assert_same_as_eager(decay, tensor(), lr)


# -- a scalar operation that raises, its result unused ------------------------------------------
# ``t = 1.0 / s`` of a scalar whose value is not guarded: the entry evaluates it (and runs
# the plain function, which raises) even when nothing uses ``t``; the raise was lost.

def unused_reciprocal(a, s):
    t = 1.0 / s
    return a * 2


def unused_floor_division(a, s):
    s //= s * s
    return a + 1


def unused_modulo(a, n):
    r = 10 % n
    return a


def unused_negative_power(a, s):
    t = s ** -1
    return a


def unused_log(a, s):
    t = math.log(s)
    return a


def unused_int_of_ratio(a, s):
    k = int(s / 0.5)
    return a - 1


def used_reciprocal(a, s):
    return a * (1.0 / s)


@pytest.mark.parametrize("fn", [unused_reciprocal, unused_floor_division, unused_modulo,
                                unused_negative_power, unused_log, unused_int_of_ratio,
                                used_reciprocal], ids=lambda f: f.__name__)
def test_scalar_operation_that_raises_is_not_dropped(fn):
    a = array((2, 3))
    as_int = fn is unused_modulo
    for s in (2.0, 3.0, 0.5, 0.0, -1.0, 4.0):
        assert_same_as_eager(fn, a, int(s) if as_int else s, captured=None)
