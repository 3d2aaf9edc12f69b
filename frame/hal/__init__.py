"""Hardware abstraction layer: Backend, Executable, KernelInvocation, KernelRegistry,
CompileOptions and error codes."""
from .errors import (ErrorCode, FrameError, FrameValueError, FrameTypeError, FrameAxisError,
                     unimplemented, not_found, invalid_argument)
from .options import CompileOptions
from .backend import (KernelInvocation, Executable, Backend, KernelRegistry, kernel_registry,
                      register_backend, get_backend, backend_names)

__all__ = [
    "ErrorCode", "FrameError", "FrameValueError", "FrameTypeError", "FrameAxisError",
    "unimplemented", "not_found", "invalid_argument", "CompileOptions", "KernelInvocation",
    "Executable", "Backend", "KernelRegistry", "kernel_registry", "register_backend",
    "get_backend", "backend_names",
]
