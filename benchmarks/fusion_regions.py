"""Region fusion, A/B in one process: the MLP 784-256-128-10 training step
(batch 128, float32, softmax cross-entropy, SGD) compiled for the cpu backend
twice -- with ``operator_fusion``'s regions (matmul + epilogue, reduction
roots; ``where`` written with ``out=``), and with the elementwise-only grouping
and kernel-called ``where`` that the pass and codegen had before -- and the two
executables timed interleaved, round after round.  Both must return the same
bits.  Also prints the fused-node counts per phase (``frame.explain`` and the
report show the same counts).

    python benchmarks/fusion_regions.py [--rounds 15] [--number 50] [--blas-threads 1]

The graph is built with GraphBuilder and ``build_backward_graph`` (what
``frame.jit`` captures from ``loss.backward(); opt.step()`` has the same
shape), so the comparison involves neither capture nor guards.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--rounds", type=int, default=15)
ap.add_argument("--number", type=int, default=50, help="steps per candidate per round")
ap.add_argument("--blas-threads", type=int, default=None)
ARGS = ap.parse_args() if __name__ == "__main__" else None
if ARGS is not None and ARGS.blas_threads:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.blas_threads)

os.environ.setdefault("FRAME_CACHE", "0")   # both variants compiled here, none loaded
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import interleaved_samples, show_steps  # noqa: E402
from _mlp_numpy import BATCH, LR, SIZES, make_data  # noqa: E402


def train_step_graph():
    """Inputs x, y, W1, b1, W2, b2, W3, b3 (PyTorch layout); outputs the loss
    and the six updated parameters."""
    import frame  # noqa: F401  (registers ops)
    from frame.autograd.backward import build_backward_graph
    from frame.ir import GraphBuilder
    b = GraphBuilder()
    x = b.input("float32", (BATCH, SIZES[0]))
    y = b.input("int64", (BATCH,))
    params, h = [], x
    for i, (n_in, n_out) in enumerate(zip(SIZES, SIZES[1:])):
        w, bias = b.input("float32", (n_out, n_in)), b.input("float32", (n_out,))
        params += [w, bias]
        h = b.op("add", b.op("matmul", h, b.op("transpose", w, perm=(1, 0))), bias)
        if i < len(SIZES) - 2:
            h = b.op("relu", h)
    loss = b.op("cross_entropy", h, y, reduction="mean")
    forward = b.build(loss)
    g = build_backward_graph(forward, 0, list(range(2, 2 + len(params))))
    gb = GraphBuilder(g)
    grads, ins = g.outputs[1:], g.inputs[2:]
    lr = gb.scalar(LR, dtype=frame.float32)
    updated = [gb.op("sub", p, gb.op("mul", d, lr)) for p, d in zip(ins, grads)]
    g.set_outputs([g.outputs[0]] + updated)
    return g


@contextlib.contextmanager
def elementwise_only():
    """The grouping and the codegen of before regions: no matmul heads, no
    reduction roots, ``where`` through its reference kernel, cross_entropy and
    softmax each through their own."""
    from frame.backends.cpu import codegen, lowerings
    from frame.passes import fusion
    saved = fusion.HEAD_OPS, fusion.REDUCTION_ROOTS
    pairs = codegen._softmax_xent_pairs
    codegen._softmax_xent_pairs = lambda graph: {}
    lowerings.out_lowering(train_step_graph().nodes[0])  # builds the table
    table = lowerings._TABLE
    where = table.pop("where")
    fusion.HEAD_OPS = fusion.REDUCTION_ROOTS = frozenset()
    try:
        yield
    finally:
        fusion.HEAD_OPS, fusion.REDUCTION_ROOTS = saved
        table["where"] = where
        codegen._softmax_xent_pairs = pairs


def train_step_inputs() -> list[np.ndarray]:
    """The inputs of ``train_step_graph``: a batch, its labels and the six parameters."""
    rng = np.random.default_rng(1)
    x, y = make_data()
    params = []
    for n_in, n_out in zip(SIZES, SIZES[1:]):
        params += [rng.uniform(-0.05, 0.05, (n_out, n_in)).astype(np.float32),
                   rng.uniform(-0.05, 0.05, n_out).astype(np.float32)]
    return [x, y] + params


def main(args) -> None:
    from frame.passes import fusion_summary
    from frame.runtime import compile as rc
    graph = train_step_graph()
    inputs = train_step_inputs()
    print(f"fused nodes (regions): {fusion_summary(graph)}")
    regions = rc.compile(graph, "cpu")
    rc.clear_cache()
    with elementwise_only():
        print(f"fused nodes (elementwise-only): {fusion_summary(graph)}")
        before = rc.compile(graph, "cpu")
    rc.clear_cache()
    a, b = regions.run(inputs), before.run(inputs)
    same = all(np.array_equal(p, q) and p.dtype == q.dtype for p, q in zip(a, b))
    print(f"same bits: {same}; loss {float(a[0]):.6f}")
    cands = {"elementwise-only (before)": lambda: before.run(inputs),
             "regions": lambda: regions.run(inputs)}
    samples = interleaved_samples(cands, args.number, args.rounds, warmup=20)
    print(f"load: {os.getloadavg()}; {args.rounds} rounds x {args.number} steps, ms/step")
    show_steps(samples, 'elementwise-only (before)', 28)


def parts(number: int = 2000) -> None:
    """The two kernels regions changed, alone, on the step's shapes (best of 7)."""
    import timeit
    from frame.ops.nn import _cross_entropy_kernel, _softmax_kernel, softmax_cross_entropy
    rng = np.random.default_rng(0)
    h = rng.standard_normal((BATCH, SIZES[1])).astype(np.float32)
    g = rng.standard_normal((BATCH, SIZES[1])).astype(np.float32)
    zero, out, mask = np.zeros((), np.float32), np.empty_like(g), np.empty(g.shape, bool)
    logits, labels = rng.standard_normal((BATCH, SIZES[-1])).astype(np.float32), make_data()[1]

    def where_kernel():
        np.greater(h, zero, out=mask)
        return np.where(mask, g, zero)

    def where_out():   # what the cpu codegen emits: a bit select into out
        np.greater(h, zero, out=mask)
        o, zb = out.view(np.uint32), zero.view(np.uint32)
        np.bitwise_xor(g.view(np.uint32), zb, out=o)
        np.multiply(o, mask, out=o)
        np.bitwise_xor(o, zb, out=o)

    def two_kernels():
        _cross_entropy_kernel((logits, labels), {"reduction": "mean"})
        _softmax_kernel((logits,), {"axis": 1})

    def shared():
        softmax_cross_entropy(logits, labels, "mean")

    for name, fn in (("relu gradient 128x256: where kernel", where_kernel),
                     ("relu gradient 128x256: bit select out=", where_out),
                     ("cross_entropy + softmax 128x10: two kernels", two_kernels),
                     ("cross_entropy + softmax 128x10: shared", shared)):
        best = min(timeit.repeat(fn, number=number, repeat=7)) / number
        print(f"  {name:<46} {best * 1e6:8.1f} us")


if __name__ == "__main__":
    main(ARGS)
    parts()
