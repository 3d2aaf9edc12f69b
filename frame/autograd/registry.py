"""Where gradient rules are registered, and which ops have none on purpose.

A rule is written once against the builder interface and stored on the op's
schema (``OpSchema.gradient``); ``gradient_rule`` is the only way rules get
there.  Its signature::

    rule(b: GraphBuilder, inputs: list[Value], outputs: list[Value],
         output_grads: list[Value | None], attrs) -> list[Value | None]

one entry per input: the gradient of the loss with respect to that input
(same shape and dtype as the input), or None for "no gradient" (an integer
or bool input, an index, or a gradient that is zero almost everywhere).
``output_grads[j]`` is None when nothing downstream needs output ``j``.
Rules build nodes only through ``b.op`` / ``b.constant`` / ``b.scalar``, so a
gradient graph is an ordinary graph and can be differentiated again.

Complex values: the gradient of a real loss L with respect to a complex value
z = u + iv is ``dL/du + i dL/dv`` (PyTorch's convention).  Under it, a
product's gradient carries the conjugate of the other factor.

Non-differentiable ops are those with the schema trait ``nondifferentiable``
(comparisons, logical ops, argmax/argmin, arange, full), the ``fused`` op
(trait ``fused``), and those listed in ``NONDIFFERENTIABLE_OPS`` below, which
autograd declares without editing op files.
"""
from __future__ import annotations

from typing import Callable

from ..errors import ErrorCode, FrameError, FrameValueError
from ..ops.registry import get_schema
from ..ops.schema import OpSchema

__all__ = ["NonDifferentiableError", "gradient_rule", "is_differentiable",
           "nondifferentiable_reason", "NONDIFFERENTIABLE_OPS", "GradientRule"]

GradientRule = Callable[..., list]

# op -> why it has no gradient (ops without the schema trait)
NONDIFFERENTIABLE_OPS: dict[str, str] = {
    "constant": "a constant has no inputs to differentiate",
    "logical_not": "its result is bool",
}
_FUSED_REASON = ("a fused node's computation lives in its body, which a gradient rule cannot "
                 "see; differentiate the graph before operator_fusion")


class NonDifferentiableError(FrameError, TypeError):
    """An op on the path from a ``wrt`` value to the loss has no gradient
    (declared non-differentiable, or missing a rule).  ``.op`` names it."""

    def __init__(self, op: str, message: str):
        super().__init__(ErrorCode.INVALID_ARGUMENT, message)
        self.op = op

    def __reduce__(self):
        return (NonDifferentiableError, (self.op, self.message))


def nondifferentiable_reason(schema: OpSchema) -> str | None:
    """Why ``schema``'s op has no gradient, or None if it should have one."""
    if schema.has("nondifferentiable"):
        return "the op is declared non-differentiable (trait 'nondifferentiable')"
    if schema.has("fused"):
        return f"the op is not differentiable: {_FUSED_REASON}"
    why = NONDIFFERENTIABLE_OPS.get(schema.name)
    return None if why is None else f"the op is not differentiable: {why}"


def is_differentiable(schema: OpSchema) -> bool:
    """Does ``schema``'s op need a gradient rule?"""
    return nondifferentiable_reason(schema) is None


def gradient_rule(*ops: str) -> Callable[[GradientRule], GradientRule]:
    """Register the decorated function as the gradient rule of ``ops``.

        >>> from frame.autograd import gradient_rule
        >>> @gradient_rule("my_scale")            # doctest: +SKIP
        ... def _scale(b, inputs, outputs, grads, attrs):
        ...     return [b.op("mul", grads[0], b.scalar(attrs["factor"], like=grads[0]))]

    Raises FrameValueError (a ValueError) for a non-differentiable op or an op
    that already has a rule (one rule per op, written once).
    """
    def register(fn: GradientRule) -> GradientRule:
        for name in ops:
            schema = get_schema(name)
            why = nondifferentiable_reason(schema)
            if why is not None:
                raise FrameValueError(f"gradient_rule: '{name}' cannot have a rule: {why}")
            if schema.gradient is not None and schema.gradient is not fn:
                old = f"{schema.gradient.__module__}.{schema.gradient.__qualname__}"
                raise FrameValueError(f"gradient_rule: '{name}' already has a gradient rule "
                                      f"({old})")
            schema.gradient = fn
        return fn
    return register
