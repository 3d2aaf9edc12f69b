"""NumPy's layouts on the all-C-ordered path, A/B in one process: the MLP
784-256-128-10 training step (``fusion_regions.train_step_graph``) compiled for
the cpu backend as now -- ``layout_assignment`` inserting relayouts (none in
this graph) and the generated code checking the strides of the inputs whose
layout reaches a matmul or reduction through another op -- and as before (no
relayouts, no entry check), the two executables timed interleaved, round
after round.  Both must return the same bits.

    python benchmarks/layout_entry.py [--rounds 15] [--number 50]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import sys

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--rounds", type=int, default=15)
ap.add_argument("--number", type=int, default=50, help="steps per candidate per round")
ARGS = ap.parse_args() if __name__ == "__main__" else None

os.environ.setdefault("FRAME_CACHE", "0")   # both variants compiled here, none loaded
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import interleaved_samples, show_steps  # noqa: E402
from fusion_regions import train_step_graph, train_step_inputs  # noqa: E402


@contextlib.contextmanager
def layouts_off():
    """The pipeline and codegen of before: no relayouts, no input stride check."""
    from frame.backends.cpu import codegen
    from frame.passes import pipeline
    saved = pipeline._runs_numpy_kernels, codegen.pinned_inputs
    pipeline._runs_numpy_kernels = lambda backend: False
    codegen.pinned_inputs = lambda graph: []
    try:
        yield
    finally:
        pipeline._runs_numpy_kernels, codegen.pinned_inputs = saved


def main(args) -> None:
    from frame.runtime import compile as rc
    graph = train_step_graph()
    inputs = train_step_inputs()
    after = rc.compile(graph, "cpu")
    rc.clear_cache()
    with layouts_off():
        before = rc.compile(graph, "cpu")
    rc.clear_cache()
    check = [line.strip() for line in after.source.splitlines() if "strides !=" in line]
    print(f"relayouts: {after.source.count('k_relayout')}; entry check: {check}")
    a, b = after.run(inputs), before.run(inputs)
    same = all(np.array_equal(p, q) and p.dtype == q.dtype for p, q in zip(a, b))
    print(f"same bits: {same}; loss {float(a[0]):.6f}")
    cands = {"before": lambda: before.run(inputs), "layouts": lambda: after.run(inputs)}
    samples = interleaved_samples(cands, args.number, args.rounds, warmup=20)
    print(f"load: {os.getloadavg()}; {args.rounds} rounds x {args.number} steps, ms/step")
    show_steps(samples, 'before', 10)


if __name__ == "__main__":
    main(ARGS)
