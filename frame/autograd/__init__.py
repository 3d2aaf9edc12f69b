"""frame.autograd: reverse mode as a graph-to-graph transform.

``build_backward_graph(graph, loss_index, wrt)`` (backward.py) is the one
engine; gradient rules are registered on the op schemas by ``gradient_rule``
(registry.py), one rule per op, in the ``rules_*`` modules, which importing
this package loads.  Eager mode records the ops it runs on tensors that
require grad (tape.py); ``Tensor.backward`` turns the record into a graph and
runs the same engine on it (eager.py); ``frame.grad`` / ``value_and_grad``
are function transforms on top (functional.py).
"""
from .registry import (NONDIFFERENTIABLE_OPS, NonDifferentiableError, gradient_rule,
                       is_differentiable, nondifferentiable_reason)
from .helpers import unbroadcast
from . import rules_elementwise, rules_shape, rules_nn, rules_scan, rules_linalg, rules_contract  # noqa: F401  (register the rules)
from .backward import build_backward_graph
from .tape import AutogradError, enable_grad, is_grad_enabled, no_grad
from .eager import gradients
from .functional import grad, value_and_grad

__all__ = ["build_backward_graph", "gradient_rule", "unbroadcast", "NonDifferentiableError",
           "is_differentiable", "nondifferentiable_reason", "NONDIFFERENTIABLE_OPS",
           "AutogradError", "no_grad", "enable_grad", "is_grad_enabled", "gradients", "grad",
           "value_and_grad"]
