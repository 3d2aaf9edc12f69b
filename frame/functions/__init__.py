"""Every user-facing op function; re-exported as ``frame.<name>``.

Each module lists its public functions in ``__all__`` and, in ``METHODS``,
those whose first argument is a tensor: they are bound as Tensor methods too.
"""
from . import creation, elementwise, linalg, nn, random, reduction, shape
from .creation import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .nn import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403

_MODULES = (creation, elementwise, linalg, nn, random, reduction, shape)
__all__ = [name for m in _MODULES for name in m.__all__]
TENSOR_METHODS = [name for m in _MODULES for name in m.METHODS]
