"""Gradient rules of ``einsum``, ``dot``, ``inner``, ``convolve`` and ``correlate``
(frame/ops/contract.py).

- ``einsum``: the gradient of operand k is an einsum of the output gradient
  and the other operands, with operand k's labels as its output.  Around that
  core: a label only operand k has (summed inside it, ``"ij->i"``) is in no
  input of that einsum, so the result is broadcast along it afterwards; a
  repeated label (``"ii->i"``, a diagonal) is produced once and placed on the
  diagonal by a second einsum with identity matrices (``"i,ij->ij"``); an axis
  of size 1 that the einsum broadcast is summed back; the axes ``...`` covers
  get letters of their own, right-aligned as NumPy broadcasts them.
- ``dot``/``inner``: einsum's rule on their subscripts (``product_subscripts``).
- ``convolve``/``correlate``: the output gradient is padded with zeros to the
  full result (``window`` says where the mode's part lies), then
  ``da = correlate(g_full, v, "valid")`` and ``dv = correlate(g_full, a, "valid")``
  for convolve; correlate is convolve with ``v`` reversed, so its ``da``
  correlates with ``v[::-1]`` and its ``dv`` is reversed.
"""
from __future__ import annotations

import numpy as np

from ..errors import FrameValueError
from ..ops.contract import CONVOLUTIONS, PRODUCTS, parse_einsum, product_subscripts, window
from .helpers import differentiable, fit, sum_axes
from .registry import gradient_rule

__all__: list[str] = []

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _Letters:
    """Einsum letters for labels: a letter label stays itself, the private labels
    of ``...`` axes and fresh ones take letters no label uses."""

    def __init__(self, labels):
        self.map = {lab: lab for lab in labels if lab in _LETTERS}
        self.free = [c for c in _LETTERS if c not in self.map]
        self.made = 0

    def __call__(self, lab) -> str:
        if lab not in self.map:
            if not self.free:
                raise FrameValueError("einsum gradient: more than 52 labels")
            self.map[lab] = self.free.pop(0)
        return self.map[lab]

    def fresh(self) -> str:
        self.made += 1
        return self(("fresh", self.made))


def _einsum(b, operands, terms, output, letters):
    subscripts = ",".join("".join(letters(lab) for lab in t) for t in terms)
    return b.op("einsum", *operands, subscripts=f"{subscripts}->"
                + "".join(letters(lab) for lab in output))


def _einsum_operand_grad(b, k, inputs, g, spec, letters):
    """The gradient of ``inputs[k]`` (see the module docstring)."""
    x = inputs[k]
    labels = spec.terms[k]
    unique = list(dict.fromkeys(labels))
    others = [j for j in range(len(inputs)) if j != k]
    available = set(spec.output).union(*(spec.terms[j] for j in others))
    target = [lab for lab in unique if lab in available]
    grad = _einsum(b, [g] + [inputs[j] for j in others],
                   [spec.output] + [spec.terms[j] for j in others], target, letters)
    if len(target) < len(unique):  # labels only operand k has: constant along them
        kept = tuple(spec.sizes[lab] if lab in available else 1 for lab in unique)
        if grad.type.shape != kept:
            grad = b.op("reshape", grad, shape=kept)
        grad = b.op("broadcast_to", grad, shape=tuple(spec.sizes[lab] for lab in unique))
    if len(unique) < len(labels):  # a repeated label: the gradient lives on the diagonal
        seen: set[str] = set()
        out_labels, eyes, eye_terms = [], [], []
        for lab in labels:
            if lab in seen:
                fresh = letters.fresh()
                n = spec.sizes[lab]
                eyes.append(b.constant(np.eye(n, dtype=grad.type.dtype.np)))
                eye_terms.append([lab, fresh])
                out_labels.append(fresh)
            else:
                seen.add(lab)
                out_labels.append(lab)
        grad = _einsum(b, [grad] + eyes, [unique] + eye_terms, out_labels, letters)
    squeezed = [i for i, d in enumerate(x.type.shape) if d == 1 and grad.type.shape[i] != 1]
    grad = sum_axes(b, grad, squeezed, keepdims=True)
    return fit(b, grad, x)


def _contraction_grads(b, inputs, g, subscripts):
    if g is None:
        return [None] * len(inputs)
    spec = parse_einsum(subscripts, [v.type.shape for v in inputs])
    letters = _Letters([lab for t in spec.terms for lab in t])
    return [_einsum_operand_grad(b, k, list(inputs), g, spec, letters)
            if differentiable(inputs[k]) else None for k in range(len(inputs))]


@gradient_rule("einsum")
def _einsum_rule(b, inputs, outputs, grads, attrs):
    return _contraction_grads(b, inputs, grads[0], attrs["subscripts"])


def _product_rule(op: str):
    def rule(b, inputs, outputs, grads, attrs):
        a, v = inputs
        return _contraction_grads(b, inputs, grads[0],
                                  product_subscripts(op, a.type.rank, v.type.rank))
    return rule


for _op in PRODUCTS:
    gradient_rule(_op)(_product_rule(_op))


def _convolution_rule(op: str):
    def rule(b, inputs, outputs, grads, attrs):
        (a, v), (g,) = inputs, grads
        if g is None or not (differentiable(a) or differentiable(v)):
            return [None, None]
        n, m = a.type.shape[0], v.type.shape[0]
        offset, length = window(op, n, m, attrs["mode"])
        full = n + m - 1
        if length != full:
            g = b.op("pad", g, pads=(offset, full - offset - length))
        w = v if op == "convolve" else b.op("flip", v, axes=(0,))
        ga = b.op("correlate", g, w, mode="valid") if differentiable(a) else None
        gv = None
        if differentiable(v):
            gv = b.op("correlate", g, a, mode="valid")
            if op == "correlate":
                gv = b.op("flip", gv, axes=(0,))
        return [fit(b, ga, a), fit(b, gv, v)]
    return rule


for _op in CONVOLUTIONS:
    gradient_rule(_op)(_convolution_rule(_op))
