"""NumPy's memory layouts (frame/ops/layout.py): the stand-in analysis against
NumPy itself, the interpreter and the cpu executable against NumPy bit for bit
where NumPy's result depends on an intermediate's layout, also for arguments
that are not C-ordered."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import frame
from frame.ir import GraphBuilder
from frame.ops.interpreter import evaluate
from frame.ops.layout import element_strides, numpy_layouts, pinned_inputs, with_strides
from frame.runtime import compile as rc

_VIEWS = {
    "c": lambda a: a,
    "t": lambda a: a.T,
    "cols": lambda a: a[:, 1:4],
    "rows": lambda a: a[::2],
    "rev": lambda a: a[::-1],
    "f": np.asfortranarray,
}


def _graph(shape_a, shape_b, body):
    b = GraphBuilder()
    x = b.input("float64", shape_a)
    y = b.input("float64", shape_b)
    return b.build(body(b, x, y))


@pytest.mark.parametrize("va,vb", list(itertools.product(["c", "t", "f", "rev"], repeat=2)))
def test_elementwise_stand_in_has_numpys_strides(va, vb):
    rng = np.random.default_rng(0)
    a = _VIEWS[va](rng.standard_normal((6, 5)) if va != "t" else rng.standard_normal((5, 6)))
    c = _VIEWS[vb](rng.standard_normal((6, 5)) if vb != "t" else rng.standard_normal((5, 6)))
    g = _graph(a.shape, c.shape, lambda b, x, y: b.op("add", b.op("mul", x, y), x))
    layouts = numpy_layouts(g, [a, c])
    assert element_strides(layouts[id(g.outputs[0])]) == element_strides(a * c + a)


@pytest.mark.parametrize("view", sorted(_VIEWS))
def test_view_and_reduction_stand_ins(view):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((8, 3, 5))
    x = np.asfortranarray(base) if view == "f" else base
    b = GraphBuilder()
    v = b.input("float64", x.shape)
    t = b.op("transpose", v, perm=(2, 0, 1))
    e = b.op("exp", t)
    s = b.op("sum", e, axes=(1,), keepdims=False)
    g = b.build(s)
    layouts = numpy_layouts(g, [x])
    want = np.exp(np.transpose(x, (2, 0, 1)))
    assert element_strides(layouts[id(e)]) == element_strides(want)
    assert element_strides(layouts[id(s)]) == element_strides(want.sum(axis=1))


@pytest.mark.parametrize("strides", [(1, 4), (8, 1), (-5, 1), (5, -1), (0, 1)])
def test_with_strides_copies_into_the_layout(strides):
    x = np.arange(12.0).reshape(3, 4)
    if 0 in strides:
        x = np.broadcast_to(x[:1], (3, 4))
    y = with_strides(x, strides)
    assert element_strides(y) == strides and np.array_equal(x, y)
    assert not np.shares_memory(x, y)


def _rng():
    return np.random.default_rng(2)


# name -> (function of (X, e), X, len(e)); each gave other bits than NumPy before
_ARGUMENT_CASES = {
    "K-ordered gemv, C argument": (lambda X, e: (0.01 * X.T) @ e,
                                   lambda: _rng().standard_normal((3001, 7)), 3001),
    "K-ordered gemv, column-slice argument": (lambda X, e: (0.01 * X.T) @ e,
                                              lambda: _rng().standard_normal((3001, 9))[:, 1:8], 3001),
    "transposed row sums, C argument": (lambda X, e: (X.T * 2).sum(axis=1),
                                        lambda: _rng().standard_normal((3001, 7)), 1),
    "column slice total, C argument": (lambda X, e: X[:, 1:4].sum(),
                                       lambda: _rng().standard_normal((3001, 7)), 1),
    "column slice total, F argument": (lambda X, e: X[:, 1:4].sum(),
                                       lambda: np.asfortranarray(_rng().standard_normal((3001, 7))), 1),
    "exp transposed mean, C argument": (lambda X, e: np.exp(X.T).mean(axis=1),
                                        lambda: _rng().standard_normal((3001, 7)), 1),
    "scaled row sums, F argument": (lambda X, e: (X * 2).sum(axis=1),
                                    lambda: np.asfortranarray(_rng().standard_normal((7, 3001))), 1),
    "scaled row sums, transposed argument": (lambda X, e: (X * 2).sum(axis=1),
                                             lambda: _rng().standard_normal((3001, 7)).T, 1),
    "scaled gemv, F argument": (lambda X, e: (X * 0.5) @ e,
                                lambda: np.asfortranarray(_rng().standard_normal((7, 3001))), 3001),
    "scaled gemv, transposed argument": (lambda X, e: (X * 0.5) @ e,
                                         lambda: _rng().standard_normal((3001, 7)).T, 3001),
}


@pytest.mark.parametrize("name", sorted(_ARGUMENT_CASES))
def test_cpu_is_numpy_for_any_argument_layout(name):
    """The same arrays (views stay views) natively and jitted on the cpu backend,
    twice (a compile, then the cached executable): NumPy's bits."""
    fn, make, n = _ARGUMENT_CASES[name]
    X, e = make(), np.random.default_rng(4).standard_normal(n)
    jitted = frame.jit(fn, backend="cpu")
    for _ in range(2):
        assert np.array_equal(np.asarray(jitted(X, e)), fn(X, e))


def _column_slice_total(b, x):
    n, m = x.type.shape
    return b.op("sum", b.op("slice", x, starts=(0, 1), stops=(n, 4), steps=(1, 1)), axes=(0, 1))


@pytest.mark.parametrize("body,numpy_fn,make", [
    (_column_slice_total, lambda X: X[:, 1:4].sum(), lambda: _rng().standard_normal((3001, 7))),
    (_column_slice_total, lambda X: X[:, 1:4].sum(),
     lambda: np.asfortranarray(_rng().standard_normal((3001, 7)))),
], ids=["C-slice", "F-slice"])
def test_interpreter_is_numpy_for_any_argument_layout(body, numpy_fn, make):
    X = make()
    b = GraphBuilder()
    g = b.build(body(b, b.input("float64", X.shape)))
    assert np.array_equal(evaluate(g, [X])[0], numpy_fn(X))


def test_relayout_in_the_cpu_graph_and_interpreter_agree():
    b = GraphBuilder()
    x = b.input("float64", (301, 7))
    e = b.input("float64", (301,))
    s = b.op("mul", b.op("transpose", x, perm=(1, 0)), b.scalar(0.01, dtype=frame.float64))
    g = b.build(b.op("matmul", s, e))
    exe = rc.compile(g, "cpu")
    assert "k_relayout" in exe.source
    rng = np.random.default_rng(3)
    X, E = rng.standard_normal((301, 7)), rng.standard_normal(301)
    want = (X.T * 0.01) @ E
    assert np.array_equal(exe.run([X, E])[0], want)
    assert np.array_equal(evaluate(g, [X, E])[0], want)
    # an F-ordered argument: NumPy's X.T is then C-ordered; the executable checks
    # the argument's strides and runs the interpreter, which follows the layouts
    F = np.asfortranarray(X)
    assert pinned_inputs(g) == [0]
    assert np.array_equal(exe.run([F, E])[0], (F.T * 0.01) @ E)


def test_all_c_ordered_training_step_gets_no_relayout():
    """The MLP step (forward, autograd's backward, SGD update): nothing to copy."""
    from frame.autograd.backward import build_backward_graph
    b = GraphBuilder()
    x = b.input("float32", (16, 12))
    y = b.input("int64", (16,))
    params, h = [], x
    for i, (n_in, n_out) in enumerate([(12, 8), (8, 3)]):
        w, bias = b.input("float32", (n_out, n_in)), b.input("float32", (n_out,))
        params += [w, bias]
        h = b.op("add", b.op("matmul", h, b.op("transpose", w, perm=(1, 0))), bias)
        if i == 0:
            h = b.op("relu", h)
    g = build_backward_graph(b.build(b.op("cross_entropy", h, y, reduction="mean")), 0,
                             list(range(2, 2 + len(params))))
    exe = rc.compile(g, "cpu")
    assert "relayout" not in exe.source and "run_other_layout" in exe.source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_elementwise_result_is_written_in_the_relayouts_strides(monkeypatch, dtype):
    """``lr * X.T`` read by a matmul: the cpu executable writes the product
    straight into NumPy's (Fortran) strides, so its relayout copies nothing
    (a transposing copy of 64x512 float64 took ~100 us here, against ~6 us for
    the product itself) and the bits are still NumPy's."""
    import frame.ops.layout as layout_module
    copies = []
    real = layout_module.with_strides

    def counting(x, strides):
        copies.append(strides)
        return real(x, strides)
    monkeypatch.setattr(layout_module, "with_strides", counting)

    def step(X, y, w):
        h = 1 / (1 + np.exp(-(X @ w)))
        return w - 0.1 * X.T @ (h - y) / len(y)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((512, 64)).astype(dtype)
    y = (rng.random(512) > 0.5).astype(dtype)
    w = rng.standard_normal(64).astype(dtype)
    jitted = frame.jit(step, backend="cpu")
    for _ in range(3):
        got = jitted(X, y, w)
        np.testing.assert_array_equal(got, step(X, y, w))
    assert copies == []


def test_other_input_layouts_get_executables_of_their_own(monkeypatch):
    """A Fortran-ordered, transposed or sliced argument gets an executable
    compiled for its layout (NumPy's bits, compiled speed); past
    ``MAX_VARIANTS`` layouts the reference interpreter runs the graph."""
    from frame.backends.cpu import codegen
    interpreted = []
    real = codegen.evaluate

    def counting(graph, inputs):
        interpreted.append(1)
        return real(graph, inputs)
    monkeypatch.setattr(codegen, "evaluate", counting)
    monkeypatch.setattr(codegen._LayoutVariants, "MAX_VARIANTS", 1)

    def step(X, y, w):
        h = 1 / (1 + np.exp(-(X @ w)))
        return w - 0.1 * X.T @ (h - y) / len(y)
    rng = np.random.default_rng(1)
    base = rng.standard_normal((64, 512))
    layouts = [np.ascontiguousarray(base.T), np.asfortranarray(base.T), base.T,
               rng.standard_normal((512, 80))[:, 8:72]]
    y = (rng.random(512) > 0.5).astype(np.float64)
    w = rng.standard_normal(64)
    jitted = frame.jit(step, backend="cpu")
    for k, X in enumerate(layouts):
        for _ in range(3):
            np.testing.assert_array_equal(jitted(X, y, w), step(X, y, w))
        # C order: the executable itself; Fortran order: its own executable, which
        # the transposed view (Fortran-ordered too) reuses; the column slice is past
        # MAX_VARIANTS (1): interpreted
        assert bool(interpreted) == (k == 3), (k, len(interpreted))
