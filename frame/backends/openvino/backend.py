"""The openvino backend: whole graphs lowered to one ``ov.Model`` each, compiled
with ``Core.compile_model`` for a device, run through pre-bound tensors.

    exe = frame.runtime.compile.compile(graph, "openvino")
    outputs = exe.run([x, w])

Honesty first: ``supports(node)`` is False, and ``why_unsupported(node)``
says why (op and dtype), for every node the CPU plugin would not compute
exactly as the reference kernel does (``support.py``); ``compile`` raises
UNIMPLEMENTED for graphs holding such nodes and the runtime falls back.

Compile settings: ``INFERENCE_PRECISION_HINT`` from ``CompileOptions.precision``
(``f32`` by default, so nothing is silently computed in bf16/f16), subnormals
kept on CPU (NumPy keeps them), and OpenVINO's own model cache in
``<frame.config.cache_dir>/openvino`` (``FRAME_CACHE_DIR``, default
``~/.cache/frame/openvino``; an empty ``FRAME_CACHE_DIR`` turns it off, as it
turns off frame's own cache), so a second process compiles the same graph
from the cache.  The cache is an optimisation: a directory that cannot be
created or written (a file, a path under a file, no permission) logs one
WARN (``frame.cache``) and compiles run without it; a ``compile_model`` that
fails with the cache on (processes writing one cache entry at once) logs a
WARN and is run once more without it.  ``serialize`` / ``deserialize`` persist a compiled
executable as ``export_model`` bytes for frame's own on-disk compile cache,
which skips lowering and ``compile_model`` altogether (``persist.py``).
"""
from __future__ import annotations

import logging
import os
import threading
from typing import Sequence

import numpy as np
import openvino as ov

from ...hal.backend import Artifact, Backend, Executable, KernelInvocation, kernel_registry
from ...errors import ErrorCode, FrameError, invalid_argument, not_found
from ...hal.options import CompileOptions
from ...ir.clone import clone_graph
from ...ir.graph import Graph, Node
from ...settings import config as frame_config
from .eager import NEVER_EAGER, EagerCache, EagerKernel
from .executable import OpenVinoExecutable
from .lower import lower_graph
from . import persist  # module attributes looked up per call (tests wrap them)
from .support import first_unsupported, unsupported_reason
from .table import RULES

__all__ = ["OpenVinoBackend", "model_cache_dir", "usable_cache_dir", "VIRTUAL_DEVICES",
           "PRECISIONS"]

# devices that pick among the physical ones rather than being one
VIRTUAL_DEVICES = ("AUTO",)
# INFERENCE_PRECISION_HINT values; anything but f32 trades exactness for speed
PRECISIONS = ("f32", "f16", "bf16")
# Below this many elements in its largest tensor, a graph runs on one CPU thread:
# measured on 2 cores, one thread is 5-15% faster per call up to ~64K elements (no
# pool wake-up), while a 1024x1024 elementwise graph is ~1.4x faster on two.
ONE_THREAD_BELOW = 1 << 16
# The CPU plugin's "snippets" (JIT-generated kernels for fused elementwise
# subgraphs) are off: measured on the 55-node MLP training-step graph, they make
# compile_model 1.4x and import_model 2.5x slower (72 -> 50 ms, 26 -> 10.5 ms)
# for no gain per call (2.1 ms either way), and the 1024x1024 tanh-GELU runs
# within noise on one thread (1562 vs 1550 us), 8% slower without them on two.
# options.extra (("SNIPPETS_MODE", "ENABLE"),) turns them back on.
SNIPPETS_MODE = "DISABLE"


log = logging.getLogger("frame.cache")


def model_cache_dir() -> str | None:
    """Where OpenVINO caches compiled models: ``<frame.config.cache_dir>/openvino``
    (the one reading of FRAME_CACHE_DIR, shared with frame's own cache); None
    when the setting is empty.  ``compile_model`` uses it only while the
    persistent cache is on (``frame.config.cache``, FRAME_CACHE)."""
    base = frame_config.cache_dir
    if not base:
        return None
    return os.path.join(os.path.abspath(os.path.expanduser(base)), "openvino")


_usable: dict[str, bool] = {}
_usable_lock = threading.Lock()


def usable_cache_dir(path: str) -> bool:
    """Can OpenVINO keep its model cache in ``path``?  Created when missing; the
    first unusable directory of a process logs one WARN, and the answer is
    remembered per directory (a compile never fails for want of a cache)."""
    with _usable_lock:
        known = _usable.get(path)
        if known is not None:
            return known
        try:
            os.makedirs(path, exist_ok=True)
            if not os.access(path, os.W_OK | os.X_OK):
                raise PermissionError(f"no write permission for {path!r}")
            ok = True
        except OSError as err:
            warned = any(v is False for v in _usable.values())
            log.log(logging.DEBUG if warned else logging.WARNING,
                    "OpenVINO model cache: cannot use %s (%s: %s); compiling without it",
                    path, type(err).__name__, err)
            ok = False
        _usable[path] = ok
        return ok


def openvino_message(err: BaseException) -> str:
    """The informative part of an OpenVINO exception: its lines without the
    "Exception from src/...cpp:N:" location headers (which may be all a short
    message has: then the first of them)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    said = [line for line in lines
            if not (line.startswith("Exception from ") and line.endswith(":"))]
    if said:
        return " ".join(said)
    return lines[0] if lines else repr(err)


def _largest_tensor(graph: Graph) -> int:
    sizes = [v.type.size for v in graph.inputs]
    for node in graph.nodes:
        sizes.extend(v.type.size for v in node.outputs)
    return max(sizes, default=0)


class OpenVinoBackend(Backend):
    name = "openvino"

    def __init__(self, core: ov.Core | None = None):
        self.core = core if core is not None else ov.Core()
        self._devices: list[str] | None = None
        self._lock = threading.Lock()
        self.eager = EagerCache(self)
        kernel_registry.set_provider(self.name, self._kernel_for)

    # -- devices and settings ------------------------------------------------------
    def available_devices(self) -> list[str]:
        if self._devices is None:
            self._devices = list(self.core.available_devices)
        return self._devices

    def device_for(self, options: CompileOptions) -> str:
        """The OpenVINO device name for ``options.device``; NOT_FOUND when absent."""
        wanted = (options.device or "CPU").upper()
        physical = self.available_devices()
        family = wanted.split(".", 1)[0]
        if wanted in physical or (family in VIRTUAL_DEVICES and physical):
            return wanted
        if wanted == family and any(d.split(".", 1)[0] == family for d in physical):
            return wanted  # "GPU" when only "GPU.0" is listed
        shown = ", ".join(physical + list(VIRTUAL_DEVICES)) or "none"
        raise not_found(f"backend 'openvino': device {options.device!r} is not available here "
                        f"(available devices: {shown})")

    def config_for(self, device: str, options: CompileOptions,
                   graph: Graph | None = None) -> dict[str, object]:
        precision = options.precision or "f32"
        if precision not in PRECISIONS:
            raise invalid_argument(f"backend 'openvino': precision {precision!r} is not one of "
                                   f"{', '.join(PRECISIONS)}")
        config: dict[str, object] = {"INFERENCE_PRECISION_HINT": precision}
        if device == "CPU":
            config["CPU_DENORMALS_OPTIMIZATION"] = False
            config["SNIPPETS_MODE"] = SNIPPETS_MODE
            if graph is not None and _largest_tensor(graph) < ONE_THREAD_BELOW:
                config["INFERENCE_NUM_THREADS"] = 1
        # FRAME_CACHE=0 turns OpenVINO's model cache off too: nothing is persisted
        # (and writing a blob per compile cost ~10% of a test suite of small graphs)
        cache = model_cache_dir() if frame_config.cache else None
        if cache is not None and usable_cache_dir(cache):
            config["CACHE_DIR"] = cache
        for key, value in options.extra:  # e.g. ("INFERENCE_NUM_THREADS", "2") wins
            config[key] = value
        return config

    # -- capability ------------------------------------------------------------------
    def supports(self, node: Node) -> bool:
        return unsupported_reason(node) is None

    def why_unsupported(self, node: Node) -> str | None:
        return unsupported_reason(node)

    def fallback_advice(self, nodes) -> str | None:
        names = {v.type.dtype.name for n in nodes for v in (*n.inputs, *n.outputs)}
        wide = sorted(names & {"float64", "complex128"})
        if wide:
            return (f"The OpenVINO CPU plugin computes {' and '.join(wide)} in single precision, "
                    f"so these ops run outside OpenVINO to keep NumPy's results. Fix: pass "
                    f"float32 inputs (x.astype(np.float32)) to compile them with OpenVINO, or "
                    f"use frame.jit(..., backend=\"cpu\"), which compiles float64 as it is.")
        if "int64" in names:
            return ("The OpenVINO CPU plugin computes int64 in int32, so int64 arithmetic runs "
                    "outside OpenVINO. Fix: use int32 where the values fit, or "
                    "frame.jit(..., backend=\"cpu\").")
        return None

    # -- whole graphs ------------------------------------------------------------------
    def compile(self, graph: Graph, options: CompileOptions | None = None) -> Executable:
        options = options or CompileOptions()
        device = self.device_for(options)  # NOT_FOUND before any UNIMPLEMENTED: it is final
        bad = first_unsupported(graph.nodes)
        if bad:
            node, why = bad[0]
            more = f" (and {len(bad) - 1} more node(s))" if len(bad) > 1 else ""
            err = FrameError(ErrorCode.UNIMPLEMENTED, f"backend 'openvino' cannot compile this "
                                                      f"graph: {why}{more}")
            err.unsupported = [n for n, _ in bad]  # the fallback chain partitions around them
            raise err
        return self._compile(graph, device, self.config_for(device, options, graph))

    def compile_exact(self, graph: Graph) -> OpenVinoExecutable:
        """Compile an already checked graph for the default CPU settings (eager kernels)."""
        options = CompileOptions()
        device = self.device_for(options)
        return self._compile(graph, device, self.config_for(device, options, graph))

    def _compile(self, graph: Graph, device: str, config: dict[str, object]) -> OpenVinoExecutable:
        lowered = lower_graph(graph)
        compiled = None
        if lowered.model is not None:
            try:
                compiled = self._compile_model(lowered.model, device, config)
            except RuntimeError as err:
                raise FrameError(ErrorCode.INTERNAL, f"backend 'openvino': compile_model failed "
                                                     f"on {device} with {config}: "
                                                     f"{openvino_message(err)}") from err
        # the executable keeps the graph for reference re-runs: a private copy
        return OpenVinoExecutable(clone_graph(graph), lowered, compiled)

    def _compile_model(self, model, device: str, config: dict[str, object]):
        """``compile_model``; when it fails with OpenVINO's model cache on, once more
        without it.  The cache is an optimisation, and several processes compiling
        the same model into one cache directory at once (the ranks of a
        data-parallel job on one host, docs/distributed.md) can make OpenVINO's
        own cache write fail ("filesystem error: cannot set permissions: No such
        file or directory [<cache>/<hash>.blob]", measured with OpenVINO 2026.4)."""
        try:
            return self.core.compile_model(model, device, config)
        except RuntimeError as err:
            if "CACHE_DIR" not in config:
                raise
            log.warning("OpenVINO model cache: compile_model failed with the cache in %s (%s); "
                        "compiling this model without it", config["CACHE_DIR"],
                        openvino_message(err))
            config = {k: v for k, v in config.items() if k != "CACHE_DIR"}
            return self.core.compile_model(model, device, config)

    # -- persistence -----------------------------------------------------------------------
    def serialize(self, graph: Graph, executable: Executable,
                  options: CompileOptions) -> Artifact | None:
        """``export_model`` bytes, the graph and the binding plan (``persist.py``)."""
        device = self.device_for(options)
        if persist.loaded_from_cache(executable):
            # OpenVINO's model cache served this compile and such a model's export
            # does not import: compile it once more, uncached, for the artifact
            executable = self._compile(graph, device, self._import_config(device, options, graph))
        return persist.serialize(graph, executable, device)

    def deserialize(self, artifact: Artifact, options: CompileOptions) -> Executable:
        """``import_model`` with the settings ``compile`` would use, rebound as recorded."""
        device = self.device_for(options)
        return persist.deserialize(self.core, artifact, device,
                                   lambda graph: self._import_config(device, options, graph))

    def _import_config(self, device: str, options: CompileOptions, graph: Graph) -> dict:
        """``config_for`` without OpenVINO's model cache (for import_model, and for
        the uncached compile ``serialize`` may need)."""
        config = self.config_for(device, options, graph)
        config.pop("CACHE_DIR", None)
        return config

    def artifact_version(self, options: CompileOptions) -> str:
        return f"openvino/{ov.get_version()} artifact/{persist.FORMAT}"

    # -- eager ---------------------------------------------------------------------------
    def launch(self, invocation: KernelInvocation) -> Sequence[np.ndarray]:
        """One op on host arrays, through a cached one-op model; UNIMPLEMENTED
        (naming op and dtypes) for what the plugin cannot compute exactly."""
        return self.eager.run(invocation.op, invocation.inputs, invocation.attrs)

    def _kernel_for(self, op: str) -> EagerKernel | None:
        if op in NEVER_EAGER or op not in RULES:
            return None
        return EagerKernel(op, self.eager)
