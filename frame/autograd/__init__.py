"""frame.autograd: reverse mode as a graph-to-graph transform.

``build_backward_graph(graph, loss_index, wrt)`` (backward.py) is the one
engine; gradient rules are registered on the op schemas by ``gradient_rule``
(registry.py), one rule per op, in the ``rules_*`` modules, which importing
this package loads.
"""
from .registry import (NONDIFFERENTIABLE_OPS, NonDifferentiableError, gradient_rule,
                       is_differentiable, nondifferentiable_reason)
from .helpers import unbroadcast
from . import rules_elementwise, rules_shape, rules_nn  # noqa: F401  (register the rules)
from .backward import build_backward_graph

__all__ = ["build_backward_graph", "gradient_rule", "unbroadcast", "NonDifferentiableError",
           "is_differentiable", "nondifferentiable_reason", "NONDIFFERENTIABLE_OPS"]
