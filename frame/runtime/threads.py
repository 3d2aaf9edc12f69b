"""One owner of the cores: how NumPy's BLAS pool and OpenVINO's pool share them.

Both libraries keep worker threads that spin for a while after each call
(OpenBLAS's busy-wait, OpenVINO's TBB workers).  In one Python thread the two
never compute at the same time, yet a pool still spinning from the previous
call takes a core from the next one; on a small machine each library then
runs slower than on one thread alone (docs/performance.md has the sweep,
``benchmarks/threads.py``).  So frame decides, once for the process, which
library gets which threads:

* ``frame.config.blas_threads`` (``FRAME_BLAS_THREADS``): the BLAS pool size,
  set with threadpoolctl for every BLAS library loaded (NumPy's OpenBLAS);
* ``frame.config.ov_threads`` (``FRAME_OV_THREADS``): OpenVINO's
  ``INFERENCE_NUM_THREADS`` for the CPU device;
* ``frame.config.ov_pinning`` (``FRAME_OV_PINNING``): OpenVINO's
  ``ENABLE_CPU_PINNING``;
* ``frame.config.cpu_threads`` (``FRAME_CPU_THREADS``): the threads a large
  elementwise region of the cpu executable runs on, the caller included
  (``frame/hal/threadpool.py``; ``cpu_rule``).

``None`` (the default) means frame's rule (``blas_rule`` / ``openvino_rule``),
0 (or, for pinning, unset) leaves the library's own setting alone, and any
other value is used as given.  The settings are applied when a backend is
first used for a compile, and again whenever they have changed since: the BLAS
limit by ``for_backend(name)`` (cheap, on the thread that asks for the
compile; it never imports openvino), the OpenVINO properties by
``configure(backend)`` on the backend's ``Core`` (they hold for every model
compiled or imported afterwards; per-graph compile settings such as the
one-thread rule for small graphs still win).  ``current()`` reports what is in
force.
"""
from __future__ import annotations

import logging
import threading

from ..hal import threadpool as cpu_pool
from ..settings import config

__all__ = ["for_backend", "configure", "blas_rule", "openvino_rule", "cpu_rule",
           "openvino_properties", "current", "reset"]

logger = logging.getLogger("frame.runtime.threads")

_lock = threading.Lock()
_blas_applied: int | None = None     # the limit frame set (None: frame has not touched BLAS)
_blas_original: list[tuple[str, int]] | None = None  # (filepath, num_threads) before frame
_ov_applied: dict[int, dict[str, object]] = {}       # id(core) -> properties set on it
_openvino_used = False               # the openvino backend was asked to compile (blas_rule)


# --------------------------------------------------------------------------- the rule

def blas_rule(openvino_used: bool) -> int:
    """The BLAS pool size frame chooses when ``blas_threads`` is None; 0 =
    leave BLAS alone.  ``openvino_used``: the openvino backend has been asked
    to compile in this process (it stays so).

    Once OpenVINO computes in the process, it owns the cores and BLAS runs on
    the calling thread: NumPy's OpenBLAS workers busy-wait for ~0.1 s after
    every multithreaded call, so each NumPy matmul before an OpenVINO request
    leaves a spinning thread on the core OpenVINO's second thread needs.
    Measured (``benchmarks/threads.py``, docs/performance.md): with BLAS on one
    thread the OpenVINO training step is 1.9x faster on a quiet machine and
    hand NumPy, run in the same process, is 1.4x faster too (its own spinning
    workers lose to OpenVINO's pool); on a loaded machine two BLAS threads made
    NumPy and the cpu backend 7-20x slower.  The cpu backend alone keeps BLAS
    as the library set it up: BLAS is then the only pool.
    """
    return 1 if openvino_used else 0


def openvino_rule() -> dict[str, object]:
    """OpenVINO CPU properties frame chooses for settings left at None: none.
    OpenVINO keeps its own thread count (every core, one stream for the latency
    hint; small graphs still get one thread from the backend's size rule) and
    its pinning.  Measured with BLAS on one thread (docs/performance.md): two
    OpenVINO threads made the training step 1.6x faster than one on a quiet
    machine, one thread was up to 2x faster on a machine loaded by other
    processes (``FRAME_OV_THREADS=1`` there); pinning off made no consistent
    difference."""
    return {}


def cpu_rule() -> int:
    """The cpu executable's region threads (caller included) when
    ``cpu_threads`` is None: every core the process may run on.

    The pool's workers compute only while their caller waits for them and
    sleep on a lock otherwise (they do not spin), so they never run at the
    same time as a BLAS call or an OpenVINO request of that caller; BLAS is
    limited to one thread by ``blas_rule`` anyway once OpenVINO is used.
    Measured (``benchmarks/parallel_regions.py``, docs/performance.md): tanh-GELU
    1024x1024 on 2 cores 1.7-1.9x faster than on the caller alone on a quiet
    machine."""
    return cpu_pool.available_cores()


cpu_pool.set_rule(cpu_rule)


# --------------------------------------------------------------------------- application

def _wanted_blas(backend: str) -> int:
    global _openvino_used
    if backend == "openvino":
        _openvino_used = True
    if config.blas_threads is not None:
        return config.blas_threads
    return blas_rule(_openvino_used)


def openvino_properties() -> dict[str, object]:
    """The CPU properties frame sets on OpenVINO's Core under the current settings."""
    props = dict(openvino_rule())
    if config.ov_threads is not None:
        props.pop("INFERENCE_NUM_THREADS", None)
        if config.ov_threads:
            props["INFERENCE_NUM_THREADS"] = config.ov_threads
    if config.ov_pinning is not None:
        props["ENABLE_CPU_PINNING"] = config.ov_pinning
    return props


def for_backend(name: str) -> None:
    """Apply the BLAS part of the settings before ``name`` compiles (cheap when
    nothing changed)."""
    global _blas_applied, _blas_original
    wanted = _wanted_blas(name)
    if wanted == (_blas_applied or 0):
        return
    with _lock:
        if wanted == (_blas_applied or 0):
            return
        from threadpoolctl import ThreadpoolController
        controller = ThreadpoolController().select(user_api="blas")
        if _blas_original is None:
            _blas_original = [(lib.filepath, lib.num_threads) for lib in controller.lib_controllers]
        if wanted:
            controller.limit(limits=wanted)
            logger.debug("BLAS pool limited to %d thread(s) for backend %r", wanted, name)
        else:
            original = dict(_blas_original)
            for lib in controller.lib_controllers:
                if lib.filepath in original:
                    lib.set_num_threads(original[lib.filepath])
            logger.debug("BLAS pool restored to its own size")
        _blas_applied = wanted or None


def configure(backend) -> None:
    """Apply the settings for ``backend`` (a Backend instance) before it compiles
    or imports: the BLAS limit and, for openvino, the CPU properties."""
    for_backend(backend.name)
    core = getattr(backend, "core", None)
    if backend.name != "openvino" or core is None:
        return
    props = openvino_properties()
    if _ov_applied.get(id(core)) == props:
        return
    with _lock:
        if _ov_applied.get(id(core)) == props:
            return
        previous = _ov_applied.get(id(core), {})
        restore = {k: _OV_LIBRARY_DEFAULTS[k] for k in previous if k not in props
                   and k in _OV_LIBRARY_DEFAULTS}
        if props or restore:
            core.set_property("CPU", {**restore, **props})
            logger.debug("OpenVINO CPU properties: %s", {**restore, **props})
        _ov_applied[id(core)] = props


# what a property frame stops setting goes back to (OpenVINO 2025/2026 CPU defaults)
_OV_LIBRARY_DEFAULTS: dict[str, object] = {"INFERENCE_NUM_THREADS": 0, "ENABLE_CPU_PINNING": True}


def current() -> dict[str, object]:
    """What is in force: BLAS pools as threadpoolctl sees them, and the OpenVINO
    properties frame has set (empty before the openvino backend compiled)."""
    from threadpoolctl import threadpool_info
    blas = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()
            if i["user_api"] == "blas"]
    ov = next(iter(_ov_applied.values()), {})
    return {"blas": blas, "blas_limit": _blas_applied, "openvino": dict(ov),
            "cpu_regions": cpu_pool.size()}


def reset() -> None:
    """Restore the BLAS pools and forget what was applied (tests)."""
    global _blas_applied, _blas_original, _openvino_used
    with _lock:
        _openvino_used = False
        if _blas_applied is not None and _blas_original is not None:
            from threadpoolctl import ThreadpoolController
            original = dict(_blas_original)
            for lib in ThreadpoolController().select(user_api="blas").lib_controllers:
                if lib.filepath in original:
                    lib.set_num_threads(original[lib.filepath])
        _blas_applied = None
        _blas_original = None
        _ov_applied.clear()
