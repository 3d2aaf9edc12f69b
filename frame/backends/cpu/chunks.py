"""How the cpu executable cuts a large elementwise region into blocks of rows
that run on several threads (``codegen.fused_parallel``, ``hal/threadpool.py``).

    split = parallel_split(node)   # None: run the body unchunked
    split.rows, split.row_shape    # the output seen as rows (leading axes collapsed)
    split.rows_per_chunk, split.chunks, split.sliced
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from ...ir.graph import Node
from .lowerings import elementwise_out

__all__ = ["Split", "parallel_split", "chunk_allocator", "PARALLEL_MIN_ELEMENTS",
           "PARALLEL_MIN_WORK", "CHUNK_BYTES", "MIN_CHUNKS"]

# A fused elementwise body runs chunked on the pool's threads (fused_parallel)
# when its output has at least PARALLEL_MIN_ELEMENTS elements and elements x
# body nodes reach PARALLEL_MIN_WORK (~100 us of single-threaded ufunc work at
# ~0.1 ns per element and op: below that, waking a worker, ~20-50 us on this
# VM, and the extra ufunc calls cost what the second core saves).  A chunk
# holds about CHUNK_BYTES of the output, and at least MIN_CHUNKS chunks are
# made (so a worker that starts late still finds work).  Chunks are not made
# smaller: each ufunc call costs ~1 us of GIL-held glue, and blocking for L1/L2
# measured no gain (the per-element cost is the same from L3, which holds these
# arrays).  Measured: docs/performance.md, benchmarks/parallel_regions.py.
PARALLEL_MIN_ELEMENTS = 1 << 16
PARALLEL_MIN_WORK = 1 << 20
CHUNK_BYTES = 1 << 19
MIN_CHUNKS = 4


class Split(NamedTuple):
    """How ``fused_parallel`` cuts a body's output: the leading axes collapsed
    into one of ``rows`` rows of ``row_shape``, ``rows_per_chunk`` rows a chunk
    (the last chunk also takes the remainder), and which node inputs are
    sliced along the rows (the others are broadcast along them)."""
    rows: int
    row_shape: tuple[int, ...]
    rows_per_chunk: int
    chunks: int
    sliced: tuple[bool, ...]

    def operand_shape(self, shape: tuple[int, ...], sliced: bool) -> tuple[int, ...]:
        """An operand's shape with the collapsed axes made one (sliced) or
        dropped (broadcast: they are all 1)."""
        rank = len(self.row_shape)
        tail = tuple(shape[len(shape) - rank:]) if rank else ()
        if len(shape) < rank:
            tail = (1,) * (rank - len(shape)) + tuple(shape)
        return ((self.rows,) + tail) if sliced else tail


def parallel_split(node: Node) -> Split | None:
    """The chunking of a fused node worth running in parallel, or None.

    Eligible: every body node is elementwise with an ``out=`` lowering (no
    kernel call, no matmul head, no reduction) and has the node's output
    shape, and the work is large enough (PARALLEL_MIN_*).  The leading axes
    collapsed are the longest prefix over which every node input is either
    full (the output's extent on each axis) or broadcast (1 or absent on each
    axis); axes of extent 1 fit both.  With all inputs full (or scalars) the
    whole output is one axis of elements."""
    body, result = node.body, node.outputs[0]
    shape = result.type.shape
    size = result.type.size
    if not shape or size < PARALLEL_MIN_ELEMENTS or size * len(body.nodes) < PARALLEL_MIN_WORK:
        return None
    for n in body.nodes:
        if not elementwise_out(n) or n.outputs[0].type.shape != shape:
            return None
    rank = len(shape)
    kinds: list[str | None] = [None] * len(node.inputs)   # "full" / "bcast" over the prefix
    prefix = 0
    for axis in range(rank):
        new = list(kinds)
        for i, v in enumerate(node.inputs):
            s = v.type.shape
            offset = rank - len(s)
            d = s[axis - offset] if axis >= offset else 1
            if shape[axis] == 1:
                continue
            kind = "full" if d == shape[axis] else "bcast" if d == 1 else None
            if kind is None:
                return None
            if new[i] is None:
                new[i] = kind
            elif new[i] != kind:
                break
        else:
            kinds, prefix = new, axis + 1
            continue
        break
    rows = math.prod(shape[:prefix])
    row_shape = tuple(shape[prefix:])
    row_size = math.prod(row_shape)
    elements = min(CHUNK_BYTES // result.type.dtype.itemsize, size // MIN_CHUNKS)
    per_chunk = max(1 if row_size > 1 else 2, elements // row_size)
    chunks = rows // per_chunk
    if chunks < 2:
        return None
    return Split(rows, row_shape, per_chunk, chunks, tuple(k != "bcast" for k in kinds))


def chunk_allocator(specs: list[tuple[np.dtype, tuple[int, ...]]]) -> Callable[[], tuple]:
    """A function allocating one thread's scratch arrays of a chunk function."""
    def alloc() -> tuple[np.ndarray, ...]:
        return tuple(np.empty(shape, dtype) for dtype, shape in specs)
    return alloc
