"""The cpu backend: NumPy reference kernels for eager launches, and a
compiled executable for whole graphs.

``launch`` runs an op's reference kernel.  ``compile`` generates one
straight-line Python function per graph over buffers preallocated from the
memory plan (``codegen.py``; the ``out=`` lowerings are in
``lowerings.py``).  Every registered op is supported: ops without a lowering
call their reference kernel from the generated code.  ``serialize`` /
``deserialize`` persist compiled executables (``persist.py``).
"""
from __future__ import annotations

from ...hal.backend import Artifact, Backend, Executable, KernelInvocation, kernel_registry
from ...errors import unimplemented
from ...hal.options import CompileOptions
from ...ir.graph import Graph, Node
from ...ir.memplan import plan_memory
from ...ops.registry import lookup
from .codegen import build_executable
from . import persist

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

    def supports(self, node: Node) -> bool:
        if node.body is not None:
            return all(self.supports(n) for n in node.body.nodes)
        schema = lookup(node.op)
        return schema is not None and schema.reference is not None

    def compile(self, graph: Graph, options: CompileOptions | None = None) -> Executable:
        """One generated function for ``graph`` over ``graph.meta['memory_plan']``
        (computed here when the memory_planning pass did not run)."""

        for node in graph.nodes:
            if not self.supports(node):
                raise unimplemented(f"backend 'cpu' cannot compile op '{node.op}': it is not "
                                    f"registered or has no reference kernel")
        plan = graph.meta.get("memory_plan")
        if plan is None:
            plan = plan_memory(graph)
        return build_executable(graph, plan)

    def serialize(self, graph: Graph, executable: Executable,
                  options: CompileOptions) -> Artifact | None:
        """The graph text, constant payloads and memory plan (``persist.py``)."""
        return persist.serialize(graph, executable)

    def deserialize(self, artifact: Artifact, options: CompileOptions) -> Executable:
        """Regenerate the executable from ``serialize``'s artifact, without passes."""
        return persist.deserialize(artifact)

    def artifact_version(self, options: CompileOptions) -> str:
        import numpy
        return f"cpu-codegen/{persist.FORMAT} numpy/{numpy.__version__}"
