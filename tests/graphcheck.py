"""Helpers shared by tests that run graphs: random inputs and bitwise comparison."""
from __future__ import annotations

import numpy as np

from frame.ir import Graph


def random_inputs(graph: Graph, seed: int = 0, int_range: int = 5) -> list[np.ndarray]:
    """One random array per graph input: bools, small ints, floats in [-2, 2)."""
    rng = np.random.default_rng(seed)
    out = []
    for v in graph.inputs:
        dt = v.type.dtype.np
        if dt.kind == "b":
            out.append(rng.random(v.type.shape) > 0.5)
        elif dt.kind == "i":
            out.append(rng.integers(-int_range, int_range + 1, v.type.shape).astype(dt))
        else:
            out.append(rng.uniform(-2, 2, v.type.shape).astype(dt))
    return out


def assert_identical(got, want, what: str = "") -> None:
    """Same number of outputs, each an ndarray with the same dtype, shape and bytes."""
    prefix = f"{what}: " if what else ""
    assert len(got) == len(want), f"{prefix}{len(got)} outputs != {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert type(g) is np.ndarray, f"{prefix}output {i} is a {type(g).__name__}"
        assert (g.dtype, g.shape) == (w.dtype, w.shape), f"{prefix}output {i}"
        assert g.tobytes() == w.tobytes(), f"{prefix}output {i}:\n{g}\n!=\n{w}"
