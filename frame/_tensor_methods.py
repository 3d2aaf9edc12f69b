"""Operators and methods of frame.Tensor, bound to the user-facing functions.

Kept apart from ``tensor.py`` so that the Tensor class stays small and every
method is exactly the function of the same name (``t.softmax(axis=-1)`` is
``frame.softmax(t, axis=-1)``).
"""
from __future__ import annotations

import numpy as np

from . import functions as F
from ._indexing import getitem as _getitem
from .autograd.eager import backward as _backward
from .autograd.tape import (bump_version, check_inplace, is_grad_enabled, set_requires_grad,
                            write_recorded)
from .errors import FrameTypeError, FrameValueError
from .tensor import Tensor

_BINARY_OPERATORS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floordiv",
    "mod": "mod", "pow": "pow",
}
_COMPARE_OPERATORS = {
    "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
    "ge": "greater_equal",
}


def _forward(fn):
    def method(self, other):
        return fn(self, other)
    return method


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    return method


def _inplace(fn, name):
    def method(self, other):
        if self._rg:
            check_inplace(self, name)
        result = fn(self, other)
        _write_into(self, result, name)
        return self
    return method


def _write_into(target: Tensor, result: Tensor, what: str) -> None:
    """In-place update with NumPy's rules: same shape, 'same_kind' casting.

    Autograd: a recorded ``result`` (the op had a tracked operand and grad mode is
    on) makes ``target`` that op's result, keeping its memory (``write_recorded``);
    otherwise the write bumps the target's version, so records that saved its old
    value refuse to be used by backward."""
    src = result._data
    if src.shape != target._data.shape:
        raise FrameValueError(f"{what}: result of shape {list(src.shape)} cannot be written into "
                              f"a tensor of shape {list(target._data.shape)}")
    if not np.can_cast(src.dtype, target._data.dtype, casting="same_kind"):
        raise FrameTypeError(f"{what}: cannot write a {src.dtype} result into a "
                             f"{target._data.dtype} tensor in place (casting rule 'same_kind')")
    if result._grad_fn is not None:
        write_recorded(target, result)
    else:
        np.copyto(target._data, src, casting="same_kind")
        bump_version(target)


for _py, _op in _BINARY_OPERATORS.items():
    _fn = getattr(F, _op)
    setattr(Tensor, f"__{_py}__", _forward(_fn))
    setattr(Tensor, f"__r{_py}__", _reflected(_fn))
    setattr(Tensor, f"__i{_py}__", _inplace(_fn, f"__i{_py}__"))
for _py, _op in _COMPARE_OPERATORS.items():
    setattr(Tensor, f"__{_py}__", _forward(getattr(F, _op)))

Tensor.__matmul__ = _forward(F.matmul)
Tensor.__rmatmul__ = _reflected(F.matmul)
Tensor.__imatmul__ = _inplace(F.matmul, "__imatmul__")
Tensor.__getitem__ = _getitem

Tensor.__neg__ = lambda self: F.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: F.abs(self)
Tensor.__invert__ = lambda self: F.logical_not(self) if self._data.dtype.kind == "b" else _no_invert(self)


def _no_invert(t):
    raise FrameTypeError(f"~ is only defined for bool tensors here, got {t.dtype}")


def zero_(self: Tensor) -> Tensor:
    """Set every element to zero, in place.  On the result of a recorded op (with
    grad mode on) the zeroing is recorded too, so gradients through it are zero."""
    if self._rg:
        check_inplace(self, "zero_")
        if is_grad_enabled():
            _write_into(self, F.where(False, self, 0.0), "zero_")
            return self
    self._data[...] = 0
    bump_version(self)
    return self


Tensor.zero_ = zero_


# The autograd members and ``T`` are defined here, not in tensor.py: they call into
# frame.autograd and frame.functions, which import tensor.py.
def requires_grad_(self, flag: bool = True) -> "Tensor":
    """Make this leaf tensor record the ops that use it (or stop); returns self.

    >>> w = frame.ones((3,)).requires_grad_()
    >>> (w * 2).sum().backward(); w.grad.tolist()
    [2.0, 2.0, 2.0]
    """
    set_requires_grad(self, bool(flag))
    return self


def backward(self, gradient=None, create_graph: bool = False) -> None:
    """Accumulate ``d self / d leaf`` into ``leaf.grad`` for every leaf that requires
    grad and that this tensor was computed from (PyTorch semantics: sums into
    existing grads; non-leaf tensors get no ``.grad``).

    ``self`` must have one element unless ``gradient`` (same shape) is given, in
    which case the gradients of ``sum(self * gradient)`` are accumulated.
    ``create_graph=True`` records the gradient computation, so the grads can be
    differentiated again.  The record stays alive as long as the tensors do, so
    calling ``backward`` twice accumulates twice.

    >>> x = frame.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad.tolist()
    [2.0, 4.0]
    """
    _backward(self, gradient, create_graph)


def _T(self) -> "Tensor":
    """``Tensor.T``: the transpose (all axes reversed)."""
    return F.transpose(self)


Tensor.requires_grad_ = requires_grad_
Tensor.backward = backward
Tensor.T = property(_T)


def _bind_function_methods() -> None:
    """Every frame function whose first argument is a tensor is also a method."""
    for name in F.TENSOR_METHODS:
        if name not in Tensor.__dict__:
            setattr(Tensor, name, getattr(F, name))


_bind_function_methods()
