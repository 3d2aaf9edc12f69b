"""NumPy functions written with frame's ops, with NumPy's own signatures and
semantics (NumPy 2 dtypes, ``axis``/``keepdims``/``ddof``, tie order of
sorts): ``np.std``, ``np.var``, ``np.einsum``, ``np.linalg.norm``,
``np.take_along_axis``, ``np.argsort``, ``np.sort``, ``np.cumsum``,
``np.cumprod``, ``np.pad`` (constant, edge, reflect, symmetric, wrap),
``np.array_split``, the products ``np.dot``/``vdot``/``inner``/``outer``/
``tensordot``, ``np.any``/``all``/``count_nonzero``, the stacking and axis
functions (``vstack``, ``hstack``, ``dstack``, ``column_stack``, ``swapaxes``,
``moveaxis``), ``np.diff``/``roll``/``repeat``/``tile``/``triu``/``tril``,
``np.isclose``/``allclose``, ``np.round``, ``np.ptp``, ``np.average``, the
``dtype=`` of ``np.sum``/``prod``/``mean``, the ``*_like`` constructors and
``np.meshgrid``, ``np.fix``, ``np.polyval``, ``np.polyder``; ``UFUNC_FUNCTIONS`` holds ufuncs written as an exact
composition of frame ops (``np.square``).

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
from .errors import FrameAxisError, FrameTypeError, FrameValueError
from .tensor import Tensor
from .functions._core import _EAGER, apply1, as_array, current_level, operands, schema_attrs
from .functions.reduction import reduction_axes
from .ops.common import normalize_axis
from .ops.contract import normalize_subscripts, term_labels
from .ops.scan import SORT_KINDS

__all__ = ["NotModelled", "NUMPY_FUNCTIONS", "array_copy", "UFUNC_FUNCTIONS", "einsum_returns_view", "einsum_view"]


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

def statistic_axes(function: str, axis, rank: int) -> tuple[int, ...]:
    """The axes of NumPy's ``mean``/``var``/``std``: as a reduction's, except that
    an int axis of a 0-d array raises (NumPy counts the elements along it with
    ``normalize_axis_index``; a ufunc's ``reduce`` lets 0 and -1 name it)."""
    if rank == 0 and isinstance(axis, (numbers.Integral, np.integer)) and not isinstance(axis, bool):
        raise FrameAxisError(f"{function}: axis {int(axis)} is out of bounds for an array of "
                             f"dimension 0")
    return reduction_axes(function, axis, rank)


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
    axes = statistic_axes(function, axis, len(shape))
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
            # NumPy's sqrt(x.ravel(order="K").dot(...)): BLAS's dot over the elements
            # in memory order (op vector_norm, whose kernel is np.linalg.norm)
            result = apply1("vector_norm", (as_array(x),), {})
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


def _einsum_optimize(optimize) -> str:
    """The ``optimize`` attr of the einsum op: "" for NumPy's own loops (False)."""
    if optimize is False or optimize is None:
        return ""
    if optimize is True:
        return "greedy"  # what np.einsum_path makes of True
    if isinstance(optimize, str) and optimize in ("greedy", "optimal"):
        return optimize
    raise NotModelled("einsum", f"with optimize={optimize!r}")


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    """``np.einsum``.  A floating result is the ``einsum`` op (frame/ops/contract.py),
    whose kernel is NumPy's: its sum-of-products loops round unlike any
    composition.  Integer and bool results (exact in any order) and one operand
    that NumPy returns as a view (nothing summed) are composed: diagonals by
    slicing, labels of one operand summed, then the operands contracted left to
    right with batched ``matmul``."""
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
    try:
        parsed, ellipsis, counts = term_labels(terms, [d.shape for d in datas])
    except FrameValueError as e:
        raise NotModelled("einsum", f"with the subscripts {subscripts!r} ({e})") from e
    ell_dims = len(ellipsis)
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
    if result_dtype.kind == "f" and not (len(arrays) == 1 and einsum_returns_view(subscripts)):
        if order != "K":
            raise NotModelled("einsum", f"of floats with order={order!r}")
        attrs = {"subscripts": subscripts if arrow else normalize_subscripts(
                     subscripts, [d.shape for d in datas]),
                 "optimize": _einsum_optimize(optimize)}
        return apply1("einsum", datas, attrs)
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


# --------------------------------------------------------------------------- shared helpers

def _operand(value, function: str, complex_ok: bool = False):
    """``np.asarray(value)`` as a frame operand: a Tensor as it is, anything else
    converted by NumPy's rules (Python floats are float64, ints int64)."""
    if isinstance(value, Tensor):
        arr = as_array(value)
    else:
        try:
            arr = value = np.asarray(value)
        except (TypeError, ValueError):
            raise NotModelled(function, f"of {type(value).__name__}") from None
    if arr.dtype.kind not in ("biufc" if complex_ok else "biuf"):
        raise NotModelled(function, f"of {arr.dtype} values")
    return value


def _frame_dtype(dt: np.dtype) -> bool:
    try:
        from_numpy(dt)
    except TypeError:
        return False
    return True


def _shape(x) -> tuple:
    return as_array(x).shape


def _ndim(x) -> int:
    return as_array(x).ndim


def _dtype(x) -> np.dtype:
    return as_array(x).dtype


def _copy(x):
    """A new array with the value of ``x`` (NumPy returns a copy, never ``x``)."""
    return F.reshape(x, _shape(x))


def _no_0d_array(function: str, shape) -> None:
    """NumPy returns a 0-d *array* here; frame's 0-d results become NumPy scalars."""
    if len(shape) == 0:
        raise NotModelled(function, "returning a 0-d array")


def _ints(function: str, what: str, values) -> tuple[int, ...]:
    if _int(values):
        return (int(values),)
    if isinstance(values, (tuple, list)) and all(_int(v) for v in values):
        return tuple(int(v) for v in values)
    raise NotModelled(function, f"with {what}={values!r}")


def _axes(function: str, axis, ndim: int) -> tuple[int, ...]:
    """``normalize_axis_tuple``: distinct axes in the order given."""
    axes = tuple(normalize_axis(function, a, ndim) for a in _ints(function, "axis", axis))
    if len(set(axes)) != len(axes):
        raise NotModelled(function, f"with repeated axes {axis!r}")
    return axes


# --------------------------------------------------------------------------- products

def _matmul_2d(a, b):
    return F.matmul(a, b)


def tensordot(a, b, axes=2):
    """``np.tensordot``: the summed axes moved last in ``a`` and first in ``b``,
    both flattened to matrices, one ``matmul``."""
    a, b = _operand(a, "tensordot"), _operand(b, "tensordot")
    sa, sb = _shape(a), _shape(b)
    if _int(axes):
        n = int(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise NotModelled("tensordot", f"with axes={n} for ranks {len(sa)} and {len(sb)}")
        axes_a, axes_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        try:
            axes_a, axes_b = axes
        except (TypeError, ValueError):
            raise NotModelled("tensordot", f"with axes={axes!r}") from None
        axes_a = list(_ints("tensordot", "axes", axes_a))
        axes_b = list(_ints("tensordot", "axes", axes_b))
    if len(axes_a) != len(axes_b):
        raise NotModelled("tensordot", "with different numbers of axes (NumPy raises)")
    for axs, rank in ((axes_a, len(sa)), (axes_b, len(sb))):
        for i, ax in enumerate(axs):
            if not -rank <= ax < rank:
                raise NotModelled("tensordot", f"with axis {ax} of a rank-{rank} array")
            axs[i] = ax % rank
        if len(set(axs)) != len(axs):
            raise NotModelled("tensordot", "with a repeated axis")
    if any(sa[i] != sb[j] for i, j in zip(axes_a, axes_b)):
        raise NotModelled("tensordot", "with summed axes of different sizes (NumPy raises)")
    keep_a = [i for i in range(len(sa)) if i not in axes_a]
    keep_b = [j for j in range(len(sb)) if j not in axes_b]
    summed = math.prod(sa[i] for i in axes_a)
    shape = tuple(sa[i] for i in keep_a) + tuple(sb[j] for j in keep_b)
    _no_0d_array("tensordot", shape)
    left = F.reshape(F.transpose(a, *keep_a, *axes_a), (math.prod(sa[i] for i in keep_a), summed))
    right = F.reshape(F.transpose(b, *axes_b, *keep_b), (summed, math.prod(sb[j] for j in keep_b)))
    return F.reshape(F.matmul(_dot_operand(left), _dot_operand(right)), shape)


def _dot_operand(x):
    """``x`` as ``np.dot`` hands it to BLAS: op ``dot_operand`` (frame/ops/layout.py;
    NumPy's result depends on the operand's layout, which the graph tracks)."""
    return apply1("dot_operand", (as_array(x),), {})


def array_copy(a, order: str = "K"):
    """NumPy's copy of the array ``a`` laid out in ``order`` ("C", "F", "A", "K"):
    ``ndarray.copy`` (C by default), ``np.copy`` and ``np.array`` (K).  Op ``copy``
    (frame/ops/layout.py): the same elements, in the layout NumPy gives the copy,
    which layout-sensitive readers of it see."""
    return apply1("copy", (as_array(a),), {"order": order})


def dot(a, b, out=None):
    """``np.dot``: a product with a 0-d operand, ``matmul`` for 1-D and 2-D
    operands and N-D by 1-D.  Beyond (an operand of rank > 2) NumPy takes one
    dot product per result element: floats are the ``dot`` op (NumPy's kernel,
    frame/ops/contract.py), integers (exact in any order) ``tensordot`` over
    (last of ``a``, second-last of ``b``)."""
    if out is not None:
        raise NotModelled("dot", "with out=")
    a, b = _operand(a, "dot"), _operand(b, "dot")
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        return F.mul(a, b)
    if _shape(a)[-1] != _shape(b)[-1 if nb == 1 else -2]:
        raise NotModelled("dot", "of unaligned shapes (NumPy raises)")
    if nb == 1 or (na <= 2 and nb == 2):
        return F.matmul(_dot_operand(a), _dot_operand(b))
    if np.result_type(_dtype(a), _dtype(b)).kind == "f":
        return apply1("dot", (as_array(a), as_array(b)), {})
    return tensordot(a, b, axes=([na - 1], [nb - 2]))


def vdot(a, b):
    """``np.vdot`` of real arrays: the dot product of the flattened arrays."""
    a, b = _operand(a, "vdot"), _operand(b, "vdot")
    a, b = _flat(a), _flat(b)
    if _shape(a) != _shape(b):
        raise NotModelled("vdot", "of arrays of different sizes (NumPy raises)")
    return F.matmul(a, b)


def inner(a, b):
    """``np.inner``: sums over the last axes of both operands.  Floats: the
    ``inner`` op (NumPy's kernel: ``np.dot`` with ``b``'s last axis moved before
    its second-to-last, which copies a reversed vector and takes one dot
    product per element beyond matrices); integers (exact in any order): one
    ``matmul``."""
    a, b = _operand(a, "inner"), _operand(b, "inner")
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        return F.mul(a, b)
    if sa[-1] != sb[-1]:
        raise NotModelled("inner", "of arrays whose last dimensions differ (NumPy raises)")
    if np.result_type(_dtype(a), _dtype(b)).kind == "f":
        return apply1("inner", (as_array(a), as_array(b)), {})
    if len(sa) == 1 and len(sb) == 1:   # NumPy's dot of the two (a dot of b.T)
        return F.matmul(_dot_operand(a), _dot_operand(b))
    left = F.reshape(a, (-1, sa[-1]))
    right = F.transpose(F.reshape(b, (-1, sb[-1])), 1, 0)
    if len(sa) <= 2 and len(sb) <= 2:
        left, right = _dot_operand(left), _dot_operand(right)
    return F.reshape(F.matmul(left, right), sa[:-1] + sb[:-1])


def outer(a, b, out=None):
    """``np.outer``: the product of the flattened ``a`` as a column and ``b`` as a row."""
    if out is not None:
        raise NotModelled("outer", "with out=")
    a, b = _operand(a, "outer", True), _operand(b, "outer", True)
    return F.mul(F.reshape(a, (-1, 1)), F.reshape(b, (1, -1)))


def square(x):
    """``np.square``: ``x * x`` (bit for bit NumPy's loop; bools are squared in int8,
    as NumPy has no bool loop)."""
    if _dtype(x).kind == "b":
        x = F.astype(x, as_dtype("int8"))
    return F.mul(x, x)


def log1p(x):
    """``np.log1p``: op ``log1p`` (accurate for tiny x, unlike ``log(1 + x)``)."""
    return apply1("log1p", (as_array(x),), {})


def expm1(x):
    """``np.expm1``: op ``expm1``."""
    return apply1("expm1", (as_array(x),), {})


def _unary_op_ufunc(op: str):
    """``np.<op>`` on one operand: op ``op`` (NumPy's ufunc as its kernel)."""
    def fn(x):
        return apply1(op, (as_array(x),), {})
    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = f"``np.{op}``: op ``{op}``."
    return fn


_MATH_UFUNCS = ("tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "exp2", "log2", "log10",
                "cbrt", "rint", "trunc")


def _binary_ufunc(op: str, function: str, kinds: str):
    def fn(x1, x2):
        a, b = operands(x1, x2)
        for arr in (a, b):
            if arr.dtype.kind not in kinds:  # NumPy's own error
                raise NotModelled(function, f"of {arr.dtype} values")
        return apply1(op, (a, b), {})
    fn.__name__ = fn.__qualname__ = function
    fn.__doc__ = f"``np.{function}``: op ``{op}``."
    return fn


hypot = _binary_ufunc("hypot", "hypot", "biuf")
logaddexp = _binary_ufunc("logaddexp", "logaddexp", "biuf")
arctan2 = _binary_ufunc("arctan2", "arctan2", "biuf")
def _shift_ufunc(function: str):
    """``np.left_shift`` / ``np.right_shift``: NumPy has no bool loop, so a
    bool operand shifts in the integer dtype NumPy's type resolution picks
    (``b << 1`` in int64, ``b << b`` in int8), asked of NumPy itself on
    samples of the operands (a Python int is weak, as NEP 50 says)."""
    integers = _binary_ufunc(function, function, "iu")
    ufunc = getattr(np, function)

    def sample(x):
        if isinstance(x, (Tensor, np.ndarray)):
            return np.zeros((), as_array(x).dtype)
        return x

    def fn(x1, x2):
        if any(isinstance(x, (Tensor, np.ndarray, np.bool_, bool)) and
               np.asarray(sample(x)).dtype == np.bool_ for x in (x1, x2)):
            dt = ufunc(sample(x1), sample(x2)).dtype
            if dt.kind in "iu":
                x1, x2 = (F.astype(x, from_numpy(dt)) if isinstance(x, Tensor) and
                          as_array(x).dtype == np.bool_ else x for x in (x1, x2))
        return integers(x1, x2)
    fn.__name__ = fn.__qualname__ = function
    fn.__doc__ = integers.__doc__
    return fn


left_shift = _shift_ufunc("left_shift")
right_shift = _shift_ufunc("right_shift")


# --------------------------------------------------------------------------- truth tests, counts

def _nonzero(x):
    return x if _dtype(x).kind == "b" else F.not_equal(x, 0)


def _truth(function: str, a, axis, out, keepdims, where):
    if out is not None or not (where is True or where is np._NoValue):
        raise NotModelled(function, "with out= or where=")
    keepdims = False if keepdims is np._NoValue else keepdims
    x = _operand(a, function, True)
    axes = reduction_axes(function, axis, _ndim(x))
    nonzero = _nonzero(x)
    if function == "any":
        return F.greater(F.sum(nonzero, axis=axes, keepdims=bool(keepdims)), 0)
    return F.equal(F.sum(F.logical_not(nonzero), axis=axes, keepdims=bool(keepdims)), 0)


def np_any(a, axis=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    """``np.any``: whether some element (along ``axis``) is non-zero; False when empty."""
    return _truth("any", a, axis, out, keepdims, where)


def np_all(a, axis=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    """``np.all``: whether every element (along ``axis``) is non-zero; True when empty."""
    return _truth("all", a, axis, out, keepdims, where)


def count_nonzero(a, axis=None, *, keepdims=False):
    """``np.count_nonzero``: int64 counts of non-zero elements."""
    x = _operand(a, "count_nonzero", True)
    axes = reduction_axes("count_nonzero", axis, _ndim(x))
    return F.sum(_nonzero(x), axis=axes, keepdims=bool(keepdims))


# --------------------------------------------------------------------------- joining, axes

def _sequence(function: str, tup) -> list:
    if not isinstance(tup, (list, tuple)):
        raise NotModelled(function, f"of a {type(tup).__name__} (not a list or tuple of arrays)")
    if not tup:
        raise NotModelled(function, "of no arrays (NumPy raises)")
    return [_operand(t, function, True) for t in tup]


def _at_least(x, ndim: int):
    """``np.atleast_2d`` / ``atleast_3d`` shapes: () -> (1, 1[, 1]), (n,) -> (1, n[, 1]),
    (m, n) -> (m, n, 1) for 3-D."""
    shape = _shape(x)
    if len(shape) >= ndim:
        return x
    if len(shape) == 0:
        return F.reshape(x, (1,) * ndim)
    if len(shape) == 1:
        return F.reshape(x, (1, shape[0]) + (1,) * (ndim - 2))
    return F.reshape(x, shape + (1,))


def _stack_kwargs(function: str, dtype, casting) -> None:
    if dtype is not None or casting != "same_kind":
        raise NotModelled(function, "with dtype= or casting=")


def vstack(tup, *, dtype=None, casting="same_kind"):
    """``np.vstack``: the arrays as at least 2-D, joined along axis 0."""
    _stack_kwargs("vstack", dtype, casting)
    return F.concat([_at_least(x, 2) for x in _sequence("vstack", tup)], 0)


def hstack(tup, *, dtype=None, casting="same_kind"):
    """``np.hstack``: 1-D arrays joined end to end, others along axis 1."""
    _stack_kwargs("hstack", dtype, casting)
    arrays = [F.reshape(x, (1,)) if _ndim(x) == 0 else x for x in _sequence("hstack", tup)]
    return F.concat(arrays, 0 if _ndim(arrays[0]) == 1 else 1)


def dstack(tup):
    """``np.dstack``: the arrays as at least 3-D, joined along axis 2."""
    return F.concat([_at_least(x, 3) for x in _sequence("dstack", tup)], 2)


def column_stack(tup):
    """``np.column_stack``: 0-d and 1-D arrays as columns, joined along axis 1."""
    arrays = []
    for x in _sequence("column_stack", tup):
        if _ndim(x) < 2:
            x = F.reshape(x, (-1, 1))
        arrays.append(x)
    return F.concat(arrays, 1)


def swapaxes(a, axis1, axis2):
    """``np.swapaxes`` (a transpose)."""
    x = _operand(a, "swapaxes", True)
    nd = _ndim(x)
    if nd == 0:
        raise NotModelled("swapaxes", "of a 0-d array (NumPy raises)")
    i, j = _axis("swapaxes", axis1, nd), _axis("swapaxes", axis2, nd)
    perm = list(range(nd))
    perm[i], perm[j] = perm[j], perm[i]
    return F.transpose(x, *perm)


def moveaxis(a, source, destination):
    """``np.moveaxis`` (a transpose)."""
    x = _operand(a, "moveaxis", True)
    nd = _ndim(x)
    if nd == 0:
        raise NotModelled("moveaxis", "of a 0-d array")
    src, dst = _axes("moveaxis", source, nd), _axes("moveaxis", destination, nd)
    if len(src) != len(dst):
        raise NotModelled("moveaxis", "with source and destination of different lengths "
                                      "(NumPy raises)")
    order = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return F.transpose(x, *order)


# --------------------------------------------------------------------------- differences, shifts

def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """``np.diff``: ``n`` times the difference of neighbours along ``axis``
    (``!=`` for bools), after joining ``prepend``/``append``."""
    if not _int(n) or int(n) <= 0:
        raise NotModelled("diff", f"with n={n!r}")
    x = _operand(a, "diff")
    nd = _ndim(x)
    if nd == 0:
        raise NotModelled("diff", "of a 0-d array (NumPy raises)")
    ax = _axis("diff", axis, nd)
    parts = []
    for value in (prepend, x, append):
        if value is np._NoValue:
            continue
        if value is not x:
            value = _operand(value, "diff")
            if _ndim(value) == 0:
                shape = list(_shape(x))
                shape[ax] = 1
                value = F.broadcast_to(value, tuple(shape))
        parts.append(value)
    if len(parts) > 1:
        x = F.concat(parts, ax)
    op = F.not_equal if _dtype(x).kind == "b" else F.sub
    for _ in range(int(n)):
        x = op(_cut(x, ax, 1, None), _cut(x, ax, None, -1))
    return x


def _roll_axis(x, shift: int, axis: int):
    size = _shape(x)[axis]
    if size == 0 or shift % size == 0:
        return x
    shift %= size
    return F.concat([_cut(x, axis, size - shift, size), _cut(x, axis, 0, size - shift)], axis)


def roll(a, shift, axis=None):
    """``np.roll``: elements shifted cyclically along ``axis`` (the flattened
    array when None); shifts of one axis add up."""
    x = _operand(a, "roll", True)
    shape = _shape(x)
    if axis is None:
        _no_0d_array("roll", shape)
        if not _int(shift):
            raise NotModelled("roll", f"with shift={shift!r} and axis=None")
        return F.reshape(_roll_axis(_flat(x), int(shift), 0), shape)
    shifts, axes = _ints("roll", "shift", shift), _ints("roll", "axis", axis)
    if len(shifts) != len(axes):
        if len(shifts) == 1:
            shifts = shifts * len(axes)
        elif len(axes) == 1:
            axes = axes * len(shifts)
        else:
            raise NotModelled("roll", "with shift and axis of different lengths (NumPy raises)")
    _no_0d_array("roll", shape)
    total = {}
    for s, ax in zip(shifts, axes):
        ax = normalize_axis("roll", ax, len(shape))
        total[ax] = total.get(ax, 0) + s
    result = x
    for ax, s in total.items():
        result = _roll_axis(result, s, ax)
    return _copy(x) if result is x else result


def repeat(a, repeats, axis=None):
    """``np.repeat`` with repeats known at trace time: an int (a broadcast) or one
    count per element (a gather)."""
    x = _operand(a, "repeat", True)
    if axis is None:
        x, axis = _flat(x), 0
    nd = _ndim(x)
    if nd == 0:
        raise NotModelled("repeat", "of a 0-d array along an axis (NumPy raises)")
    ax = _axis("repeat", axis, nd)
    size = _shape(x)[ax]
    if isinstance(repeats, Tensor):
        raise NotModelled("repeat", "with repeats computed from arrays (the result's shape "
                                    "depends on their values)")
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iu" or counts.ndim > 1 or (counts < 0).any():
        raise NotModelled("repeat", f"with repeats={repeats!r}")
    if counts.size == 1:
        r = int(counts.reshape(()))
        shape = _shape(x)
        expanded = F.reshape(x, shape[:ax + 1] + (1,) + shape[ax + 1:])
        tiled = F.broadcast_to(expanded, shape[:ax + 1] + (r,) + shape[ax + 1:])
        return F.reshape(tiled, shape[:ax] + (size * r,) + shape[ax + 1:])
    if counts.size != size:
        raise NotModelled("repeat", f"with {counts.size} repeats for {size} elements (NumPy raises)")
    return F.take(x, np.repeat(np.arange(size, dtype=np.int64), counts), axis=ax)


def tile(A, reps):
    """``np.tile``: the array repeated ``reps`` times along each axis (one broadcast
    of an interleaved shape)."""
    x = _operand(A, "tile", True)
    reps = _ints("tile", "reps", reps)
    if any(r < 0 for r in reps):
        raise NotModelled("tile", f"with negative reps {reps!r} (NumPy raises)")
    shape = _shape(x)
    d = max(len(shape), len(reps))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    _no_0d_array("tile", shape)
    interleaved = tuple(v for s in shape for v in (1, s))
    spread = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    tiled = F.broadcast_to(F.reshape(x, interleaved), spread)
    return F.reshape(tiled, tuple(r * s for r, s in zip(reps, shape)))


def _triangle(function: str, m, k, lower: bool):
    x = _operand(m, function, True)
    if not _int(k):
        raise NotModelled(function, f"with k={k!r}")
    shape = _shape(x)
    if not shape:
        raise NotModelled(function, "of a 0-d array (NumPy raises)")
    rows, cols = shape[-2:] if len(shape) > 1 else (shape[0], shape[0])
    zero = np.zeros((), _dtype(x))
    if lower:  # np.tril: where(tri(k), m, 0)
        return F.where(np.tri(rows, cols, int(k), dtype=bool), x, zero)
    return F.where(np.tri(rows, cols, int(k) - 1, dtype=bool), zero, x)


def triu(m, k=0):
    """``np.triu``: the elements below the ``k``-th diagonal zeroed (1-D input
    is broadcast to a square, as NumPy does)."""
    return _triangle("triu", m, k, lower=False)


def tril(m, k=0):
    """``np.tril``: the elements above the ``k``-th diagonal zeroed."""
    return _triangle("tril", m, k, lower=True)


# --------------------------------------------------------------------------- comparisons, rounding

def _weak_or_array(value, function: str):
    """A Python number stays a Python number (weakly typed, as NumPy keeps it
    in ``isclose``); anything else is an array."""
    if isinstance(value, (bool, int, float)) or isinstance(value, Tensor):
        return value
    return _operand(value, function)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.isclose``: ``|a - b| <= atol + rtol * |b|`` for finite ``b``, or
    ``a == b``; NumPy's own formula and dtypes (``b`` made inexact)."""
    x, y = _weak_or_array(a, "isclose"), _weak_or_array(b, "isclose")
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not isinstance(tol, (int, float, np.integer, np.floating)) or \
                isinstance(tol, bool) or not math.isfinite(tol):
            raise NotModelled("isclose", f"with {name}={tol!r}")
    # a NumPy scalar tolerance (np.finfo(dt).eps) is a 0-d array to NumPy: strongly typed
    rtol, atol = (np.asarray(t) if isinstance(t, np.generic) else t for t in (rtol, atol))
    if not isinstance(y, (bool, int, float)):
        inexact = np.result_type(_dtype(y), 1.0)
        if _dtype(y) != inexact:
            y = F.astype(y, as_dtype(inexact))
        finite = F.equal(F.sub(y, y), 0)  # inf - inf and nan - nan are nan
        size = F.add(F.mul(F.abs(y), rtol), atol)
    elif isinstance(y, int):  # bools too
        y = float(y)
    if isinstance(y, (bool, int, float)):
        finite = math.isfinite(y)
        size = atol + rtol * abs(y)
    result = F.less_equal(F.abs(F.sub(x, y)), size)
    if finite is not True:
        result = F.logical_and(result, finite)
    result = F.logical_or(result, F.equal(x, y))
    if equal_nan:
        result = F.logical_or(result, F.logical_and(F.not_equal(x, x), F.not_equal(y, y)))
    return result


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.allclose``: ``bool(np.all(np.isclose(...)))``.  Its Python bool depends
    on the arrays' values: eager only (capture breaks the graph, NumPy runs it)."""
    if current_level() is not _EAGER:
        raise NotModelled("allclose", "under capture (its Python bool depends on the values)")
    return bool(np_all(isclose(a, b, rtol, atol, equal_nan)))


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (multiarray/calculation.c), rounding for rounding."""
    table = (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)
    if n < 9:
        return table[n]
    ret = 1e9
    for _ in range(n - 9):
        ret *= 10.0
    return ret


def _rint(x):
    """``np.rint`` (half to even) from exact steps.  Values from ``2**nmant`` on
    (and inf, nan) are integers already and pass through; below, ``d = x -
    floor(x)`` is exact wherever it decides anything, ``floor(x) + 1`` is exact,
    and a zero result keeps the sign of ``x`` (OpenVINO's CPU plugin does not
    keep the sign of zeros through these ops: there a rounded -0.3 may be +0.0)."""
    integral = float(2 ** np.finfo(_dtype(x)).nmant)
    small = F.less(F.abs(x), integral)  # False for inf and nan
    xs = F.where(small, x, 0.0)         # no inf - inf below: no spurious warnings
    r = F.floor(xs)
    d = F.sub(xs, r)
    odd = F.not_equal(r, F.mul(F.floor(F.mul(r, 0.5)), 2.0))  # exact steps, no float mod
    up = F.logical_or(F.greater(d, 0.5), F.logical_and(F.equal(d, 0.5), odd))
    y = F.where(up, F.add(r, 1.0), r)
    y = F.where(F.equal(y, 0.0), F.mul(xs, 0.0), y)
    return F.where(small, y, x)


def np_round(a, decimals=0, out=None):
    """``np.round`` / ``np.around``: NumPy's algorithm (scale by a power of ten,
    round half to even, scale back); integers with ``decimals >= 0`` are copied,
    with ``decimals < 0`` rounded in float64 and cast back, as NumPy does."""
    if out is not None:
        raise NotModelled("round", "with out=")
    if not _int(decimals):
        raise NotModelled("round", f"with decimals={decimals!r}")
    decimals = int(decimals)
    x = _operand(a, "round")
    dt = _dtype(x)
    if dt.kind == "b":
        raise NotModelled("round", "of bools")
    if dt.kind in "iu":
        if decimals >= 0:
            return _copy(x)
        # NumPy's PyArray_Round: divided by 10**-decimals into float64, rint,
        # multiplied back, cast to the integer type
        f = _power_of_ten(-decimals)
        return F.astype(F.mul(_rint(F.div(F.astype(x, float64), f)), f), as_dtype(dt))
    if decimals == 0:
        return _rint(x)
    f = _power_of_ten(abs(decimals))
    if f > float(np.finfo(dt).max):
        raise NotModelled("round", f"with decimals={decimals} for {dt}")
    if decimals > 0:
        return F.div(_rint(F.mul(x, f)), f)
    return F.mul(_rint(F.div(x, f)), f)


def around(a, decimals=0, out=None):
    """``np.around`` is ``np.round``."""
    return np_round(a, decimals, out)


# --------------------------------------------------------------------------- statistics

def ptp(a, axis=None, out=None, keepdims=np._NoValue):
    """``np.ptp``: max minus min (NumPy raises for bools)."""
    if out is not None:
        raise NotModelled("ptp", "with out=")
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    x = _operand(a, "ptp")
    if _dtype(x).kind == "b":
        raise NotModelled("ptp", "of bools (NumPy raises)")
    axes = reduction_axes("ptp", axis, _ndim(x))
    if math.prod(_shape(x)[i] for i in axes) == 0 and _shape(x):
        raise NotModelled("ptp", "of no elements (NumPy raises)")
    return F.sub(F.max(x, axis=axes, keepdims=keepdims), F.min(x, axis=axes, keepdims=keepdims))


def _reduce_dtype(function: str, x, dtype):
    """``x`` cast to the ``dtype=`` of a sum/prod/mean (NumPy casts the input
    unsafely and accumulates in that dtype)."""
    dt = np.dtype(dtype)
    if dt.kind not in "iuf" or dt == np.float16 or _dtype(x).kind == "c" or not _frame_dtype(dt):
        raise NotModelled(function, f"with dtype={dt}")
    return dt, (x if _dtype(x) == dt else F.astype(x, as_dtype(dt)))


def _sum_like(function: str, a, axis, dtype, out, keepdims, initial, where):
    if out is not None or initial is not np._NoValue or not (where is True or where is np._NoValue):
        raise NotModelled(function, "with out=, initial= or where=")
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    x = _operand(a, function, True)
    axes = reduction_axes(function, axis, _ndim(x))
    reduce = F.sum if function == "sum" else F.prod
    if dtype is None:
        return reduce(x, axis=axes, keepdims=keepdims)
    dt, x = _reduce_dtype(function, x, dtype)
    result = reduce(x, axis=axes, keepdims=keepdims)
    # integers accumulate modulo 2**bits: the wider sum cast back is the same value
    return result if _dtype(result) == dt else F.astype(result, as_dtype(dt))


def np_sum(a, axis=None, dtype=None, out=None, keepdims=np._NoValue,
        initial=np._NoValue, where=np._NoValue):
    """``np.sum``, including ``dtype=`` (the input cast, the sum in that dtype)."""
    return _sum_like("sum", a, axis, dtype, out, keepdims, initial, where)


def np_prod(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
         where=np._NoValue):
    """``np.prod``, including ``dtype=``."""
    return _sum_like("prod", a, axis, dtype, out, keepdims, initial, where)


def np_mean(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    """``np.mean``, including ``dtype=``: the sum in that dtype divided by the
    count (truncated back to an integer dtype, as NumPy does)."""
    if out is not None or not (where is True or where is np._NoValue):
        raise NotModelled("mean", "with out= or where=")
    keepdims = False if keepdims is np._NoValue else bool(keepdims)
    x = _operand(a, "mean", True)
    axes = statistic_axes("mean", axis, _ndim(x))
    if dtype is None:
        return F.mean(x, axis=axes, keepdims=keepdims)
    count = math.prod(_shape(x)[i] for i in axes)
    if count == 0:
        raise NotModelled("mean", "of no elements (NumPy warns and returns nan)")
    dt, x = _reduce_dtype("mean", x, dtype)
    if dt.kind == "f":
        return F.mean(x, axis=axes, keepdims=keepdims)
    total = F.astype(F.sum(x, axis=axes, keepdims=keepdims), as_dtype(dt))
    return F.astype(F.div(total, count), as_dtype(dt))


def average(a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    """``np.average`` with weights known at trace time (NumPy raises when they
    sum to zero, which must be decided before the graph runs)."""
    x = _operand(a, "average")
    shape = _shape(x)
    kd = False if keepdims is np._NoValue else bool(keepdims)
    if axis is not None:
        axis = _axes("average", axis, len(shape))
    if weights is None:
        avg = np_mean(x, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        if math.prod(_shape(avg)) == 0:
            raise NotModelled("average", "of no elements with returned=True")
        scale = math.prod(shape) / math.prod(_shape(avg))
        return avg, F.full(_shape(avg), scale, as_dtype(_dtype(avg)))
    if isinstance(weights, Tensor):
        raise NotModelled("average", "with weights computed from arrays (NumPy checks at run "
                                     "time that they do not sum to zero)")
    w = np.asarray(weights)
    if w.dtype.kind not in "biuf":
        raise NotModelled("average", f"with {w.dtype} weights")
    if _dtype(x).kind in "biu":
        result_dtype = np.result_type(_dtype(x), w.dtype, "f8")
    else:
        result_dtype = np.result_type(_dtype(x), w.dtype)
    if w.shape != shape:  # NumPy's _weights_are_valid: weights along the axes
        if axis is None or w.shape != tuple(shape[ax] for ax in axis):
            raise NotModelled("average", "with weights of another shape than the array "
                                         "or its axes (NumPy raises)")
        w = w.transpose(np.argsort(axis)).reshape(
            tuple(s if ax in axis else 1 for ax, s in enumerate(shape)))
    with np.errstate(all="ignore"):
        scale = w.sum(axis=axis, dtype=result_dtype, keepdims=kd)
    if np.any(scale == 0.0):
        raise NotModelled("average", "with weights that sum to zero (NumPy raises)")
    rd = as_dtype(result_dtype)
    xs = x if _dtype(x) == result_dtype else F.astype(x, rd)
    total = F.sum(F.mul(xs, w.astype(result_dtype)), axis=axis, keepdims=kd)
    avg = F.div(total, scale)
    if not returned:
        return avg
    return avg, F.broadcast_to(np.asarray(scale), _shape(avg))


# --------------------------------------------------------------------------- new arrays

def _like(function: str, a, dtype, order, subok, shape, device):
    if order not in ("K", "A", "C") or device not in (None, "cpu"):
        raise NotModelled(function, f"with order={order!r} or device={device!r}")
    x = _operand(a, function, True)
    dt = _dtype(x) if dtype is None else np.dtype(dtype)
    if not _frame_dtype(dt):
        raise NotModelled(function, f"with dtype={dt}")
    shape = _shape(x) if shape is None else _ints(function, "shape", shape)
    _no_0d_array(function, shape)
    return dt, shape


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``np.full_like``: ``fill_value`` broadcast and cast (unsafely) to ``dtype``."""
    dt, shape = _like("full_like", a, dtype, order, subok, shape, device)
    value = _operand(fill_value, "full_like", True)
    if _dtype(value) != dt:
        value = F.astype(value, as_dtype(dt))
    return F.broadcast_to(value, shape) if _shape(value) != shape else _copy(value)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``np.zeros_like``."""
    dt, shape = _like("zeros_like", a, dtype, order, subok, shape, device)
    return F.full(shape, 0, as_dtype(dt))


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``np.ones_like``."""
    dt, shape = _like("ones_like", a, dtype, order, subok, shape, device)
    return F.full(shape, 1, as_dtype(dt))


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """``np.empty_like``: its values are unspecified; frame's are zeros."""
    dt, shape = _like("empty_like", prototype, dtype, order, subok, shape, device)
    return F.full(shape, 0, as_dtype(dt))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """``np.meshgrid``: the flattened inputs along one axis each (the first two
    swapped for ``indexing='xy'``), broadcast unless ``sparse``."""
    if indexing not in ("xy", "ij"):
        raise NotModelled("meshgrid", f"with indexing={indexing!r} (NumPy raises)")
    if not copy:
        raise NotModelled("meshgrid", "with copy=False (NumPy returns views)")
    nd = len(xi)
    axes = list(range(nd))
    if indexing == "xy" and nd > 1:
        axes[0], axes[1] = 1, 0
    arrays = [_flat(_operand(x, "meshgrid", True)) for x in xi]
    shape = [0] * nd
    for ax, x in zip(axes, arrays):
        shape[ax] = _shape(x)[0]
    output = []
    for ax, x in zip(axes, arrays):
        single = tuple(shape[ax] if i == ax else 1 for i in range(nd))
        x = F.reshape(x, single)
        output.append(x if sparse else F.broadcast_to(x, tuple(shape)))
    return tuple(output)


# --------------------------------------------------------------------------- NaN and inf tests

def isnan(x):
    """``np.isnan``: ``x != x`` (true for NaN alone; for a complex value, NaN in
    either part; never for integers and bools)."""
    return F.not_equal(x, x)


def _finite_kind(x, function: str) -> str:
    kind = _dtype(x).kind
    if kind == "c":
        raise NotModelled(function, "of complex values")
    return kind


def isinf(x):
    """``np.isinf``: ``|x| == inf`` (false for NaN, integers and bools)."""
    if _finite_kind(x, "isinf") != "f":
        return F.not_equal(x, x)
    return F.equal(F.abs(x), math.inf)


def isfinite(x):
    """``np.isfinite``: ``|x| < inf`` (false for NaN; true for integers and bools)."""
    if _finite_kind(x, "isfinite") != "f":
        return F.equal(x, x)
    return F.less(F.abs(x), math.inf)


def logical_xor(a, b):
    """``np.logical_xor``: the truth values (nonzero, NaN included) differ."""
    truth = from_numpy(np.dtype(bool))
    return F.not_equal(F.astype(a, truth), F.astype(b, truth))


def _nan_ignoring(name: str, pick):
    def fn(a, b):
        both = pick(a, b)  # NumPy's promotion; NaN where either is NaN
        return F.where(F.not_equal(a, a), b, F.where(F.not_equal(b, b), a, both))
    fn.__name__ = name
    fn.__doc__ = (f"``np.{name}``: ``{pick.__name__}`` of the two, except that a NaN "
                  f"gives the other value (NaN only where both are).")
    return fn


fmax = _nan_ignoring("fmax", F.maximum)
fmin = _nan_ignoring("fmin", F.minimum)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: NaN, +inf and -inf replaced (by 0 and the dtype's
    largest and smallest finite values unless given); other dtypes unchanged."""
    kind = _finite_kind(x, "nan_to_num")
    if not copy:
        raise NotModelled("nan_to_num", "with copy=False (NumPy writes into x)")
    if kind != "f":
        return _copy(x)
    dt = _dtype(x)
    info = np.finfo(dt)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    for value in (nan, hi, lo):
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise NotModelled("nan_to_num", f"with a replacement {value!r}")
    # NumPy stores the replacements into x's dtype (a float64 1e300 into float32 is inf)
    with np.errstate(over="ignore"):
        nan_, hi_, lo_ = (np.asarray(v).astype(dt) for v in (nan, hi, lo))
    out = F.where(F.not_equal(x, x), nan_, x)
    out = F.where(F.equal(x, math.inf), hi_, out)
    return F.where(F.equal(x, -math.inf), lo_, out)


def fix(x, out=None):
    """``np.fix``: rounding towards zero, which NumPy 2 computes as ``np.trunc``."""
    if out is not None:
        raise NotModelled("fix", "with out=")
    _operand(x, "fix")
    return apply1("trunc", (as_array(x),), {})


def _poly_coefficients(p, function: str):
    """``np.asarray(p)`` of a 1-D coefficient sequence, highest power first."""
    if isinstance(p, np.poly1d):
        raise NotModelled(function, "of a poly1d")
    p = _operand(p, function)
    if _ndim(p) != 1:
        raise NotModelled(function, f"of {_ndim(p)}-d coefficients")
    return p


def polyval(p, x):
    """``np.polyval``: Horner's rule as NumPy writes it, ``y = y * x + pv`` for
    each coefficient from ``y = zeros_like(x)``, so every intermediate has
    NumPy's dtype and rounding (coefficients are 0-d values, strong in NEP 50)."""
    if isinstance(x, np.poly1d):
        raise NotModelled("polyval", "at a poly1d")
    p = _poly_coefficients(p, "polyval")
    x = _operand(x, "polyval")
    y = zeros_like(x) if isinstance(x, Tensor) else np.zeros_like(x)
    for i in range(_shape(p)[0]):
        y = y * x + p[i]
    return y


def polyder(p, m=1):
    """``np.polyder``: the ``m``-th derivative's coefficients, each step
    ``p[:-1] * arange(n, 0, -1)`` (int64 factors, so float32 becomes float64
    as in NumPy)."""
    if isinstance(m, Tensor):
        raise NotModelled("polyder", "of a traced order")
    m = int(m)
    if m <= 0:  # NumPy raises, or returns the array p itself
        raise NotModelled("polyder", f"of order {m}")
    p = _poly_coefficients(p, "polyder")
    if m >= _shape(p)[0]:
        raise NotModelled("polyder", "with an empty result")
    for _ in range(m):
        n = _shape(p)[0] - 1
        p = _cut(p, 0, None, -1) * np.arange(n, 0, -1)
    return p


NUMPY_FUNCTIONS: dict = {
    np.std: std, np.var: var, np.einsum: einsum, np.linalg.norm: norm, np.argsort: argsort,
    np.sort: sort, np.take_along_axis: take_along_axis, np.cumsum: cumsum,
    np.cumprod: cumprod, np.pad: pad, np.array_split: array_split,
    np.dot: dot, np.vdot: vdot, np.inner: inner, np.outer: outer, np.tensordot: tensordot,
    np.any: np_any, np.all: np_all, np.count_nonzero: count_nonzero,
    np.vstack: vstack, np.hstack: hstack, np.dstack: dstack, np.column_stack: column_stack,
    np.swapaxes: swapaxes, np.moveaxis: moveaxis,
    np.diff: diff, np.roll: roll, np.repeat: repeat, np.tile: tile, np.triu: triu, np.tril: tril,
    np.isclose: isclose, np.allclose: allclose, np.round: np_round, np.around: around,
    np.ptp: ptp, np.average: average, np.sum: np_sum, np.prod: np_prod, np.mean: np_mean,
    np.zeros_like: zeros_like, np.ones_like: ones_like, np.full_like: full_like,
    np.empty_like: empty_like, np.meshgrid: meshgrid, np.nan_to_num: nan_to_num,
    np.fix: fix, np.polyval: polyval, np.polyder: polyder,
}
# ufuncs frame runs as an exact composition of its ops (Tensor.__array_ufunc__)
UFUNC_FUNCTIONS: dict = {np.isnan: isnan, np.isinf: isinf, np.isfinite: isfinite,
                         np.logical_xor: logical_xor, np.fmax: fmax, np.fmin: fmin,
                         **{getattr(np, name): _unary_op_ufunc(name) for name in _MATH_UFUNCS},
                         np.arctan2: arctan2,
                         np.square: square, np.log1p: log1p, np.expm1: expm1, np.hypot: hypot,
                         np.logaddexp: logaddexp, np.left_shift: left_shift,
                         np.right_shift: right_shift}
