"""np.dot's operand copies on executables compiled for other input layouts.

NumPy's dot copies an operand that is reversed or a matrix with gaps before
calling BLAS, where ``@`` runs the strided array through its own loop; capture
marks np.dot's operands (``dot_operand``) and ``layout_assignment`` turns the
marks into relayouts, then removes them.  An argument with other strides (a
reversed vector, a Fortran-ordered matrix) runs an executable compiled again
for its layout (``codegen._LayoutVariants``): that compile starts from the graph
as layout_assignment first got it, marks included (``MARKED_GRAPH``, persisted
with the cpu artifact).  Before, it started from the marked-less graph and ran
``@``'s rule: 1 ulp off NumPy's dot (found by the contraction and sweep helpers
and a random layout fuzz)."""
from __future__ import annotations

import numpy as np
import pytest

import capture
import frame
from frame.backends.cpu import CpuBackend
from frame.hal import CompileOptions
from frame.ir import GraphBuilder
from frame.passes.layout import MARKED_GRAPH
from frame.passes.pipeline import standard_pipeline

from .corpus import _setting
from .helpers import assert_same

FUNCTIONS = {
    "dot_of_vectors": lambda a, b: np.dot(a[0], b[0]),
    "dot_of_reversed_rows": lambda a, b: np.dot(a[::2][::-1], b[0]),
    "tensordot": lambda a, b: np.tensordot(a[::-1], np.abs(b), axes=([1], [1])),
    "inner": lambda a, b: np.inner(a[::-1], b),
    "dot_x_xT": lambda a, b: np.dot(a[::2], a[::2].T),
    # np.linalg.norm is sqrt(dot(x.ravel('K'), x.ravel('K'))): the elements in memory order
    "norm": lambda a, b: np.linalg.norm(a),
    "norm_of_transpose": lambda a, b: np.linalg.norm(a.T * 2),
    "norm_of_slice": lambda a, b: np.linalg.norm(a[::2][::2]),
    "norm_keepdims": lambda a, b: np.linalg.norm(b, keepdims=True),
}


def _layouts(x):
    return {"C": x, "F": np.asfortranarray(x), "reversed": np.ascontiguousarray(x[::-1])[::-1],
            "strided": np.repeat(x, 2, axis=1)[:, ::2]}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_np_dot_bits_for_every_argument_layout(name):
    """Values within the backend's tolerance under every setting; NumPy's bits
    where the calls run on the cpu executable (cpu, default: the cpu tier)."""
    fn = FUNCTIONS[name]
    rng = np.random.default_rng(len(name))
    x, y = rng.standard_normal((12, 41)), rng.standard_normal((12, 41))
    capture.reset_caches()
    jitted = frame.jit(fn)
    bitwise = _setting() in ("cpu", "default")
    for a in _layouts(x).values():
        for b in _layouts(y).values():
            want, got = fn(a, b), jitted(a, b)
            assert_same(want, got)
            if bitwise:
                assert np.array_equal(want, got), f"max difference {np.max(np.abs(want - got))!r}"


def test_the_marked_graph_is_persisted_with_the_cpu_artifact():
    b = GraphBuilder()
    x, y = b.input("float64", (11,)), b.input("float64", (11,))
    graph = b.build(b.op("matmul", b.op("dot_operand", x), b.op("dot_operand", y)))
    backend = CpuBackend()
    for p in standard_pipeline(backend):
        graph = p.run(graph)
    assert MARKED_GRAPH in graph.meta
    options = CompileOptions()
    artifact = backend.serialize(graph, backend.compile(graph, options), options)
    loaded = backend.deserialize(artifact, options)
    xs, ys = np.random.default_rng(0).standard_normal((2, 11))
    for a, c in ((xs, ys), (xs[::-1], ys[::-1])):
        assert np.array_equal(loaded.run([a, c])[0], np.dot(a, c))
