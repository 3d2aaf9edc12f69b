"""Op table: einsum, dot, inner, convolve, correlate (frame/ops/contract.py).

Expected values are written independently of NumPy's einsum/convolve/correlate:
an einsum is a Python loop over every assignment of its labels (an axis of size
1 broadcast), adding products in float64 (exact for the table's small integer
data, within tolerance for floats); ``...`` forms are given their expansion into
letters; ``dot`` and ``inner`` cases carry the einsum they are (written out).
A convolution is its defining sum ``c[k] = sum_i a[i] v[k - i]``
(correlation: ``sum_i a[i + k - (m - 1)] v[i]``), and the modes keep NumPy's
documented windows of the full result: valid from ``min(n, m) - 1``, same of
length ``max(n, m)`` from ``(min(n, m) - 1) // 2`` -- for correlate with the
second operand the longer (NumPy swaps the operands and reverses the result)
from ``min(n, m) // 2``.
"""
from __future__ import annotations

import itertools

import numpy as np

from .optable import Case, cases, sample


def _einsum_loop(letters: str):
    """The expected einsum of explicit letter subscripts ``letters``."""
    def expected(ins, attrs):
        lhs, rhs = letters.split("->")
        terms = lhs.split(",")
        sizes: dict[str, int] = {}
        for t, x in zip(terms, ins):
            for lab, d in zip(t, np.shape(x)):
                sizes[lab] = max(sizes.get(lab, 1), d)
        labels = sorted(sizes)
        out = np.zeros(tuple(sizes[c] for c in rhs), np.float64)
        for values in itertools.product(*(range(sizes[c]) for c in labels)):
            at = dict(zip(labels, values))
            product = 1.0
            for t, x in zip(terms, ins):
                x = np.asarray(x)
                product *= float(x[tuple(min(at[c], d - 1) for c, d in zip(t, x.shape))])
            out[tuple(at[c] for c in rhs)] += product
        dtype = np.result_type(*[np.asarray(x).dtype for x in ins])
        return [out.astype(dtype)]
    return expected


# (subscripts as the op holds them, their expansion into letters, operand shapes)
EINSUM_FORMS = [
    ("ij,jk->ik", "ij,jk->ik", [(3, 4), (4, 2)]),
    ("i,i->", "i,i->", [(5,), (5,)]),
    ("ij,j->i", "ij,j->i", [(3, 4), (4,)]),
    ("bij,bjk->bik", "bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ij,ij->i", "ij,ij->i", [(3, 4), (3, 4)]),
    ("ij,ij->i", "ij,ij->i", [(1, 4), (3, 4)]),
    ("ii->", "ii->", [(3, 3)]),
    ("ij->j", "ij->j", [(3, 4)]),
    ("i,j->ij", "i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", "aij,jk->aik", [(2, 3, 4), (4, 2)]),
    ("i...,i...->...", "ia,ia->a", [(3, 2), (3, 1)]),
    ("ab,bc,cd->ad", "ab,bc,cd->ad", [(2, 3), (3, 4), (4, 2)]),
    ("iij->j", "iij->j", [(3, 3, 2)]),
    ("ij,jj->i", "ij,jj->i", [(2, 3), (3, 3)]),
]


@cases("einsum")
def einsum_cases(op):
    for k, (subscripts, letters, shapes) in enumerate(EINSUM_FORMS):
        for dtype in ("float32", "float64", "int64"):
            ins = [sample(s, dtype, seed=k + i) for i, s in enumerate(shapes)]
            yield Case(ins, {"subscripts": subscripts}, _einsum_loop(letters),
                       id=f"{subscripts}-{dtype}")
    mixed = [sample((3, 4), "float32", 1), sample((4, 2), "int32", 2)]
    yield Case(mixed, {"subscripts": "ij,jk->ik"}, _einsum_loop("ij,jk->ik"), id="f32-i32")
    yield Case([sample((2, 3), "float64", 3), sample((3,), "float64", 4)],
               {"subscripts": "ij,j->i", "optimize": "greedy"}, _einsum_loop("ij,j->i"),
               id="optimize")


# (op, subscripts it computes, operand shapes)
PRODUCT_FORMS = [
    ("dot", "k,k->", [(5,), (5,)]),
    ("dot", "ak,k->a", [(3, 5), (5,)]),
    ("dot", "k,kb->b", [(5,), (5, 2)]),
    ("dot", "ak,kb->ab", [(3, 5), (5, 2)]),
    ("dot", "abk,ckd->abcd", [(2, 3, 4), (2, 4, 3)]),
    ("dot", "ak,bkc->abc", [(3, 4), (2, 4, 2)]),
    ("inner", "k,k->", [(5,), (5,)]),
    ("inner", "ak,bk->ab", [(3, 5), (2, 5)]),
    ("inner", "abk,ck->abc", [(2, 3, 4), (2, 4)]),
    ("inner", "k,abk->ab", [(4,), (2, 3, 4)]),
]


@cases("dot", "inner")
def product_cases(op):
    for k, (name, letters, shapes) in enumerate(PRODUCT_FORMS):
        if name != op:
            continue
        for dtype in ("float32", "float64", "int64"):
            ins = [sample(s, dtype, seed=k + i) for i, s in enumerate(shapes)]
            yield Case(ins, {}, _einsum_loop(letters), id=f"{letters}-{dtype}")
    second = (4, 2) if op == "dot" else (2, 4)
    yield Case([sample((2, 3, 4), "float32", 1), sample(second, "int16", 2)], {},
               _einsum_loop("abk,kc->abc" if op == "dot" else "abk,ck->abc"), id="f32-i16")


def _window(op, n, m, mode):
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return short - 1, long - short + 1
    return (short // 2 if op == "correlate" and m > n else (short - 1) // 2), long


def _convolution(op):
    def expected(ins, attrs):
        a, v = (np.asarray(x, np.float64) for x in ins)
        n, m = len(a), len(v)
        full = np.zeros(n + m - 1)
        for k in range(n + m - 1):
            for i in range(n):
                j = k - i if op == "convolve" else i - k + (m - 1)
                if 0 <= j < m:
                    full[k] += a[i] * v[j]
        start, length = _window(op, n, m, attrs["mode"])
        dtype = np.result_type(ins[0].dtype, ins[1].dtype)
        return [full[start:start + length].astype(dtype)]
    return expected


@cases("convolve", "correlate")
def convolution_cases(op):
    for n, m in ((7, 3), (3, 7), (6, 4), (4, 6), (5, 5), (1, 4)):
        for mode in ("full", "same", "valid"):
            for dtype in ("float32", "float64", "int64"):
                ins = [sample((n,), dtype, 1), sample((m,), dtype, 2)]
                yield Case(ins, {"mode": mode}, _convolution(op), id=f"{n}x{m}-{mode}-{dtype}")
    yield Case([sample((6,), "float32", 1), sample((3,), "int16", 2)], {"mode": "same"},
               _convolution(op), id="f32-i16")
