"""frame.config (defined here in ``frame.settings``): every setting, with its
environment variable (DESIGN §10).

    frame.config.backend = "cpu"        # same as FRAME_BACKEND=cpu
    with frame.config.override(eager=True):
        ...

Environment variables are read once, when frame is imported; assigning an
attribute afterwards wins.  Unknown attributes are an error (typos do not pass
silently).
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
from typing import Any, Callable

__all__ = ["Config", "config", "LOG_CHANNELS", "eager_forced"]

LOG_CHANNELS = ("graph_breaks", "recompiles", "guards", "graph", "bytecode", "fallbacks")


def _default_cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "frame")


def _cache_dir() -> str:
    """FRAME_CACHE_DIR; unset means the default, an empty value means none."""
    value = os.environ.get("FRAME_CACHE_DIR")
    return _default_cache_dir() if value is None else value


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "no", "off")


def _float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def _int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def _threads(name: str) -> int | None:
    """A thread count: unset or empty = None (frame's rule), else an int >= 0."""
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    try:
        count = int(value)
    except ValueError:
        raise ValueError(f"{name} must be an int >= 0 or empty, got {value!r}") from None
    return _thread_count(name, count)


def _thread_count(name: str, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be None or an int >= 0, got {value!r}")
    return value


def _optional_flag(name: str) -> bool | None:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return None
    return _flag(name, True)


@dataclasses.dataclass
class Config:
    eager: bool = False                 # FRAME_EAGER: frame.jit runs functions natively
    backend: str | None = None          # FRAME_BACKEND: None = openvino if installed, else cpu
    report: bool = False                # FRAME_REPORT: print frame.report() at exit
    log: tuple[str, ...] = ()           # FRAME_LOG: comma list of LOG_CHANNELS
    dump_ir_after: str | None = None    # FRAME_DUMP_IR_AFTER: a pass name
    cache_dir: str = dataclasses.field(default_factory=_default_cache_dir)  # FRAME_CACHE_DIR:
                                        # "" = no persistent cache at all (neither frame's
                                        # entries nor OpenVINO's model cache)
    cache: bool = True                  # FRAME_CACHE: the persistent on-disk compile cache
    cache_max_bytes: int = 1 << 30      # FRAME_CACHE_MAX_BYTES
    tiered: bool = True                 # FRAME_TIERED: cpu tier first, slow tier in background
    hot_threshold: int = 2              # FRAME_HOT_THRESHOLD: calls before the slow tier compiles
    max_pending: int = 4                # FRAME_MAX_PENDING: background compiles in flight
    compile_timeout_s: float = 60.0     # FRAME_COMPILE_TIMEOUT_S
    compile_exit_wait_s: float = 10.0   # FRAME_COMPILE_EXIT_WAIT_S: at exit, wait this long at
                                        # most for a background compile in flight (queued ones
                                        # are dropped; OpenVINO aborts a process that exits
                                        # in the middle of compile_model)
    tier_quiet_s: float = 0.1           # FRAME_TIER_QUIET_S: a background compile starts after
                                        # this long without a foreground compile (first
                                        # results first), or after waiting 2 s regardless
    min_graph_ops: int = 1              # FRAME_MIN_GRAPH_OPS: smaller graphs run eagerly
    # Who owns the cores (docs/performance.md; applied by frame.runtime.threads when
    # a backend is first used): None = frame's rule, 0 = leave to the library
    blas_threads: int | None = None     # FRAME_BLAS_THREADS: NumPy's BLAS pool (threadpoolctl)
    ov_threads: int | None = None       # FRAME_OV_THREADS: OpenVINO INFERENCE_NUM_THREADS
    ov_pinning: bool | None = None      # FRAME_OV_PINNING: OpenVINO ENABLE_CPU_PINNING;
                                        # None = frame's rule
    compile_cache_size: int = 256       # FRAME_COMPILE_CACHE_SIZE: executables the in-process
                                        # compile cache keeps (least recently used dropped first)
    pgo: bool = True                    # FRAME_PGO: measure the tiers of a graph whose backend
                                        # the user did not name, keep the fastest
    pgo_trial_calls: int = 6            # FRAME_PGO_TRIAL_CALLS: timed calls per tier
    pgo_margin: float = 0.05            # FRAME_PGO_MARGIN: hysteresis; the fast tier is kept
                                        # only when this much faster than the slow tier
    cooldown_s: float = 0.05            # FRAME_COOLDOWN_S: a graph whose slow-tier request was
                                        # refused (backpressure) asks again after this long

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.__dataclass_fields__:
            raise AttributeError(f"frame.config has no setting {name!r}; "
                                 f"settings: {', '.join(self.__dataclass_fields__)}")
        if name == "log":
            value = _channels(value)
        elif name in ("blas_threads", "ov_threads"):
            value = _thread_count(f"frame.config.{name}", value)
        elif name == "ov_pinning" and value is not None:
            value = bool(value)
        object.__setattr__(self, name, value)
        if name == "log" and self is globals().get("config") and _log_listener is not None:
            _log_listener(value)  # FRAME_LOG takes effect at once (frame/runtime/logs.py)

    @contextlib.contextmanager
    def override(self, **changes):
        """Temporarily change settings (tests, benchmarks)."""
        old = {k: getattr(self, k) for k in changes}
        for k, v in changes.items():
            setattr(self, k, v)
        try:
            yield self
        finally:
            for k, v in old.items():
                setattr(self, k, v)

    @classmethod
    def from_env(cls) -> "Config":
        return cls(
            eager=_flag("FRAME_EAGER", False),
            backend=os.environ.get("FRAME_BACKEND") or None,
            report=_flag("FRAME_REPORT", False),
            log=_channels(os.environ.get("FRAME_LOG", ""), strict=False),
            dump_ir_after=os.environ.get("FRAME_DUMP_IR_AFTER") or None,
            cache_dir=_cache_dir(),
            cache=_flag("FRAME_CACHE", True),
            cache_max_bytes=_int("FRAME_CACHE_MAX_BYTES", 1 << 30),
            tiered=_flag("FRAME_TIERED", True),
            hot_threshold=_int("FRAME_HOT_THRESHOLD", 2),
            max_pending=_int("FRAME_MAX_PENDING", 4),
            compile_timeout_s=_float("FRAME_COMPILE_TIMEOUT_S", 60.0),
            compile_exit_wait_s=_float("FRAME_COMPILE_EXIT_WAIT_S", 10.0),
            tier_quiet_s=_float("FRAME_TIER_QUIET_S", 0.1),
            min_graph_ops=_int("FRAME_MIN_GRAPH_OPS", 1),
            blas_threads=_threads("FRAME_BLAS_THREADS"),
            ov_threads=_threads("FRAME_OV_THREADS"),
            ov_pinning=_optional_flag("FRAME_OV_PINNING"),
            compile_cache_size=_int("FRAME_COMPILE_CACHE_SIZE", 256),
            pgo=_flag("FRAME_PGO", True),
            pgo_trial_calls=_int("FRAME_PGO_TRIAL_CALLS", 6),
            pgo_margin=_float("FRAME_PGO_MARGIN", 0.05),
            cooldown_s=_float("FRAME_COOLDOWN_S", 0.05),
        )


# Called with the new channels when ``config.log`` is assigned; frame/runtime/logs.py
# installs its ``apply`` here when imported (``import frame`` does), since this module,
# at the bottom of the layers, cannot import the runtime.
_log_listener: Callable[[tuple[str, ...]], None] | None = None


def on_log_change(listener: Callable[[tuple[str, ...]], None]) -> None:
    """Make ``listener(channels)`` run whenever ``frame.config.log`` is assigned."""
    global _log_listener
    _log_listener = listener


def _channels(value, strict: bool = True) -> tuple[str, ...]:
    """The log channels named by ``value`` (a comma-separated string or a
    sequence; ``all`` is every channel).  An unknown name raises ValueError,
    or, with ``strict=False`` (the environment, read at import), is dropped
    with one WARN: a typo in ``FRAME_LOG`` must not stop ``import frame``."""
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    else:
        items = list(value)
    if "all" in items:
        return LOG_CHANNELS
    unknown = [v for v in items if v not in LOG_CHANNELS]
    if unknown:
        message = (f"unknown FRAME_LOG channel(s) {', '.join(map(repr, unknown))}; channels: "
                   f"{', '.join(LOG_CHANNELS)}, all")
        if strict:
            raise ValueError(message)
        logging.getLogger("frame").warning("%s (ignored)", message)
    return tuple(v for v in items if v in LOG_CHANNELS)


config = Config.from_env()


def eager_forced() -> bool:
    """Is eager mode forced for every ``frame.jit``: ``frame.config.eager``, or
    ``FRAME_EAGER`` in the environment now (``frame.jit`` reads it when a
    function is jitted, so a variable set after import still counts)?"""
    return config.eager or _flag("FRAME_EAGER", False)
