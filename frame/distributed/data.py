"""Sharded data loading: each process sees its slice of every global batch.

One epoch is a permutation of the ``n`` samples drawn from
``numpy.random.default_rng((seed, epoch))``: the same on every process, so
the processes agree on the order without talking.  Global batch ``k`` is
samples ``k * batch_size`` to ``(k + 1) * batch_size`` of the permutation; it
is cut into ``world_size`` equal contiguous slices and process ``r`` gets
slice ``r``.  The concatenation of the processes' slices of a step is the
global batch one process would train on, so a mean loss on each slice,
gradients averaged over the processes (``average_gradients``), gives the
full batch's gradient.  An incomplete last batch is dropped (shapes stay
static: one graph).
"""
from __future__ import annotations

import numpy as np

from ..errors import FrameValueError
from ..tensor import Tensor, from_numpy
from .comm import group

__all__ = ["shard_indices", "ShardedLoader"]


def shard_indices(n: int, batch_size: int, epoch: int = 0, seed: int = 0, rank: int = 0,
                  world_size: int = 1, shuffle: bool = True) -> list[np.ndarray]:
    """The sample indices process ``rank`` trains on in each step of ``epoch``
    (one int64 array of ``batch_size // world_size`` indices per step)."""
    if batch_size <= 0 or batch_size % world_size:
        raise FrameValueError(f"the global batch size {batch_size} must be a positive multiple "
                              f"of the number of processes {world_size}")
    if not 0 <= rank < world_size:
        raise FrameValueError(f"rank {rank} is not in a {world_size}-process job")
    order = np.random.default_rng((seed, epoch)).permutation(n) if shuffle else np.arange(n)
    local = batch_size // world_size
    steps = n // batch_size
    return [order[k * batch_size + rank * local: k * batch_size + (rank + 1) * local]
            for k in range(steps)]


class ShardedLoader:
    """Iterate over this process's slices of the global batches of an epoch.

        loader = ShardedLoader(x, y, batch_size=64, seed=0)
        for epoch in range(3):
            loader.set_epoch(epoch)
            for xb, yb in loader:       # xb: 64 // world_size rows
                step(xb, yb)

    ``arrays`` are NumPy arrays or Tensors with the samples along axis 0; each
    batch gives them back of the same kind (Tensors as new Tensors)."""

    def __init__(self, *arrays, batch_size: int, seed: int = 0, shuffle: bool = True,
                 rank: int | None = None, world_size: int | None = None):
        if not arrays:
            raise FrameValueError("ShardedLoader needs at least one array")
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise FrameValueError(f"ShardedLoader: arrays of different lengths "
                                  f"{[len(a) for a in arrays]}")
        self.arrays = arrays
        self.n = n
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.rank = group().rank if rank is None else rank
        self.world_size = group().size if world_size is None else world_size
        self.epoch = 0
        shard_indices(0, batch_size, rank=self.rank, world_size=self.world_size)  # validates

    def set_epoch(self, epoch: int) -> None:
        """Use epoch ``epoch``'s permutation from the next iteration on."""
        self.epoch = epoch

    def __len__(self) -> int:
        return self.n // self.batch_size

    def __iter__(self):
        for idx in shard_indices(self.n, self.batch_size, self.epoch, self.seed, self.rank,
                                 self.world_size, self.shuffle):
            yield tuple(_take(a, idx) for a in self.arrays)


def _take(a, idx: np.ndarray):
    if isinstance(a, Tensor):
        return from_numpy(np.ascontiguousarray(a.numpy()[idx]))
    return np.ascontiguousarray(np.asarray(a)[idx])
