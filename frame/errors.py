"""Error types and codes shared by every layer of frame (the bottom layer: imports nothing of frame)."""
from __future__ import annotations

import enum

__all__ = ["ErrorCode", "FrameError", "FrameValueError", "FrameTypeError", "FrameAxisError",
           "FrameIndexError",
           "unimplemented", "not_found", "invalid_argument"]


class ErrorCode(enum.Enum):
    UNIMPLEMENTED = "UNIMPLEMENTED"      # a backend cannot do this op/dtype: triggers fallback
    NOT_FOUND = "NOT_FOUND"              # no such backend / op / device: a hard error
    INVALID_ARGUMENT = "INVALID_ARGUMENT"  # the user's arguments are wrong
    INTERNAL = "INTERNAL"                # a bug in frame


class FrameError(Exception):
    """Base of every error frame raises on purpose.  ``.code`` is an ErrorCode."""

    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def __reduce__(self):
        return (type(self)._rebuild, (self.code, self.message))

    @classmethod
    def _rebuild(cls, code, message):
        err = cls.__new__(cls)
        FrameError.__init__(err, code, message)
        return err

    def __str__(self) -> str:
        return self.message

    def with_message(self, message: str) -> "FrameError":
        """A copy of this error (same class and code) with another message."""
        new = self.__class__.__new__(self.__class__)
        FrameError.__init__(new, self.code, message)
        return new


class FrameValueError(FrameError, ValueError):
    """Bad argument values: shapes that do not broadcast, bad attrs, ..."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


class FrameTypeError(FrameError, TypeError):
    """Bad argument types or dtypes."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


class FrameIndexError(FrameError, IndexError):
    """An index out of range; an IndexError too, as NumPy raises."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


class FrameOverflowError(FrameValueError, OverflowError):
    """A Python integer out of bounds for the dtype it meets (``uint8_tensor + 300``):
    an OverflowError too, as NumPy 2 raises."""


class FrameAxisError(FrameError, ValueError, IndexError):
    """An axis out of range (a ValueError and an IndexError, like NumPy's AxisError)."""

    def __init__(self, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)


def unimplemented(message: str) -> FrameError:
    return FrameError(ErrorCode.UNIMPLEMENTED, message)


def not_found(message: str) -> FrameError:
    return FrameError(ErrorCode.NOT_FOUND, message)


def invalid_argument(message: str) -> FrameValueError:
    return FrameValueError(message)
