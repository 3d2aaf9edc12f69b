"""NumPy's math ufuncs, ufunc methods, masked reductions and flips written with
frame's ops, with NumPy's own signatures (merged into ``NUMPY_FUNCTIONS`` /
``UFUNC_FUNCTIONS`` by ``frame._numpy_interop``).

- ``np.signbit``, ``np.deg2rad``/``np.radians``, ``np.rad2deg``/``np.degrees``, ``np.spacing``, ``np.nextafter``,
  ``np.copysign``, ``np.heaviside``, ``np.fmod``, ``np.float_power``,
  ``np.ldexp``, ``np.frexp`` and ``np.modf`` are ops of the same names whose
  kernels are NumPy's ufuncs (``frame/ops/elementwise.py``): every dtype,
  signed zero, inf and NaN is NumPy's.  ``np.float_power`` and ``np.ldexp``
  take a Python scalar operand as ``np.asarray`` makes it (float64 / int64):
  NumPy computes ``float_power`` in float64 whatever the scalar's weak dtype.
- ``np.divmod`` is ``(floor_divide, remainder)`` (NumPy's loops compute the two
  the same way); ``np.positive`` a copy; ``np.conjugate`` op ``conj``;
  ``np.real`` of a real array the array itself (NumPy returns it, not a copy),
  ``np.imag`` of one zeros (capture marks them a view of it: NumPy's are
  read-only, so a write runs natively and raises); ``np.sinc`` NumPy's own formula (``pi * x``, the dtype's eps for 0,
  ``sin(y) / y``).
- ``np.add.accumulate`` / ``np.multiply.accumulate`` are ``cumsum`` /
  ``cumprod`` cast back to the ufunc's dtype (exact: integers wrap the same
  modulo 2**bits, bools are the running or / and); ``np.maximum.accumulate`` /
  ``np.minimum.accumulate`` are ops ``cummax`` / ``cummin``.
  ``np.logical_and.reduce`` / ``np.logical_or.reduce`` count the false / true
  elements as ``np.all`` / ``np.any`` do, and ``np.<ufunc>.outer`` is the
  ufunc on operands reshaped to broadcast.
- ``np.fliplr``, ``np.flipud`` and ``np.rot90`` are ``flip`` and
  ``transpose`` as NumPy's own code composes them.
- ``np.sum``/``np.prod``/``np.max``/``np.min`` (and ``ufunc.reduce``) with
  ``initial=``/``where=`` are op ``reduce_where``, NumPy's masked reduction as
  its kernel (no composition skips elements in NumPy's order).

A use frame does not model (``out=`` or ``dtype=`` of a ufunc method, an axis
NumPy rejects, complex values where NumPy's result would be a view) raises
``NotModelled`` (NumPy runs the call).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import functions as F
from ._numpy_functions import (UFUNC_FUNCTIONS, NotModelled, _copy, _dtype, _int, _ndim,
                               _nonzero, _shape, cumprod, cumsum, np_prod, np_sum)
from .dtypes import as_dtype
from .functions._core import apply, apply1, as_array, operands
from .functions.reduction import reduction_axes
from .ops.common import normalize_axis
from .tensor import Tensor

__all__ = ["MATH_FUNCTIONS", "MATH_UFUNCS", "UFUNC_METHODS"]


# --------------------------------------------------------------------------- ufuncs as ops

def _unary(op: str, function: str, kinds: str = "biuf"):
    def fn(x):
        a = as_array(x)
        if a.dtype.kind not in kinds:
            raise NotModelled(function, f"of {a.dtype} values")
        return apply1(op, (a,), {})
    fn.__name__ = fn.__qualname__ = function
    fn.__doc__ = f"``np.{function}``: op ``{op}`` (NumPy's ufunc as its kernel)."
    return fn


def _binary(op: str, function: str, strong_scalars: bool = False):
    """``np.<function>(x1, x2)``: op ``op``.  Python scalars are weak (NEP 50),
    or, with ``strong_scalars``, converted as ``np.asarray`` does."""
    def fn(x1, x2):
        if strong_scalars:
            a, b = (as_array(v) if isinstance(v, Tensor) else _asarray(v, function)
                    for v in (x1, x2))
        else:
            a, b = operands(x1, x2)
        for arr in (a, b):
            if arr.dtype.kind not in "biuf":
                raise NotModelled(function, f"of {arr.dtype} values")
        return apply1(op, (a, b), {})
    fn.__name__ = fn.__qualname__ = function
    fn.__doc__ = f"``np.{function}``: op ``{op}`` (NumPy's ufunc as its kernel)."
    return fn


def _asarray(value, function: str):
    if isinstance(value, (bool, int, float, np.generic)) and not isinstance(value, np.str_):
        arr = np.asarray(value)
        if arr.dtype.kind in "biuf":
            return arr
    raise NotModelled(function, f"of {type(value).__name__}")


signbit = _unary("signbit", "signbit")
deg2rad = _unary("deg2rad", "deg2rad")
rad2deg = _unary("rad2deg", "rad2deg")
spacing = _unary("spacing", "spacing")
copysign = _binary("copysign", "copysign")
heaviside = _binary("heaviside", "heaviside")
fmod = _binary("fmod", "fmod")
float_power = _binary("float_power", "float_power", strong_scalars=True)
ldexp = _binary("ldexp", "ldexp", strong_scalars=True)
nextafter = _binary("nextafter", "nextafter")


def frexp(x):
    """``np.frexp``: ``(mantissa, exponent)``, the exponent int32."""
    if _dtype(x).kind not in "biuf":
        raise NotModelled("frexp", f"of {_dtype(x)} values")
    return tuple(apply("frexp", (as_array(x),), {}))


def modf(x):
    """``np.modf``: ``(fractional part, integral part)``, both with x's sign."""
    if _dtype(x).kind not in "biuf":
        raise NotModelled("modf", f"of {_dtype(x)} values")
    return tuple(apply("modf", (as_array(x),), {}))


def divmod_(x1, x2):
    """``np.divmod``: ``(floor_divide(x1, x2), remainder(x1, x2))``."""
    a, b = operands(x1, x2)
    for arr in (a, b):
        if arr.dtype.kind not in "iuf":  # bools: NumPy has no loop
            raise NotModelled("divmod", f"of {arr.dtype} values")
    return F.floordiv(a, b), F.mod(a, b)


divmod_.__name__ = divmod_.__qualname__ = "divmod"


def positive(x):
    """``np.positive``: a copy (NumPy has no loop for bools: it raises)."""
    if _dtype(x).kind not in "iufc":
        raise NotModelled("positive", f"of {_dtype(x)} values")
    return _copy(x)


def conjugate(x):
    """``np.conjugate`` / ``np.conj``: op ``conj`` (a copy of real values; bools
    become int8, NumPy's loop for them)."""
    if _dtype(x).kind == "b":
        return F.astype(x, as_dtype("int8"))
    if _dtype(x).kind not in "iufc":
        raise NotModelled("conjugate", f"of {_dtype(x)} values")
    return apply1("conj", (as_array(x),), {})


def real(val):
    """``np.real``: a real array is its own real part (NumPy returns it itself)."""
    if not isinstance(val, Tensor) or _dtype(val).kind not in "biuf":
        raise NotModelled("real", "of complex values (a view of the real parts)" if
                          isinstance(val, Tensor) else f"of {type(val).__name__}")
    if _ndim(val) == 0:  # NumPy returns the 0-d array; frame's 0-d results become scalars
        raise NotModelled("real", "of a 0-d array")
    return val


def imag(val):
    """``np.imag`` of a real array: zeros of its dtype (NumPy's is a new read-only
    array; capture marks it a view of ``val``, so a write into it runs natively,
    where NumPy raises)."""
    if not isinstance(val, Tensor) or _dtype(val).kind not in "biuf":
        raise NotModelled("imag", "of complex values (a view of the imaginary parts)" if
                          isinstance(val, Tensor) else f"of {type(val).__name__}")
    if _ndim(val) == 0:  # NumPy returns a 0-d array; frame's 0-d results become scalars
        raise NotModelled("imag", "of a 0-d array")
    return F.full(_shape(val), False if _dtype(val).kind == "b" else 0, dtype=as_dtype(_dtype(val)))


def sinc(x):
    """``np.sinc``: NumPy's formula, ``y = pi * x`` (``eps`` of its dtype where it is
    0), ``sin(y) / y``."""
    if not isinstance(x, Tensor):
        raise NotModelled("sinc", f"of {type(x).__name__}")
    if _dtype(x).kind not in "biuf":
        raise NotModelled("sinc", f"of {_dtype(x)} values")
    y = F.mul(math.pi, x)  # pi is a weak Python float, as in NumPy's ``pi * x``
    dt = _dtype(y)
    if dt.kind != "f":
        raise NotModelled("sinc", f"of {dt} values")
    y = F.where(_nonzero(y), y, np.asarray(np.finfo(dt).eps, dtype=dt))
    return F.div(F.sin(y), y)


# --------------------------------------------------------------------------- ufunc methods

def _method_axis(method: str, ufunc, axis, ndim: int) -> int:
    if not _int(axis):
        raise NotModelled(f"{ufunc.__name__}.{method}", f"with axis={axis!r}")
    return normalize_axis(f"{ufunc.__name__}.{method}", int(axis), ndim)


def _accumulate(ufunc, op: str | None):
    def accumulate(array, axis=0, dtype=None, out=None):
        name = f"{ufunc.__name__}.accumulate"
        if dtype is not None or out is not None:
            raise NotModelled(name, "with dtype= or out=")
        if not isinstance(array, Tensor):
            raise NotModelled(name, f"of {type(array).__name__}")
        x = as_array(array)
        if x.ndim == 0 or x.dtype.kind not in "biuf":  # NumPy raises for 0-d arrays
            raise NotModelled(name, f"of a {x.ndim}-d {x.dtype} array")
        ax = _method_axis("accumulate", ufunc, axis, x.ndim)
        out_dtype = ufunc.accumulate(np.zeros(1, x.dtype)).dtype  # bools, small ints: int64
        if op is not None:
            return apply1(op, (x,), {"axis": ax})
        result = (cumsum if ufunc is np.add else cumprod)(array, axis=ax)
        if _dtype(result) != out_dtype:  # bools: running or / and; ints wrap to their width
            result = F.astype(result, as_dtype(out_dtype))
        return result
    accumulate.__name__ = accumulate.__qualname__ = f"{ufunc.__name__}_accumulate"
    return accumulate


def _reduce(ufunc):
    """``ufunc.reduce`` for the logical ufuncs (any dtype; a bool result) and, with
    ``initial=``/``where=``, for add, multiply, maximum and minimum."""
    def reduce(array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue,
               where=True):
        name = f"{ufunc.__name__}.reduce"
        if out is not None:
            raise NotModelled(name, "with out=")
        if not isinstance(array, Tensor) or _dtype(array).kind not in "biuf":
            raise NotModelled(name, f"of {type(array).__name__}")
        if ufunc in (np.logical_and, np.logical_or):
            if dtype is not None or initial is not np._NoValue or where is not True:
                raise NotModelled(name, "with dtype=, initial= or where=")
            axes = reduction_axes(name, axis, _ndim(array))
            nonzero = _nonzero(array)
            if ufunc is np.logical_or:
                return F.greater(F.sum(nonzero, axis=axes, keepdims=bool(keepdims)), 0)
            return F.equal(F.sum(F.logical_not(nonzero), axis=axes, keepdims=bool(keepdims)), 0)
        return _reduce_where(name, ufunc, array, axis, dtype, keepdims, initial, where)
    reduce.__name__ = reduce.__qualname__ = f"{ufunc.__name__}_reduce"
    return reduce


def _initial_value(name: str, ufunc, initial, dt: np.dtype):
    """``initial`` as NumPy stores it in the result's dtype (a 0-d array): NumPy's own
    conversion, read back from a reduction of nothing."""
    if not isinstance(initial, (numbers.Number, np.generic)) or isinstance(initial, np.str_):
        raise NotModelled(name, f"with initial={initial!r}")
    try:
        with np.errstate(all="ignore"):
            value = ufunc.reduce(np.zeros(0, dt), initial=initial)
    except Exception:  # NumPy raises its own error (an int out of range, a complex value)
        raise NotModelled(name, f"with initial={initial!r} for {dt} values") from None
    value = np.asarray(value)
    if value.dtype != dt:
        raise NotModelled(name, f"with initial={initial!r} for {dt} values")
    return value


def _reduce_where(name, ufunc, array, axis, dtype, keepdims, initial, where):
    """``ufunc.reduce`` with ``initial=``/``where=``: op ``reduce_where`` (NumPy's
    masked reduction as its kernel)."""
    if ufunc not in (np.add, np.multiply, np.maximum, np.minimum):
        raise NotModelled(name, "here")
    if dtype is not None and ufunc in (np.add, np.multiply) and initial is np._NoValue and \
            where is True:   # np.add.reduce(a, axis, dtype): np.sum(a, axis, dtype)
        return (np_sum if ufunc is np.add else np_prod)(array, axis=axis, dtype=dtype,
                                                        keepdims=keepdims)
    if dtype is not None:
        raise NotModelled(name, "with dtype=")
    if not isinstance(array, Tensor) or _dtype(array).kind not in "biuf":
        raise NotModelled(name, f"of {type(array).__name__}")
    keepdims = False if keepdims is np._NoValue else keepdims
    if not isinstance(keepdims, (bool, np.bool_)):
        raise NotModelled(name, f"with keepdims={keepdims!r}")
    x = as_array(array)
    axes = reduction_axes(name, axis, x.ndim)
    out_dt = np.asarray(ufunc.reduce(np.zeros(1, x.dtype), initial=None)).dtype
    if where is True or where is np._NoValue:
        mask = np.ones((), dtype=np.bool_)
    elif isinstance(where, Tensor) and _dtype(where).kind == "b":
        mask = as_array(where)
        try:
            np.broadcast_to(np.empty(mask.shape, np.bool_), x.shape)
        except ValueError:  # NumPy raises its own ValueError
            raise NotModelled(name, "with a where= mask that does not broadcast") from None
    else:
        raise NotModelled(name, f"with where={where!r}")
    ins = [x, mask]
    if initial is not np._NoValue and initial is not None:
        ins.append(_initial_value(name, ufunc, initial, out_dt))
    elif ufunc.identity is None:
        # NumPy raises ValueError (with where=) or reduces without an initial value
        raise NotModelled(name, "without initial=")
    return apply1("reduce_where", tuple(ins), {"ufunc": ufunc.__name__, "axes": axes,
                                               "keepdims": bool(keepdims)})


def _sum_like(function: str, ufunc, plain):
    """``np.sum``/``np.prod``: ``where=``/``initial=`` through ``reduce_where``,
    anything else as before (``plain``)."""
    def fn(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
           where=np._NoValue):
        if initial is np._NoValue and (where is np._NoValue or where is True):
            return plain(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        if out is not None:
            raise NotModelled(function, "with out=")
        return _reduce_where(function, ufunc, a, axis, dtype, keepdims, initial, where)
    fn.__name__ = fn.__qualname__ = f"np_{function}"
    fn.__doc__ = f"``np.{function}``, with ``initial=`` and ``where=`` (op ``reduce_where``)."
    return fn


def _extremum(function: str, ufunc):
    """``np.max``/``np.min`` (no ``dtype=``): ``where=``/``initial=`` through
    ``reduce_where``, the rest op ``max``/``min``."""
    reduce = F.max if function == "max" else F.min

    def fn(a, axis=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
           where=np._NoValue):
        if out is not None or not isinstance(a, Tensor):
            raise NotModelled(function, "with out=" if out is not None else
                              f"of {type(a).__name__}")
        if initial is np._NoValue and (where is np._NoValue or where is True):
            keepdims = False if keepdims is np._NoValue else keepdims
            return reduce(a, axis=axis, keepdims=keepdims)
        return _reduce_where(function, ufunc, a, axis, None, keepdims, initial, where)
    fn.__name__ = fn.__qualname__ = f"np_{function}"
    fn.__doc__ = f"``np.{function}``, with ``initial=`` and ``where=`` (op ``reduce_where``)."
    return fn


def _outer(ufunc):
    def outer(A, B, **kwargs):
        name = f"{ufunc.__name__}.outer"
        if kwargs:
            raise NotModelled(name, f"with {', '.join(sorted(kwargs))}")
        impl = _UFUNC_IMPLS.get(ufunc)
        if impl is None or not isinstance(A, Tensor) or not isinstance(B, Tensor):
            raise NotModelled(name, "here")
        a, b = as_array(A), as_array(B)
        return impl(F.reshape(A, a.shape + (1,) * b.ndim), B)
    outer.__name__ = outer.__qualname__ = f"{ufunc.__name__}_outer"
    return outer


def _ufunc_impls() -> dict:
    names = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
             np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow",
             np.maximum: "maximum", np.minimum: "minimum", np.equal: "equal",
             np.not_equal: "not_equal", np.less: "less", np.less_equal: "less_equal",
             np.greater: "greater", np.greater_equal: "greater_equal",
             np.logical_and: "logical_and", np.logical_or: "logical_or",
             np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or",
             np.bitwise_xor: "bitwise_xor"}
    impls = {uf: getattr(F, op) for uf, op in names.items()}
    impls.update({uf: fn for uf, fn in UFUNC_FUNCTIONS.items() if uf.nin == 2})
    impls.update({uf: fn for uf, fn in MATH_UFUNCS.items() if uf.nin == 2 and uf.nout == 1})
    return impls


# --------------------------------------------------------------------------- flips and rotations

def _at_least_2d(function: str, m):
    if not isinstance(m, Tensor):
        raise NotModelled(function, f"of {type(m).__name__}")
    if _ndim(m) < 2:  # NumPy raises ValueError
        raise NotModelled(function, f"of a {_ndim(m)}-d array")


def fliplr(m):
    """``np.fliplr``: ``m[:, ::-1]``."""
    _at_least_2d("fliplr", m)
    return F.flip(m, 1)


def flipud(m):
    """``np.flipud``: ``m[::-1, ...]``."""
    if not isinstance(m, Tensor) or _ndim(m) < 1:  # NumPy raises ValueError for 0-d
        raise NotModelled("flipud", "of a 0-d array or a non-array")
    return F.flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """``np.rot90``: NumPy's composition of ``flip`` and ``transpose``."""
    if not isinstance(m, Tensor) or not _int(k):
        raise NotModelled("rot90", "here")
    try:
        axes = tuple(axes)
    except TypeError:
        raise NotModelled("rot90", f"with axes={axes!r}") from None
    nd = _ndim(m)
    if len(axes) != 2 or not all(_int(a) for a in axes) or axes[0] == axes[1] or \
            abs(axes[0] - axes[1]) == nd or not all(-nd <= a < nd for a in axes):
        raise NotModelled("rot90", f"with axes={axes!r} (NumPy raises ValueError)")
    k = int(k) % 4
    if k == 0:
        return F.reshape(m, _shape(m))  # m[:]: a new array object
    if k == 2:
        return F.flip(F.flip(m, int(axes[0])), int(axes[1]))
    perm = list(range(nd))
    a0, a1 = (int(a) % nd for a in axes)
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return F.transpose(F.flip(m, int(axes[1])), *perm)
    return F.flip(F.transpose(m, *perm), int(axes[1]))


# --------------------------------------------------------------------------- tables

# ufuncs (Tensor.__array_ufunc__ and capture call them for np.<ufunc>(...))
MATH_UFUNCS: dict = {
    np.signbit: signbit, np.deg2rad: deg2rad, np.rad2deg: rad2deg, np.copysign: copysign,
    np.heaviside: heaviside, np.fmod: fmod, np.float_power: float_power, np.ldexp: ldexp,
    np.frexp: frexp, np.modf: modf, np.divmod: divmod_, np.positive: positive,
    np.conjugate: conjugate, np.spacing: spacing, np.nextafter: nextafter,
}
if hasattr(np, "radians"):  # aliases in NumPy: the same ufunc objects, or distinct ones
    MATH_UFUNCS.setdefault(np.radians, _unary("deg2rad", "radians"))
    MATH_UFUNCS.setdefault(np.degrees, _unary("rad2deg", "degrees"))
# functions with NumPy's signatures (Tensor.__array_function__)
MATH_FUNCTIONS: dict = {
    np.sinc: sinc, np.real: real, np.imag: imag, np.fliplr: fliplr, np.flipud: flipud, np.rot90: rot90,
    np.sum: _sum_like("sum", np.add, np_sum), np.prod: _sum_like("prod", np.multiply, np_prod),
    np.max: _extremum("max", np.maximum), np.min: _extremum("min", np.minimum),
}
if hasattr(np, "amax"):
    MATH_FUNCTIONS[np.amax] = MATH_FUNCTIONS[np.max]
    MATH_FUNCTIONS[np.amin] = MATH_FUNCTIONS[np.min]
_UFUNC_IMPLS: dict = {}
# (ufunc, method) -> its implementation (Tensor.__array_ufunc__)
UFUNC_METHODS: dict = {
    (np.add, "accumulate"): _accumulate(np.add, None),
    (np.multiply, "accumulate"): _accumulate(np.multiply, None),
    (np.maximum, "accumulate"): _accumulate(np.maximum, "cummax"),
    (np.minimum, "accumulate"): _accumulate(np.minimum, "cummin"),
    (np.logical_and, "reduce"): _reduce(np.logical_and),
    (np.logical_or, "reduce"): _reduce(np.logical_or),
    **{(uf, "reduce"): _reduce(uf) for uf in (np.add, np.multiply, np.maximum, np.minimum)},
}


def _register_outer() -> None:
    _UFUNC_IMPLS.update(_ufunc_impls())
    for uf in _UFUNC_IMPLS:
        UFUNC_METHODS[uf, "outer"] = _outer(uf)


_register_outer()
