"""NumPy interoperability for frame.Tensor: ``__array_ufunc__`` and
``__array_function__``.

``np.exp(t)`` on a Tensor runs frame's ``exp`` op and returns a Tensor;
``np.add.reduce(t)`` and ``np.sum(t, axis=0)`` map to frame reductions;
``np.std``, ``np.einsum``, ``np.linalg.norm``, ``np.sort``, ``np.cumsum``,
``np.pad``, ``np.dot``, ``np.any``, ``np.vstack``, ``np.round`` and the other
functions of ``frame._numpy_functions`` run as frame ops with NumPy's own
signature and semantics (a call frame refuses, say an axis out of range, runs
in NumPy, which raises its own exception).  NumPy functions (and uses of
them) frame has no op for run in NumPy on the tensors' data and return what
NumPy returns (ndarrays), exactly as if the caller had written
``np.asarray(t)`` first.
"""
from __future__ import annotations

import numpy as np

from . import functions as F
from ._numpy_functions import NUMPY_FUNCTIONS, UFUNC_FUNCTIONS, NotModelled
from ._numpy_indices import INDEX_FUNCTIONS
from ._numpy_linalg import LINALG_FUNCTIONS
from ._numpy_math import MATH_FUNCTIONS, MATH_UFUNCS, UFUNC_METHODS
from ._numpy_stats import STATS_FUNCTIONS
from .errors import FrameError, FrameTypeError
from .functions._core import _EAGER, current_level
from .tensor import Tensor

__all__ = ["UFUNC_OPS", "REDUCE_OPS", "FUNCTION_OPS"]

# ufunc -> the frame function's name, or a NumPy-exact composition of frame ops
UFUNC_OPS: dict = {
    np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
    np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow",
    np.maximum: "maximum", np.minimum: "minimum", np.equal: "equal",
    np.not_equal: "not_equal", np.less: "less", np.less_equal: "less_equal",
    np.greater: "greater", np.greater_equal: "greater_equal",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.logical_not: "logical_not",
    np.negative: "neg", np.exp: "exp", np.log: "log", np.sqrt: "sqrt", np.tanh: "tanh",
    np.sin: "sin", np.cos: "cos", np.absolute: "abs", np.sign: "sign", np.floor: "floor",
    np.ceil: "ceil", np.reciprocal: "reciprocal", np.matmul: "matmul",
    np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor",
    np.invert: "invert",
}
UFUNC_OPS.update(UFUNC_FUNCTIONS)
UFUNC_OPS.update(MATH_UFUNCS)
REDUCE_OPS: dict[np.ufunc, str] = {np.add: "sum", np.multiply: "prod", np.maximum: "max",
                                   np.minimum: "min"}

# numpy function -> (frame function name, the keyword arguments frame understands)
FUNCTION_OPS: dict = {
    np.sum: ("sum", {"axis", "keepdims"}), np.mean: ("mean", {"axis", "keepdims"}),
    np.max: ("max", {"axis", "keepdims"}), np.min: ("min", {"axis", "keepdims"}),
    np.prod: ("prod", {"axis", "keepdims"}), np.argmax: ("argmax", {"axis", "keepdims"}),
    np.argmin: ("argmin", {"axis", "keepdims"}), np.reshape: ("reshape", {"shape", "newshape"}),
    np.transpose: ("transpose", {"axes"}), np.concatenate: ("concat", {"axis"}),
    np.stack: ("stack", {"axis"}), np.split: ("split", {"indices_or_sections", "axis"}),
    np.squeeze: ("squeeze", {"axis"}), np.expand_dims: ("expand_dims", {"axis"}),
    np.broadcast_to: ("broadcast_to", {"shape"}), np.where: ("where", set()),
    np.clip: ("clip", {"a_min", "a_max", "min", "max"}), np.take: ("take", {"indices", "axis"}),
    np.flip: ("flip", {"axis"}),
}
# functions written with NumPy's own signature (frame/_numpy_functions.py,
# frame/_numpy_linalg.py, frame/_numpy_stats.py, frame/_numpy_indices.py): no keyword filter, a use they do not model raises NotModelled
NUMPY_FUNCTIONS.update(LINALG_FUNCTIONS)
NUMPY_FUNCTIONS.update(STATS_FUNCTIONS)
NUMPY_FUNCTIONS.update(MATH_FUNCTIONS)
NUMPY_FUNCTIONS.update(INDEX_FUNCTIONS)
FUNCTION_OPS.update({fn: (impl.__name__, None) for fn, impl in NUMPY_FUNCTIONS.items()})
if hasattr(np, "amax"):
    FUNCTION_OPS[np.amax] = FUNCTION_OPS[np.max]
    FUNCTION_OPS[np.amin] = FUNCTION_OPS[np.min]


def _to_numpy(obj):
    """Replace Tensors (also inside lists/tuples) by their arrays."""
    if isinstance(obj, Tensor):
        return obj._data
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_numpy(o) for o in obj)
    return obj


def _write_out(out, result):
    """Honour NumPy's ``out=`` argument: write the result, return ``out``."""
    target = out[0] if isinstance(out, tuple) else out
    if len(out if isinstance(out, tuple) else (out,)) != 1:
        raise FrameTypeError("frame supports out= with exactly one output array")
    data = target._data if isinstance(target, Tensor) else target
    src = result._data if isinstance(result, Tensor) else np.asarray(result)
    np.copyto(data, src, casting="same_kind")
    return target


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    out = kwargs.pop("out", None)
    if method == "__call__" and ufunc in UFUNC_OPS and not kwargs:
        op = UFUNC_OPS[ufunc]
        result = (getattr(F, op) if isinstance(op, str) else op)(*inputs)
    elif method == "reduce" and ufunc in REDUCE_OPS and set(kwargs) <= {"axis", "keepdims"}:
        axis = kwargs.get("axis", 0)
        result = getattr(F, REDUCE_OPS[ufunc])(inputs[0], axis=axis,
                                                keepdims=kwargs.get("keepdims", False))
    elif (ufunc, method) in UFUNC_METHODS:  # frame/_numpy_math.py
        result = UFUNC_METHODS[ufunc, method](*inputs, **kwargs)
    else:
        extra = f" with {', '.join(sorted(kwargs))}" if kwargs else ""
        raise FrameTypeError(f"numpy.{ufunc.__name__}.{method}{extra} is not supported on "
                             f"frame.Tensor; convert with .numpy() to run it in NumPy")
    if out is not None:
        return _write_out(out, result)
    return result


def array_function(self, func, types, args, kwargs):
    impl = NUMPY_FUNCTIONS.get(func)
    if impl is not None and kwargs.get("out") is None:
        try:
            return impl(*args, **kwargs)
        except NotModelled:
            if current_level() is not _EAGER:
                raise  # under capture: a break naming the function (NumPy runs it)
        except FrameError:
            if current_level() is not _EAGER:
                raise
            # frame refuses the arguments (an axis out of range, unaligned shapes):
            # NumPy raises its own exception for them, below
    entry = FUNCTION_OPS.get(func)
    if entry is not None and entry[1] is not None and set(kwargs) <= entry[1] and \
            kwargs.get("out") is None:
        name = entry[0]
        kwargs = dict(kwargs)
        if name == "reshape":
            shape = kwargs.pop("shape", kwargs.pop("newshape", None))
            if shape is not None:
                args = (*args, shape)
        elif name == "clip":
            lo = kwargs.pop("a_min", kwargs.pop("min", None))
            hi = kwargs.pop("a_max", kwargs.pop("max", None))
            args = (*args[:1], *(args[1:] or (lo, hi)))
        elif name == "transpose" and "axes" in kwargs:
            axes = kwargs.pop("axes")
            args = (*args, *(axes or ()))
        elif name == "transpose" and len(args) == 2:
            args = (args[0], *(args[1] or ()))
        elif name == "take" and "indices" in kwargs:
            args = (*args, kwargs.pop("indices"))
        elif name == "split" and "indices_or_sections" in kwargs:
            args = (*args, kwargs.pop("indices_or_sections"))
        fn = getattr(F, name, None)
        if fn is not None:
            return fn(*args, **kwargs)
    # No frame op for this call: run NumPy on the data, as np.asarray(t) would.
    return func(*_to_numpy(args), **_to_numpy(kwargs))


Tensor.__array_ufunc__ = array_ufunc
Tensor.__array_function__ = array_function
