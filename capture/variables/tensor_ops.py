"""Tensor attributes, methods and operators under capture.

Metadata (``shape``, ``dtype``, ``ndim``, ``size``, ``len``) folds to
constants.  Methods and operators run frame's real implementation on meta
arrays under the tracer.  For ndarray values the same frame ops run, and the
result keeps NumPy's Python type (an ndarray, or a NumPy scalar when 0-d).
Anything that reads values (``item``, ``numpy``, ``tolist``, ``float(t)``) is
data dependent.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from .base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable

__all__ = ["tensor_getattr", "tensor_getitem", "TensorMethodVariable", "NDARRAY_METHODS"]

_DATA_READS = {"item", "numpy", "tolist", "__array__", "__float__", "__int__", "__bool__",
               "__index__", "backward"}
# ndarray methods frame can model, with NumPy's semantics
NDARRAY_METHODS = {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "reshape",
                   "transpose", "squeeze", "astype", "clip", "take", "flatten", "ravel", "copy",
                   "swapaxes"}


class TensorMethodVariable(Variable):
    __slots__ = ("tensor", "name")

    def __init__(self, tensor: TensorVariable, name: str):
        super().__init__(None)
        self.tensor = tensor
        self.name = name

    def call(self, tx, args, kwargs):
        t = self.tensor
        if self.name in _DATA_READS:
            raise Unsupported("data_dependent", f".{self.name}() reads the tensor's values")
        if self.name in ("zero_",) or self.name.startswith("__i"):
            raise Unsupported("side_effect", f"in-place tensor method .{self.name}()")
        if t.kind == TENSOR:
            from frame.tensor import Tensor
            method = getattr(Tensor, self.name, None)
            if method is None:
                raise Unsupported("exception", f"'Tensor' object has no attribute {self.name!r}")
            return tx.call_real(method, [t, *args], kwargs)
        return _ndarray_method(tx, t, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"TensorMethod({self.tensor!r}.{self.name})"


def _ndarray_method(tx, t: TensorVariable, name: str, args, kwargs) -> Variable:
    import frame
    if name not in NDARRAY_METHODS:
        raise Unsupported("unsupported_call", f"ndarray.{name}() has no frame op")
    if name in ("flatten", "ravel"):
        fn, args = frame.reshape, [ConstantVariable(-1)]
    elif name == "copy":
        return t  # values are immutable inside the graph; a new output is a new array
    elif name == "swapaxes":
        a, b = (x.as_constant() for x in args)
        perm = list(range(len(t.shape)))
        perm[a], perm[b] = perm[b], perm[a]
        fn, args = frame.transpose, [ConstantVariable(p) for p in perm]
    else:
        fn = getattr(frame, name)
    return tx.call_real(fn, [t, *args], kwargs, numpy_semantics=True)


def tensor_getattr(tx, t: TensorVariable, name: str) -> Variable:
    if name == "shape":
        return tx.wrap_static(tuple(t.shape))
    if name == "ndim":
        return ConstantVariable(len(t.shape))
    if name == "size":
        return ConstantVariable(int(np.prod(t.shape, dtype=np.int64)))
    if name == "dtype":
        if t.kind == TENSOR:
            return tx.wrap_static(t.dtype)
        return tx.wrap_static(t.meta.dtype)
    if name == "T":
        import frame
        return tx.call_real(frame.transpose, [t], {}, numpy_semantics=t.kind != TENSOR)
    if name == "requires_grad" and t.kind == TENSOR:
        return ConstantVariable(t.requires_grad)
    if name in ("grad",):
        raise Unsupported("unsupported_object", "tensor .grad under capture")
    if name in ("real", "imag", "flat", "data", "base", "strides", "flags", "ctypes", "itemsize",
                "nbytes"):
        if name == "itemsize":
            return ConstantVariable(t.meta.dtype.itemsize)
        if name == "nbytes":
            return ConstantVariable(t.meta.dtype.itemsize * int(np.prod(t.shape, dtype=np.int64)))
        raise Unsupported("unsupported_object", f"tensor attribute .{name}")
    return TensorMethodVariable(t, name)


def tensor_getitem(tx, t: TensorVariable, index: Variable) -> Variable:
    """``t[index]`` through frame's indexing (the same lowering eager uses)."""
    import operator
    return tx.call_real(operator.getitem, [t, index], {}, numpy_semantics=t.kind != TENSOR)
