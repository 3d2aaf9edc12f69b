"""Cases for reduction, shape, linalg and creation ops.

Each expected value comes from a formula written here, independent of the
reference kernel: reductions fold with a Python loop, shape ops rebuild the
result by indexing or assignment, matmul uses einsum, slices use Python
slicing of the array, creation ops build values element by element.
"""
from __future__ import annotations

import math

import numpy as np

from frame.dtypes import as_dtype
from frame.ops.shape import canonical_slice

from .optable import ALL, INTS, NUMERIC, Case, cases, sample

# --------------------------------------------------------------------------- reductions

# (shape, axes) with canonical axes; includes 0-d, empty axes and zero-size dims
REDUCE_SHAPES = [((), ()), ((5,), (0,)), ((2, 3), (1,)), ((2, 3), (0, 1)), ((2, 3, 4), (0, 2)),
                 ((2, 1, 4), ()), ((3, 4), (0,)), ((0, 3), (1,))]
EMPTY_OK = {"sum", "prod"}  # reducing zero elements has an identity


def _fold(x, axes, keepdims, step, start=None):
    """Fold the reduced axes with ``step`` in a Python loop, in float64 / int64."""
    x = np.asarray(x)
    wide = x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
    kept = [i for i in range(x.ndim) if i not in axes]
    out_shape = tuple(x.shape[i] for i in kept)
    count = math.prod(x.shape[a] for a in axes)
    rows = np.transpose(wide, kept + list(axes)).reshape(out_shape + (count,))
    acc = np.full(out_shape, start, dtype=wide.dtype) if start is not None else rows[..., 0]
    for j in range(0 if start is not None else 1, count):
        acc = step(acc, rows[..., j])
    if keepdims:
        acc = np.asarray(acc).reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return np.asarray(acc)


REDUCE_FORMULAS = {
    "sum": lambda x, ax, kd: _fold(x, ax, kd, lambda a, b: a + b, 0),
    "prod": lambda x, ax, kd: _fold(x, ax, kd, lambda a, b: a * b, 1),
    "max": lambda x, ax, kd: _fold(x, ax, kd, lambda a, b: np.where(b > a, b, a)),
    "min": lambda x, ax, kd: _fold(x, ax, kd, lambda a, b: np.where(b < a, b, a)),
    "mean": lambda x, ax, kd: _fold(np.asarray(x, np.float64), ax, kd, lambda a, b: a + b, 0)
    / max(math.prod(np.shape(x)[a] for a in ax), 1),
}


def _reduce_tol(op, dtype):
    """Accumulation in float16/float32 differs from the float64 formula by a few
    ulps of the partial sums, which can exceed the default atol near zero."""
    if dtype == "float16":
        return 5e-3, 5e-2
    if dtype == "float32":
        return 1e-5, 1e-4
    return None, None


@cases(*REDUCE_FORMULAS)
def reduce_cases(op):
    formula = REDUCE_FORMULAS[op]
    for dtype in ALL:
        for i, (shape, axes) in enumerate(REDUCE_SHAPES):
            if 0 in shape and op not in EMPTY_OK and not all(shape[a] for a in axes):
                continue
            if op == "prod":
                # keep products in range: floats in (0.5, 1.5), ints in [-2, 2]
                x = sample(shape, dtype, i, low=-2, high=2) if dtype in INTS + ("bool",) \
                    else (sample(shape, dtype, i, low=0.5, high=1.5))
            else:
                x = sample(shape, dtype, i)
            for keepdims in (False, True) if i % 2 else (False,):
                rtol, atol = _reduce_tol(op, dtype)
                yield Case([x], {"axes": axes, "keepdims": keepdims},
                           lambda ins, attrs, f=formula: [f(ins[0], attrs["axes"], attrs["keepdims"])],
                           rtol=rtol, atol=atol, id=f"{dtype}-{shape}-{axes}-{keepdims}")


def _first_extreme(x, axis, keepdims, better):
    """Index of the first element along ``axis`` that no later element beats."""
    x = np.asarray(x)
    if x.ndim == 0:
        return np.asarray(0)
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape[:-1], dtype=np.int64)
    for idx in np.ndindex(*moved.shape[:-1]):
        row = moved[idx].tolist()
        best = 0
        for j, v in enumerate(row):
            if better(v, row[best]):
                best = j
        out[idx] = best
    return np.expand_dims(out, axis) if keepdims else out


ARG_SHAPES = [((), 0), ((5,), 0), ((2, 3), 0), ((2, 3), 1), ((2, 3, 4), 1), ((3, 0), 0)]


@cases("argmax", "argmin")
def arg_cases(op):
    better = (lambda a, b: a > b) if op == "argmax" else (lambda a, b: a < b)
    for dtype in ALL:
        for i, (shape, axis) in enumerate(ARG_SHAPES):
            x = sample(shape, dtype, i, low=-2, high=2)  # small range: ties pick the first
            for keepdims in (False, True):
                yield Case([x], {"axis": axis, "keepdims": keepdims},
                           lambda ins, attrs: [_first_extreme(ins[0], attrs["axis"],
                                                              attrs["keepdims"], better)],
                           id=f"{dtype}-{shape}-{axis}-{keepdims}")


# --------------------------------------------------------------------------- reshape, transpose

RESHAPES = [((), (1,), (1,)), ((6,), (2, 3), (2, 3)), ((2, 3), (3, -1), (3, 2)),
            ((2, 3, 4), (4, -1, 2), (4, 3, 2)), ((0, 3), (3, 0), (3, 0)), ((1,), (), ()),
            ((2, 3), (-1,), (6,))]


@cases("reshape")
def reshape_cases(op):
    for dtype in ALL:
        for i, (shape, target, resolved) in enumerate(RESHAPES):
            x = sample(shape, dtype, i)
            yield Case([x], {"shape": target},
                       lambda ins, attrs, r=resolved: [np.array(list(ins[0].flat),
                                                                dtype=ins[0].dtype).reshape(r)],
                       id=f"{dtype}-{shape}-{target}")


def _permuted(x, perm):
    """out[o] = x[i] where i[perm[j]] = o[j], one element at a time."""
    out_shape = tuple(x.shape[p] for p in perm)
    out = np.empty(out_shape, dtype=x.dtype)
    for o in np.ndindex(*out_shape):
        i = [0] * x.ndim
        for j, p in enumerate(perm):
            i[p] = o[j]
        out[o] = x[tuple(i)]
    return out


@cases("transpose")
def transpose_cases(op):
    for dtype in ALL:
        for i, (shape, perm) in enumerate([((), ()), ((4,), (0,)), ((2, 3), (1, 0)),
                                           ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (0, 2, 1)),
                                           ((0, 2), (1, 0))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"perm": perm}, lambda ins, attrs: [_permuted(ins[0], attrs["perm"])],
                       id=f"{dtype}-{shape}-{perm}")


@cases("relayout")
def relayout_cases(op):
    # element strides NumPy gives a transpose, a Fortran-ordered result, a column
    # slice, a reversed view: the same elements, laid out so
    for dtype in ALL:
        for i, (shape, strides) in enumerate([((), ()), ((4,), (1,)), ((4,), (-1,)),
                                              ((2, 3), (1, 2)), ((2, 3), (7, 1)),
                                              ((2, 3, 4), (1, 2, 6)), ((0, 2), (1, 1))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"strides": strides}, lambda ins, attrs: [np.array(ins[0])],
                       id=f"{dtype}-{shape}-{strides}")


@cases("copy")
def copy_cases(op):
    # NumPy's copy in each order: the same elements (its layout: test_copy_layouts.py)
    for dtype in ALL:
        for i, (shape, order) in enumerate([((), "C"), ((4,), "K"), ((2, 3), "C"), ((2, 3), "F"),
                                            ((2, 3, 4), "A"), ((2, 3, 4), "K"), ((0, 2), "F")]):
            x = sample(shape, dtype, i)
            yield Case([x], {"order": order}, lambda ins, attrs: [np.array(ins[0])],
                       id=f"{dtype}-{shape}-{order}")


@cases("dot_operand")
def dot_operand_cases(op):
    for dtype in ALL:
        for i, shape in enumerate([(), (4,), (2, 3), (2, 3, 4), (0, 2)]):
            x = sample(shape, dtype, i)
            yield Case([x], {}, lambda ins, attrs: [np.array(ins[0])], id=f"{dtype}-{shape}")


# --------------------------------------------------------------------------- broadcast_to, expand/squeeze

@cases("broadcast_to")
def broadcast_to_cases(op):
    for dtype in ALL:
        for i, (shape, target) in enumerate([((), (2, 3)), ((3,), (2, 3)), ((2, 1), (2, 4)),
                                             ((1, 3, 1), (2, 3, 2)), ((2, 3), (2, 3)),
                                             ((1,), (0,))]):
            x = sample(shape, dtype, i)
            # broadcasting arithmetic, not broadcast_to: False + x is x for bool too
            yield Case([x], {"shape": target},
                       lambda ins, attrs: [np.zeros(attrs["shape"], ins[0].dtype) + ins[0]],
                       id=f"{dtype}-{shape}-{target}")


@cases("expand_dims")
def expand_dims_cases(op):
    for dtype in ALL:
        for i, (shape, axes) in enumerate([((), (0,)), ((3,), (0,)), ((3,), (1,)),
                                           ((2, 3), (0, 3)), ((2, 3), ()), ((2, 0), (1, 2))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"axes": axes},
                       lambda ins, attrs: [ins[0][tuple(
                           None if j in attrs["axes"] else slice(None)
                           for j in range(ins[0].ndim + len(attrs["axes"])))]],
                       id=f"{dtype}-{shape}-{axes}")


@cases("squeeze")
def squeeze_cases(op):
    for dtype in ALL:
        for i, (shape, axes) in enumerate([((1,), (0,)), ((1, 3, 1), (0, 2)), ((1, 3, 1), (2,)),
                                           ((2, 3), ()), ((), ()), ((0, 1), (1,))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"axes": axes},
                       lambda ins, attrs: [ins[0][tuple(0 if j in attrs["axes"] else slice(None)
                                                        for j in range(ins[0].ndim))]],
                       id=f"{dtype}-{shape}-{axes}")


# --------------------------------------------------------------------------- concat, stack, split

def _assembled(arrays, axis, new_axis):
    """Concatenate/stack by assigning each input into its place in a new array."""
    dtype = np.result_type(*arrays)
    first = arrays[0]
    if new_axis:
        shape = first.shape[:axis] + (len(arrays),) + first.shape[axis:]
    else:
        shape = first.shape[:axis] + (sum(a.shape[axis] for a in arrays),) + first.shape[axis + 1:]
    out = np.empty(shape, dtype)
    begin = 0
    for a in arrays:
        lead = (slice(None),) * axis
        if new_axis:
            out[lead + (begin,)] = a
            begin += 1
        else:
            out[lead + (slice(begin, begin + a.shape[axis]),)] = a
            begin += a.shape[axis]
    return out


CONCATS = [([(2, 3), (1, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1), ([(4,)], 0),
           ([(2, 1, 3), (2, 2, 3), (2, 1, 3)], 1), ([(2, 2, 1), (2, 2, 2)], 2)]
MIXED = [("int32", "float16"), ("bool", "int32"), ("float32", "int64"), ("float16", "float32"),
         ("int32", "int64"), ("bool", "float64")]


@cases("concat")
def concat_cases(op):
    for dtype in ALL:
        for i, (shapes, axis) in enumerate(CONCATS):
            xs = [sample(s, dtype, i + j) for j, s in enumerate(shapes)]
            yield Case(xs, {"axis": axis}, lambda ins, attrs: [_assembled(ins, attrs["axis"], False)],
                       id=f"{dtype}-{shapes}-{axis}")
    for a, b in MIXED:
        xs = [sample((2, 2), a, 1), sample((1, 2), b, 2)]
        yield Case(xs, {"axis": 0}, lambda ins, attrs: [_assembled(ins, 0, False)], id=f"{a}+{b}")


@cases("stack")
def stack_cases(op):
    for dtype in ALL:
        for i, (shape, n, axis) in enumerate([((), 3, 0), ((3,), 2, 0), ((3,), 2, 1),
                                              ((2, 3), 3, 1), ((2, 3), 1, 2), ((0, 2), 2, 0)]):
            xs = [sample(shape, dtype, i + j) for j in range(n)]
            yield Case(xs, {"axis": axis}, lambda ins, attrs: [_assembled(ins, attrs["axis"], True)],
                       id=f"{dtype}-{shape}x{n}-{axis}")
    for a, b in MIXED:
        xs = [sample((2,), a, 1), sample((2,), b, 2)]
        yield Case(xs, {"axis": 1}, lambda ins, attrs: [_assembled(ins, 1, True)], id=f"{a}+{b}")


def _sections(x, axis, sizes):
    begin, out = 0, []
    for s in sizes:
        out.append(x[(slice(None),) * axis + (slice(begin, begin + s),)])
        begin += s
    return out


@cases("split")
def split_cases(op):
    for dtype in ALL:
        for i, (shape, axis, sizes) in enumerate([((6,), 0, (2, 2, 2)), ((6,), 0, (1, 0, 5)),
                                                  ((2, 5), 1, (3, 2)), ((4, 3, 2), 0, (4,)),
                                                  ((3, 4, 2), 2, (1, 1)), ((0, 2), 0, (0, 0))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"axis": axis, "sizes": sizes},
                       lambda ins, attrs: _sections(ins[0], attrs["axis"], attrs["sizes"]),
                       id=f"{dtype}-{shape}-{axis}-{sizes}")


# --------------------------------------------------------------------------- slice, take

SLICES = [
    ((), ()),
    ((7,), (slice(1, 5),)),
    ((7,), (slice(None, None, -1),)),
    ((7,), (slice(5, 0, -2),)),
    ((7,), (slice(-2, None, -3),)),
    ((7,), (slice(10, -10, -1),)),
    ((7,), (slice(3, 3),)),
    ((7,), (slice(6, 2),)),
    ((7,), (slice(2, 3, 5),)),
    ((4, 5), (slice(None, None, 2), slice(-1, None, -2))),
    ((3, 4, 5), (slice(1, 2), slice(None), slice(None, None, -4))),
    ((0, 3), (slice(None), slice(1, None))),
]


@cases("slice")
def slice_cases(op):
    for dtype in ALL:
        for i, (shape, slices) in enumerate(SLICES):
            x = sample(shape, dtype, i)
            triples = [canonical_slice(d, s.start, s.stop, s.step) for d, s in zip(shape, slices)]
            attrs = {"starts": tuple(t[0] for t in triples), "stops": tuple(t[1] for t in triples),
                     "steps": tuple(t[2] for t in triples)}
            yield Case([x], attrs, lambda ins, attrs, s=slices: [ins[0][s]],
                       id=f"{dtype}-{shape}-{i}")


TAKES = [((5,), [3, 0, -1, 3], 0), ((2, 3), [[2, 0], [1, -3]], 1), ((3, 4, 2), 2, 1),
         ((3, 2), [], 0), ((4,), [[1]], 0), ((0, 2), [1, 0], 1)]


@cases("take")
def take_cases(op):
    for dtype in ALL:
        for i, (shape, idx, axis) in enumerate(TAKES):
            x = sample(shape, dtype, i)
            for idx_dtype in ("int64", "int32") if i % 2 else ("int64",):
                indices = np.array(idx, dtype=idx_dtype)
                # a single integer-array index is numpy.take along that axis
                yield Case([x, indices], {"axis": axis},
                           lambda ins, attrs: [ins[0][(slice(None),) * attrs["axis"] + (ins[1],)]],
                           id=f"{dtype}-{shape}-{idx}-{idx_dtype}-{axis}")


# --------------------------------------------------------------------------- pad, flip

def _padded(x, pads, value):
    widths = [(pads[2 * i], pads[2 * i + 1]) for i in range(x.ndim)]
    shape = tuple(d + b + a for d, (b, a) in zip(x.shape, widths))
    out = np.empty(shape, x.dtype)
    out[...] = np.asarray(value, np.float64).astype(x.dtype)  # truncates for ints, as NumPy
    out[tuple(slice(b, b + d) for d, (b, a) in zip(x.shape, widths))] = x
    return out


@cases("pad")
def pad_cases(op):
    for dtype in ALL:
        for i, (shape, pads, value) in enumerate([((), (), 0.0), ((3,), (1, 2), 0.0),
                                                  ((2, 3), (0, 1, 2, 0), 1.5),
                                                  ((2, 1, 3), (1, 1, 0, 0, 2, 1), -2.7),
                                                  ((0, 2), (1, 0, 0, 0), 3.0)]):
            if dtype.startswith("uint") and value < 0:
                continue  # (frame refuses it: check_fill_value)
            x = sample(shape, dtype, i)
            yield Case([x], {"pads": pads, "value": value},
                       lambda ins, attrs: [_padded(ins[0], attrs["pads"], attrs["value"])],
                       id=f"{dtype}-{shape}-{pads}-{value}")


@cases("flip")
def flip_cases(op):
    for dtype in ALL:
        for i, (shape, axes) in enumerate([((), ()), ((5,), (0,)), ((2, 3), (1,)),
                                           ((2, 3, 4), (0, 2)), ((2, 3), ()), ((0, 3), (0, 1))]):
            x = sample(shape, dtype, i)
            yield Case([x], {"axes": axes},
                       lambda ins, attrs: [ins[0][tuple(slice(None, None, -1) if j in attrs["axes"]
                                                        else slice(None)
                                                        for j in range(ins[0].ndim))]],
                       id=f"{dtype}-{shape}-{axes}")


# --------------------------------------------------------------------------- matmul

def _einsum_matmul(a, b):
    """matmul by einsum in float64 / int64 (bool: any product true)."""
    la = "...ij" if a.ndim > 1 else "j"
    lb = "...jk" if b.ndim > 1 else "j"
    out = ("..." if a.ndim > 1 or b.ndim > 1 else "") + ("i" if a.ndim > 1 else "") + \
          ("k" if b.ndim > 1 else "")
    wide = np.float64 if (a.dtype.kind == "f" or b.dtype.kind == "f") else np.int64
    r = np.einsum(f"{la},{lb}->{out}", a.astype(wide), b.astype(wide))
    return r != 0 if a.dtype.kind == b.dtype.kind == "b" else r


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((2, 1, 2, 3), (5, 3, 2)), ((4, 2, 3), (3, 2)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]


@cases("matmul")
def matmul_cases(op):
    for dtype in ALL:
        for i, (sa, sb) in enumerate(MATMUL_SHAPES):
            a, b = sample(sa, dtype, i), sample(sb, dtype, i + 1)
            tol = (5e-3, 5e-2) if dtype == "float16" else (None, None)
            yield Case([a, b], {}, lambda ins, attrs: [_einsum_matmul(ins[0], ins[1])],
                       rtol=tol[0], atol=tol[1], id=f"{dtype}-{sa}-{sb}")
    for da, db in MIXED:
        a, b = sample((2, 3), da, 1), sample((3,), db, 2)
        atol = 5e-2 if "float16" in (da, db) else None
        yield Case([a, b], {}, lambda ins, attrs: [_einsum_matmul(ins[0], ins[1])], atol=atol,
                   id=f"{da}@{db}")


@cases("gram")
def gram_cases(op):
    """x.T @ x / x @ x.T, written as einsum of x with itself (independent of the
    kernel's aliased np.matmul call)."""
    for dtype in ("float32", "float64", "float16"):
        for i, shape in enumerate([(4, 3), (3, 5), (2, 4, 3), (1, 1), (0, 3), (3, 0)]):
            x = sample(shape, dtype, i)
            tol = (5e-3, 5e-2) if dtype == "float16" else (None, None)
            for first, dot in ((True, False), (False, False), (True, True), (False, True)):
                if dot and len(shape) != 2:
                    continue

                def expected(ins, attrs):
                    v = np.asarray(ins[0]).astype(np.float64)
                    subs = "...ij,...ik->...jk" if attrs["transposed_first"] else "...ij,...kj->...ik"
                    return [np.einsum(subs, v, v).astype(ins[0].dtype)]
                yield Case([x], {"transposed_first": first, "dot": dot}, expected, rtol=tol[0],
                           atol=tol[1], id=f"{dtype}-{shape}-{'xTx' if first else 'xxT'}"
                                            f"{'-dot' if dot else ''}")


@cases("vector_norm")
def vector_norm_cases(op):
    """sqrt of the sum of squares in float64 (the kernel adds in memory order)."""
    for dtype in ("float32", "float64", "float16"):
        for i, shape in enumerate([(5,), (3, 4), (2, 3, 2), (), (0,)]):
            x = sample(shape, dtype, i)
            tol = (5e-3, 5e-2) if dtype == "float16" else (None, None)
            yield Case([x], {}, lambda ins, attrs: [np.asarray(np.sqrt(np.sum(
                np.asarray(ins[0], np.float64) ** 2))).astype(ins[0].dtype)],
                rtol=tol[0], atol=tol[1], id=f"{dtype}-{shape}")


# --------------------------------------------------------------------------- arange, full

def _arange_values(start, stop, step, dtype):
    """numpy.arange's definition: n = ceil((stop - start) / step) values, the
    first two converted to ``dtype`` and the rest stepping by their difference."""
    n = max(math.ceil((stop - start) / step), 0)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        first, delta = int(start), int(start + step) - int(start)
        return np.array([first + i * delta for i in range(n)], dtype=np.int64)
    return np.array([start + i * step for i in range(n)], dtype=np.float64)


ARANGES = [(0.0, 5.0, 1.0), (2.0, 11.0, 3.0), (10.0, 0.0, -3.0), (0.0, 1.0, 0.1), (1.0, 1.0, 1.0),
           (5.0, 0.0, 1.0), (-1.5, 2.0, 0.5), (0.0, 5.0, 1.5), (0.5, 0.50000001, 1e-9)]


@cases("arange")
def arange_cases(op):
    for dtype in NUMERIC:
        for start, stop, step in ARANGES:
            if dtype in ("float16", *INTS) and step == 1e-9:
                continue  # steps below the dtype's resolution
            if dtype.startswith("uint") and start < 0:
                continue  # NumPy raises OverflowError for a negative unsigned start
            yield Case([], {"start": start, "stop": stop, "step": step, "dtype": as_dtype(dtype)},
                       lambda ins, attrs, d=dtype: [_arange_values(attrs["start"], attrs["stop"],
                                                                   attrs["step"], d)],
                       rtol=1e-6 if dtype != "float16" else None,
                       id=f"{dtype}-{start}-{stop}-{step}")
    yield Case([], {"start": 0.0, "stop": 2.0, "step": 1.0, "dtype": as_dtype("bool")},
               lambda ins, attrs: [np.array([False, True])], id="bool-2")


@cases("full")
def full_cases(op):
    for dtype in ALL:
        for shape, value in [((), 1.0), ((3,), -2.5), ((2, 3), 0.0), ((0, 4), 7.0),
                             ((2, 1, 2), 3.75)]:
            if dtype.startswith("uint") and value < 0:
                continue  # (frame refuses it: check_fill_value)
            def expected(ins, attrs, d=dtype):
                flat = [attrs["value"]] * math.prod(attrs["shape"])
                cast = [bool(v) if d == "bool" else (math.trunc(v) if d in INTS else v)
                        for v in flat]
                return [np.array(cast, dtype=np.float64).reshape(attrs["shape"])]
            yield Case([], {"shape": shape, "value": value, "dtype": as_dtype(dtype)}, expected,
                       id=f"{dtype}-{shape}-{value}")


def _scattered(x, positions, updates):
    """Python loop over the positions in C order: the last write wins."""
    out = np.array(x, copy=True).reshape(-1)
    for p, u in zip(np.asarray(positions).ravel().tolist(), np.asarray(updates).ravel().tolist()):
        out[p] = u
    return out.reshape(np.shape(x))


# (input shape, flat positions): repeated positions, 0-d and empty position tensors
SCATTER_POSITIONS = [((5,), [3, 0, 4, 3]), ((2, 3), [[5, 0], [1, 2]]), ((3, 4, 2), 7),
                     ((3, 2), []), ((), [0]), ((2, 2), [[1, 1], [1, 3]]), ((0, 2), [])]


@cases("scatter")
def scatter_cases(op):
    for dtype in ALL:
        for i, (shape, positions) in enumerate(SCATTER_POSITIONS):
            for idx_dtype in ("int64", "int32") if i % 2 else ("int64",):
                idx = np.array(positions, dtype=idx_dtype)
                x = sample(shape, dtype, i)
                upd = sample(idx.shape, dtype, i + 1)
                yield Case([x, idx, upd], {}, lambda ins, attrs: [_scattered(*ins)],
                           id=f"{dtype}-{shape}-{positions}-{idx_dtype}")
