"""frame: a deep-learning framework whose main path is compiled.

    import frame
    x = frame.tensor([[1.0, 2.0]])
    frame.relu(x * 2 - 3)
"""
from __future__ import annotations

__version__ = "0.1.0"

from .dtypes import (DType, float16, float32, float64, int32, int64, bool_, complex64,
                     complex128, int8, int16, uint8, uint16, uint32, uint64)
from .errors import (ErrorCode, FrameError, FrameValueError, FrameTypeError, FrameAxisError,
                         FrameIndexError)
from . import backends as _backends  # noqa: F401  (registers backend factories)
from . import ops as _ops  # noqa: F401  (registers the built-in ops)
from .tensor import Tensor, tensor, from_numpy
from .functions import *  # noqa: F401,F403
from . import functions as _functions
from . import _tensor_methods, _numpy_interop  # noqa: F401  (operators, methods, NumPy protocols)
from . import autograd, fft, nn, optim  # noqa: E402  (autograd registers gradient rules)
from .autograd import grad, value_and_grad, no_grad  # noqa: E402
from .runtime.stats import stats, reset_stats  # noqa: E402
from .runtime.report import report  # noqa: E402  (also applies FRAME_LOG, arms FRAME_REPORT)
from .settings import config  # noqa: E402
from . import settings as _settings  # noqa: E402
from ._escape import graph_break, disable  # noqa: E402

__all__ = [
    "__version__", "DType", "float16", "float32", "float64", "int32", "int64", "bool_",
    "complex64", "complex128", "int8", "int16", "uint8", "uint16", "uint32", "uint64",
    "ErrorCode", "FrameError", "FrameValueError", "FrameTypeError",
    "FrameAxisError", "FrameIndexError", "Tensor", "tensor", "from_numpy", "fft", "nn", "optim", "jit", "GraphBreakError",
    "export", "ExportError",
    "stats", "reset_stats", "report", "config", "grad", "value_and_grad", "no_grad",
    "graph_break", "disable",
    *_functions.__all__,
]


def __getattr__(name: str):
    # frame.jit lives in capture/ (above frame/); import it on first use, so
    # importing frame stays cheap and there is no import cycle.
    if name in ("jit", "GraphBreakError", "explain", "export", "ExportError"):
        import capture
        return getattr(capture, name)
    raise AttributeError(f"module 'frame' has no attribute {name!r}")


def _auto_jit_changed() -> None:
    # auto-jit (capture/autojit.py) installs its hooks into Module.__call__ and the op
    # dispatch; it lives in capture/, imported when first switched on (lazy, like frame.jit)
    import capture.autojit
    capture.autojit.sync()


_settings.on_auto_jit_change(_auto_jit_changed)
if config.auto_jit:  # FRAME_AUTO_JIT=1
    _auto_jit_changed()
