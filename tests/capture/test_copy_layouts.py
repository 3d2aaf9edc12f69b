"""Copies have NumPy's memory order.

Inside a graph a copy is the same value, but NumPy's copy is a new array in an
order of its own (``ndarray.copy()``: C; ``np.copy``, ``np.array``, ``astype``:
K; ``flatten``: a contiguous vector), and layout-sensitive readers
(BLAS products, reductions in memory order, einsum, norms, cumulative sums)
round otherwise on other layouts.  Capture makes every copy op ``copy`` with
its order (frame/ops/layout.py); ``layout_assignment`` turns it into a
relayout into NumPy's strides of the copy, or its input where that has them.
Before, ``X.copy()`` of a Fortran-ordered argument fed the argument itself to
the reader, and ``X @ X.copy().T`` was syrk (op ``gram``) where NumPy runs gemm
on two arrays (found by a random layout fuzz).

The cumulative scans and sort were found by the same fuzz: their kernels made
their results C-ordered, so the layout analysis (which asks the kernel) took
NumPy's Fortran-ordered ``np.cumsum(X.T * 2, axis=0)`` for C-ordered."""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame
from frame.ir import GraphBuilder
from frame.ops.interpreter import evaluate
from frame.ops.layout import numpy_layouts

from .corpus import _setting
from .helpers import assert_same

# expressions that copy an array, then feed the copy to a layout-sensitive reader
FUNCTIONS = {
    "copy_sum": lambda x, w: x.copy().sum(axis=0),
    "transpose_copy_matmul": lambda x, w: x.T.copy() @ x,
    "copy_transposed_gemm": lambda x, w: x @ x.copy().T,
    "copy_gram": lambda x, w: x.copy().T @ x.copy(),
    "copy_of_one_array_gram": lambda x, w: (lambda c: c.T @ c)(x[:, ::2].copy()),
    # orders A and K: a copy is another array (gemm), laid out as NumPy lays it out
    "copy_order_a": lambda x, w: x.copy(order="A").T @ x,
    "copy_order_k": lambda x, w: np.copy(x).T @ x,
    "astype_order_c": lambda x, w: x.astype(np.float32, order="C").sum(axis=1),
    "stack_batched_matmul": lambda x, w: np.stack([x, 2 * x]).transpose(0, 2, 1) @ np.stack([x, x]),
    "copy_cumsum": lambda x, w: np.cumsum(x.T.copy(order="K") * 1.0, axis=0).sum(axis=-1),
    "cumsum_of_transpose": lambda x, w: np.cumsum(x.T * 2, axis=0).sum(axis=1),
    "sort_of_transpose": lambda x, w: np.sort(x.T * 2, axis=0).sum(axis=1),
    "returned_copy": lambda x, w: x.T.copy(),
}


def _layouts(x):
    return {"C": x, "F": np.asfortranarray(x), "reversed": np.ascontiguousarray(x[::-1])[::-1],
            "strided": np.repeat(x, 2, axis=1)[:, ::2]}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_copies_give_numpys_bits_for_every_argument_layout(name):
    """Values within the backend's tolerance under every setting; NumPy's bits
    (and a returned copy's memory order) where the calls run on the cpu
    executable (cpu, default: the cpu tier)."""
    fn = FUNCTIONS[name]
    rng = np.random.default_rng(len(name))
    bitwise = _setting() in ("cpu", "default")
    for shape in ((37, 23), (64, 48)):
        x, w = rng.standard_normal(shape), rng.standard_normal((shape[1], 5))
        capture.reset_caches()
        jitted = frame.jit(fn)
        for a in list(_layouts(x).values()) * 2:   # each layout twice: its executable runs again
            want, got = fn(a, w), jitted(a, w)
            assert_same(want, got)
            if bitwise:
                assert np.array_equal(want, got), f"max difference {np.max(np.abs(want - got))!r}"
                if name == "returned_copy":
                    assert got.strides == want.strides


def test_a_copy_is_not_its_source():
    """A copy written in place leaves its source alone, and a returned copy
    shares no memory with the argument or another result."""
    def fn(x):
        y = x.copy()
        y[0] = 5.0
        z = x * 2
        return x, y, z, z.copy()

    x = np.arange(12.0).reshape(3, 4)
    capture.reset_caches()
    jitted = frame.jit(fn)
    for _ in range(2):
        a, b = x.copy(), x.copy()
        want, got = fn(a), jitted(b)
        assert_same(want, got)
        assert got[0] is b and np.array_equal(b, x)
        assert not np.shares_memory(got[1], b) and not np.shares_memory(got[2], got[3])


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_the_copy_op_lays_out_as_numpy(order):
    """op ``copy``: the reference kernel is NumPy's copy, and the layout analysis
    gives the strides NumPy's copy has, for inputs of any layout."""
    data = np.arange(24.0).reshape(4, 6)
    for a in (data, np.asfortranarray(data), data[:, ::-1], data.T.copy().T, data[::2, ::3]):
        g = GraphBuilder()
        y = g.input("float64", a.shape)
        graph = g.build(g.op("copy", y, order=order))
        want = np.array(a, order=order, copy=True)
        (got,) = evaluate(graph, [a])
        assert np.array_equal(got, want) and got.strides == want.strides
        layout = numpy_layouts(graph, [a])[id(graph.outputs[0])]
        assert layout.strides == want.strides
