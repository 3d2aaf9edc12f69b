"""NumPy's dtype queries on traced arrays and constants: ``np.result_type``,
``np.promote_types``, ``np.can_cast``, ``np.issubdtype``, ``np.isdtype``,
``np.iscomplexobj``, ``np.isrealobj``, ``np.common_type``, ``np.finfo`` and
``np.iinfo``.

They read only the dtypes (and, for ``np.common_type``, the types) of their
arguments (NumPy 2 has no value-based casting: an array is strong whatever its
values, a Python scalar weak whatever its value), so they run at trace time
with each traced array replaced by a stand-in of its dtype and shape (a
read-only broadcast zero) and each NumPy scalar by a zero of its type; the
traced arrays' dtypes and shapes are already guarded.  ``np.finfo`` /
``np.iinfo`` give a constant whose attributes (``eps``, ``max``, ``tiny``,
``bits``...) fold.  A frame Tensor among the arguments, or a value only known
at run time, is a graph break.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable

__all__ = ["DTYPE_QUERIES", "DTYPE_INFO_CLASSES", "dtype_query", "real_array_itself"]

DTYPE_INFO_CLASSES = (np.finfo, np.iinfo)
DTYPE_QUERIES = {np.result_type, np.promote_types, np.can_cast, np.issubdtype, np.iscomplexobj,
                 np.isrealobj, np.common_type, *DTYPE_INFO_CLASSES}
if hasattr(np, "isdtype"):
    DTYPE_QUERIES.add(np.isdtype)


def _stand_in(fn, v: Variable):
    """What ``fn`` sees of ``v``: a constant, or a zero of a traced array's dtype and shape."""
    # lazy: containers imports callables, which imports this module
    from .containers import constant_value, is_constant_value
    if isinstance(v, TensorVariable):
        if v.kind == TENSOR:
            raise Unsupported("unsupported_call", f"numpy.{fn.__name__} of a frame Tensor")
        dt = v.meta.dtype
        if v.kind == NPSCALAR:
            return dt.type(0)
        return np.broadcast_to(np.zeros((), dtype=dt), tuple(v.shape))
    if is_constant_value(v):
        return constant_value(v)
    raise Unsupported("unsupported_call", f"numpy.{fn.__name__} with an argument known only at "
                                          f"run time ({v!r})")


def dtype_query(tx, fn, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    """``fn(*args, **kwargs)`` run at trace time on the arguments' dtypes."""
    values = [_stand_in(fn, a) for a in args]
    named = {k: _stand_in(fn, v) for k, v in kwargs.items()}
    try:
        result = fn(*values, **named)
    except Exception as e:  # raised again by the native run
        raise UserCodeRaises(f"numpy.{fn.__name__}() raises {type(e).__name__}: {e}", exc=e) from e
    if isinstance(result, DTYPE_INFO_CLASSES):
        return ConstantVariable(result)  # its attributes fold (wrap_constant_attr)
    return tx.wrap_result(result)


def real_array_itself(args: list[Variable], kwargs: dict[str, Variable]) -> bool:
    """``np.real(a)`` of a real traced ndarray: ``a.real``, which is ``a`` itself."""
    if len(args) + len(kwargs) != 1 or (kwargs and "val" not in kwargs):
        return False
    a = args[0] if args else kwargs["val"]
    return isinstance(a, TensorVariable) and a.kind == NDARRAY and a.meta.dtype.kind in "biuf"
