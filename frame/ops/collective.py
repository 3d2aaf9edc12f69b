"""Collective ops: ``all_reduce``, ``broadcast`` and ``reduce`` across the
processes of a data-parallel job (docs/distributed.md).

The ops are ordinary registry ops, so a training step that all-reduces its
gradients is one captured graph.  What makes them different is that their
result depends on the other processes: every process must run the same
collectives in the same order, and a process that skips one makes the others
wait forever.  So each carries two traits:

- ``has_side_effect``: constant folding does not evaluate them, common
  subexpression elimination does not merge two of them, dead node
  elimination keeps one whose result nobody reads, and operator fusion
  leaves them out of its regions (frame/passes; each pass asks the trait).
- ``collective``: backends that cannot talk to the other processes refuse
  them (the OpenVINO backend reports UNIMPLEMENTED, so the fallback chain
  runs them on the cpu between compiled partitions).

No pass reorders nodes (the graph is a list in program order, kept by every
pass and by the fallback chain's partitions), so collectives run in the order
the program issued them on every process.

The reference kernels call the process group that ``frame.distributed``
installs (``install_communicator``): the op layer sits below it (DESIGN §1)
and knows only the small protocol ``Communicator`` below.  With one process
the ops are the identity (all_reduce mean of one value is that value).

Gradients (frame/autograd/rules_nn.py): ``all_reduce`` is its own adjoint
(the gradient of a sum-all-reduce is a sum-all-reduce of the gradients, of a
mean-all-reduce a mean-all-reduce); ``broadcast``'s is ``reduce`` to the same
root, and ``reduce``'s is ``broadcast``.
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from ..dtypes import float32, float64, int32, int64
from ..errors import ErrorCode, FrameError, FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["Communicator", "install_communicator", "communicator", "COLLECTIVE_OPS",
           "REDUCE_OPS", "COLLECTIVE_DTYPES"]

COLLECTIVE_OPS = ("all_reduce", "broadcast", "reduce")
REDUCE_OPS = ("sum", "mean")
# the dtypes MPI has a predefined datatype for (float16 has none)
COLLECTIVE_DTYPES = (float32, float64, int32, int64)


class Communicator(Protocol):
    """What the reference kernels need of a process group (``frame.distributed``
    implements it over MPI).  Each returns a new array of ``x``'s dtype and shape."""

    def all_reduce(self, x: np.ndarray, op: str) -> np.ndarray: ...
    def broadcast(self, x: np.ndarray, root: int) -> np.ndarray: ...
    def reduce(self, x: np.ndarray, root: int) -> np.ndarray: ...


_communicator: Communicator | None = None


def install_communicator(comm: Communicator) -> None:
    """Make ``comm`` the process group of the collective ops' kernels (called by
    ``frame.distributed`` when imported; a later call replaces it)."""
    global _communicator
    _communicator = comm


def communicator() -> Communicator:
    if _communicator is None:
        raise FrameError(ErrorCode.INTERNAL,
                         "the collective ops need a process group: import frame.distributed "
                         "(it installs one when imported)")
    return _communicator


def _check_input(op: str, t: TensorType) -> None:
    if t.dtype not in COLLECTIVE_DTYPES:
        raise FrameTypeError(f"{op}: expected a float32, float64, int32 or int64 tensor, got {t}")


def _check_root(op: str, root: int) -> None:
    if root < 0:
        raise FrameValueError(f"{op}: root must be a process rank (>= 0), got {root}")


def _all_reduce_infer(types, attrs):
    (t,) = types
    _check_input("all_reduce", t)
    if attrs["reduction"] not in REDUCE_OPS:
        raise FrameValueError(f"all_reduce: reduction must be one of {', '.join(REDUCE_OPS)}, "
                              f"got {attrs['reduction']!r}")
    if attrs["reduction"] == "mean" and t.dtype.kind != "f":
        raise FrameTypeError(f"all_reduce: reduction 'mean' needs a float tensor, got {t} "
                             f"(use 'sum' for integers)")
    return [t]


def _rooted_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        _check_input(op, t)
        _check_root(op, attrs["root"])
        return [t]
    return infer


def _all_reduce_kernel(ins, attrs):
    return (communicator().all_reduce(np.asarray(ins[0]), attrs["reduction"]),)


def _broadcast_kernel(ins, attrs):
    return (communicator().broadcast(np.asarray(ins[0]), attrs["root"]),)


def _reduce_kernel(ins, attrs):
    return (communicator().reduce(np.asarray(ins[0]), attrs["root"]),)


_TRAITS = ("has_side_effect", "collective")

register(OpSchema("all_reduce", 1, _all_reduce_infer, _all_reduce_kernel,
                  attrs={"reduction": AttrSpec("str", "sum")}, traits=_TRAITS,
                  doc="The elementwise sum (reduction='sum') or mean (reduction='mean') of x "
                      "over every process; every process gets the same result."))
register(OpSchema("broadcast", 1, _rooted_infer("broadcast"), _broadcast_kernel,
                  attrs={"root": AttrSpec("int", 0)}, traits=_TRAITS,
                  doc="Process root's x, on every process."))
register(OpSchema("reduce", 1, _rooted_infer("reduce"), _reduce_kernel,
                  attrs={"root": AttrSpec("int", 0)}, traits=_TRAITS,
                  doc="The elementwise sum of x over every process on process root; zeros "
                      "on the others (the adjoint of broadcast)."))
