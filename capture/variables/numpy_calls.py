"""NumPy calls on traced arrays: how NumPy itself reads the arguments.

Two things frame's functions do differently from NumPy, fixed here before a
NumPy call runs on meta arrays (``NumpyFunctionVariable``, ndarray methods,
``ufunc.reduce``):

- **array_like arguments.**  NumPy converts a list or tuple of numbers with
  ``np.asarray`` (Python floats -> float64, ints -> int64, ints beyond int64 ->
  an object array), while frame's functions make float32 of Python floats.
  When the call has NumPy semantics (no frame Tensor among its arguments) a
  list at an array_like parameter becomes the constant array NumPy would make.
  Python scalars stay Python scalars: they are weak (NEP 50) in both.
- **``out=`` / ``where=``.**  ``np.exp(x, out=x)`` writes into ``x`` and
  returns it.  The result is computed without ``out`` and written into the
  target with ``write_in_place`` (a side effect replayed on an input after the
  graph runs): elementwise ufuncs (and ``np.clip``) broadcast and cast with
  NumPy's ``same_kind`` rule, ``where=`` keeps the other elements of ``out``;
  a reduction writes only an ``out`` of its own dtype and shape (NumPy would
  reduce in the dtype of ``out``).  A call frame's Tensor protocol handles
  (a frame Tensor among the arguments) writes as ``Tensor.__array_ufunc__``
  does (``np.copyto``, ``same_kind``).  Anything else with ``out=`` is a graph
  break: NumPy runs it.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np

from ..errors import Unsupported, UserCodeRaises
from .base import NDARRAY, NPSCALAR, TENSOR, ConstantVariable, TensorVariable, Variable, broadcasts_to
from .containers import ListVariable, TupleVariable, constant_value, is_constant_value
from .registry import HOOKS
from .tensor_ops import NDARRAY_METHODS

__all__ = ["numpy_call", "ndarray_method_function", "as_array_operand"]

# NumPy functions frame models (frame._numpy_interop.FUNCTION_OPS): their
# array_like parameters; "*name" is a sequence of array_likes
_ARRAY_LIKE: dict = {
    np.sum: ("a",), np.mean: ("a",), np.max: ("a",), np.min: ("a",), np.prod: ("a",),
    np.argmax: ("a",), np.argmin: ("a",), np.reshape: ("a",), np.transpose: ("a",),
    np.concatenate: ("*arrays",), np.stack: ("*arrays",), np.split: ("ary",),
    np.squeeze: ("a",), np.expand_dims: ("a",), np.broadcast_to: ("array",),
    np.where: ("condition", "x", "y"), np.clip: ("a", "a_min", "a_max", "min", "max"),
    np.take: ("a", "indices"), np.flip: ("m",), np.pad: ("array",),
    np.std: ("a",), np.var: ("a",), np.linalg.norm: ("x",), np.argsort: ("a",), np.sort: ("a",),
    np.take_along_axis: ("arr", "indices"), np.cumsum: ("a",), np.cumprod: ("a",),
    np.array_split: ("ary",),
    np.dot: ("a", "b"), np.vdot: ("a", "b"), np.inner: ("a", "b"), np.outer: ("a", "b"),
    np.tensordot: ("a", "b"), np.any: ("a",), np.all: ("a",), np.count_nonzero: ("a",),
    np.vstack: ("*tup",), np.hstack: ("*tup",), np.dstack: ("*tup",), np.column_stack: ("*tup",),
    np.swapaxes: ("a",), np.moveaxis: ("a",), np.diff: ("a", "prepend", "append"),
    np.roll: ("a",), np.repeat: ("a",), np.tile: ("A",), np.triu: ("m",), np.tril: ("m",),
    np.isclose: ("a", "b"), np.allclose: ("a", "b"), np.round: ("a",), np.around: ("a",),
    np.ptp: ("a",), np.average: ("a",), np.zeros_like: ("a",), np.ones_like: ("a",),
    np.full_like: ("a", "fill_value"), np.empty_like: ("prototype",), np.nan_to_num: ("x",),
}
# numpy.linalg and the diagonal helpers (frame/_numpy_linalg.py)
_ARRAY_LIKE.update({
    np.linalg.inv: ("a",), np.linalg.solve: ("a", "b"), np.linalg.det: ("a",),
    np.linalg.slogdet: ("a",), np.linalg.eigh: ("a",), np.linalg.eigvalsh: ("a",),
    np.linalg.cholesky: ("a",), np.linalg.qr: ("a",), np.linalg.svd: ("a",),
    np.linalg.pinv: ("a",), np.diagonal: ("a",), np.trace: ("a",), np.diag: ("v",),
})
if hasattr(np, "amax"):
    _ARRAY_LIKE[np.amax] = _ARRAY_LIKE[np.max]
    _ARRAY_LIKE[np.amin] = _ARRAY_LIKE[np.min]

# functions whose out= is a reduction's (written when dtype and shape are its own)
_REDUCTIONS = {np.sum, np.mean, np.max, np.min, np.prod, np.argmax, np.argmin,
               getattr(np, "amax", np.max), getattr(np, "amin", np.min), np.std, np.var,
               np.cumsum, np.cumprod, np.any, np.all, np.count_nonzero, np.ptp}
# ... and those whose out= is an elementwise ufunc's
_ELEMENTWISE = {np.clip}

# ndarray methods with the parameters (after the array) of a NumPy function
_METHOD_FUNCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                     "prod": np.prod, "argmax": np.argmax, "argmin": np.argmin,
                     "clip": np.clip, "take": np.take, "std": np.std, "var": np.var,
                     "cumsum": np.cumsum, "cumprod": np.cumprod, "argsort": np.argsort,
                     "any": np.any, "all": np.all, "round": np.round, "dot": np.dot,
                     "repeat": np.repeat, "diagonal": np.diagonal, "trace": np.trace,
                     "searchsorted": np.searchsorted}
NDARRAY_METHODS.update({"diagonal", "trace", "searchsorted"})
# functions whose result is a (read-only) view of their array argument: the
# diagonal of a 2-D (np.diag) or n-D (np.diagonal, ndarray.diagonal) array
_DIAGONAL_VIEWS = {np.diagonal, np.diag}


def _reduce_signature(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                      where=True):
    """The parameters of ``ufunc.reduce``."""


_SIGNATURES: dict = {}


def _signature(fn) -> inspect.Signature:
    target = _reduce_signature if _is_reduce(fn) else fn  # bound methods are new objects
    sig = _SIGNATURES.get(target)
    if sig is None:
        sig = _SIGNATURES[target] = inspect.signature(target)
    return sig


# the array_like parameters of the ufunc methods capture models
_UFUNC_METHOD_ARRAYS = {"reduce": ("array",), "accumulate": ("array",), "outer": ("A", "B")}


def _ufunc_method(fn) -> str | None:
    """``"reduce"`` for ``np.add.reduce`` (a method of a ufunc), else None."""
    return getattr(fn, "__name__", None) if isinstance(getattr(fn, "__self__", None), np.ufunc) \
        else None


def _is_reduce(fn) -> bool:
    return getattr(fn, "__name__", None) == "reduce" and isinstance(getattr(fn, "__self__", None),
                                                                     np.ufunc)


@HOOKS.provide
def ndarray_method_function(name: str):
    """The NumPy function ``np.f(x, *args)`` that ``x.name(*args)`` is, or None."""
    return _METHOD_FUNCTIONS.get(name)


class _Call:
    """A NumPy call's arguments by where they were passed, with ``out`` and
    ``where`` taken out."""

    def __init__(self, args: list[Variable], kwargs: dict[str, Variable]):
        self.args = list(args)
        self.kwargs = dict(kwargs)
        self.out: Variable | None = None
        self.where: Variable | None = None

    def pop(self, slot):
        kind, key = slot
        if kind == "kw":
            return self.kwargs.pop(key)
        if key != len(self.args) - 1:  # later positions would move: rare, let NumPy run it
            raise Unsupported("unsupported_call", "out= passed by position before other arguments")
        return self.args.pop()

    def get(self, slot) -> Variable:
        kind, key = slot
        return self.kwargs[key] if kind == "kw" else self.args[key]

    def put(self, slot, value: Variable) -> None:
        kind, key = slot
        if kind == "kw":
            self.kwargs[key] = value
        else:
            self.args[key] = value


def _slots(fn, args, kwargs) -> dict[str, tuple]:
    """parameter name -> ("pos", index) or ("kw", key), as Python would bind the
    call; {} when the signature does not bind it (frame's call decides)."""
    try:
        bound = _signature(fn).bind(*range(len(args)), **{k: ("kw", k) for k in kwargs})
    except TypeError as e:
        if "out" in kwargs:
            raise Unsupported("unsupported_call", f"{getattr(fn, '__name__', fn)}(): {e}") from e
        return {}
    slots = {}
    for name, value in bound.arguments.items():
        if isinstance(value, dict):  # **kwargs
            for k, v in value.items():
                slots[k] = v
        elif isinstance(value, int):
            slots[name] = ("pos", value)
        else:
            slots[name] = value
    return slots


def _default_typed_scalars(tx, call: _Call, slots) -> None:
    """``np.where(mask, 1.0, -1.0)``: the condition takes no part in the
    result's dtype, so two Python scalars are NumPy's default dtypes
    (float64, int64...: ``np.asarray`` of each, promoted as NumPy promotes
    them); frame would make them weak next to no typed array (float32)."""
    values = [call.get(s) for s in slots]
    if all(v.is_constant() and type(v.as_constant()) in (bool, int, float, complex) for v in values):
        for slot, v in zip(slots, values):
            call.put(slot, ConstantVariable(np.asarray(v.as_constant())[()]))


def _split(fn, args, kwargs) -> tuple[_Call, dict[str, tuple], bool]:
    """The call with ``out``/``where`` taken out, its array_like slots, and
    whether ``where`` is a ufunc's (a mask for ``out``)."""
    call = _Call(args, kwargs)
    if isinstance(fn, np.ufunc):
        nin = fn.nin
        if len(args) > nin:  # outputs passed positionally
            if "out" in kwargs:
                raise UserCodeRaises(f"{fn.__name__}() got out= twice")
            outs = args[nin:]
            call.args = list(args[:nin])
            call.out = outs[0] if len(outs) == 1 else TupleVariable(outs)
        elif "out" in call.kwargs:
            call.out = call.kwargs.pop("out")
        if "where" in call.kwargs:
            call.where = call.kwargs.pop("where")
        return call, {f"input{i}": ("pos", i) for i in range(min(nin, len(call.args)))}, True
    slots = _slots(fn, args, kwargs)
    if "out" in slots:
        call.out = call.pop(slots.pop("out"))
    names = _UFUNC_METHOD_ARRAYS.get(_ufunc_method(fn)) or _ARRAY_LIKE.get(fn, ())
    array_slots = {n: slots[n.lstrip("*")] for n in names if n.lstrip("*") in slots}
    return call, array_slots, False


def _single_out(out: Variable | None) -> Variable | None:
    """``out=x`` or ``out=(x,)``; None for ``out=None`` / ``out=(None,)``."""
    if out is None:
        return None
    if isinstance(out, TupleVariable):
        if len(out.items) != 1:
            raise Unsupported("unsupported_call", "out= with more than one array")
        out = out.items[0]
    if out.is_constant() and out.as_constant() is None:
        return None
    if not isinstance(out, TensorVariable) or out.kind == NPSCALAR:
        raise Unsupported("unsupported_call", "out= that is not an array")
    return out


def as_array_operand(tx, v: Variable) -> Variable:
    """A list/tuple at an array_like parameter, as ``np.asarray`` makes it."""
    if not isinstance(v, (ListVariable, TupleVariable)):
        return v
    if not is_constant_value(v):
        raise Unsupported("unsupported_call", "a list holding arrays as a NumPy operand (NumPy "
                                              "stacks it with its own dtype rules)")
    try:
        value = np.asarray(constant_value(v))
    except Exception as e:  # ragged lists and the like: NumPy raises, natively
        raise UserCodeRaises(f"np.asarray raises {type(e).__name__}: {e}") from e
    if value.dtype.kind not in "biufc":
        raise Unsupported("unsupported_object", f"a list NumPy makes a {value.dtype} array of")
    return tx.wrap_result(value)


def _convert_operands(tx, call: _Call, array_slots: dict[str, tuple]) -> None:
    for name, slot in array_slots.items():
        v = call.get(slot)
        if name.startswith("*") and isinstance(v, (ListVariable, TupleVariable)) and \
                tx.contains_tensor([v]):
            items = [as_array_operand(tx, i) for i in v.items]
            call.put(slot, type(v)(items) if isinstance(v, ListVariable) else TupleVariable(items))
        else:
            call.put(slot, as_array_operand(tx, v))


@HOOKS.provide
def numpy_call(tx, fn, args, kwargs, numpy_ref=None) -> Variable:
    """``fn(*args, **kwargs)`` for a NumPy function or ufunc (or ``ufunc.reduce``)
    with traced arrays among the arguments, as NumPy runs it."""
    if fn is np.lexsort and args and isinstance(args[0], ListVariable):
        # NumPy reads a list of keys as a tuple of them (each key converted on
        # its own), but only a tuple hands the call to the keys' __array_function__
        args = [TupleVariable(list(args[0].items)), *args[1:]]
    call, array_slots, ufunc_where = _split(fn, args, kwargs)
    # NumPy hands the call to Tensor.__array_ufunc__/__array_function__ when a
    # Tensor is an input or the output (never for where=)
    overriding = [*call.args, *(() if call.out is None else (call.out,))]
    frame_semantics = tx._any_tensor_kind(overriding, {k: v for k, v in call.kwargs.items()
                                                       if k != "where"})
    out = _single_out(call.out)
    if frame_semantics:
        # Tensor.__array_ufunc__ / __array_function__ handle the call: frame's rules
        # for the operands, any other keyword is theirs to refuse
        if call.where is not None:
            call.kwargs["where"] = call.where
        if out is not None and not (isinstance(fn, np.ufunc) or _is_reduce(fn)):
            raise Unsupported("unsupported_call", f"numpy.{fn.__name__} with out= on a frame Tensor "
                                                  f"(NumPy runs on the data)")
        result = tx.call_real(fn, call.args, call.kwargs, numpy_semantics=True, numpy_ref=numpy_ref)
        if out is None:
            return result
        HOOKS.check_inplace(tx, out, result)
        return tx.write_in_place(out, result)
    _convert_operands(tx, call, array_slots)
    if fn is np.where and "x" in array_slots and "y" in array_slots:
        _default_typed_scalars(tx, call, (array_slots["x"], array_slots["y"]))
    if out is None:
        if call.where is not None and not (
                call.where.is_constant() and call.where.as_constant() is True):
            raise Unsupported("unsupported_call", "where= without out=: NumPy leaves the other "
                                                  "elements uninitialised")
        result = tx.call_real(fn, call.args, call.kwargs, numpy_semantics=True, numpy_ref=numpy_ref)
        if fn in _DIAGONAL_VIEWS:
            _mark_diagonal_view(tx, fn, call, result)
        return result
    mask = None
    if ufunc_where and call.where is not None:
        mask = _where_mask(tx, call.where, out)
        if isinstance(mask, TensorVariable):
            _skip_masked_elements(tx, fn, call, mask)
    result = tx.call_real(fn, call.args, call.kwargs, numpy_semantics=True, numpy_ref=numpy_ref)
    if not isinstance(result, TensorVariable):
        raise Unsupported("unsupported_call", f"numpy.{getattr(fn, '__name__', fn)} with out= and "
                                              f"several results")
    elementwise = fn in _ELEMENTWISE or (isinstance(fn, np.ufunc) and fn.signature is None)
    if not elementwise:
        if result.shape != out.shape or result.meta.dtype != out.meta.dtype:
            raise Unsupported("unsupported_call", f"out= of dtype {out.meta.dtype} and shape "
                                                  f"{list(out.shape)} for a result of "
                                                  f"{result.meta.dtype} {list(result.shape)}")
        if not (isinstance(fn, np.ufunc) or _is_reduce(fn) or fn in _REDUCTIONS):
            raise Unsupported("unsupported_call", f"numpy.{fn.__name__} with out=")
    if mask is not None:
        if mask is False:
            if not np.can_cast(result.meta.dtype, out.meta.dtype, casting="same_kind"):
                raise UserCodeRaises(f"cannot cast {result.meta.dtype} to "
                                     f"{out.meta.dtype} (casting='same_kind')")
            return out
    HOOKS.check_inplace(tx, out, result)
    return tx.write_in_place(out, result, None if mask is True else mask)


def _mark_diagonal_view(tx, fn, call: _Call, result: Variable) -> None:
    """NumPy's diagonal of an array is a read-only view of it: writing it raises
    (a write through a view breaks the graph, NumPy runs it) and it shows later
    writes into the array (it goes stale, and is remade from the array)."""
    array = call.args[0] if call.args else call.kwargs.get("a", call.kwargs.get("v"))
    if isinstance(array, TensorVariable) and array.kind == NDARRAY and \
            (fn is np.diagonal or len(array.shape) == 2):
        tx.tr.mark_view(result, array, fn, call.args[1:],
                        {k: v for k, v in call.kwargs.items() if k not in ("a", "v")})


# candidate values for the elements a ufunc's where= skips (see _skip_masked_elements)
_QUIET_CANDIDATES = (1, 2, 0.5, 0)
_QUIET: dict = {}


def _skip_masked_elements(tx, fn: np.ufunc, call: _Call, mask: TensorVariable) -> None:
    """NumPy computes a ufunc with ``where=`` only where the mask is True; the
    graph computes every element and selects.  So the array operands' elements
    NumPy skips are replaced by a value on which the ufunc raises no
    floating-point error (found by running the ufunc on candidates now):
    ``np.divide(a, b, out=np.zeros_like(a), where=b != 0)`` must not warn
    "divide by zero" where NumPy does not.  The elements NumPy computes see
    their own operands, so their results are unchanged (a ufunc is elementwise)."""
    slots = [i for i, a in enumerate(call.args)
             if isinstance(a, TensorVariable) and a.kind != TENSOR]
    if not slots:
        return
    values = []
    for a in call.args:
        if isinstance(a, TensorVariable):
            values.append(a.meta.dtype)
        elif a.is_constant():
            values.append(a.as_constant())
        else:
            return
    try:
        key = (fn, tuple((type(v), v) for v in values))
        hash(key)
    except TypeError:
        return
    quiet = _QUIET.get(key, ...)
    if quiet is ...:
        quiet = _QUIET[key] = _quiet_value(fn, call.args, values)
    if quiet is None:
        return
    for i in slots:
        a = call.args[i]
        fill = tx.wrap_result(a.meta.dtype.type(quiet))
        call.args[i] = tx.call_real(np.where, [mask, a, fill], {}, numpy_semantics=True)


def _quiet_value(fn: np.ufunc, args: list[Variable], values: list):
    """The first candidate that, put in every array operand (in its dtype),
    makes ``fn`` raise no floating-point error and no warning; None if none does."""
    for candidate in _QUIET_CANDIDATES:
        operands = [np.asarray(candidate).astype(v) if isinstance(a, TensorVariable) else v
                    for a, v in zip(args, values)]
        try:
            with np.errstate(all="raise"), warnings.catch_warnings():
                warnings.simplefilter("error")
                fn(*operands)
        except Exception:  # noqa: BLE001 -- this candidate is not quiet
            continue
        return candidate
    return None


def _where_mask(tx, where: Variable, out: TensorVariable):
    """A ufunc's ``where=``: True, False, or a bool array Variable broadcasting to ``out``."""
    if where.is_constant() and type(where.as_constant()) in (bool, np.bool_):
        return bool(where.as_constant())
    mask = as_array_operand(tx, where)
    if not isinstance(mask, TensorVariable) or mask.kind == TENSOR or mask.meta.dtype != np.bool_:
        raise Unsupported("unsupported_call", "where= that is not a bool array")
    if not broadcasts_to(mask.shape, out.shape):
        raise Unsupported("unsupported_call", f"where= of shape {list(mask.shape)} for out= of "
                                              f"shape {list(out.shape)}")
    return mask

