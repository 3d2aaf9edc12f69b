"""frame.distributed: data-parallel training on MPI (docs/distributed.md).

    import frame, frame.distributed as dist
    dist.init()                                   # under: mpiexec -n 2 python train.py
    model = dist.DataParallel(model)              # rank 0's weights on every rank
    opt = frame.optim.SGD(model.parameters(), lr=0.1)
    loader = dist.ShardedLoader(x, y, batch_size=64, seed=0)

    @frame.jit
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        model.average_gradients()                 # one all_reduce over a flat buffer
        opt.step()
        return loss

The collectives (``all_reduce``, ``broadcast``) are registry ops
(frame/ops/collective.py), so the jitted step above is one captured graph;
the OpenVINO backend does not compile collectives, and the fallback chain
runs the all-reduce on the cpu between the compiled partitions before and
after it.  Started without ``mpiexec``, the program runs as a world of one
process.
"""
from __future__ import annotations

from typing import Iterable

from ..errors import FrameTypeError
from ..functions._core import apply1, as_array, bind_schema, schema_attrs
from ..functions.shape import concat, reshape
from ..nn.module import Module
from ..tensor import Tensor
from .comm import MISSING_MPI, ProcessGroup, group, init, is_initialized, launched_by_mpi
from .data import ShardedLoader, shard_indices

__all__ = ["init", "is_initialized", "rank", "world_size", "all_reduce", "broadcast", "barrier",
           "average_gradients", "broadcast_parameters", "DataParallel", "ShardedLoader",
           "shard_indices", "ProcessGroup", "group", "launched_by_mpi", "MISSING_MPI"]


def rank() -> int:
    """This process's rank, 0 to ``world_size() - 1``."""
    return group().rank


def world_size() -> int:
    """The number of processes of the job (1 without ``mpiexec``)."""
    return group().size


def barrier() -> None:
    """Wait until every process of the job has reached this call."""
    group().barrier()


@bind_schema("all_reduce")
def all_reduce(t, op: str = "sum"):
    """The elementwise sum (``op="sum"``) or mean (``op="mean"``) of ``t`` over every
    process, on every process.  Returns a new tensor (``t`` is not modified).
    Every process must call it, in the same order as its other collectives."""
    return apply1("all_reduce", (as_array(t),), schema_attrs("all_reduce", reduction=op))


@bind_schema("broadcast")
def broadcast(t, root: int = 0):
    """Process ``root``'s ``t`` on every process (a new tensor)."""
    return apply1("broadcast", (as_array(t),), schema_attrs("broadcast", root=root))


class DataParallel(Module):
    """``module`` for data-parallel training: at construction every parameter is
    overwritten with process ``root``'s (``broadcast_parameters``), and the
    parameter list is kept (``params``), so that ``average_gradients()`` inside
    a jitted step reads a plain list (capture does not walk a module's
    attributes the way ``Module.parameters()`` does).  Calls run ``module``."""

    def __init__(self, module: Module, root: int = 0):
        super().__init__()
        self.module = module
        self.params = list(module.parameters())
        broadcast_parameters(self.params, root)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def average_gradients(self) -> None:
        """``frame.distributed.average_gradients`` of the module's parameters."""
        average_gradients(self.params)


def _parameters(model_or_params) -> list:
    if isinstance(model_or_params, DataParallel):
        params = model_or_params.params
    elif isinstance(model_or_params, Module):
        params = model_or_params.parameters()  # eager only: capture breaks the graph here
    else:
        params = model_or_params
    params = list(params)
    for p in params:
        if not isinstance(p, Tensor):
            raise FrameTypeError(f"expected a Module or Tensors, got a {type(p).__name__}")
    return params


def average_gradients(model_or_params: Module | Iterable[Tensor]) -> None:
    """Replace every parameter's ``.grad`` by its mean over the processes.

    ``model_or_params``: a ``DataParallel``, a list of parameters (e.g. an
    optimizer's ``params``), or a ``Module`` (eagerly; inside a jitted step
    walking a module's parameters is a graph break, so pass a list or a
    ``DataParallel`` there).

    Bucketed: the gradients (per dtype) are flattened into one buffer and
    all-reduced once, not one all-reduce per parameter.  Parameters whose
    ``.grad`` is None are skipped; every process must have the same ones (it
    does when every process runs the same training step).  Inside a jitted
    step this is part of the step's graph (concat, one ``all_reduce``,
    slices), and the new ``.grad`` values are side effects like
    ``loss.backward()``'s."""
    buckets: dict[str, list] = {}
    for p in _parameters(model_or_params):
        g = p.grad
        if g is not None:
            buckets.setdefault(g.dtype.name, []).append(p)
    for params in buckets.values():
        flat = concat([reshape(p.grad, -1) for p in params], axis=0)
        flat = all_reduce(flat, op="mean")
        offset = 0
        for p in params:
            size = p.grad.size
            p.grad = reshape(flat[offset:offset + size], p.grad.shape)
            offset += size


def broadcast_parameters(model_or_params: Module | Iterable[Tensor], root: int = 0) -> None:
    """Overwrite every parameter, in place, with process ``root``'s values (call it
    once after building the model, so every process starts from the same
    weights).  Bucketed like ``average_gradients``: one broadcast per dtype.
    Runs eagerly (it changes the parameters' storage, which a jitted function
    reads as its inputs)."""
    pg = group()
    buckets: dict[str, list] = {}
    for p in _parameters(model_or_params):
        buckets.setdefault(p.dtype.name, []).append(p)
    for params in buckets.values():
        flat = concat([reshape(p.detach(), -1) for p in params], axis=0)._data
        flat = pg.broadcast(flat, root)
        offset = 0
        for p in params:
            p._data[...] = flat[offset:offset + p.size].reshape(p.shape)
            offset += p.size
