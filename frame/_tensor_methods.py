"""Operators and methods of frame.Tensor, bound to the user-facing functions.

Kept apart from ``tensor.py`` so that the Tensor class stays small and every
method is exactly the function of the same name (``t.softmax(axis=-1)`` is
``frame.softmax(t, axis=-1)``).
"""
from __future__ import annotations

import inspect

import numpy as np

from . import functions as F
from ._indexing import getitem as _getitem, setitem as _setitem
from .autograd.eager import backward as _backward
from .autograd.tape import (bump_version, check_inplace, is_grad_enabled, set_requires_grad,
                            write_recorded)
from .dtypes import as_dtype
from .errors import FrameTypeError, FrameValueError
from .tensor import Tensor

_BINARY_OPERATORS = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "floordiv",
    "mod": "mod", "pow": "pow",
}
_BITWISE_OPERATORS = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}
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
    method.__name__ = method.__qualname__ = name
    method.__frame_inplace_of__ = fn  # the functional form, for capture
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
for _py, _op in _BITWISE_OPERATORS.items():
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


def __setitem__(self, index, value) -> None:
    """``t[index] = value``: an in-place write of the functional
    ``frame._indexing.setitem`` (a ``scatter`` op), versioned for autograd like
    the other in-place operators; the value is cast to ``t``'s dtype (NumPy)."""
    if self._rg:
        check_inplace(self, "__setitem__")
    _write_into(self, _setitem(self, index, value), "__setitem__")


__setitem__.__frame_inplace_of__ = _setitem
Tensor.__setitem__ = __setitem__

Tensor.__neg__ = lambda self: F.neg(self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = lambda self: F.abs(self)
Tensor.__invert__ = lambda self: F.logical_not(self) if self._data.dtype.kind == "b" else F.invert(self)


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


def _zeroed(self: Tensor) -> Tensor:
    return F.where(False, self, 0)


zero_.__frame_inplace_of__ = _zeroed
Tensor.zero_ = zero_


# PyTorch-style in-place methods: the function of the same name, written back
# into the tensor (NumPy's same_kind casting; versioned like ``+=``)
def _add(self, other, *, alpha=1):
    return F.add(self, other if alpha == 1 else F.mul(other, alpha))


def _sub(self, other, *, alpha=1):
    return F.sub(self, other if alpha == 1 else F.mul(other, alpha))


def _inplace_method(fn, name: str, doc: str):
    def method(self, *args, **kwargs):
        if self._rg:
            check_inplace(self, name)
        _write_into(self, fn(self, *args, **kwargs), name)
        return self
    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__signature__ = inspect.signature(fn)
    method.__frame_inplace_of__ = fn
    return method


def clamp(self, min=None, max=None):
    """``clip`` with PyTorch's argument names: values limited to ``[min, max]``."""
    return F.clip(self, min, max)


Tensor.clamp = clamp
Tensor.add_ = _inplace_method(_add, "add_", "``self += alpha * other`` in place; returns self.")
Tensor.sub_ = _inplace_method(_sub, "sub_", "``self -= alpha * other`` in place; returns self.")
Tensor.mul_ = _inplace_method(F.mul, "mul_", "``self *= other`` in place; returns self.")
Tensor.div_ = _inplace_method(F.div, "div_", "``self /= other`` in place; returns self "
                                             "(an integer tensor cannot hold the quotient).")
Tensor.clamp_ = _inplace_method(clamp, "clamp_", "``clamp`` in place; returns self.")


# Methods other frameworks' code expects (PyTorch names)
def clone(self) -> Tensor:
    """A copy of the data (a new tensor; recorded for autograd like any op)."""
    return F.astype(self, self.dtype)


def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The dims ``start_dim..end_dim`` merged into one (all of them by default:
    a 1-D copy, as ndarray.flatten)."""
    shape = self.shape
    if isinstance(start_dim, str):  # ndarray.flatten(order)
        if start_dim not in ("C", "A", "K"):
            raise FrameValueError(f"flatten: only C order is supported, got order={start_dim!r}")
        start_dim, end_dim = 0, -1
    rank = max(len(shape), 1)
    lo, hi = start_dim + rank if start_dim < 0 else start_dim, end_dim + rank if end_dim < 0 else end_dim
    if not (0 <= lo < rank and 0 <= hi < rank):
        raise FrameValueError(f"flatten: dims ({start_dim}, {end_dim}) out of range for a "
                              f"{len(shape)}-d tensor")
    if lo > hi:
        raise FrameValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    if not shape:
        return F.reshape(self, (1,))
    merged = 1
    for d in shape[lo:hi + 1]:
        merged *= d
    return F.reshape(self, shape[:lo] + (merged,) + shape[hi + 1:])


def type_(self, dtype=None):
    """Without ``dtype``: the dtype's name as a string (``"frame.float32"``).
    With one: this tensor if it already has that dtype, else a converted copy."""
    if dtype is None:
        return repr(self.dtype)
    return self if as_dtype(dtype) is self.dtype else F.astype(self, dtype)


def to(self, *args, dtype=None, copy: bool = False, **kwargs):
    """``t.to(dtype)`` / ``t.to("cpu")`` / ``t.to(other_tensor)``: this tensor
    when nothing changes (unless ``copy``), else a converted copy.  frame has
    one device, the host: device arguments other than "cpu" raise."""
    target = dtype
    for a in args:
        if isinstance(a, Tensor):
            target = a.dtype
        elif isinstance(a, str) and a.split(":")[0] == "cpu":
            continue
        else:
            try:
                target = as_dtype(a)
            except (TypeError, ValueError):
                raise FrameValueError(f"to: frame has only the 'cpu' device, got {a!r}") from None
    device = kwargs.pop("device", None)
    if device is not None and str(device).split(":")[0] != "cpu":
        raise FrameValueError(f"to: frame has only the 'cpu' device, got {device!r}")
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise FrameTypeError(f"to: unexpected arguments {sorted(kwargs)}")
    if target is None or as_dtype(target) is self.dtype:
        return clone(self) if copy else self
    return F.astype(self, target)


def is_floating_point(self) -> bool:
    return self._data.dtype.kind == "f"


def element_size(self) -> int:
    """Bytes per element."""
    return self._data.dtype.itemsize


def dim(self) -> int:
    """The number of dimensions (``ndim``)."""
    return self._data.ndim


def nonzero(self) -> tuple:
    """The indices of the non-zero elements, one int64 tensor per dimension
    (numpy.nonzero; PyTorch's ``as_tuple=True``).  Its shape depends on the
    data: it reads the values, so under capture it is a graph break."""
    return tuple(Tensor._wrap(np.ascontiguousarray(i, dtype=np.int64))
                 for i in np.nonzero(np.atleast_1d(self._data) if self._data.ndim == 0 else self._data))


Tensor.clone = clone
Tensor.flatten = flatten
type_.__name__ = type_.__qualname__ = "type"
Tensor.type = type_
Tensor.to = to
Tensor.is_floating_point = is_floating_point
Tensor.element_size = element_size
Tensor.dim = Tensor.ndimension = dim
Tensor.nonzero = nonzero


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
