"""Cases for the ops autograd added (frame/ops/autograd_ops.py), each with an
independent formula: scatter_add accumulates one index at a time in a Python
loop; conj and real rebuild values element by element from Python complex numbers.
"""
from __future__ import annotations

import numpy as np

from .optable import ALL, NUMERIC, Case, cases, sample

COMPLEX = ("complex64", "complex128")


def _scatter_added(base, idx, upd, axis):
    out = np.array(base, dtype=np.float64 if base.dtype.kind == "f" else base.dtype)
    n = base.shape[axis]
    lead = (slice(None),) * axis
    for j in np.ndindex(*idx.shape):
        i = int(idx[j])
        out[lead + (i + n if i < 0 else i,)] += upd[lead + j]
    return out


# (base shape, indices, axis); repeated and negative indices, 0-d and empty index tensors
SCATTERS = [((5,), [3, 0, -1, 3], 0), ((2, 3), [[2, 0], [1, -3]], 1), ((3, 4, 2), 2, 1),
            ((3, 2), [], 0), ((4,), [[1]], 0), ((0, 2), [1, 0], 1), ((2, 3, 2), [0, 0, 0], 2)]


@cases("scatter_add")
def scatter_add_cases(op):
    for dtype in NUMERIC + COMPLEX:
        for i, (shape, idx, axis) in enumerate(SCATTERS):
            for idx_dtype in ("int64", "int32") if i % 2 else ("int64",):
                indices = np.array(idx, dtype=idx_dtype)
                ushape = shape[:axis] + indices.shape + shape[axis + 1:]
                base = sample(shape, dtype, i)
                upd = sample(ushape, dtype, i + 1)
                tol = (2e-3, 1e-2) if dtype == "float16" else (None, None)
                yield Case([base, indices, upd], {"axis": axis},
                           lambda ins, attrs: [_scatter_added(*ins, attrs["axis"])],
                           rtol=tol[0], atol=tol[1], id=f"{dtype}-{shape}-{idx}-{idx_dtype}-{axis}")


def _conj_scalar(v):
    return complex(v.real, -v.imag) if isinstance(v, complex) else v


def _elementwise(x, fn, dtype):
    flat = [fn(v) for v in np.asarray(x).ravel().tolist()]
    return np.array(flat, dtype=dtype).reshape(np.shape(x))


@cases("conj")
def conj_cases(op):
    for dtype in ALL + COMPLEX:
        for i, shape in enumerate([(), (5,), (2, 3), (0, 2)]):
            x = sample(shape, dtype, i)
            yield Case([x], {},
                       lambda ins, attrs: [_elementwise(ins[0], _conj_scalar, ins[0].dtype)],
                       id=f"{dtype}-{shape}")


@cases("real")
def real_cases(op):
    for dtype in ALL + COMPLEX:
        for i, shape in enumerate([(), (5,), (2, 3), (0, 2)]):
            x = sample(shape, dtype, i)
            out = {"complex64": np.float32, "complex128": np.float64}.get(dtype, dtype)
            yield Case([x], {},
                       lambda ins, attrs, out=out: [_elementwise(
                           ins[0], lambda v: v.real if isinstance(v, complex) else v, out)],
                       id=f"{dtype}-{shape}")
