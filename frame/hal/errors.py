"""Error codes of the HAL: re-exported from :mod:`frame.errors`, the bottom layer.

The error types live in ``frame/errors.py`` so that every layer (ir, ops, ...)
can raise them without importing the HAL; this module keeps the old import path.
"""
from __future__ import annotations

from ..errors import (ErrorCode, FrameAxisError, FrameError, FrameIndexError, FrameTypeError,
                      FrameValueError, invalid_argument, not_found, unimplemented)

__all__ = ["ErrorCode", "FrameError", "FrameValueError", "FrameTypeError", "FrameAxisError",
           "FrameIndexError",
           "unimplemented", "not_found", "invalid_argument"]
