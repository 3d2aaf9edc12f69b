"""``np.ascontiguousarray`` on traced arrays: NumPy hands back the array itself
when it is C-contiguous (and already of the dtype asked for), a C-contiguous
copy otherwise, so the result's identity depends on the memory layout.

An input array that is C-contiguous is the result itself, under a guard that it
is (a later non-contiguous input traces again); a ``dtype=`` other than the
array's is ``astype`` (NumPy copies whatever the layout).  A non-contiguous
input, an array computed in the function (capture does not model the layout
NumPy would give it), a view, or a 0-d array (NumPy returns a 1-d view) is a
graph break: NumPy runs the call.  ``np.asfortranarray`` is not modelled (the
graph's arrays are C-ordered).
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, ConstantVariable, TensorVariable, Variable
from .numpy_inplace import bind_call
from .registry import HOOKS

__all__ = ["numpy_ascontiguousarray"]


def _ascontiguousarray_signature(a, dtype=None, *, like=None): ...


def numpy_ascontiguousarray(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = bind_call(_ascontiguousarray_signature, "ascontiguousarray", args, kwargs)
    a = bound["a"]
    options = {k: v for k, v in bound.items() if k != "a"}
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY or \
            not all(isinstance(v, Variable) and v.is_constant() for v in options.values()
                    if v is not None) or \
            (isinstance(options["like"], Variable) and options["like"].as_constant() is not None):
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray with these arguments")
    if not a.shape:
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray of a 0-d array (NumPy "
                                              "returns a 1-d view of it)")
    dtype = options["dtype"].as_constant() if isinstance(options["dtype"], Variable) else None
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError as e:
            raise UserCodeRaises(f"ascontiguousarray(): {e}") from e
        if dtype != a.meta.dtype:  # a new array of that dtype, whatever the layout
            return HOOKS.tensor_getattr(tx, a, "astype").call(tx, [ConstantVariable(dtype)], {})
    data = tx.tr.input_arrays.get(id(a))
    if data is None or a.base is not None or a.source is None:
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray of an array computed in "
                                              "the function (whether NumPy copies it depends on "
                                              "its memory layout)")
    if not data.flags.c_contiguous:
        raise Unsupported("unsupported_call", "numpy.ascontiguousarray of a non-contiguous "
                                              "input array (NumPy copies it)")
    a.check_fresh()
    tx.tr.guards.c_contiguous(a.array_source())
    return a  # NumPy hands the array itself back
