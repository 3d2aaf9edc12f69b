"""NumPy functions written with frame's ops, with NumPy's own signatures and
semantics (NumPy 2 dtypes, ``axis``/``keepdims``/``ddof``, tie order of
sorts): ``np.std``, ``np.var``, ``np.einsum``, ``np.linalg.norm``,
``np.take_along_axis``, ``np.argsort``, ``np.sort``, ``np.cumsum``,
``np.cumprod``, ``np.pad`` (constant, edge, reflect, symmetric, wrap) and
``np.array_split``.

``Tensor.__array_function__`` (``frame._numpy_interop``) calls them when a
frame Tensor is among the arguments; capture reaches them the same way for a
traced ndarray (its meta array is passed as a Tensor), so the call becomes
graph ops.  A use of one of them that frame does not model (``dtype=`` of
``np.std``, a matrix 2-norm, ``np.pad`` modes other than the five above,
``degrees of freedom <= 0``, which NumPy warns about, ...) raises
``NotModelled``: eagerly NumPy then runs on the tensors' data; under capture
the call is a graph break whose reason names the function.
"""
from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from . import functions as F
from .dtypes import as_dtype, float64, from_numpy
from .errors import FrameTypeError
from .functions._core import apply1, as_array, schema_attrs
from .functions.reduction import reduction_axes
from .ops.common import normalize_axis
from .ops.scan import SORT_KINDS

__all__ = ["NotModelled", "NUMPY_FUNCTIONS", "einsum_returns_view", "einsum_view"]


class NotModelled(FrameTypeError):
    """This use of a NumPy function has no frame op (NumPy itself runs it)."""

    def __init__(self, function: str, what: str):
        super().__init__(f"numpy.{function} {what} has no frame op")


def _int(value) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _axis(function: str, axis, ndim: int) -> int:
    if not _int(axis):
        raise NotModelled(function, f"with axis={axis!r}")
    return normalize_axis(function, int(axis), ndim)


def _floating(x, function: str):
    """``x`` as NumPy computes statistics of it: ints and bools in float64."""
    kind = as_array(x).dtype.kind
    if kind == "c":
        raise NotModelled(function, "of complex values")
    return F.astype(x, float64) if kind in "biu" else x


def _flat(x):
    return F.reshape(x, -1)


# --------------------------------------------------------------------------- std, var

def _var(function, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    for name, value, default in (("dtype", dtype, None), ("out", out, None),
                                 ("where", where, True), ("mean", mean, None)):
        if value is not default:
            raise NotModelled(function, f"with {name}=")
    if correction is not None:
        if ddof != 0:
            raise NotModelled(function, "with both ddof= and correction=")
        ddof = correction
    if not isinstance(ddof, (numbers.Real, np.number)) or isinstance(ddof, (bool, np.bool_)):
        raise NotModelled(function, f"with ddof={ddof!r}")
    x = _floating(a, function)
    shape = as_array(x).shape
    axes = reduction_axes(function, axis, len(shape))
    count = math.prod(shape[i] for i in axes)
    if count - ddof <= 0:
        raise NotModelled(function, "with degrees of freedom <= 0 (NumPy warns and returns inf/nan)")
    centred = F.sub(x, F.mean(x, axis=axes, keepdims=True))
    total = F.sum(F.mul(centred, centred), axis=axes, keepdims=bool(keepdims))
    return F.div(total, float(count - ddof))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """``np.var``: the mean squared deviation, divided by ``N - ddof``."""
    return _var("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
        correction=None):
    """``np.std``: the square root of ``np.var``."""
    return F.sqrt(_var("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction))


# --------------------------------------------------------------------------- linalg.norm

def _keep(result, shape, axes):
    return F.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector norms (ord None/2, inf, -inf, 0, 1, p) and the
    matrix norms that need no SVD (None/'fro', 1, -1, inf, -inf)."""
    x = _floating(x, "linalg.norm")
    shape = as_array(x).shape
    nd = len(shape)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            result = F.sqrt(F.sum(F.mul(x, x)))
            return F.reshape(result, (1,) * nd) if keepdims else result
        if nd not in (1, 2):
            raise NotModelled("linalg.norm", f"of a rank-{nd} array with ord={ord!r}")
        axis = tuple(range(nd))
    elif _int(axis):
        axis = (axis,)
    elif isinstance(axis, tuple) and all(_int(a) for a in axis):
        pass
    else:
        raise NotModelled("linalg.norm", f"with axis={axis!r}")
    axes = tuple(normalize_axis("linalg.norm", int(a), nd) for a in axis)
    if len(axes) == 1:
        result = _vector_norm(x, ord, axes[0], bool(keepdims))
    elif len(axes) == 2 and axes[0] != axes[1]:
        result = _matrix_norm(x, ord, axes)
        if keepdims:
            result = _keep(result, shape, axes)
    else:
        raise NotModelled("linalg.norm", f"with axis={axis!r}")
    return result


def _vector_norm(x, ord, axis: int, keepdims: bool):
    if isinstance(ord, str):
        raise NotModelled("linalg.norm", f"of a vector with ord={ord!r}")
    if ord is None or ord == 2:
        return F.sqrt(F.sum(F.mul(x, x), axis=axis, keepdims=keepdims))
    if ord == math.inf:
        return F.max(F.abs(x), axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return F.min(F.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = F.sum(F.not_equal(x, 0), axis=axis, keepdims=keepdims)
        return F.astype(nonzero, as_array(x).dtype)
    if ord == 1:
        return F.sum(F.abs(x), axis=axis, keepdims=keepdims)
    if not isinstance(ord, (numbers.Real, np.number)) or isinstance(ord, (bool, np.bool_)):
        raise NotModelled("linalg.norm", f"with ord={ord!r}")
    powered = F.sum(F.pow(F.abs(x), float(ord)), axis=axis, keepdims=keepdims)
    return F.pow(powered, 1.0 / float(ord))


def _matrix_norm(x, ord, axes):
    row, col = axes
    if ord is None or ord == "fro":
        return F.sqrt(F.sum(F.mul(x, x), axis=axes))
    if ord in (1, -1):
        if col > row:
            col -= 1
        extremum = F.max if ord == 1 else F.min
        return extremum(F.sum(F.abs(x), axis=row), axis=col)
    if ord in (math.inf, -math.inf):
        if row > col:
            row -= 1
        extremum = F.max if ord == math.inf else F.min
        return extremum(F.sum(F.abs(x), axis=col), axis=row)
    raise NotModelled("linalg.norm", f"of a matrix with ord={ord!r} (singular values)")


# --------------------------------------------------------------------------- einsum

def _einsum_sublist(sub) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif _int(s) and 0 <= int(s) < len(letters):
            out.append(letters[int(s)])
        else:
            raise NotModelled("einsum", f"with a subscript {s!r}")
    return "".join(out)


def _einsum_args(operands):
    """(subscripts, arrays) of both calling forms of ``np.einsum``."""
    if not operands:
        raise NotModelled("einsum", "without operands")
    if isinstance(operands[0], str):
        return operands[0].replace(" ", ""), list(operands[1:])
    arrays, terms = list(operands[0::2]), list(operands[1::2])
    output = None
    if len(arrays) > len(terms):  # a trailing output sublist
        output = arrays.pop()
        if not isinstance(output, (list, tuple)):
            raise NotModelled("einsum", "with an operand without a sublist")
    subscripts = ",".join(_einsum_sublist(t) for t in terms)
    if output is not None:
        subscripts += "->" + _einsum_sublist(output)
    return subscripts, arrays


def _labels(term: str, ndim: int, function: str = "einsum") -> list[str] | None:
    """The labels of one input term, with ``...`` expanded (None marks where)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise NotModelled(function, f"with the subscripts {term!r}")
    head, dots, tail = term.partition("...")
    for c in head + tail:
        if not c.isalpha():
            raise NotModelled(function, f"with the subscripts {term!r}")
    explicit = len(head) + len(tail)
    if (not dots and explicit != ndim) or explicit > ndim:
        raise NotModelled(function, f"with {term!r} for a rank-{ndim} operand")
    return list(head) + ([None] * (ndim - explicit) if dots else []) + list(tail)


def _diagonal(x, labels: list[str]):
    """Repeated labels of one operand (``"ii"``): its diagonal, by moving the two
    axes last, flattening them and taking every (n + 1)-th element."""
    while len(set(labels)) != len(labels):
        seen = {}
        for i, lab in enumerate(labels):
            if lab in seen:
                first, second = seen[lab], i
                break
            seen[lab] = i
        shape = as_array(x).shape
        if shape[first] != shape[second]:
            raise NotModelled("einsum", f"with a repeated label over axes of sizes "
                                        f"{shape[first]} and {shape[second]}")
        n = shape[first]
        rest = [i for i in range(len(labels)) if i not in (first, second)]
        x = F.transpose(x, *rest, first, second)
        x = F.reshape(x, tuple(shape[i] for i in rest) + (n * n,))
        k = len(rest)
        x = F.strided_slice(x, [None] * k + [0], [None] * k + [None], [None] * k + [n + 1])
        labels = [labels[i] for i in rest] + [labels[first]]
    return x, labels


def _move(x, labels, order):
    perm = [labels.index(lab) for lab in order]
    return x if perm == list(range(len(perm))) else F.transpose(x, *perm)


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """``np.einsum``: diagonals by slicing, labels of one operand summed, then the
    operands contracted left to right with batched ``matmul``."""
    if out is not None or dtype is not None or order not in ("K", "A", "C") or casting != "safe":
        raise NotModelled("einsum", "with out=, dtype=, order= or casting=")
    subscripts, arrays = _einsum_args(operands)
    lhs, arrow, rhs = subscripts.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(arrays):
        raise NotModelled("einsum", f"with {len(terms)} terms for {len(arrays)} operands")
    datas = [as_array(a) for a in arrays]
    result_dtype = np.result_type(*datas)
    if result_dtype.kind not in "biuf":
        raise NotModelled("einsum", f"of {result_dtype} operands")
    compute = np.dtype(np.int64) if result_dtype.kind == "b" else result_dtype
    ell_dims = 0
    parsed = []
    for term, d in zip(terms, datas):
        labels = _labels(term, d.ndim)
        ell_dims = max(ell_dims, labels.count(None))
        parsed.append(labels)
    ellipsis = [chr(0x2460 + i) for i in range(ell_dims)]  # private labels, right-aligned
    for labels in parsed:
        k = labels.count(None)
        if k:
            at = labels.index(None)
            labels[at:at + k] = ellipsis[ell_dims - k:]
    counts: dict[str, int] = {}
    for labels in parsed:
        for lab in labels:
            counts[lab] = counts.get(lab, 0) + 1
    if arrow:
        if rhs.count("...") > 1 or (ell_dims and "..." not in rhs):
            raise NotModelled("einsum", f"with the output {rhs!r}")
        head, _, tail = rhs.partition("...")
        output = list(head) + (ellipsis if "..." in rhs else []) + list(tail)
        if len(set(output)) != len(output) or any(lab not in counts for lab in output) or \
                any(not c.isalpha() for c in head + tail):
            raise NotModelled("einsum", f"with the output {rhs!r}")
    else:
        output = ellipsis + sorted(lab for lab, n in counts.items()
                                   if n == 1 and lab not in ellipsis)
    sizes: dict[str, int] = {}
    for labels, d in zip(parsed, datas):
        for lab, n in zip(labels, d.shape):
            if sizes.get(lab, 1) != 1 and n not in (1, sizes[lab]):
                raise NotModelled("einsum", f"with label {lab!r} of sizes {sizes[lab]} and {n}")
            sizes[lab] = n if sizes.get(lab, 1) == 1 else sizes[lab]
    xs = []
    for i, (a, labels) in enumerate(zip(arrays, parsed)):
        x = a if datas[i].dtype == compute else F.astype(a, as_dtype(compute))
        x, labels = _diagonal(x, labels)
        shape = as_array(x).shape
        full = tuple(sizes[lab] for lab in labels)
        if shape != full:
            x = F.broadcast_to(x, full)
        later = set(output).union(*(set(p) for j, p in enumerate(parsed) if j != i))
        own = [j for j, lab in enumerate(labels) if lab not in later]
        if own:
            x = F.sum(x, axis=tuple(own))
            labels = [lab for lab in labels if lab not in [labels[j] for j in own]]
        xs.append((x, labels))
    acc, acc_labels = xs[0]
    for i in range(1, len(xs)):
        x, labels = xs[i]
        keep = set(output).union(*(set(lab for lab in xs[j][1]) for j in range(i + 1, len(xs))))
        batch = [lab for lab in acc_labels if lab in labels and lab in keep]
        contract = [lab for lab in acc_labels if lab in labels and lab not in keep]
        a_only = [lab for lab in acc_labels if lab not in labels]
        b_only = [lab for lab in labels if lab not in acc_labels]
        dims = [math.prod(sizes[lab] for lab in group) for group in (batch, a_only, contract, b_only)]
        left = F.reshape(_move(acc, acc_labels, batch + a_only + contract), (dims[0], dims[1], dims[2]))
        right = F.reshape(_move(x, labels, batch + contract + b_only), (dims[0], dims[2], dims[3]))
        acc = F.reshape(F.matmul(left, right), tuple(sizes[lab] for lab in batch + a_only + b_only))
        acc_labels = batch + a_only + b_only
    extra = [j for j, lab in enumerate(acc_labels) if lab not in output]
    if extra:  # a single operand's labels left out of the output
        acc = F.sum(acc, axis=tuple(extra))
        acc_labels = [lab for lab in acc_labels if lab in output]
    acc = _move(acc, acc_labels, output)
    if as_array(acc).dtype != result_dtype:
        acc = F.astype(acc, as_dtype(result_dtype))
    return acc


def einsum_returns_view(subscripts: str) -> bool:
    """Does ``np.einsum(subscripts, a)`` return a view of ``a``?  NumPy does for
    one operand when nothing is summed (a transpose, a diagonal, the identity)."""
    lhs, arrow, rhs = subscripts.replace(" ", "").partition("->")
    if "," in lhs:
        return False
    labels = set(lhs.replace("...", ""))
    if arrow:
        if "..." in lhs and "..." not in rhs:
            return False
        return labels <= set(rhs.replace("...", ""))
    return all(lhs.count(c) == 1 for c in labels)


def einsum_view(array, subscripts: str):
    """``np.einsum(subscripts, array)``: how capture remakes such a view at run time."""
    return np.einsum(subscripts, array)


# --------------------------------------------------------------------------- sorting, gathers

def _sort_kind(function: str, kind, stable) -> str:
    if stable is not None:
        if kind is not None:
            raise NotModelled(function, "with both kind= and stable=")
        return "stable" if stable else "quicksort"
    if kind is None:
        return "quicksort"
    if isinstance(kind, str) and kind:
        for name in SORT_KINDS:
            if name[0] == kind[0].lower():
                return name
    raise NotModelled(function, f"with kind={kind!r}")


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort`` (ties in the order of NumPy's sort of that kind)."""
    if order is not None:
        raise NotModelled("argsort", "with order=")
    kind = _sort_kind("argsort", kind, stable)
    x = as_array(a)
    if axis is None:
        x, axis = _flat(a), 0
    axis = _axis("argsort", axis, as_array(x).ndim)
    return apply1("argsort", (as_array(x),), schema_attrs("argsort", axis=axis, kind=kind))


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort``: the values NumPy's sort of that kind gives (``sort`` op)."""
    if order is not None:
        raise NotModelled("sort", "with order=")
    kind = _sort_kind("sort", kind, stable)
    x = a
    if axis is None:
        x, axis = _flat(a), 0
    axis = _axis("sort", axis, as_array(x).ndim)
    return apply1("sort", (as_array(x),), schema_attrs("sort", axis=axis, kind=kind))


def take_along_axis(arr, indices, axis=-1):
    """``np.take_along_axis``; ``axis=None`` works on the flattened array."""
    x = arr
    if axis is None:
        x, axis = _flat(arr), 0
    axis = _axis("take_along_axis", axis, as_array(x).ndim)
    return apply1("take_along_axis", (as_array(x), as_array(indices)),
                  schema_attrs("take_along_axis", axis=axis))


def _scan(function: str, a, axis, dtype, out):
    if out is not None:
        raise NotModelled(function, "with out=")
    x = a
    if axis is None:
        x, axis = _flat(a), 0
    axis = _axis(function, axis, as_array(x).ndim)
    if dtype is not None:
        dtype = from_numpy(np.dtype(dtype))
        if as_array(x).dtype != dtype.np:
            x = F.astype(x, dtype)
    result = apply1(function, (as_array(x),), schema_attrs(function, axis=axis))
    if dtype is not None and as_array(result).dtype != dtype.np:
        # NumPy accumulates in the requested dtype: integers wrap the same way
        result = F.astype(result, dtype)
    return result


def cumsum(a, axis=None, dtype=None, out=None):
    """``np.cumsum``; ``axis=None`` runs over the flattened array."""
    return _scan("cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """``np.cumprod``; ``axis=None`` runs over the flattened array."""
    return _scan("cumprod", a, axis, dtype, out)


# --------------------------------------------------------------------------- pad, array_split

def _pad_pairs(pad_width, ndim: int) -> list[tuple[int, int]]:
    try:
        widths = np.asarray(pad_width)
    except (TypeError, ValueError):
        raise NotModelled("pad", f"with pad_width={pad_width!r}") from None
    if widths.size and widths.dtype.kind not in "iu":
        raise NotModelled("pad", f"with pad_width={pad_width!r}")
    try:
        pairs = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise NotModelled("pad", f"with pad_width={pad_width!r}") from None
    if (pairs < 0).any():
        raise NotModelled("pad", f"with negative pad_width={pad_width!r}")
    return [(int(b), int(e)) for b, e in pairs]


def _cut(x, axis: int, start: int, stop: int, step: int = 1):
    nd = as_array(x).ndim
    full = [None] * nd
    starts, stops, steps = list(full), list(full), list(full)
    starts[axis], stops[axis], steps[axis] = start, stop, step
    return F.strided_slice(x, starts, stops, steps)


def _pad_axis(x, axis: int, before: int, after: int, mode: str):
    n = as_array(x).shape[axis]
    if mode == "edge":
        if n == 0:
            raise NotModelled("pad", "in mode 'edge' of an empty axis")
        shape = list(as_array(x).shape)
        parts = []
        if before:
            shape[axis] = before
            parts.append(F.broadcast_to(_cut(x, axis, 0, 1), tuple(shape)))
        parts.append(x)
        if after:
            shape[axis] = after
            parts.append(F.broadcast_to(_cut(x, axis, n - 1, n), tuple(shape)))
    elif mode == "reflect":  # mirrored about the edge elements, which are not repeated
        if (before or after) and (n < 2 or before > n - 1 or after > n - 1):
            raise NotModelled("pad", "in mode 'reflect' wider than the array")
        parts = [F.flip(_cut(x, axis, 1, before + 1), axis)] if before else []
        parts.append(x)
        if after:
            parts.append(F.flip(_cut(x, axis, n - 1 - after, n - 1), axis))
    elif mode == "symmetric":  # mirrored, the edge elements repeated
        if before > n or after > n:
            raise NotModelled("pad", "in mode 'symmetric' wider than the array")
        parts = [F.flip(_cut(x, axis, 0, before), axis)] if before else []
        parts.append(x)
        if after:
            parts.append(F.flip(_cut(x, axis, n - after, n), axis))
    else:  # wrap
        if before > n or after > n:
            raise NotModelled("pad", "in mode 'wrap' wider than the array")
        parts = [_cut(x, axis, n - before, n)] if before else []
        parts.append(x)
        if after:
            parts.append(_cut(x, axis, 0, after))
    return parts[0] if len(parts) == 1 else F.concat(parts, axis)


def pad(array, pad_width, mode="constant", **kwargs):
    """``np.pad`` in modes constant (one constant value), edge, reflect
    (reflect_type 'even'), symmetric and wrap."""
    nd = as_array(array).ndim
    pairs = _pad_pairs(pad_width, nd)
    if mode == "constant":
        if set(kwargs) - {"constant_values"}:
            raise NotModelled("pad", f"with {sorted(kwargs)}")
        value = kwargs.get("constant_values", 0)
        if isinstance(value, (np.ndarray, np.generic)) and np.ndim(value) == 0:
            value = value.item()
        if not isinstance(value, (numbers.Real, np.number)):
            raise NotModelled("pad", "with per-axis constant_values")
        return F.pad(array, tuple(pairs), value=value)
    if not isinstance(mode, str) or mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotModelled("pad", f"in mode {mode!r}")
    if kwargs and (mode == "edge" or set(kwargs) != {"reflect_type"} or
                   kwargs["reflect_type"] != "even" or mode == "wrap"):
        raise NotModelled("pad", f"in mode {mode!r} with {sorted(kwargs)}")
    x = array
    if nd == 0:
        return F.reshape(x, ())  # a new array: nothing to pad
    for axis, (before, after) in enumerate(pairs):
        if before or after:
            x = _pad_axis(x, axis, before, after, mode)
    if x is array:
        x = F.reshape(x, as_array(array).shape)  # np.pad returns a new array
    return x


def array_split(ary, indices_or_sections, axis=0):
    """``np.array_split``: like ``np.split``, a number of sections need not divide
    the axis (the first ``n % sections`` pieces are one longer)."""
    nd = as_array(ary).ndim
    if nd == 0:
        raise NotModelled("array_split", "of a 0-d array")
    ax = _axis("array_split", axis, nd)
    if _int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise NotModelled("array_split", f"into {sections} sections")
        each, extras = divmod(as_array(ary).shape[ax], sections)
        sizes = [each + 1] * extras + [each] * (sections - extras)
        cuts = [int(c) for c in np.cumsum(sizes)[:-1]]
    else:
        try:
            cuts = [operator.index(c) for c in indices_or_sections]
        except TypeError:
            raise NotModelled("array_split", f"at {indices_or_sections!r}") from None
    return F.split(ary, cuts, ax)


NUMPY_FUNCTIONS: dict = {
    np.std: std, np.var: var, np.einsum: einsum, np.linalg.norm: norm, np.argsort: argsort,
    np.sort: sort, np.take_along_axis: take_along_axis, np.cumsum: cumsum,
    np.cumprod: cumprod, np.pad: pad, np.array_split: array_split,
}
