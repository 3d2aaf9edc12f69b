"""The hardware abstraction layer: what every backend provides.

A backend compiles whole graphs (``compile``) and runs single ops eagerly
(``launch``).  ``Backend.launch`` is called only from ``frame/runtime/``.
"""
from __future__ import annotations

import abc
import threading
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .errors import not_found, unimplemented
from .options import CompileOptions

__all__ = ["KernelInvocation", "Executable", "Backend", "KernelRegistry", "kernel_registry",
           "register_backend", "get_backend", "backend_names"]


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
