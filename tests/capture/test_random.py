"""Random draws under capture (frame.rand/randn/*_like, dropout in training
mode): each draw is a graph input that the compiled entry draws from frame's
generator just before the graph runs, in program order, so a jitted function
returns what the plain function returns for the same seed and leaves the
generator where the plain function leaves it."""
from __future__ import annotations

import numpy as np
import pytest

import frame
import frame.nn as nn
import frame.nn.functional as F

from .helpers import assert_same, resolved_backend


def _run_seeded(fn, args, calls: int):
    frame.manual_seed(1234)
    results = [fn(*args) for _ in range(calls)]
    return results, frame.rand(4).numpy()   # where the generator was left


def assert_same_draws(fn, *args, graphs: int | None = 1, breaks: int = 0, calls: int = 3):
    """Native vs jitted from the same seed over ``calls`` calls (the first a
    translation, the others cache hits): results and the generator's next
    draw; then ``explain``'s graph and break counts."""
    native = _run_seeded(fn, args, calls)
    jitted = _run_seeded(frame.jit(fn), args, calls)
    assert_same(native, jitted, backend=resolved_backend())
    if graphs is not None:
        out = frame.explain(fn)(*args)
        assert (out.graph_count, out.graph_break_count) == (graphs, breaks), out.break_reasons


def x34():
    return frame.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 7)


def test_rand_and_randn():
    def f(x):
        return x + frame.rand(3, 4), x * frame.randn(3, 4), frame.rand((2,), dtype=frame.float64)
    assert_same_draws(f, x34())


def test_like_creators():
    def f(x):
        return frame.rand_like(x) - frame.randn_like(x) + x
    assert_same_draws(f, x34())


def test_dropout_functional_training():
    def f(x):
        return F.dropout(x, 0.4) * 2, F.dropout(x, 0.1, training=True)
    assert_same_draws(f, x34())


def test_dropout_module_and_eval_mode():
    drop = nn.Dropout(0.5)

    def f(x):
        return drop(x) + 1
    assert_same_draws(f, x34())
    drop.eval()
    try:
        assert_same_draws(f, x34())
        frame.manual_seed(0)
        before = frame.rand(3).numpy()
        frame.manual_seed(0)
        frame.jit(f)(x34())   # eval mode draws nothing
        assert np.array_equal(frame.rand(3).numpy(), before)
    finally:
        drop.train()


def test_unused_draw_still_advances_the_generator():
    def f(x):
        frame.rand(5)
        return x + 1
    assert_same_draws(f, x34())


def test_draw_in_a_function_without_tensor_result():
    def f(x):
        frame.randn(2, 2)
        return 3
    assert_same_draws(f, x34(), graphs=None)


def test_draws_on_both_sides_of_a_break():
    def f(x):
        a = frame.rand(3, 4) + x
        print("between")
        b = frame.randn(4) * 2
        return a, b
    assert_same_draws(f, x34(), graphs=2, breaks=1)


def test_draw_order_follows_the_program():
    def f(x):
        u = frame.rand(3, 4)
        n = frame.randn(3, 4)
        return n - u * x, frame.rand(1)
    assert_same_draws(f, x34())


def test_training_step_with_dropout_matches_eager():
    def make():
        frame.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))
        return model, frame.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    rng = np.random.default_rng(0)
    x = frame.tensor(rng.standard_normal((6, 8)).astype(np.float32))
    y = frame.tensor(np.array([0, 1, 2, 1, 0, 2]))

    def train(jit: bool):
        model, opt = make()

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        run = frame.jit(step) if jit else step
        frame.manual_seed(99)
        losses = [float(run(x, y)) for _ in range(4)]
        return losses, [p.numpy().copy() for p in model.parameters()], frame.rand(2).numpy()

    assert_same(train(False), train(True), backend=resolved_backend())
    model, opt = make()

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    out = frame.explain(step)(x, y)
    assert (out.graph_count, out.graph_break_count) == (1, 0), out.break_reasons


def test_manual_seed_inside_breaks_with_its_reason():
    def f(x):
        frame.manual_seed(3)
        return x + frame.rand(3, 4)
    assert_same_draws(f, x34(), graphs=None)
    out = frame.explain(f)(x34())
    assert out.graph_break_count == 1
    assert "random generator" in out.break_reasons[0].reason


def test_export_refuses_a_function_that_draws(tmp_path):
    def f(x):
        return F.dropout(x, 0.5)
    with pytest.raises(frame.ExportError, match="draws random numbers"):
        frame.export(f, x34(), path=str(tmp_path / "m.xml"))
