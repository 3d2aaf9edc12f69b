"""NumPy calls whose result frame's functions do not give as NumPy does.

``np.cov`` of a single variable (one 1-D array): NumPy squeezes the (1, 1)
matrix to a 0-d *array*, while a 0-d result of frame's functions stands for
a NumPy scalar.  The trace computes the matrix with frame's ``cov_matrix``
(NumPy's order of operations) and gives the 0-d value the kind of an array.

``np.mean(a, axis, keepdims=, where=mask)``: NumPy's ``_mean``, the masked
sum (in float64 for integers and bools) divided by the count of the mask's
true elements along the axes and cast back to the sum's dtype.  A slice with
no true element makes NumPy warn ("Mean of empty slice", then an invalid
division) and give NaN: known only from the mask's values, so the graph also
computes whether any count is 0, a run-time check (``Translation.run_checks``)
on which the entry runs the plain function, which warns as NumPy does.

Deprecated aliases, ``np.row_stack`` (of ``np.vstack``) and, from NumPy 2.5,
``np.fix`` (of ``np.trunc``): the function they stand for, and the
DeprecationWarning NumPy gives at every call, asked of NumPy itself (a NumPy
that does not warn gives none) and issued by the entry from the user's line
(``SideEffects.warnings``).  A
warning filter may turn it into an error, raised before anything else the
call does: it is modelled only where the call has changed nothing before
it (no side effect, no random draw) and outside try and with blocks (whose
handlers could catch it).
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from frame._numpy_stats import cov_matrix

from ..errors import Unsupported
from ..side_effects import Warned
from .base import NDARRAY, TENSOR, ConstantVariable, TensorVariable, Variable
from .numpy_inplace import bind_call
from .registry import HOOKS
from .warn_calls import warning_site

__all__ = ["is_cov_of_one_variable", "numpy_cov_of_one_variable", "is_masked_mean",
           "numpy_masked_mean", "WARNING_ALIASES", "numpy_warning_alias"]

# NumPy functions that may warn at every call -> the function they compute
WARNING_ALIASES = {np.fix: np.trunc}
if hasattr(np, "row_stack"):   # (removed in some NumPy to come)
    WARNING_ALIASES[np.row_stack] = np.vstack


def is_cov_of_one_variable(args: list[Variable], kwargs: dict[str, Variable]) -> bool:
    """``np.cov(m, ...)`` of one 1-D NumPy array, without ``y``."""
    m = args[0] if args else kwargs.get("m")
    y = args[1] if len(args) > 1 else kwargs.get("y")
    return (isinstance(m, TensorVariable) and m.kind == NDARRAY and len(m.shape) == 1
            and (y is None or y.is_none()))


def numpy_cov_of_one_variable(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    c = tx.call_real(cov_matrix, args, kwargs, numpy_semantics=True)
    if not isinstance(c, TensorVariable) or tuple(c.shape) != (1, 1):
        raise Unsupported("unsupported_call", "numpy.cov of one variable with these arguments")
    value = HOOKS.tensor_getattr(tx, c, "reshape").call(tx, [ConstantVariable(())], {})
    return TensorVariable(value.meta, NDARRAY)   # NumPy's 0-d array


def _mean_signature(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *,
                    where=np._NoValue): ...


def is_masked_mean(args: list[Variable], kwargs: dict[str, Variable]) -> bool:
    """``np.mean(a, ..., where=mask)`` of a NumPy array with a traced mask."""
    where = kwargs.get("where")
    return isinstance(where, TensorVariable) and where.kind != TENSOR and bool(args) and \
        isinstance(args[0], TensorVariable) and args[0].kind != TENSOR


def numpy_masked_mean(tx, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    bound = bind_call(_mean_signature, "mean", args, kwargs)
    a, where, axis, keepdims = bound["a"], bound["where"], bound["axis"], bound["keepdims"]
    for name in ("dtype", "out"):
        value = bound[name]
        if value is not None and not (isinstance(value, Variable) and value.is_none()):
            raise Unsupported("unsupported_call", f"numpy.mean with where= and {name}=")
    if where.meta.dtype != np.bool_ or a.meta.dtype.kind not in "biuf" or \
            a.meta.dtype == np.float16:
        raise Unsupported("unsupported_call", f"numpy.mean with where= of {a.meta.dtype} values "
                                              f"and a {where.meta.dtype} mask")
    np_sum = tx.wrap_static(np.sum)
    options = {"axis": axis if isinstance(axis, Variable) else ConstantVariable(axis)}
    if keepdims is not np._NoValue:
        options["keepdims"] = keepdims
    if a.meta.dtype.kind != "f":   # (NumPy sums with dtype=float64: each element cast first)
        a = HOOKS.tensor_getattr(tx, a, "astype").call(tx, [ConstantVariable(np.dtype("f8"))], {})
    total = np_sum.call(tx, [a], {**options, "where": where})
    mask = tx.wrap_static(np.broadcast_to).call(tx, [where, ConstantVariable(tuple(a.shape))], {})
    mask = HOOKS.tensor_getattr(tx, mask, "astype").call(tx, [ConstantVariable(np.dtype(np.intp))], {})
    count = np_sum.call(tx, [mask], options)
    empty = tx.binary_op(operator.eq, count, ConstantVariable(0))
    tx.tr.run_checks.append(HOOKS.tensor_getattr(tx, empty, "any").call(tx, [], {}))
    # (a count of 0 is not divided by: the plain function runs then)
    divisor = tx.wrap_static(np.where).call(tx, [empty, ConstantVariable(1), count], {})
    mean = tx.binary_op(operator.truediv, total, divisor)
    return HOOKS.tensor_getattr(tx, mean, "astype").call(tx, [ConstantVariable(total.meta.dtype)],
                                                         {})


def numpy_warning_alias(tx, fn, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn([np.zeros(1)])   # what NumPy says at every call
    nodes = len(tx.tr.tracer.graph.nodes)   # (NumPy warns before it computes)
    result = tx.wrap_static(WARNING_ALIASES[fn]).call(tx, args, kwargs)
    name = f"numpy.{fn.__name__}"
    if seen:
        frame = tx
        while frame is not None:   # (a handler of the plain function could catch the warning)
            if frame.current is not None and frame.current.handler is not None:
                raise Unsupported("unsupported_call", f"{name}, which warns, inside a try or "
                                                      "with block (a warning filter may make "
                                                      "the warning raise there)")
            frame = frame.parent
        if tx.tr.side_effects or tx.tr.tracer.draws or tx.tr.side_effects.cached_calls:
            raise Unsupported("unsupported_call", f"{name}, which warns, after the function "
                                                  "changed state (a warning filter may make "
                                                  "the warning raise)")
        line = getattr(tx.current, "lineno", None) or tx.code.co_firstlineno
        site = warning_site(tx, True, name)   # (NumPy warns with stacklevel=2: this frame)
        for w in seen:
            tx.tr.side_effects.warnings.append(Warned(w.category, str(w.message),
                                                      tx.code.co_filename, line, tx.f_globals,
                                                      nodes, site))
    return result
