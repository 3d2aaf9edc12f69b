"""Every user-facing op function; re-exported as ``frame.<name>``."""
from .elementwise import *  # noqa: F401,F403
from . import elementwise as _elementwise

__all__ = [*_elementwise.__all__]

# Functions whose first argument is a tensor are also Tensor methods.
TENSOR_METHODS = [n for n in __all__ if n not in ("where",)]
