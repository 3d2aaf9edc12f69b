"""Variables: what the symbolic stack and locals hold (``base.py`` has the
protocol).

The kinds' modules import each other only downwards, in this order; a kind
that needs a behaviour owned by a module above it (the ``Variable`` base
iterating through ``containers.IteratorVariable``, a tensor's ``.grad`` in
``capture/autograd.py``) calls it through ``registry.HOOKS``, which the owner
fills when it is imported.  Importing the package imports every kind, so every
hook of ``capture/variables`` and every wrap rule is in place; the hooks of
``capture/autograd.py`` are filled when the translator imports it.
"""
from . import registry  # noqa: F401  (isort: skip)
from . import base  # noqa: F401  (isort: skip)
from . import scalars  # noqa: F401  (isort: skip)
from . import tensor_ops  # noqa: F401  (isort: skip)
from . import callables  # noqa: F401  (isort: skip)
from . import containers  # noqa: F401  (isort: skip)
from . import flow  # noqa: F401  (isort: skip)
from . import itertools_calls  # noqa: F401  (isort: skip)
from . import stdlib  # noqa: F401  (isort: skip)
from . import objects  # noqa: F401  (isort: skip)
from . import numpy_calls  # noqa: F401  (isort: skip)
from . import numpy_random  # noqa: F401  (isort: skip)
from . import container_methods  # noqa: F401  (isort: skip)
from . import builtins  # noqa: F401  (isort: skip)
from . import grad  # noqa: F401  (isort: skip)
from . import instances  # noqa: F401  (isort: skip)
from . import lru_cache  # noqa: F401  (isort: skip)
