"""The hardware abstraction layer: what every backend provides.

A backend compiles whole graphs (``compile``) and runs single ops eagerly
(``launch``).  ``Backend.launch`` is called only from ``frame/runtime/``.

Persistence (the on-disk compile cache, ``frame/runtime/persistent.py``) is an
optional part of the contract: ``serialize`` turns an executable this backend
compiled into an ``Artifact`` (JSON-able metadata plus named byte blobs), and
``deserialize`` rebuilds an equivalent executable from it without running the
pass pipeline again; ``artifact_version`` names everything besides the graph
and the options that changes what ``compile`` produces (library version,
code generator).  A backend that does not override ``serialize`` is simply
never persisted.  The runtime stores and checksums the artifact; a backend
only has to refuse (raise) what it cannot rebuild exactly.
"""
from __future__ import annotations

import abc
import dataclasses
import io
import threading
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..dtypes import as_dtype
from ..ir.text import dump_text, graph_constants, parse_text
from ..ir.types import TensorType
from .errors import not_found, unimplemented
from .options import CompileOptions

__all__ = ["KernelInvocation", "Executable", "Backend", "KernelRegistry", "kernel_registry",
           "register_backend", "get_backend", "backend_names", "Artifact", "pack_graph",
           "unpack_graph"]


class KernelInvocation:
    """One op to run eagerly: op name, input arrays, attrs, device."""

    __slots__ = ("op", "inputs", "attrs", "device")

    def __init__(self, op: str, inputs: Sequence[np.ndarray], attrs: Mapping[str, Any],
                 device: str = "cpu"):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.device = device

    def __repr__(self) -> str:
        types = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.inputs)
        return f"KernelInvocation({self.op}({types}) {dict(self.attrs)} @{self.device})"


class Executable(abc.ABC):
    """A compiled graph.  ``run`` takes and returns lists of host arrays."""

    input_types: tuple = ()
    output_types: tuple = ()

    @abc.abstractmethod
    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run the graph on host arrays; outputs never alias backend buffers."""


Kernel = Callable[[Sequence[np.ndarray], Mapping[str, Any]], Sequence[np.ndarray]]


@dataclasses.dataclass(frozen=True)
class Artifact:
    """What ``Backend.serialize`` returns and ``Backend.deserialize`` takes.

    ``meta`` must survive a JSON round trip (str keys; str, int, float, bool,
    None, lists, dicts); ``blobs`` holds the binary parts by name (a compiled
    model, constant payloads).
    """

    meta: dict[str, Any]
    blobs: dict[str, bytes] = dataclasses.field(default_factory=dict)


def type_to_json(t) -> list:
    """A TensorType as artifact meta: ``[dtype name, [dims]]``."""
    return [t.dtype.name, list(t.shape)]


def type_from_json(item: list):
    """The inverse of ``type_to_json``."""
    name, shape = item
    return TensorType(as_dtype(str(name)), tuple(int(d) for d in shape))


def pack_graph(graph) -> tuple[str, bytes]:
    """``(dump_text(graph), payloads)``: a graph as artifact parts.  Payloads too
    large to print in the text (``graph_constants``) go into one ``.npz`` blob
    (no pickles).  ``unpack_graph`` is the inverse."""
    constants = graph_constants(graph)
    buf = io.BytesIO()
    np.savez(buf, digests=np.array(list(constants), dtype=str),
             **{f"c{i}": a for i, a in enumerate(constants.values())})
    return dump_text(graph), buf.getvalue()


def unpack_graph(text: str, payloads: bytes):
    """The graph ``pack_graph`` packed (raises on malformed parts)."""
    if "digest=sha256:" not in text:  # every payload is printed in the text
        return parse_text(text, {})
    with np.load(io.BytesIO(payloads), allow_pickle=False) as z:
        digests = [str(d) for d in z["digests"]]
        constants = {d: z[f"c{i}"] for i, d in enumerate(digests)}
    return parse_text(text, constants)


class KernelRegistry:
    """(op, backend) -> eager kernel.  Kernels take (inputs, attrs) and return outputs."""

    def __init__(self):
        self._kernels: dict[tuple[str, str], Kernel] = {}
        self._providers: dict[str, Callable[[str], Kernel | None]] = {}

    def register(self, op: str, backend: str, kernel: Kernel) -> None:
        self._kernels[(op, backend)] = kernel

    def set_provider(self, backend: str, provider: Callable[[str], Kernel | None]) -> None:
        """A fallback source of kernels for ``backend`` (the cpu backend serves every
        registered op's reference kernel this way, including ops registered later)."""
        self._providers[backend] = provider

    def get(self, op: str, backend: str) -> Kernel | None:
        kernel = self._kernels.get((op, backend))
        if kernel is None:
            provider = self._providers.get(backend)
            if provider is not None:
                kernel = provider(op)
                if kernel is not None:
                    self._kernels[(op, backend)] = kernel
        return kernel

    def ops_for(self, backend: str) -> set[str]:
        return {op for (op, b) in self._kernels if b == backend}


kernel_registry = KernelRegistry()


class Backend:
    """Base class of backends.  Subclasses set ``name`` and override the methods."""

    name: str = "?"

    def compile(self, graph, options: CompileOptions) -> Executable:
        raise unimplemented(f"backend '{self.name}' cannot compile graphs")

    def launch(self, invocation: KernelInvocation) -> Sequence[np.ndarray]:
        kernel = kernel_registry.get(invocation.op, self.name)
        if kernel is None:
            raise unimplemented(f"backend '{self.name}' has no eager kernel for op '{invocation.op}'")
        return kernel(invocation.inputs, invocation.attrs)

    def supports(self, node) -> bool:
        return False

    def fallback_advice(self, nodes) -> str | None:
        """What the user can do so that ``nodes`` (which this backend could not
        compile; they ran via the fallback chain) compile here, as one sentence
        for the graph's fallback WARN; None when there is no advice (the default)."""
        return None

    # -- persistence (optional; see the module docstring) --------------------------------
    def serialize(self, graph, executable: Executable, options: CompileOptions) -> Artifact | None:
        """An artifact from which ``deserialize`` rebuilds ``executable``, which
        ``compile(graph, options)`` returned; None when it cannot be persisted
        (the default).  ``graph`` is the graph ``compile`` was given (after the
        pass pipeline)."""
        return None

    def deserialize(self, artifact: Artifact, options: CompileOptions) -> Executable:
        """Rebuild an executable from ``serialize``'s artifact, without passes.
        Raises (any exception) when the artifact cannot be rebuilt exactly; the
        runtime then ignores the entry and compiles again."""
        raise unimplemented(f"backend '{self.name}' cannot load persisted executables")

    def artifact_version(self, options: CompileOptions) -> str:
        """Everything besides graph and options that changes the artifact (e.g. the
        compiler library's version); an entry made under another version is ignored."""
        return ""

    def __repr__(self) -> str:
        return f"<frame backend {self.name!r}>"


_factories: dict[str, Callable[[], Backend]] = {}
_instances: dict[str, Backend] = {}
_lock = threading.Lock()


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Register a backend factory; it is called once, on first ``get_backend(name)``."""
    with _lock:
        _factories[name] = factory
        _instances.pop(name, None)


def get_backend(name: str) -> Backend:
    """The backend instance for ``name``; ``FrameError(NOT_FOUND)`` for unknown names."""
    inst = _instances.get(name)
    if inst is not None:
        return inst
    with _lock:
        inst = _instances.get(name)
        if inst is None:
            factory = _factories.get(name)
            if factory is None:
                known = ", ".join(sorted(_factories)) or "none"
                raise not_found(f"no backend named {name!r} (registered backends: {known})")
            inst = factory()
            _instances[name] = inst
    return inst


def backend_names() -> list[str]:
    return sorted(_factories)
