"""The cpu backend: NumPy reference kernels for eager launches.

Its ``compile`` (a generated straight-line executable over a memory plan)
comes with the compiler; until then compiling raises UNIMPLEMENTED.
"""
from __future__ import annotations

from ...hal.backend import Backend, KernelInvocation, kernel_registry
from ...ops.registry import lookup

__all__ = ["CpuBackend"]


def _reference_provider(op: str):
    schema = lookup(op)
    return None if schema is None else schema.reference


kernel_registry.set_provider("cpu", _reference_provider)


class CpuBackend(Backend):
    name = "cpu"

    def launch(self, invocation: KernelInvocation):
        kernel = kernel_registry.get(invocation.op, "cpu")
        if kernel is None:
            return super().launch(invocation)  # raises UNIMPLEMENTED naming the op
        return kernel(invocation.inputs, invocation.attrs)

    def supports(self, node) -> bool:
        return lookup(node.op) is not None
