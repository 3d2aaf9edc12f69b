"""Reductions: sum, mean, max, min, prod over a set of axes, and argmax/argmin
along one axis.

``axes`` is canonical (non-negative, sorted; the user-facing functions turn
``axis=None`` into every axis), so equal reductions carry equal attrs.  Output
dtypes are NumPy 2's: sum/prod lift bool and small ints to int64, mean of
integers is float64, max/min keep the dtype, argmax/argmin give int64.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from ..dtypes import DType, float16, float32, from_numpy, int64
from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema
from .shape import check_axes, check_axis

__all__ = ["REDUCTIONS", "reduction_dtype", "MASKED_REDUCTIONS", "masked_reduce_needs"]

REDUCTIONS: dict[str, Callable] = {
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
}
# max/min have no identity: reducing zero elements is an error, as in NumPy.
_NO_IDENTITY = {"max", "min"}


@functools.lru_cache(maxsize=None)
def reduction_dtype(op: str, dtype: DType) -> DType:
    """The dtype NumPy gives ``op`` over ``dtype`` data.

    NumPy's rules live in several places (``add.reduce`` picks int64 for small
    integers, ``mean`` divides in float64 for integers, ...), so rather than
    restate them, ask NumPy itself with a one-element probe.
    """
    probe = REDUCTIONS[op](np.zeros(1, dtype.np))
    try:
        return from_numpy(np.asarray(probe).dtype)
    except TypeError as e:
        raise FrameTypeError(f"{op}: not supported for dtype {dtype.name}") from e


def _reduced_shape(shape: tuple[int, ...], axes, keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        axes = attrs["axes"]
        check_axes(op, axes, t.rank)
        if op in _NO_IDENTITY:
            for a in axes:
                if t.shape[a] == 0:
                    raise FrameValueError(f"{op}: cannot reduce {t} over axis {a} of size 0; "
                                          f"{op} of no elements is undefined (it has no identity)")
        return [TensorType(reduction_dtype(op, t.dtype), _reduced_shape(t.shape, axes,
                                                                      attrs["keepdims"]))]
    return infer


def _reduce_kernel(op: str):
    fn = REDUCTIONS[op]

    def kernel(ins, attrs):
        return (np.asarray(fn(ins[0], axis=attrs["axes"], keepdims=attrs["keepdims"])),)
    return kernel


def _mean_decompose(b, inputs, attrs):
    """mean = sum / count, accumulated as NumPy does (float64 for integers and
    bool, float32 for float16, then rounded back)."""
    (x,) = inputs
    out_dtype = reduction_dtype("mean", x.type.dtype)
    acc = float32 if out_dtype is float16 else out_dtype
    if x.type.dtype is not acc:
        x = b.op("cast", x, dtype=acc)
    total = b.op("sum", x, axes=attrs["axes"], keepdims=attrs["keepdims"])
    count = 1
    for a in attrs["axes"]:
        count *= x.type.shape[a]
    result = b.op("div", total, b.scalar(float(count), like=total))
    if acc is not out_dtype:
        result = b.op("cast", result, dtype=out_dtype)
    return [result]


_REDUCE_ATTRS = {"axes": AttrSpec("ints"), "keepdims": AttrSpec("bool", False)}

for _name in REDUCTIONS:
    _traits: tuple[str, ...] = ("reduction",)
    if _name == "mean":
        _traits += ("composite",)
    register(OpSchema(_name, 1, _reduce_infer(_name), _reduce_kernel(_name),
                      attrs=_REDUCE_ATTRS, traits=_traits,
                      decompose=_mean_decompose if _name == "mean" else None,
                      doc=f"numpy.{REDUCTIONS[_name].__name__} over canonical axes."))


# --------------------------------------------------------------------------- reduce_where

# numpy.<ufunc>.reduce with where= and initial= (np.sum/np.prod/np.max/np.min(x, where=m,
# initial=v)); the elements NumPy skips and the order it visits the others are its own,
# so the kernel is NumPy's reduction itself
_WHERE_UFUNCS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum,
                 "minimum": np.minimum}


def _reduce_where_infer(types, attrs):
    x, mask = types[0], types[1]
    name = attrs["ufunc"]
    if name not in _WHERE_UFUNCS:
        raise FrameValueError(f"reduce_where: ufunc must be one of {sorted(_WHERE_UFUNCS)}, "
                              f"got {name!r}")
    if not mask.dtype.is_bool:
        raise FrameTypeError(f"reduce_where: the mask must be bool, got {mask}")
    axes = attrs["axes"]
    check_axes("reduce_where", axes, x.rank)
    try:
        np.broadcast_to(np.empty(mask.shape, np.bool_), x.shape)
    except ValueError:
        raise FrameValueError(f"reduce_where: mask {mask} does not broadcast to {x}") from None
    probe = np.asarray(_WHERE_UFUNCS[name].reduce(np.zeros(1, x.dtype.np), initial=None))
    out_dtype = from_numpy(probe.dtype)
    if len(types) == 3:
        init = types[2]
        if init.rank != 0 or init.dtype is not out_dtype:
            raise FrameTypeError(f"reduce_where: initial must be a 0-d {out_dtype.name}, got {init}")
    elif _WHERE_UFUNCS[name].identity is None:
        raise FrameValueError(f"reduce_where: {name} has no identity; an initial value is needed")
    return [TensorType(out_dtype, _reduced_shape(x.shape, axes, attrs["keepdims"]))]


def _reduce_where_kernel(ins, attrs):
    kwargs = {} if len(ins) < 3 else {"initial": ins[2][()]}
    return (np.asarray(_WHERE_UFUNCS[attrs["ufunc"]].reduce(
        ins[0], axis=attrs["axes"], keepdims=attrs["keepdims"], where=ins[1], **kwargs)),)


register(OpSchema("reduce_where", (2, 3), _reduce_where_infer, _reduce_where_kernel,
                  attrs={"ufunc": AttrSpec("str"), "axes": AttrSpec("ints"),
                         "keepdims": AttrSpec("bool", False)},
                  traits=("nondifferentiable",),
                  doc="reduce_where(x, mask[, initial], ufunc, axes, keepdims): "
                      "numpy.<ufunc>.reduce(x, axes, keepdims, where=mask, initial=initial) "
                      "for ufunc add, multiply, maximum or minimum; without initial, the "
                      "ufunc's identity (maximum and minimum need one)."))


# --------------------------------------------------------------------------- masked_reduce

# numpy.<reduction>(x[mask]) for a bool mask of x's shape (capture's x[x > 0].sum(),
# np.mean(err[valid] ** 2)) or of its leading axes (X[labels == k].mean(axis=0) with
# rows=True: the reduction over axis 0 of the selected rows): NumPy reduces the compressed
# array, so its rounding (pairwise summation over the selected elements only, or the
# row-by-row sums of axis 0) is its own and the kernel is NumPy's reduction of the
# compressed array itself.  A selection NumPy warns or raises for (no element -- no row
# with rows=True -- for mean/std/var/max/min, no more than ddof for std/var) is capture's
# run-time check (the plain function runs then); the kernel gives 0 for it, quietly.
MASKED_REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                     "prod": np.prod, "any": np.any, "all": np.all, "std": np.std,
                     "var": np.var}
_MASKED_DDOF = ("std", "var")


def masked_reduce_needs(reduction: str, ddof: int) -> int:
    """The fewest selected elements (rows, for a reduction over axis 0) on which
    NumPy's reduction neither warns nor raises (0: any count)."""
    if reduction in _MASKED_DDOF:
        return max(ddof, 0) + 1
    return 1 if reduction in ("mean", "max", "min") else 0


def _masked_reduce_infer(types, attrs):
    x, mask = types
    name = attrs["reduction"]
    if name not in MASKED_REDUCTIONS:
        raise FrameValueError(f"masked_reduce: reduction must be one of "
                              f"{sorted(MASKED_REDUCTIONS)}, got {name!r}")
    if not mask.dtype.is_bool:
        raise FrameTypeError(f"masked_reduce: the mask must be bool, got {mask}")
    if mask.rank == 0 or tuple(mask.shape) != tuple(x.shape[:mask.rank]):
        raise FrameValueError(f"masked_reduce: mask {mask} is not of the shape of {x} "
                              f"or of its leading axes")
    if attrs["ddof"] < 0:
        raise FrameValueError(f"masked_reduce: ddof must be >= 0, got {attrs['ddof']}")
    shape = tuple(x.shape[mask.rank:]) if attrs["rows"] else ()
    return [TensorType(from_numpy(_masked_reduce_dtype(np.dtype(x.dtype.np), name,
                                                       attrs["ddof"])), shape)]


def _masked_reduce_kernel(ins, attrs):
    name, rows = attrs["reduction"], attrs["rows"]
    out_dtype = _masked_reduce_dtype(ins[0].dtype, name, attrs["ddof"])
    selected = ins[0][ins[1]]
    if (selected.shape[0] if rows else selected.size) < masked_reduce_needs(name, attrs["ddof"]):
        # capture's run check runs the plain function
        return (np.zeros(selected.shape[1:] if rows else (), out_dtype),)
    kwargs = {"ddof": attrs["ddof"]} if name in _MASKED_DDOF else {}
    if rows:
        kwargs["axis"] = 0
    return (np.asarray(MASKED_REDUCTIONS[name](selected, **kwargs)),)


@functools.lru_cache(maxsize=None)
def _masked_reduce_dtype(dtype: np.dtype, name: str, ddof: int) -> np.dtype:
    kwargs = {"ddof": ddof} if name in _MASKED_DDOF else {}
    with np.errstate(all="ignore"):
        return np.asarray(MASKED_REDUCTIONS[name](np.ones(ddof + 2, dtype), **kwargs)).dtype


register(OpSchema("masked_reduce", 2, _masked_reduce_infer, _masked_reduce_kernel,
                  attrs={"reduction": AttrSpec("str"), "ddof": AttrSpec("int", 0),
                         "rows": AttrSpec("bool", False)},
                  traits=("nondifferentiable",),
                  doc="masked_reduce(x, mask, reduction, ddof, rows): numpy.<reduction>(x[mask]"
                      "[, ddof]) for a bool mask of x's shape or of its leading axes and "
                      "reduction sum, mean, max, min, prod, any, all, std or var; with rows, "
                      "numpy.<reduction>(x[mask], axis=0) (shape x.shape[mask.ndim:]): NumPy's "
                      "reduction of the compressed array (its rounding); 0 where NumPy warns "
                      "or raises (fewer elements, or rows, than the reduction needs: capture "
                      "checks that at run time)."))


# --------------------------------------------------------------------------- argmax, argmin

_ARG_FUNCS = {"argmax": np.argmax, "argmin": np.argmin}


def _arg_infer(op: str):
    def infer(types, attrs):
        (t,) = types
        axis, keepdims = attrs["axis"], attrs["keepdims"]
        if t.rank == 0:
            # NumPy accepts axis 0 on a 0-d array and returns index 0.
            if axis != 0:
                raise FrameValueError(f"{op}: axis {axis} is out of bounds for a 0-d tensor")
            return [TensorType(int64, ())]
        check_axis(op, axis, t.rank)
        if t.shape[axis] == 0:
            raise FrameValueError(f"{op}: attempt to get {op} of an empty sequence "
                                  f"(axis {axis} of {t} has size 0)")
        return [TensorType(int64, _reduced_shape(t.shape, (axis,), keepdims))]
    return infer


def _arg_kernel(op: str):
    fn = _ARG_FUNCS[op]

    def kernel(ins, attrs):
        out = np.asarray(fn(ins[0], axis=attrs["axis"], keepdims=attrs["keepdims"]))
        # np.argmax returns intp; frame's index dtype is int64 on every platform.
        return (out.astype(np.int64, copy=False),)
    return kernel


for _name in _ARG_FUNCS:
    register(OpSchema(_name, 1, _arg_infer(_name), _arg_kernel(_name),
                      attrs={"axis": AttrSpec("int"), "keepdims": AttrSpec("bool", False)},
                      traits=("reduction", "nondifferentiable"),
                      doc=f"numpy.{_name} along one canonical axis; int64 result."))
