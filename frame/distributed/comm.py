"""The process group: MPI's ``COMM_WORLD`` through mpi4py, or one process alone.

``mpi4py`` (and an MPI runtime: the ``mpich`` wheel of the ``distributed``
extra) is imported only here, and only when the group is first needed, so
importing frame never loads MPI.

- ``init()`` joins the MPI job the process was launched in (``mpiexec -n N
  python train.py``), or makes a one-process MPI world when it was started
  without a launcher.  Without mpi4py or an MPI runtime it raises a
  ``FrameError`` naming the extra to install.
- Used without ``init()`` (``rank()``, ``world_size()``, a collective op), the
  group initialises itself the same way; only when mpi4py is missing *and*
  no MPI launcher started the process does it fall back to a world of one
  process without MPI, where every collective is the identity.  Started by
  ``mpiexec`` without mpi4py it raises, as ``init()`` does: N processes that
  each believe they are alone would silently train N different models.

A process of a job of several that dies of an uncaught exception would leave
the others waiting forever in their next collective (and itself hanging in
``MPI_Finalize`` at exit).  ``init()`` therefore installs ``sys.excepthook``
and ``threading.excepthook`` handlers that print the traceback and then call
``MPI_Abort``, which ends every process of the job with exit code 1.

Every collective is timed and counted in ``frame.stats().extra``:
``collective_calls``, ``collective_bytes`` (bytes of the input arrays) and
the time ``extra_times["collective"]``.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time

import numpy as np

from ..errors import ErrorCode, FrameError
from ..ops.collective import REDUCE_OPS, install_communicator
from ..runtime.stats import record

__all__ = ["ProcessGroup", "group", "init", "is_initialized", "launched_by_mpi", "MISSING_MPI"]

log = logging.getLogger("frame.distributed")

MISSING_MPI = ("frame.distributed needs mpi4py and an MPI runtime: install the 'distributed' "
               "extra (pip install 'frame-jit[distributed]', which brings mpi4py and the mpich "
               "wheel)")

ABORT_GRACE_S = 0.5  # time for the launcher to forward stderr before MPI_Abort (abort)

# environment variables an MPI launcher sets in the processes it starts (MPICH's
# hydra and Intel MPI: PMI_*; Open MPI: OMPI_COMM_WORLD_*; PMIx launchers: PMIX_RANK)
_LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                       "MPI_LOCALNRANKS")


def launched_by_mpi() -> bool:
    """Was this process started by an MPI launcher (``mpiexec``/``mpirun``)?"""
    return any(name in os.environ for name in _LAUNCHER_VARIABLES)


class ProcessGroup:
    """The processes of the job.  ``comm`` is mpi4py's communicator, or None for
    one process without MPI.  Implements ``frame.ops.collective.Communicator``."""

    def __init__(self, comm=None, mpi=None):
        self.comm = comm
        self.mpi = mpi
        self.rank = comm.Get_rank() if comm is not None else 0
        self.size = comm.Get_size() if comm is not None else 1

    # -- collectives on host arrays ------------------------------------------------
    def all_reduce(self, x: np.ndarray, op: str) -> np.ndarray:
        if op not in REDUCE_OPS:
            raise FrameError(ErrorCode.INVALID_ARGUMENT, f"all_reduce: unknown op {op!r}")
        start = time.perf_counter()
        send = np.asarray(x, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        if self.comm is None or self.size == 1:
            out = send.copy()
        else:
            out = np.empty_like(send)
            self.comm.Allreduce(send, out, op=self.mpi.SUM)
        if op == "mean" and self.size > 1:
            np.divide(out, out.dtype.type(self.size), out=out)
        self._count(send, start)
        return out

    def broadcast(self, x: np.ndarray, root: int) -> np.ndarray:
        self._check_root("broadcast", root)
        start = time.perf_counter()
        out = np.array(x, copy=True, order="C")
        if self.comm is not None and self.size > 1:
            self.comm.Bcast(out, root=root)
        self._count(out, start)
        return out

    def reduce(self, x: np.ndarray, root: int) -> np.ndarray:
        self._check_root("reduce", root)
        start = time.perf_counter()
        send = np.asarray(x, order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        if self.comm is None or self.size == 1:
            out = send.copy()
        else:
            out = np.empty_like(send)
            self.comm.Reduce(send, out, op=self.mpi.SUM, root=root)
            if self.rank != root:
                out.fill(0)
        self._count(send, start)
        return out

    def barrier(self) -> None:
        if self.comm is not None and self.size > 1:
            self.comm.Barrier()

    def abort(self, code: int = 1) -> None:
        """End every process of the job (MPI_Abort); alone, exit this one.

        Waits ``ABORT_GRACE_S`` first: the launcher forwards each process's
        stderr through a pipe, and MPI_Abort kills the job before it has read
        what is still in the pipe (the traceback that explains the abort was
        seen cut short under load)."""
        if self.comm is not None:
            sys.stderr.flush()
            time.sleep(ABORT_GRACE_S)
            self.comm.Abort(code)
        os._exit(code)

    # -- helpers ------------------------------------------------------------------
    def _check_root(self, op: str, root: int) -> None:
        if not 0 <= root < self.size:
            raise FrameError(ErrorCode.INVALID_ARGUMENT,
                             f"{op}: root {root} is not a rank of this {self.size}-process job")

    @staticmethod
    def _count(x: np.ndarray, start: float) -> None:
        record.add_time("collective", time.perf_counter() - start)
        record.count("collective_calls")
        record.count("collective_bytes", x.nbytes)

    def __repr__(self) -> str:
        kind = "MPI" if self.comm is not None else "no MPI"
        return f"<ProcessGroup rank {self.rank} of {self.size} ({kind})>"


_lock = threading.Lock()
_group: ProcessGroup | None = None


def _import_mpi():
    """mpi4py's MPI module (initialises MPI), or a FrameError naming the extra."""
    try:
        from mpi4py import MPI  # lazy: MPI starts only when a process group is wanted
    except (ImportError, RuntimeError, OSError) as err:
        raise FrameError(ErrorCode.NOT_FOUND, f"{MISSING_MPI} ({type(err).__name__}: {err})") \
            from err
    return MPI


def _install_abort_hooks(pg: ProcessGroup) -> None:
    """An uncaught exception on one process ends the whole job (module doc)."""
    previous = sys.excepthook
    previous_thread = threading.excepthook

    def excepthook(kind, value, tb):
        previous(kind, value, tb)
        sys.stderr.write(f"frame.distributed: rank {pg.rank} of {pg.size} raised "
                         f"{kind.__name__}; aborting every process of the job\n")
        sys.stderr.flush()
        pg.abort(1)

    def thread_excepthook(args):
        previous_thread(args)
        if args.exc_type is SystemExit:
            return
        sys.stderr.write(f"frame.distributed: a thread of rank {pg.rank} raised "
                         f"{args.exc_type.__name__}; aborting every process of the job\n")
        sys.stderr.flush()
        pg.abort(1)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


def init() -> ProcessGroup:
    """Join the MPI job (or make a one-process MPI world); idempotent.

    Raises ``FrameError`` (NOT_FOUND) naming the ``distributed`` extra when
    mpi4py or an MPI runtime is missing."""
    global _group
    with _lock:
        if _group is not None and _group.comm is not None:
            return _group
        if _group is not None and _group.comm is None:
            raise FrameError(ErrorCode.INVALID_ARGUMENT,
                             "frame.distributed.init(): the process group was already used "
                             "without MPI (mpi4py is not installed); install the 'distributed' "
                             "extra and call init() before any collective")
        mpi = _import_mpi()
        pg = ProcessGroup(mpi.COMM_WORLD, mpi)
        if pg.size > 1:
            _install_abort_hooks(pg)
        _group = pg
    log.info("frame.distributed: rank %d of %d (%s)", pg.rank, pg.size,
             mpi.Get_library_version().splitlines()[0].strip())
    return pg


def group() -> ProcessGroup:
    """The process group, initialised on first use (module doc)."""
    global _group
    pg = _group
    if pg is not None:
        return pg
    try:
        return init()
    except FrameError:
        if launched_by_mpi():
            raise
    with _lock:
        if _group is None:
            _group = ProcessGroup()
        return _group


def is_initialized() -> bool:
    return _group is not None


class _Installed:
    """The op layer's Communicator: forwards to the current process group."""

    def all_reduce(self, x, op):
        return group().all_reduce(x, op)

    def broadcast(self, x, root):
        return group().broadcast(x, root)

    def reduce(self, x, root):
        return group().reduce(x, root)


install_communicator(_Installed())
