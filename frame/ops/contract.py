"""NumPy's own contraction loops: ``einsum``, ``convolve`` and ``correlate``.

``np.einsum`` (``optimize=False``, its default) runs its own sum-of-products C
loops, not BLAS, and ``np.convolve``/``np.correlate`` take one dot product per
window; a composition of frame's ops (diagonals, sums, batched ``matmul``, a
gather of windows) adds the same products in another order, so float results
differ in the last bits.  The reference kernels of these ops *are* NumPy's
functions, so the interpreter and the cpu executable (which calls the kernel)
give NumPy's bits.  They are layout-sensitive (ops/layout.py): einsum's loop
order follows its operands' strides, so ``layout_assignment`` hands them
operands with NumPy's strides, and einsum's result keeps the layout NumPy gives
it (``order='K'``).

- ``einsum``: attrs ``subscripts``, the explicit form ``"ij,jk->ik"``
  (``normalize_subscripts`` makes it from NumPy's implicit and sublist forms:
  the same loops, the output spelled out), and ``optimize`` ("" for NumPy's
  ``optimize=False``, else "greedy" or "optimal": NumPy's contraction path,
  run by NumPy).  Operands: any number, real (bool, integers, floats); the
  result dtype is ``np.result_type`` of the operands, as NumPy's.
- ``dot``/``inner``: ``np.dot``/``np.inner`` of operands of rank >= 1.  For
  operands of rank > 2 NumPy's dot (and inner, which is dot with ``b``'s last
  axis moved before its second-to-last) takes one dot product per result
  element, BLAS's ddot or its own loop by stride, not one matrix product;
  ``product_subscripts`` spells the contraction as einsum subscripts (for
  shapes, gradients and OpenVINO; not for the bits).
- ``convolve``/``correlate``: attr ``mode`` (full, same, valid) of two
  non-empty 1-D real operands; ``window(op, n, m, mode)`` says which part of
  the full result a mode keeps (NumPy swaps the operands when the second is
  longer, and correlate then reverses: its "same" window is not convolve's).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import from_numpy
from ..errors import FrameTypeError, FrameValueError
from ..ir.types import TensorType
from .registry import register
from .schema import AttrSpec, OpSchema

__all__ = ["EinsumSpec", "parse_einsum", "term_labels", "normalize_subscripts", "window", "CONVOLUTIONS",
           "EINSUM_OPTIMIZE", "PRODUCTS", "product_subscripts"]

EINSUM_OPTIMIZE = ("", "greedy", "optimal")
CONVOLUTIONS = ("convolve", "correlate")
PRODUCTS = ("dot", "inner")
_MODES = ("full", "same", "valid")


class EinsumSpec:
    """The labels of an einsum: ``terms[k]`` one label per axis of operand k,
    ``output`` the result's, ``sizes`` every label's (broadcast) size.  The axes
    ``...`` covers get private labels (``ELLIPSIS_LABELS``), right-aligned across
    operands as NumPy broadcasts them; ``ellipsis`` lists those in use."""

    ELLIPSIS_LABELS = tuple(chr(0x2460 + i) for i in range(32))

    __slots__ = ("terms", "output", "sizes", "ellipsis")

    def __init__(self, terms, output, sizes, ellipsis):
        self.terms: list[list[str]] = terms
        self.output: list[str] = output
        self.sizes: dict[str, int] = sizes
        self.ellipsis: list[str] = ellipsis


def _term_labels(term: str, ndim: int) -> list[str | None]:
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise FrameValueError(f"einsum: invalid subscripts {term!r}")
    head, dots, tail = term.partition("...")
    if not all(c.isascii() and c.isalpha() for c in head + tail):
        raise FrameValueError(f"einsum: subscripts must be letters, got {term!r}")
    explicit = len(head) + len(tail)
    if (not dots and explicit != ndim) or explicit > ndim:
        raise FrameValueError(f"einsum: subscripts {term!r} for an operand of rank {ndim}")
    return list(head) + ([None] * (ndim - explicit) if dots else []) + list(tail)


def term_labels(raw_terms, shapes) -> tuple[list[list[str]], list[str], dict[str, int]]:
    """Each input term's labels, one per axis of its operand (``...`` expanded into
    private labels, right-aligned across operands as NumPy broadcasts them), the
    private labels in use, and how often each label occurs; FrameValueError where
    NumPy raises."""
    terms = [_term_labels(t, len(s)) for t, s in zip(raw_terms, shapes)]
    n_ell = max((t.count(None) for t in terms), default=0)
    ellipsis = list(EinsumSpec.ELLIPSIS_LABELS[:n_ell])
    for t in terms:
        k = t.count(None)
        if k:
            at = t.index(None)
            t[at:at + k] = ellipsis[n_ell - k:]
    counts: dict[str, int] = {}
    for t in terms:
        for lab in t:
            counts[lab] = counts.get(lab, 0) + 1
    return terms, ellipsis, counts


def parse_einsum(subscripts: str, shapes) -> EinsumSpec:
    """The labels of ``subscripts`` (string form, implicit or explicit) over operands
    of ``shapes``; FrameValueError where NumPy raises."""
    lhs, arrow, rhs = subscripts.replace(" ", "").partition("->")
    raw = lhs.split(",")
    if len(raw) != len(shapes):
        raise FrameValueError(f"einsum: {len(raw)} terms in {subscripts!r} for "
                              f"{len(shapes)} operands")
    terms, ellipsis, counts = term_labels(raw, shapes)
    if arrow:
        if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
            raise FrameValueError(f"einsum: invalid output subscripts {rhs!r}")
        head, dots, tail = rhs.partition("...")
        output = list(head) + (ellipsis if dots else []) + list(tail)
        if len(set(output)) != len(output):
            raise FrameValueError(f"einsum: output subscripts {rhs!r} repeat a label")
        for lab in head + tail:
            if lab not in counts:
                raise FrameValueError(f"einsum: output label {lab!r} is in no operand")
    else:
        output = ellipsis + sorted(lab for lab, n in counts.items()
                                   if n == 1 and lab not in ellipsis)
    sizes: dict[str, int] = {}
    for t, shape in zip(terms, shapes):
        for lab, d in zip(t, shape):
            old = sizes.get(lab)
            if old is None or old == 1:
                sizes[lab] = d
            elif d not in (1, old):
                raise FrameValueError(f"einsum: label {lab!r} has sizes {old} and {d}")
    return EinsumSpec(terms, output, sizes, ellipsis)


def normalize_subscripts(subscripts: str, shapes) -> str:
    """``subscripts`` in the explicit form (``"ij,jk"`` -> ``"ij,jk->ik"``), spaces
    dropped; the same operation as NumPy's for operands of ``shapes``."""
    subscripts = subscripts.replace(" ", "")
    spec = parse_einsum(subscripts, shapes)
    if "->" in subscripts:
        return subscripts
    ell = set(spec.ellipsis)
    rhs = ("..." if spec.ellipsis else "") + "".join(lab for lab in spec.output if lab not in ell)
    return f"{subscripts}->{rhs}"


def _real_dtype(op: str, types) -> None:
    for t in types:
        if t.dtype.kind not in "biuf":
            raise FrameTypeError(f"{op}: operands must be real (bool, integer or float), got {t}")


def _einsum_infer(types, attrs):
    subscripts = attrs["subscripts"]
    if "->" not in subscripts:
        raise FrameValueError(f"einsum: subscripts must be explicit ('...->...'), got "
                              f"{subscripts!r}")
    if attrs["optimize"] not in EINSUM_OPTIMIZE:
        raise FrameValueError(f"einsum: optimize must be one of {EINSUM_OPTIMIZE}, got "
                              f"{attrs['optimize']!r}")
    _real_dtype("einsum", types)
    rhs = subscripts.partition("->")[2]
    spec = parse_einsum(subscripts, [t.shape for t in types])
    if spec.ellipsis and "..." not in rhs:
        raise FrameValueError(f"einsum: output {rhs!r} drops the '...' axes")
    dtype = from_numpy(np.result_type(*[t.dtype.np for t in types]))
    return [TensorType(dtype, tuple(spec.sizes[lab] for lab in spec.output))]


def _einsum_kernel(ins, attrs):
    result = np.asarray(np.einsum(attrs["subscripts"], *ins, optimize=attrs["optimize"] or False))
    if any(np.may_share_memory(result, x) for x in ins):
        # a view of an operand (a transpose): kernels return fresh arrays
        result = result.copy(order="K")
    return (result,)


register(OpSchema("einsum", (1, None), _einsum_infer, _einsum_kernel,
                  attrs={"subscripts": AttrSpec("str"), "optimize": AttrSpec("str", "")},
                  doc="numpy.einsum(subscripts, *operands, optimize=optimize or False): NumPy's "
                      "own sum-of-products loops (subscripts in the explicit form); the result "
                      "dtype is numpy.result_type of the operands."))


def window(op: str, n: int, m: int, mode: str) -> tuple[int, int]:
    """(offset, length): the part of the full ``op`` (convolve, correlate) of operands
    of lengths ``n`` and ``m`` that ``mode`` keeps.  NumPy runs the longer operand
    first; correlate then reverses its result, which moves the "same" window."""
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return short - 1, long - short + 1
    if op == "correlate" and m > n:
        return short // 2, long
    return (short - 1) // 2, long


def _convolution_infer(op: str):
    def infer(types, attrs):
        a, v = types
        if attrs["mode"] not in _MODES:
            raise FrameValueError(f"{op}: mode must be one of {_MODES}, got {attrs['mode']!r}")
        if a.rank != 1 or v.rank != 1:
            raise FrameValueError(f"{op}: operands must be 1-D, got {a} and {v}")
        if a.shape[0] == 0 or v.shape[0] == 0:
            raise FrameValueError(f"{op}: operands must not be empty, got {a} and {v}")
        _real_dtype(op, types)
        if a.dtype.kind == "b" or v.dtype.kind == "b":
            raise FrameTypeError(f"{op}: bool operands are not supported, got {a} and {v}")
        dtype = from_numpy(np.result_type(a.dtype.np, v.dtype.np))
        return [TensorType(dtype, (window(op, a.shape[0], v.shape[0], attrs["mode"])[1],))]
    return infer


def _convolution_kernel(op: str):
    fn = getattr(np, op)

    def kernel(ins, attrs):
        return (np.asarray(fn(ins[0], ins[1], mode=attrs["mode"])),)
    return kernel


for _op in CONVOLUTIONS:
    register(OpSchema(_op, 2, _convolution_infer(_op), _convolution_kernel(_op),
                      attrs={"mode": AttrSpec("str", "full" if _op == "convolve" else "valid")},
                      doc=f"numpy.{_op}(a, v, mode) of 1-D real operands: NumPy's own loop, one "
                          f"dot product per window."))


# --------------------------------------------------------------------------- dot, inner

def product_subscripts(op: str, ndim_a: int, ndim_b: int) -> str:
    """``np.dot``/``np.inner`` of operands of ranks ``ndim_a``, ``ndim_b`` (>= 1) as
    einsum subscripts: the last axis of ``a`` against the last axis of ``b``
    (inner) or its second-to-last (dot; the last for a 1-D ``b``)."""
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY")
    lead_a = "".join(next(letters) for _ in range(ndim_a - 1))
    b_terms = [next(letters) for _ in range(ndim_b)]
    k = "Z"
    if op == "dot" and ndim_b >= 2:
        b_terms[-2] = k
        out_b = "".join(b_terms[:-2]) + b_terms[-1]
    else:
        b_terms[-1] = k
        out_b = "".join(b_terms[:-1])
    return f"{lead_a}{k},{''.join(b_terms)}->{lead_a}{out_b}"


def _product_infer(op: str):
    def infer(types, attrs):
        a, b = types
        if a.rank == 0 or b.rank == 0:
            raise FrameValueError(f"{op}: operands must have rank >= 1, got {a} and {b}")
        _real_dtype(op, types)
        k_b = b.shape[-2] if op == "dot" and b.rank >= 2 else b.shape[-1]
        if a.shape[-1] != k_b:
            raise FrameValueError(f"{op}: shapes {a.shape} and {b.shape} not aligned")
        spec = parse_einsum(product_subscripts(op, a.rank, b.rank), [a.shape, b.shape])
        dtype = from_numpy(np.result_type(a.dtype.np, b.dtype.np))
        return [TensorType(dtype, tuple(spec.sizes[lab] for lab in spec.output))]
    return infer


def _product_kernel(op: str):
    fn = getattr(np, op)

    def kernel(ins, attrs):
        return (np.asarray(fn(ins[0], ins[1])),)
    return kernel


for _op in PRODUCTS:
    register(OpSchema(_op, 2, _product_infer(_op), _product_kernel(_op),
                      doc=f"numpy.{_op}(a, b) of real operands of rank >= 1: NumPy's own "
                          f"products (BLAS for matrices, a dot product per element beyond)."))
