"""frame.config (defined here in ``frame.settings``): every setting, with its
environment variable (docs/design.md §10).

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
import textwrap
from typing import Any, Callable

__all__ = ["Config", "config", "LOG_CHANNELS", "eager_forced", "environment_help"]

LOG_CHANNELS = ("graph_breaks", "recompiles", "guards", "graph", "bytecode", "fallbacks",
                "hotpath")


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


def _setting(default, env: str, help: str, read: Callable[[str, Any], Any], *,
             factory: Callable[[], Any] | None = None):
    """A Config field: its default, its environment variable, one line of help
    and ``read(env, default)`` -- the one description ``from_env``, ``describe``
    and ``python -m frame --help``'s Environment section are made from."""
    meta = {"env": env, "help": help, "read": read}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _str(name: str, default):
    return os.environ.get(name) or default


def _log_env(name: str, default):
    return _channels(os.environ.get(name, ""), strict=False) or default


def _cache_dir_env(name: str, default):
    return _cache_dir()


def _flag_env(name: str, default):
    return _flag(name, default)


def _optional_flag_env(name: str, default):
    return _optional_flag(name)


def _threads_env(name: str, default):
    return _threads(name)


@dataclasses.dataclass
class Config:
    eager: bool = _setting(False, "FRAME_EAGER", "frame.jit runs functions natively, capturing "
                           "nothing", _flag_env)
    backend: str | None = _setting(None, "FRAME_BACKEND", "the jit's default backend: openvino "
                                   "or cpu (unset: openvino if installed, else cpu)", _str)
    dynamic_scalars: bool = _setting(True, "FRAME_DYNAMIC_SCALARS", "a Python int/float whose "
                                     "value guard failed becomes a graph input instead of a "
                                     "constant (docs/capture.md, Dynamic scalars)", _flag_env)
    report: bool = _setting(False, "FRAME_REPORT", "print frame.report() at exit", _flag_env)
    log: tuple[str, ...] = _setting((), "FRAME_LOG", "comma list of log channels: "
                                    + ", ".join(LOG_CHANNELS) + ", all", _log_env)
    dump_ir_after: str | None = _setting(None, "FRAME_DUMP_IR_AFTER", "print the IR after this "
                                         "pass (a pass name)", _str)
    # "" = no persistent cache at all (neither frame's entries nor OpenVINO's model cache)
    cache_dir: str = _setting(None, "FRAME_CACHE_DIR", "the persistent cache's directory "
                              "(unset: $XDG_CACHE_HOME/frame or ~/.cache/frame; empty: none)",
                              _cache_dir_env, factory=_default_cache_dir)
    cache: bool = _setting(True, "FRAME_CACHE", "the persistent on-disk compile cache "
                           "(frame's entries and OpenVINO's model cache)",
                           _flag_env)
    cache_max_bytes: int = _setting(1 << 30, "FRAME_CACHE_MAX_BYTES", "the persistent cache's "
                                    "size limit in bytes", _int)
    tiered: bool = _setting(True, "FRAME_TIERED", "tiered compilation: cpu tier first, slow "
                            "tier in the background", _flag_env)
    hot_threshold: int = _setting(2, "FRAME_HOT_THRESHOLD", "calls of a graph before its slow "
                                  "tier compiles", _int)
    max_pending: int = _setting(4, "FRAME_MAX_PENDING", "background compiles in flight at most",
                                _int)
    compile_timeout_s: float = _setting(60.0, "FRAME_COMPILE_TIMEOUT_S", "a background compile "
                                        "taking longer is given up (seconds)", _float)
    # at exit, wait this long at most for a background compile in flight (queued ones are
    # dropped; OpenVINO aborts a process that exits in the middle of compile_model)
    compile_exit_wait_s: float = _setting(10.0, "FRAME_COMPILE_EXIT_WAIT_S", "at exit, wait this "
                                          "long at most for a background compile (seconds)",
                                          _float)
    # a background compile starts after this long without a foreground compile (first
    # results first), or after waiting 2 s regardless
    tier_quiet_s: float = _setting(0.1, "FRAME_TIER_QUIET_S", "quiet time without foreground "
                                   "compiles before a background compile starts (seconds)",
                                   _float)
    min_graph_ops: int = _setting(1, "FRAME_MIN_GRAPH_OPS", "smaller graphs run op by op "
                                  "instead of being compiled", _int)
    # Who owns the cores (docs/performance.md; applied by frame.runtime.threads when
    # a backend is first used): None = frame's rule, 0 = leave to the library
    blas_threads: int | None = _setting(None, "FRAME_BLAS_THREADS", "NumPy's BLAS pool size "
                                        "(empty: frame's rule; 0: the library's)", _threads_env)
    ov_threads: int | None = _setting(None, "FRAME_OV_THREADS", "OpenVINO's "
                                      "INFERENCE_NUM_THREADS (empty: frame's rule; 0: "
                                      "OpenVINO's)", _threads_env)
    ov_pinning: bool | None = _setting(None, "FRAME_OV_PINNING", "OpenVINO's "
                                       "ENABLE_CPU_PINNING (empty: frame's rule)",
                                       _optional_flag_env)
    cpu_threads: int | None = _setting(None, "FRAME_CPU_THREADS", "threads a large elementwise "
                                       "region of the cpu executable runs on, the caller "
                                       "included (empty: every core; 0 or 1: the caller "
                                       "alone)", _threads_env)
    compile_cache_size: int = _setting(256, "FRAME_COMPILE_CACHE_SIZE", "executables the "
                                       "in-process compile cache keeps (least recently used "
                                       "dropped first)", _int)
    pgo: bool = _setting(True, "FRAME_PGO", "measure the tiers of a graph whose backend the "
                         "user did not name and keep the fastest", _flag_env)
    pgo_trial_calls: int = _setting(6, "FRAME_PGO_TRIAL_CALLS", "timed calls per tier (PGO)",
                                    _int)
    pgo_margin: float = _setting(0.05, "FRAME_PGO_MARGIN", "hysteresis: the fast tier is kept "
                                 "only when this much faster (PGO)", _float)
    pgo_drift: float = _setting(0.0, "FRAME_PGO_DRIFT", "a decided graph whose sampled call "
                                "time moves this factor away from its trial median (either "
                                "way) is measured again (PGO; 0, the default: never; 1.3 "
                                "was tried)", _float)
    cooldown_s: float = _setting(0.05, "FRAME_COOLDOWN_S", "a graph whose slow-tier request was "
                                 "refused (backpressure) asks again after this long (seconds)",
                                 _float)
    # automatic jit of hot eager code (capture/autojit.py, docs/compiler.md "Automatic jit of
    # hot eager code"): off by default; assigning frame.config.auto_jit takes effect at once
    auto_jit: bool = _setting(False, "FRAME_AUTO_JIT", "compile hot eager code by itself: "
                              "module calls and functions whose op sequence repeats are "
                              "captured and compiled in the background", _flag_env)
    auto_jit_threshold: int = _setting(5, "FRAME_AUTO_JIT_THRESHOLD", "calls of a unit (with "
                                       "the same op sequence) before auto-jit compiles it",
                                       _int)
    auto_jit_modules: bool = _setting(True, "FRAME_AUTO_JIT_MODULES", "auto-jit counts and "
                                      "compiles nn.Module calls", _flag_env)
    auto_jit_functions: bool = _setting(True, "FRAME_AUTO_JIT_FUNCTIONS", "auto-jit counts "
                                        "and compiles user functions whose op sequence "
                                        "repeats", _flag_env)
    auto_jit_cooldown_s: float = _setting(30.0, "FRAME_AUTO_JIT_COOLDOWN_S", "a unit whose "
                                          "auto-jit capture or compile failed runs eagerly "
                                          "this long before it is tried again (seconds)",
                                          _float)
    trace_dir: str | None = _setting(None, "FRAME_TRACE_DIR", "record compile events there, one "
                                     "JSON-lines file per process; python -m frame "
                                     "trace-report DIR renders them as one HTML page", _str)

    def __post_init__(self) -> None:
        # setting name -> where its value came from: "env FRAME_X" or "set in code"
        # (absent: the default); assignments from here on are the program's
        object.__setattr__(self, "_sources", {})

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.__dataclass_fields__:
            raise AttributeError(f"frame.config has no setting {name!r}; "
                                 f"settings: {', '.join(self.__dataclass_fields__)}")
        if name == "log":
            value = _channels(value)
        elif name in ("blas_threads", "ov_threads", "cpu_threads"):
            value = _thread_count(f"frame.config.{name}", value)
        elif name == "ov_pinning" and value is not None:
            value = bool(value)
        object.__setattr__(self, name, value)
        sources = self.__dict__.get("_sources")
        if sources is not None:
            sources[name] = "set in code"
        if name == "log" and self is globals().get("config") and _log_listener is not None:
            _log_listener(value)  # FRAME_LOG takes effect at once (frame/runtime/logs.py)
        if name in _AUTO_JIT_SETTINGS and self is globals().get("config") \
                and _auto_jit_listener is not None:
            _auto_jit_listener()  # auto-jit's hooks follow at once (capture/autojit.py)

    @contextlib.contextmanager
    def override(self, **changes):
        """Temporarily change settings (tests, benchmarks)."""
        old = {k: getattr(self, k) for k in changes}
        old_sources = dict(self._sources)
        for k, v in changes.items():
            setattr(self, k, v)
        try:
            yield self
        finally:
            for k, v in old.items():
                setattr(self, k, v)
            self._sources.clear()
            self._sources.update(old_sources)

    @classmethod
    def from_env(cls) -> "Config":
        """The settings as the environment gives them (defaults for the unset)."""
        values, sources = {}, {}
        for field in dataclasses.fields(cls):
            env, read = field.metadata["env"], field.metadata["read"]
            default = field.default_factory() if field.default is dataclasses.MISSING \
                else field.default
            values[field.name] = read(env, default)
            if env in os.environ:
                sources[field.name] = f"env {env}"
        cfg = cls(**values)
        cfg._sources.update(sources)
        return cfg

    def source(self, name: str) -> str:
        """Where setting ``name``'s value came from: ``"default"``, ``"env FRAME_X"``
        (read at import) or ``"set in code"`` (assigned since)."""
        if name not in self.__dataclass_fields__:
            raise AttributeError(f"frame.config has no setting {name!r}")
        return self._sources.get(name, "default")

    def describe(self) -> str:
        """Every setting, its effective value and where it came from, one a line
        (``python -m frame config`` prints it)."""
        rows = [("setting", "value", "from", "environment variable")]
        for field in dataclasses.fields(self):
            rows.append((field.name, repr(getattr(self, field.name)), self.source(field.name),
                         field.metadata["env"]))
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}".rstrip()
                         for a, b, c, d in rows)


def environment_help() -> str:
    """The environment variables frame reads, with their defaults: the
    "Environment" section of ``python -m frame --help`` (from Config's fields)."""
    lines = []
    for field in dataclasses.fields(Config):
        default = field.default_factory() if field.default is dataclasses.MISSING else field.default
        lines.append(f"  {field.metadata['env']}  (frame.config.{field.name}, default {default!r})")
        lines.extend(textwrap.wrap(field.metadata["help"], 76, initial_indent="      ",
                                   subsequent_indent="      "))
    return "\n".join(lines)


# Called with the new channels when ``config.log`` is assigned; frame/runtime/logs.py
# installs its ``apply`` here when imported (``import frame`` does), since this module,
# at the bottom of the layers, cannot import the runtime.
_log_listener: Callable[[tuple[str, ...]], None] | None = None


def on_log_change(listener: Callable[[tuple[str, ...]], None]) -> None:
    """Make ``listener(channels)`` run whenever ``frame.config.log`` is assigned."""
    global _log_listener
    _log_listener = listener


# Called (no arguments) when one of these settings is assigned: frame/__init__.py installs
# the switch of capture/autojit.py's hooks here (settings cannot import above itself).
_AUTO_JIT_SETTINGS = frozenset({"auto_jit", "auto_jit_modules", "auto_jit_functions"})
_auto_jit_listener: Callable[[], None] | None = None


def on_auto_jit_change(listener: Callable[[], None]) -> None:
    """Make ``listener()`` run whenever ``frame.config.auto_jit`` (or one of its
    per-feature switches) is assigned."""
    global _auto_jit_listener
    _auto_jit_listener = listener


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
