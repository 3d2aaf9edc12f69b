"""Op table: cumsum, cumprod, sort, argsort, take_along_axis (frame/ops/scan.py).

Expected values are written independently of NumPy's scans and sorts: running
sums/products as sums/products of growing slices, sorting with Python's
``sorted`` (stable, NaN last), gathers by looping over every position.
"""
from __future__ import annotations

import numpy as np

from .optable import ALL, NUMERIC, Case, cases, sample

SCAN_SHAPES = [((5,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 1, 4), 2), ((0, 3), 1), ((3, 0), 1)]


def _running(reduce, dtype):
    def expected(ins, attrs):
        x, axis = ins[0], attrs["axis"]
        moved = np.moveaxis(x, axis, -1)
        out = np.empty(moved.shape, dtype)
        for i in range(moved.shape[-1]):
            out[..., i] = reduce(moved[..., :i + 1], axis=-1, dtype=dtype)
        return [np.moveaxis(out, -1, axis)]
    return expected


@cases("cumsum", "cumprod")
def scan_cases(op):
    reduce = np.sum if op == "cumsum" else np.prod
    for dtype in ALL:
        out_dtype = np.asarray(reduce(np.zeros(1, dtype))).dtype
        for i, (shape, axis) in enumerate(SCAN_SHAPES):
            x = sample(shape, dtype, i, low=-2.0, high=2.0)
            yield Case([x], {"axis": axis}, _running(reduce, out_dtype),
                       rtol=1e-2 if dtype == "float16" else None,
                       atol=1e-2 if dtype == "float16" else None, id=f"{dtype}-{shape}-{axis}")


def _sorted_indices(ins, attrs):
    x, axis = ins[0], attrs["axis"]
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape, np.int64)
    for pos in np.ndindex(*moved.shape[:-1]):
        row = moved[pos]
        key = (lambda j: (bool(np.isnan(row[j])), 0.0 if np.isnan(row[j]) else row[j])) \
            if row.dtype.kind == "f" else (lambda j: row[j])
        out[pos] = sorted(range(row.shape[0]), key=key)
    return [np.moveaxis(out, -1, axis)]


def _sorted_values(ins, attrs):
    (idx,) = _sorted_indices(ins, attrs)
    return [np.take_along_axis(ins[0], idx, attrs["axis"])]


@cases("sort", "argsort")
def sort_cases(op):
    expected = _sorted_values if op == "sort" else _sorted_indices
    shapes = [((6,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 1, 5), 2), ((0, 3), 1)]
    for dtype in NUMERIC + ("bool",):
        for i, (shape, axis) in enumerate(shapes):
            x = sample(shape, dtype, i)
            # ties (ints, bools): only the stable kinds have one documented order
            kinds = ("stable", "mergesort") if dtype in ("int32", "int64", "bool", "float16") \
                else ("quicksort", "stable", "heapsort")
            for kind in kinds:
                yield Case([x], {"axis": axis, "kind": kind}, expected,
                           id=f"{dtype}-{shape}-{axis}-{kind}")
    x = np.array([[2.0, np.nan, -1.0, 2.0, np.nan, 0.0, -0.0]], np.float32)  # no gradient check
    yield Case([x], {"axis": 1, "kind": "stable"}, expected, id="nan-ties-stable")


def _gathered(ins, attrs):
    x, idx = ins
    axis = attrs["axis"]
    shape = tuple(k if d == axis else max(a, k) for d, (a, k) in enumerate(zip(x.shape, idx.shape)))
    out = np.empty(shape, x.dtype)
    for pos in np.ndindex(*shape):
        j = int(idx[tuple(0 if idx.shape[d] == 1 else p for d, p in enumerate(pos))])
        src = tuple(j if d == axis else (0 if x.shape[d] == 1 else p) for d, p in enumerate(pos))
        out[pos] = x[src]
    return [out]


GATHERS = [((5,), [4, 0, -1, 2, 2, 1], 0), ((3, 4), [[0, 3], [1, -4], [2, 2]], 1),
           ((3, 4), [[2, 0, 1, 0]], 0), ((2, 3, 2), [[[1], [0], [1]]], 2),
           ((1, 4), [[3], [0], [1]], 1), ((2, 3), np.zeros((2, 0), np.int64), 1)]


@cases("take_along_axis")
def take_along_axis_cases(op):
    for dtype in ALL:
        for i, (shape, idx, axis) in enumerate(GATHERS):
            x = sample(shape, dtype, i)
            for idx_dtype in ("int64", "int32") if i % 2 else ("int64",):
                yield Case([x, np.array(idx, dtype=idx_dtype)], {"axis": axis}, _gathered,
                           id=f"{dtype}-{shape}-{i}-{idx_dtype}-{axis}")


# -- cummax / cummin: the max/min of each growing slice (Python's max/min over it)

@cases("cummax", "cummin")
def extremum_scan_cases(op):
    reduce = np.max if op == "cummax" else np.min

    def expected(ins, attrs):
        x, axis = ins[0], attrs["axis"]
        moved = np.moveaxis(x, axis, -1)
        out = np.empty(moved.shape, x.dtype)
        for i in range(moved.shape[-1]):
            out[..., i] = reduce(moved[..., :i + 1], axis=-1)
        return [np.moveaxis(out, -1, axis)]
    for dtype in ALL:
        for i, (shape, axis) in enumerate(SCAN_SHAPES):
            x = sample(shape, dtype, i, low=-2.0, high=2.0)
            yield Case([x], {"axis": axis}, expected, id=f"{dtype}-{shape}-{axis}")


# -- reduce_where: the masked-out elements replaced by the identity, then the initial
# value combined with the reduction of the rest

_MASKED = {"add": (np.sum, 0, lambda a, b: a + b), "multiply": (np.prod, 1, lambda a, b: a * b),
           "maximum": (np.max, None, lambda a, b: np.where(a >= b, a, b)),
           "minimum": (np.min, None, lambda a, b: np.where(a <= b, a, b))}


def _masked_expected(reduce, identity, combine, out_dtype):
    def expected(ins, attrs):
        x = ins[0].astype(out_dtype)
        mask = np.broadcast_to(ins[1], x.shape)
        axes, keepdims = attrs["axes"], attrs["keepdims"]
        start = np.asarray(ins[2] if len(ins) > 2 else identity, dtype=out_dtype)
        keep = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        out_shape = keep if keepdims else tuple(d for i, d in enumerate(x.shape) if i not in axes)
        if identity is None:  # no identity: reduce the kept elements, the initial value where none
            acc = np.full(out_shape, start)
            moved = np.moveaxis(x, axes, range(len(axes))).reshape((-1,) + tuple(np.delete(x.shape, axes)))
            kept = np.moveaxis(mask, axes, range(len(axes))).reshape(moved.shape)
            for row, m in zip(moved, kept):
                acc = np.where(m.reshape(acc.shape), combine(acc, row.reshape(acc.shape)), acc)
            return [acc]
        filled = np.where(mask, x, np.asarray(identity, dtype=out_dtype))
        return [np.asarray(combine(reduce(filled, axis=axes, keepdims=keepdims, dtype=out_dtype),
                                   start), dtype=out_dtype)]
    return expected


@cases("reduce_where")
def reduce_where_cases(op):
    for ufunc, (reduce, identity, combine) in _MASKED.items():
        for dtype in ("float32", "float64", "int32", "int64", "bool"):
            for i, (shape, axes, keepdims) in enumerate((((3, 4), (1,), False),
                                                         ((3, 4), (0, 1), True),
                                                         ((2, 3, 2), (0, 2), False),
                                                         ((0, 3), (0,), False))):
                x = sample(shape, dtype, i, low=-2.0, high=2.0)
                mask = sample(shape[-1:], "bool", i + 5)  # broadcast along the leading axes
                out_dtype = np.asarray(reduce(np.zeros(1, dtype))).dtype
                init = np.asarray(-1 if ufunc == "maximum" else 1, dtype=out_dtype)
                expected = _masked_expected(reduce, identity, combine, out_dtype)
                attrs = {"ufunc": ufunc, "axes": axes, "keepdims": keepdims}
                if identity is not None:
                    yield Case([x, mask], attrs, expected, id=f"{ufunc}-{dtype}-{i}")
                yield Case([x, mask, init], attrs, expected, id=f"{ufunc}-{dtype}-{i}-initial")


# -- masked_reduce: NumPy's reduction of the selected elements, gathered position by
# position in C order (with rows: the selected rows stacked, reduced over axis 0); 0 where
# NumPy would warn or raise (too few elements or rows)

def _masked_reduce_expected(ins, attrs):
    x, mask = ins
    rows = attrs.get("rows", False)
    picked = [x[i] for i in np.ndindex(mask.shape) if mask[i]]
    name, ddof = attrs["reduction"], attrs["ddof"]
    reduce = getattr(np, name)
    kwargs = {"ddof": ddof} if name in ("std", "var") else {}
    with np.errstate(all="ignore"):
        out_dtype = np.asarray(reduce(np.ones(ddof + 2, x.dtype), **kwargs)).dtype
    needs = ddof + 1 if name in ("std", "var") else 1 if name in ("mean", "max", "min") else 0
    stacked = np.array(picked, dtype=x.dtype).reshape((len(picked),) + x.shape[mask.ndim:])
    if (len(picked) if rows else stacked.size) < needs:
        return [np.zeros(x.shape[mask.ndim:] if rows else (), out_dtype)]
    if rows:
        kwargs["axis"] = 0
    return [np.asarray(reduce(stacked, **kwargs))]


@cases("masked_reduce")
def masked_reduce_cases(op):
    for name in ("sum", "mean", "max", "min", "prod", "any", "all", "std", "var"):
        for dtype in ("float32", "float64", "int32", "int64", "bool"):
            ddofs = (0, 1) if name in ("std", "var") else (0,)
            for i, shape in enumerate(((7,), (3, 4), (2, 3, 2), (0, 3))):
                x = sample(shape, dtype, i, low=-2.0, high=2.0)
                mask = sample(shape, "bool", i + 9)
                for ddof in ddofs:
                    yield Case([x, mask], {"reduction": name, "ddof": ddof},
                               _masked_reduce_expected, id=f"{name}-{dtype}-{i}-{ddof}")
                yield Case([x, np.zeros(shape, bool)], {"reduction": name, "ddof": 0},
                           _masked_reduce_expected, id=f"{name}-{dtype}-{i}-empty")
            # a mask of the leading axes: all the selected elements, or rows over axis 0
            for i, (shape, k) in enumerate((((9, 3), 1), ((4, 3, 2), 2), ((5, 0), 1))):
                x = sample(shape, dtype, i + 20, low=-2.0, high=2.0)
                for j, mask in enumerate((sample(shape[:k], "bool", i + 29),
                                          np.zeros(shape[:k], bool))):
                    for rows in (False, True):
                        for ddof in ddofs:
                            yield Case([x, mask], {"reduction": name, "ddof": ddof, "rows": rows},
                                       _masked_reduce_expected,
                                       id=f"{name}-{dtype}-rows{i}-{j}-{rows}-{ddof}")
