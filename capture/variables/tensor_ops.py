"""Tensor attributes, methods and operators under capture.

Metadata (``shape``, ``dtype``, ``ndim``, ``size``, ``len``) folds to
constants.  Methods and operators run frame's real implementation on meta
arrays under the tracer.  For ndarray values the same frame ops run, and the
result keeps NumPy's Python type (an ndarray, or a NumPy scalar when 0-d).
Anything that reads values (``item``, ``numpy``, ``tolist``, ``float(t)``) is
data dependent.
"""
from __future__ import annotations

import inspect
import operator
import warnings

import numpy as np

import frame
from frame._indexing import add_at, setitem
from frame._numpy_functions import array_copy
from frame.tensor import Tensor, from_numpy, tensor

from ..errors import HINTS, Unsupported, UserCodeRaises
from .base import (NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable,
                   scalar_tensor_entries)
from .lazy_scalars import lazy_item
from .numpy_layout import ndarray_view
from .registry import HOOKS
from .dynamic_index import dynamic_index
from .scalars import ScalarVariable, scalar_input

__all__ = ["tensor_getattr", "tensor_getitem", "tensor_write", "TensorMethodVariable",
           "NDARRAY_METHODS"]

_DATA_READS = {"item", "numpy", "tolist", "__array__", "__float__", "__int__", "__bool__",
               "__index__", "nonzero"}
# Tensor methods that read only metadata (dtype, rank): folded to constants
_METADATA_METHODS = {"is_floating_point", "element_size", "dim", "ndimension", "type"}
# ndarray methods frame can model, with NumPy's semantics
NDARRAY_METHODS = {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "reshape",
                   "transpose", "squeeze", "astype", "clip", "take", "flatten", "ravel", "copy",
                   "swapaxes", "std", "var", "cumsum", "cumprod", "argsort", "sort", "any", "all",
                   "round", "dot", "repeat", "fill"}
# ...and those whose result may be a view of the array (NumPy documents "may")
NDARRAY_VIEW_METHODS = {"reshape", "transpose", "squeeze", "ravel", "swapaxes"}


class TensorMethodVariable(Variable):
    __slots__ = ("tensor", "name")

    def __init__(self, tensor: TensorVariable, name: str):
        super().__init__(None)
        self.tensor = tensor
        self.name = name

    def call(self, tx, args, kwargs):
        t = self.tensor
        if self.name == "item":
            lazy = lazy_item(tx, t, args, kwargs)   # made after the graph (lazy_scalars.py)
            if lazy is not None:
                return lazy
        if self.name in _DATA_READS:
            raise Unsupported("data_dependent", f".{self.name}() reads the tensor's values",
                              HINTS["item"])
        if self.name == "backward":
            if t.kind != TENSOR:
                raise UserCodeRaises("ndarray has no attribute 'backward'")
            return HOOKS.backward(tx, t, args, kwargs)
        if t.kind == TENSOR and self.name in _METADATA_METHODS and not args and not kwargs:
            # the meta array has the tensor's dtype and shape
            return ConstantVariable(getattr(Tensor, self.name)(Tensor._wrap(t.meta)))
        if t.kind == TENSOR:
            functional = getattr(getattr(Tensor, self.name, None), "__frame_inplace_of__", None)
            if functional is not None:  # t.add_(y), t.__setitem__(i, v): the functional form, written back
                return tensor_write(tx, t, functional, args, kwargs)
        if t.kind == NDARRAY and self.name == "__setitem__" and len(args) == 2 and not kwargs:
            ndarray_setitem(tx, t, *args)  # a.__setitem__(i, v) is a[i] = v
            return ConstantVariable(None)
        if self.name.endswith("_") and not self.name.endswith("__") or self.name.startswith("__i") \
                or self.name in ("__setitem__", "__setattr__", "__delattr__", "__delitem__"):
            raise Unsupported("side_effect", f"in-place tensor method .{self.name}()")
        if self.name == "detach" and t.kind == TENSOR and not args and not kwargs:
            # shares memory with the tensor (a view for in-place purposes)
            t.check_fresh()
            # a fresh meta array for the same value: not tracked for autograd
            return tx.tr.mark_view(TensorVariable(_fresh_meta(tx, t), TENSOR), t, Tensor.detach)
        if t.kind == TENSOR:
            method = getattr(Tensor, self.name, None)
            if method is None:
                raise UserCodeRaises(f"'Tensor' object has no attribute {self.name!r}")
            return tx.call_real(method, [t, *args], kwargs)
        return _ndarray_method(tx, t, self.name, args, kwargs)

    def rebuilt_from(self) -> list[Variable]:
        return [self.tensor]

    def reconstruct(self, rb) -> str:
        return f"{rb.expr(self.tensor)}.{self.name}"

    def __repr__(self) -> str:
        return f"TensorMethod({self.tensor!r}.{self.name})"


@HOOKS.provide
def tensor_write(tx, t: TensorVariable, functional, args, kwargs) -> TensorVariable:
    """An in-place Tensor method (``add_``, ``zero_``, ``__setitem__``, ...) under
    capture: its functional form (``__frame_inplace_of__``) becomes graph nodes
    and its result is written into ``t`` (replayed on an input after the graph
    runs), with eager's autograd checks."""
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, TensorVariable)]
    operand = next((a for a in tensors if a.requires_grad), tensors[0] if tensors else ConstantVariable(0))
    HOOKS.check_inplace(tx, t, operand)
    if functional is setitem and len(args) == 2 and not kwargs:
        dynamic = dynamic_index(tx, t, args[0])
        if dynamic is not None:   # t[i] = v with a dynamic int i: a graph input
            return tx.write_in_place(t, dynamic.setitem_value(tx, t, args[1]))
    return tx.write_in_place(t, tx.call_real(functional, [t, *args], kwargs))


@HOOKS.provide
def ndarray_setitem(tx, a: TensorVariable, index: Variable, value: Variable) -> None:
    """``a[index] = value`` on an ndarray: frame's functional setitem (a
    ``scatter`` of ``value`` at the positions ``a[index]`` selects, the same
    indexing ops as ``a[index]``) written into ``a`` as ``a += b`` is (a side
    effect replayed on an input; a view writes through to its base).

    An array value must cast to the array's dtype with ``same_kind`` (its values
    are not known: a float array stored into an int array runs natively).  A
    scalar value (Python's or NumPy's) is converted at trace time by NumPy
    itself, so the stored constant is NumPy's (``2.5`` into an int array is
    ``2``); a conversion that raises or warns (NaN into an int array, an int
    beyond the dtype's range, an overflow) runs natively.  Other values (a
    list, a frame Tensor) run natively too.  A boolean-mask selection stored
    under its own mask, or a row stored under a row mask, is
    ``masked.masked_store``'s."""
    target = a.meta.dtype
    # lazy: containers imports callables, which imports this module
    from .containers import ListVariable, TupleVariable
    from .masked import masked_store   # lazy: masked imports numpy_calls, which imports this
    if masked_store(tx, a, index, value):   # x[m] = np.sqrt(x[m]), x[m] += 1, X[m] = row
        return
    if isinstance(value, (ListVariable, TupleVariable)):
        value = _sequence_value(tx, value, target)
    if isinstance(value, TensorVariable):
        if value.kind == TENSOR:
            raise Unsupported("unsupported_call", "storing a frame Tensor into a NumPy array")
        if not np.can_cast(value.meta.dtype, target, casting="same_kind"):
            raise Unsupported("unsupported_call", f"item assignment of {value.meta.dtype} values "
                                                  f"into a {target} array (an unsafe cast)")
        if value.kind == NPSCALAR:
            _check_scalar_fits(tx, value, target, index)
    else:
        v = value.as_constant() if value.is_constant() else None
        if not isinstance(v, (bool, int, float, complex, np.generic)):
            raise Unsupported("unsupported_call", f"item assignment of {value!r} into a {target} "
                                                  f"array")
        probe = np.zeros((), target)
        try:
            with warnings.catch_warnings(), np.errstate(all="raise"):
                warnings.simplefilter("error")
                probe[()] = v
        except Exception as e:  # noqa: BLE001 - NumPy's error (or warning) comes natively
            raise Unsupported("unsupported_call", f"item assignment of {v!r} into a {target} "
                                                  f"array ({type(e).__name__})") from e
        value = ConstantVariable(probe[()])
    HOOKS.check_inplace(tx, a, value)
    dynamic = dynamic_index(tx, a, index)
    tx.tr.item_written(a)
    if dynamic is not None:   # dynamic ints as index or slice bounds: graph inputs
        result = dynamic.setitem_value(tx, a, value)
    else:
        result = tx.call_real(setitem, [a, index, value], {}, numpy_semantics=True,
                              numpy_ref=_numpy_setitem)
    tx.write_in_place(a, result)


def _check_scalar_fits(tx, value: TensorVariable, target: np.dtype, index: Variable) -> None:
    """NumPy stores a NumPy integer scalar at a basic index (ints, slices,
    ``...``) of a *signed* integer array as a Python int: out of the dtype's
    range it raises ``OverflowError`` (``a[0] = np.int64(300)`` into int8),
    where an array value, an unsigned target or an advanced index wraps.  The
    scalar's value is known only at run time: the graph outputs whether it is
    out of range, a run-time check on which the entry calls the plain function
    (which raises) before writing anything."""
    source = value.meta.dtype
    if target.kind != "i" or source.kind not in "iu":
        return
    basic = _is_basic_index(index)
    if basic is None:
        raise Unsupported("unsupported_call", f"item assignment of a NumPy {source} scalar into a "
                                              f"{target} array at this index")
    if not basic:
        return
    low, high = np.iinfo(target).min, np.iinfo(target).max
    checks = []
    if np.iinfo(source).min < low:
        checks.append(tx.binary_op(operator.lt, value, ConstantVariable(source.type(low))))
    if np.iinfo(source).max > high:
        checks.append(tx.binary_op(operator.gt, value, ConstantVariable(source.type(high))))
    if checks:
        out_of_range = checks[0] if len(checks) == 1 else tx.binary_op(operator.or_, *checks)
        tx.tr.run_checks.append(out_of_range)


def _is_basic_index(index: Variable) -> bool | None:
    """Is ``index`` NumPy's basic indexing (True), advanced (False), or a
    case this does not decide (None: a bool or a 0-d array as an index)?"""
    # lazy: containers imports callables, which imports this module
    from .containers import ListVariable, SliceVariable, TupleVariable
    items = index.items if isinstance(index, TupleVariable) else [index]
    if isinstance(index, ConstantVariable) and isinstance(index.as_constant(), tuple):
        items = [ConstantVariable(c) for c in index.as_constant()]
    basic = True
    for item in items:
        if isinstance(item, TensorVariable):
            if not item.shape:
                return None
            basic = False
        elif isinstance(item, ListVariable):
            basic = False
        elif isinstance(item, SliceVariable):
            continue
        elif item.is_constant():
            c = item.as_constant()
            if isinstance(c, (bool, np.bool_)):
                return None
            if isinstance(c, (list, np.ndarray)):
                basic = False
            elif not isinstance(c, (int, np.integer, slice, type(Ellipsis), type(None))):
                return None
        elif item.python_type() is not int:  # a dynamic int (a graph input) is basic
            return None
    return basic


@HOOKS.provide
def ufunc_add_at(tx, args, kwargs) -> Variable:
    """``np.add.at(a, index, value)`` on an ndarray: frame's functional
    ``add_at`` (a ``scatter_add`` at the positions ``a[index]`` selects: a
    repeated position gets every addition) written into ``a`` as
    ``a[index] = value`` is.  NumPy adds in the dtype its type resolution picks
    and casts back into ``a``; frame adds in ``a``'s dtype, so only a value
    whose result type with ``a`` is ``a``'s dtype is captured (a Python scalar
    is weak: ``np.add.at(counts, idx, 1)``); other values, bool arrays and
    boolean masks run natively."""
    if kwargs or len(args) != 3:
        raise Unsupported("unsupported_call", "numpy.add.at with other than three positional "
                                              "arguments")
    a, index, value = args
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY:
        raise Unsupported("unsupported_call", "numpy.add.at on something other than an ndarray")
    target = a.meta.dtype
    if isinstance(value, TensorVariable):
        if value.kind == TENSOR:
            raise Unsupported("unsupported_call", "numpy.add.at of a frame Tensor into a NumPy array")
        loop = np.result_type(target, value.meta.dtype)
    else:
        v = value.as_constant() if value.is_constant() else None
        if type(v) not in (bool, int, float) and not isinstance(v, np.generic):
            raise Unsupported("unsupported_call", f"numpy.add.at of {value!r}")
        try:
            loop = np.result_type(target, v)
        except (TypeError, OverflowError) as e:
            raise Unsupported("unsupported_call", f"numpy.add.at of {v!r} into a {target} array "
                                                  f"({type(e).__name__})") from e
    if loop != target or target.kind == "b":
        raise Unsupported("unsupported_call", f"numpy.add.at adds {target} and this value in "
                                              f"{loop}, then casts back: runs natively")
    HOOKS.check_inplace(tx, a, value)
    tx.tr.item_written(a)
    result = tx.call_real(add_at, [a, index, value], {}, numpy_semantics=True,
                          numpy_ref=_numpy_add_at)
    tx.write_in_place(a, result)
    return ConstantVariable(None)


def _numpy_add_at(a, index, value):
    """NumPy's ``np.add.at`` on a copy (meta arrays are read-only)."""
    np.add.at(np.array(a, copy=True), index, value)


def _sequence_value(tx, value: Variable, target: np.dtype) -> Variable:
    """The array NumPy makes of a list or tuple stored into an array of
    ``target`` (``traj[i] = (x, v)``): each item converted to ``target``
    (``np.asarray(value, dtype=target)``).  Constant items are converted by
    NumPy at trace time (one that raises or warns runs natively); traced
    items (NumPy scalars and arrays, of one shape) must be of ``target``'s
    kind (a float into a float array: NumPy's per-item conversion is the
    cast), a dynamic Python or NumPy scalar is a 0-d graph input of ``target``
    (``scalars.scalar_input``); then they are stacked.  Nested sequences holding traced values, frame
    Tensors and other items run natively."""
    # lazy: containers imports callables, which imports this module
    from .containers import ListVariable, TupleVariable, constant_value, is_constant_value

    def dynamic(item) -> bool:   # a Python or NumPy scalar that is a graph input (scalars.py)
        if not (isinstance(item, ScalarVariable) and item.dynamic):
            return False
        c = item.concrete
        if type(c) is float or isinstance(c, np.floating):
            return target.kind in "fc"
        if type(c) is int:
            return target.kind in "iufc"
        return isinstance(c, np.integer) and np.can_cast(type(c), target, "safe")
    if is_constant_value(value) and not any(dynamic(i) for i in value.items):
        try:
            with warnings.catch_warnings(), np.errstate(all="raise"):
                warnings.simplefilter("error")
                converted = np.asarray(constant_value(value), dtype=target)
        except Exception as e:  # noqa: BLE001 - NumPy's error (or warning) comes natively
            raise Unsupported("unsupported_call", f"item assignment of a sequence into a {target} "
                                                  f"array ({type(e).__name__})") from e
        return tx.wrap_result(converted)
    items = []
    for item in value.items:
        if dynamic(item):   # converted by the entry (a value it cannot convert is a miss)
            item = scalar_input(tx, item, target)
        if isinstance(item, TensorVariable):
            if item.kind == TENSOR or item.meta.dtype.kind != target.kind:
                raise Unsupported("unsupported_call", f"item assignment of a sequence holding "
                                                      f"{item!r} into a {target} array")
            if item.meta.dtype != target:
                item = _ndarray_method(tx, item, "astype", [ConstantVariable(target)], {})
        elif is_constant_value(item) and isinstance(constant_value(item), (bool, int, float, complex,
                                                                           np.generic)):
            item = _sequence_value(tx, TupleVariable([item]), target)
            item = HOOKS.numpy_call(tx, np.reshape, [item, ConstantVariable(())], {})
        else:
            raise Unsupported("unsupported_call", f"item assignment of a sequence holding {item!r} "
                                                  f"into a {target} array")
        items.append(item)
    if len({tuple(i.meta.shape) for i in items}) != 1:
        raise Unsupported("unsupported_call", "item assignment of a sequence of arrays of "
                                              "different shapes")
    return HOOKS.numpy_call(tx, np.stack, [ListVariable(items)], {})


def _numpy_setitem(a, index, value):
    """NumPy's ``a[index] = value`` on a copy (meta arrays are read-only)."""
    a = np.array(a, copy=True)
    a[index] = value


# NumPy functions that hand an array back as it is, copy it, convert its dtype,
# or read its metadata: their reference signatures (NumPy 2)
def _asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None): ...
def _array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None): ...
def _copy(a, order="K", subok=False): ...
def _ravel(a, order="C"): ...
def _shape(a): ...
def _ndim(a): ...
def _size(a, axis=None): ...


def _atleast(a): ...


_ARRAY_FUNCTIONS = {np.asarray: _asarray, np.asanyarray: _asarray, np.array: _array,
                    np.copy: _copy, np.ravel: _ravel, np.shape: _shape, np.ndim: _ndim,
                    np.size: _size, np.atleast_1d: _atleast, np.atleast_2d: _atleast,
                    np.atleast_3d: _atleast}
# np.atleast_<n>d(a) of an array of lower rank: a view of this shape
_ATLEAST = {np.atleast_1d: lambda s: s or (1,),
            np.atleast_2d: lambda s: s if len(s) >= 2 else (1,) * (2 - len(s)) + s,
            np.atleast_3d: lambda s: s if len(s) >= 3 else {0: (1, 1, 1), 1: (1,) + s + (1,),
                                                              2: s + (1,)}[len(s)]}


@HOOKS.provide
def numpy_array_function(tx, fn, args, kwargs) -> Variable | None:
    """``np.asarray(a)`` (``a`` itself), ``np.array(a)`` / ``np.copy(a)`` (a new
    array), their ``dtype=`` (``astype``), ``np.ravel``, ``np.atleast_<n>d``
    (``a`` itself or a reshaped view), ``np.shape``, ``np.ndim``, ``np.size``
    on an ndarray; None for other functions and arguments (the caller's
    tables decide)."""
    ref = _ARRAY_FUNCTIONS.get(fn)
    if ref is None:
        return None
    try:
        bound = inspect.signature(ref).bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    given = {k: v if isinstance(v, Variable) else ConstantVariable(v)
             for k, v in bound.arguments.items()}
    a = given.pop("a") if "a" in given else given.pop("object")
    if fn in (np.array, np.asarray) and not isinstance(a, TensorVariable) and \
            all(v.is_constant() for v in given.values()):
        return _array_of_sequence(tx, a, {k: v.as_constant() for k, v in given.items()})
    if isinstance(a, TensorVariable) and a.kind == NPSCALAR and fn in (np.shape, np.ndim, np.size) \
            and given.get("axis", ConstantVariable(None)).is_none():   # a NumPy scalar's
        return tx.wrap_static({np.shape: (), np.ndim: 0, np.size: 1}[fn])
    if isinstance(a, TensorVariable) and a.kind == NPSCALAR and \
            all(v.is_constant() for v in given.values()):
        return _scalar_as_array(tx, a, fn, {k: v.as_constant() for k, v in given.items()})
    if not isinstance(a, TensorVariable) or a.kind != NDARRAY or \
            not all(v.is_constant() for v in given.values()):
        return None
    opts = {k: v.as_constant() for k, v in given.items()}
    if fn is np.shape:
        return tx.wrap_static(tuple(a.shape))
    if fn is np.ndim:
        return ConstantVariable(len(a.shape))
    if fn is np.size:
        axis = opts.get("axis")
        if axis is None:
            return ConstantVariable(int(np.prod(a.shape, dtype=np.int64)))
        return ConstantVariable(np.size(a.meta, axis))  # NumPy's errors for a bad axis
    if fn is np.ravel:
        if opts.get("order", "C") != "C":
            return None
        return _ndarray_method(tx, a, "ravel", [], {})
    if fn in _ATLEAST:
        shape = _ATLEAST[fn](tuple(a.shape))
        if shape == tuple(a.shape):
            a.check_fresh()
            return a  # NumPy hands the array itself back
        return _ndarray_method(tx, a, "reshape", [tx.wrap_static(shape)], {})
    copy = True if fn is np.copy else opts["copy"]
    # np.asarray(a, order=...) copies or not by a's layout (a break); a copy is
    # made in the order asked for (np.array: order=None is "K")
    order = opts.get("order") or "K"
    if order not in (("C", "A", "K") if copy else ("K", "A")) or opts.get("subok") \
            or opts.get("like") is not None or opts.get("device") not in (None, "cpu") \
            or opts.get("ndmin", 0):
        return None
    dtype = opts.get("dtype")
    try:
        dtype = a.meta.dtype if dtype is None else np.dtype(dtype)
    except TypeError:
        return None
    if dtype == a.meta.dtype:
        if copy:
            return _ndarray_method(tx, a, "copy", [ConstantVariable(order)], {})
        a.check_fresh()
        return a  # np.asarray(a) is a
    if copy is False:
        return None  # NumPy raises: a conversion needs a copy
    return _ndarray_method(tx, a, "astype", [ConstantVariable(dtype)],
                           {"order": ConstantVariable(order)})


def _scalar_as_array(tx, s: TensorVariable, fn, opts: dict) -> Variable | None:
    """``np.asarray(s)``, ``np.array(s)``, ``np.copy(s)``, ``np.atleast_<n>d(s)`` of
    a NumPy scalar: a new array of its value (NumPy always makes one; 0-d, or of
    the ``atleast`` shape), cast to ``dtype=`` when one is given; None where
    NumPy raises or the options are not modelled (the caller's tables decide)."""
    if fn in _ATLEAST:
        zero_d = TensorVariable(s.meta, NDARRAY)
        return _ndarray_method(tx, zero_d, "reshape", [tx.wrap_static(_ATLEAST[fn](()))], {})
    if fn not in (np.asarray, np.asanyarray, np.array, np.copy):
        return None
    if opts.get("copy") is False or opts.get("ndmin", 0) or opts.get("subok") or \
            opts.get("like") is not None or opts.get("device") not in (None, "cpu") or \
            opts.get("order") not in (None, "K", "A", "C", "F"):
        return None   # NumPy raises (no copy avoided), or a shape or subclass to model
    try:
        dtype = s.meta.dtype if opts.get("dtype") is None else np.dtype(opts["dtype"])
    except TypeError:
        return None
    if dtype.kind not in "biuf":
        return None
    if dtype != s.meta.dtype:
        s = _ndarray_method(tx, s, "astype", [ConstantVariable(dtype)], {})
    return TensorVariable(s.meta, NDARRAY)


def _array_of_sequence(tx, seq: Variable, opts: dict) -> Variable | None:
    """``np.array([a, b, a * b])`` / ``np.asarray((x, v), dtype=...)`` of a flat
    list or tuple holding traced NumPy scalars or arrays (one shape) and
    constants: NumPy itself, run on the items' meta arrays and the constants,
    gives the result's dtype (its array coercion: a Python float makes
    float64) or raises (then None: the caller's tables decide, a break); the
    constants are converted to it by NumPy at trace time, the traced items
    cast (NumPy's per-item conversion), then stacked.  None for anything else
    (nested sequences, frame Tensors, order= / ndmin=...)."""
    # lazy: containers imports callables, which imports this module
    from .containers import ListVariable, TupleVariable, constant_value, is_constant_value
    if not isinstance(seq, (ListVariable, TupleVariable)) or not seq.items:
        return None
    if opts.get("order") not in (None, "K", "A") or opts.get("subok") or opts.get("ndmin", 0) or \
            opts.get("like") is not None or opts.get("device") not in (None, "cpu"):
        return None
    probes, traced = [], []
    for item in seq.items:
        if isinstance(item, TensorVariable):
            if item.kind == TENSOR:
                return None
            probes.append(item.to_numpy())
            traced.append(item)
        elif is_constant_value(item) and isinstance(constant_value(item), (bool, int, float, complex,
                                                                           np.generic)):
            probes.append(constant_value(item))
        else:
            return None
    shape = tuple(traced[0].meta.shape)
    if any(tuple(t.meta.shape) != shape for t in traced) or (shape and len(traced) < len(probes)):
        return None   # ragged: NumPy raises
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            target = np.array(probes, dtype=opts.get("dtype")).dtype
    except Exception:  # noqa: BLE001 - NumPy's error comes natively
        return None
    if target.kind not in "biufc":
        return None
    items = []
    for item in seq.items:
        if isinstance(item, TensorVariable):
            if item.meta.dtype != target:
                item = _ndarray_method(tx, item, "astype", [ConstantVariable(target)], {})
        else:
            try:
                with warnings.catch_warnings(), np.errstate(all="raise"):
                    warnings.simplefilter("error")
                    value = np.asarray(constant_value(item), dtype=target)
            except Exception:  # noqa: BLE001 - NumPy's error (or warning) comes natively
                return None
            item = HOOKS.numpy_call(tx, np.reshape, [tx.wrap_result(value.reshape(1)),
                                                     ConstantVariable(())], {})
        items.append(item)
    return HOOKS.numpy_call(tx, np.stack, [ListVariable(items)], {})


def _ndarray_method(tx, t: TensorVariable, name: str, args, kwargs) -> Variable:
    if name == "view" and t.kind == NDARRAY:   # the input's bytes, reinterpreted
        return ndarray_view(tx, t, args, kwargs)
    if name not in NDARRAY_METHODS:
        raise Unsupported("unsupported_call", f"ndarray.{name}() has no frame op")
    function = HOOKS.ndarray_method_function(name)
    if function is not None:  # x.sum(...) is np.sum(x, ...): NumPy's operands and out=
        return HOOKS.numpy_call(tx, function, [t, *args], kwargs, numpy_ref=getattr(np.ndarray, name))
    if name == "fill":  # a[...] = value: NumPy's conversion of the scalar, in place
        if t.kind != NDARRAY or kwargs or len(args) != 1:
            raise Unsupported("unsupported_call", "ndarray.fill() with these arguments")
        value = args[0]
        if isinstance(value, TensorVariable) and (value.kind == TENSOR or value.shape):
            raise Unsupported("unsupported_call", "ndarray.fill() of an array")
        ndarray_setitem(tx, t, ConstantVariable(Ellipsis), value)
        return ConstantVariable(None)
    if name == "sort":  # sorts in place, returns None
        if t.kind == NPSCALAR:
            raise UserCodeRaises("a NumPy scalar has no in-place sort")
        result = HOOKS.numpy_call(tx, np.sort, [t, *args], kwargs, numpy_ref=np.sort)
        tx.write_in_place(t, result)
        return ConstantVariable(None)
    if name == "astype":
        same, order = _astype_same_array(tx, t, args, kwargs)
        if same is not None:
            return same
        # NumPy's reading of the dtype: ``a.astype(float)`` is float64 (frame.astype,
        # for Tensors, reads the Python type ``float`` as frame's default float32)
        given = args[0] if args else kwargs["dtype"]
        dtype = np.dtype(given.as_constant())
        if t.kind == NDARRAY and t.shape and (dtype == t.meta.dtype or order != "K"):
            # a new array laid out in ``order``: of the dtype itself a copy; else the
            # cast of a copy in that order (a cast keeps its operand's layout, "K")
            copied = _array_copy(tx, t, order)
            if dtype == t.meta.dtype:
                return copied
            t = copied
        args, kwargs = [ConstantVariable(dtype)], {}
    orig_args = args
    if name in ("flatten", "ravel", "swapaxes"):
        if kwargs or not all(a.is_constant() for a in args):
            raise Unsupported("unsupported_call", f"ndarray.{name}() with these arguments")
        orig = [a.as_constant() for a in args]

        def numpy_ref(arr, *_, **__):  # the real method, on the original arguments
            return getattr(arr, name)(*orig)
    else:
        numpy_ref = getattr(np.ndarray, name)
    if name in ("flatten", "ravel"):
        if args:  # order='F' and friends
            raise Unsupported("unsupported_call", f"ndarray.{name}() with an order")
        if name == "flatten":   # always a new, contiguous array (a reshape may be a view)
            flat = tx.call_real(frame.reshape, [t, ConstantVariable(-1)], {},
                                numpy_semantics=True, numpy_ref=numpy_ref)
            return _array_copy(tx, flat, "C")
        # ravel is the array itself, reshaped, when it is C-contiguous (X.ravel()
        # and X are one array to a product's syrk test), else a copy: a reshape
        fn, args = frame.reshape, [ConstantVariable(-1)]
    elif name == "copy":
        order = args[0] if args else kwargs.get("order", ConstantVariable("C"))
        if len(args) + len(kwargs) > 1 or set(kwargs) - {"order"} or not order.is_constant() \
                or order.as_constant() not in ("C", "A", "K"):
            # order='F': a Fortran-ordered copy, which only the cpu tier lays out so (a
            # returned array's .flags read at a break would differ under OpenVINO)
            raise Unsupported("unsupported_call", "ndarray.copy() with these arguments")
        return _array_copy(tx, t, order.as_constant())
    elif name == "swapaxes":
        perm = list(range(len(t.shape)))
        try:
            a, b = (operator.index(x) for x in orig)
            perm[a], perm[b] = perm[b], perm[a]
        except (TypeError, ValueError, IndexError) as e:
            raise UserCodeRaises(f"swapaxes{tuple(orig)}: {e}") from e
        fn, args = frame.transpose, [ConstantVariable(p) for p in perm]
    else:
        fn = getattr(frame, name)
    result = tx.call_real(fn, [t, *args], kwargs, numpy_semantics=True, numpy_ref=numpy_ref)
    if name in NDARRAY_VIEW_METHODS:
        tx.tr.mark_view(result, t, getattr(np.ndarray, name), orig_args, kwargs)
    return result


@HOOKS.provide
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
        result = tx.call_real(frame.transpose, [t], {}, numpy_semantics=t.kind != TENSOR,
                              numpy_ref=np.transpose)
        return tx.tr.mark_view(result, t, np.transpose) if t.kind != TENSOR else result
    if name == "requires_grad" and t.kind == TENSOR:
        return ConstantVariable(t.requires_grad)
    if name == "grad" and t.kind == TENSOR:
        return HOOKS.read_grad(tx, t)
    if name in ("real", "imag", "flat", "data", "base", "strides", "flags", "ctypes", "itemsize",
                "nbytes"):
        if name == "itemsize":
            return ConstantVariable(t.meta.dtype.itemsize)
        if name == "nbytes":
            return ConstantVariable(t.meta.dtype.itemsize * int(np.prod(t.shape, dtype=np.int64)))
        raise Unsupported("unsupported_object", f"tensor attribute .{name}")
    attr = _type_lookup(t.python_type(), name)  # an instance's attribute: not the metaclass's
    if attr is _MISSING:
        raise UserCodeRaises(f"AttributeError: {t.python_type().__name__!r} object has no "
                             f"attribute {name!r}")
    if isinstance(attr, (int, float, str, bool, type(None))):
        return ConstantVariable(attr)
    if isinstance(attr, (property, staticmethod, classmethod)) or not callable(attr):
        raise Unsupported("unsupported_object", f"tensor attribute .{name}")
    return TensorMethodVariable(t, name)


_MISSING = object()


def _type_lookup(cls: type, name: str):
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return _MISSING


@HOOKS.provide
def tensor_getitem(tx, t: TensorVariable, index: Variable) -> Variable:
    """``t[index]`` through frame's indexing (the same lowering eager uses).
    NumPy basic indexing (ints, slices, None, ...) returns a view."""
    if scalar_tensor_entries(index):
        return _getitem_at_traced_ints(tx, t, index)
    dynamic = dynamic_index(tx, t, index)
    if dynamic is not None:   # dynamic ints as index or slice bounds: graph inputs
        return dynamic.index_into(tx, t)
    try:
        result = tx.call_real(operator.getitem, [t, index], {}, numpy_semantics=t.kind != TENSOR)
    except Unsupported as e:   # a boolean mask: reduced later, it stays in the graph
        from .masked import masked_getitem   # lazy: masked imports numpy_calls, which imports this
        selection = masked_getitem(tx, t, index, e)
        if selection is None:
            raise
        return selection
    if t.kind != TENSOR and HOOKS.is_basic_index(index):
        tx.tr.mark_view(result, t, operator.getitem, [index])
    return result


def _getitem_tuple(a, *entries):
    return a[entries]


def _getitem_at_traced_ints(tx, t: TensorVariable, index: Variable) -> Variable:
    """``t[i]`` / ``t[i, 2, j]`` where some entries are 0-d integer tensors (a
    NumPy integer computed in the function: ``x[indices[k]]``), which NumPy
    reads as ints.  Every axis indexed by an int (a scalar element, not a view):
    the traced entries become length-1 arrays (``i[None]``, a gather checked at
    run time) and item 0 of the result is the element.  Fewer ints (a view
    whose position depends on the data) is a break."""
    numpy_semantics = t.kind != TENSOR
    traced = set(scalar_tensor_entries(index))
    items = getattr(index, "items", None)
    entries = [index] if isinstance(index, TensorVariable) else list(items)
    ints = all(i in traced or (e.is_constant() and isinstance(e.as_constant(), (int, np.integer))
                               and not isinstance(e.as_constant(), (bool, np.bool_)))
               for i, e in enumerate(entries))
    if not ints or len(entries) != t.meta.ndim:
        raise Unsupported("data_dependent", "indexing an array at a position given by an integer "
                                            "tensor or NumPy integer computed in the function "
                                            "(the result is a view)")
    lifted = [tx.call_real(operator.getitem, [e, ConstantVariable(None)], {},
                           numpy_semantics=e.kind != TENSOR) if i in traced else e
              for i, e in enumerate(entries)]
    picked = tx.call_real(_getitem_tuple, [t, *lifted], {}, numpy_semantics=numpy_semantics)
    return tx.call_real(operator.getitem, [picked, ConstantVariable(0)], {},
                        numpy_semantics=numpy_semantics)


def construct_tensor(tx, args, kwargs) -> Variable:
    """``frame.tensor(data, dtype=None, requires_grad=False)`` / ``frame.Tensor(...)``:
    a copy of a traced tensor is a new variable on the same value."""
    names = ("data", "dtype", "requires_grad")
    bound = dict(zip(names, args))
    bound.update(kwargs)
    data = bound.get("data")
    if not isinstance(data, TensorVariable):
        return tx.call_real(tensor, args, kwargs)
    flag = bound.get("requires_grad", ConstantVariable(False))
    if len(args) > 3 or set(kwargs) - set(names) or not flag.is_constant() or flag.as_constant():
        raise Unsupported("unsupported_call", "frame.tensor(...) with requires_grad or extra "
                                              "arguments under capture")
    data.check_fresh()
    out = TensorVariable(_fresh_meta(tx, data), TENSOR)  # a copy: not tracked for autograd
    dtype = bound.get("dtype")
    if dtype is not None and not (dtype.is_constant() and dtype.as_constant() is None):
        cast = tx.call_real(frame.astype, [out, dtype], {})
        out = cast if cast is not out else TensorVariable(_fresh_meta(tx, data), TENSOR)
    return out


def _array_copy(tx, t: TensorVariable, order: str) -> TensorVariable:
    """NumPy's copy of ``t`` laid out in ``order``: a new array of the same value,
    op ``copy`` for arrays of rank >= 1 (its layout is what layout-sensitive
    readers see, ops/layout.py); a 0-d copy has no layout to speak of."""
    t.check_fresh()
    if t.kind == NPSCALAR or not t.shape:
        # values are immutable inside the graph: a new variable on the same value
        # is a new array (in-place updates of either replace only its own meta)
        return TensorVariable(t.meta, NPSCALAR if t.kind == NPSCALAR else NDARRAY)
    return tx.call_real(array_copy, [t, ConstantVariable(order)], {}, numpy_semantics=True,
                        numpy_ref=lambda a, order: np.array(a, order=order, copy=True))


def _fresh_meta(tx, t: TensorVariable):
    """A new meta array for ``t``'s graph value (a different tensor on the same value)."""
    tracer = tx.tr.tracer
    return tracer.meta(tracer.values[id(t.meta)])


def _astype_same_array(tx, t: TensorVariable, args, kwargs) -> tuple[Variable | None, str]:
    """``a.astype(dtype, order, casting, subok, copy)``: (``a`` itself when
    ``copy=False`` and the dtype is ``a``'s (NumPy returns the same array), else
    None: a new array is made; the ``order`` of a new array); ``casting`` is
    checked as NumPy checks it."""
    names = ("dtype", "order", "casting", "subok", "copy")
    if len(args) > len(names) or set(kwargs) - set(names) or \
            set(kwargs) & set(names[:len(args)]):
        raise UserCodeRaises("astype() got unexpected or repeated arguments")
    given = dict(zip(names, args), **kwargs)
    if not all(v.is_constant() for v in given.values()) or "dtype" not in given:
        raise Unsupported("unsupported_call", "ndarray.astype() with these arguments")
    values = {k: v.as_constant() for k, v in given.items()}
    try:
        dtype = np.dtype(values["dtype"])
    except TypeError as e:
        raise UserCodeRaises(f"astype({values['dtype']!r}): {e}") from e
    order = values.get("order", "K")
    if order not in ("K", "A", "C") or values.get("subok", True) is not True:
        raise Unsupported("unsupported_call", "ndarray.astype() with order='F' or subok=False")
    casting = values.get("casting", "unsafe")
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise UserCodeRaises(f"astype(casting={casting!r}): not a casting rule")
    if not np.can_cast(t.meta.dtype, dtype, casting=casting):
        raise UserCodeRaises(f"Cannot cast array data from {t.meta.dtype} to {dtype} according "
                             f"to the rule {casting!r}")
    if dtype == t.meta.dtype and not values.get("copy", True) and t.kind != NPSCALAR:
        if order == "C" and t.shape:
            raise Unsupported("unsupported_call", "ndarray.astype(copy=False) with order "
                                                  "'C' (NumPy copies by the layout)")
        return t, order
    return None, order


def from_numpy_view(tx, args, kwargs) -> Variable:
    """``frame.from_numpy(array)`` shares memory: a Tensor view of an input array."""
    (array,) = args if not kwargs else (kwargs.get("array"),)
    if not isinstance(array, TensorVariable) or array.kind != NDARRAY:
        return tx.call_real(from_numpy, args, kwargs)
    if array.source is None or array.base is not None:
        raise Unsupported("unsupported_call", "frame.from_numpy of an array computed in the "
                                              "function (its memory layout is unknown)")
    tx.tr.guards.c_contiguous(array.source)
    array.check_fresh()
    return tx.tr.mark_view(TensorVariable(array.meta, TENSOR), array, from_numpy)
