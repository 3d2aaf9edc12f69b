"""Worker threads for executables: the cpu executable runs a large
elementwise region's chunks on the calling thread and on these workers at
once (``backends/cpu/codegen.py``).

NumPy's ufuncs release the GIL while they loop, so two Python threads each
running the region's ufuncs on their own rows compute on two cores; the
Python glue between the calls is what the GIL serialises (~1 us a call,
which is why chunks are large, see ``codegen.py``).

    threadpool.run(chunk, args, n)    # chunk(i, *args) for i in range(n), then return

Scheduling is dynamic: the caller and the workers take the next chunk
number from one counter until none is left, so a worker that is slow to
wake up (~20-50 us on this 2-vCPU VM) or descheduled by another process
takes fewer chunks, and the caller never waits for a worker that has not
started a chunk.  The caller waits only for chunks workers are computing.

Size (``size()``): ``frame.config.cpu_threads`` (``FRAME_CPU_THREADS``) if
set (``1`` or ``0``: no workers, the caller computes everything), else
frame's rule (``frame/runtime/threads.py``, ``cpu_rule``): every core this
process may run on.  Workers sleep on a lock between jobs (no spinning, so
they hold no core from OpenVINO's or BLAS's pools, which never run at the
same time as a job: a job's caller waits for it to finish).  They are
created on first use and after a ``fork`` anew in the child.

Chunks run in a copy of the caller's ``contextvars`` context, so NumPy's
error state (``np.errstate``, a context variable) is the caller's on every
thread.  An exception in a chunk stops the job (no new chunk starts) and is
raised in the caller once every chunk in flight has finished.
"""
from __future__ import annotations

import _thread
import contextvars
import logging
import os
import threading
from typing import Any, Callable

from ..settings import config

__all__ = ["run", "size", "available_cores", "set_rule"]

logger = logging.getLogger("frame.hal.threadpool")


_cores: int | None = None


def available_cores() -> int:
    """The number of cores this process may run on (asked once; again after a fork)."""
    global _cores
    if _cores is None:
        try:
            _cores = max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            _cores = max(1, os.cpu_count() or 1)
    return _cores


def _default_rule() -> int:
    return available_cores()


_rule: Callable[[], int] = _default_rule


def set_rule(rule: Callable[[], int]) -> None:
    """Install the function choosing the size when ``cpu_threads`` is None
    (``frame.runtime.threads`` installs frame's thread rule)."""
    global _rule
    _rule = rule


def size() -> int:
    """Threads a job runs on, the caller included (>= 1)."""
    n = config.cpu_threads
    if n is None:
        n = _rule()
    return max(1, n)


class _Job:
    __slots__ = ("fn", "args", "n", "next", "active", "waiter", "error", "context", "lock")

    def __init__(self, fn: Callable[..., Any], args: tuple, n: int,
                 context: contextvars.Context):
        self.fn, self.args, self.n = fn, args, n
        self.next = 0          # the next chunk to hand out
        self.active = 0        # chunks workers are computing now
        self.waiter: Any = None   # a held lock the caller sleeps on until active == 0
        self.error: BaseException | None = None
        self.context = context
        self.lock = _thread.allocate_lock()


def _work(job: _Job) -> None:
    """A worker's part of ``job``: chunks until none is left."""
    lock, fn, args = job.lock, job.fn, job.args
    while True:
        with lock:
            i = job.next
            if i >= job.n:
                return
            job.next = i + 1
            job.active += 1
        error = None
        try:
            fn(i, *args)
        except BaseException as e:  # raised in the caller
            error = e
        with lock:
            job.active -= 1
            if error is not None:
                if job.error is None:
                    job.error = error
                job.next = job.n
            if job.active == 0 and job.waiter is not None:
                job.waiter.release()
                job.waiter = None
            if error is not None:
                return


class _Worker:
    """One worker thread: sleeps on ``go`` until a job is posted."""

    def __init__(self, index: int):
        self.go = _thread.allocate_lock()
        self.go.acquire()
        self.lock = _thread.allocate_lock()
        self.job: _Job | None = None
        self.thread = threading.Thread(target=self._loop, name=f"frame-cpu-{index}", daemon=True)
        self.thread.start()

    def post(self, job: _Job) -> None:
        with self.lock:
            pending = self.job is not None   # not picked up yet: replace it, it is done
            self.job = job
        if not pending:
            self.go.release()

    def _loop(self) -> None:
        while True:
            self.go.acquire()
            with self.lock:
                job, self.job = self.job, None
            if job is not None:
                job.context.copy().run(_work, job)


_workers: list[_Worker] = []
_workers_lock = threading.Lock()


def _reset_after_fork() -> None:
    global _workers, _workers_lock, _cores
    _workers = []            # the parent's threads do not exist in the child
    _cores = None
    _workers_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _get_workers(count: int) -> list[_Worker]:
    workers = _workers
    if len(workers) < count:
        with _workers_lock:
            while len(_workers) < count:
                _workers.append(_Worker(len(_workers)))
                logger.debug("cpu worker thread %d started", len(_workers))
            workers = _workers
    return workers[:count]


def run(fn: Callable[..., Any], args: tuple, n: int) -> None:
    """Call ``fn(i, *args)`` for every ``i`` in ``range(n)``, on this thread
    and up to ``size() - 1`` workers, in no particular order; return when
    all calls have returned, or raise the first exception one raised."""
    threads = min(size(), n)
    if threads <= 1:
        for i in range(n):
            fn(i, *args)
        return
    job = _Job(fn, args, n, contextvars.copy_context())
    for worker in _get_workers(threads - 1):
        worker.post(job)
    lock = job.lock
    error = None
    try:
        while True:
            with lock:
                i = job.next
                if i >= n:
                    break
                job.next = i + 1
            fn(i, *args)
    except BaseException as e:
        error = e
    with lock:
        job.next = n   # after an error: no new chunk starts
        waiter = None
        if job.active:
            waiter = job.waiter = _thread.allocate_lock()
            waiter.acquire()
    if waiter is not None:
        waiter.acquire()   # released by the worker finishing the last chunk in flight
    if error is not None:
        raise error
    if job.error is not None:
        raise job.error
